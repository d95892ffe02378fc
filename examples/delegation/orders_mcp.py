"""The delegation example's order book as an MCP server, with only the Python standard library.

It speaks the Model Context Protocol over stdio: one JSON-RPC 2.0 message a line on stdin and
stdout, logs on stderr. It offers two read-only tools: get_order, which looks an order up in
orders.json by its four-digit number and returns it as compact JSON text, and order_csv, which
returns the same order as a CSV file (an embedded text/csv resource, orders://<n>/order-<n>.csv),
which Baton keeps as a file of the task and hands on to whoever asked. An unknown number or bad
arguments come back as a tool error (isError: true) that says what is wrong, so a model can read
it and try again; the server keeps running after any bad input and exits when stdin closes.

Run: python3 orders_mcp.py [orders.json]   (default: orders.json next to this file)
An MCP client starts it as a child process and talks to it over the pipes.

Or over streamable HTTP, for a client in another container (deploy/docker-compose.yml):
  python3 orders_mcp.py --http 0.0.0.0:8300 [orders.json]
Each POST to /mcp carries one JSON-RPC message and is answered with one JSON body (a
notification with 202 and none). It is stateless: it hands out no session, and GET /mcp (a
stream of server-initiated messages, which it never sends) is 405.
"""

import csv
import io
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
DEFAULT_VERSION = "2025-06-18"
ORDER_PATTERN = "^[0-9]{4}$"

