#!/usr/bin/env bash
# usage: connect.sh ROUNDS HLD... — µs per connect+health+close (20,000, pinned to CPU 0), for
# the raw inline server and each daemon binary in turn, ROUNDS times. With CPU=1, after each
# figure: the server's user/system CPU time and its context switches per connection, and the
# client's user/system CPU time (ms for the 20,000).
set -euo pipefail
B=$PWD/target/release
# User and system CPU ticks of process $1.
cpu() { awk '{print $14, $15}' "/proc/$1/stat"; }
# Context switches (voluntary and not) of process $1's threads.
switches() { cat /proc/$1/task/*/status | awk '/ctxt_switches/ {n += $2} END {print n}'; }
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
  local BEFORE SWITCHES
  BEFORE=$(cpu $P)
  SWITCHES=$(switches $P)
  local TIMEFORMAT='%3U/%3S'
  { time taskset -c 0 $B/hld-bench client connect --sock $D/s --mode rpc --n 20000 --warmup 1000 >$D/out; } 2>$D/client
  printf "%s=%s " "$(basename $1)" "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d["secs"]/d["ops"]*1e6,1))' $D/out)"
  if [ -n "${CPU:-}" ]; then
    printf "(server %s ms, %s switches/conn; client %s s) " \
      "$(echo "$BEFORE $(cpu $P)" | awk -v hz="$(getconf CLK_TCK)" '{printf "%d/%d", ($3 - $1) * 1000 / hz, ($4 - $2) * 1000 / hz}')" \
      "$(echo "$SWITCHES $(switches $P)" | awk '{printf "%.2f", ($2 - $1) / 21000}')" "$(cat $D/client)"
  fi
  kill $P; wait $P 2>/dev/null || true
  rm -rf $D
}
ROUNDS=$1; shift
for _ in $(seq $ROUNDS); do one raw; for H in "$@"; do one "$H"; done; echo; done
