"""The fastmcp server of `cargo xtask interop`: a tool that adds, a tool that
reports progress, a resource and a prompt.

Usage: fastmcp_server.py MODE [PORT]   (HTTP modes bind 127.0.0.1 only)

  stdio            stdin/stdout
  http-stateful    Streamable HTTP at /mcp with sessions, SSE responses
  http-stateless   Streamable HTTP at /mcp, no sessions
  http-json        Streamable HTTP at /mcp with sessions, JSON responses
  sse              the legacy HTTP+SSE transport (GET /sse, POST /messages/)
"""

import sys

from fastmcp import Context, FastMCP

server = FastMCP("mcpwire-interop-fastmcp")


@server.tool
def add(a: float, b: float) -> float:
    """Adds two numbers."""
    return a + b


@server.tool
async def count(steps: int, ctx: Context) -> str:
    """Counts to `steps`, reporting progress at each step."""
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps)
    return f"counted to {steps}"


@server.resource("interop://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from fastmcp"


@server.prompt
def review(code: str) -> str:
    """Asks for a review of `code`."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    mode = sys.argv[1]
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if mode == "stdio":
        server.run("stdio", show_banner=False)
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=port, show_banner=False)
    elif mode in ("http-stateful", "http-stateless", "http-json"):
        server.run(
            "http",
            host="127.0.0.1",
            port=port,
            path="/mcp",
            stateless_http=mode == "http-stateless",
            json_response=mode == "http-json",
            show_banner=False,
        )
    else:
        sys.exit(f"unknown mode {mode}")
