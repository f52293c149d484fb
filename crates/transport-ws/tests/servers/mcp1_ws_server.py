"""A server on the official Python SDK 1.x, over its WebSocket transport
(`mcp.server.websocket`, which mcp 2.x no longer ships), for mcpwire-ws's
real-server test and `cargo xtask interop`. It needs the `venv-mcp1`
virtualenv that `cargo xtask servers` installs (`mcp[ws]` 1.x).

Usage: mcp1_ws_server.py PORT   (ws://127.0.0.1:PORT/ws, loopback only)
"""

import sys
import warnings

import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute

from mcp.server.fastmcp import FastMCP
from mcp.server.websocket import websocket_server

# The SDK marks its WebSocket transport deprecated; it still works, and it is
# what the servers this test stands for run.
warnings.filterwarnings("ignore", category=DeprecationWarning)

server = FastMCP("mcpwire-interop-ws")


@server.tool()
def add(a: float, b: float) -> float:
    """Adds two numbers."""
    return a + b


@server.resource("interop://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the Python SDK over WebSocket"


@server.prompt()
def review(code: str) -> str:
    """Asks for a review of `code`."""
    return f"Please review:\n{code}"


class McpWebSocket:
    """The raw ASGI endpoint: one MCP session per WebSocket connection."""

    async def __call__(self, scope, receive, send):
        lowlevel = server._mcp_server
        async with websocket_server(scope, receive, send) as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())


app = Starlette(routes=[WebSocketRoute("/ws", McpWebSocket())])

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
