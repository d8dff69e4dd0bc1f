# Sourced by callgrind.sh and syscalls.sh: the loads their per-operation figures are taken over.
# MODE is health (`health` requests on CONNS connections, 8 by default; the echo load when HLD
# is raw), connect (connect+health+close, pinned to CPU 0, the daemon too) or approval
# (`createApproval` calls on one connection, for a session launched first). Needs B (the
# binaries' directory) and MODE set.
S=$(dirname "${BASH_SOURCE[0]}")
PIN=""
[ "$MODE" = connect ] && PIN="taskset -c 0"
# prepare SOCK — what must exist before the counted load (the approval's session).
prepare() {
  if [ "$MODE" = approval ]; then
    SESSION=$(python3 $S/launch.py $1)
    sleep 4
  fi
}
# load SOCK N — the counted load.
load() {
  case $MODE in
    health) $B/hld-bench client conc --sock $1 --mode "$([ "${HLD:-}" = raw ] && echo echo || echo rpc)" \
      --conns "${CONNS:-8}" --n $2 >/dev/null ;;
    connect) $PIN $B/hld-bench client connect --sock $1 --mode rpc --n $2 --warmup 0 >/dev/null ;;
    approval) python3 $S/approvals.py $1 $SESSION $2 >/dev/null ;;
    *) echo "unknown mode $MODE" >&2; exit 2 ;;
  esac
}
