"""An A2A agent on the released Google ADK, for Baton to delegate to: an LlmAgent served by
ADK's own `to_a2a` (its card builder, A2aAgentExecutor and the a2a-sdk routes it mounts), with
a deterministic model (a BaseLlm subclass; no network model).

The model answers "adk peer answers: <the user's text>"; a text holding "interop:hold" makes it
wait (up to 120 s, or until the task is cancelled) before answering.

`request_log.RequestLog` around the app records every A2A request it gets; GET /_log returns
them, which is how the suite sees what Baton did to the agent.

  python peer.py --port N      (the card is served at http://127.0.0.1:N/.well-known/agent-card.json)
"""

import argparse
import asyncio
import sys
from pathlib import Path

import uvicorn
from google.adk.a2a.utils.agent_to_a2a import to_a2a
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_response import LlmResponse
from google.genai import types

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from request_log import RequestLog  # noqa: E402

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
    app = RequestLog(to_a2a(agent, host="127.0.0.1", port=args.port))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
