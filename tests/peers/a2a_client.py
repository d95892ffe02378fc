"""The official Python a2a-sdk client, driven from Baton's tests: one operation per run.

  a2a_client.py --url URL --binding JSONRPC|HTTP+JSON|GRPC --participant ID OP [options]

With --extension URI (repeatable) the client activates that extension (A2A-Extensions); with
none it activates nothing, as a generic client does. A send with --context-id continues that
context. With --scheme and --credential, the SDK's AuthInterceptor presents the credential as the card's
scheme of that name says; with no --participant, no X-Participant-Id is sent. Over GRPC the
card's gRPC interface (an http URL) is called on an insecure channel, and --participant travels as metadata.

A send or stream may carry files and data beside its text: --file PATH=MEDIA_TYPE sends the
file's bytes, --file-url URL=MEDIA_TYPE a file by URL, --data JSON a data part (each repeatable,
in that order after the text).

OP is send, stream, get, list, cancel, subscribe, or push-create, push-get, push-list,
push-delete. A send or stream with --push-url carries that webhook inline, in
configuration.taskPushNotificationConfig. Results go to stdout as JSON (ProtoJSON
dicts; a stream prints one event a line). An A2A error prints {"error": {"type", "reason",
"message"}} and exits 3, so a test can check every error by its ErrorInfo reason; a client
error with no A2A reason prints the same with an empty reason.
"""

import argparse
import asyncio
import json
import os
import sys
import uuid
from urllib.parse import urlsplit

import grpc
import httpx
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.client import ClientConfig, create_client
from a2a.client.auth import AuthInterceptor, CredentialService
from a2a.client.client import ClientCallContext
from a2a.client.interceptors import BeforeArgs, ClientCallInterceptor
from a2a.types import (
    AuthenticationInfo,
    CancelTaskRequest,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    TaskPushNotificationConfig,
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    SubscribeToTaskRequest,
)
from a2a.client.errors import A2AClientError
from a2a.utils.errors import A2A_ERROR_REASONS, A2AError


def push_config(args: argparse.Namespace) -> TaskPushNotificationConfig:
    config = TaskPushNotificationConfig(task_id=args.task_id, url=args.push_url)
    if args.config_id:
        config.id = args.config_id
    if args.token:
        config.token = args.token
    if args.auth_scheme:
        config.authentication.CopyFrom(
            AuthenticationInfo(scheme=args.auth_scheme, credentials=args.auth_credentials)
        )
    return config


class OneCredential(CredentialService):
    """The credential a test hands the client, for the card's scheme of that name only."""

    def __init__(self, scheme: str, credential: str):
        self.scheme = scheme
        self.credential = credential

    async def get_credentials(self, security_scheme_name, context):
        return self.credential if security_scheme_name == self.scheme else None


class ServiceParameters(ClientCallInterceptor):
    """Service parameters where no httpx header can carry them (gRPC metadata)."""

    def __init__(self, parameters: dict[str, str]):
        self.parameters = parameters

    async def before(self, args: BeforeArgs) -> None:
        if args.context is None:
            args.context = ClientCallContext()
        if args.context.service_parameters is None:
            args.context.service_parameters = {}
        args.context.service_parameters.update(self.parameters)

    async def after(self, args) -> None:
        return None


def grpc_channel(url: str):
    """A channel to a card's gRPC interface: an absolute URL, as A2A 1.0 asks (http or https),
    or the bare host:port older cards give. gRPC's own target syntax has no http scheme."""
    parsed = urlsplit(url if "://" in url else f"http://{url}")
    target = parsed.netloc
    if parsed.scheme == "https":
        return grpc.aio.secure_channel(target, grpc.ssl_channel_credentials())
    return grpc.aio.insecure_channel(target)


def parts(args: argparse.Namespace) -> list[Part]:
    """The message's parts: the text, then each file, file by URL and data part."""
    carries_more = args.file or args.file_url or args.data
    found = [Part(text=args.text)] if args.text or not carries_more else []
    for spec in args.file:
        path, media_type = spec.rsplit("=", 1)
        with open(path, "rb") as file:
            found.append(Part(raw=file.read(), media_type=media_type, filename=os.path.basename(path)))
    for spec in args.file_url:
        url, media_type = spec.rsplit("=", 1)
        found.append(Part(url=url, media_type=media_type))
    for data in args.data:
        found.append(Part(data=ParseDict(json.loads(data), struct_pb2.Value())))
    return found


def emit(proto) -> None:
    print(json.dumps(MessageToDict(proto)), flush=True)


