#!/usr/bin/env bash
# usage: fanout.sh ROUNDS SUBS EVENTS HLD... — the harness's fan-out load against each daemon
# binary in turn, ROUNDS times: SUBS subscribers to `new_approval`, EVENTS `createApproval`
# calls as its source, one event in flight; with RATE=N, N events/s from 8 publisher
# connections; with WINDOW=N and no RATE, as fast as the server takes them with N in flight.
# Prints each run's latency (publisher's write to the last subscriber's read) p50, p99 and
# max in µs, lost and repeated events, and events/s. HLD `raw` runs the harness's raw
# broadcast server instead (lines padded to hld's 806 bytes). PIN=1 runs the server and the
# client on CPU 0.
set -euo pipefail
B=$PWD/target/release
ROUNDS=$1 SUBS=$2 EVENTS=$3
shift 3
LOAD=()
[ -n "${RATE:-}" ] && LOAD=(--rate "$RATE" --publishers 8)
[ -n "${WINDOW:-}" ] && LOAD+=(--window "$WINDOW" --publishers 8)
ON=()
[ -n "${PIN:-}" ] && ON=(taskset -c 0)
for _ in $(seq "$ROUNDS"); do
  for H in "$@"; do
    D=$(mktemp -d)
    if [ "$H" = raw ]; then
      "${ON[@]}" "$B/hld-bench" serve --kind fanout --sock "$D/s" --event-bytes 806 &
      P=$!
      while [ ! -S "$D/s" ]; do sleep 0.05; done
      S=raw
    else
      mkdir "$D/config"
      HOME=$D XDG_CONFIG_HOME=$D/config FAKE_CLAUDE_HOME=$D/fc FAKE_CLAUDE_LOG_DIR=$D/fl \
        "${ON[@]}" "$H" --socket "$D/s" --database "$D/db" --log-file "$D/log" \
        --claude-path "$B/fake-claude" &
      P=$!
      while [ ! -S "$D/s" ]; do sleep 0.05; done
      S=$(python3 "$(dirname "$0")/launch.py" "$D/s")
      sleep 2 # the session's own short run ends before the load starts
    fi
    printf "%s: " "$(basename "$H")"
    "${ON[@]}" "$B/hld-bench" client fanout --sock "$D/s" --subs "$SUBS" --events "$EVENTS" \
      --session "$S" "${LOAD[@]}" >"$D/out"
    python3 -c 'import json,sys; r=json.load(sys.stdin); l=r["latency"]; print("p50 %.0f p99 %.0f max %.0f lost %d repeated %d; %.0f events/s" % (l["p50_us"], l["p99_us"], l["max_us"], r["lost"], r["repeated"], r["events_per_sec"]))' <"$D/out"
    kill $P
    wait $P 2>/dev/null || true
    rm -rf "$D"
  done
done
