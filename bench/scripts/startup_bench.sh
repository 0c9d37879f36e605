#!/usr/bin/env bash
# Start-up floors (design.md §7, issue 21): what one short gcm process costs over the process floor, for the
# commands a node runs most often (a health check from a prolog or Nagios, the help), against /bin/true and,
# when given, a previous build of gcm measured in the same run.
#   wall:          mean of RUNS runs in one shell loop (/usr/bin/time's 10 ms resolution is too coarse)
#   CPU, faults:   perf stat -r RUNS (task-clock and page faults; skipped without perf)
#   instructions:  valgrind --tool=callgrind, repeatable whatever else the machine is doing (skipped without it)
#   peak RSS:      /usr/bin/time, median of RUNS
# Usage: bench/scripts/startup_bench.sh [BUILD] [BASELINE_GCM_BINARY] (RUNS=200 by default)
set -euo pipefail
BUILD=$(realpath "${1:-build}")
BASE=${2:-}
RUNS=${RUNS:-200}
dir=$(mktemp -d /tmp/gcm-startup-bench-XXXXXX)
trap 'rm -rf "$dir"' EXIT
# Each binary is measured from a copy made here, as a new file: one that lld has just written, or one copied over
# an existing file, starts up to 0.3 ms slower than the same bytes written anew (as a package installs them), because
# the page cache holds them differently. health_checks is gcm under a second name (argv[0] dispatch): a link.
mkdir "$dir/now"
cp "$BUILD/gcm" "$dir/now/gcm"
ln -s "$dir/now/gcm" "$dir/health_checks"
[ -n "$BASE" ] && mkdir "$dir/base" && cp "$(realpath "$BASE")" "$dir/base/gcm" &&
  ln -s "$dir/base/gcm" "$dir/base/health_checks"

commands=("gcm --help" "gcm --version" "health_checks --version" "health_checks --help"
  "health_checks check-process check-zombie bench nagios --log-folder $dir/logs")

loop_us() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$RUNS"); do "$@" >/dev/null 2>&1 || true; done
  end=$(date +%s%N)
  echo $(((end - start) / RUNS / 1000))
}
perf_line() {  # -> "task-clock-ms page-faults"
  command -v perf >/dev/null || { echo "- -"; return; }
  perf stat -r "$RUNS" -x, -e task-clock,page-faults "$@" 2>&1 >/dev/null | awk -F, '
    $3 == "task-clock" { t = $1 } $3 == "page-faults" { f = $1 } END { printf "%.2f %d\n", t, f }'
}
instr() {
  command -v valgrind >/dev/null || { echo -; return; }
  { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null || true; } |
    awk '/Collected/ { print $4 }'
}
rss_kib() {
  for _ in $(seq 21); do
    /usr/bin/time -f "%M" -o "$dir/t" "$@" >/dev/null 2>&1 || true
    cat "$dir/t"
  done | sort -n | sed -n 11p
}
row() {  # label, command...
  local label=$1; shift
  local w p i r
  w=$(loop_us "$@"); p=$(perf_line "$@"); i=$(instr "$@"); r=$(rss_kib "$@")
  read -r cpu faults <<<"$p"
  printf "%-44s %7s us wall %6s ms CPU %5s faults %11s instr %7s KiB\n" "$label" "$w" "$cpu" "$faults" "$i" "$r"
  echo "$w" >"$dir/last"
}

echo "runs per figure: $RUNS"
row "/bin/true (process floor)" /bin/true
floor=$(cat "$dir/last")
for c in "${commands[@]}"; do
  read -r prog args <<<"$c"
  bin="$dir/$prog"
  [ "$prog" = gcm ] && bin="$dir/now/gcm"
  # shellcheck disable=SC2086
  row "${c%% --log-folder*}" "$bin" $args
  now=$(cat "$dir/last")
  if [ -n "$BASE" ]; then
    # shellcheck disable=SC2086
    row "  baseline build" "$dir/base/$prog" $args
    was=$(cat "$dir/last")
    awk -v n="$now" -v w="$was" -v f="$floor" 'BEGIN {
      printf "  over the floor: %.2f ms now, %.2f ms before (%.2fx)\n", (n - f) / 1000, (w - f) / 1000, (w - f) / (n - f) }'
  else
    awk -v n="$now" -v f="$floor" 'BEGIN { printf "  over the floor: %.2f ms\n", (n - f) / 1000 }'
  fi
done
