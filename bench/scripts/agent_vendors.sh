#!/usr/bin/env bash
# gcm agent on 8 fake MI300X (the fake libamd_smi.so, tests/fake_amdsmi/scenarios/mi300x8.json, gcm --backend
# amdsmi) against the same agent on 8 fake H100 (the fake NVML, tests/fake_nvml/scenarios/h100x8.json), by turns in
# one script: the library calls per GPU per sample (gcm_gpu_nvml_calls, gcm_gpu_amdsmi_calls), CPU
# per sample in a fast run (collect-interval 0.01 s, window 1 s), and % of one core and RSS at collect-interval 1 s
# (window 30 s). The fakes answer from memory, so this measures the agent's own cost per call and per GPU, not a
# driver's. CPU and RSS come from /proc/<pid>/stat and /proc/<pid>/status of the running agent.
#   bench/scripts/agent_vendors.sh [BUILD] [ROUNDS]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
ROUNDS="${2:-2}"
FAST_S="${AGENT_VENDORS_FAST_S:-20}"
SLOW_S="${AGENT_VENDORS_SLOW_S:-60}"
WORK="$(mktemp -d /tmp/gcm-bench-vendors-XXXXXX)"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14+$15)/hz}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" '!found && index($0, m)==1 {print $NF; found=1}'; }
wait_metric() {  # port name
  for _ in $(seq 1 100); do [ -n "$(metric "$1" "$2")" ] && return 0; sleep 0.1; done
  echo "no $2 on port $1" >&2
  return 1
}

start_agent() {  # vendor port collect window -> pid
  local backend env
  case $1 in
    amd) backend=amdsmi
      env=(GCM_AMDSMI_LIBRARY="$BUILD/fake_amdsmi/libamd_smi.so"
        GCM_FAKE_AMDSMI_SCENARIO="$ROOT/tests/fake_amdsmi/scenarios/mi300x8.json") ;;
    nvidia) backend=nvml
      env=(GCM_NVML_LIBRARY="$BUILD/fake_nvml/libnvidia-ml.so.1"
        GCM_FAKE_NVML_SCENARIO="$ROOT/tests/fake_nvml/scenarios/h100x8.json") ;;
  esac
  env "${env[@]}" "$BUILD/gcm" --config /dev/null --backend "$backend" agent --listen "127.0.0.1:$2" \
    --collect-interval "$3" --window "$4" --path.run "$WORK/run-$2" --path.kmsg "$WORK/no-kmsg" --suite "" \
    --gpu-job-mapping-dir "$WORK/map" --log-folder "$WORK/logs-$2" >/dev/null 2>&1 &
  echo $!
}

fast_run() {  # vendor
  local port pid s1 s2 c1 c2 calls
  port=$(free_port)
  pid=$(start_agent "$1" "$port" 0.01 1)
  PIDS+=("$pid")
  wait_metric "$port" gcm_agent_samples_total
  sleep 3
  s1=$(metric "$port" gcm_agent_samples_total); c1=$(cpu_s "$pid")
  sleep "$FAST_S"
  s2=$(metric "$port" gcm_agent_samples_total); c2=$(cpu_s "$pid")
  calls=$(metric "$port" "gcm_gpu_$([ "$1" = amd ] && echo amdsmi || echo nvml)_calls{gpu=\"0\"")
  awk -v v="$1" -v s1="$s1" -v s2="$s2" -v c1="$c1" -v c2="$c2" -v calls="${calls:-?}" 'BEGIN{
    n = s2 - s1
    printf "%-6s fast: %d samples, %.1f us of CPU per sample of 8 GPUs (windows included), %s calls per GPU per sample\n",
      v, n, (c2 - c1) / n * 1e6, calls }'
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

slow_run() {  # vendor
  local port pid c1 c2 r
  port=$(free_port)
  pid=$(start_agent "$1" "$port" 1 30)
  PIDS+=("$pid")
  wait_metric "$port" gcm_agent_samples_total
  c1=$(cpu_s "$pid"); sleep "$SLOW_S"; c2=$(cpu_s "$pid"); r=$(rss_kib "$pid")
  awk -v v="$1" -v a="$c1" -v b="$c2" -v s="$SLOW_S" -v r="$r" \
    'BEGIN{printf "%-6s collect-interval 1 s: %.3f %% of one core, RSS %d KiB\n", v, (b - a) / s * 100, r}'
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

echo "== gcm agent, 8 fake MI300X (amdsmi) against 8 fake H100 (NVML), $ROUNDS rounds by turns"
for ((round = 1; round <= ROUNDS; round++)); do
  echo "-- round $round"
  for v in nvidia amd; do fast_run "$v"; done
  for v in nvidia amd; do slow_run "$v"; done
done
