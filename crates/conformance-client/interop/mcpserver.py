"""The Python SDK server of `cargo xtask interop`: a small MCPServer (the
official `mcp` 2.x SDK's FastMCP, renamed) with a tool, a resource and a
prompt.

Usage: mcpserver.py stdio
       mcpserver.py streamable-http PORT   (endpoint /mcp)
       mcpserver.py sse PORT               (GET /sse, POST /messages/)
HTTP modes bind 127.0.0.1 only.
"""

import sys

from mcp.server.mcpserver import MCPServer

server = MCPServer("mcpwire-interop")


@server.tool()
def add(a: float, b: float) -> float:
    """Adds two numbers."""
    return a + b


@server.resource("interop://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the Python SDK"


@server.prompt()
def review(code: str) -> str:
    """Asks for a review of `code`."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "stdio":
        server.run("stdio")
    else:
        server.run(mode, host="127.0.0.1", port=int(sys.argv[2]))
