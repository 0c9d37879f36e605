#!/usr/bin/env bash
# The demo: runs `gcm storage` once through each sink on this machine and shows what arrived, then
# `gcm nvml_monitor` on 8 fake H100s (the project's fake libnvidia-ml.so.1), one of them hung, scraped by Prometheus.
#   stdout      -> printed as is
#   file        -> JSON lines in a file
#   prometheus  -> a running gcm serves /metrics, a real Prometheus scrapes it, PromQL answers come back
#   otel        -> OTLP/HTTP protobuf to a real OTLP receiver (@elastic/mockotlpserver)
# Every process it starts is stopped by its pid at the end.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${1:-$ROOT/build}"
GCM="$(cd "$BUILD" && pwd)/gcm"
WORK="$(mktemp -d /tmp/gcm-demo-XXXXXX)"
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
}
trap cleanup EXIT

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
section() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

CLUSTER=demo
PATTERN="$CLUSTER=^/\$|^/(tmp|work|home)\$"
cat > "$WORK/pure-usage.jsonl" <<'JSON'
{"user": 0, "used": 1073741824, "sample_time": 1700000000, "directory": "/storage/home/"}
{"user": 65534, "used": 52428800, "sample_time": 1700000000, "directory": "/storage//scratch"}
JSON
COMMON=(storage --cluster "$CLUSTER" --statvfs-patterns "$PATTERN" --pure-json-file-path "$WORK/pure-usage.jsonl"
        --log-folder "$WORK/logs")

section "gcm storage --once --sink stdout  (the reference's stdout form: one JSON list per chunk)"
"$GCM" "${COMMON[@]}" --once --sink stdout

section "gcm storage --once --sink file -o file_path=$WORK/records.jsonl  (JSON lines, rotated)"
"$GCM" "${COMMON[@]}" --once --sink file -o "file_path=$WORK/records.jsonl"
cat "$WORK/records.jsonl"

section "gcm storage --sink prometheus -o listen=...  scraped by a real Prometheus"
GCM_PORT="$(free_port)"; PROM_PORT="$(free_port)"
"$GCM" "${COMMON[@]}" --interval 2 --sink prometheus -o "listen=127.0.0.1:$GCM_PORT" &
PIDS+=($!)
cat > "$WORK/prometheus.yml" <<YAML
global: {scrape_interval: 1s}
scrape_configs:
  - job_name: gcm
    static_configs: [{targets: ['127.0.0.1:$GCM_PORT']}]
YAML
prometheus --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$WORK/prometheus.log" 2>&1 &
PIDS+=($!)
query() { curl -fsS "http://127.0.0.1:$PROM_PORT/api/v1/query" --data-urlencode "query=$1" 2>/dev/null || true; }
for _ in $(seq 1 100); do
  if query 'gcm_statvfs_f_blocks' | grep -q '"result":\[{'; then break; fi
  sleep 0.2
done
echo "/metrics served by gcm (first lines):"
curl -fsS "http://127.0.0.1:$GCM_PORT/metrics" | head -12
echo "PromQL answers from Prometheus:"
for q in 'gcm_statvfs_f_bavail * on(directory) group_left gcm_statvfs_f_frsize_bytes' 'gcm_pure_used_bytes' 'up{job="gcm"}'; do
  echo "  $q"
  query "$q" | node -e '
    let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const r=JSON.parse(s||"{}").data?.result||[];
      if(!r.length) console.log("    (no result yet)");
      for(const x of r){const {__name__,...l}=x.metric;console.log("    "+JSON.stringify(l)+" = "+x.value[1]);}
    });'
done

