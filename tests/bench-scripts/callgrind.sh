#!/usr/bin/env bash
# usage: callgrind.sh health|connect HLD — instructions the daemon executes per `health`
# request on 8 connections (health), or per connect+health+close pinned to CPU 0 (connect):
# the difference between a short and a long run under callgrind, so that start-up cancels out.
set -euo pipefail
B=$PWD/target/release
MODE=$1
HLD=$(realpath "$2")
total() {
  local D PIN=""
  D=$(mktemp -d)
  [ "$MODE" = connect ] && PIN="taskset -c 0"
  (cd $D && $PIN valgrind --tool=callgrind --callgrind-out-file=$D/cg.out "$HLD" --socket $D/h.sock \
    --database $D/db --log-file $D/log --claude-path $B/fake-claude 2>/dev/null) &
  while [ ! -S $D/h.sock ]; do sleep 0.2; done
  if [ "$MODE" = connect ]; then
    $PIN $B/hld-bench client connect --sock $D/h.sock --mode rpc --n $1 --warmup 0 >/dev/null
  else
    $B/hld-bench client conc --sock $D/h.sock --mode rpc --conns 8 --n $1 >/dev/null
  fi
  pkill -INT -f "callgrind-out-file=$D/cg.out"
  while [ ! -s $D/cg.out ] || pgrep -f "callgrind-out-file=$D/cg.out" >/dev/null; do sleep 0.2; done
  callgrind_annotate $D/cg.out 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  rm -rf $D
}
if [ "$MODE" = connect ]; then SHORT=2000 LONG=7000; else SHORT=2000 LONG=22000; fi
A=$(total $SHORT)
C=$(total $LONG)
echo "$MODE: $(( (C - A) / (LONG - SHORT) )) instructions each"
