#!/usr/bin/env bash
# Checks the testbed end to end: start, start again (no-op), workload, assertions on what Slurm reports, stop, stop
# again (no-op), and no daemon left behind. Runs in its own state directory and ports (so a developer's testbed on
# the defaults is untouched) unless GCM_TESTBED_DIR / GCM_TESTBED_PORT_BASE are set. Needs root. Exit 0 = pass.
set -euo pipefail
export GCM_TESTBED_DIR="${GCM_TESTBED_DIR:-/tmp/gcm-testbed-selftest}"
export GCM_TESTBED_PORT_BASE="${GCM_TESTBED_PORT_BASE:-16900}"
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
t0=$(now_ms)
failures=0
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@" >/dev/null 2>&1; then
    echo "ok   $what"
  else
    echo "FAIL $what"
    failures=$((failures + 1))
  fi
}
recorded_pids() {
  local f c p
  while read -r f c; do if p=$(daemon_pid "$f" "$c"); then echo "$p"; fi; done < <(daemon_table)
}
trap '"$TESTBED_SRC/stop.sh" >/dev/null 2>&1 || true' EXIT

"$TESTBED_SRC/start.sh"
check "start.sh again is a no-op success" "$TESTBED_SRC/start.sh"
"$TESTBED_SRC/workload.sh" >/dev/null
id_of() { sed -n "s/^$1=//p" "$TB/workload.env"; }

node_states=$(sinfo -h -N -o '%N|%G|%t|%E' | sort -u)
check "sinfo lists 8 nodes" test "$(cut -d'|' -f1 <<<"$node_states" | sort -u | wc -l)" = 8
check "every node has gres gpu:fake:2" test "$(cut -d'|' -f2 <<<"$node_states" | sort -u)" = "gpu:fake:2"
check "node7 is drained with its reason" grep -qx 'node7|gpu:fake:2|drain|testbed: GPU fell off the bus (xid 79)' \
  <<<"$node_states"
check "node8 is down with its reason" grep -qx 'node8|gpu:fake:2|down|testbed: node unreachable' <<<"$node_states"
check "sacctmgr lists QOS high and limited" \
  test "$(sacctmgr -nP show qos format=name | grep -cxE 'high|limited')" = 2
check "sacctmgr lists the users alice, bob, carol" \
  test "$(sacctmgr -nP show user format=user | grep -cxE 'alice|bob|carol')" = 3
check "the QOS limit is MaxJobsPerUser=1" grep -qx 'limited|1' <<<"$(sacctmgr -nP show qos format=name,maxjobspu)"
pending=$(squeue -h -t PD -o '%i|%r')
check "a job pends on Dependency" grep -qx "$(id_of PENDING_DEPENDENCY)|Dependency" <<<"$pending"
check "a job pends on Resources" grep -qx "$(id_of PENDING_RESOURCES)|Resources" <<<"$pending"
check "a job pends on the QOS limit" grep -qx "$(id_of PENDING_QOS)|QOSMaxJobsPerUserLimit" <<<"$pending"
check "the 2-node GPU job runs on 2 nodes" \
  test "$(squeue -h -j "$(id_of RUNNING_MULTINODE_GPU)" -o '%T %D')" = "RUNNING 2"
check "the array job has 4 running tasks" \
  test "$(squeue -h -j "$(id_of RUNNING_ARRAY)" -t R -o %i | wc -l)" = 4
gpu_job=$(id_of RUNNING_GPU)
check "a GPU job sees SLURM_JOB_GPUS" wait_until 10 grep -qE '^SLURM_JOB_GPUS=[01]$' "$TB_JOBS/eval-$gpu_job.out"
finished=$(sacct -n -X -P -j "$(id_of COMPLETED),$(id_of FAILED),$(id_of CANCELLED_RUNNING)" -o state |
  sort | tr '\n' ' ')
check "sacct has COMPLETED, FAILED and CANCELLED jobs" test "$finished" = "CANCELLED by 0 COMPLETED FAILED "
check "sacct's SubmitLine of the two-line job spans two lines" \
  grep -qx 'sleep 3600' <<<"$(sacct -n -P -X -j "$(id_of RUNNING_NEWLINE)" -o submitline)"
check "slurmrestd answers with the nodes" \
  grep -q '"name": "node8"' <<<"$(curl -sf --max-time 5 --unix-socket "$GCM_TESTBED_REST_SOCKET" \
    http://localhost/slurm/v0.0.38/nodes)"

pids=$(recorded_pids)
check "13 daemons are running" test "$(wc -l <<<"$pids")" = 13
"$TESTBED_SRC/stop.sh"
survivors=()
for p in $pids; do if alive "$p"; then survivors+=("$p"); fi; done
check "no daemon pid survives stop.sh" test "${#survivors[@]}" = 0
check "no daemon, slurmstepd or job process of the testbed is left" test -z "$(testbed_processes)"
check "stop.sh again is a no-op success" "$TESTBED_SRC/stop.sh"
trap - EXIT

echo "selftest: $failures failure(s) in $(since "$t0")"
((failures == 0))
