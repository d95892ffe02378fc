"""A real A2A 1.0 agent on the official Python a2a-sdk, for Baton's integration tests.

It serves its card, JSON-RPC at /rpc and HTTP+JSON at /rest on 127.0.0.1, and answers every
message by completing the task with an echo. It prints "ready <port>" once it listens, and
records the A2A headers of every request to --headers-log (one JSON object a line) so a test
can check what Baton put on the wire.
"""

import argparse
import asyncio
import json

import uvicorn
from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)

RECORDED_HEADERS = ("a2a-version", "a2a-extensions", "x-participant-id")


class EchoExecutor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or Task(
            id=context.task_id,
            context_id=context.context_id,
            status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
        )
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        text = context.get_user_input()
        await updater.complete(
            updater.new_agent_message([Part(text=f"echo: {text}")])
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


def build_card(args: argparse.Namespace) -> AgentCard:
    base = f"http://127.0.0.1:{args.port}"
    interfaces = [
        AgentInterface(url=f"{base}/rpc", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=f"{base}/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    if args.prefer == "rest":
        interfaces.reverse()
    extensions = [AgentExtension(uri=uri, required=False) for uri in args.extension]
    skills = [
        AgentSkill(
            id=f"skill-{n}",
            name=f"Skill {n}",
            description=f"Does thing number {n}",
            tags=["test"],
        )
        for n in range(args.skills)
    ]
    return AgentCard(
        name=args.name,
        description=args.description,
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=args.push, extensions=extensions
        ),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


def header_recorder(app, path):
    async def middleware(scope, receive, send):
        if scope["type"] == "http" and path:
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            record = {"path": scope["path"]}
            record.update({h: headers[h] for h in RECORDED_HEADERS if h in headers})
            with open(path, "a", encoding="utf-8") as log:
                log.write(json.dumps(record) + "\n")
        await app(scope, receive, send)

    return middleware


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--name", default="Python peer")
    parser.add_argument("--description", default="An a2a-sdk echo agent")
    parser.add_argument("--skills", type=int, default=1)
    parser.add_argument("--prefer", choices=["rpc", "rest"], default="rpc")
    parser.add_argument("--push", action="store_true")
    parser.add_argument("--extension", action="append", default=[])
    parser.add_argument("--headers-log", default="")
    args = parser.parse_args()

    card = build_card(args)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/rpc"),
        *create_rest_routes(handler, path_prefix="/rest"),
    ]
    app = header_recorder(Starlette(routes=routes), args.headers_log)
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    print(f"ready {args.port}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main())
