#!/usr/bin/env bash
# The agent's cost of the jobs' own signal: two agents on the same 8 fake GPUs, side by side for the same time, one
# with RANKS ranks of one job reporting STEPS_PER_S steps a second each through python/gcm_reporter.py (flushing
# every FLUSH_S seconds) over its unix socket, the other with none. Prints each agent's CPU and RSS.
#   bench/scripts/job_signal_load.sh [build-dir]    (RANKS=64 STEPS_PER_S=10 FLUSH_S=1 SECONDS_=60)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
RANKS="${RANKS:-64}" STEPS_PER_S="${STEPS_PER_S:-10}" FLUSH_S="${FLUSH_S:-1}" SECONDS_="${SECONDS_:-60}"
WORK="$(mktemp -d /tmp/gcm-bench-jobsignal-XXXXXX)"
export GCM_NVML_LIBRARY="$BUILD/fake_nvml/libnvidia-ml.so.1"
export GCM_FAKE_NVML_SCENARIO="$ROOT/tests/fake_nvml/scenarios/h100x8.json"
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{print ($14+$15)/hz}' "/proc/$1/stat"; }
rss_kib() { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }

start_agent() {  # name -> pid
  "$BUILD/gcm" --config /dev/null agent --listen "" --collect-interval 1 --window 30 --path.run "$WORK/$1" \
    --path.kmsg "$WORK/no-kmsg" --suite "" --gpu-job-mapping-dir "$WORK/map" --log-folder "$WORK/logs-$1" \
    >/dev/null 2>&1 &
  echo $!
}
loaded=$(start_agent loaded); PIDS+=("$loaded")
idle=$(start_agent idle); PIDS+=("$idle")
for _ in $(seq 1 100); do [ -S "$WORK/loaded/job-signals.sock" ] && break; sleep 0.1; done

for r in $(seq 0 $((RANKS - 1))); do
  SLURM_JOB_ID=4242 SLURM_PROCID=$r SLURM_LOCALID=$r CUDA_VISIBLE_DEVICES=$((r % 8)) \
    python3 -c "
import sys, time; sys.path.insert(0, '$ROOT/python')
from gcm_reporter import StepReporter
rep = StepReporter(endpoint='unix://$WORK/loaded/job-signals.sock', flush_interval=$FLUSH_S)
period = 1.0 / $STEPS_PER_S; end = time.time() + $SECONDS_ + 10
while time.time() < end:
    rep.record(period, period * 0.8, 4096); time.sleep(period)
rep.close(); print(rep.sent, rep.failures, rep.last_error or '', file=sys.stderr)
" 2>>"$WORK/ranks.err" &
  PIDS+=("$!")
done
sleep 5
c1l=$(cpu_s "$loaded"); c1i=$(cpu_s "$idle")
sleep "$SECONDS_"
c2l=$(cpu_s "$loaded"); c2i=$(cpu_s "$idle"); rl=$(rss_kib "$loaded"); ri=$(rss_kib "$idle")
awk -v a="$c1l" -v b="$c2l" -v c="$c1i" -v d="$c2i" -v rl="$rl" -v ri="$ri" -v s="$SECONDS_" -v n="$RANKS" \
    -v k="$STEPS_PER_S" -v f="$FLUSH_S" 'BEGIN{
  printf "%d ranks x %d steps/s (a request per rank every %g s), %d s:\n", n, k, f, s;
  printf "  agent with them:    CPU %.2f %% of a core, RSS %d KiB\n", (b-a)/s*100, rl;
  printf "  agent without them: CPU %.2f %% of a core, RSS %d KiB\n", (d-c)/s*100, ri;
  printf "  difference: %+.2f %% of a core, %+d KiB\n", ((b-a)-(d-c))/s*100, rl-ri }'
