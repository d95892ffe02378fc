"""A real MCP server on the official Python `mcp` SDK (MCPServer, v1's FastMCP), scripted for
Baton's integration tests.

Tools:
  get_order(order)    read-only, idempotent: order "1042" gives the compact JSON text
                      {"order":"1042","customer":"Ada","status":"shipped on 2026-11-20"};
                      any other number fails (isError: true) with "no order <n>"
  refund(order)       not read-only, destructive, not idempotent: always fails with
                      "the refund service is down"
  cancel_order(order) not read-only, not idempotent: hangs (sleeps an hour), a write tool that
                      never answers
  slow_lookup(order)  read-only: hangs (sleeps an hour) until the client gives up or cancels;
                      a cancelled call is recorded as "slow_lookup cancelled"
  big()               read-only: 100000 characters "abc…zabc…"
  shout(text)         read-only: text.upper(), so a test can see untrusted text come back as is
  order_files(order)  read-only: a text block, a PNG image (ORDER_PNG) and an embedded text/csv
                      resource orders://<order>/items.csv (ORDER_CSV)

Every tool returns content blocks only (structured_output=False: no outputSchema, no
structuredContent). A failing tool raises ToolError, which the SDK returns as a result with
isError: true and the text "Error executing tool <name>: <message>".

Usage: mcp_server.py --transport stdio|http [--port N] [--calls FILE]

  stdio  newline-delimited JSON-RPC on stdin/stdout; exits when stdin closes, or at once on
         SIGTERM or SIGINT.
  http   streamable HTTP, stateful (the SDK hands out an Mcp-Session-Id), answers as SSE streams,
         at http://127.0.0.1:N/mcp. --port 0 (the default) lets the OS pick N. Prints
         "ready http://127.0.0.1:N/mcp" on stdout once it listens. Exits on SIGTERM (uvicorn
         re-raises it: killed by the signal) or SIGINT (status 0) within about two seconds,
         cutting off open streams and hung calls.

With --calls FILE, every call that reaches a tool appends the tool's name as one line to FILE
before the tool does anything, so a test can count how often each tool ran (say, that a
non-read-only tool was not retried).
"""

import argparse
import asyncio
import json
import signal
import socket
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.utilities.types import Image
from mcp.types import EmbeddedResource, TextContent, TextResourceContents, ToolAnnotations

READ_ONLY = ToolAnnotations(readOnlyHint=True, idempotentHint=True)
WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=False)
ORDERS = {"1042": {"order": "1042", "customer": "Ada", "status": "shipped on 2026-11-20"}}

# What order_files gives: a PNG's signature then every byte value, and a small CSV.
ORDER_PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
ORDER_CSV = "sku,item,qty\nL1,walnut desk lamp,1\n"

server = MCPServer("baton-test-mcp", version="1.0.0")
calls_file = ""


def record(tool: str) -> None:
    if calls_file:
        with open(calls_file, "a") as calls:
            calls.write(tool + "\n")
            calls.flush()


@server.tool(annotations=READ_ONLY, structured_output=False)
def get_order(order: str) -> str:
    """Looks up a customer order by its four-digit number."""
    record("get_order")
    if order not in ORDERS:
        raise ToolError(f"no order {order}")
    return json.dumps(ORDERS[order], separators=(",", ":"))


@server.tool(annotations=WRITES, structured_output=False)
def refund(order: str) -> str:
    """Refunds a customer order in full."""
    record("refund")
    raise ToolError("the refund service is down")


@server.tool(annotations=WRITES, structured_output=False)
async def cancel_order(order: str) -> str:
    """Cancels a customer order; the order service hangs."""
    record("cancel_order")
    await asyncio.sleep(3600)
    return "too late"


@server.tool(annotations=READ_ONLY, structured_output=False)
async def slow_lookup(order: str) -> str:
    """Looks up a customer order in the archive, which takes a while."""
    record("slow_lookup")
    try:
        await asyncio.sleep(3600)
    except asyncio.CancelledError:
        # The client cancelled the call (notifications/cancelled): say so, as a server would
        # stop its work.
        record("slow_lookup cancelled")
        raise
    return "too late"


@server.tool(annotations=READ_ONLY, structured_output=False)
def big() -> str:
    """Returns a very long text."""
    record("big")
    return "".join(chr(ord("a") + i % 26) for i in range(100_000))


@server.tool(annotations=READ_ONLY, structured_output=False)
def shout(text: str) -> str:
    """Returns the text in capitals."""
    record("shout")
    return text.upper()


@server.tool(annotations=READ_ONLY, structured_output=False)
def order_files(order: str) -> list:
    """Returns an order's chart (PNG) and its items (CSV)."""
    record("order_files")
    items = TextResourceContents(
        uri=f"orders://{order}/items.csv", mime_type="text/csv", text=ORDER_CSV
    )
    return [
        TextContent(type="text", text=f"Order {order}'s chart and items:"),
        Image(data=ORDER_PNG, format="png"),
        EmbeddedResource(type="resource", resource=items),
    ]


async def serve_http(port: int) -> None:
    # Bound here rather than by uvicorn, so a busy port is a one-line error and --port 0's
    # port is known.
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind(("127.0.0.1", port))
    except OSError as problem:
        sys.exit(f"mcp_server: cannot listen on 127.0.0.1:{port}: {problem}")
    port = listener.getsockname()[1]
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    http = uvicorn.Server(config)
    serving = asyncio.create_task(http.serve(sockets=[listener]))
    while not http.started and not serving.done():
        await asyncio.sleep(0.05)
    if http.started:
        print(f"ready http://127.0.0.1:{port}/mcp", flush=True)
    await serving


def main() -> None:
    global calls_file
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--calls", default="", help="append each tool call's name here")
    args = parser.parse_args()
    calls_file = args.calls
    try:
        if args.transport == "stdio":
            # The SDK reads stdin in a worker thread that a KeyboardInterrupt cannot stop, so
            # Ctrl-C would hang until stdin closed: let SIGINT end the process, as SIGTERM does.
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            server.run("stdio")
        else:
            asyncio.run(serve_http(args.port))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
