"""A real A2A 1.0 agent on the official Python a2a-sdk, scripted for Baton's integration tests.

It serves its card, JSON-RPC at /rpc and HTTP+JSON at /rest on 127.0.0.1, and prints
"ready <port>" once it listens. Every task a new message creates follows --behaviour:

  complete  WORKING, then COMPLETED with "echo: <text>"
  work      WORKING "working on it", then after --work-seconds COMPLETED with "done: <text>"
  park      WORKING, then INPUT_REQUIRED "which account?"; a reply completes it: "answered: <text>"
            (after --reply-seconds of WORKING "thinking about the answer", when set)
  auth      WORKING, then AUTH_REQUIRED "please sign in"; a reply completes it: "authorised: <text>"
  fail      WORKING, then FAILED "could not do it"
  long      WORKING, then COMPLETED with --answer-chars characters "abc…zabc…"
  die       WORKING, then the whole process exits (os._exit) 0.2 s later, mid-stream
  hang      WORKING until cancelled
  converse  WORKING, then INPUT_REQUIRED "here you are: <text>" with the status extension's
            sub_state awaiting-next-message, as a tiny-harness conversation parks after answering
  artifact  WORKING, an artifact "artifact: <text>" with a data part {"rows": 3}, then COMPLETED
            with the generic "Task completed successfully" (LangGraph's shape)
  history   WORKING "history: <text>", then COMPLETED with no message and no artifact: the answer
            is only in the task's history (Microsoft Agent Framework's shape)
  files     WORKING, an artifact "report" with the text "report: <text>", the CSV FILES_CSV as
            march.csv, the PNG bytes FILES_PNG as chart.png and the data {"orders": 2}, then
            COMPLETED "Here is the report."

With --hold-brief-file PATH, every new task's first event waits until PATH exists: the agent
has taken the brief (the HTTP stream is open) and lists no task for it yet, as a slow agent does.
With --hold-file PATH, every new task stays SUBMITTED (its Task event sent) until PATH exists:
the window in which a creating client may die. CancelTask moves any unfinished task to CANCELED. With
--input-mode TYPE (repeatable) the card takes TYPE besides text/plain. With --push the card declares push
notifications and the SDK's sender POSTs every task event to each registered webhook (loopback
URLs allowed). With --replay-history, SubscribeToTask sends the Task snapshot and then replays the
task's earlier status updates, each with its original timestamp, before the live events: a legal
but hostile peer. GET /_stats returns what the peer saw (see Stats.to_json), and --headers-log
appends the A2A headers of every request to a file, one JSON object a line. With --grpc-port
N it also serves the A2A gRPC service on 127.0.0.1:N, and its card offers only that interface;
every gRPC call is counted in Stats.grpc_calls by method.
"""

import argparse
import asyncio
import json
import os
import uuid
from collections import defaultdict
from contextlib import aclosing

import grpc
import httpx
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict
import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler, GrpcHandler
from a2a.server.routes import (
    create_agent_card_routes,
    create_jsonrpc_routes,
    create_rest_routes,
)
from a2a.server.tasks import (
    BasePushNotificationSender,
    InMemoryPushNotificationConfigStore,
    InMemoryTaskStore,
)
from a2a.types import a2a_pb2_grpc
from a2a.types import (
    AgentCapabilities,
    Artifact,
    AgentCard,
    AgentExtension,
    AgentInterface,
    AgentSkill,
    ClientCredentialsOAuthFlow,
    HTTPAuthSecurityScheme,
    Message,
    OAuth2SecurityScheme,
    OAuthFlows,
    Part,
    Role,
    SecurityRequirement,
    SecurityScheme,
    StringList,
    Task,
    TaskState,
    TaskStatus,
    TaskArtifactUpdateEvent,
    TaskStatusUpdateEvent,
)

STATUS_EXTENSION_KEY = "io.github.madarauchiha-314.tiny-harness/status"
BEHAVIOURS = (
    "complete", "work", "park", "auth", "fail", "long", "die", "hang", "converse", "artifact", "history",
    "files",
)
# What --behaviour files answers with, byte for byte: the tests check these bytes at the caller.
FILES_CSV = b"order,total\n1234,99.50\n1235,12.00\n"
FILES_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
RECORDED_HEADERS = ("a2a-version", "a2a-extensions", "x-participant-id", "traceparent", "tracestate")
A2A_PATHS = ("/rpc", "/rest")
STATS_PATH = "/_stats"


