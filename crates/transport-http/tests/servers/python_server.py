"""A small MCP server on the official Python SDK, for mcpwire's HTTP tests.

Usage: python_server.py MODE PORT, where MODE is one of
  sse        the legacy HTTP+SSE transport (GET /sse, POST /messages/)
  stateful   Streamable HTTP at /mcp, SSE answers, with sessions
  json       Streamable HTTP at /mcp, JSON answers, with sessions
  stateless  Streamable HTTP at /mcp, JSON answers, no sessions
It always binds 127.0.0.1.
"""

import sys

from mcp.server.mcpserver import MCPServer

mode, port = sys.argv[1], int(sys.argv[2])
server = MCPServer("mcpwire-test")


@server.tool()
def echo(text: str) -> str:
    """Returns its argument."""
    return text


if mode == "sse":
    server.run("sse", host="127.0.0.1", port=port)
else:
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=port,
        json_response=mode in ("json", "stateless"),
        stateless_http=mode == "stateless",
    )
