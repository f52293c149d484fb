"""A stdio MCP server for the CLI's pin tests, standard library only. It
lists the tools and prompts of the JSON file named by its first argument
({"tools": [...], "prompts": [...]}), read again at every listing, so a
test changes what it lists between runs (a "rug pull") by rewriting that
file. A call of any tool answers with the tool's name and arguments."""

import json
import sys


def listing(path):
    with open(path) as f:
        return json.load(f)


def answer(msg, path):
    """The response to one request (None for a notification)."""
    method = msg.get("method")
    if "id" not in msg:
        return None
    if method == "initialize":
        result = {
            "protocolVersion": msg["params"]["protocolVersion"],
            "capabilities": {"tools": {}, "prompts": {}, "resources": {}},
            "serverInfo": {"name": "pinned-py", "version": "1"},
        }
    elif method == "tools/list":
        result = {"tools": listing(path).get("tools", [])}
    elif method == "prompts/list":
        result = {"prompts": listing(path).get("prompts", [])}
    elif method == "resources/list":
        result = {"resources": [{"uri": "pinned://readme", "name": "readme"}]}
    elif method == "prompts/get":
        name = msg["params"]["name"]
        result = {"messages": [{"role": "user", "content": {"type": "text", "text": f"prompt {name}"}}]}
    elif method == "tools/call":
        params = msg["params"]
        text = f"called {params['name']} with {json.dumps(params.get('arguments', {}), sort_keys=True)}"
        result = {"content": [{"type": "text", "text": text}]}
    elif method == "ping":
        result = {}
    else:
        return {"jsonrpc": "2.0", "id": msg["id"],
                "error": {"code": -32601, "message": f"Method not found: {method}"}}
    return {"jsonrpc": "2.0", "id": msg["id"], "result": result}


def main():
    path = sys.argv[1]
    for line in sys.stdin:
        out = answer(json.loads(line), path)
        if out is not None:
            print(json.dumps(out), flush=True)


main()