async def run(args: argparse.Namespace) -> None:
    grpc_binding = args.binding == "GRPC"
    parameters = {"X-Participant-Id": args.participant} if args.participant else {}
    if args.extension:
        parameters["A2A-Extensions"] = ", ".join(args.extension)
    headers = {} if grpc_binding else parameters
    http = httpx.AsyncClient(headers=headers, timeout=60)
    config = ClientConfig(
        streaming=args.op in ("stream", "subscribe"),
        httpx_client=http,
        supported_protocol_bindings=[args.binding],
        use_client_preference=True,
        grpc_channel_factory=grpc_channel if grpc_binding else None,
    )
    # The SDK's own AuthInterceptor reads the card's securitySchemes and presents the credential
    # the way the named scheme says (a bearer token, an API key header, an OIDC token).
    interceptors = (
        [AuthInterceptor(OneCredential(args.scheme, args.credential))] if args.credential else []
    )
    if parameters and grpc_binding:
        interceptors.append(ServiceParameters(parameters))
    client = await create_client(args.url, client_config=config, interceptors=interceptors)
    try:
        if args.op in ("send", "stream"):
            message = Message(
                message_id=args.message_id or str(uuid.uuid4()),
                role=Role.ROLE_USER,
                parts=parts(args),
            )
            if args.task_id:
                message.task_id = args.task_id
            if args.context_id:
                message.context_id = args.context_id
            if args.metadata:
                message.metadata.update(json.loads(args.metadata))
            configuration = SendMessageConfiguration(return_immediately=args.return_immediately)
            if args.push_url:
                configuration.task_push_notification_config.CopyFrom(push_config(args))
            request = SendMessageRequest(message=message, configuration=configuration)
            async for event in client.send_message(request):
                emit(event)
        elif args.op == "get":
            request = GetTaskRequest(id=args.task_id)
            if args.history_length is not None:
                request.history_length = args.history_length
            emit(await client.get_task(request))
        elif args.op == "list":
            request = ListTasksRequest()
            if args.context_id:
                request.context_id = args.context_id
            if args.page_size:
                request.page_size = args.page_size
            emit(await client.list_tasks(request))
        elif args.op == "cancel":
            emit(await client.cancel_task(CancelTaskRequest(id=args.task_id)))
        elif args.op == "subscribe":
            async for event in client.subscribe(SubscribeToTaskRequest(id=args.task_id)):
                emit(event)
        elif args.op == "push-create":
            emit(await client.create_task_push_notification_config(push_config(args)))
        elif args.op == "push-get":
            emit(
                await client.get_task_push_notification_config(
                    GetTaskPushNotificationConfigRequest(task_id=args.task_id, id=args.config_id)
                )
            )
        elif args.op == "push-list":
            emit(
                await client.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id=args.task_id)
                )
            )
        elif args.op == "push-delete":
            await client.delete_task_push_notification_config(
                DeleteTaskPushNotificationConfigRequest(task_id=args.task_id, id=args.config_id)
            )
            print(json.dumps({"deleted": args.config_id}))
    finally:
        await client.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--binding", default="JSONRPC")
    parser.add_argument("--participant", default="")
    parser.add_argument("--scheme", default="", help="a securitySchemes name of the card")
    parser.add_argument("--credential", default="", help="what to present for --scheme")
    parser.add_argument(
        "op",
        choices=[
            "send", "stream", "get", "list", "cancel", "subscribe",
            "push-create", "push-get", "push-list", "push-delete",
        ],
    )
    parser.add_argument("--push-url", default="")
    parser.add_argument("--config-id", default="")
    parser.add_argument("--token", default="")
    parser.add_argument("--auth-scheme", default="")
    parser.add_argument("--auth-credentials", default="")
    parser.add_argument("--text", default="")
    parser.add_argument("--file", action="append", default=[], help="PATH=MEDIA_TYPE")
    parser.add_argument("--file-url", action="append", default=[], help="URL=MEDIA_TYPE")
    parser.add_argument("--data", action="append", default=[], help="a JSON value")
    parser.add_argument("--extension", action="append", default=[])
    parser.add_argument("--metadata", default="", help="a JSON object: the message's metadata")
    parser.add_argument("--task-id", default="")
    parser.add_argument("--message-id", default="")
    parser.add_argument("--context-id", default="")
    parser.add_argument("--history-length", type=int)
    parser.add_argument("--page-size", type=int)
    parser.add_argument("--return-immediately", action="store_true")
    args = parser.parse_args()
    try:
        asyncio.run(run(args))
    except A2AError as error:
        reason = A2A_ERROR_REASONS.get(type(error), "")
        print(json.dumps({"error": {"type": type(error).__name__, "reason": reason, "message": error.message}}))
        sys.exit(3)
    except A2AClientError as error:
        # A transport error that carries no A2A reason (a gRPC status of its own, say).
        print(json.dumps({"error": {"type": type(error).__name__, "reason": "", "message": str(error)}}))
        sys.exit(3)


if __name__ == "__main__":
    main()
