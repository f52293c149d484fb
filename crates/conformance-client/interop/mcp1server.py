"""The Python SDK 1.x server of `cargo xtask interop`: the `mcp` 1.x line's
FastMCP with a tool that reports progress, a resource and a prompt.

Usage: mcp1server.py MODE [PORT]   (HTTP modes bind 127.0.0.1 only)

  stdio            stdin/stdout
  http-stateful    Streamable HTTP at /mcp with sessions, SSE responses
  http-stateless   Streamable HTTP at /mcp, no sessions
  http-json        Streamable HTTP at /mcp with sessions, JSON responses
  sse              the legacy HTTP+SSE transport (GET /sse, POST /messages/)
"""

import sys

from mcp.server.fastmcp import Context, FastMCP

mode = sys.argv[1]
port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
server = FastMCP(
    "mcpwire-interop-mcp1",
    host="127.0.0.1",
    port=port,
    stateless_http=mode == "http-stateless",
    json_response=mode == "http-json",
)


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
    return "hello from the Python SDK 1.x"


@server.prompt()
def review(code: str) -> str:
    """Asks for a review of `code`."""
    return f"Please review:\n{code}"


TRANSPORTS = {
    "stdio": "stdio",
    "http-stateful": "streamable-http",
    "http-stateless": "streamable-http",
    "http-json": "streamable-http",
    "sse": "sse",
}
if mode not in TRANSPORTS:
    sys.exit(f"unknown mode {mode}; one of {', '.join(TRANSPORTS)}")
server.run(TRANSPORTS[mode])
