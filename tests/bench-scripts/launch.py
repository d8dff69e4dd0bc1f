"""Launches a session on the daemon at argv[1] and prints its id."""
import json
import socket
import sys

s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b'{"jsonrpc":"2.0","method":"launchSession","params":{"query":"hello","working_dir":"/tmp"},"id":1}\n')
print(json.loads(s.makefile().readline())["result"]["session_id"])