# --- What the peer saw ----------------------------------------------------------------------


class Stats:
    """Everything a test may check, filled in by the pieces below and served at /_stats."""

    def __init__(self) -> None:
        self.task_states: dict[str, str] = {}  # task id -> state, in creation order
        self.task_contexts: dict[str, str] = {}  # task id -> context id
        self.messages: list[dict] = []
        self.cancels: list[str] = []
        self.lists: list[str] = []  # the context id of each ListTasks, "" for none
        self.push_config_deletes: list[dict] = []
        self.streams_opened = 0
        self.streams_closed = 0
        self.participants: list[str] = []
        self.unauthorized = 0  # A2A calls refused for want of a --bearer token
        self.grpc_calls: dict[str, int] = defaultdict(int)  # gRPC method -> calls
        # Every status update the agent emitted, per task, for --replay-history.
        self.history: dict[str, list[TaskStatusUpdateEvent]] = defaultdict(list)

    def to_json(self, push_store: "ObservedPushConfigStore | None") -> dict:
        return {
            "tasks_created": len(self.task_states),
            "tasks": [
                {"id": i, "state": s, "context_id": self.task_contexts.get(i, "")}
                for i, s in self.task_states.items()
            ],
            "messages": self.messages,
            "cancels": self.cancels,
            "lists": self.lists,
            "unauthorized": self.unauthorized,
            "push_configs": push_store.registered() if push_store else [],
            "push_config_deletes": self.push_config_deletes,
            "streams_opened": self.streams_opened,
            "streams_closed": self.streams_closed,
            "participants": self.participants,
            "grpc_calls": dict(self.grpc_calls),
        }


class ObservedTaskStore(InMemoryTaskStore):
    """The SDK's task store, noting each task's latest state whoever wrote it."""

    def __init__(self, stats: Stats) -> None:
        super().__init__()
        self.stats = stats

    async def save(self, task, context) -> None:
        await super().save(task, context)
        self.stats.task_states[task.id] = TaskState.Name(task.status.state)
        self.stats.task_contexts[task.id] = task.context_id


class ObservedPushConfigStore(InMemoryPushNotificationConfigStore):
    """The SDK's push config store, able to list every config it holds."""

    def registered(self) -> list[dict]:
        with self.lock:
            return [
                {"task_id": task_id, "id": config.id, "url": config.url}
                for by_task in self._push_notification_infos.values()
                for task_id, configs in by_task.items()
                for config in configs
            ]


class ObservedHandler(DefaultRequestHandler):
    """The SDK's request handler, recording cancels and deletes, optionally replaying history."""

    def __init__(self, stats: Stats, replay_history: bool, **kwargs) -> None:
        super().__init__(**kwargs)
        self.stats = stats
        self.replay_history = replay_history

    async def on_list_tasks(self, params, context):
        self.stats.lists.append(params.context_id)
        return await super().on_list_tasks(params, context)

    async def on_cancel_task(self, params, context):
        self.stats.cancels.append(params.id)
        return await super().on_cancel_task(params, context)

    async def on_delete_task_push_notification_config(self, params, context):
        self.stats.push_config_deletes.append({"task_id": params.task_id, "id": params.id})
        return await super().on_delete_task_push_notification_config(params, context)

    async def on_subscribe_to_task(self, params, context):
        replay = self.replay_history
        async with aclosing(super().on_subscribe_to_task(params, context)) as events:
            async for event in events:
                yield event
                if replay and isinstance(event, Task):
                    # Right after the snapshot: the task's past, stale timestamps and all.
                    for old in list(self.stats.history[params.id]):
                        yield old
                    replay = False


