"""An A2A agent on the released Google ADK, for Baton to delegate to: an LlmAgent served by
ADK's own `to_a2a` (its card builder, A2aAgentExecutor and the a2a-sdk routes it mounts), with
a deterministic model (a BaseLlm subclass; no network model).

The model answers "adk peer answers: <the user's text>"; a text holding "interop:hold" makes it
wait (up to 120 s, or until the task is cancelled) before answering.

An ASGI wrapper around the app records every A2A request it gets (JSON-RPC method, A2A headers,
content type); GET /_log returns them, which is how the suite sees what Baton did to the agent.

  python peer.py --port N      (the card is served at http://127.0.0.1:N/.well-known/agent-card.json)
"""

import argparse
import asyncio
import json

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types

HOLD_SECONDS = 120


class ScriptedLlm(BaseLlm):
    """A deterministic model: it echoes the newest user text."""

    model: str = "interop-scripted"

    async def generate_content_async(self, llm_request, stream: bool = False):
        said = ""
        for content in reversed(llm_request.contents or []):
            if content.role == "user":
                said = " ".join(p.text for p in content.parts or [] if p.text).strip()
                if said:
                    break
        if "interop:hold" in said:
            await asyncio.sleep(HOLD_SECONDS)
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=f"adk peer answers: {said[:200]}")])
        )


WATCHED = {"content-type", "accept", "a2a-version", "a2a-extensions", "x-participant-id", "authorization", "user-agent"}


class Logged:
    """ASGI wrapper: records each request's method and A2A headers; serves GET /_log."""

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
        except ValueError:
            entry["method"] = "?"
        self.log.append(entry)
        replay = iter(chunks)

        async def receive_again():
            try:
                return next(replay)
            except StopIteration:
                return await receive()

        await self.app(scope, receive_again, send)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    agent = LlmAgent(
        name="adk_peer",
        model=ScriptedLlm(),
        description="A Google ADK agent: it echoes what it is asked.",
        instruction="Answer with what you were asked.",
    )
    app = Logged(to_a2a(agent, host="127.0.0.1", port=args.port))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
