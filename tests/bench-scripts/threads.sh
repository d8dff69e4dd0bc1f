#!/usr/bin/env bash
# usage: threads.sh HLD... — for each daemon binary, three loops of 3000 createApproval calls:
# the mean round trip (µs), the CPU clock ticks (10 ms) each thread used, the WAL's size.
set -euo pipefail
B=$PWD/target/release
S=$(dirname "$0")
ticks() { for t in /proc/$1/task/*; do echo "$(cat $t/comm) $(awk '{print $14+$15}' $t/stat)"; done; }
for H in "$@"; do
  D=$(mktemp -d)
  "$H" --socket $D/h.sock --database $D/db --log-file $D/log --claude-path $B/fake-claude &
  P=$!
  sleep 0.5
  SESSION=$(python3 $S/launch.py $D/h.sock)
  sleep 1.5
  for _ in 1 2 3; do
    ticks $P > $D/t0
    RT=$(python3 $S/approvals.py $D/h.sock $SESSION)
    ticks $P > $D/t1
    echo "$(basename $H) rt=${RT}us $(paste $D/t0 $D/t1 | awk '{printf "%s=%d ", $1, $4-$2}')wal=$(stat -c %s $D/db-wal)"
  done
  kill $P; wait $P 2>/dev/null || true
  rm -rf $D
done
