"""The interop suite's model: a deterministic OpenAI-compatible Chat Completions server
(POST /v1/chat/completions), standard library only, for the Baton worker under test.

It decides each answer from the request alone, by the task's goal (the `goal: ...` line of the
task section Baton sends):

- `via=<agent id>` in the goal: call spawn_subtask on that agent with the rest of the goal as
  the sub-task's goal; once the sub-task's note has come ("... is COMPLETED: <text>"), answer
  "delegated to <agent>: COMPLETED: <text>" (any other state likewise); until then, "waiting".
- `interop:hold` in the goal: ask the participants a question (ask_participant), so the task
  waits INPUT_REQUIRED (for cancel and push-config tests); answer "thanks" once answered.
- anything else: answer "baton says: <goal>" at once, followed by " files: <heading>, ..." when
  the messages show the model files (Baton's `[file 1: name, type, size]` headings), so a
  client can tell its file reached the model.

Run: python3 fake_model.py --port N      (prints "ready N" once it listens)
"""

import argparse
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def goal_of(messages: list[dict]) -> str:
    for message in messages:
        if message.get("role") == "user":
            found = re.search(r"^goal: (.*)$", message.get("content") or "", re.MULTILINE)
            if found:
                return found.group(1).strip()
    return ""


def called(messages: list[dict], tool: str) -> bool:
    return any(
        call.get("function", {}).get("name") == tool
        for m in messages
        if m.get("role") == "assistant"
        for call in (m.get("tool_calls") or [])
    )


def note_of(messages: list[dict]):
    """The state and text of the newest sub-task note, or None."""
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        found = re.search(
            r"Sub-task .*?\) is ([A-Z_]+)(?::\s*(.*?))?\s*</untrusted>",
            message.get("content") or "",
            re.DOTALL,
        )
        if found:
            return found.group(1), (found.group(2) or "").strip()
    return None


def decide(messages: list[dict]) -> dict:
    goal = goal_of(messages)
    via = re.search(r"\bvia=(\S+)", goal)
    if via:
        agent = via.group(1)
        note = note_of(messages)
        if note:
            return answer(f"delegated to {agent}: {note[0]}: {note[1]}")
        if called(messages, "spawn_subtask"):
            return answer("waiting")
        brief = re.sub(r"\s*\bvia=\S+", "", goal).strip() or "say hello"
        return tool_call("spawn_subtask", {"name": "interop", "goal": brief, "agent": agent})
    if "interop:hold" in goal:
        if called(messages, "ask_participant"):
            return answer("thanks")
        return tool_call("ask_participant", {"question": "Which account do you mean?"})
    return answer(f"baton says: {goal}" + files_seen(messages))


def files_seen(messages: list[dict]) -> str:
    """ " files: <heading>, ..." for each file heading in the user messages; "" for none."""
    headings = [
        heading
        for m in messages
        if m.get("role") == "user"
        for heading in re.findall(r"\[(?:file|data) \d+[^\]\n]*\]", json.dumps(m.get("content")))
    ]
    return f" files: {', '.join(headings)}" if headings else ""


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
    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self.reply(404, {"error": {"message": f"no route {self.path}"}})
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError:
            return self.reply(400, {"error": {"message": "the body is not JSON"}})
        message = decide(request.get("messages", []))
        print(json.dumps({"goal": goal_of(request.get("messages", [])), "reply": message}), flush=True)
        self.reply(
            200,
            {
                "id": "chatcmpl-interop",
                "object": "chat.completion",
                "created": 0,
                "model": request.get("model", ""),
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            },
        )

    def reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"ready {args.port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
