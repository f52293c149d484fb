"""An upstream MCP server on the official Python SDK for `mcpwire serve`'s
relay tests. Its tool `ask` asks its client for a model's answer
(`sampling/createMessage`) while the call runs, and answers the call with
what came back.

Under mcp 1.x (FastMCP, the 2025 revisions) it asks with
`ctx.session.create_message`: a request of the server's own, sent mid-call.
Under mcp 2.x (`MCPServer`, which also speaks the stateless 2026-07-28
revision, where a server sends no requests of its own) it asks with the
`Sample` resolver: a standalone request in the 2025 revisions, an input
request of the call's result in the stateless one."""

from typing import Annotated

from mcp import types


def message(question):
    return [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=question))]


def said(result):
    return f"the model ({result.model}) said: {result.content.text}"


try:
    from mcp.server.fastmcp import Context, FastMCP
except ModuleNotFoundError:
    from mcp.server.mcpserver import MCPServer, Resolve, Sample

    server = MCPServer("sampling-upstream")

    def sample(question: str) -> Sample:
        return Sample(message(question), max_tokens=20)

    @server.tool()
    async def ask(question: str, answer: Annotated[types.CreateMessageResult, Resolve(sample)]) -> str:
        """Asks the client's model `question` and says what it answered."""
        return said(answer)

else:
    server = FastMCP("sampling-upstream")

    @server.tool()
    async def ask(question: str, ctx: Context) -> str:
        """Asks the client's model `question` and says what it answered."""
        try:
            result = await ctx.session.create_message(messages=message(question), max_tokens=20)
        except Exception as e:  # the SDK's McpError: the client refused
            return f"refused: {e}"
        return said(result)


server.run()
