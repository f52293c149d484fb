"""A small server built with the official Python SDK (mcp 2.x `MCPServer`,
formerly FastMCP), used by mcpwire's real-server tests over stdio and Streamable HTTP."""

import asyncio
import sys

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("mcpwire-python-fixture")


class Sum(BaseModel):
    sum: float


@server.tool()
def add(a: float, b: float) -> Sum:
    """Adds two numbers."""
    return Sum(sum=a + b)


@server.tool()
def echo(message: str) -> str:
    """Returns its message."""
    return message


@server.tool()
async def slow(steps: int, ctx: Context) -> str:
    """Reports progress for each step, logging as it goes."""
    for i in range(1, steps + 1):
        await asyncio.sleep(0.05)
        await ctx.report_progress(i, steps, f"step {i}")
    await ctx.info(f"slow finished {steps} steps")
    return f"done {steps}"


@server.resource("fixture://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from python"


@server.prompt()
def review(code: str) -> str:
    """Asks for a code review."""
    return f"Please review:\n{code}"


@server.tool()
async def touch(ctx: Context) -> str:
    """Announces a change of the tool list and of the greeting (delivered on
    `subscriptions/listen` streams in the 2026-07-28 era)."""
    await ctx.notify_tools_changed()
    await ctx.notify_resource_updated("fixture://greeting")
    return "touched"


if __name__ == "__main__":
    # `mcpserver_script.py` (stdio), or `mcpserver_script.py streamable-http
    # PORT` (endpoint /mcp, bound to 127.0.0.1).
    if len(sys.argv) > 2:
        server.run(sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
