"""The daemon's peak memory under clients that never read: twenty clients each pipeline six
getConversation calls for a 20 MB conversation and never read the replies; the daemon's peak
RSS (VmHWM) is printed. Run from the workspace root after
`cargo build --release --bin hld --bin fake-claude`:

    python3 tests/scripts/budget_rss.py [extra hld flags, e.g. --max-buffered 134217728]
"""
import json, os, shutil, socket, subprocess, sys, tempfile, time
d = tempfile.mkdtemp(prefix="hld-rss-")
sock = os.path.join(d, "hld.sock")
env = dict(os.environ, FAKE_CLAUDE_BIG_BYTES="20000000", HOME=d)
args = ["target/release/hld", "--socket", sock, "--database", os.path.join(d, "hld.db"),
        "--claude-path", "target/release/fake-claude", "--log-file", os.path.join(d, "hld.log")] + sys.argv[1:]
def start():
    p = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        if os.path.exists(sock):
            return p
        time.sleep(0.05)
    sys.exit("no socket")
def call(method, params):
    s = socket.socket(socket.AF_UNIX); s.connect(sock)
    s.sendall((json.dumps({"jsonrpc": "2.0", "method": method, "params": params, "id": 1}) + "\n").encode())
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = s.recv(1 << 20)
        if not chunk: break
        buf += chunk
    s.close()
    return json.loads(buf)
def status(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) // 1024
p = start()
sid = call("launchSession", {"query": "scenario:big", "working_dir": d})["result"]["session_id"]
while call("getSessionState", {"session_id": sid})["result"]["session"]["status"] not in ("completed", "failed"):
    time.sleep(0.2)
p.terminate(); p.wait()
p = start()
size = len(json.dumps(call("getConversation", {"session_id": sid})))
before = status(p.pid, "VmRSS")
req = "".join(json.dumps({"jsonrpc": "2.0", "method": "getConversation", "params": {"session_id": sid}, "id": i}) + "\n" for i in range(6)).encode()
clients = []
for _ in range(20):
    s = socket.socket(socket.AF_UNIX); s.connect(sock); s.sendall(req); clients.append(s)
# The daemon says when the budget is full; replies being built then finish within seconds.
log = os.path.join(d, "hld.log")
deadline = time.time() + 60
while "buffer budget (--max-buffered) is full" not in open(log).read() and time.time() < deadline:
    time.sleep(0.2)
time.sleep(5)
peak_during = status(p.pid, "VmHWM")
for s in clients: s.close()
ok = call("health", {})["result"]["status"]
time.sleep(1)
print(f"reply {size/1e6:.1f} MB; RSS before {before} MiB; peak {status(p.pid, 'VmHWM')} MiB (once full: {peak_during}); after {status(p.pid, 'VmRSS')} MiB; health {ok}")
p.terminate(); p.wait()
shutil.rmtree(d)
