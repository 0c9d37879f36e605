#!/usr/bin/env bash
# The prolog's agent-verdict check (the budget: "well under a millisecond" for the verdict, design.md §7 for the
# process), on an 8-GPU state file:
#   - in-process (bench/agent_verdict_bench, Google Benchmark): the check as the suite runner runs it, against reading
#     the file's bytes and read_agent_state alone, measured in the same run;
#   - as a whole process, `health_checks agent-verdict` on the state file a real `gcm agent` wrote for 8 fake H100s,
#     against /bin/true (the cost of starting any process) in the same run: the median wall time of RUNS runs of
#     each, in turn, timed with bash's $EPOCHREALTIME (no process of its own; /usr/bin/time's 10 ms resolution is too
#     coarse), and the median peak RSS of 9 runs. The agent's state is what it made of the scenario: GPU 3 is
#     degraded (hw_thermal), so the verdict is the CRITICAL one, message and all.
# Usage: scripts/bench-agent-verdict.sh [build] ; RUNS (default 201) runs per whole-process figure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
RUNS="${RUNS:-201}"
WORK="$(mktemp -d /tmp/gcm-bench-verdict-XXXXXX)"
HC="$BUILD/health_checks"
trap 'rm -rf "$WORK"' EXIT

echo "== agent-verdict in-process on an 8-GPU state file (bench/agent_verdict_bench)"
"$BUILD/bench/agent_verdict_bench" --benchmark_min_time=0.5 --benchmark_format=console | tee "$WORK/bench.txt"
# Ratios of CPU time (the 4th and 5th columns): on a shared machine wall time also counts the other jobs.
awk '
  function us(v, u) { return u == "ns" ? v / 1000 : u == "ms" ? v * 1000 : v }
  $1 ~ /^BM_/ { t[$1] = us($4, $5) }
  END {
    base = t["BM_BaselineReadFileBytes"]; parse = t["BM_ReadAgentState"]
    for (n in t) if (n ~ /^BM_AgentVerdictCheck/)
      printf "%s: %.1f us of CPU = %.1fx reading the file, %.2fx read_agent_state\n", n, t[n], t[n] / base,
        t[n] / parse
  }' "$WORK/bench.txt"

# A state file as the agent writes it: a short run of the real agent on 8 fake GPUs, stopped with SIGTERM (which
# writes its last window).
export GCM_NVML_LIBRARY="$BUILD/fake_nvml/libnvidia-ml.so.1"
export GCM_FAKE_NVML_SCENARIO="$ROOT/tests/fake_nvml/scenarios/h100x8.json"
"$BUILD/gcm" --config /dev/null agent --listen "" --collect-interval 0.1 --window 0.5 --path.run "$WORK/run" \
  --path.kmsg "$WORK/no-kmsg" --suite "" --gpu-job-mapping-dir "$WORK/map" --log-folder "$WORK/logs" >/dev/null 2>&1 &
agent=$!
for _ in $(seq 1 100); do [ -s "$WORK/run/agent-state.json" ] && break; sleep 0.1; done
sleep 1
kill "$agent"; wait "$agent" 2>/dev/null || true
[ -s "$WORK/run/agent-state.json" ] || { echo "the agent wrote no state file" >&2; exit 1; }
gpus=$(grep -o '"uuid"' "$WORK/run/agent-state.json" | wc -l)

time_us() {  # one run's wall time, in microseconds, appended to the file $1
  local out=$1 t0 t1
  shift
  t0=$EPOCHREALTIME
  "$@" >/dev/null 2>&1 || true
  t1=$EPOCHREALTIME
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%d\n", (b - a) * 1e6 }' >>"$out"
}
median() { sort -n "$1" | sed -n "$(((RUNS + 1) / 2))p"; }
rss_kib() {  # median peak RSS of 9 runs (the last line: time adds one for a non-zero exit before it)
  for _ in $(seq 9); do /usr/bin/time -f "%M" -o "$WORK/t" "$@" >/dev/null 2>&1 || true; tail -1 "$WORK/t"; done |
    sort -n | sed -n 5p
}
# The agent ran with 0.5 s windows: a stale-windows bar the benchmark cannot reach keeps the verdict the fresh one.
verdict=("$HC" agent-verdict bench nagios --path.run "$WORK/run" --stale-windows 1000000 --log-folder "$WORK/hc-logs")
"${verdict[@]}" --verbose-out || true
echo
echo "== agent-verdict as a whole process ($gpus GPUs in $(wc -c <"$WORK/run/agent-state.json") bytes; median of $RUNS runs)"
# The two in turn, so that the machine's load (other jobs on a shared host) weighs on both alike.
for _ in $(seq "$RUNS"); do time_us "$WORK/true.us" /bin/true; time_us "$WORK/verdict.us" "${verdict[@]}"; done
t_true=$(median "$WORK/true.us"); t_verdict=$(median "$WORK/verdict.us")
r_true=$(rss_kib /bin/true); r_verdict=$(rss_kib "${verdict[@]}")
printf '%-44s %7s us %7s KiB\n' "/bin/true (baseline)" "$t_true" "$r_true" \
  "health_checks agent-verdict" "$t_verdict" "$r_verdict"
awk -v v="$t_verdict" -v t="$t_true" 'BEGIN { printf "agent-verdict: %.1fx /bin/true (%+d us)\n", v / t, v - t }'
