#!/usr/bin/env bash
# Stops the testbed started by start.sh: cancels every job, then stops slurmrestd, the slurmd, slurmctld, slurmdbd,
# MariaDB and munged, each by the pid it wrote (never by name). Succeeds when the testbed is already down.
# The state directory is kept (the accounting database and the munge key survive); --purge removes it too.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

purge=0
case "${1:-}" in
  --purge) purge=1 ;;
  "") ;;
  *) echo "usage: $0 [--purge]" >&2; exit 2 ;;
esac
need_root
if ((purge)) && [ -e "$TB" ] && [ ! -f "$TB/etc/slurm.conf" ]; then
  die "refusing to delete $TB: it does not look like a testbed state directory (no etc/slurm.conf)"
fi

# Jobs first, so their slurmstepd and job processes end while the slurmd that watch them are still there.
if daemon_pid "$TB_RUN/slurmctld.pid" slurmctld >/dev/null && [ -f "$SLURM_CONF" ]; then
  jobs=$(squeue -h -o %A 2>/dev/null || true)
  if [ -n "$jobs" ]; then
    # shellcheck disable=SC2086
    scancel $jobs 2>/dev/null || true
    wait_until 20 no_jobs || log "some jobs were still ending"
  fi
fi

# stop_pids GRACE PID...: SIGTERM, wait up to GRACE seconds, then SIGKILL whatever is left.
stop_pids() {
  local grace=$1 p left
  shift
  (($#)) || return 0
  kill -TERM "$@" 2>/dev/null || true
  local deadline=$((SECONDS + grace))
  while :; do
    left=()
    for p in "$@"; do if alive "$p"; then left+=("$p"); fi; done
    ((${#left[@]})) || return 0
    ((SECONDS < deadline)) || break
    sleep 0.05
  done
  log "killing ${left[*]} (no exit ${grace}s after SIGTERM)"
  kill -KILL "${left[@]}" 2>/dev/null || true
}

# stop_group GRACE PIDFILE:COMM...: stop those daemons together (the eight slurmd stop in parallel) and remove
# their pid files.
stopped=0
stop_group() {
  local grace=$1 item pids=() pid
  shift
  for item in "$@"; do
    if pid=$(daemon_pid "${item%:*}" "${item##*:}"); then pids+=("$pid"); fi
  done
  stop_pids "$grace" "${pids[@]}"
  stopped=$((stopped + ${#pids[@]}))
  for item in "$@"; do rm -f "${item%:*}"; done
}

slurmds=()
for n in "${NODES[@]}"; do slurmds+=("$TB_RUN/slurmd-$n.pid:slurmd"); done
stop_group 5 "$TB_RUN/slurmrestd.pid:slurmrestd" "$TB_RUN/slurmrestd-jwt.pid:slurmrestd"
stop_group 10 "${slurmds[@]}"
stop_group 15 "$TB_RUN/slurmctld.pid:slurmctld"
stop_group 15 "$TB_RUN/slurmdbd.pid:slurmdbd"
stop_group 30 "$TB_DB/mariadbd.pid:mariadbd"
stop_group 5 "$TB_MUNGE/munged.pid:munged"

# Safety net: any process of this testbed that is still there (a slurmstepd whose slurmd died first, a daemon whose
# pid file was lost, a job process that escaped its slurmstepd) is stopped by its pid as well.
mapfile -t strays < <(testbed_processes)
if ((${#strays[@]})); then
  # and the whole process tree below each of them
  tree=$(ps -eo pid=,ppid=)
  frontier=("${strays[@]}")
  while ((${#frontier[@]})); do
    mapfile -t children < <(awk -v want=" ${frontier[*]} " 'index(want, " " $2 " ") { print $1 }' <<<"$tree")
    strays+=("${children[@]}")
    frontier=("${children[@]}")
  done
  log "stopping stray testbed processes: ${strays[*]}"
  stop_pids 5 "${strays[@]}"
fi

if ((purge)); then
  rm -rf "$TB"
  log "stopped $stopped daemons; removed $TB"
elif ((stopped)); then
  log "stopped $stopped daemons (state kept in $TB)"
else
  log "not running"
fi
