#!/usr/bin/env bash
# slurmctld RPCs and wall time of one collection round, CLI back end against slurmrestd (--slurm-backend rest), on
# the live testbed in workload.sh's state (issue 19's figure). RPCs are counted from slurmctld's own statistics
# (slurmrestd's /diag, rpcs_by_message_type) before and after each run; the two /diag requests themselves
# (REQUEST_STATS_INFO) are left out. Wall time: the median of RUNS runs of `gcm <collector> --once`. slurmdbd's
# queries (slurm_monitor's sacct) go to the CLI with both back ends and are not slurmctld RPCs; the sacctmgr collectors
# and sacct_running are measured after them, by slurmdbd's RPCs.
# Usage: bench/scripts/slurm_backend_bench.sh [build] [RUNS]   (with the testbed up: tests/testbed/start.sh)
set -euo pipefail
BUILD=$(realpath "${1:-build}")
RUNS=${2:-5}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../tests/testbed/env.sh
. "$SRC/tests/testbed/env.sh"
bash "$SRC/tests/testbed/workload.sh" >/dev/null
dir=$(mktemp -d /tmp/gcm-backend-bench-XXXXXX)
# Leave the testbed as the tests want it: the workload's jobs cancelled, its drained and down nodes resumed.
cleanup() {
  rm -rf "$dir"
  scancel $(cut -d= -f2 "$GCM_TESTBED_DIR/workload.env") 2>/dev/null || true
  scontrol update nodename=node7,node8 state=resume 2>/dev/null || true
}
trap cleanup EXIT
REST=(--slurm-backend rest --slurm-rest-url "unix:$GCM_TESTBED_REST_SOCKET")

rpcs() { curl -sS --unix-socket "$GCM_TESTBED_REST_SOCKET" http://slurmrestd/slurm/v0.0.38/diag; }
# rpc_diff BEFORE AFTER: "TYPE count" lines of what the run added, REQUEST_STATS_INFO left out.
rpc_diff() {
  python3 - "$1" "$2" <<'PY'
import json, sys
count = lambda f: {r["message_type"]: r["count"] for r in json.load(open(f))["statistics"]["rpcs_by_message_type"]}
a, b = count(sys.argv[1]), count(sys.argv[2])
d = {k: b[k] - a.get(k, 0) for k in b if k != "REQUEST_STATS_INFO" and b[k] - a.get(k, 0)}
print(sum(d.values()), " ".join(f"{k.replace('REQUEST_', '')}={v}" for k, v in sorted(d.items())))
PY
}
median_wall() {
  local t=()
  for _ in $(seq "$RUNS"); do
    local s e
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1
    e=$(date +%s.%N)
    t+=("$(echo "$e - $s" | bc)")
  done
  printf '%s\n' "${t[@]}" | sort -n | sed -n "$(((RUNS + 1) / 2))p"
}

printf '%-40s %6s %9s  %s\n' "round" "RPCs" "wall (s)" "RPCs by type"
for collector in slurm_job_monitor slurm_monitor; do
  for backend in cli rest rest-pinned; do
    args=("$BUILD/gcm" "$collector" --once --sink do_nothing --log-folder "$dir")
    [ "$backend" = rest ] && args+=("${REST[@]}")
    # The API version given: no /openapi/v3 (a 1 MB schema) per process; a daemon asks it once.
    [ "$backend" = rest-pinned ] && args+=("${REST[@]}" --slurm-rest-api-version v0.0.38)
    rpcs >"$dir/before.json"
    "${args[@]}" >/dev/null 2>&1
    rpcs >"$dir/after.json"
    read -r total types < <(rpc_diff "$dir/before.json" "$dir/after.json")
    printf '%-40s %6s %9.3f  %s\n' "$collector ($backend)" "$total" "$(median_wall "${args[@]}")" "$types"
  done
done

# The accounting collectors ask slurmdbd, not slurmctld: its RPCs from `sacctmgr show stats`, less what the two
# stats calls around a round add themselves (measured once, with nothing between them).
dbd_rpcs() { sacctmgr show stats 2>/dev/null | sed -n 's/^\s*\([A-Z_]*\)\s*(\s*[0-9]*)\s*count:\([0-9]*\).*/\1 \2/p'; }
# dbd_diff BEFORE AFTER [OVERHEAD]: "TOTAL TYPE=n ..." of what a round added, the overhead subtracted.
dbd_diff() {
  python3 - "$@" <<'PY'
import sys
read = lambda f: {k: int(v) for k, v in (l.split() for l in open(f) if l.strip())}
a, b = read(sys.argv[1]), read(sys.argv[2])
o = read(sys.argv[3]) if len(sys.argv) > 3 else {}
d = {k: b[k] - a.get(k, 0) - o.get(k, 0) for k in b}
d = {k: v for k, v in d.items() if v > 0 and k != "DBD_GET_STATS"}
print(sum(d.values()), " ".join(f"{k.replace('DBD_', '')}={v}" for k, v in sorted(d.items())))
PY
}
dbd_rpcs >"$dir/o1"
dbd_rpcs >"$dir/o2"
python3 - "$dir/o1" "$dir/o2" >"$dir/overhead" <<'PY'
import sys
read = lambda f: {k: int(v) for k, v in (l.split() for l in open(f) if l.strip())}
a, b = read(sys.argv[1]), read(sys.argv[2])
for k in b:
    if b[k] - a.get(k, 0) > 0: print(k, b[k] - a.get(k, 0))
PY
echo
printf '%-40s %6s %9s  %s\n' "round" "slurmdbd RPCs" "wall (s)" "RPCs by type"
for collector in sacctmgr_qos sacctmgr_user sacct_running; do
  for backend in cli rest-pinned; do
    args=("$BUILD/gcm" "$collector" --once --sink do_nothing --log-folder "$dir")
    [ "$backend" = rest-pinned ] && args+=("${REST[@]}" --slurm-rest-api-version v0.0.38)
    dbd_rpcs >"$dir/before"
    "${args[@]}" >/dev/null 2>&1
    dbd_rpcs >"$dir/after"
    read -r total types < <(dbd_diff "$dir/before" "$dir/after" "$dir/overhead")
    printf '%-40s %6s %9.3f  %s\n' "$collector ($backend)" "$total" "$(median_wall "${args[@]}")" "$types"
  done
done
