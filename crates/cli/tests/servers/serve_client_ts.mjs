// A real MCP client for `mcpwire serve`'s tests: the official TypeScript
// SDK (its path is the first argument) either spawns the command that
// follows over stdio (`stdio CMD ARGS...`) or reaches a Streamable HTTP
// endpoint with a bearer token (`http URL TOKEN`), lists the tools, calls one tool of each server, then calls
// `three__wait` with a progress callback and aborts it at the first
// progress. It prints what it saw as one JSON object on stdout; the Rust
// test asserts on it.
import { pathToFileURL } from "node:url";

const [sdk, mode, ...rest] = process.argv.slice(2);
const load = (p) => import(pathToFileURL(`${sdk}/dist/esm/${p}`).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { LoggingMessageNotificationSchema } = await load("types.js");

const client = new Client({ name: "serve-test-ts", version: "1.0.0" });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push(n.params);
});
let transport;
if (mode === "http") {
  const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
  const [url, token] = rest;
  transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
} else {
  const [command, ...args] = rest;
  transport = new StdioClientTransport({ command, args, stderr: "inherit" });
}
await client.connect(transport);
const report = { serverInfo: client.getServerVersion()?.name };
report.tools = (await client.listTools()).tools.map((t) => t.name).sort();
report.calls = {};
for (const [name, args] of [
  ["one__echo", { message: "hi" }],
  ["two__add", { a: 2, b: 3 }],
]) {
  const result = await client.callTool({ name, arguments: args });
  report.calls[name] = result.content.map((c) => c.text);
}

const abort = new AbortController();
report.progress = [];
try {
  await client.callTool({ name: "three__wait", arguments: {} }, undefined, {
    signal: abort.signal,
    onprogress: (p) => {
      report.progress.push(p);
      abort.abort("enough");
    },
  });
  report.cancelled = "not cancelled";
} catch (e) {
  report.cancelled = String(e);
}
// The log message the upstream sent with the call, relayed.
for (let i = 0; i < 50 && logs.length === 0; i++) {
  await new Promise((r) => setTimeout(r, 20));
}
report.logs = logs;
// Still serving after the cancel.
report.after = (await client.callTool({ name: "one__echo", arguments: { message: "again" } }))
  .content.map((c) => c.text);
await client.close();
console.log(JSON.stringify(report));
