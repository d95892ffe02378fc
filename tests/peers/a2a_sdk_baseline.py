"""The gateway bench's baseline: the official Python a2a-sdk serving JSON-RPC from its in-memory
task store, with nothing of ours in between. `baton-bench gateway` writes this file to its
temporary directory and runs it with the Python that has a2a-sdk.

Each message does the work a Baton task does in the bench: the Task (SUBMITTED) first, then
one call to the bench's model (`--model-url`, the OpenAI chat completions API) with the
message's text, then COMPLETED with the model's answer as its status message. It prints
"ready <port>" once it listens.
"""

import argparse
import asyncio
import uuid

import httpx
import uvicorn
from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Message,
    Part,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)


class ModelExecutor(AgentExecutor):
    def __init__(self, model_url: str) -> None:
        self.completions = f"{model_url.rstrip('/')}/chat/completions"
        self.http = httpx.AsyncClient(timeout=30.0)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        context_id = context.current_task.context_id if context.current_task else context.context_id
        if context.current_task is None:
            await event_queue.enqueue_event(
                Task(
                    id=context.task_id,
                    context_id=context_id,
                    status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                )
            )
        response = await self.http.post(
            self.completions,
            json={
                "model": "bench-model",
                "messages": [{"role": "user", "content": context.get_user_input()}],
            },
        )
        response.raise_for_status()
        answer = response.json()["choices"][0]["message"]["content"]
        reply = Message(
            message_id=str(uuid.uuid4()),
            task_id=context.task_id,
            context_id=context_id,
            role=Role.ROLE_AGENT,
            parts=[Part(text=answer)],
        )
        await event_queue.enqueue_event(
            TaskStatusUpdateEvent(
                task_id=context.task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_COMPLETED, message=reply),
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        await event_queue.enqueue_event(
            TaskStatusUpdateEvent(
                task_id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_CANCELED),
            )
        )


def build_app(port: int, model_url: str) -> Starlette:
    card = AgentCard(
        name="a2a-sdk baseline",
        description="The Python a2a-sdk's in-memory server",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(
                url=f"http://127.0.0.1:{port}/", protocol_binding="JSONRPC", protocol_version="1.0"
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[AgentSkill(id="answer", name="Answer", description="Answers each message with the bench's model", tags=["bench"])],
    )
    handler = DefaultRequestHandler(
        agent_executor=ModelExecutor(model_url), task_store=InMemoryTaskStore(), agent_card=card
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, rpc_url="/")]
    return Starlette(routes=routes)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model-url", required=True)
    args = parser.parse_args()
    config = uvicorn.Config(
        build_app(args.port, args.model_url), host="127.0.0.1", port=args.port, log_level="warning"
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    print(f"ready {args.port}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main())
