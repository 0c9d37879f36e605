#!/usr/bin/env bash
# Whole-process benchmarks of the sacct commands (design.md §7, issue 4):
#   - `gcm sacct_publish --sink do_nothing` and `--sink stdout` (to /dev/null) on a generated sacct -P file made by
#     repeating the data rows of the reference's sample-sacct-output.txt (10 MB and 100 MB): MB/s, records/s and
#     peak RSS (RSS at 10 MB vs 100 MB shows it does not grow with the input);
#   - `gcm sacct_running --once --sink do_nothing` on the large running-jobs fixture (5 040 rows) through a fake sacct.
# Figures are medians of RUNS runs, with ratios to the reference's 7.6 MB/s (do_nothing) and 3.5 MB/s (stdout) at
# 52-56 MiB, and the budgets of design.md §7 (>= 1 GB/s, >= 400 MB/s). A baseline in the same run: `cat FILE > /dev/null`.
# Usage: scripts/bench-sacct.sh [BUILD_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
RUNS="${RUNS:-5}"
FIX="$ROOT/../shared/fixtures/gcm"
[ -f "$FIX/sample-sacct-output.txt" ] || { echo "no fixture $FIX/sample-sacct-output.txt" >&2; exit 1; }
WORK="$(mktemp -d /tmp/gcm-bench-sacct-XXXXXX)"
trap '[ -n "${KEEP:-}" ] || rm -rf "$WORK"' EXIT

gen() {  # MB -> file: the header, then the 68 data rows repeated until the size is reached
  local mb=$1 out="$WORK/sacct-${1}MB.txt"
  head -1 "$FIX/sample-sacct-output.txt" >"$out"
  tail -n +2 "$FIX/sample-sacct-output.txt" >"$WORK/rows.txt"
  local rows_size; rows_size=$(stat -c %s "$WORK/rows.txt")
  local reps=$(( mb * 1000000 / rows_size + 1 ))
  for _ in $(seq 1 "$reps"); do cat "$WORK/rows.txt"; done >>"$out"
  echo "$out"
}

median() { sort -n | sed -n "$(( (RUNS + 1) / 2 ))p"; }

measure() {  # file sink -> "wall_s rss_kib cpu_s" (cpu: user+system, what a loaded machine does not inflate)
  local walls=() rss=() cpus=()
  for _ in $(seq 1 "$RUNS"); do
    TZ=America/Los_Angeles /usr/bin/time -f '%e %M %U %S' -o "$WORK/time.txt" "$BUILD/gcm" sacct_publish --delimiter '|' \
      --cluster bench --log-folder "$WORK" --sink "$2" "$1" >/dev/null 2>"$WORK/err.txt" ||
      { echo "gcm failed:" >&2; cat "$WORK/err.txt" >&2; exit 1; }
    read -r w r u sy <"$WORK/time.txt"
    walls+=("$w"); rss+=("$r"); cpus+=("$(awk -v u="$u" -v s="$sy" 'BEGIN { print u + s }')")
  done
  echo "$(printf '%s\n' "${walls[@]}" | median) $(printf '%s\n' "${rss[@]}" | median) $(printf '%s\n' "${cpus[@]}" | median)"
}

f10=$(gen 10); f100=$(gen 100)
rows100=$(( $(wc -l <"$f100") - 1 )); bytes100=$(stat -c %s "$f100")
t0=$(date +%s.%N); cat "$f100" >/dev/null; t1=$(date +%s.%N)
echo "== sacct_publish on sample-sacct-output.txt rows repeated: 100 MB file = $bytes100 bytes, $rows100 records"
echo "   (baseline: cat of the 100 MB file to /dev/null: $(awk -v a="$t0" -v b="$t1" -v s="$bytes100" 'BEGIN { printf "%.0f MB/s", s / 1e6 / (b - a) }'))"
for sink in do_nothing stdout; do
  read -r w10 r10 c10 < <(measure "$f10" "$sink")
  read -r w r c < <(measure "$f100" "$sink")
  ref=7.6; budget=1000; [ "$sink" = stdout ] && { ref=3.5; budget=400; }
  awk -v s="$sink" -v w="$w" -v c="$c" -v r="$r" -v r10="$r10" -v b="$bytes100" -v n="$rows100" -v ref="$ref" -v bud="$budget" 'BEGIN {
    w = (w > 0 ? w : 0.01); c = (c > 0 ? c : 0.01); mbs = b / 1e6 / w
    printf "--sink %-10s %7.1f MB/s  %9.0f records/s  %6.2f s wall  peak RSS %6.1f MiB (10 MB input: %.1f MiB)\n", s, mbs, n / w, w, r / 1024, r10 / 1024
    printf "                  CPU time %.2f s: %.1f MB/s, %.0f records/s of CPU\n", c, b / 1e6 / c, n / c
    printf "                  vs reference %.1f MB/s at 52-56 MiB: %.0fx faster, %.1fx less memory; budget >= %d MB/s: %s\n", ref, mbs / ref, 54 * 1024 / r, bud, (mbs >= bud ? "met" : "NOT met")
  }'
done

echo "== sacct_running --once --sink do_nothing, fake sacct printing sample-sacct-running-output-large.txt"
mkdir -p "$WORK/bin"
printf '#!/bin/sh\nexec cat %s\n' "$FIX/sample-sacct-running-output-large.txt" >"$WORK/bin/sacct"
chmod +x "$WORK/bin/sacct"
walls=(); rss=()
for _ in $(seq 1 "$RUNS"); do
  PATH="$WORK/bin:$PATH" /usr/bin/time -f '%e %M' -o "$WORK/time.txt" "$BUILD/gcm" sacct_running --once \
    --sink do_nothing --cluster bench --log-folder "$WORK" >/dev/null 2>&1 || { echo "gcm failed" >&2; exit 1; }
  read -r w r <"$WORK/time.txt"; walls+=("$w"); rss+=("$r")
done
w=$(printf '%s\n' "${walls[@]}" | median); r=$(printf '%s\n' "${rss[@]}" | median)
size=$(stat -c %s "$FIX/sample-sacct-running-output-large.txt")
awk -v w="$w" -v r="$r" -v s="$size" 'BEGIN { w = (w > 0 ? w : 0.005); printf "5040 rows (%.1f MB): %.3f s wall (%.0f records/s, %.0f MB/s), peak RSS %.1f MiB\n", s / 1e6, w, 5040 / w, s / 1e6 / w, r / 1024 }'
