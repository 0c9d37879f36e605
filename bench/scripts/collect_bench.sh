#!/usr/bin/env bash
# slurmctld RPCs and wall time of one cycle of slurm_job_monitor (JSON nodes) and slurm_monitor (issue 21's
# figure): as two `gcm <collector> --once` processes, as `gcm collect --once --separate-queries` (one process,
# nothing shared), and as `gcm collect --once` (one Slurm snapshot per cycle). On the live testbed in workload.sh's
# state; RPCs from slurmctld's own statistics (slurmrestd's /diag, rpcs_by_message_type) before and after each run,
# the /diag requests themselves (REQUEST_STATS_INFO) left out; wall time the median of RUNS runs. No --cluster is
# given: each process asks Slurm for the cluster name, as a deployment without it in the config does.
# Usage: bench/scripts/collect_bench.sh [build] [RUNS]   (with the testbed up: tests/testbed/start.sh)
set -euo pipefail
BUILD=$(realpath "${1:-build}")
RUNS=${2:-5}
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck source=../../tests/testbed/env.sh
. "$SRC/tests/testbed/env.sh"
bash "$SRC/tests/testbed/workload.sh" >/dev/null
dir=$(mktemp -d /tmp/gcm-collect-bench-XXXXXX)
cleanup() {
  rm -rf "$dir"
  scancel $(cut -d= -f2 "$GCM_TESTBED_DIR/workload.env") 2>/dev/null || true
  scontrol update nodename=node7,node8 state=resume 2>/dev/null || true
}
trap cleanup EXIT

cat >"$dir/gcm.toml" <<TOML
[gcm.collect]
collectors = ["slurm_job_monitor", "slurm_monitor"]
[gcm.slurm_job_monitor]
sink = "do_nothing"
sinfo_format = "json"
[gcm.slurm_monitor]
sink = "do_nothing"
TOML

rpcs() { curl -sS --unix-socket "$GCM_TESTBED_REST_SOCKET" http://slurmrestd/slurm/v0.0.38/diag; }
rpc_diff() {
  python3 - "$1" "$2" <<'PY'
import json, sys
count = lambda f: {r["message_type"]: r["count"] for r in json.load(open(f))["statistics"]["rpcs_by_message_type"]}
a, b = count(sys.argv[1]), count(sys.argv[2])
d = {k: b[k] - a.get(k, 0) for k in b if k != "REQUEST_STATS_INFO" and b[k] - a.get(k, 0)}
print(sum(d.values()), " ".join(f"{k.replace('REQUEST_', '')}={v}" for k, v in sorted(d.items())))
PY
}

G=("$BUILD/gcm" --config "$dir/gcm.toml")
separate() {
  "${G[@]}" slurm_job_monitor --once --log-folder "$dir" && "${G[@]}" slurm_monitor --once --log-folder "$dir"
}
collect_separate() { "${G[@]}" collect --once --separate-queries --log-folder "$dir"; }
collect_shared() { "${G[@]}" collect --once --log-folder "$dir"; }

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

printf '%-46s %6s %9s  %s\n' "cycle" "RPCs" "wall (s)" "RPCs by type"
for way in separate collect_separate collect_shared; do
  rpcs >"$dir/before.json"
  $way >"$dir/out" 2>&1 || { cat "$dir/out"; exit 1; }
  rpcs >"$dir/after.json"
  read -r total types < <(rpc_diff "$dir/before.json" "$dir/after.json")
  printf '%-46s %6s %9.3f  %s\n' "$way" "$total" "$(median_wall $way)" "$types"
done
