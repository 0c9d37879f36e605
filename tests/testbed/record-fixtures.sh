#!/usr/bin/env bash
# Records the output of every Slurm command line the collectors and health checks run (gcm-reference.md §1.5 and
# the checks that call Slurm) against the live testbed, one file per command, into tests/fixtures/slurm-<major.minor>/
# of the Slurm it runs (GCM_TESTBED_SLURM; tests/fixtures/slurm-22.05 for the system's) or the directory given as $1,
# with a README.md that names the exact command line of each file.
# It starts the testbed when needed, runs workload.sh, and waits (about 1.5 min) for the job that reaches TIMEOUT,
# so every job state is present. The testbed is left running.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
"$TESTBED_SRC/start.sh"
VERSION=$(slurm_version)
OUT=${1:-$(cd "$TESTBED_SRC/../.." && pwd)/tests/fixtures/slurm-${VERSION%.*}}
workload_start=$(date +%s)
"$TESTBED_SRC/workload.sh" >/dev/null
id_of() { sed -n "s/^$1=//p" "$TB/workload.env"; }
timeout_job=$(id_of TIMEOUT)
log "waiting for job $timeout_job to reach TIMEOUT (Slurm checks time limits every 30 s)"
timed_out() { sacct -n -X -P -j "$timeout_job" -o state | grep -qx TIMEOUT; }
wait_until 150 timed_out || die "job $timeout_job did not reach TIMEOUT" "$TB_LOG/slurmctld.log"

rm -rf "$OUT"
mkdir -p "$OUT"
README="$OUT/README.md"
ENTRIES=$(mktemp)
trap 'rm -f "$ENTRIES"' EXIT

# show_argv ARG...: the command line as one would type it in a POSIX shell.
show_argv() {
  local a out=()
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./:=,%@+-]+$ ]]; then out+=("$a"); else out+=("'${a//\'/\'\\\'\'}'"); fi
  done
  printf '%s' "${out[*]}"
}

# rec FILE NOTE ARGV...: run ARGV, stdout into FILE; README gets the command line, its exit status and any stderr.
rec() {
  local file=$1 note=$2 rc=0 err
  shift 2
  err=$("$@" 2>&1 >"$OUT/$file") || rc=$?
  # shellcheck disable=SC2016 # the backquotes are Markdown
  {
    printf -- '- `%s`: `%s`' "$file" "$(show_argv "$@")"
    [ -z "$note" ] || printf ' (%s)' "$note"
    ((rc == 0)) || printf '. Exit status %d' "$rc"
    if ((rc != 0)) && [ ! -s "$OUT/$file" ]; then
      rm -f "$OUT/$file"
      printf ', no output (file not kept)'
    fi
    [ -z "$err" ] || printf '; stderr: `%s`' "$(tr '\n' ' ' <<<"$err" | sed 's/ *$//')"
    printf '\n'
  } >>"$ENTRIES"
}

D='|#' # GCM's SLURM_CLI_DELIMITER
TERMINAL=boot_fail,bf,cancelled,ca,completed,cd,deadline,dl,failed,f,node_fail,nf,out_of_memory,oom,preempted,pr
TERMINAL+=,requeued,rq,resizing,rs,revoked,rv,timeout,to
SQUEUE_FIELDS=TRES-PER-NODE,MINCPUS,JOBARRAYID,JOBID,NAME,TIMELIMIT,MINMEMORY,COMMAND,PRIORITY,STATE,USERNAME,NUMCPUS
SQUEUE_FIELDS+=,NUMNODES,TIMELEFT,TIMEUSED,NODELIST,DEPENDENCY,EXCNODES,STARTTIME,SUBMITTIME,ELIGIBLETIME,ACCRUETIME
SQUEUE_FIELDS+=,PENDINGTIME,COMMENT,PARTITION,ACCOUNT,QOS,REASON,TRES-ALLOC,RESERVATION,REQUEUE,FEATURE,RESTARTCNT
SQUEUE_FIELDS+=,SCHEDNODES
squeue_format=$(tr ',' '\n' <<<"$SQUEUE_FIELDS" | sed "s/\$/:$D/" | paste -sd, -)
now=$(date +%s)
# slurm_monitor's window: [now - interval, now] as Pacific-time ISO strings with their UTC offset, each passed with
# its flag in ONE argv element (so sacct sees a leading space). The interval covers the workload.
interval=$((now - workload_start + 60))
pacific() { TZ=America/Los_Angeles date -d "@$1" +%Y-%m-%dT%H:%M:%S%:z; }
naive() { date -d "@$1" +%Y-%m-%dT%H:%M:%S; }

rec sinfo-V.txt "clusterscope.slurm_version()" sinfo -V
rec sinfo-O-nodes.txt "slurm_monitor, nodes" sinfo --all -N -O \
  'nodelist:256|,gres:256|,gresused:256|,cpus:256|,cpusstate:256|,statelong:256|,partitionname:256' --noheader
rec sinfo-all.txt "slurm_job_monitor, nodes" sinfo --all -N -o %all
rec sinfo-all-N.json "slurm_job_monitor, newer GCM: nodes from JSON" sinfo --all -N --json
rec sinfo.json "JSON form" sinfo --json
rec sinfo-node7-state.txt "health check node-slurm-state, on the drained node" sinfo -n node7 -o %T -h
rec squeue-O.txt "slurm_job_monitor, jobs: 34 fields each followed by |#" squeue --all -O "$squeue_format" --noheader
rec squeue.json "JSON form" squeue --json
rec sdiag.txt "slurm_monitor, Slurm older than 23.02" sdiag --all
rec sdiag-json.txt "slurm_monitor, Slurm 23.02 and newer (22.05 has no --json)" sdiag --all --json
# slurmctld's own OpenMetrics (MetricsType=metrics/openmetrics, 25.11), served on its port, right after the commands
# slurm_monitor runs, so its numbers can be compared with theirs (tests SlurmMonitorOpenMetrics.*).
if grep -q '^MetricsType=metrics/openmetrics' "$SLURM_CONF"; then
  for m in nodes jobs partitions scheduler; do
    rec "openmetrics-$m.txt" "compared with slurm_monitor's round" \
      curl -sS --fail --max-time 10 "http://127.0.0.1:$PORT_CTLD/metrics/$m"
  done
