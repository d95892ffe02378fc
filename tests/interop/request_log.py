"""An ASGI wrapper that records each A2A request an agent gets, for the interop suite's agents
(ADK's, LangGraph's, the Microsoft Agent Framework one): the JSON-RPC method, the task it names,
the message's text and the A2A headers. GET /_log returns the records as JSON, which is how the
suite sees what Baton did to the agent. The request reaches the agent's app unchanged.
"""

import json

WATCHED = {"content-type", "accept", "a2a-version", "a2a-extensions", "x-participant-id", "authorization", "user-agent"}


class RequestLog:
    """Wraps an ASGI app: records its requests and serves GET /_log."""

    def __init__(self, app):
        self.app = app
        self.log = []

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if scope["path"] == "/_log":
            body = json.dumps(self.log).encode()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"] if k.decode().lower() in WATCHED}
        entry = {"http": f"{scope['method']} {scope['path']}", "headers": headers}
        if scope["method"] != "POST":
            self.log.append(entry)
            return await self.app(scope, receive, send)
        chunks = []
        while True:
            message = await receive()
            chunks.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        raw = b"".join(m.get("body", b"") for m in chunks if m["type"] == "http.request")
        try:
            request = json.loads(raw)
            entry["method"] = request.get("method", "")
            params = request.get("params") or {}
            message = params.get("message") or {}
            entry["taskId"] = params.get("id") or params.get("taskId") or message.get("taskId") or ""
            entry["text"] = " ".join(p.get("text", "") for p in message.get("parts", []))[:200]
        except (ValueError, AttributeError):
            entry["method"] = "?"
        self.log.append(entry)
        replay = iter(chunks)

        async def receive_again():
            try:
                return next(replay)
            except StopIteration:
                return await receive()

        await self.app(scope, receive_again, send)
