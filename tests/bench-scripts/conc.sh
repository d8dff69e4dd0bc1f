#!/usr/bin/env bash
# usage: conc.sh ROUNDS CONNS HLD... — thousands of `health` requests/s on CONNS connections
# (200,000 in all, unpinned), for the raw tokio echo server and each daemon binary in turn,
# ROUNDS times: the harness's throughput load, with builds alternating. After each figure, the
# server's CPU time during the run, user/system in ms, and the client's (the load generator's),
# user/system in s. CLIENT= names another load generator (default: this build's hld-bench).
set -euo pipefail
B=$PWD/target/release
CLIENT=${CLIENT:-$B/hld-bench}
one() {
  local D P MODE=rpc
  D=$(mktemp -d)
  if [ "$1" = raw ]; then
    MODE=echo
    $B/hld-bench serve --kind echo --sock $D/s >/dev/null 2>&1 &
  else
    "$1" --database $D/db --log-file $D/log --claude-path $B/fake-claude --socket $D/s >/dev/null 2>&1 &
  fi
  P=$!
  while [ ! -S $D/s ]; do sleep 0.05; done
  sleep 0.3
  local BEFORE RATE
  BEFORE=$(awk '{print $14, $15}' /proc/$P/stat)
  local TIMEFORMAT='%3U/%3S s'
  { time $CLIENT client conc --sock $D/s --mode $MODE --conns $CONNS --n 200000 >$D/out; } \
    2>$D/client
  RATE=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(round(d["ops"]/d["secs"]/1000))' $D/out)
  printf "%s=%sk (%s; client %s) " "$(basename $1)" "$RATE" "$(echo "$BEFORE $(awk '{print $14, $15}' /proc/$P/stat)" |
    awk -v hz="$(getconf CLK_TCK)" '{printf "%d/%d ms", ($3 - $1) * 1000 / hz, ($4 - $2) * 1000 / hz}')" "$(cat $D/client)"
  kill $P; wait $P 2>/dev/null || true
  rm -rf $D
}
ROUNDS=$1 CONNS=$2
shift 2
for _ in $(seq $ROUNDS); do one raw; for H in "$@"; do one "$H"; done; echo; done