GET_ORDER = {
    "name": "get_order",
    "title": "Get an order",
    "description": (
        "Looks up one customer order by its four-digit number: customer, items, total, status."
    ),
    "inputSchema": {
        "type": "object",
        "properties": {
            "order": {
                "type": "string",
                "description": 'The order\'s four-digit number, e.g. "1042"',
                "pattern": ORDER_PATTERN,
            }
        },
        "required": ["order"],
        "additionalProperties": False,
    },
    "annotations": {"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False},
}

ORDER_CSV = {
    "name": "order_csv",
    "title": "An order as a CSV file",
    "description": (
        "Returns one customer order, by its four-digit number, as a CSV file (order, customer, "
        "items, total, status) that can be handed to the customer."
    ),
    "inputSchema": GET_ORDER["inputSchema"],
    "annotations": GET_ORDER["annotations"],
}
CSV_COLUMNS = ("order", "customer", "items", "total", "status")


class RpcError(Exception):
    def __init__(self, code: int, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def log(message: str) -> None:
    print(f"orders_mcp: {message}", file=sys.stderr, flush=True)


def send(message: dict) -> None:
    # json.dumps escapes newlines and non-ASCII, so every message is exactly one ASCII line.
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def initialize(params: dict, orders: dict) -> dict:
    requested = params.get("protocolVersion")
    return {
        "protocolVersion": requested if requested in SUPPORTED_VERSIONS else DEFAULT_VERSION,
        "capabilities": {"tools": {"listChanged": False}},
        "serverInfo": {"name": "orders", "version": "1.0.0"},
    }


def list_tools(params: dict, orders: dict) -> dict:
    return {"tools": [GET_ORDER, ORDER_CSV]}


def call_tool(params: dict, orders: dict) -> dict:
    name = params.get("name")
    if name not in (GET_ORDER["name"], ORDER_CSV["name"]):
        raise RpcError(-32602, f"unknown tool {name!r}; the tools are get_order and order_csv")
    try:
        order = get_order(params.get("arguments"), orders)
    except ValueError as problem:
        log(f"{name} failed: {problem}")
        return tool_result(str(problem), is_error=True)
    if name == ORDER_CSV["name"]:
        return csv_result(order)
    text = json.dumps(order, ensure_ascii=False, separators=(",", ":"))
    return tool_result(text, is_error=False)


def csv_result(order: dict) -> dict:
    """The order as one CSV file: a header line and the order's line, embedded as a resource."""
    lines = io.StringIO()
    writer = csv.writer(lines, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    writer.writerow(order[column] for column in CSV_COLUMNS)
    number = order["order"]
    resource = {
        "uri": f"orders://{number}/order-{number}.csv",
        "mimeType": "text/csv",
        "text": lines.getvalue(),
    }
    return {
        "content": [
            {"type": "text", "text": f"Order {number} as a CSV file:"},
            {"type": "resource", "resource": resource},
        ],
        "isError": False,
    }


def get_order(arguments, orders: dict) -> dict:
    """The order the arguments name, with its number; ValueError says what is wrong with them."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ValueError('the arguments must be an object, e.g. {"order": "1042"}')
    unknown = sorted(set(arguments) - {"order"})
    if unknown:
        raise ValueError(f'unknown argument(s): {", ".join(unknown)}; get_order takes only "order"')
    number = arguments.get("order")
    if number is None:
        raise ValueError('missing argument "order": the order\'s four-digit number, e.g. "1042"')
    if not isinstance(number, str) or not re.fullmatch(ORDER_PATTERN, number):
        got = json.dumps(number, ensure_ascii=False)
        raise ValueError(f'"order" must be a four-digit number in a string, e.g. "1042", not {got}')
    if number not in orders:
        raise ValueError(f"no order {number}; the orders are {', '.join(sorted(orders))}")
    return {"order": number, **orders[number]}


def tool_result(text: str, is_error: bool) -> dict:
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def ping(params: dict, orders: dict) -> dict:
    return {}


METHODS = {
    "initialize": initialize,
    "ping": ping,
    "tools/list": list_tools,
    "tools/call": call_tool,
}


def handle(line: bytes, orders: dict) -> dict | None:
    """The reply to one line from the client, or None when it needs none."""
    try:
        message = json.loads(line)
    except ValueError:  # also covers bytes that are not UTF-8
        return error(None, -32700, "parse error: the line is not JSON")
    if not isinstance(message, dict):
        return error(None, -32600, "invalid request: a message must be a JSON object")
    if "id" not in message:
        # A notification (notifications/initialized, cancelled, ...) or a stray response: no reply.
        return None
    request_id = message["id"]
    method = message.get("method")
    if not isinstance(method, str):
        return error(request_id, -32600, "invalid request: no method")
    if method not in METHODS:
        return error(request_id, -32601, f"method not found: {method}")
    params = message.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return error(request_id, -32602, "invalid params: params must be an object")
    try:
        return {"jsonrpc": "2.0", "id": request_id, "result": METHODS[method](params, orders)}
    except RpcError as problem:
        return error(request_id, problem.code, problem.message)


def error(request_id, code: int, message: str) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def read_orders(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as problem:
        log(f"cannot read the orders from {path}: {problem}")
        sys.exit(1)


def serve_stdio(orders: dict, path: Path) -> None:
    log(f"serving {len(orders)} orders from {path} over stdio")
    try:
        while line := sys.stdin.buffer.readline():
            if line.strip():
                reply = handle(line, orders)
                if reply is not None:
                    send(reply)
    except KeyboardInterrupt:
        return
    log("stdin closed, exiting")


def serve_http(orders: dict, path: Path, bind: str) -> None:
    host, _, port = bind.rpartition(":")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/mcp":
                return self.answer(404, {"error": f"no route {self.path}; MCP is at /mcp"})
            length = int(self.headers.get("Content-Length") or 0)
            reply = handle(self.rfile.read(length), orders)
            if reply is None:
                return self.answer(202, None)
            self.answer(200, reply)

        def do_GET(self) -> None:
            self.answer(405, {"error": "this server sends no messages of its own"})

        def do_DELETE(self) -> None:
            self.answer(405, {"error": "this server keeps no sessions"})

        def answer(self, status: int, body) -> None:
            data = b"" if body is None else json.dumps(body).encode()
            self.send_response(status)
            if body is not None:
                self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer((host or "127.0.0.1", int(port)), Handler)
    log(f"serving {len(orders)} orders from {path} at http://{bind}/mcp")
    print(f"ready http://{host or '127.0.0.1'}:{server.server_address[1]}/mcp", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


def main() -> None:
    args = sys.argv[1:]
    bind = None
    if args[:1] == ["--http"]:
        if len(args) < 2:
            log("--http needs an address, e.g. --http 127.0.0.1:8300")
            sys.exit(2)
        bind, args = args[1], args[2:]
    path = Path(args[0]) if args else Path(__file__).parent / "orders.json"
    orders = read_orders(path)
    if bind is None:
        serve_stdio(orders, path)
    else:
        serve_http(orders, path, bind)


if __name__ == "__main__":
    main()
