"""argv: ROUNDS HLYR... Against one running daemon holding a session, runs bench-hello and
`HLYR sessions --json` for each binary 100 times each round, alternating, and prints the
median wall times and their ratios to hello."""
import os
import statistics
import subprocess
import sys
import tempfile
import time

B = os.path.abspath("target/release")
d = tempfile.mkdtemp()
daemon = subprocess.Popen([B + "/hld", "--socket", d + "/s", "--database", d + "/db", "--log-file", d + "/log",
                           "--claude-path", B + "/fake-claude"])
while not os.path.exists(d + "/s"):
    time.sleep(0.05)
subprocess.run(["python3", os.path.join(os.path.dirname(__file__), "launch.py"), d + "/s"], stdout=subprocess.DEVNULL)
time.sleep(1.5)
env = dict(os.environ, HUMANLAYER_DAEMON_SOCKET=d + "/s")
commands = {"hello": [B + "/bench-hello"]}
for i, hlyr in enumerate(sys.argv[2:]):
    commands[f"{i}:{os.path.basename(hlyr)}"] = [hlyr, "sessions", "--json"]
for _ in range(int(sys.argv[1])):
    times = {name: [] for name in commands}
    for _ in range(100):
        for name, command in commands.items():
            started = time.perf_counter()
            subprocess.run(command, env=env, stdout=subprocess.PIPE)
            times[name].append(time.perf_counter() - started)
    medians = {name: statistics.median(t) * 1e3 for name, t in times.items()}
    print(" ".join(f"{name}={ms:.2f}ms ({ms / medians['hello']:.2f}x)" for name, ms in medians.items()), flush=True)
daemon.terminate()
