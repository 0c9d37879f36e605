#!/usr/bin/env bash
# Records slurmrestd's answers (the endpoints slurm/rest_client.h serves) together with the CLI outputs of the same
# queries, one right after the other, into tests/fixtures/slurmrestd-22.05/ (or $1), for the golden test that the
# REST back end gives the collectors the same records as the CLI. Runs workload.sh first; the testbed is left running.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=${1:-$(cd "$TESTBED_SRC/../.." && pwd)/tests/fixtures/slurmrestd-22.05}
need_root
"$TESTBED_SRC/start.sh"
"$TESTBED_SRC/workload.sh" >/dev/null
# shellcheck source=env.sh
. "$TESTBED_SRC/env.sh"
rm -rf "$OUT"
mkdir -p "$OUT"

D='|#'
SQUEUE_FIELDS=TRES-PER-NODE,MINCPUS,JOBARRAYID,JOBID,NAME,TIMELIMIT,MINMEMORY,COMMAND,PRIORITY,STATE,USERNAME,NUMCPUS
SQUEUE_FIELDS+=,NUMNODES,TIMELEFT,TIMEUSED,NODELIST,DEPENDENCY,EXCNODES,STARTTIME,SUBMITTIME,ELIGIBLETIME,ACCRUETIME
SQUEUE_FIELDS+=,PENDINGTIME,COMMENT,PARTITION,ACCOUNT,QOS,REASON,TRES-ALLOC,RESERVATION,REQUEUE,FEATURE,RESTARTCNT
SQUEUE_FIELDS+=,SCHEDNODES,LASTSCHEDEVAL
squeue_format=$(tr ',' '\n' <<<"$SQUEUE_FIELDS" | sed "s/\$/:$D/" | paste -sd, -)
rest() { curl -sS --fail --max-time 30 --unix-socket "$GCM_TESTBED_REST_SOCKET" "http://slurmrestd$1"; }

# Both forms within one second of each other, so that squeue's TIMELEFT/TIMEUSED are those of the recorded instant.
for _ in 1 2 3 4 5; do
  at=$(date +%s)
  squeue --all -O "$squeue_format" --noheader >"$OUT/squeue-O.txt" 2>/dev/null
  rest /slurm/v0.0.38/jobs >"$OUT/jobs.json"
  [ "$(date +%s)" = "$at" ] && break
  sleep 0.3
done
echo "$at" >"$OUT/recorded-at.txt"
sinfo --all -N --json >"$OUT/sinfo-all-N.json"
rest /slurm/v0.0.38/nodes >"$OUT/nodes.json"
sinfo --all -N -O 'nodelist:256|,gres:256|,gresused:256|,cpus:256|,cpusstate:256|,statelong:256|,partitionname:256' \
  --noheader >"$OUT/sinfo-O-nodes.txt"
scontrol show partition -a -o >"$OUT/scontrol-partition.txt"
rest /slurm/v0.0.38/partitions >"$OUT/partitions.json"
sdiag --all >"$OUT/sdiag.txt"
rest /slurm/v0.0.38/diag >"$OUT/diag.json"
# slurmdbd's side (the sacctmgr collectors).
sacctmgr show qos -P >"$OUT/sacctmgr-qos.txt"
rest /slurmdb/v0.0.38/qos >"$OUT/qos.json"
sacctmgr show user format=User -nP >"$OUT/sacctmgr-users.txt"
rest /slurmdb/v0.0.38/users >"$OUT/users.json"
rest /slurmdb/v0.0.38/associations >"$OUT/associations.json"
for u in $(cat "$OUT/sacctmgr-users.txt"); do
  sacctmgr show user "$u" withassoc format=User,DefaultAccount,Account,DefaultQOS,QOS -P >"$OUT/sacctmgr-user-$u.txt"
  rest "/slurmdb/v0.0.38/associations?user=$u" >"$OUT/associations-$u.json"
done
# sacct_running: the running jobs slurmdbd holds, with their steps, and sacct's rows of the same second (Elapsed and
# CPUTime are computed by slurmdbd at the moment of the query).
for _ in 1 2 3 4 5; do
  at=$(date +%s)
  sacct -P -s running,r --delimiter "$D" -a -o all --duplicates --noconvert >"$OUT/sacct-running.txt"
  rest "/slurmdb/v0.0.38/jobs?state=running" >"$OUT/slurmdb-jobs-running.json"
  [ "$(date +%s)" = "$at" ] && break
  sleep 0.3
done
echo "$at" >"$OUT/sacct-recorded-at.txt"
rest /openapi/v3 | head -c 2000000 >/dev/null # answers (not kept: 1 MB of schema)

cat >"$OUT/README.md" <<EOM
# slurmrestd (Slurm 22.05, API v0.0.38) and the CLI at the same moment

Recorded by \`tests/testbed/record-rest-fixtures.sh\` on $(date -u +%Y-%m-%d) (TZ=$(date +%Z)) from $(sinfo -V) on
the testbed in \`workload.sh\`'s state; slurmrestd runs with \`rest_auth/local\` on its unix socket.
\`recorded-at.txt\` is the unix second in which \`squeue-O.txt\` and \`jobs.json\` were both written.

- \`squeue-O.txt\`: \`squeue --all -O <slurm_job_monitor's 35 columns, each followed by |#> --noheader\`
- \`jobs.json\`: \`GET /slurm/v0.0.38/jobs\`
- \`sinfo-all-N.json\`: \`sinfo --all -N --json\`
- \`nodes.json\`: \`GET /slurm/v0.0.38/nodes\`
- \`sinfo-O-nodes.txt\`: slurm_monitor's \`sinfo --all -N -O nodelist:256|,gres:256|,... --noheader\`
- \`scontrol-partition.txt\`: \`scontrol show partition -a -o\` (the scontrol collector)
- \`partitions.json\`: \`GET /slurm/v0.0.38/partitions\`
- \`sdiag.txt\`: \`sdiag --all\`
- \`diag.json\`: \`GET /slurm/v0.0.38/diag\`
- \`sacctmgr-qos.txt\`, \`qos.json\`: \`sacctmgr show qos -P\` and \`GET /slurmdb/v0.0.38/qos\` (the QOS \`capped\` sets
  every limit sacctmgr prints)
- \`sacctmgr-users.txt\`, \`users.json\`: \`sacctmgr show user format=User -nP\` and \`GET /slurmdb/v0.0.38/users\`
- \`sacctmgr-user-U.txt\`, \`associations-U.json\`: \`sacctmgr show user U withassoc
  format=User,DefaultAccount,Account,DefaultQOS,QOS -P\` and \`GET /slurmdb/v0.0.38/associations?user=U\`;
  \`associations.json\`: every association
- \`sacct-running.txt\`, \`slurmdb-jobs-running.json\`: sacct_running's \`sacct -P -s running,r --delimiter '|#' -a -o all
  --duplicates --noconvert\` and \`GET /slurmdb/v0.0.38/jobs?state=running\`, within the second in
  \`sacct-recorded-at.txt\` (job 9's SubmitLine holds a newline, so its sacct row spans two lines)
EOM
log "recorded $(find "$OUT" -type f ! -name README.md | wc -l) files into $OUT"
