#!/usr/bin/env bash
# usage: callgrind.sh health|connect|approval HLD — instructions the daemon executes per
# `health` request on 8 connections, per connect+health+close pinned to CPU 0, or per
# `createApproval` call (see load.sh): the difference between a short and a long run under
# callgrind, so that start-up cancels out.
set -euo pipefail
B=$PWD/target/release
MODE=$1
HLD=$(realpath "$2")
. "$(dirname "$0")/load.sh"
total() {
  local D
  D=$(mktemp -d)
  (cd $D && $PIN valgrind --tool=callgrind --callgrind-out-file=$D/cg.out "$HLD" --socket $D/h.sock \
    --database $D/db --log-file $D/log --claude-path $B/fake-claude 2>/dev/null) &
  while [ ! -S $D/h.sock ]; do sleep 0.2; done
  prepare $D/h.sock
  load $D/h.sock $1
  pkill -INT -f "callgrind-out-file=$D/cg.out"
  while [ ! -s $D/cg.out ] || pgrep -f "callgrind-out-file=$D/cg.out" >/dev/null; do sleep 0.2; done
  callgrind_annotate $D/cg.out 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}'
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
