"""An upstream MCP server (2025 era, stdio, standard library only) for
`mcpwire serve`'s relay tests. Its one tool, `wait`, sends one progress
notification under the call's token and then never answers; a
`notifications/cancelled` it receives is appended to the file named by
$SEEN_LOG as `cancelled <requestId>`, so a test can see that a client's
cancel reached the server behind `serve`. It also sends one log message
when the tool is called."""

import json
import os
import sys


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def note(line):
    path = os.environ.get("SEEN_LOG")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    params = msg.get("params") or {}
    if method == "notifications/cancelled":
        note(f"cancelled {params.get('requestId')}")
        continue
    if mid is None or method is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": "2025-06-18",
            "capabilities": {"tools": {}, "logging": {}},
            "serverInfo": {"name": "slow-upstream", "version": "1.0.0"},
        }
    elif method == "tools/list":
        result = {"tools": [{"name": "wait", "description": "Waits until cancelled.",
                             "inputSchema": {"type": "object"}}]}
    elif method in ("ping", "logging/setLevel"):
        result = {}
    elif method == "tools/call":
        note(f"call {params.get('name')}")
        send({"jsonrpc": "2.0", "method": "notifications/message",
              "params": {"level": "warning", "logger": "waiter", "data": "waiting for ever"}})
        token = (params.get("_meta") or {}).get("progressToken")
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": 1, "message": "started"}})
        continue
    else:
        send({"jsonrpc": "2.0", "id": mid,
              "error": {"code": -32601, "message": f"method not found: {method}"}})
        continue
    send({"jsonrpc": "2.0", "id": mid, "result": result})
