// The TypeScript SDK 2.x server of `cargo xtask interop`
// (`@modelcontextprotocol/server`, with `@modelcontextprotocol/node` for
// Node's http module): a tool that adds, a tool that reports progress, a
// resource and a prompt.
//
// Usage: node ts_sdk2_server.cjs MODE [PORT]   (HTTP binds 127.0.0.1 only)
//
//   stdio                `serveStdio`: the 2026-07-28 revision, and the 2025
//                        handshake for clients that send `initialize`
//   http-stateless       `createMcpHandler` at /mcp: per-request serving,
//                        each response JSON unless the handler sends
//                        something first (then SSE); 2025 traffic served
//                        statelessly
//   http-stateless-sse   the same, every response an SSE stream
//   http-stateless-json  the same, every response JSON (progress dropped)
//   http-stateful        `NodeStreamableHTTPServerTransport` at /mcp with
//                        sessions, SSE responses
//   http-stateful-json   the same with JSON responses
//
// CommonJS, so `NODE_PATH` (set by xtask to the installed node_modules) finds
// the SDK from this directory.

const http = require('node:http');
const { randomUUID } = require('node:crypto');
const z = require('zod');
const { McpServer, createMcpHandler } = require('@modelcontextprotocol/server');
const { serveStdio } = require('@modelcontextprotocol/server/stdio');
const { NodeStreamableHTTPServerTransport, toNodeHandler } = require('@modelcontextprotocol/node');

function newServer() {
  const server = new McpServer({ name: 'mcpwire-interop-ts-sdk2', version: '2.0.0' });
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: z.object({ a: z.number(), b: z.number() }) },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'count',
    {
      description: 'Counts to `steps`, reporting progress at each step.',
      inputSchema: z.object({ steps: z.number().int() }),
    },
    async ({ steps }, ctx) => {
      const token = ctx.mcpReq._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (token !== undefined) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken: token, progress: i, total: steps },
          });
        }
      }
      return { content: [{ type: 'text', text: `counted to ${steps}` }] };
    },
  );
  server.registerResource(
    'greeting',
    'interop://greeting',
    { description: 'A fixed greeting.', mimeType: 'text/plain' },
    async (uri) => ({ contents: [{ uri: uri.href, text: 'hello from the TypeScript SDK 2.x' }] }),
  );
  server.registerPrompt(
    'review',
    { description: 'Asks for a review of `code`.', argsSchema: z.object({ code: z.string() }) },
    ({ code }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Please review:\n${code}` } }],
    }),
  );
  return server;
}

function listen(handler) {
  const port = Number(process.argv[3]);
  http.createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((e) => {
      console.error(e);
      if (!res.headersSent) res.writeHead(500).end();
    });
  }).listen(port, '127.0.0.1');
}

const mode = process.argv[2];
const stateless = { 'http-stateless': 'auto', 'http-stateless-sse': 'sse', 'http-stateless-json': 'json' };
if (mode === 'stdio') {
  serveStdio(() => newServer());
} else if (mode in stateless) {
  const handler = createMcpHandler(() => newServer(), {
    responseMode: stateless[mode],
    onerror: (e) => console.error(e),
  });
  listen(toNodeHandler(handler));
} else if (mode === 'http-stateful' || mode === 'http-stateful-json') {
  const sessions = new Map();
  listen(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    let transport = id && sessions.get(id);
    if (!transport) {
      if (req.method !== 'POST' || id) {
        res.writeHead(id ? 404 : 400).end();
        return;
      }
      transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: mode === 'http-stateful-json',
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
