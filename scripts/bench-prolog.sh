#!/usr/bin/env bash
# What `gcm prolog` adds to a job's start on the live testbed: the median wall time of `srun -w node1 true` without
# a Prolog= and with Prolog= running the suite (3 NVML checks on the fake NVML, as the default suite's fast GPU
# checks), RUNS times each (default 41), then RUNS interleaved pairs (the same Prolog= script exec'ing /bin/true or
# gcm in turn), plus the median of `gcm prolog` run alone. Needs the testbed up
# (tests/testbed/start.sh) and GCM_TESTBED_DIR / GCM_TESTBED_PORT_BASE of that testbed; puts hooks.conf back.
# BASE=<build dir> adds that build's gcm to the interleaved rotation as a baseline.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
RUNS="${RUNS:-41}"
# shellcheck source=../tests/testbed/env.sh
. "$ROOT/tests/testbed/env.sh"
HOOKS="$(dirname "$SLURM_CONF")/hooks.conf"
WORK="$(mktemp -d /tmp/gcm-bench-prolog-XXXXXX)"
chmod 755 "$WORK"
cp "$HOOKS" "$WORK/hooks.saved"
restore() { cp "$WORK/hooks.saved" "$HOOKS"; scontrol reconfigure || true; rm -rf "$WORK"; }
trap restore EXIT

