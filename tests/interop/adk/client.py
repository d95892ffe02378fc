"""Google ADK as a client of an A2A agent (Baton's gateway): ADK's RemoteA2aAgent, given the
card URL as a string (so ADK fetches and validates the card itself), run by an InMemoryRunner,
at ADK's defaults apart from the binding and streaming choice, which go in the a2a-sdk
ClientFactory ADK takes (`a2a_client_factory`). Nothing Baton-specific is sent.

  card    RemoteA2aAgent resolves and accepts the card (ADK checks every interface URL)
  send    one run with streaming=False (a blocking SendMessage), whose message carries a CSV
          beside its text (a genai inline_data part), ends without an error event, and the
          answer shows the file reached Baton's model
  stream  one run with streaming=True (ADK's default: SendStreamingMessage) likewise
  e2e     the non-streaming run's answer is the agent's (contains --expect)

RemoteA2aAgent has no get, cancel, list or push-config calls: those cells are n/a.
Prints one JSON object: {"cells": {...}, "notes": [...]}.

  python client.py --url http://127.0.0.1:PORT --binding JSONRPC|HTTP+JSON [--expect TEXT]
"""

import argparse
import asyncio
import json
import logging
import warnings

import httpx
from a2a.client import ClientConfig, ClientFactory
from google.adk.a2a.agent import RemoteA2aAgent
from google.adk.runners import InMemoryRunner
from google.genai import types

warnings.filterwarnings("ignore")
logging.disable(logging.CRITICAL)
TIMEOUT = 40
CSV = b"order,total\n1234,99.50\n"


def short(text) -> str:
    return " ".join(str(text).split())[:300]


async def one_run(url: str, binding: str, streaming: bool, notes: list, seen: set) -> tuple:
    """(card error, run error, answer text) of one run."""

    async def record(request: httpx.Request) -> None:
        body = request.content.decode(errors="replace") if request.method == "POST" else ""
        try:
            rpc = json.loads(body).get("method", "") if body else ""
        except ValueError:
            rpc = ""
        key = f"{request.method} {request.url.path} {rpc}".strip()
        if key not in seen:
            seen.add(key)
            wanted = ("content-type", "accept", "a2a-version", "a2a-extensions", "user-agent")
            headers = {k: v for k, v in request.headers.items() if k.lower() in wanted}
            notes.append(f"wire: {key} headers={json.dumps(headers)}")

    http = httpx.AsyncClient(timeout=TIMEOUT, event_hooks={"request": [record]})
    factory = ClientFactory(
        ClientConfig(httpx_client=http, streaming=streaming, supported_protocol_bindings=[binding])
    )
    agent = RemoteA2aAgent(
        name="baton", agent_card=f"{url}/.well-known/agent-card.json", a2a_client_factory=factory
    )
    runner = InMemoryRunner(agent=agent, app_name="interop")
    session = await runner.session_service.create_session(app_name="interop", user_id="interop")
    said = "stream to adk" if streaming else "hello from adk"
    parts = [types.Part(text=said)]
    if not streaming:
        parts.append(types.Part(inline_data=types.Blob(mime_type="text/csv", data=CSV)))
    errors, texts = [], []
    try:
        async with asyncio.timeout(TIMEOUT + 5):
            async for event in runner.run_async(
                user_id="interop",
                session_id=session.id,
                new_message=types.Content(role="user", parts=parts),
            ):
                if event.error_message:
                    errors.append(event.error_message)
                if event.content and event.content.parts:
                    texts.extend(p.text for p in event.content.parts if p.text)
    except Exception as e:  # a crash of the run, as opposed to an error event
        errors.append(f"{type(e).__name__}: {e}")
    finally:
        await http.aclose()
    card_error = next((e for e in errors if e.startswith("Failed to initialize remote A2A agent")), None)
    return card_error, "; ".join(errors), " | ".join(texts)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--binding", required=True)
    parser.add_argument("--expect", default="baton says:")
    args = parser.parse_args()
    notes: list = []
    seen: set = set()
    cells = {"get": "n/a", "cancel": "n/a", "list/push": "n/a"}

    card_error, send_error, answer = await one_run(args.url, args.binding, False, notes, seen)
    if card_error:
        # ADK wraps the reason twice ("Failed to initialize remote A2A agent: Failed to ...").
        reason = card_error.split("agent baton: ", 1)[-1]
        cells["card"] = f"FAIL: {short(reason)}"
        for c in ("send", "stream", "e2e"):
            cells[c] = "FAIL: blocked: card refused"
    else:
        cells["card"] = "ok"
        if send_error:
            cells["send"] = f"FAIL: {short(send_error)}"
        elif "text/csv" not in answer:
            cells["send"] = f"FAIL: the CSV did not reach Baton's model: {answer[:160]!r}"
        else:
            cells["send"] = "ok"
        notes.append(f"send answer: {answer[:200]!r}")
        _, stream_error, streamed = await one_run(args.url, args.binding, True, notes, seen)
        cells["stream"] = f"FAIL: {short(stream_error)}" if stream_error else "ok"
        notes.append(f"stream answer: {streamed[:200]!r}")
        if send_error:
            cells["e2e"] = "FAIL: blocked: send failed"
        elif args.expect in answer:
            cells["e2e"] = "ok"
        else:
            cells["e2e"] = f"FAIL: answer {answer[:120]!r} lacks {args.expect!r}"
    print(json.dumps({"cells": cells, "notes": notes}))


if __name__ == "__main__":
    asyncio.run(main())