def observe(app, stats: Stats, headers_log: str, bearer_tokens: list[str]):
    """ASGI wrapper: logs headers, notes participants, counts SSE streams opened and closed, and
    with bearer tokens given refuses an A2A call without one of them (401), counting refusals.

    A stream counts as closed when the app returns or the client disconnects, whichever is first.
    """

    async def middleware(scope, receive, send):
        if scope["type"] != "http" or scope["path"] == STATS_PATH:
            await app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        presented = headers.get("authorization", "")
        if (
            bearer_tokens
            and scope["path"].startswith(A2A_PATHS)
            and presented not in {f"Bearer {t}" for t in bearer_tokens}
        ):
            stats.unauthorized += 1
            await JSONResponse({"error": "unauthorized"}, status_code=401)(scope, receive, send)
            return
        if headers_log:
            record = {"path": scope["path"]}
            record.update({h: headers[h] for h in RECORDED_HEADERS if h in headers})
            with open(headers_log, "a", encoding="utf-8") as log:
                log.write(json.dumps(record) + "\n")
        if scope["path"].startswith(A2A_PATHS) and "x-participant-id" in headers:
            stats.participants.append(headers["x-participant-id"])

        streaming = False

        def stream_ended() -> None:
            nonlocal streaming
            if streaming:
                streaming = False
                stats.streams_closed += 1

        async def watched_send(message):
            nonlocal streaming
            if message["type"] == "http.response.start":
                content_type = dict(message.get("headers", [])).get(b"content-type", b"")
                if content_type.startswith(b"text/event-stream"):
                    streaming = True
                    stats.streams_opened += 1
            await send(message)

        async def watched_receive():
            message = await receive()
            if message["type"] == "http.disconnect":
                stream_ended()
            return message

        try:
            await app(scope, watched_receive, watched_send)
        finally:
            stream_ended()

    return middleware


# --- The scripted agent -----------------------------------------------------------------------


def long_answer(chars: int) -> str:
    return "".join(chr(ord("a") + i % 26) for i in range(chars))


