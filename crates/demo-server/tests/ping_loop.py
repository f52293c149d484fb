"""Sequential pings against an MCP server over stdio, each answer awaited
(bounded) before the next request: the reproduction of issue 18, where an
answer could sit unsent until the next request arrived.

Usage: python3 ping_loop.py SERVER [COUNT]. Standard library only. Prints
"ok COUNT" and exits 0 when every answer came; on a stall prints where,
whether a probe request pushed the late answer out, and exits 1.
"""
import json
import os
import select
import subprocess
import sys

TIMEOUT = 10.0

server = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
p = subprocess.Popen([server], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
buf = b""


def send(message):
    p.stdin.write((json.dumps(message) + "\n").encode())
    p.stdin.flush()


def recv(timeout=TIMEOUT):
    global buf
    while b"\n" not in buf:
        if not select.select([p.stdout], [], [], timeout)[0]:
            return None
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            sys.exit("the server closed its stdout")
        buf += chunk
    line, _, buf = buf.partition(b"\n")
    return json.loads(line)


def main():
    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "ping_loop.py", "version": "0"}}})
    if recv() is None:
        print("no answer to initialize")
        return 1
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(1, count + 1):
        send({"jsonrpc": "2.0", "id": i, "method": "ping"})
        answer = recv()
        if answer is None:
            print("HANG at ping", i, "of", count)
            send({"jsonrpc": "2.0", "id": "probe", "method": "ping"})
            print("after a probe request:", recv())
            return 1
        if answer.get("id") != i or "result" not in answer:
            print("unexpected answer to ping", i, ":", answer)
            return 1
    print("ok", count)
    return 0


try:
    code = main()
finally:
    p.kill()
    p.wait()
sys.exit(code)
