"""argv: SOCKET SESSION [N]. Sends N (3000) createApproval calls one after another on one
connection and prints the mean round trip in microseconds."""
import json
import socket
import sys
import time

s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
replies = s.makefile("rb")
n = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
started = time.perf_counter()
for i in range(n):
    params = {"session_id": sys.argv[2], "tool_name": "Bench", "tool_input": {"seq": i}}
    s.sendall(json.dumps({"jsonrpc": "2.0", "method": "createApproval", "params": params, "id": i}).encode() + b"\n")
    replies.readline()
print(round((time.perf_counter() - started) / n * 1e6))
