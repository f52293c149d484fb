"""A real MCP client for `mcpwire serve`'s relay of server requests: the
official Python SDK spawns the command given on the command line over
stdio, with a `sampling_callback` unless the first argument is `none`,
calls `up__ask`, and prints what it saw as one JSON object on stdout (the
call's text, or its error, and the sampling requests it was asked). The test asserts on
that object; this script asserts nothing itself."""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


async def main():
    mode, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    asked = []

    async def sampling(context, params):
        asked.append([m.content.text for m in params.messages])
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="forty-two"),
            model="python-callback",
        )

    callback = sampling if mode == "sampling" else None
    params = StdioServerParameters(command=command, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, sampling_callback=callback) as session:
            await session.initialize()
            try:
                result = await session.call_tool("up__ask", {"question": "the answer?"})
                text = [c.text for c in result.content if c.type == "text"]
            except Exception as e:  # the SDK's McpError / MCPError
                text = [f"error: {e}"]
    print(json.dumps({"text": text, "asked": asked}))


anyio.run(main)
