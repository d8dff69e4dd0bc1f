#!/usr/bin/env bash
# usage: sched.sh HLD [SUBS EVENTS] — what the daemon's threads do to each other during the
# harness's fan-out load (SUBS subscribers, 100 by default; EVENTS `createApproval` events,
# 300; one in flight, or RATE events/s from 8 publishers when RATE is set; PIN=1 runs daemon
# and client on CPU 0). Traced with `perf record` on the scheduler's and the syscalls'
# tracepoints: which threads took the CPU from the daemon's main thread while it could run,
# how many times each; the `fsync`s (and `fdatasync`s) each daemon thread made, each with its descriptor, when it
# began (ms after the client's last connection, about when the first event was sent) and how
# long it took; the slowest events (index, sent at in ms on the same scale, latency in µs),
# to set beside the `fsync`s; and the WAL's largest size.
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
while [ ! -S "$D/s" ]; do sleep 0.05; done
S=$(python3 "$(dirname "$0")/launch.py" "$D/s")
sleep 2
perf record -k CLOCK_MONOTONIC -e sched:sched_switch -e syscalls:sys_enter_fsync \
  -e syscalls:sys_exit_fsync -e syscalls:sys_enter_fdatasync -e syscalls:sys_exit_fdatasync \
  -e syscalls:sys_enter_accept4 -p $P -o "$D/perf.data" \
  >/dev/null 2>&1 &
T=$!
( while kill -0 $P 2>/dev/null; do stat -c %s "$D/db-wal" 2>/dev/null || true; sleep 0.1; done ) \
  >"$D/wal" &
W=$!
sleep 0.5
"${ON[@]}" "$B/hld-bench" client fanout --sock "$D/s" --subs "$SUBS" --events "$EVENTS" \
  --session "$S" "${PACED[@]}" --events-out "$D/events" |
  python3 -c 'import json,sys; l=json.load(sys.stdin)["latency"]; print("p50 %.0f p99 %.0f max %.0f µs" % (l["p50_us"], l["p99_us"], l["max_us"]))'
kill -INT $T
wait $T 2>/dev/null || true
perf script -i "$D/perf.data" -F tid,time,event,trace 2>/dev/null >"$D/trace"
echo "main thread switched out while runnable, for:"
grep "prev_pid=$P .*prev_state=R" "$D/trace" | grep -o 'next_comm=[^ ]*' | sort | uniq -c |
  sed 's/next_comm=//'
echo "fsyncs by thread:"
grep -E 'sys_enter_f(data)?sync' "$D/trace" | awk '{print $1}' | sort | uniq -c | while read -r n tid; do
  echo "  $n $(cat /proc/$P/task/$tid/comm 2>/dev/null || echo "$tid")"
done
echo "fsyncs (thread, descriptor, began ms, took ms), and the slowest events:"
python3 - "$D/trace" "$D/events" <<'PY'
import sys
rows = [l.split(None, 3) for l in open(sys.argv[1])]
at = lambda r: float(r[1].rstrip(":")) * 1000
t0 = max(at(r) for r in rows if "accept4" in r[2])
began = {}
for r in rows:
    if "sys_enter_fsync" in r[2] or "sys_enter_fdatasync" in r[2]:
        began[r[0]] = (at(r), r[3].split()[-1])
    elif ("sys_exit_fsync" in r[2] or "sys_exit_fdatasync" in r[2]) and r[0] in began:
        t, fd = began.pop(r[0])
        print("  %s fd %d at %.1f took %.2f" % (r[0], int(fd, 16), t - t0, at(r) - t))
events = [list(map(int, l.split())) for l in open(sys.argv[2])][10:]
for e in sorted(events, key=lambda e: -e[3])[:5]:
    print("  event %d sent at %.1f: %d" % (e[0], e[1] / 1000, e[3]))
PY
echo "largest WAL: $(sort -n "$D/wal" | tail -1) bytes"
kill $W $P
wait $P 2>/dev/null || true
rm -rf "$D"
