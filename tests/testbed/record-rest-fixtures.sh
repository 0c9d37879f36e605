#!/usr/bin/env bash
# Records slurmrestd's answers (the endpoints slurm/rest_client.h serves) together with the CLI outputs of the same
# queries, one right after the other, into tests/fixtures/slurmrestd-<major.minor>/ of the Slurm the testbed runs
# (GCM_TESTBED_SLURM; or $1), for the golden tests that the REST back end gives the collectors the same records as the
# CLI. The CLI outputs are at the top; the answers of each API version slurmrestd offers (v0.0.38 on 22.05, v0.0.40-42
# on 24.11, v0.0.41-44 on 25.11) are in a directory named after it. Runs workload.sh first; the testbed is left
# running.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

need_root
"$TESTBED_SRC/start.sh"
VERSION=$(slurm_version)
OUT=${1:-$(cd "$TESTBED_SRC/../.." && pwd)/tests/fixtures/slurmrestd-${VERSION%.*}}
"$TESTBED_SRC/workload.sh" >/dev/null
rm -rf "$OUT"
mkdir -p "$OUT"

rest() { curl -sS --fail --max-time 30 --unix-socket "$GCM_TESTBED_REST_SOCKET" "http://slurmrestd$1"; }
# The API versions slurmrestd offers, oldest first (Slurm writes a / in a JSON string as \/ from 23.02 on).
mapfile -t APIS < <(rest /openapi/v3 | sed 's|\\/|/|g' | grep -o '"/slurm/v[0-9.]*/' | cut -d/ -f3 | sort -uV)
((${#APIS[@]})) || die "slurmrestd lists no /slurm/vX.Y.Z/ path in /openapi/v3" "$TB_LOG/slurmrestd.log"
for api in "${APIS[@]}"; do mkdir -p "$OUT/$api"; done
# every_api FILE PATH: GET /slurm{,db}/<api>PATH of every version into <api>/FILE.
every_api() {
  local file=$1 path=$2 api
  for api in "${APIS[@]}"; do rest "${path/@/$api}" >"$OUT/$api/$file"; done
}

D='|#'
SQUEUE_FIELDS=TRES-PER-NODE,MINCPUS,JOBARRAYID,JOBID,NAME,TIMELIMIT,MINMEMORY,COMMAND,PRIORITY,STATE,USERNAME,NUMCPUS
SQUEUE_FIELDS+=,NUMNODES,TIMELEFT,TIMEUSED,NODELIST,DEPENDENCY,EXCNODES,STARTTIME,SUBMITTIME,ELIGIBLETIME,ACCRUETIME
SQUEUE_FIELDS+=,PENDINGTIME,COMMENT,PARTITION,ACCOUNT,QOS,REASON,TRES-ALLOC,RESERVATION,REQUEUE,FEATURE,RESTARTCNT
SQUEUE_FIELDS+=,SCHEDNODES,LASTSCHEDEVAL
squeue_format=$(tr ',' '\n' <<<"$SQUEUE_FIELDS" | sed "s/\$/:$D/" | paste -sd, -)

# Both forms within one second of each other, so that squeue's TIMELEFT/TIMEUSED are those of the recorded instant.
for _ in 1 2 3 4 5 6 7 8; do
  at=$(date +%s)
  squeue --all -O "$squeue_format" --noheader >"$OUT/squeue-O.txt" 2>/dev/null
  every_api jobs.json /slurm/@/jobs
  [ "$(date +%s)" = "$at" ] && break
  sleep 0.3
done
echo "$at" >"$OUT/recorded-at.txt"
sinfo --all -N --json >"$OUT/sinfo-all-N.json"
every_api nodes.json /slurm/@/nodes
sinfo --all -N -O 'nodelist:256|,gres:256|,gresused:256|,cpus:256|,cpusstate:256|,statelong:256|,partitionname:256' \
  --noheader >"$OUT/sinfo-O-nodes.txt"
scontrol show partition -a -o >"$OUT/scontrol-partition.txt"
every_api partitions.json /slurm/@/partitions
sdiag --all >"$OUT/sdiag.txt"
if version_at_least 23.02 "$VERSION"; then sdiag --all --json >"$OUT/sdiag-json.txt"; fi
every_api diag.json /slurm/@/diag
# slurmdbd's side (the sacctmgr collectors).
sacctmgr show qos -P >"$OUT/sacctmgr-qos.txt"
every_api qos.json /slurmdb/@/qos
sacctmgr show user format=User -nP >"$OUT/sacctmgr-users.txt"
every_api users.json /slurmdb/@/users
every_api associations.json /slurmdb/@/associations
mapfile -t users <"$OUT/sacctmgr-users.txt"
for u in "${users[@]}"; do
  sacctmgr show user "$u" withassoc format=User,DefaultAccount,Account,DefaultQOS,QOS -P >"$OUT/sacctmgr-user-$u.txt"
  every_api "associations-$u.json" "/slurmdb/@/associations?user=$u"
done
# sshare's fair-share tree, from API v0.0.39 (23.02) on.
sshare -a -P >"$OUT/sshare.txt"
for api in "${APIS[@]}"; do
  if version_at_least 0.0.39 "${api#v}"; then rest "/slurm/$api/shares" >"$OUT/$api/shares.json"; fi
done
# sacct_running: the running jobs slurmdbd holds, with their steps, and sacct's rows of the same second (Elapsed and
# CPUTime are computed by slurmdbd at the moment of the query).
for _ in 1 2 3 4 5 6 7 8; do
  at=$(date +%s)
  sacct -P -s running,r --delimiter "$D" -a -o all --duplicates --noconvert >"$OUT/sacct-running.txt"
  every_api slurmdb-jobs-running.json "/slurmdb/@/jobs?state=running"
  [ "$(date +%s)" = "$at" ] && break
  sleep 0.3
done
echo "$at" >"$OUT/sacct-recorded-at.txt"
rest /openapi/v3 >/dev/null # answers (not kept: megabytes of schema)

newline_job=$(sed -n 's/^RUNNING_NEWLINE=//p' "$TB/workload.env")
cat >"$OUT/README.md" <<EOM
# slurmrestd (Slurm ${VERSION%.*}, API ${APIS[*]}) and the CLI at the same moment

Recorded by \`tests/testbed/record-rest-fixtures.sh\` on $(date -u +%Y-%m-%d) (TZ=$(date +%Z)) from $(sinfo -V) on
the testbed in \`workload.sh\`'s state; slurmrestd runs with \`rest_auth/local\` on its unix socket. The CLI outputs
are at the top; each API version's answers are in its directory (\`${APIS[0]}/\` ... \`${APIS[-1]}/\`), asked one
right after the other. \`recorded-at.txt\` is the unix second in which \`squeue-O.txt\` and every \`jobs.json\` were
written.

- \`squeue-O.txt\`: \`squeue --all -O <slurm_job_monitor's 35 columns, each followed by |#> --noheader\`
- \`<api>/jobs.json\`: \`GET /slurm/<api>/jobs\`
- \`sinfo-all-N.json\`: \`sinfo --all -N --json\`
- \`<api>/nodes.json\`: \`GET /slurm/<api>/nodes\`
- \`sinfo-O-nodes.txt\`: slurm_monitor's \`sinfo --all -N -O nodelist:256|,gres:256|,... --noheader\`
- \`scontrol-partition.txt\`: \`scontrol show partition -a -o\` (the scontrol collector)
- \`<api>/partitions.json\`: \`GET /slurm/<api>/partitions\`
- \`sdiag.txt\`: \`sdiag --all\`$(version_at_least 23.02 "$VERSION" && printf '; `sdiag-json.txt`: `sdiag --all --json`')
- \`<api>/diag.json\`: \`GET /slurm/<api>/diag\`
- \`sacctmgr-qos.txt\`, \`<api>/qos.json\`: \`sacctmgr show qos -P\` and \`GET /slurmdb/<api>/qos\` (the QOS \`capped\`
  sets every limit sacctmgr prints)
- \`sacctmgr-users.txt\`, \`<api>/users.json\`: \`sacctmgr show user format=User -nP\` and \`GET /slurmdb/<api>/users\`
- \`sacctmgr-user-U.txt\`, \`<api>/associations-U.json\`: \`sacctmgr show user U withassoc
  format=User,DefaultAccount,Account,DefaultQOS,QOS -P\` and \`GET /slurmdb/<api>/associations?user=U\`;
  \`<api>/associations.json\`: every association
- \`sshare.txt\`: \`sshare -a -P\`; \`<api>/shares.json\`: \`GET /slurm/<api>/shares\` (API v0.0.39 and later)
- \`sacct-running.txt\`, \`<api>/slurmdb-jobs-running.json\`: sacct_running's \`sacct -P -s running,r --delimiter '|#' -a
  -o all --duplicates --noconvert\` and \`GET /slurmdb/<api>/jobs?state=running\`, within the second in
  \`sacct-recorded-at.txt\` (job $newline_job's SubmitLine holds a newline, so its sacct row spans two lines)
EOM
log "recorded $(find "$OUT" -type f ! -name README.md | wc -l) files into $OUT"
