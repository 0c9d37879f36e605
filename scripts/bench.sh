#!/usr/bin/env bash
# Benchmarks: the sinks' encoders (Google Benchmark, with nlohmann::json as the in-run baseline) and whole-process
# figures of the binary (wall time and peak RSS, median of several runs, with /usr/bin/time -v).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
RUNS="${RUNS:-9}"
WORK="$(mktemp -d /tmp/gcm-bench-XXXXXX)"

echo "== encoders: 10 000 series (1 250 hosts x 8 GPUs, 5 measurements each)"
"$BUILD/bench/sink_bench" --benchmark_min_time=0.5 --benchmark_format=console | tee "$WORK/sink_bench.txt"
node -e '
  const t=require("fs").readFileSync(process.argv[1],"utf8");
  const ips=n=>{const m=t.match(new RegExp(n+"\\s.*items_per_second=([0-9.]+)([kM]?)/s"));if(!m)return NaN;return +m[1]*({k:1e3,M:1e6}[m[2]]||1);};
  const base=ips("BM_BaselineNlohmannJsonLines");
  for(const n of ["BM_JsonLinesCompact","BM_StdoutPythonForm"]) console.log(`ratio ${n} / nlohmann baseline: ${(ips(n)/base).toFixed(2)}x`);
' "$WORK/sink_bench.txt"

echo
echo "== Slurm parsing: hostlist expansion of node[0001-9999]; 100 000 squeue-like rows vs a getline+std::string baseline"
"$BUILD/bench/slurm_bench" --benchmark_min_time=0.5 --benchmark_format=console | tee "$WORK/slurm_bench.txt"
node -e '
  const t=require("fs").readFileSync(process.argv[1],"utf8");
  const per=(n,u)=>{const m=t.match(new RegExp(n+"\\s.*"+u+"=([0-9.]+)([kMG]?)/s"));if(!m)return NaN;return +m[1]*({k:1e3,M:1e6,G:1e9}[m[2]]||1);};
  for(const n of ["BM_HostlistExpandInto","BM_HostlistForEachView"]) console.log(`${n}: ${(1e9/per(n,"items_per_second")).toFixed(2)} ns/host (budget 10; GCM 225)`);
  const ours=per("BM_DelimitedParserSqueue","items_per_second"), base=per("BM_BaselineGetlineSplit","items_per_second");
  console.log(`delimited rows: ${(ours/1e6).toFixed(2)} M rows/s vs baseline ${(base/1e6).toFixed(2)} M rows/s: ${(ours/base).toFixed(1)}x`);
' "$WORK/slurm_bench.txt"

# median of RUNS whole-process runs: prints "wall_ms max_rss_kib"
measure() {
  local walls=() rss=()
  for _ in $(seq 1 "$RUNS"); do
    local t0 t1
    t0="$(date +%s%N)"
    "$@" >/dev/null 2>"$WORK/err.txt" || true
    t1="$(date +%s%N)"
    walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", (b-a)/1e6}')")
    /usr/bin/time -v -o "$WORK/time.txt" "$@" >/dev/null 2>"$WORK/err.txt" || true
    rss+=("$(awk -F': ' '/Maximum resident set size/{print $2}' "$WORK/time.txt")")
  done
  local w r
  w="$(printf '%s\n' "${walls[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")"
  r="$(printf '%s\n' "${rss[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")"
  echo "$w $r"
}

echo
echo "== whole process (median of $RUNS runs)"
read -r base_w base_r < <(measure /bin/true)
printf '%-62s %9s ms %8s KiB\n' "baseline: /bin/true (process start-up floor)" "$base_w" "$base_r"
for args in "--help" "storage --once --cluster b --statvfs-patterns b=^/ --sink stdout --log-folder $WORK" \
            "storage --once --cluster b --statvfs-patterns b=^/ --sink do_nothing --log-folder $WORK" \
            "storage --once --cluster b --statvfs-patterns b=^/ --sink prometheus -o textfile=$WORK/x.prom --log-folder $WORK"; do
  # shellcheck disable=SC2086
  read -r w r < <(measure "$BUILD/gcm" $args)
  printf '%-62s %9s ms %8s KiB  (%.1fx the start-up floor)\n' "gcm ${args%% --log-folder*}" "$w" "$r" \
    "$(awk -v a="$w" -v b="$base_w" 'BEGIN{print (b>0? a/b : 0)}')"
done

echo
echo "== GPU sampling with the fake NVML (8 H100s, every field)"
"$BUILD/bench/nvml_bench" --benchmark_min_time=0.5 --benchmark_format=console | tee "$WORK/nvml_bench.txt"
# Whole-process: peak RSS after about 100, 1 000 and 5 000 samples of 8 GPUs must not grow with the sample count.
export GCM_FAKE_NVML_SCENARIO="$ROOT/tests/fake_nvml/scenarios/h100x8.json" GCM_NVML_LIBRARY="$BUILD/fake_nvml/libnvidia-ml.so.1"
for push in 0.15 1.5 7.5; do
  rm -rf "$WORK/nvml_monitor_logs"
  /usr/bin/time -v -o "$WORK/time.txt" "$BUILD/gcm" nvml_monitor --once --push-interval "$push" \
    --collect-interval 0.001 --sink do_nothing --log-folder "$WORK" --log-level DEBUG >/dev/null 2>&1
  n="$(grep -ho '[0-9]* sample(s) of' "$WORK"/nvml_monitor_logs/*.log | awk '{print $1}' | tail -1)"
  awk -F': ' -v p="$push" -v n="$n" '/Maximum resident set size/{rss=$2} /User time/{u=$2} /System time/{s=$2}
    END{printf "nvml_monitor --push-interval %-4s %5d samples of 8 GPUs: peak RSS %6d KiB, %.3f ms CPU per sample\n",
        p, n, rss, (u+s)*1000/n}' "$WORK/time.txt"
done

echo
echo "== zombie-GPU detector: detection time, false states per node-day, smallest slowdown, cost per round"
"$BUILD/bench/detector_report" --benchmark_min_time=0.5 --benchmark_format=console

echo
bash "$ROOT/bench/scripts/peer_node_rules.sh" "$BUILD" clean 16 7 1 slow 8 0.15 1 slow 8 0.10 1 slow 8 0.05 1 slow 8 0.05 2

echo
RUNS=5 bash "$ROOT/scripts/bench-slurm-job-monitor.sh" "$BUILD"

echo
bash "$ROOT/scripts/bench-agent.sh" "$BUILD"

echo
bash "$ROOT/scripts/bench-agent-verdict.sh" "$BUILD"
rm -rf "$WORK"