class ScriptedExecutor(AgentExecutor):
    def __init__(self, args: argparse.Namespace, stats: Stats) -> None:
        self.args = args
        self.stats = stats

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        text = context.get_user_input()
        seen = {
            "task_id": context.task_id,
            "text": text,
            "role": Role.Name(context.message.role),
            "metadata": MessageToDict(context.message.metadata),
        }
        # Every part but text, as ProtoJSON: the files and data a brief carried, if any.
        files = [MessageToDict(part) for part in context.message.parts if not part.text]
        if files:
            seen["files"] = files
        self.stats.messages.append(seen)
        parked = context.current_task
        # A reply may omit contextId, and the SDK then makes up a new one: use the task's.
        context_id = parked.context_id if parked else context.context_id

        async def say(state: TaskState, reply: str | None = None) -> None:
            await self.update(event_queue, context.task_id, context_id, state, reply)

        if parked is not None:
            # A reply to a task waiting in INPUT_REQUIRED or AUTH_REQUIRED.
            auth = parked.status.state == TaskState.TASK_STATE_AUTH_REQUIRED
            prefix = "authorised" if auth else "answered"
            if self.args.reply_seconds > 0:
                await say(TaskState.TASK_STATE_WORKING, "thinking about the answer")
                await asyncio.sleep(self.args.reply_seconds)
            await say(TaskState.TASK_STATE_COMPLETED, f"{prefix}: {text}")
            return

        if self.args.hold_brief_file:
            while not os.path.exists(self.args.hold_brief_file):
                await asyncio.sleep(0.05)
        await event_queue.enqueue_event(
            Task(
                id=context.task_id,
                context_id=context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
            )
        )
        if self.args.hold_file:
            while not os.path.exists(self.args.hold_file):
                await asyncio.sleep(0.05)
        behaviour = self.args.behaviour
        working_words = {"work": "working on it", "history": f"history: {text}"}.get(behaviour)
        await say(TaskState.TASK_STATE_WORKING, working_words)
        if self.args.settle_seconds > 0:
            # Past the delegating agent's settle grace: its stand-in, not its create, hears the rest.
            await asyncio.sleep(self.args.settle_seconds)
        match behaviour:
            case "complete":
                await say(TaskState.TASK_STATE_COMPLETED, f"echo: {text}")
            case "work":
                await asyncio.sleep(self.args.work_seconds)
                await say(TaskState.TASK_STATE_COMPLETED, f"done: {text}")
            case "park":
                await say(TaskState.TASK_STATE_INPUT_REQUIRED, "which account?")
            case "auth":
                await say(TaskState.TASK_STATE_AUTH_REQUIRED, "please sign in")
            case "fail":
                await say(TaskState.TASK_STATE_FAILED, "could not do it")
            case "long":
                await say(TaskState.TASK_STATE_COMPLETED, long_answer(self.args.answer_chars))
            case "die":
                asyncio.get_running_loop().call_later(0.2, os._exit, 1)
                await asyncio.Event().wait()
            case "hang":
                await asyncio.Event().wait()
            case "artifact":
                data = struct_pb2.Value()
                data.struct_value.update({"rows": 3})
                await event_queue.enqueue_event(
                    TaskArtifactUpdateEvent(
                        task_id=context.task_id,
                        context_id=context_id,
                        artifact=Artifact(
                            artifact_id="answer",
                            parts=[Part(text=f"artifact: {text}"), Part(data=data)],
                        ),
                    )
                )
                await say(TaskState.TASK_STATE_COMPLETED, "Task completed successfully")
            case "files":
                data = struct_pb2.Value()
                data.struct_value.update({"orders": 2})
                await event_queue.enqueue_event(
                    TaskArtifactUpdateEvent(
                        task_id=context.task_id,
                        context_id=context_id,
                        artifact=Artifact(
                            artifact_id="report",
                            name="report",
                            parts=[
                                Part(text=f"report: {text}"),
                                Part(raw=FILES_CSV, media_type="text/csv", filename="march.csv"),
                                Part(raw=FILES_PNG, media_type="image/png", filename="chart.png"),
                                Part(data=data),
                            ],
                        ),
                    )
                )
                await say(TaskState.TASK_STATE_COMPLETED, "Here is the report.")
            case "history":
                await say(TaskState.TASK_STATE_COMPLETED)
            case "converse":
                await self.update(
                    event_queue,
                    context.task_id,
                    context_id,
                    TaskState.TASK_STATE_INPUT_REQUIRED,
                    f"here you are: {text}",
                    sub_state="awaiting-next-message",
                )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        # The SDK builds this context from the stored task, so its context id is the task's.
        await self.update(
            event_queue, context.task_id, context.context_id, TaskState.TASK_STATE_CANCELED
        )

    async def update(
        self,
        event_queue: EventQueue,
        task_id: str,
        context_id: str,
        state: TaskState,
        reply: str | None = None,
        sub_state: str | None = None,
    ) -> None:
        """Emits a timestamped status update (with an agent message if `reply`, and the status
        extension's sub-state on the event and the task if `sub_state`) and keeps it."""
        status = TaskStatus(state=state)
        status.timestamp.GetCurrentTime()
        if reply is not None:
            status.message.CopyFrom(
                Message(
                    message_id=str(uuid.uuid4()),
                    task_id=task_id,
                    context_id=context_id,
                    role=Role.ROLE_AGENT,
                    parts=[Part(text=reply)],
                )
            )
        event = TaskStatusUpdateEvent(task_id=task_id, context_id=context_id, status=status)
        if sub_state is not None:
            event.metadata.update({STATUS_EXTENSION_KEY: {"sub_state": sub_state}})
            snapshot = Task(id=task_id, context_id=context_id, status=status)
            snapshot.metadata.update({STATUS_EXTENSION_KEY: {"sub_state": sub_state}})
            await event_queue.enqueue_event(snapshot)
        self.stats.history[task_id].append(event)
        await event_queue.enqueue_event(event)


# --- Card, app and main -----------------------------------------------------------------------


