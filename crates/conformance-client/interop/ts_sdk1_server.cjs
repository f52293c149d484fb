// The TypeScript SDK 1.x server of `cargo xtask interop`
// (`@modelcontextprotocol/sdk`): a tool that adds, a tool that reports
// progress, a resource and a prompt.
//
// Usage: node ts_sdk1_server.cjs MODE [PORT]   (HTTP binds 127.0.0.1 only)
//
//   stdio                stdin/stdout
//   http-stateful        Streamable HTTP at /mcp with sessions, SSE responses
//   http-stateful-json   the same with JSON responses
//   http-stateless       Streamable HTTP at /mcp, no sessions, SSE responses
//   http-stateless-json  the same with JSON responses
//   sse                  the legacy HTTP+SSE transport (GET /sse, POST /messages)
//
// CommonJS, so `NODE_PATH` (set by xtask to the installed node_modules) finds
// the SDK from this directory.

const http = require('node:http');
const { randomUUID } = require('node:crypto');
const z = require('zod');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js');
const { SSEServerTransport } = require('@modelcontextprotocol/sdk/server/sse.js');

function newServer() {
  const server = new McpServer({ name: 'mcpwire-interop-ts-sdk1', version: '1.0.0' });
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'count',
    { description: 'Counts to `steps`, reporting progress at each step.', inputSchema: { steps: z.number().int() } },
    async ({ steps }, extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= steps; i++) {
        if (token !== undefined) {
          await extra.sendNotification({
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
    async (uri) => ({ contents: [{ uri: uri.href, text: 'hello from the TypeScript SDK 1.x' }] }),
  );
  server.registerPrompt(
    'review',
    { description: 'Asks for a review of `code`.', argsSchema: { code: z.string() } },
    ({ code }) => ({
      messages: [{ role: 'user', content: { type: 'text', text: `Please review:\n${code}` } }],
    }),
  );
  return server;
}

function listen(handler) {
  const port = Number(process.argv[3]);
  http.createServer((req, res) => {
    handler(req, res).catch((e) => {
      console.error(e);
      if (!res.headersSent) res.writeHead(500).end();
    });
  }).listen(port, '127.0.0.1');
}

const mode = process.argv[2];
const json = mode.endsWith('-json');
if (mode === 'stdio') {
  newServer().connect(new StdioServerTransport());
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
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableJsonResponse: json,
        onsessioninitialized: (sid) => sessions.set(sid, transport),
      });
      transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
      await newServer().connect(transport);
    }
    await transport.handleRequest(req, res);
  });
} else if (mode === 'http-stateless' || mode === 'http-stateless-json') {
  listen(async (req, res) => {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: json,
    });
    const server = newServer();
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
} else if (mode === 'sse') {
  const sessions = new Map();
  listen(async (req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === '/sse') {
      const transport = new SSEServerTransport('/messages', res);
      sessions.set(transport.sessionId, transport);
      res.on('close', () => sessions.delete(transport.sessionId));
      await newServer().connect(transport);
    } else if (req.method === 'POST' && url.pathname === '/messages') {
      const transport = sessions.get(url.searchParams.get('sessionId'));
      if (!transport) {
        res.writeHead(404).end();
        return;
      }
      await transport.handlePostMessage(req, res);
    } else {
      res.writeHead(404).end();
    }
  });
} else {
  console.error(`unknown mode ${mode}`);
  process.exit(2);
}