cat >"$WORK/nvml.json" <<JSON
{"devices": [
  {"uuid": "GPU-b0", "ecc": {"mode": 1, "volatile_uncorrected": 0}, "retired_pages": {"single": 0, "double": 0, "pending": 0},
   "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0}},
  {"uuid": "GPU-b1", "ecc": {"mode": 1, "volatile_uncorrected": 0}, "retired_pages": {"single": 0, "double": 0, "pending": 0},
   "remapped_rows": {"correctable": 0, "uncorrectable": 0, "pending": 0, "failure": 0}}]}
JSON
cat >"$WORK/suite.toml" <<TOML
[suite]
log_folder = "$WORK/logs"
state_dir = "$WORK/state"
gpu_job_mapping_dir = "$WORK/gpu-jobs/{node}"
[environment]
GCM_FAKE_NVML_SCENARIO = "$WORK/nvml.json"
GCM_NVML_LIBRARY = "$BUILD/fake_nvml/libnvidia-ml.so.1"
GCM_GPU_NODE_ID_FILE = "$WORK/gpu_node_id"
[prolog]
budget = 15
[[prolog.checks]]
name = "gpu count"
check = "check-nvidia-smi"
args = ["-c", "gpu_num", "--gpu_num", "2"]
[[prolog.checks]]
name = "gpu memory errors"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total", "-c", "row_remap", "-c", "gpu_retired_pages"]
[[prolog.checks]]
name = "tmp writable"
command = ["/usr/bin/test", "-w", "/tmp"]
exit_codes = "zero-ok"
TOML
printf '#!/bin/sh\nexec %s prolog --suite %s\n' "$BUILD/gcm" "$WORK/suite.toml" >"$WORK/prolog.sh"
chmod 755 "$WORK/prolog.sh"

median_ms() { # command...: median wall ms of RUNS runs
  local t=()
  for _ in $(seq 1 "$RUNS"); do
    local a b
    a=$(date +%s%N)
    "$@" >/dev/null
    b=$(date +%s%N)
    t+=("$(( (b - a) / 1000 ))")
  done
  printf '%s\n' "${t[@]}" | sort -n | awk '{v[NR]=$1} END {printf "%.2f", v[int((NR+1)/2)]/1000}'
}
set_prolog() {
  # Never an empty file: Slurm warns about an empty included file on every command.
  { echo "# scripts/bench-prolog.sh"; [ -z "$1" ] || echo "Prolog=$1"; } >"$HOOKS"
  scontrol reconfigure
  for _ in $(seq 1 100); do
    if scontrol show config | grep -q "^Prolog *= *${1:-(null)}$"; then return; fi
    sleep 0.1
  done
  echo "Prolog=$1 did not take effect" >&2
  exit 1
}
SRUN=(srun -w node1 -p gpu --gres=gpu:2 -J gcm-bench-prolog true)
set_prolog ""
"${SRUN[@]}"
without=$(median_ms "${SRUN[@]}")
# The floor of any prolog on this machine: slurmd forking and waiting for a program that does nothing.
printf '#!/bin/sh\nexec /bin/true\n' >"$WORK/true.sh"
chmod 755 "$WORK/true.sh"
set_prolog "$WORK/true.sh"
"${SRUN[@]}"
with_true=$(median_ms "${SRUN[@]}")
set_prolog "$WORK/prolog.sh"
"${SRUN[@]}"
grep -q "PASS" "$WORK/logs/prolog_logs/node1.log" || { echo "the prolog did not pass:" >&2; cat "$WORK/logs/prolog_logs/node1.log" >&2; exit 1; }
with=$(median_ms "${SRUN[@]}")
# Paired and interleaved: one Prolog= script that execs either gcm or /bin/true as a file says, switched between
# consecutive jobs, so both see the same moment of the machine; the median of the per-pair differences is what gcm
# adds over the cheapest possible prolog, free of the drift between blocks of runs.
# With BASE=<another build dir>, a third mode execs that build's gcm in the same rotation: the baseline of a change,
# measured in the same run.
BASE_GCM="${BASE:+$(cd "$BASE" && pwd)/gcm}"
printf '#!/bin/sh\nread -r mode < %s/mode\nif [ "$mode" = gcm ]; then exec %s prolog --suite %s; fi\nif [ "$mode" = base ]; then exec %s prolog --suite %s; fi\nexec /bin/true\n' \
  "$WORK" "$BUILD/gcm" "$WORK/suite.toml" "${BASE_GCM:-/bin/false}" "$WORK/suite.toml" >"$WORK/switch.sh"
chmod 755 "$WORK/switch.sh"
echo true >"$WORK/mode"
chmod 644 "$WORK/mode"
set_prolog "$WORK/switch.sh"
"${SRUN[@]}"
modes=(true gcm)
[ -z "$BASE_GCM" ] || modes+=(base)
diffs=()
base_diffs=()
for r in $(seq 1 "$RUNS"); do
  declare -A took=()
  k=$(( r % ${#modes[@]} ))  # the order rotates, so that no mode always follows the same one
  for mode in "${modes[@]:k}" "${modes[@]:0:k}"; do
    echo "$mode" >"$WORK/mode"
    a=$(date +%s%N)
    "${SRUN[@]}" >/dev/null
    b=$(date +%s%N)
    took[$mode]=$(( (b - a) / 1000 ))
  done
  diffs+=("$(( took[gcm] - took[true] ))")
  [ -z "$BASE_GCM" ] || base_diffs+=("$(( took[base] - took[true] ))")
  unset took
done
median_of() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {printf "%.2f", v[int((NR+1)/2)]/1000}'; }
paired=$(median_of "${diffs[@]}")
base_paired=""
[ -z "$BASE_GCM" ] || base_paired=$(median_of "${base_diffs[@]}")
alone=$(SLURMD_NODENAME=node1 SLURM_JOB_ID=1 SLURM_JOB_GPUS=0,1 median_ms "$BUILD/gcm" prolog --suite "$WORK/suite.toml")
true_alone=$(median_ms /bin/true)
version=$(median_ms "$BUILD/gcm" --version)
awk -v a="$without" -v t="$with_true" -v b="$with" -v c="$alone" -v f="$true_alone" -v v="$version" -v n="$RUNS" \
    -v p="$paired" -v bp="$base_paired" -v base="${BASE:-}" -v loadavg="$(cut -d' ' -f1 /proc/loadavg)" -v cpus="$(nproc)" 'BEGIN {
  printf "srun true on node1, median of %d (load %s on %d CPUs):\n", n, loadavg, cpus
  printf "  no Prolog %.1f ms; Prolog=/bin/true %.1f ms (+%.1f); Prolog=gcm prolog %.1f ms (+%.1f ms, %.2fx; +%.1f ms over the /bin/true prolog). Budget: +50 ms\n", a, t, t - a, b, b - a, b / a, b - t
  printf "  paired, interleaved: gcm prolog adds %.1f ms over a /bin/true prolog (median of %d pairs); with the /bin/true prolog'"'"'s own %.1f ms: +%.1f ms. Budget: +50 ms\n", p, n, t - a, p + t - a
  printf "  alone: gcm prolog (3 checks, fake NVML) %.1f ms; gcm --version %.1f ms; /bin/true %.1f ms\n", c, v, f
  if (bp != "") printf "  baseline (%s), in the same rotation: adds %.1f ms over the /bin/true prolog; this build %.1f ms (%.2fx)\n", base, bp, p, p / bp }'
