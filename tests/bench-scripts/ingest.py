"""argv: ROUNDS HLD... Runs the harness's ingest steps (the fake agent streaming 100k lines)
against each daemon binary in turn, ROUNDS times, and prints stored events/s and the CPU
ticks of each daemon thread."""
import json
import os
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

B = os.path.abspath("target/release")


def run(hld):
    d = tempfile.mkdtemp()
    env = dict(os.environ, FAKE_CLAUDE_COUNT="100000")
    p = subprocess.Popen([hld, "--socket", d + "/h.sock", "--database", d + "/db", "--log-file", d + "/log",
                          "--claude-path", B + "/fake-claude"], env=env)
    while not os.path.exists(d + "/h.sock"):
        time.sleep(0.05)
    time.sleep(0.3)
    sub = socket.socket(socket.AF_UNIX)
    sub.connect(d + "/h.sock")
    events = sub.makefile("rb")
    sub.sendall(b'{"jsonrpc":"2.0","method":"Subscribe","params":{"event_types":["session_status_changed"]},"id":1}\n')
    events.readline()
    s = socket.socket(socket.AF_UNIX)
    s.connect(d + "/h.sock")
    started = time.perf_counter()
    s.sendall(json.dumps({"jsonrpc": "2.0", "method": "launchSession",
                          "params": {"query": "scenario:many", "working_dir": d}, "id": 2}).encode() + b"\n")
    sid = json.loads(s.makefile("rb").readline())["result"]["session_id"]
    while True:
        data = json.loads(events.readline())["result"]["event"]["data"]
        if data.get("session_id") == sid and data.get("new_status") in ("completed", "failed"):
            break
    took = time.perf_counter() - started
    ticks = {}
    for tid in os.listdir(f"/proc/{p.pid}/task"):
        comm = open(f"/proc/{p.pid}/task/{tid}/comm").read().strip()
        stat = open(f"/proc/{p.pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        ticks[comm] = ticks.get(comm, 0) + int(stat[11]) + int(stat[12])
    stored = sqlite3.connect(d + "/db").execute(
        "SELECT COUNT(*) FROM conversation_events WHERE session_id = ?", (sid,)).fetchone()[0]
    p.terminate()
    p.wait()
    print(os.path.basename(hld), f"{stored / took / 1000:.1f}k events/s", ticks, flush=True)


for _ in range(int(sys.argv[1])):
    for hld in sys.argv[2:]:
        run(hld)
