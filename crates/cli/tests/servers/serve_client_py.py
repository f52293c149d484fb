"""A real MCP client for `mcpwire serve`'s tests: the official Python SDK
(`mcp`, 1.x or 2.x) either spawns the command given on the command line
over stdio (`stdio CMD ARGS...`) or reaches a Streamable HTTP endpoint
with a bearer token (`http URL TOKEN`), lists the tools, calls one tool of each server (and `slow` with a
progress callback), and prints what it saw as one JSON object on stdout.
The test asserts on that object; this script asserts nothing itself."""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def dump(model):
    """A result as the wire has it (camelCase), in either SDK generation."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    if sys.argv[1] == "http":
        url, token = sys.argv[2], sys.argv[3]
        headers = {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                report = await use(streams[0], streams[1])
    else:
        params = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
        async with stdio_client(params) as (read, write):
            report = await use(read, write)
    print(json.dumps(report))


async def use(read, write):
    report = {}
    async with ClientSession(read, write) as session:
        init = dump(await session.initialize())
        report["protocolVersion"] = init["protocolVersion"]
        report["serverInfo"] = init["serverInfo"]["name"]
        tools = dump(await session.list_tools())
        report["tools"] = sorted(t["name"] for t in tools["tools"])
        report["calls"] = {}
        for name, args in [
            ("one__echo", {"message": "hi"}),
            ("two__add", {"a": 2, "b": 3}),
            ("three__echo", {"message": "third"}),
        ]:
            result = dump(await session.call_tool(name, args))
            report["calls"][name] = [c.get("text") for c in result["content"]]
        progress = []

        async def on_progress(done, total, message):
            progress.append([done, total, message])

        result = dump(
            await session.call_tool(
                "two__slow",
                {"steps": 3, "delay_ms": 10},
                progress_callback=on_progress,
            )
        )
        report["slow"] = [c.get("text") for c in result["content"]]
        report["progress"] = progress
        try:
            await session.call_tool("nobody__nothing", {})
            report["unknown"] = "no error"
        except Exception as e:  # the SDK's McpError / MCPError
            report["unknown"] = str(e)
    return report


anyio.run(main)