section "gcm storage --once --sink otel  to a real OTLP receiver (HTTP/protobuf)"
RX_OUT="$WORK/otlp-received.jsonl"
OTLP_RECEIVER_DETACHED=1 node "$ROOT/tests/integration/otlp_receiver/receiver.js" >"$RX_OUT" 2>"$WORK/receiver.log" &
PIDS+=($!)
for _ in $(seq 1 100); do grep -q '"ready"' "$RX_OUT" 2>/dev/null && break; sleep 0.1; done
ENDPOINT="$(node -e 'const l=require("fs").readFileSync(process.argv[1],"utf8").split("\n")[0];console.log(JSON.parse(l).http.replace(/\/$/,""))' "$RX_OUT")"
"$GCM" "${COMMON[@]}" --once --sink otel -o "otel_endpoint=$ENDPOINT" -o "log_resource_attributes={'deployment': 'demo'}"
for _ in $(seq 1 50); do [ "$(grep -c '"signal":"logs"' "$RX_OUT")" -ge 2 ] && break; sleep 0.1; done
echo "log records the receiver got:"
node -e '
  const lines=require("fs").readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean).map(JSON.parse);
  for(const l of lines.filter(x=>x.signal==="logs")){
    const rl=l.data.resourceLogs[0];
    console.log("  resource "+JSON.stringify(rl.resource.attributes));
    for(const r of rl.scopeLogs[0].logRecords) console.log("    "+JSON.stringify(r.attributes));
  }' "$RX_OUT"

section "gcm nvml_monitor on 8 fake H100s (tests/fake_nvml/scenarios/h100x8.json; GPU 7 made to hang)"
# GPU 7 hangs in nvmlDeviceGetPowerUsage from its 3rd call on; GPU 0 runs a Slurm job (a real process whose
# environment carries the job's variables, as slurmstepd would set them).
SLURM_JOB_ID=4242 SLURM_JOB_USER=alice SLURM_JOB_ACCOUNT=ml SLURM_JOB_PARTITION=gpu SLURM_JOB_GPUS=0 \
  GPU_DEVICE_ORDINAL=0 SLURM_CPUS_ON_NODE=12 sleep 600 &
JOB_PID=$!
PIDS+=("$JOB_PID")
node -e '
  const fs=require("fs"); const s=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));
  s.devices[0].processes=[{pid:+process.argv[2], used_memory: 8589934592}];
  s.devices[7].delays={nvmlDeviceGetPowerUsage:{hang:true, after_calls:2}};
  fs.writeFileSync(process.argv[3], JSON.stringify(s));' \
  "$ROOT/tests/fake_nvml/scenarios/h100x8.json" "$JOB_PID" "$WORK/gpus.json"
export GCM_FAKE_NVML_SCENARIO="$WORK/gpus.json" GCM_NVML_LIBRARY="$(cd "$BUILD" && pwd)/fake_nvml/libnvidia-ml.so.1"
NVML_PORT="$(free_port)"
"$GCM" nvml_monitor --push-interval 1 --collect-interval 0.5 --interval 1 --nvml-timeout 0.5 \
  --sink prometheus -o "listen=127.0.0.1:$NVML_PORT" --log-folder "$WORK/logs" &
PIDS+=($!)
cat >> "$WORK/prometheus.yml" <<YAML
  - job_name: gcm_nvml
    static_configs: [{targets: ['127.0.0.1:$NVML_PORT']}]
YAML
kill -HUP "${PIDS[1]}" 2>/dev/null || true  # Prometheus rereads its config
for _ in $(seq 1 150); do
  if query 'gcm_gpu_up == 0' | grep -q '"result":\[{'; then break; fi
  sleep 0.2
done
echo "PromQL answers from Prometheus:"
for q in 'gcm_gpu_up' 'gcm_gpu_temperature_celsius' 'gcm_gpu_power_watts * on(gpu) group_left(job_id, user, account) gcm_gpu_job_info' \
         'gcm_gpu_nvlink_crc_flit_errors_total > 0' 'gcm_gpu_clock_event_reasons > 0'; do
  echo "  $q"
  query "$q" | node -e '
    let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const r=JSON.parse(s||"{}").data?.result||[];
      if(!r.length) console.log("    (no result yet)");
      for(const x of r){const {__name__,instance,job,...l}=x.metric;console.log("    "+JSON.stringify(l)+" = "+x.value[1]);}
    });'
done
echo "the hung GPU in gcm's log:"
grep -h "GPU# 7" "$WORK"/logs/nvml_monitor_logs/*.log | head -2 | sed 's/^/  /'

section "done"
echo "Everything the demo wrote is under $WORK"
