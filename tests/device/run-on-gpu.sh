#!/bin/bash
# The GPU check, run on a machine with an NVIDIA driver (the project's `device` tool): the fake-driven NVML tests
# and the real-driver tests of nvml_device_tests, then `gcm nvml_monitor --once` on the real library. Everything it
# learns goes to $OUT: the driver's answers (real-nvml.json), test logs, nvidia-smi's view for comparison.
# Expects stripped build outputs in .devlibs/ (carried, made by tests/device/prepare.sh): nvml_device_tests,
# fake/libnvidia-ml.so.1, gcm and the shared libraries gcm needs, so nothing is built on the GPU machine.
set -u
OUT=${OUT:-/tmp/gcm-gpu-check}
mkdir -p "$OUT"
exec > >(tee "$OUT/run.log") 2>&1

lib=""
for p in $(ldconfig -p | awk '/libnvidia-ml\.so\.1 /{print $NF}') /usr/local/nvidia/lib64/libnvidia-ml.so.1 \
         /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1; do
  if [ -e "$p" ]; then lib=$p; break; fi
done
echo "libnvidia-ml: ${lib:-not found}"
{ nvidia-smi --query-gpu=name,uuid,pci.bus_id,memory.total,memory.used,temperature.gpu,power.draw,power.limit,clocks.max.sm,pcie.link.gen.max,pcie.link.width.max,ecc.mode.current --format=csv; nvidia-smi -q; } > "$OUT/nvidia-smi.txt" 2>&1 || true
logs=/tmp/gcm-gpu-check-logs

# A process on the GPU with a Slurm-like environment, to check process listing and attribution on a real driver.
SLURM_JOB_ID=777 SLURM_JOB_GPUS=0 GPU_DEVICE_ORDINAL=0 SLURM_JOB_USER=gpucheck SLURM_CPUS_ON_NODE=8 \
  python3 -c "import torch, time; x = torch.ones(1 << 24, device='cuda'); time.sleep(90)" &
gpu_pid=$!
for _ in $(seq 60); do
  nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | grep -qw "$gpu_pid" && break
  sleep 0.5
done
echo "GPU process $gpu_pid; nvidia-smi lists: $(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader 2>&1 | tr '\n' ' ')"

GCM_FAKE_NVML=.devlibs/fake/libnvidia-ml.so.1 GCM_REAL_NVML="$lib" GCM_NVML_DUMP="$OUT/real-nvml.json" \
  GCM_EXPECT_GPU_PID=$gpu_pid .devlibs/nvml_device_tests
echo "nvml_device_tests exit: $?"

LD_LIBRARY_PATH=.devlibs .devlibs/gcm nvml_monitor --once --push-interval 2 --collect-interval 1 --nvml-library "$lib" \
  --log-folder "$logs" --log-level DEBUG > "$OUT/nvml_monitor.jsonl"
echo "nvml_monitor exit: $?"
LD_LIBRARY_PATH=.devlibs .devlibs/gcm nvml_monitor --once --push-interval 1 --collect-interval 1 --nvml-library "$lib" \
  --log-folder "$logs" --sink prometheus -o textfile="$OUT/metrics.prom"
echo "nvml_monitor (prometheus) exit: $?"
timer="/usr/bin/time -v"
[ -x /usr/bin/time ] || timer=""
LD_LIBRARY_PATH=.devlibs $timer .devlibs/gcm nvml_monitor --once --push-interval 5 --collect-interval 0.01 \
  --nvml-library "$lib" --log-folder "$logs" --sink do_nothing 2> "$OUT/time-v.txt"
echo "nvml_monitor 500 samples exit: $?; $(grep -E 'Maximum resident|User time|System time|Elapsed' "$OUT/time-v.txt" | tr '\n' ' ')"
kill $gpu_pid 2>/dev/null
wait "$gpu_pid" 2>/dev/null  # not a bare wait: the tee of the log would never end
exit 0
