#!/usr/bin/env bash
# usage: fanout.sh ROUNDS SUBS EVENTS HLD... — the harness's fan-out load (`createApproval` as
# its source; one event in flight, or RATE events/s from 8 publisher connections when RATE is
# set) against each daemon binary in turn, ROUNDS times; prints each run's p50, p99 and max
# latency in µs (publisher's write to the last subscriber's read), its two halves (publisher's
# write → first delivery, first → last delivery; p50 and p99 of each), the daemon's CPU time
# during the run (user+system, ms) and the client's (the load generator's: user/system, s,
# subscribing included). With EPOLL=1 the daemon runs under `strace -f` and the
# events its `epoll_wait`s returned during the run are counted too, and the waits with a
# timeout that expired (the flusher's rests, and any other timer). HLD `raw` runs the harness's
# raw broadcast server instead (event lines padded to RAW_BYTES, 806 by default). With PIN=1
# the server and the client both run on CPU 0 (`taskset -c 0`). With EVENTS_OUT=DIR each
# run's per-event times go to DIR/NAME.ROUND (index, sent at, first and last delivery, µs;
# the subscriber that read it last; the send time on CLOCK_MONOTONIC, µs). WINDOW=N lets N events be in flight (from 8 publisher
# connections; with no RATE, as fast as that allows: the saturation throughput). PAUSE=S stops
# the server (SIGSTOP) for S seconds, 1.5 s into each run, and lets it go on (SIGCONT). Where
# the kernel reports free memory to the hypervisor (page_reporting), the MiB it reported
# during each client run are printed last. DB_DIR=DIR puts the daemon's database there (say
# /dev/shm, a tmpfs) instead of beside its socket under $TMPDIR.
set -euo pipefail
B=$PWD/target/release
ROUNDS=$1 SUBS=$2 EVENTS=$3
shift 3
PACED=()
[ -n "${RATE:-}" ] && PACED=(--rate "$RATE" --publishers 8)
[ -n "${WINDOW:-}" ] && PACED+=(--window "$WINDOW" --publishers 8)
ON=()
[ -n "${PIN:-}" ] && ON=(taskset -c 0)
# KiB of free memory the kernel has reported to the hypervisor (0 where it does not).
REPORTED=/sys/module/page_reporting/parameters/reported_kib
reported() { if [ -r $REPORTED ]; then cat $REPORTED; else echo 0; fi; }
# CPU ticks (user+system) of process $1 and its threads.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for ROUND in $(seq "$ROUNDS"); do
  for H in "$@"; do
    D=$(mktemp -d)
    DB=$D
    [ -n "${DB_DIR:-}" ] && DB=$(mktemp -d -p "$DB_DIR")
    mkdir "$D/config"
    if [ "$H" = raw ]; then
      # The harness's baseline, its lines padded to the length of hld's `new_approval`.
      "${ON[@]}" "$B/hld-bench" serve --kind fanout --sock "$D/s" --event-bytes "${RAW_BYTES:-806}" &
      P=$!
      while [ ! -S "$D/s" ]; do sleep 0.05; done
      S=raw
    else
      HOME=$D XDG_CONFIG_HOME=$D/config FAKE_CLAUDE_HOME=$D/fc FAKE_CLAUDE_LOG_DIR=$D/fl \
        "${ON[@]}" "$H" --socket "$D/s" --database "$DB/db" --log-file "$D/log" --claude-path "$B/fake-claude" &
      P=$!
      while [ ! -S "$D/s" ]; do sleep 0.05; done
      S=$(python3 "$(dirname "$0")/launch.py" "$D/s")
      sleep 2
    fi
    if [ -n "${EPOLL:-}" ]; then
      strace -f -e trace=epoll_wait -o "$D/strace" -p $P 2>/dev/null &
      T=$!
      sleep 0.5
    fi
    BEFORE=$(ticks $P)
    [ -n "${PAUSE:-}" ] && (sleep 1.5; kill -STOP $P; sleep "$PAUSE"; kill -CONT $P) &
    printf "%s: " "$(basename "$H")"
    OUT=()
    [ -n "${EVENTS_OUT:-}" ] && OUT=(--events-out "$EVENTS_OUT/$(basename "$H").$ROUND")
    TIMEFORMAT='%3U/%3S s'
    KIB=$(reported)
    { time "${ON[@]}" "$B/hld-bench" client fanout --sock "$D/s" --subs "$SUBS" --events "$EVENTS" \
      --session "$S" "${PACED[@]}" "${OUT[@]}" >"$D/out"; } 2>"$D/client"
    python3 -c 'import json,sys; r=json.load(sys.stdin); l=r["latency"]; f, s = r["first"], r["spread"]; print("p50 %.0f p99 %.0f max %.0f lost %d repeated %d first p50 %.0f p99 %.0f then p50 %.0f p99 %.0f; %.0f events/s" % (l["p50_us"], l["p99_us"], l["max_us"], r["lost"], r["repeated"], f["p50_us"], f["p99_us"], s["p50_us"], s["p99_us"], r["events_per_sec"]), end="")' <"$D/out"
    echo -n " cpu $((($(ticks $P) - BEFORE) * 1000 / $(getconf CLK_TCK))) ms; client $(cat "$D/client")"
    [ -r $REPORTED ] && echo -n "; reported $((($(reported) - KIB) / 1024)) MiB"
    if [ -n "${EPOLL:-}" ]; then
      kill -INT $T
      wait $T 2>/dev/null || true
      echo -n " epoll events $(grep -o '= [0-9]*$' "$D/strace" | awk '{s += $2} END {print s}')"
      echo -n " timed out $(grep -cE 'epoll_wait\(.*, [1-9][0-9]*\) += 0$' "$D/strace")"
    fi
    echo
    kill $P
    wait $P 2>/dev/null || true
    rm -rf "$D" "$DB"
  done
done
