#!/usr/bin/env bash
# Puts the running testbed into a varied, realistic state for the collectors, the fixtures and the demo:
#   node7 drained and node8 down (each with a reason), so the debug partition has node6 only;
#   running jobs: a 2-node GPU job, an array job, single-GPU jobs, a job with srun steps, a job whose submit line
#     holds a newline, a job under QOS high;
#   pending jobs with reasons Resources, Dependency, QOSMaxJobsPerUserLimit and JobHeldUser;
#   finished jobs: COMPLETED, FAILED, CANCELLED (running and pending), and one that reaches TIMEOUT about
#     1-1.5 minutes after this script starts (Slurm's time limits have a 1-minute resolution).
# Rerunnable: it first cancels every job and resumes every node. Long-running jobs sleep for an hour.
# Prints the job ids as KEY=ID lines on stdout (also written to $GCM_TESTBED_DIR/workload.env).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
t0=$(now_ms)
daemon_pid "$TB_RUN/slurmctld.pid" slurmctld >/dev/null || die "the testbed is not running (start.sh first)"

# --- clean slate ---------------------------------------------------------------------------------------------
old=$(squeue -h -o %A)
if [ -n "$old" ]; then
  # shellcheck disable=SC2086
  scancel $old
  wait_until 30 no_jobs || die "old jobs did not end" "$TB_LOG/slurmctld.log"
fi
for n in "${NODES[@]}"; do scontrol update nodename="$n" state=resume 2>/dev/null || true; done
nodes_idle() { ! sinfo -h -N -o '%N %t' | grep -qv ' idle$'; }
wait_until 15 nodes_idle || die "nodes did not return to idle" "$TB_LOG/slurmctld.log"

# --- node states: only debug's nodes, before any job can land there --------------------------------------------
scontrol update nodename=node7 state=drain reason="testbed: GPU fell off the bus (xid 79)"
scontrol update nodename=node8 state=down reason="testbed: node unreachable"

# submit USER SBATCH_ARGS...: submit a batch job as USER, print its id.
submit() {
  local user=$1
  shift
  (cd "$TB_JOBS" && runuser -u "$user" -- sbatch --parsable --chdir="$TB_JOBS" --output="$TB_JOBS/%x-%j.out" "$@") |
    cut -d';' -f1
}
HOUR=3600
ids=()
record() { ids+=("$1=$2"); }

# First, because Slurm only notices an expired time limit on its 30-second sweep after a whole minute.
# The debug jobs go first so they get node6, debug's only usable node once node7 and node8 are out.
record TIMEOUT "$(submit bob -J short-limit -p debug --time=1 --wrap "sleep $HOUR")"
record RUNNING_QOS_HIGH "$(submit alice -J urgent -p debug -A ml -q high --time=01:00:00 --wrap "sleep $HOUR")"
record RUNNING_LIMITED "$(submit carol -J ops-check -p debug --time=01:00:00 --wrap "sleep $HOUR")"
record PENDING_QOS "$(submit carol -J ops-check-2 -p debug --time=01:00:00 --wrap "sleep $HOUR")"

TRAIN=$(submit alice -J train-llm -p gpu -N2 --ntasks-per-node=1 --gres=gpu:2 --time=02:00:00 \
  --comment="nightly pretraining" --wrap "env | grep -E '^(SLURM_JOB_GPUS|CUDA_VISIBLE_DEVICES)='; sleep $HOUR")
record RUNNING_MULTINODE_GPU "$TRAIN"
record RUNNING_ARRAY "$(submit bob -J sweep -p gpu --array=0-3 --gres=gpu:1 --time=02:00:00 --wrap "sleep $HOUR")"
record RUNNING_GPU "$(submit bob -J eval -p gpu --gres=gpu:1 --time=02:00:00 \
  --wrap "echo SLURM_JOB_GPUS=\$SLURM_JOB_GPUS; sleep $HOUR")"
record RUNNING_STEPS "$(submit root -J steps -p gpu -N1 -n2 --time=02:00:00 --wrap "srun sleep $HOUR")"
record RUNNING_NEWLINE "$(submit alice -J two-lines -p gpu --time=02:00:00 --wrap "echo first line
sleep $HOUR")"

