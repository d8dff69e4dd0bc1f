#!/usr/bin/env bash
# usage: syscalls.sh health|connect|approval HLD [N] — the system calls the daemon makes per
# operation of the load (see load.sh), by `strace -c -f` attached for N (2000) operations:
# each call's count divided by N, errors (EAGAIN) included. HLD `raw` counts the raw tokio
# echo server's under the health load, or the raw inline server's under the connect load.
# With PERF=1 the calls are counted by `perf stat` on the kernel's syscall tracepoints
# instead, which does not slow the daemon down as `strace` does (and so leaves the order in
# which client and daemon run, and with it the calls made, as it is without a tracer); with
# PERF=1, EXTRA names more tracepoints to count the same way (for example
# EXTRA=ext4:ext4_mark_inode_dirty, the inode updates ext4 journals).
set -euo pipefail
B=$PWD/target/release
MODE=$1
HLD=$2
[ "$HLD" = raw ] || HLD=$(realpath "$HLD")
N=${3:-2000}
. "$(dirname "$0")/load.sh"
D=$(mktemp -d)
if [ "$HLD" = raw ]; then
  KIND=echo
  [ "$MODE" = connect ] && KIND=inline
  $PIN $B/hld-bench serve --kind $KIND --sock $D/h.sock >/dev/null 2>&1 &
else
  $PIN "$HLD" --socket $D/h.sock --database $D/db --log-file $D/log --claude-path $B/fake-claude \
    >/dev/null 2>&1 &
fi
P=$!
while [ ! -S $D/h.sock ]; do sleep 0.05; done
prepare $D/h.sock
CALLS="accept accept4 read recvfrom write writev sendto sendmsg close shutdown epoll_wait
  epoll_ctl futex pwrite64 fdatasync"
if [ -n "${PERF:-}" ]; then
  # shellcheck disable=SC2046
  perf stat $(for c in $CALLS; do printf -- "-e syscalls:sys_enter_%s " $c; done) \
    $(for t in ${EXTRA:-}; do printf -- "-e %s " $t; done) -p $P \
    -o $D/perf 2>/dev/null &
else
  strace -c -f -p $P -o $D/strace 2>/dev/null &
fi
T=$!
sleep 0.5
load $D/h.sock $N
sleep 0.3
kill -INT $T
wait $T 2>/dev/null || true
kill $P
wait $P 2>/dev/null || true
if [ -n "${PERF:-}" ]; then
  awk -v n=$N '$2 ~ /:/ { gsub(",", "", $1); sub("syscalls:sys_enter_", "", $2);
    if ($1 > 0) printf "%s %.2f\n", $2, $1 / n }' $D/perf
else
  # Columns: % time, seconds, usecs/call, calls, [errors,] syscall.
  awk -v n=$N '$1 ~ /^[0-9.]+$/ { printf "%s %.2f\n", $NF, $4 / n }' $D/strace
fi
rm -rf $D
