#!/usr/bin/env bash
# The cross-node rules' harness: the shipped deploy/prometheus/rules/gcm-peer-node.yml evaluated by Debian's real
# Prometheus over a simulated cluster (bench/peer_node_stream: the node-local detector's noise model, multi-node
# jobs coming and going), to measure what the node-local report measures for one node:
#   - clean: every state a clean cluster enters, per simulated node-day (false suspects, false drains);
#   - a whole node N % slower than its job's other nodes from one hour in: the time until it is degraded (the alert,
#     and the drain) and the states the other nodes entered meanwhile.
# promtool's rule unit tests evaluate step by step and take minutes for one node-week, so the series are backfilled
# instead (promtool tsdb create-blocks-from openmetrics) and each recording rule is backfilled in turn from the ones
# before it (create-blocks-from rules evaluates a file's rules independently, so a rule that reads another one's
# output needs that output on disk first; the rules are listed in dependency order). Prometheus restarts between
# rules to load the new blocks. The alert is `gcm_node_health_state >= 2` without a `for:`, so an entry into state 2
# is a drain.
#
# Usage: peer_node_rules.sh [--check] BUILD_DIR [clean NODES DAYS SEED | slow NODES FRACTION SEED]...
#   default: clean 16 7 1 (112 node-days), slow 8 0.15 1, slow 8 0.05 1
# Prints one line per run and exits 1 when a tool fails. With --check (the CTest peer_node_rules_harness) it also
# exits 1 when a clean run drains a node, or a slow node is not degraded within 4 minutes or another node of its
# job enters any state.
set -euo pipefail
CHECK=0
if [ "${1:-}" = --check ]; then CHECK=1; shift; fi
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
shift || true
STREAM="$BUILD/bench/peer_node_stream"
RULES="$ROOT/deploy/prometheus/rules/gcm-peer-node.yml"
# A port of its own, so that it can run beside other tests that start a Prometheus.
PORT="${PEER_NODE_PROM_PORT:-$((20000 + RANDOM % 20000))}"
FAILED=0
[ -x "$STREAM" ] || { echo "peer_node_rules: $STREAM is not built (ninja -C $BUILD peer_node_stream)" >&2; exit 1; }
for tool in prometheus promtool curl; do
  command -v "$tool" >/dev/null || { echo "peer_node_rules: $tool is not installed (scripts/install-deps.sh)" >&2; exit 1; }
done

WORK="$(mktemp -d /tmp/gcm-peer-node.XXXXXX)"
PROM_PID=""
stop_prometheus() {
  if [ -n "$PROM_PID" ]; then
    kill "$PROM_PID" 2>/dev/null || true
    wait "$PROM_PID" 2>/dev/null || true
    PROM_PID=""
  fi
}
# PEER_NODE_KEEP=1 leaves the last run's Prometheus and data in place, to look at the series.
if [ "${PEER_NODE_KEEP:-0}" = 1 ]; then
  trap 'echo "peer_node_rules: kept $WORK, Prometheus (pid $PROM_PID) on port $PORT" >&2' EXIT
else
  trap 'stop_prometheus; rm -rf "$WORK"' EXIT
fi

# One file per recording rule, in the file's order (the project's rule files are in one style: read line by line).
# Each is backfilled from the same path under the same group name: Prometheus offsets a group's evaluations within
# the interval by a hash of its name and file, so this gives every rule the one offset the whole group has when
# Prometheus runs it, and a rule sees the outputs of the rules before it at the same timestamp.
split_rules() {
  awk -v dir="$WORK/rules" '
    /^      - (record|alert):/ { n++; file = sprintf("%s/%02d.yml", dir, n); keep = ($2 == "record:")
                                 if (keep) printf "groups:\n  - name: gcm-peer-node\n    interval: 30s\n    rules:\n" > file }
    /^  - name:/ { keep = 0 }
    keep { print > file }' "$RULES"
}

start_prometheus() {
  echo 'global: {scrape_interval: 30s}' >"$WORK/prometheus.yml"
  prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/data" \
    --storage.tsdb.retention.time=100y --web.listen-address="127.0.0.1:$PORT" >>"$WORK/prometheus.log" 2>&1 &
  PROM_PID=$!
  for _ in $(seq 1 100); do
    if curl -fsS "http://127.0.0.1:$PORT/-/ready" >/dev/null 2>&1; then return 0; fi
    kill -0 "$PROM_PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "peer_node_rules: Prometheus did not become ready on port $PORT; its log:" >&2
  tail -20 "$WORK/prometheus.log" >&2
  exit 1
}

# A field of peer_node_stream's "start=S end=E fault_start=F" line.
field() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# An instant query's single value ("" when the result is empty).
query() {
  curl -fsS --get "http://127.0.0.1:$PORT/api/v1/query" --data-urlencode "query=$1" --data-urlencode "time=$2" |
    sed -n 's/.*"value":\[[0-9.]*,"\([^"]*\)"\].*/\1/p'
}

