"""The courier example's model: a small, deterministic OpenAI-compatible Chat Completions server
(POST /v1/chat/completions), with only the Python standard library. It plays the front desk of
desk.toml, reading the conversation Baton sends it:

1. a new question: spawn_subtask on the agent of the roster whose card shares the most words
   with it (the courier);
2. the sub-task's note says INPUT_REQUIRED with the courier's question: ask_participant with
   that question (only the customer may choose);
3. the customer's answer arrived: reply_to_subtask with it, word for word;
4. the sub-task's note says COMPLETED: answer with the courier's quote.

Between those it says what it waits for. Run: python3 model.py --port 8399 [--host 127.0.0.1]
"""

import argparse
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOPWORDS = set(
    "a an and any are as at be but by can did do does for from had has have how i in is it its "
    "me my of on or our so that the their them then there these this to was we what when where "
    "which who why will with you your about after much".split()
)
NOTE = re.compile(
    r"Sub-task .*?\(id (?P<id>[^,\s]+), .*?\) is (?P<state>[A-Z_]+): (?P<text>.*?)\n</untrusted>",
    re.DOTALL,
)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2 and w not in STOPWORDS}


def goal_of(messages: list[dict]) -> str:
    for message in messages:
        if message.get("role") == "user":
            found = re.search(r"^goal: (.*)$", message.get("content") or "", re.MULTILINE)
            if found:
                return found.group(1)
    return ""


def roster_of(messages: list[dict]) -> list[dict]:
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    agents = []
    for line in system.split("<agents>", 1)[-1].splitlines():
        entry = re.match(r"^- id: (\S+)", line)
        if entry:
            agents.append({"id": entry.group(1), "text": ""})
        elif agents:
            agents[-1]["text"] += " " + line
    return [a for a in agents if a["id"] != "self"]


def called(message: dict) -> list[str]:
    return [c["function"]["name"] for c in message.get("tool_calls") or []]


def front_desk(messages: list[dict]) -> dict:
    history = messages[2:]  # after the system prompt and the task section
    notes = [(i, NOTE.search(m.get("content") or "")) for i, m in enumerate(history) if m.get("role") == "user"]
    notes = [(i, found) for i, found in notes if found]
    if not notes:
        if any("spawn_subtask" in called(m) for m in history):
            return answer("I have asked the courier; its quote will follow.")
        return delegate(messages)
    at, note = notes[-1]
    if note["state"] == "COMPLETED":
        return answer(note["text"].strip())
    if note["state"] != "INPUT_REQUIRED":
        return answer(f"The courier could not quote: {note['text'].strip()}")
    after = history[at + 1 :]
    if any("reply_to_subtask" in called(m) for m in after):
        return answer("I have given the courier your answer; its quote will follow.")
    asked = next((i for i, m in enumerate(after) if "ask_participant" in called(m)), None)
    if asked is None:
        return tool_call("ask_participant", {"question": note["text"].strip()})
    replies = [
        m.get("content") or ""
        for m in after[asked + 1 :]
        if m.get("role") == "user" and not (m.get("content") or "").startswith("<untrusted")
    ]
    if not replies:
        return answer("I am waiting for your answer.")
    return tool_call("reply_to_subtask", {"sub_task": note["id"], "text": replies[-1]})


def delegate(messages: list[dict]) -> dict:
    goal = goal_of(messages)
    scored = sorted(
        ((len(words(goal) & words(a["text"])), a["id"]) for a in roster_of(messages)), reverse=True
    )
    if not scored or scored[0][0] == 0:
        return answer("None of the agents I know can answer that.")
    return tool_call(
        "spawn_subtask",
        {
            "name": "shipping quote",
            "goal": goal,
            "acceptance_criteria": ["Quotes the price and the delivery date"],
            "agent": scored[0][1],
        },
    )


def tool_call(name: str, arguments: dict) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
    }


def answer(text: str) -> dict:
    return {"role": "assistant", "content": text}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        if self.path.rstrip("/") != "/v1/chat/completions":
            self.send_error(404)
            return
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        message = front_desk(body.get("messages", []))
        reply = {
            "id": "chatcmpl-example",
            "object": "chat.completion",
            "model": body.get("model", "example"),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {"prompt_tokens": len(json.dumps(body).split()), "completion_tokens": len(json.dumps(message).split())},
        }
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8399)
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print("ready", args.port, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
