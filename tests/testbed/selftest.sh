#!/usr/bin/env bash
# Checks the testbed end to end: start, start again (no-op), workload, assertions on what Slurm reports, stop, stop
# again (no-op), and no daemon left behind. Runs in its own state directory and ports (so a developer's testbed on
# the defaults is untouched) unless GCM_TESTBED_DIR / GCM_TESTBED_PORT_BASE are set; GCM_TESTBED_SLURM picks the
# Slurm as for start.sh (exit status 77 when its sources are absent). Needs root. Exit 0 = pass.
set -euo pipefail
# By default: the directory of the Slurm's own testbed (env.sh) with -selftest appended, its port base + 100.
if [ -z "${GCM_TESTBED_DIR:-}" ] || [ -z "${GCM_TESTBED_PORT_BASE:-}" ]; then
  read -r default_dir default_base < <(
    unset GCM_TESTBED_DIR GCM_TESTBED_PORT_BASE
    . "$(dirname "${BASH_SOURCE[0]}")/env.sh"
    echo "$GCM_TESTBED_DIR $GCM_TESTBED_PORT_BASE"
  )
  export GCM_TESTBED_DIR="${GCM_TESTBED_DIR:-$default_dir-selftest}"
  export GCM_TESTBED_PORT_BASE="${GCM_TESTBED_PORT_BASE:-$((default_base + 100))}"
fi
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

# A pid file that a restarted slurmctld rewrote in place with a shorter pid (see daemon_pid): this shell's own pid,
# followed by the remains of a longer one.
rewritten="$(mktemp)"
printf '%s\n7\n' "$$" >"$rewritten"
check "daemon_pid reads the first line of a pid file rewritten in place" \
  test "$(daemon_pid "$rewritten" "$(cat /proc/$$/comm)")" = "$$"
rm -f "$rewritten"

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
rest() { curl -sf --max-time 10 --unix-socket "$GCM_TESTBED_REST_SOCKET" "http://localhost$1"; }
# The newest API version slurmrestd offers (v0.0.38 on 22.05, v0.0.42 on 24.11, v0.0.44 on 25.11).
# (Slurm's JSON writes a / in a string as \/ from 23.02 on.)
api=$(rest /openapi/v3 | sed 's|\\/|/|g' | grep -o '"/slurm/v[0-9.]*/' | sort -uV | tail -1 | cut -d/ -f3)
check "slurmrestd offers an API version ($api)" test -n "$api"
check "slurmrestd answers with the nodes" grep -q '"name": "node8"' <<<"$(rest "/slurm/$api/nodes")"
daemons=13
if [ -e "$TB_ETC/jwt_hs256.key" ]; then
  daemons=14
  token=$(scontrol token username=alice lifespan=60 | sed -n 's/^SLURM_JWT=//p')
  check "slurmrestd takes alice's JWT on $GCM_TESTBED_REST_URL" grep -q '"name": "node8"' <<<"$(curl -sf --max-time 10 \
    -H "X-SLURM-USER-NAME: alice" -H "X-SLURM-USER-TOKEN: $token" "$GCM_TESTBED_REST_URL/slurm/$api/nodes")"
  check "slurmrestd refuses a request without a token" test "$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 \
    "$GCM_TESTBED_REST_URL/slurm/$api/nodes")" = 401
  check "sacctmgr takes a JWT (slurmdbd's AuthAltTypes)" env SLURM_JWT="$token" sacctmgr -n show user alice
fi
if grep -q '^MetricsType=metrics/openmetrics' "$SLURM_CONF"; then
  metrics=$(curl -sf --max-time 10 "http://127.0.0.1:$PORT_CTLD/metrics/nodes")
  check "slurmctld's OpenMetrics count 8 nodes" grep -qx 'slurm_nodes 8' <<<"$metrics"
fi

pids=$(recorded_pids)
check "$daemons daemons are running" test "$(wc -l <<<"$pids")" = "$daemons"
"$TESTBED_SRC/stop.sh"
survivors=()
for p in $pids; do if alive "$p"; then survivors+=("$p"); fi; done
check "no daemon pid survives stop.sh" test "${#survivors[@]}" = 0
check "no daemon, slurmstepd or job process of the testbed is left" test -z "$(testbed_processes)"
check "stop.sh again is a no-op success" "$TESTBED_SRC/stop.sh"
trap - EXIT

echo "selftest: $failures failure(s) in $(since "$t0")"
((failures == 0))