fi
rec sacct-slurm-monitor.txt "slurm_monitor, jobs: GCM's exact argv, offsets included" \
  sacct -a -D -X -P --noconvert "-S $(pacific $((now - interval)))" "-E $(pacific "$now")" \
  --format=jobid,user,alloccpus,alloctres,reqnodes,reqtres,submit,start,end,state,allocnodes,elapsed,suspended,account
rec sacct-slurm-monitor-local.txt "the same window as naive local times" \
  sacct -a -D -X -P --noconvert -S "$(naive $((now - interval)))" -E "$(naive "$now")" \
  --format=jobid,user,alloccpus,alloctres,reqnodes,reqtres,submit,start,end,state,allocnodes,elapsed,suspended,account
rec sacct-running.txt "sacct_running; one running job's SubmitLine holds a newline" \
  sacct -P -s running,r --delimiter "$D" -a -o all --duplicates --noconvert
rec sacct-fsacct-terminal.txt "sacct_backfill through fsacct: the argv fsacct builds, start 2 min early, End appended" \
  sacct -P -a --duplicates --noconvert --clusters "$CLUSTER" -E "$(naive "$now")" --delimiter "$D" \
  --state "$TERMINAL" -o all,end -S "$(naive $((workload_start - 120)))"
rec sacctmgr-qos.txt "sacctmgr_qos" sacctmgr show qos -P
rec sacctmgr-users.txt "sacctmgr_user, the user list" sacctmgr show user format=User -nP
for u in $(sacctmgr show user format=User -nP); do
  rec "sacctmgr-user-$u.txt" "sacctmgr_user, per user" \
    sacctmgr show user "$u" withassoc format=User,DefaultAccount,Account,DefaultQOS,QOS -P
done
rec scontrol-partition.txt "scontrol collector" scontrol show partition -a -o
rec scontrol-config.txt "scontrol_config" scontrol show config
rec scontrol-jobs-d.txt "shelper, every job" scontrol show jobs -d
train=$(id_of RUNNING_MULTINODE_GPU)
rec "scontrol-job-$train-d.txt" "shelper, the 2-node GPU job" scontrol show jobs "$train" -d
steps=$(id_of RUNNING_STEPS)
steps_node=$(squeue -h -j "$steps" -o %N)
rec scontrol-listpids.txt \
  "shelper runs it without arguments on a real node; with several slurmd on one host it needs the node name" \
  scontrol listpids "$steps" "$steps_node"
rec scontrol-ping.txt "health check slurmctld-count" scontrol ping
# GCM's 2026 collectors (gcm-newer.md §1.2-1.6).
SPRIO_CODES='%i|%r|%u|%o|%Y|%S|%a|%A|%F|%J|%P|%n|%Q|%N'
rec sprio.txt "sprio collector: GCM's format codes; 22.05 knows neither %o nor %n and leaves both out" \
  sprio -h --sort=r,-y -o "$SPRIO_CODES"
rec sshare.txt "sshare collector" sshare -a -P
rec scontrol-show-topo.txt "scontrol_topology collector, topology/tree (22.05 has no topology/block)" \
  scontrol show topo
rec squeue-O-lastschedeval.txt "slurm_job_monitor, newer GCM: the 34 fields and LASTSCHEDEVAL" \
  squeue --all -O "$squeue_format,LASTSCHEDEVAL:$D" --noheader
rec sdiag-before-reset.txt "slurm_monitor --sdiag-reset: the counters before the reset" sdiag --all
rec sdiag-reset.txt "slurm_monitor --sdiag-reset" sdiag --reset
rec sdiag-after-reset.txt "the counters just after the reset" sdiag --all
rec scontrol-show-node.txt "health check cluster-availability" scontrol show node

{
  cat <<EOF
# Slurm ${VERSION%.*} outputs recorded from the project's testbed

Recorded by \`tests/testbed/record-fixtures.sh\` on $(date -u +%Y-%m-%d) (TZ=$(date +%Z)) from $(sinfo -V)$(
  [ -z "$GCM_TESTBED_SLURM_PREFIX" ] || echo " (built by tests/testbed/build-slurm.sh)") on
Debian 12: 8 slurmd (\`node[1-8]\`, 4 CPUs, 2 fake GPUs \`gpu:fake:2\` each), partitions \`gpu\` (node[1-6], default)
and \`debug\` (node[6-8]), accounts research/ml/infra, users alice/bob/carol/root, QOS normal/high/limited/capped.
\`tests/testbed/workload.sh\` put the cluster in this state (job ids):

$(sed 's/^/    /' "$TB/workload.env")

node7 is drained and node8 down, each with a reason. Job $timeout_job has reached TIMEOUT. Times are the machine's
local time; job ids, pids and times differ on every recording. Each file is the command's stdout.

Files and the exact command line (argv, shell-quoted) that produced each:

EOF
  cat "$ENTRIES"
} >"$README"
log "recorded $(find "$OUT" -type f ! -name README.md | wc -l) files into $OUT"