# Loads a stream and backfills every recording rule over it; leaves Prometheus running on the result.
evaluate() {
  local start=$1 end=$2
  rm -rf "$WORK/data" "$WORK/rules" && mkdir -p "$WORK/rules"
  for chunk in "$WORK"/stream/*.om; do
    promtool tsdb create-blocks-from openmetrics "$chunk" "$WORK/data" >/dev/null
  done
  rm -rf "$WORK/stream"
  split_rules
  for rule in "$WORK"/rules/[0-9]*.yml; do
    cp "$rule" "$WORK/rules/group.yml"
    start_prometheus
    rm -rf "$WORK/blocks"
    promtool tsdb create-blocks-from rules --start="$start" --end="$end" --eval-interval=30s \
      --output-dir="$WORK/blocks" --url="http://127.0.0.1:$PORT" "$WORK/rules/group.yml" >>"$WORK/backfill.log" 2>&1 ||
      { echo "peer_node_rules: backfilling $rule failed:" >&2; tail -20 "$WORK/backfill.log" >&2; exit 1; }
    stop_prometheus
    mv "$WORK"/blocks/* "$WORK/data/" 2>/dev/null || true
  done
  start_prometheus
}

# Entries into a state of at least $1 over the run (a node's series starts at state 0: the warm-up).
entries() {  # min_state selector range end
  query "sum(count_over_time(((gcm_node_health_state$2 >= $1) unless (gcm_node_health_state$2 offset 30s >= $1))[$3s:30s])) or vector(0)" "$4"
}

run_clean() {
  local nodes=$1 days=$2 seed=$3 t0 out start end
  t0=$(date +%s.%N)
  out=$("$STREAM" --nodes "$nodes" --days "$days" --seed "$seed" --out "$WORK/stream")
  start=$(field "$out" start)
  end=$(field "$out" end)
  evaluate "$start" "$end"
  local range=$((end - start)) compared suspect drains node_days
  compared=$(query "sum(count_over_time(gcm_node_health_state[${range}s]))" "$end")
  suspect=$(entries 1 "" "$range" "$end")
  drains=$(entries 2 "" "$range" "$end")
  node_days=$(awk -v n="$nodes" -v d="$days" 'BEGIN { printf "%g", n * d }')
  awk -v nd="$node_days" -v c="${compared:-0}" -v s="$suspect" -v d="$drains" -v secs="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.0f", b-a}')" \
    -v seed="$seed" 'BEGIN { printf "clean  seed %-3s %7.1f node-days (%6.1f compared) %4d suspect (%.4f/node-day) %4d drains (%.4f/node-day)  [%s s]\n",
      seed, nd, c * 30 / 86400, s, s / nd, d, d / nd, secs }'
  if [ "$CHECK" = 1 ] && [ "$drains" != 0 ]; then echo "FAIL: the clean cluster had $drains drain(s)" >&2; FAILED=1; fi
  [ "${PEER_NODE_KEEP:-0}" = 1 ] || stop_prometheus
}

run_slow() {
  local nodes=$1 fraction=$2 seed=$3 out start end fault
  # One job on all nodes for 3 h; node 3 slows down one hour in, 10 s into a window.
  out=$("$STREAM" --nodes "$nodes" --days 0.125 --one-job --seed "$seed" --slow-node 3 --slow-fraction "$fraction" \
    --slow-start-s 3610 --out "$WORK/stream")
  start=$(field "$out" start)
  end=$(field "$out" end)
  fault=$(field "$out" fault_start)
  evaluate "$start" "$end"
  local range=$((end - start)) caught others
  # timestamp() of a selector is its sample's time: the evaluation that entered state 2.
  caught=$(query "min_over_time((timestamp(gcm_node_health_state{node=\"node3\"}) and gcm_node_health_state{node=\"node3\"} >= 2)[${range}s:30s]) - $fault" "$end")
  others=$(entries 1 '{node!="node3"}' "$range" "$end")
  if [ -n "$caught" ]; then
    printf 'slow   seed %-3s node3 %5.1f%% slower: degraded (drain) %4.0f s after the slowdown (%d windows); other nodes: %d states\n' \
      "$seed" "$(awk -v f="$fraction" 'BEGIN{print 100*f}')" "$caught" "$(awk -v c="$caught" 'BEGIN{printf "%d", (c + 29) / 30}')" "$others"
  else
    printf 'slow   seed %-3s node3 %5.1f%% slower: never degraded; other nodes: %d states\n' \
      "$seed" "$(awk -v f="$fraction" 'BEGIN{print 100*f}')" "$others"
  fi
  if [ "$CHECK" = 1 ]; then
    if [ -z "$caught" ] || [ "${caught%.*}" -gt 240 ]; then echo "FAIL: node3 was not degraded within 240 s" >&2; FAILED=1; fi
    if [ "$others" != 0 ]; then echo "FAIL: the job's other nodes entered $others state(s)" >&2; FAILED=1; fi
  fi
  [ "${PEER_NODE_KEEP:-0}" = 1 ] || stop_prometheus
}

if [ $# -eq 0 ]; then set -- clean 16 7 1 slow 8 0.15 1 slow 8 0.05 1; fi
echo "== the cross-node rules (gcm-peer-node.yml) on real Prometheus over a simulated cluster, 30 s windows"
while [ $# -gt 0 ]; do
  case "$1" in
    clean) run_clean "$2" "$3" "$4"; shift 4 ;;
    slow) run_slow "$2" "$3" "$4"; shift 4 ;;
    *) echo "peer_node_rules: unknown run '$1' (clean NODES DAYS SEED | slow NODES FRACTION SEED)" >&2; exit 2 ;;
  esac
done
exit "$FAILED"
