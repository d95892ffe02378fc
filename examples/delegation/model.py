"""The delegation example's model: a small, deterministic OpenAI-compatible Chat Completions
server (POST /v1/chat/completions), with only the Python standard library.

It answers as two agents, told apart by the agent id in the system prompt (`You are the agent
"ledger"`), whatever the request's `model` is, so it can stand in for any endpoint:

- "example-front-desk" delegates. It reads the roster in the system prompt (the `<agents>`
  section Baton renders from each card) and the task's goal, picks the agent whose card shares
  the most words with the question, and calls spawn_subtask on it. When the sub-task's result
  arrives as a note ("... is COMPLETED: <answer>"), it answers with it. With no matching agent it
  says so.
- "example-ledger" looks the order up with the ledger's MCP tool get_order (orders_mcp.py, over
  orders.json): it calls the tool with the order number in the goal, then answers from what the
  tool returned. Asked for a CSV, it calls order_csv instead, whose file goes with its answer.
  It never reads orders.json itself.

Run: python3 model.py --port 8299 [--host 127.0.0.1]
"""

import argparse
import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOPWORDS = set(
    "a an and any are as at be but by can did do does for from had has have how i in is it its "
    "me my of on or our so that the their them then there these this to was we what when where "
    "which who why will with you your about after".split()
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


def agent_of(messages: list[dict]) -> str:
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    found = re.search(r'You are the agent "([^"]+)"', system)
    return found.group(1) if found else ""


def roster_of(messages: list[dict]) -> list[dict]:
    """The agents of the roster: id and every word of its name, description and skills."""
    system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
    section = system.split("<agents>", 1)[-1]
    agents = []
    for line in section.splitlines():
        entry = re.match(r"^- id: (\S+)", line)
        if entry:
            agents.append({"id": entry.group(1), "text": ""})
        elif agents:
            agents[-1]["text"] += " " + line
    return [a for a in agents if a["id"] != "self"]


def front_desk(messages: list[dict], tools: list[dict]) -> dict:
    notes = [m.get("content") or "" for m in messages if m.get("role") == "user"]
    for note in reversed(notes):
        result = re.search(r"is COMPLETED: (.*?)\n</untrusted>", note, re.DOTALL)
        if result:
            # The files the sub-task made follow its answer, each under a heading like
            # [file 1: order-1043.csv, text/csv, 121 B]: they reach the customer as artifacts.
            said = re.split(r"\n\[(?:file|data) \d+", result.group(1))[0]
            return answer(said.strip())
    if any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages):
        return answer("I have asked the right agent; its answer will follow.")
    goal = goal_of(messages)
    scored = sorted(
        ((len(words(goal) & words(agent["text"])), agent["id"]) for agent in roster_of(messages)),
        reverse=True,
    )
    if not scored or scored[0][0] == 0:
        return answer("None of the agents I know can answer that.")
    arguments = {
        "name": "customer question",
        "goal": goal,
        "acceptance_criteria": ["Answers the question from the agent's own records"],
        "agent": scored[0][1],
    }
    return tool_call("spawn_subtask", arguments)


def ledger(messages: list[dict], tools: list[dict]) -> dict:
    goal = goal_of(messages)
    wants_file = "csv" in words(goal)
    tool = "order_csv" if wants_file else "get_order"
    if not any(t.get("function", {}).get("name") == tool for t in tools):
        return answer(f"I have no {tool} tool to look orders up with.")
    looked_up = tool_result_of(messages)
    if looked_up is not None:
        return answer_with_file(looked_up) if wants_file else answer_from(looked_up)
    number = re.search(r"\b(\d{4})\b", goal)
    if not number:
        return answer("Which order? Give me its four-digit number.")
    return tool_call(tool, {"order": number.group(1)})


def answer_with_file(looked_up: str) -> dict:
    """The answer to a request for a CSV: the file order_csv gave goes with it (Baton names it in
    the tool result as [file "order-1042.csv", text/csv, ...])."""
    named = re.search(r'\[file "([^"]+)", text/csv', looked_up)
    if not named:
        return answer(f"The order could not be exported: {looked_up}")
    return answer(f"Here is the order as a CSV file: {named.group(1)}.")


def tool_result_of(messages: list[dict]) -> str | None:
    """The last tool result's body: the lines inside its <untrusted> block, without the preamble."""
    results = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
    if not results:
        return None
    found = re.search(r"<untrusted[^>]*>\n[^\n]*\n(.*)\n</untrusted>", results[-1], re.DOTALL)
    return found.group(1) if found else results[-1]


def answer_from(looked_up: str) -> dict:
    try:
        order = json.loads(looked_up)
    except ValueError:
        return answer(f"The order could not be looked up: {looked_up}")
    return answer(
        f"Order {order['order']} ({order['customer']}: {order['items']}, {order['total']}) "
        f"was {order['status']}."
    )


def tool_call(name: str, arguments: dict) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


def answer(text: str) -> dict:
    return {"role": "assistant", "content": text}


def tokens(value) -> int:
    """A rough token count (words of the JSON), so usage and Baton's token metrics move."""
    return len(json.dumps(value).split())


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/chat/completions":
            return self.reply(404, {"error": {"message": f"no route {self.path}"}})
        try:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        except ValueError:
            return self.reply(400, {"error": {"message": "the body is not JSON"}})
        model = request.get("model", "")
        agents = {"front-desk": front_desk, "ledger": ledger}
        agent = agent_of(request.get("messages", []))
        if agent not in agents:
            return self.reply(
                404, {"error": {"message": f"model.py plays the front-desk and the ledger, not {agent!r}"}}
            )
        message = agents[agent](request.get("messages", []), request.get("tools", []))
        prompt = tokens(request.get("messages", []))
        completion = tokens(message)
        self.reply(
            200,
            {
                "id": "chatcmpl-example",
                "object": "chat.completion",
                "created": 0,
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": message,
                        "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": completion,
                    "total_tokens": prompt + completion,
                },
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
    parser.add_argument("--port", type=int, default=8299)
    parser.add_argument(
        "--host", default="127.0.0.1", help="0.0.0.0 to serve other containers (docker compose)"
    )
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    print(f"ready {args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
