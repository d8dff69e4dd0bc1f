#!/usr/bin/env bash
# usage: syscalls.sh health|connect|approval HLD [N] — the system calls the daemon makes per
# operation of the load (see load.sh), by `strace -c -f` attached for N (2000) operations:
# each call's count divided by N, errors (EAGAIN) included. HLD `raw` (health mode only)
# counts the raw tokio echo server's under the same load instead.
set -euo pipefail
B=$PWD/target/release
MODE=$1
HLD=$2
[ "$HLD" = raw ] || HLD=$(realpath "$HLD")
N=${3:-2000}
. "$(dirname "$0")/load.sh"
D=$(mktemp -d)
if [ "$HLD" = raw ]; then
  $B/hld-bench serve --kind echo --sock $D/h.sock >/dev/null 2>&1 &
else
  $PIN "$HLD" --socket $D/h.sock --database $D/db --log-file $D/log --claude-path $B/fake-claude \
    >/dev/null 2>&1 &
fi
P=$!
while [ ! -S $D/h.sock ]; do sleep 0.05; done
prepare $D/h.sock
strace -c -f -p $P -o $D/strace 2>/dev/null &
T=$!
sleep 0.5
load $D/h.sock $N
sleep 0.3
kill -INT $T
wait $T 2>/dev/null || true
kill $P
wait $P 2>/dev/null || true
# Columns: % time, seconds, usecs/call, calls, [errors,] syscall.
awk -v n=$N '$1 ~ /^[0-9.]+$/ { printf "%s %.2f\n", $NF, $4 / n }' $D/strace
rm -rf $D
