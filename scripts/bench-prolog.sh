#!/usr/bin/env bash
# What `gcm prolog` adds to a job's start on the live testbed, `srun -w node1 true` timed end to end:
#   - with and without: Prolog= unset, /bin/true and the gcm prolog script (3 checks: 2 NVML checks on the fake
#     NVML, as the default suite's fast GPU checks, and one external command), in alternating blocks (ROUNDS x BLOCK);
#   - paired: RUNS interleaved rotations of one Prolog= script that execs /bin/true or gcm as a file says (and, with
#     BASE=<build dir>, that build's gcm as a baseline), the median of per-rotation differences;
#   - `gcm prolog`, `gcm --version` and /bin/true run alone.
# Needs the testbed up (tests/testbed/start.sh) and GCM_TESTBED_DIR / GCM_TESTBED_PORT_BASE of that testbed; puts
# hooks.conf back.
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
# The mapping files and state go where a node keeps /run/gcm: on a tmpfs (on a disk, ext4 flushes each mapping
# file the prolog renames over an old one, which a node's /run never does).
RUNDIR="$(mktemp -d "$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp )/gcm-bench-prolog-run-XXXXXX")"
chmod 755 "$RUNDIR"
restore() { cp "$WORK/hooks.saved" "$HOOKS"; scontrol reconfigure || true; rm -rf "$WORK" "$RUNDIR"; }
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
state_dir = "$RUNDIR/state"
gpu_job_mapping_dir = "$RUNDIR/gpu-jobs/{node}"
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
# Whole-prolog cost, "with and without": Prolog= unset, /bin/true (the floor of any prolog: slurmd forking and
# waiting for a program that does nothing, named directly as a deployment names gcm-prolog) and the gcm prolog
# script, in alternating blocks of BLOCK jobs (a reconfigure between blocks), ROUNDS times; the median over rounds
# of each block's median difference to the unset block of its round, so that drift between rounds cancels.
ROUNDS="${ROUNDS:-6}"
BLOCK="${BLOCK:-7}"
set_prolog "$WORK/prolog.sh"
"${SRUN[@]}"
grep -q "PASS" "$WORK/logs/prolog_logs/node1.log" || { echo "the prolog did not pass:" >&2; cat "$WORK/logs/prolog_logs/node1.log" >&2; exit 1; }
true_adds=()
gcm_adds=()
nones=()
for _ in $(seq 1 "$ROUNDS"); do
  declare -A block=()
  for cfg in none true gcm; do
    case $cfg in none) set_prolog "" ;; true) set_prolog /bin/true ;; gcm) set_prolog "$WORK/prolog.sh" ;; esac
    "${SRUN[@]}" >/dev/null  # the first job after a reconfigure is not counted
    block[$cfg]=$(RUNS=$BLOCK median_ms "${SRUN[@]}")
  done
  nones+=("${block[none]}")
  true_adds+=("$(awk -v a="${block[true]}" -v b="${block[none]}" 'BEGIN {printf "%d", (a - b) * 1000}')")
  gcm_adds+=("$(awk -v a="${block[gcm]}" -v b="${block[none]}" 'BEGIN {printf "%d", (a - b) * 1000}')")
  unset block
done
median_us() { printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1} END {printf "%.2f", v[int((NR+1)/2)]/1000}'; }
without=$(printf '%s\n' "${nones[@]}" | sort -n | awk '{v[NR]=$1} END {printf "%.2f", v[int((NR+1)/2)]}')
true_added=$(median_us "${true_adds[@]}")
gcm_added=$(median_us "${gcm_adds[@]}")
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
awk -v a="$without" -v ta="$true_added" -v ga="$gcm_added" -v rounds="$ROUNDS" -v block="$BLOCK" -v c="$alone" -v f="$true_alone" -v v="$version" -v n="$RUNS" \
    -v p="$paired" -v bp="$base_paired" -v base="${BASE:-}" -v loadavg="$(cut -d' ' -f1 /proc/loadavg)" -v cpus="$(nproc)" 'BEGIN {
  printf "srun true on node1 (load %s on %d CPUs); budget: +50 ms added by the prolog\n", loadavg, cpus
  printf "  with and without, %d rounds of blocks of %d jobs: no Prolog %.1f ms; Prolog=/bin/true adds %.1f ms; Prolog=gcm prolog (script) adds %.1f ms\n", rounds, block, a, ta, ga
  printf "  paired, interleaved (%d pairs): gcm prolog adds %.1f ms over a /bin/true prolog; with the /bin/true prolog'"'"'s own %.1f ms: +%.1f ms\n", n, p, ta, p + ta
  printf "  alone: gcm prolog (3 checks, fake NVML) %.1f ms; gcm --version %.1f ms; /bin/true %.1f ms\n", c, v, f
  if (bp != "") printf "  baseline (%s), in the same rotation: adds %.1f ms over the /bin/true prolog; this build %.1f ms (%.2fx)\n", base, bp, p, p / bp }'
