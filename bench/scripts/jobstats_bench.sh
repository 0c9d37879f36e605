#!/usr/bin/env bash
# Whole-process cost of `gcm jobstats` on a real finished job of the Slurm testbed (8 GPUs on 4 nodes) whose GPU
# series (one sample a second, as the agent exports them) were backfilled into a real Prometheus with promtool,
# against the baseline of the same run: the sacct call alone that jobstats makes. /usr/bin/time -v gives wall time
# and max RSS; the median of RUNS runs is printed.
# Usage: (. tests/testbed/env.sh; bench/scripts/jobstats_bench.sh [build] [RUNS] [SECONDS])
set -euo pipefail
BUILD=$(realpath "${1:-build}")
RUNS=${2:-5}
SECS=${3:-60}
dir=$(mktemp -d /tmp/gcm-jobstats-bench-XXXXXX)
prom_pid=""
cleanup() { [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
export TZ=UTC

job=$(sbatch --parsable -p gpu -N4 --gres=gpu:2 -o /dev/null -J jobstats-bench --wrap "exec sleep $SECS")
for _ in $(seq 1 $((SECS + 120))); do
  [ "$(sacct -X -n -P -j "$job" --format=State)" = COMPLETED ] && break
  sleep 1
done
row=$(sacct -X -n -P -j "$job" --format=Start,End,NodeList,User,Account)
IFS='|' read -r start end nodelist user account <<<"$row"
[ "$end" != Unknown ] || { echo "job $job did not finish" >&2; exit 1; }
s=$(date -ud "$start" +%s); e=$(date -ud "$end" +%s)
nodes=$(scontrol show hostnames "$nodelist" | tr '\n' ' ')

# OpenMetrics, one family at a time, each series' samples together and in time order.
awk -v s="$s" -v e="$e" -v nodes="$nodes" -v job="$job" -v user="$user" -v account="$account" '
BEGIN {
  n = split(nodes, node, " ")
  split("gcm_gpu_job_info gcm_gpu_utilization_percent gcm_gpu_clock_sm_hertz gcm_gpu_power_watts gcm_gpu_memory_used_bytes gcm_gpu_clock_event_reasons", fam, " ")
  for (f = 1; f <= 6; f++) {
    print "# TYPE " fam[f] " gauge"
    for (i = 1; i <= n; i++) for (g = 0; g < 2; g++) {
      l = "{cluster=\"testbed\",node=\"" node[i] "\",gpu=\"" g "\""
      if (f == 1) l = l ",job_id=\"" job "\",user=\"" user "\",account=\"" account "\",partition=\"gpu\""
      l = l "}"
      for (t = s; t <= e; t++) {
        v = 1
        if (f == 2) v = (i == n && g == 1) ? 0 : 90 + (t % 10)
        if (f == 3) v = (i == 1 && g == 0 && t > s + 10) ? 1.6e9 : 1.98e9
        if (f == 4) v = 300
        if (f == 5) v = 4e10
        if (f == 6) v = (i == 1 && g == 0 && t > s + 10) ? 8 : 0
        print fam[f] l " " v " " t
      }
    }
  }
  print "# TYPE gcm_gpu_energy_joules counter"
  for (i = 1; i <= n; i++) for (g = 0; g < 2; g++)
    for (t = s; t <= e; t++) print "gcm_gpu_energy_joules_total{cluster=\"testbed\",node=\"" node[i] "\",gpu=\"" g "\"} " (t - s) * 300 " " t
  print "# EOF"
}' >"$dir/series.om"
promtool tsdb create-blocks-from openmetrics "$dir/series.om" "$dir/tsdb" >/dev/null
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'global:\n  scrape_interval: 15s\n' >"$dir/prometheus.yml"
prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/tsdb" \
  --web.listen-address=127.0.0.1:$port >"$dir/prometheus.log" 2>&1 &
prom_pid=$!
for _ in $(seq 1 120); do curl -sf "http://127.0.0.1:$port/-/ready" >/dev/null && break; sleep 0.5; done

measure() {  # prints "wall_seconds max_rss_kib" of the median run (by wall time)
  for _ in $(seq 1 "$RUNS"); do
    /usr/bin/time -v "$@" 2>"$dir/time" >/dev/null
    awk '/Elapsed \(wall clock\)/ {n = split($NF, p, ":"); w = p[n] + (n > 1 ? p[n-1] * 60 : 0)}
         /Maximum resident/ {r = $NF} END {print w, r}' "$dir/time"
  done | sort -n | awk -v m=$(((RUNS + 1) / 2)) 'NR == m'
}
read -r sw sr < <(measure sacct -X -P "--delimiter=|#" -j "$job" \
  --format=JobIDRaw,JobID,JobName,User,Account,Partition,Cluster,State,Start,End,NodeList,AllocTRES)
read -r jw jr < <(measure "$BUILD/gcm" jobstats "$job" --prometheus-url "http://127.0.0.1:$port" --step 1)
read -r hw hr < <(measure "$BUILD/gcm" jobstats "$job" --prometheus-url "http://127.0.0.1:$port" --step 1 \
  --html "$dir/page.html" --json)
points=$(( (e - s + 1) * 8 ))
echo "job $job: 8 GPUs, $((e - s)) s, $points samples per series kind at 1 s (median of $RUNS runs)"
printf '%-44s %8s s %8s MiB\n' "sacct -X -P -j (baseline)" "$sw" "$(awk -v r="$sr" 'BEGIN{printf "%.1f", r/1024}')"
printf '%-44s %8s s %8s MiB\n' "gcm jobstats (text)" "$jw" "$(awk -v r="$jr" 'BEGIN{printf "%.1f", r/1024}')"
printf '%-44s %8s s %8s MiB\n' "gcm jobstats --json --html" "$hw" "$(awk -v r="$hr" 'BEGIN{printf "%.1f", r/1024}')"
"$BUILD/gcm" jobstats "$job" --prometheus-url "http://127.0.0.1:$port" --step 1 | sed -n '/Notes:/,$p'
