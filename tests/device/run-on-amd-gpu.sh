#!/bin/bash
# The AMD GPU check, for a machine with an AMD GPU and ROCm's libamd_smi.so (no such machine is lent to this project
# yet; the fake libamd_smi.so carries the same checks in CI): the real-library tests of nvml_device_tests
# (RealAmdsmi.*: the declarations against the library's ABI, plausible values, every GPU registered for events, a
# sample's cost), then `gcm rocm_monitor --once`, `health_checks check-amd-smi` and the agent for a few windows on
# the real library. Everything it learns goes to $OUT: the library's answers (real-amdsmi.json), the records,
# amd-smi's own view for comparison. Expects .devlibs/ from tests/device/prepare.sh, as run-on-gpu.sh does.
set -u
OUT=${OUT:-/tmp/gcm-amd-gpu-check}
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1

lib=""
for p in $(ldconfig -p | awk '/libamd_smi\.so /{print $NF}') /opt/rocm/lib/libamd_smi.so; do
  if [ -e "$p" ]; then lib=$p; break; fi
done
echo "libamd_smi: ${lib:-not found}"
[ -n "$lib" ] || exit 1
{ amd-smi list --json; amd-smi static --json; amd-smi metric --json; } > "$OUT/amd-smi.txt" 2>&1 || true
logs=/tmp/gcm-amd-gpu-check-logs

GCM_REAL_AMDSMI="$lib" GCM_AMDSMI_DUMP="$OUT/real-amdsmi.json" .devlibs/nvml_device_tests --gtest_filter='RealAmdsmi.*'
echo "RealAmdsmi exit: $?"
LD_LIBRARY_PATH=.devlibs .devlibs/gcm rocm_monitor --once --push-interval 2 --collect-interval 1 \
  --amdsmi-library "$lib" --log-folder "$logs" --log-level DEBUG > "$OUT/rocm_monitor.jsonl"
echo "rocm_monitor exit: $?"
LD_LIBRARY_PATH=.devlibs .devlibs/gcm health_checks check-amd-smi check app -c gpu_num -c clock_freq \
  -c ecc_uncorrected -c bad_pages -c xgmi --gpu_num "$(grep -c '"gpu"' "$OUT/real-amdsmi.json" 2>/dev/null || echo 8)" \
  --amdsmi-library "$lib" --log-folder "$logs" --sink stdout > "$OUT/check-amd-smi.txt"
echo "check-amd-smi exit: $?"
port=19410
LD_LIBRARY_PATH=.devlibs .devlibs/gcm --config /dev/null --backend amdsmi agent --amdsmi-library "$lib" \
  --collect-interval 1 --window 5 --listen "127.0.0.1:$port" --path.run "$OUT/agent-run" --suite "" \
  --log-folder "$logs" &
agent=$!
sleep 12
curl -fsS "http://127.0.0.1:$port/metrics" > "$OUT/agent-metrics.txt" 2>&1
LD_LIBRARY_PATH=.devlibs .devlibs/gcm agent status --path.run "$OUT/agent-run" > "$OUT/agent-status.txt" 2>&1
kill "$agent" 2>/dev/null
wait "$agent" 2>/dev/null
echo "agent: $(grep -c '^gcm_gpu_up' "$OUT/agent-metrics.txt") GPU series; status in agent-status.txt"
exit 0
