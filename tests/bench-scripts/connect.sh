#!/usr/bin/env bash
# usage: connect.sh ROUNDS HLD... — µs per connect+health+close (20,000, pinned to CPU 0), for
# the raw inline server and each daemon binary in turn, ROUNDS times.
set -euo pipefail
B=$PWD/target/release
one() {
  local D P
  D=$(mktemp -d)
  if [ "$1" = raw ]; then
    taskset -c 0 $B/hld-bench serve --kind inline --sock $D/s >/dev/null 2>&1 &
  else
    taskset -c 0 "$1" --database $D/db --log-file $D/log --claude-path $B/fake-claude --socket $D/s >/dev/null 2>&1 &
  fi
  P=$!
  while [ ! -S $D/s ]; do sleep 0.05; done
  sleep 0.3
  printf "%s=%s " "$(basename $1)" "$(taskset -c 0 $B/hld-bench client connect --sock $D/s --mode rpc --n 20000 --warmup 1000 |
    python3 -c 'import json,sys; d=json.load(sys.stdin); print(round(d["secs"]/d["ops"]*1e6,1))')"
  kill $P; wait $P 2>/dev/null || true
  rm -rf $D
}
ROUNDS=$1; shift
for _ in $(seq $ROUNDS); do one raw; for H in "$@"; do one "$H"; done; echo; done
