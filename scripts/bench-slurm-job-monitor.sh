#!/usr/bin/env bash
# Whole-process benchmark of `gcm slurm_job_monitor --once --sink do_nothing` on generated outputs: fake `squeue`
# and `sinfo` first on PATH print 10 000 / 100 000 jobs and 10 000 nodes. Prints the median wall time and peak RSS
# of RUNS runs, and the ratio to GCM's 43.7 s / 59 MiB measured with the same inputs (spec/design.md §7).
# Usage: scripts/bench-slurm-job-monitor.sh [BUILD_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
RUNS="${RUNS:-5}"
WORK="$(mktemp -d /tmp/gcm-bench-sjm-XXXXXX)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

# n jobs of squeue -O ...:|# output: two thirds running on 2 nodes with 16 GPUs, one third pending.
gen_squeue() {
  awk -v n="$1" 'BEGIN {
    for (i = 1; i <= n; i++) {
      run = (i % 3 != 0); a = 1000 + (i % 8990)
      printf "%s|#10|#%s|#%d|#train-job-%d|#3-00:00:00|#60G|#/home/u/run.sh|#0.00001234|#%s|#user%d|#80|#2|#2-23:00:00|#1:00:00|#%s|#(null)|#|#%s|#2026-11-29T09:00:00|#2026-11-29T09:00:00|#2026-11-29T09:00:00|#3600|#(null)|#gpu|#acct%d|#normal|#%s|#cpu=160,mem=120G,node=2,billing=160,gres/gpu=16|#(null)|#1|#(null)|#0|#(null)|#\n",
        (i % 2 ? "gres/gpu:8" : "N/A"), (i % 5 ? i "" : i "_" (i % 10)), 1000000 + i, i,
        (run ? "RUNNING" : "PENDING"), i % 100, (run ? "node[" a "-" a + 1 "]" : ""),
        (run ? "2026-11-29T10:00:00" : "N/A"), i % 20, (run ? "None" : "Resources")
    }
  }'
}

# sinfo -N -o %all with n nodes: the testbed's header and first row, renamed per node.
gen_sinfo() {
  local fixture="$ROOT/tests/fixtures/slurm-22.05/sinfo-all.txt"
  head -1 "$fixture"
  sed -n 2p "$fixture" | awk -v n="$1" '{ for (i = 1; i <= n; i++) { l = $0; name = sprintf("node%05d", i);
      gsub(/\|node1 /, "|" name " ", l); gsub(/\|node1\|/, "|" name "|", l); print l } }'
}

gen_sinfo 10000 >"$WORK/sinfo.txt"
gen_squeue 10000 >"$WORK/squeue-10k.txt"
gen_squeue 100000 >"$WORK/squeue-100k.txt"
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexec cat %s\n' "$WORK/sinfo.txt" >"$WORK/bin/sinfo"
chmod +x "$WORK/bin/sinfo"

run_with() {  # jobs-file -> "wall_ms rss_kib" medians
  printf '#!/bin/sh\nexec cat %s\n' "$1" >"$WORK/bin/squeue"
  chmod +x "$WORK/bin/squeue"
  local walls=() rss=()
  for _ in $(seq 1 "$RUNS"); do
    PATH="$WORK/bin:$PATH" /usr/bin/time -f '%e %M' -o "$WORK/time.txt" "$BUILD/gcm" slurm_job_monitor --once \
      --sink do_nothing --cluster bench --log-folder "$WORK" >/dev/null 2>&1 || { echo "gcm failed" >&2; exit 1; }
    read -r w r <"$WORK/time.txt"
    walls+=("$w"); rss+=("$r")
  done
  echo "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")" \
       "$(printf '%s\n' "${rss[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")"
}

echo "== slurm_job_monitor --once --sink do_nothing, fake sinfo (10 000 nodes) and squeue (median of $RUNS runs)"
for jobs in 10k 100k; do
  read -r w r < <(run_with "$WORK/squeue-$jobs.txt")
  printf '%-5s jobs + 10k nodes: %6.3f s wall, %6d KiB peak RSS' "$jobs" "$w" "$r"
  if [ "$jobs" = 100k ]; then
    awk -v w="$w" -v r="$r" 'BEGIN { printf "  (GCM: 43.7 s, 59 MiB: %.0fx faster, %.1fx less memory; budget 0.5 s)", 43.7 / (w > 0 ? w : 0.01), 59 * 1024 / r }'
  fi
  echo
done
