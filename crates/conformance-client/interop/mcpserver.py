"""The Python SDK 2.x server of `cargo xtask interop` (and of its fleet
case): a small MCPServer (the official `mcp` 2.x SDK's FastMCP, renamed)
with a tool that adds, a tool that reports progress, a resource and a
prompt.

Usage: mcpserver.py MODE [PORT]   (HTTP modes bind 127.0.0.1 only)

  stdio            stdin/stdout
  http-stateful    Streamable HTTP at /mcp with sessions, SSE responses
  http-stateless   Streamable HTTP at /mcp, no sessions
  http-json        Streamable HTTP at /mcp with sessions, JSON responses
  sse              the legacy HTTP+SSE transport (GET /sse, POST /messages/)
"""

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("mcpwire-interop")


@server.tool()
def add(a: float, b: float) -> float:
    """Adds two numbers."""
    return a + b


@server.tool()
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress at each step."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps)
    return f"counted to {steps}"


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
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if mode == "stdio":
        server.run("stdio")
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=port)
    elif mode in ("http-stateful", "http-stateless", "http-json"):
        server.run(
            "streamable-http",
            host="127.0.0.1",
            port=port,
            stateless_http=mode == "http-stateless",
            json_response=mode == "http-json",
        )
    else:
        sys.exit(f"unknown mode {mode}")
