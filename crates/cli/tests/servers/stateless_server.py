"""A server of the stateless revision (2026-07-28) for the CLI's tests,
standard library only: `stdio`, or `http` (prints its port, binds
127.0.0.1). It has no `ping` and no `logging/setLevel` (that revision has
neither), and over HTTP it refuses a request whose MCP-Protocol-Version and
Mcp-Method headers do not match its body, as the SDKs of that revision do.
Each method it receives is appended to the file named by $SEEN_LOG, if set."""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

VERSION = "2026-07-28"


def note(method):
    path = os.environ.get("SEEN_LOG")
    if path:
        with open(path, "a") as f:
            f.write(f"{method}\n")


def answer(msg):
    """The response to one request (None for a notification)."""
    method = msg.get("method")
    note(method)
    if "id" not in msg:
        return None
    if method == "server/discover":
        result = {
            "resultType": "complete",
            "supportedVersions": [VERSION],
            "capabilities": {"tools": {}, "logging": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "stateless-py", "version": "1"}},
        }
    elif method == "tools/list":
        result = {"resultType": "complete", "tools": [
            {"name": "add", "inputSchema": {"type": "object", "properties": {
                "a": {"type": "number"}, "b": {"type": "number"}}}}]}
    elif method == "tools/call":
        args = msg["params"].get("arguments", {})
        total = args.get("a", 0) + args.get("b", 0)
        result = {"resultType": "complete", "content": [{"type": "text", "text": str(total)}]}
        # Log messages only for a request that asks for them, at or above
        # the level it names (the stateless revision has no setLevel).
        level = msg["params"].get("_meta", {}).get("io.modelcontextprotocol/logLevel")
        if level in ("debug", "info"):
            log = {"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "info", "data": f"adding {args.get('a')} and {args.get('b')}"}}
            print(json.dumps(log), flush=True)
    else:
        return {"jsonrpc": "2.0", "id": msg["id"],
                "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode() if body is not None else b""
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        version = self.headers.get("MCP-Protocol-Version")
        method = self.headers.get("Mcp-Method")
        if "method" in msg and (version != VERSION or method != msg["method"]):
            note(f"refused {msg.get('method')}")
            return self.reply(400, {"jsonrpc": "2.0", "id": msg.get("id"), "error": {
                "code": -32600,
                "message": f"header MCP-Protocol-Version {version!r} / Mcp-Method {method!r} "
                           f"do not match the body"}})
        out = answer(msg)
        self.reply(200 if out else 202, out)

    def do_GET(self):
        self.reply(405, None)

    def do_DELETE(self):
        self.reply(405, None)


def main():
    print("stateless-py: starting", file=sys.stderr, flush=True)
    if sys.argv[1:] == ["http"]:
        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print(server.server_address[1], flush=True)
        server.serve_forever()
    for line in sys.stdin:
        out = answer(json.loads(line))
        if out is not None:
            print(json.dumps(out), flush=True)


main()
