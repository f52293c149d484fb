"""A real MCP client of the stateless revision for `mcpwire serve`'s tests:
the official Python SDK 2.x's `Client` in its default mode (it probes with
`server/discover` and stays stateless when answered) either spawns the
command given on the command line over stdio (`stdio CMD ARGS...`) or
reaches a Streamable HTTP endpoint with a bearer token (`http URL TOKEN`),
lists the tools, calls one tool of each server (and `slow` with a progress
callback), and prints what it saw as one JSON object on stdout. The test
asserts on that object; this script asserts nothing itself."""

import json
import sys

import anyio
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def dump(model):
    """A result as the wire has it (camelCase)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def main():
    if sys.argv[1] == "http":
        url, token = sys.argv[2], sys.argv[3]
        headers = {"Authorization": f"Bearer {token}"}
        async with create_mcp_http_client(headers=headers) as http:
            report = await use(streamable_http_client(url, http_client=http))
    else:
        report = await use(StdioServerParameters(command=sys.argv[2], args=sys.argv[3:]))
    print(json.dumps(report))


async def use(server):
    report = {}
    async with Client(server) as client:
        report["protocolVersion"] = client.protocol_version
        info = client.server_info
        report["serverInfo"] = info.name if info else None
        tools = dump(await client.list_tools())
        report["tools"] = sorted(t["name"] for t in tools["tools"])
        report["calls"] = {}
        for name, args in [
            ("one__echo", {"message": "hi"}),
            ("two__add", {"a": 2, "b": 3}),
            ("three__echo", {"message": "third"}),
        ]:
            result = dump(await client.call_tool(name, args))
            report["calls"][name] = [c.get("text") for c in result["content"]]
        progress = []

        async def on_progress(done, total, message):
            progress.append([done, total, message])

        result = dump(
            await client.call_tool(
                "two__slow",
                {"steps": 3, "delay_ms": 10},
                progress_callback=on_progress,
            )
        )
        report["slow"] = [c.get("text") for c in result["content"]]
        report["progress"] = progress
        try:
            await client.call_tool("nobody__nothing", {})
            report["unknown"] = "no error"
        except Exception as e:  # the SDK's MCPError
            report["unknown"] = str(e)
    return report


anyio.run(main)
