#!/usr/bin/env bash
# usage: fanout.sh ROUNDS SUBS EVENTS HLD... — the harness's fan-out load (one event in flight,
# `createApproval` as its source) against each daemon binary in turn, ROUNDS times; prints each
# run's p50, p99 and max latency in µs (publisher's write to the last subscriber's read).
set -euo pipefail
B=$PWD/target/release
ROUNDS=$1 SUBS=$2 EVENTS=$3
shift 3
for _ in $(seq "$ROUNDS"); do
  for H in "$@"; do
    D=$(mktemp -d)
    mkdir "$D/config"
    HOME=$D XDG_CONFIG_HOME=$D/config FAKE_CLAUDE_HOME=$D/fc FAKE_CLAUDE_LOG_DIR=$D/fl \
      "$H" --socket "$D/s" --database "$D/db" --log-file "$D/log" --claude-path "$B/fake-claude" &
    P=$!
    while [ ! -S "$D/s" ]; do sleep 0.05; done
    S=$(python3 "$(dirname "$0")/launch.py" "$D/s")
    sleep 2
    printf "%s: " "$(basename "$H")"
    "$B/hld-bench" client fanout --sock "$D/s" --subs "$SUBS" --events "$EVENTS" --session "$S" |
      python3 -c 'import json,sys; r=json.load(sys.stdin); l=r["latency"]; print("p50 %.0f p99 %.0f max %.0f lost %d" % (l["p50_us"], l["p99_us"], l["max_us"], r["lost"]))'
    kill $P
    wait $P 2>/dev/null || true
    rm -rf "$D"
  done
done