def build_card(args: argparse.Namespace) -> AgentCard:
    base = f"http://127.0.0.1:{args.port}"
    interfaces = [
        AgentInterface(url=f"{base}/rpc", protocol_binding="JSONRPC", protocol_version="1.0"),
        AgentInterface(url=f"{base}/rest", protocol_binding="HTTP+JSON", protocol_version="1.0"),
    ]
    if args.prefer == "rest":
        interfaces.reverse()
    if args.grpc_port:
        interfaces = [
            AgentInterface(
                url=f"127.0.0.1:{args.grpc_port}", protocol_binding="GRPC", protocol_version="1.0"
            )
        ]
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
    security = {}
    if args.bearer:
        # An OAuth2 client-credentials flow at --oauth-token-url, or a plain bearer token.
        scheme = (
            SecurityScheme(
                oauth2_security_scheme=OAuth2SecurityScheme(
                    flows=OAuthFlows(
                        client_credentials=ClientCredentialsOAuthFlow(
                            token_url=args.oauth_token_url, scopes={"a2a": "delegate"}
                        )
                    )
                )
            )
            if args.oauth_token_url
            else SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
        )
        security = {
            "security_schemes": {"peer-auth": scheme},
            "security_requirements": [
                SecurityRequirement(schemes={"peer-auth": StringList(list=["a2a"])})
            ],
        }
    return AgentCard(
        **security,
        name=args.name,
        description=args.description,
        version="1.0.0",
        supported_interfaces=interfaces,
        capabilities=AgentCapabilities(
            streaming=True, push_notifications=args.push, extensions=extensions
        ),
        default_input_modes=["text/plain", *args.input_mode],
        default_output_modes=["text/plain"],
        skills=skills,
    )


def build_app(args: argparse.Namespace):
    stats = Stats()
    card = build_card(args)
    push_store = ObservedPushConfigStore() if args.push else None
    handler = ObservedHandler(
        stats,
        args.replay_history,
        agent_executor=ScriptedExecutor(args, stats),
        task_store=ObservedTaskStore(stats),
        agent_card=card,
        push_config_store=push_store,
        push_sender=(
            BasePushNotificationSender(httpx.AsyncClient(), push_store) if push_store else None
        ),
    )

    async def stats_endpoint(_request):
        return JSONResponse(stats.to_json(push_store))

    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/rpc"),
        *create_rest_routes(handler, path_prefix="/rest"),
        Route(STATS_PATH, stats_endpoint),
    ]
    return observe(Starlette(routes=routes), stats, args.headers_log, args.bearer), handler, stats


class CountedCalls(grpc.aio.ServerInterceptor):
    """Counts every gRPC call by method, for GET /_stats."""

    def __init__(self, stats: "Stats") -> None:
        self.stats = stats

    async def intercept_service(self, continuation, handler_call_details):
        method = handler_call_details.method.rsplit("/", 1)[-1]
        self.stats.grpc_calls[method] += 1
        return await continuation(handler_call_details)


async def serve_grpc(port: int, handler, stats: "Stats"):
    server = grpc.aio.server(interceptors=[CountedCalls(stats)])
    a2a_pb2_grpc.add_A2AServiceServicer_to_server(GrpcHandler(handler), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server


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
    parser.add_argument("--behaviour", choices=BEHAVIOURS, default="complete")
    parser.add_argument(
        "--input-mode", action="append", default=[], help="a media type the card takes besides text"
    )
    parser.add_argument("--work-seconds", type=float, default=1.0)
    parser.add_argument("--reply-seconds", type=float, default=0.0)
    parser.add_argument("--settle-seconds", type=float, default=0.0)
    parser.add_argument("--answer-chars", type=int, default=5000)
    parser.add_argument("--replay-history", action="store_true")
    parser.add_argument("--hold-file", default="")
    parser.add_argument("--hold-brief-file", default="")
    parser.add_argument(
        "--bearer", action="append", default=[], help="a token A2A calls must carry"
    )
    parser.add_argument(
        "--oauth-token-url", default="", help="declare --bearer as OAuth2 client credentials here"
    )
    parser.add_argument("--grpc-port", type=int, default=0, help="serve gRPC here too")
    args = parser.parse_args()

    app, handler, stats = build_app(args)
    grpc_server = await serve_grpc(args.grpc_port, handler, stats) if args.grpc_port else None
    config = uvicorn.Config(app, host="127.0.0.1", port=args.port, log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    print(f"ready {args.port}", flush=True)
    await serving


if __name__ == "__main__":
    asyncio.run(main())
