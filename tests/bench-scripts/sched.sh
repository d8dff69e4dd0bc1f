#!/usr/bin/env bash
# usage: sched.sh HLD [SUBS EVENTS] — what the daemon's threads do to each other during the
# harness's fan-out load (SUBS subscribers, 100 by default; EVENTS `createApproval` events,
# 300; one in flight, or RATE events/s from 8 publishers when RATE is set; PIN=1 runs daemon
# and client on CPU 0). Traced with `perf record` on the scheduler's and the syscalls'
# tracepoints (the daemon's threads; with PIN=1, everything that ran on CPU 0): which threads
# took the CPU from the daemon's main thread while it could run, how many times each; the
# `fsync`s (and `fdatasync`s) each daemon thread made, each with its descriptor, when it
# began (ms after the first event was sent) and how long it took (with PIN=1, and how much of
# that its thread spent on the CPU, writing pages out, rather than waiting for the disk); the
# slowest events (index, sent at in ms on the same scale, latency in µs; with PIN=1, how CPU
# 0's time went while each was in flight, by thread); and the WAL's largest size.
set -euo pipefail
B=$PWD/target/release
HLD=$(realpath "$1")
SUBS=${2:-100}
EVENTS=${3:-300}
ON=()
[ -n "${PIN:-}" ] && ON=(taskset -c 0)
PACED=()
[ -n "${RATE:-}" ] && PACED=(--rate "$RATE" --publishers 8)
D=$(mktemp -d)
mkdir "$D/config"
HOME=$D XDG_CONFIG_HOME=$D/config FAKE_CLAUDE_HOME=$D/fc FAKE_CLAUDE_LOG_DIR=$D/fl \
  "${ON[@]}" "$HLD" --socket "$D/s" --database "$D/db" --log-file "$D/log" \
  --claude-path "$B/fake-claude" >/dev/null 2>&1 &
P=$!
# The daemon goes, and its directory, however the script ends.
trap 'kill $P 2>/dev/null || true; rm -rf "$D"' EXIT
WHAT=(-p "$P")
[ -n "${PIN:-}" ] && WHAT=(-C 0)
while [ ! -S "$D/s" ]; do sleep 0.05; done
S=$(python3 "$(dirname "$0")/launch.py" "$D/s")
sleep 2
perf record -k CLOCK_MONOTONIC -e sched:sched_switch -e syscalls:sys_enter_fsync \
  -e syscalls:sys_exit_fsync -e syscalls:sys_enter_fdatasync -e syscalls:sys_exit_fdatasync \
  "${WHAT[@]}" -o "$D/perf.data" \
  >/dev/null 2>&1 &
T=$!
# The WAL's size, sampled off CPU 0 when that is the one traced.
OFF=()
[ -n "${PIN:-}" ] && OFF=(taskset -c 1)
"${OFF[@]}" bash -c 'while kill -0 $0 2>/dev/null; do stat -c %s "$1" 2>/dev/null || true; sleep 0.1; done' \
  $P "$D/db-wal" >"$D/wal" &
W=$!
sleep 0.5
"${ON[@]}" "$B/hld-bench" client fanout --sock "$D/s" --subs "$SUBS" --events "$EVENTS" \
  --session "$S" "${PACED[@]}" --events-out "$D/events" >"$D/out"
kill -INT $T
# Read after the run: a pipe would start python3 (and pyenv's shims) beside the client.
python3 -c 'import json,sys; l=json.load(sys.stdin)["latency"]; print("p50 %.0f p99 %.0f max %.0f µs" % (l["p50_us"], l["p99_us"], l["max_us"]))' <"$D/out"
wait $T 2>/dev/null || true
perf script -i "$D/perf.data" -F tid,time,event,trace 2>/dev/null >"$D/trace"
echo "main thread switched out while runnable, for:"
grep "prev_pid=$P .*prev_state=R" "$D/trace" | grep -o 'next_comm=[^ ]*' | sort | uniq -c |
  sed 's/next_comm=//'
echo "fsyncs by thread:"
{ grep -E 'sys_enter_f(data)?sync' "$D/trace" || true; } | awk '{print $1}' | sort | uniq -c | while read -r n tid; do
  [ -e "/proc/$P/task/$tid" ] && echo "  $n $(cat "/proc/$P/task/$tid/comm")"
done
python3 - "$D/trace" "$D/events" "$P" "${PIN:-}" <<'PY'
import os, re, sys
trace, events, pid, pinned = sys.argv[1], sys.argv[2], sys.argv[3], bool(sys.argv[4])
ours = set(os.listdir("/proc/%s/task" % pid))
events = [list(map(int, l.split())) for l in open(events)]
t0 = events[0][5] / 1000  # the first event's send, ms on CLOCK_MONOTONIC
rows = [l.split(None, 3) for l in open(trace)]
at = lambda r: float(r[1].rstrip(":")) * 1000 - t0
# With PIN=1 the trace holds every switch on CPU 0: who ran on it, from when to when.
runs, on = [], None
switch = re.compile(r"prev_comm=(.+?) prev_pid=\d+ .*==> next_comm=(.+?) next_pid=(\d+)")
for r in rows:
    if "sched_switch" in r[2] and len(r) > 3:
        m = switch.search(r[3])
        if on:
            runs.append((on[0], at(r), on[1], on[2]))
        on = (at(r), m[2], m[3])
def cpu0(a, b, tid=None):
    """CPU 0's time (ms) between a and b, by thread name (another process's with its
    thread id), or of one thread."""
    by = {}
    for s, e, name, t in runs:
        d = min(b, e) - max(a, s)
        if d > 0 and (tid is None or t == tid):
            if name.startswith("swapper"):
                name = "idle"
            elif t not in ours and name != "hld-bench":
                name = "%s/%s" % (name, t)
            by[name] = by.get(name, 0) + d
    return by
print("fsyncs (thread, descriptor, began ms, took ms%s), and the slowest events:" %
      (", of which on the CPU" if pinned else ""))
began = {}
for r in rows:
    if r[0] not in ours:
        continue
    if "sys_enter_fsync" in r[2] or "sys_enter_fdatasync" in r[2]:
        began[r[0]] = (at(r), r[3].split()[-1])
    elif ("sys_exit_fsync" in r[2] or "sys_exit_fdatasync" in r[2]) and r[0] in began:
        t, fd = began.pop(r[0])
        mine = " (%.2f)" % sum(cpu0(t, at(r), r[0]).values()) if pinned else ""
        print("  %s fd %d at %.1f took %.2f%s" % (r[0], int(fd, 16), t, at(r) - t, mine))
for e in sorted(events[10:], key=lambda e: -e[3])[:5]:
    sent = e[1] / 1000
    line = "  event %d sent at %.1f: %d" % (e[0], sent, e[3])
    if pinned:
        by = sorted(cpu0(sent, sent + e[3] / 1000).items(), key=lambda kv: -kv[1])
        line += "; CPU 0: " + ", ".join("%s %.2f" % kv for kv in by[:4])
    print(line)
PY
echo "largest WAL: $(sort -n "$D/wal" | tail -1) bytes"
kill $W
