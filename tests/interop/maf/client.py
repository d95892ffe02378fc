"""Microsoft Agent Framework as a client of an A2A agent (Baton's gateway): its A2AAgent, given
the card the a2a-sdk's A2ACardResolver fetched, at MAF's defaults apart from the binding.
Nothing Baton-specific is sent.

  card    the card resolves and A2AAgent takes it for the binding
  send    one run (stream=False: a blocking SendMessage) answers without an error
  stream  one run with stream=True (SendStreamingMessage) likewise
  e2e     the send's answer is the agent's (contains --expect)

A2AAgent has no get, cancel, list or push-config calls of its own: those cells are n/a. Its gRPC
transport needs a channel factory MAF does not make, so only JSONRPC and HTTP+JSON are run.
Prints one JSON object: {"cells": {...}, "notes": [...]}.

  python client.py --url http://127.0.0.1:PORT --binding JSONRPC|HTTP+JSON [--expect TEXT]
"""

import argparse
import asyncio
import json
import logging
import warnings

import httpx
from a2a.client import A2ACardResolver
from agent_framework_a2a import A2AAgent

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
TIMEOUT = 40


def short(text) -> str:
    return " ".join(str(text).split())[:300]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--binding", required=True)
    parser.add_argument("--expect", default="baton says:")
    args = parser.parse_args()
    notes: list = []
    cells = {"get": "n/a", "cancel": "n/a", "list/push": "n/a"}
    try:
        async with httpx.AsyncClient(timeout=TIMEOUT) as http:
            card = await A2ACardResolver(http, args.url).get_agent_card()
        agent = A2AAgent(agent_card=card, supported_protocol_bindings=[args.binding])
    except Exception as e:
        cells["card"] = f"FAIL: {short(f'{type(e).__name__}: {e}')}"
        for c in ("send", "stream", "e2e"):
            cells[c] = "FAIL: blocked: card refused"
        print(json.dumps({"cells": cells, "notes": notes}))
        return
    cells["card"] = "ok"

    answer = ""
    try:
        async with asyncio.timeout(TIMEOUT):
            response = await agent.run("hello from maf")
        answer = response.text or ""
        cells["send"] = "ok" if answer else "FAIL: the run answered no text"
    except Exception as e:
        cells["send"] = f"FAIL: {short(f'{type(e).__name__}: {e}')}"
    notes.append(f"send answer: {answer[:200]!r}")

    streamed = []
    try:
        async with asyncio.timeout(TIMEOUT):
            async for update in agent.run("stream to maf", stream=True):
                if update.text:
                    streamed.append(update.text)
        cells["stream"] = "ok" if streamed else "FAIL: the stream carried no text"
    except Exception as e:
        cells["stream"] = f"FAIL: {short(f'{type(e).__name__}: {e}')}"
    notes.append(f"stream answer: {' '.join(streamed)[:200]!r}")

    if not cells["send"] == "ok":
        cells["e2e"] = "FAIL: blocked: send failed"
    elif args.expect in answer:
        cells["e2e"] = "ok"
    else:
        cells["e2e"] = f"FAIL: answer {answer[:120]!r} lacks {args.expect!r}"
    print(json.dumps({"cells": cells, "notes": notes}))


if __name__ == "__main__":
    asyncio.run(main())
