"""An A2A agent on Microsoft Agent Framework, for Baton to delegate to: a MAF `Agent` with a
deterministic chat client (a `BaseChatClient` subclass; no network model), its card made by
`agent-framework-hosting-a2a`'s `AgentA2AAdapter`, and each request and answer converted by the
adapter (`a2a_to_run`, `a2a_from_run`).

MAF's hosting leaves the executor, the task lifecycle and the routes to the application: they
are the a2a-sdk's (`DefaultRequestHandler`, `TaskUpdater`, the JSON-RPC routes), used the plain
way: the answer goes out as a WORKING status message, then the task completes with no message
and no artifact, which is where a MAF agent puts its answer.

The model answers "maf peer answers: <the user's text>"; a text holding "interop:hold" makes it
wait (up to 120 s, or until the task is cancelled) before answering. `request_log.RequestLog`
records every A2A request; GET /_log returns them.

  python peer.py --port N      (the card is served at http://127.0.0.1:N/.well-known/agent-card.json)
"""

import argparse
import asyncio
import sys
import uuid
from pathlib import Path

import uvicorn
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentInterface, Task, TaskState, TaskStatus
from agent_framework import Agent, BaseChatClient, ChatResponse, Message
from agent_framework_hosting_a2a import AgentA2AAdapter
from starlette.applications import Starlette

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from request_log import RequestLog  # noqa: E402

HOLD_SECONDS = 120


class ScriptedChatClient(BaseChatClient):
    """A deterministic model: it echoes the newest user text."""

    async def _inner_get_response(self, *, messages, stream, options, **kwargs):
        said = next((m.text for m in reversed(messages) if m.role == "user" and m.text), "")
        if "interop:hold" in said:
            await asyncio.sleep(HOLD_SECONDS)
        reply = Message(role="assistant", contents=[f"maf peer answers: {said[:200]}"])
        return ChatResponse(messages=[reply], response_id=str(uuid.uuid4()))


class MafExecutor(AgentExecutor):
    """Runs the MAF agent on each message, through the hosting adapter's conversions."""

    def __init__(self, agent: Agent, adapter: AgentA2AAdapter) -> None:
        self.agent = agent
        self.adapter = adapter

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        if context.current_task is None:
            submitted = TaskStatus(state=TaskState.TASK_STATE_SUBMITTED)
            task = Task(id=context.task_id, context_id=context.context_id, status=submitted, history=[context.message])
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.start_work()
        run = self.adapter.a2a_to_run(context.message)
        result = await self.agent.run(run["messages"], options=run["options"])
        parts = self.adapter.a2a_from_run(result)
        await updater.update_status(TaskState.TASK_STATE_WORKING, message=updater.new_agent_message(parts))
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


async def build_app(port: int):
    agent = Agent(
        ScriptedChatClient(),
        "Answer with what you were asked.",
        name="maf_peer",
        description="A Microsoft Agent Framework agent: it echoes what it is asked.",
    )
    adapter = AgentA2AAdapter(
        agent,
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=f"http://127.0.0.1:{port}/rpc", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True),
    )
    card = await adapter.get_card()
    handler = DefaultRequestHandler(
        agent_executor=MafExecutor(agent, adapter), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/rpc")]
    return RequestLog(Starlette(routes=routes))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    app = asyncio.run(build_app(args.port))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