# Short ones before the big pending job, which would otherwise hold them back until a backfill pass.
record COMPLETED "$(submit alice -J quick -p gpu --time=5 --wrap "true")"
record FAILED "$(submit bob -J crash -p gpu --time=5 --wrap "echo bad input >&2; exit 3")"
# exec: no shell in between, so a cancel right after the start cannot orphan the sleep (proctrack/linuxproc only
# kills what it finds in the job's process tree at that moment).
CANCEL_RUNNING=$(submit root -J cancel-me -p gpu --time=5 --wrap "exec sleep $HOUR")
CANCEL_PENDING=$(submit root -J never-ran -p gpu --begin=now+1hour --time=5 --wrap "true")
record CANCELLED_RUNNING "$CANCEL_RUNNING"
record CANCELLED_PENDING "$CANCEL_PENDING"

# Pending.
record PENDING_DEPENDENCY "$(submit alice -J finetune -p gpu --dependency=afterok:"$TRAIN" --gres=gpu:1 \
  --time=01:00:00 --wrap "sleep $HOUR")"
record PENDING_HELD "$(submit bob -J held -p gpu --hold --time=01:00:00 --wrap "sleep $HOUR")"
record PENDING_RESOURCES "$(submit alice -J big-pretrain -p gpu -N4 --gres=gpu:2 --time=02:00:00 \
  --wrap "sleep $HOUR")"

# --- wait until every job is where it should be ----------------------------------------------------------------
id_of() { local kv; for kv in "${ids[@]}"; do [ "${kv%%=*}" != "$1" ] || echo "${kv#*=}"; done; }
state_is() { # state_is KEY STATE [REASON]: every task of the job is in STATE (with REASON when given)
  local got
  got=$(squeue -h -j "$(id_of "$1")" -o '%T %r' 2>/dev/null | sort -u)
  if [ -n "${3:-}" ]; then [ "$got" = "$2 $3" ]; else [ -n "$got" ] && ! grep -qv "^$2 " <<<"$got"; fi
}
in_sacct() { sacct -n -X -P -j "$(id_of "$1")" -o state | grep -q "^$2"; }
# slurmctld tells slurmdbd of a job's start asynchronously, so sacct lags the queue by seconds: the demo's
# sacct_running, run right after this script, once printed 0 records while 11 jobs ran.
running_in_sacct() { [ "$(sacct -a -n -X -s running -o jobid | wc -l)" -ge "$(squeue -h -t R -o %i | wc -l)" ]; }
expect() {
  local what=$1
  shift
  wait_until 25 "$@" || {
    squeue -o '%.8i %.12j %.8u %.9P %.10T %.6D %R' >&2
    die "workload: $what did not happen" "$TB_LOG/slurmctld.log"
  }
}
expect "train-llm running" state_is RUNNING_MULTINODE_GPU RUNNING
expect "cancel-me running" state_is CANCELLED_RUNNING RUNNING
scancel "$CANCEL_RUNNING" "$CANCEL_PENDING"
expect "the array running" state_is RUNNING_ARRAY RUNNING
expect "the newline job running" state_is RUNNING_NEWLINE RUNNING
expect "the step job running" state_is RUNNING_STEPS RUNNING
expect "carol's first job running" state_is RUNNING_LIMITED RUNNING
expect "big-pretrain pending on Resources" state_is PENDING_RESOURCES PENDING Resources
expect "finetune pending on Dependency" state_is PENDING_DEPENDENCY PENDING Dependency
expect "carol's second job pending on the QOS limit" state_is PENDING_QOS PENDING QOSMaxJobsPerUserLimit
expect "the COMPLETED row in sacct" in_sacct COMPLETED COMPLETED
expect "the FAILED row in sacct" in_sacct FAILED FAILED
expect "the running job's CANCELLED row in sacct" in_sacct CANCELLED_RUNNING CANCELLED
expect "the pending job's CANCELLED row in sacct" in_sacct CANCELLED_PENDING CANCELLED
expect "every running job in sacct" running_in_sacct

printf '%s\n' "${ids[@]}" | tee "$TB/workload.env"
log "workload in place in $(since "$t0"); job $(id_of TIMEOUT) reaches TIMEOUT in 1-1.5 min"
