#!/usr/bin/env bash
# Whole-process cost of single health-check runs (issue budgets: < 5 ms and < 4 MiB for one check-nvidia-smi process
# on an 8-GPU fake node; the xid scan at >= 200 MB/s), with baselines measured in the same run:
#   /bin/true (process start), `health_checks --version` (our binary's start-up alone).
# Usage: bench/scripts/health_checks_bench.sh [build] [RUNS]
set -euo pipefail
BUILD=$(realpath "${1:-build}")
RUNS=${2:-21}
HC="$BUILD/health_checks"
dir=$(mktemp -d /tmp/gcm-hc-bench-XXXXXX)
trap 'rm -rf "$dir"' EXIT

python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
gpu = lambda i: {"uuid": f"GPU-{i:08d}", "memory": {"total": 85899345920, "used": 1048576},
                 "ecc": {"mode": 1, "volatile_corrected": 0, "volatile_uncorrected": 0},
                 "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0}}
json.dump({"devices": [gpu(i) for i in range(8)]}, open(d + "/scenario.json", "w"))
# A 10 MB kernel log: ordinary boot and driver lines with an XID every ~2000 lines, in /dev/kmsg record form.
lines = ["6,{n},{t},-;mlx5_core 0000:17:00.0: ib0: link becomes ready",
         "6,{n},{t},-;EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Quota mode: none.",
         "4,{n},{t},-;NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.159.04",
         "6,{n},{t},-;audit: type=1400 audit(1700000000.000:42): apparmor=\"STATUS\" operation=\"profile_load\""]
xid = "4,{n},{t},-;NVRM: Xid (PCI:0000:0d:00): 31, pid=3234, name=python, Ch 00000008, intr 00000000. MMU Fault"
with open(d + "/kmsg.txt", "w") as f:
    n = 0; size = 0
    while size < 10 * 1000 * 1000:
        s = (xid if n % 2000 == 1999 else lines[n % len(lines)]).format(n=n, t=1000000 + n * 10) + "\n"
        f.write(s); size += len(s); n += 1
PY
export GCM_FAKE_NVML_SCENARIO="$dir/scenario.json" GCM_NVML_LIBRARY="$BUILD/fake_nvml/libnvidia-ml.so.1" \
  GCM_GPU_NODE_ID_FILE="$dir/gpu_node_id"

# median wall (ms) and median peak RSS (KiB) of RUNS runs of a command
measure() {
  local label=$1; shift
  for _ in $(seq "$RUNS"); do
    /usr/bin/time -f "%e %M" -o "$dir/t" "$@" >/dev/null 2>&1 || true
    cat "$dir/t"
  done | sort -n | awk -v label="$label" '{ w[NR] = $1; r[NR] = $2 }
    END { asort(r); m = int((NR + 1) / 2); printf "%-40s %8.1f ms %8.1f MiB\n", label, w[m] * 1000, r[m] / 1024 }'
}
# /usr/bin/time has 10 ms resolution: time the fast commands as a loop of RUNS in one shell, per-run mean.
loop_ms() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$RUNS"); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  echo $(((end - start) / RUNS / 1000))
}

echo "runs per figure: $RUNS; kernel log: $(du -h "$dir/kmsg.txt" | cut -f1)"
t_true=$(loop_ms /bin/true)
t_version=$(loop_ms "$HC" --version)
t_smi=$(loop_ms "$HC" check-nvidia-smi bench nagios -c gpu_num -c ecc_uncorrected_volatile_total -c row_remap \
  --log-folder "$dir/logs")
t_xid=$(loop_ms "$HC" check-syslogs xid bench nagios --path.kmsg "$dir/kmsg.txt" --log-folder "$dir/logs")
printf "%-40s %8s us\n" "/bin/true (baseline)" "$t_true" "health_checks --version (baseline)" "$t_version" \
  "check-nvidia-smi x3 sub-checks, 8 GPUs" "$t_smi" "check-syslogs xid, 10 MB log" "$t_xid"
awk -v v="$t_version" -v s="$t_smi" -v x="$t_xid" -v t="$t_true" 'BEGIN {
  printf "check-nvidia-smi: %.2f x the start-up of health_checks --version, %.1f x /bin/true\n", s / v, s / t
  printf "xid scan: %.0f MB/s (10 MB in %.1f ms, start-up %.1f ms subtracted)\n", 10 / ((x - v) / 1e6), x / 1000, v / 1000 }'
measure "peak RSS: health_checks --version" "$HC" --version
measure "peak RSS: check-nvidia-smi" "$HC" check-nvidia-smi bench nagios -c gpu_num -c ecc_uncorrected_volatile_total \
  -c row_remap --log-folder "$dir/logs"
measure "peak RSS: check-syslogs xid (10 MB)" "$HC" check-syslogs xid bench nagios --path.kmsg "$dir/kmsg.txt" \
  --log-folder "$dir/logs"
# Instruction counts (valgrind --tool=callgrind): repeatable whatever else the machine is doing.
if command -v valgrind >/dev/null; then
  instr() { { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null || true; } | awk '/Collected/ { print $4 }'; }
  i_true=$(instr /bin/true)
  i_version=$(instr "$HC" --version)
  i_smi=$(instr "$HC" check-nvidia-smi bench nagios -c gpu_num -c ecc_uncorrected_volatile_total -c row_remap \
    --log-folder "$dir/logs")
  i_xid=$(instr "$HC" check-syslogs xid bench nagios --path.kmsg "$dir/kmsg.txt" --log-folder "$dir/logs")
  printf "%-40s %12s instructions\n" "/bin/true" "$i_true" "health_checks --version" "$i_version" \
    "check-nvidia-smi x3, 8 GPUs" "$i_smi" "check-syslogs xid, 10 MB log" "$i_xid"
  awk -v v="$i_version" -v s="$i_smi" -v x="$i_xid" -v b="$(stat -c %s "$dir/kmsg.txt")" 'BEGIN {
    printf "check-nvidia-smi: %.2f x health_checks --version\n", s / v
    printf "xid scan: %.1f instructions per byte of log\n", (x - v) / b }'
fi
