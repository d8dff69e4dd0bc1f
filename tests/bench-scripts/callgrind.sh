#!/usr/bin/env bash
# usage: callgrind.sh health|connect|approval HLD — instructions the daemon executes per
# `health` request on 8 connections, per connect+health+close pinned to CPU 0, or per
# `createApproval` call (see load.sh): the difference between a short and a long run under
# callgrind, so that start-up cancels out. HLD `raw` (health mode only) measures the raw tokio
# echo server under the same load instead; CONNS (8) sets the health load's connections.
# With ANNOTATE=N the long run's N costliest functions (instructions of their own, in all the
# run: divide by its operations) are printed too, on stderr.
set -euo pipefail
B=$PWD/target/release
MODE=$1
HLD=$2
[ "$HLD" = raw ] || HLD=$(realpath "$HLD")
. "$(dirname "$0")/load.sh"
total() {
  local D
  D=$(mktemp -d)
  if [ "$HLD" = raw ]; then
    (cd $D && valgrind --tool=callgrind --callgrind-out-file=$D/cg.out $B/hld-bench serve \
      --kind echo --sock $D/h.sock >/dev/null 2>&1) &
  else
    (cd $D && $PIN valgrind --tool=callgrind --callgrind-out-file=$D/cg.out "$HLD" --socket $D/h.sock \
      --database $D/db --log-file $D/log --claude-path $B/fake-claude 2>/dev/null) &
  fi
  while [ ! -S $D/h.sock ]; do sleep 0.2; done
  prepare $D/h.sock
  load $D/h.sock $1
  pkill -INT -f "callgrind-out-file=$D/cg.out"
  while [ ! -s $D/cg.out ] || pgrep -f "callgrind-out-file=$D/cg.out" >/dev/null; do sleep 0.2; done
  callgrind_annotate $D/cg.out 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
  if [ -n "${ANNOTATE:-}" ] && [ "$1" = "$LONG" ]; then
    callgrind_annotate $D/cg.out 2>/dev/null | awk '/file:function/ {on = 1; getline; next} on && NF' |
      head -n "$ANNOTATE" | cut -c1-150 >&2
  fi
  rm -rf $D
}
case $MODE in
  connect) SHORT=2000 LONG=7000 ;;
  approval) SHORT=500 LONG=2500 ;;
  *) SHORT=2000 LONG=22000 ;;
esac
A=$(total $SHORT)
C=$(total $LONG)
echo "$MODE: $(( (C - A) / (LONG - SHORT) )) instructions each"
