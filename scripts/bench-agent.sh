#!/usr/bin/env bash
# gcm agent as a whole process on 8 fake H100s (tests/fake_nvml/scenarios/h100x8.json), against nvml_monitor run as
# a daemon on the same scenario in the same script (the baseline):
#   - CPU per sample and RSS, and RSS growth between two points of a long fast run (collect-interval 0.01 s);
#   - CPU as % of one core at collect-interval 1 s and 10 s (window 30 s), and nvml_monitor's at 1 s;
#   - NVML calls per GPU per sample (gcm_gpu_nvml_calls), /metrics render time and size;
#   - the spool's append and replay rate (bench/spool_bench).
# CPU and RSS come from /proc/<pid>/stat and /proc/<pid>/status of the running daemon.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
FAST_S="${AGENT_BENCH_FAST_S:-60}"   # seconds of the fast run (about 100 samples a second)
SLOW_S="${AGENT_BENCH_SLOW_S:-60}"   # seconds of each run at 1 s and 10 s
WORK="$(mktemp -d /tmp/gcm-bench-agent-XXXXXX)"
export GCM_NVML_LIBRARY="$BUILD/fake_nvml/libnvidia-ml.so.1"
export GCM_FAKE_NVML_SCENARIO="$ROOT/tests/fake_nvml/scenarios/h100x8.json"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14+$15)/hz}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
metric() { curl -s "http://127.0.0.1:$1/metrics" | awk -v m="$2" '!found && index($0, m)==1 {print $NF; found=1}'; }

start_agent() {  # port collect window -> pid
  "$BUILD/gcm" --config /dev/null agent --listen "127.0.0.1:$1" --collect-interval "$2" --window "$3" \
    --path.run "$WORK/run-$1" --path.kmsg "$WORK/no-kmsg" --suite "" --gpu-job-mapping-dir "$WORK/map" \
    --log-folder "$WORK/logs-$1" >/dev/null 2>&1 &
  echo $!
}
wait_metric() {  # port name
  for _ in $(seq 1 100); do [ -n "$(metric "$1" "$2")" ] && return 0; sleep 0.1; done
  echo "no $2 on port $1" >&2; return 1
}

echo "== gcm agent, 8 fake GPUs: a fast run (collect-interval 0.01 s, window 1 s) for $FAST_S s"
port=$(free_port); pid=$(start_agent "$port" 0.01 1); PIDS+=("$pid")
wait_metric "$port" gcm_agent_samples_total
sleep 5
s1=$(metric "$port" gcm_agent_samples_total); c1=$(cpu_s "$pid"); r1=$(rss_kib "$pid")
sleep "$FAST_S"
s2=$(metric "$port" gcm_agent_samples_total); c2=$(cpu_s "$pid"); r2=$(rss_kib "$pid")
calls=$(metric "$port" 'gcm_gpu_nvml_calls{gpu="0"')
awk -v s1="$s1" -v s2="$s2" -v c1="$c1" -v c2="$c2" -v r1="$r1" -v r2="$r2" 'BEGIN{
  n=s2-s1; printf "samples %d -> %d (%d): CPU %.1f us per sample of 8 GPUs (windows included)\n", s1, s2, n, (c2-c1)/n*1e6;
  printf "RSS %d KiB after %d samples, %d KiB after %d: growth %+d KiB\n", r1, s1, r2, s2, r2-r1 }'
echo "NVML calls per GPU per sample: ${calls:-?}"
# /metrics: size and render time (the page is rendered once per window; a scrape copies it)
size=$(curl -s "http://127.0.0.1:$port/metrics" | wc -c)
t=$(for _ in $(seq 1 50); do curl -s -o /dev/null -w '%{time_total}\n' "http://127.0.0.1:$port/metrics"; done |
    sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
echo "/metrics: $size bytes, median scrape $(awk -v t="$t" 'BEGIN{printf "%.2f", t*1000}') ms (curl, loopback)"
kill "$pid"; wait "$pid" 2>/dev/null || true

for interval in 1 10; do
  port=$(free_port); pid=$(start_agent "$port" "$interval" 30); PIDS+=("$pid")
  wait_metric "$port" gcm_agent_samples_total
  c1=$(cpu_s "$pid"); sleep "$SLOW_S"; c2=$(cpu_s "$pid"); r=$(rss_kib "$pid")
  awk -v i="$interval" -v a="$c1" -v b="$c2" -v s="$SLOW_S" -v r="$r" \
    'BEGIN{printf "gcm agent, collect-interval %2s s: %.3f %% of one core, RSS %d KiB\n", i, (b-a)/s*100, r}'
  kill "$pid"; wait "$pid" 2>/dev/null || true
done

port=$(free_port)
"$BUILD/gcm" --config /dev/null nvml_monitor --sink prometheus -o "listen=127.0.0.1:$port" --collect-interval 1 \
  --push-interval 30 --interval 30 --log-folder "$WORK/nvml-logs" >/dev/null 2>&1 &
pid=$!; PIDS+=("$pid")
sleep 2; c1=$(cpu_s "$pid"); sleep "$SLOW_S"; c2=$(cpu_s "$pid"); r=$(rss_kib "$pid")
awk -v a="$c1" -v b="$c2" -v s="$SLOW_S" -v r="$r" \
  'BEGIN{printf "baseline nvml_monitor daemon, collect-interval 1 s: %.3f %% of one core, RSS %d KiB\n", (b-a)/s*100, r}'
kill "$pid"; wait "$pid" 2>/dev/null || true

echo
echo "== the agent's sampling path 100 000 times in one process (bench/agent_soak): CPU per sample, RSS growth"
"$BUILD/bench/agent_soak" 100000

echo
echo "== the agent's OTLP spool (append with fdatasync, replay with durable acks)"
"$BUILD/bench/spool_bench" --benchmark_min_time=0.5 --benchmark_format=console
