#!/usr/bin/env bash
# The demo: runs `gcm storage` once through each sink on this machine and shows what arrived, then
# `gcm nvml_monitor` on 8 fake H100s (the project's fake libnvidia-ml.so.1), one of them hung, scraped by Prometheus,
# health checks and a `gcm prolog` suite on those GPUs and on recorded kernel logs, then a local Slurm cluster (tests/testbed/: 8 nodes with 2 fake GPUs each, accounting) put under a varied
# workload, and the Slurm collectors run once to stdout, to Prometheus and to the OTLP receiver; the node agent finds a
# slow GPU, and a lost GPU and an XID 79 go through the shipped alert rules, Alertmanager and `gcm drainer`.
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
TESTBED_STARTED=""
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [ -n "$TESTBED_STARTED" ]; then bash "$ROOT/tests/testbed/stop.sh" >/dev/null 2>&1 || true; fi
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

section "health_checks and a prolog suite on the same 8 fake GPUs (exit codes: 0 OK, 1 WARNING, 2 CRITICAL)"
HC="$(cd "$BUILD" && pwd)/health_checks"
LOGS="$ROOT/tests/fixtures/health/kernel-log"
run_shown() {  # prints the command line, its output indented and its exit code; never stops the demo
  echo "\$ ${*/#$HC/health_checks}"
  set +e
  out="$("$@" 2>&1)"
  rc=$?
  set -e
  printf '%s\n' "$out" | sed 's/^/  /'
  echo "  (exit code $rc)"
}
run_shown "$HC" check-nvidia-smi demo app -c gpu_num -c ecc_uncorrected_volatile_total -c row_remap \
  -c running_procs --nvml-timeout 0.5 --log-folder "$WORK/logs"
run_shown "$HC" check-syslogs xid demo app --path.kmsg "$LOGS/xid-dmesg-forms.txt" --log-folder "$WORK/logs"
cat > "$WORK/suite.toml" <<TOML
[suite]
cluster = "demo"
log_folder = "$WORK/logs"
state_dir = "$WORK/state"
gpu_job_mapping_dir = "$WORK/gpu-jobs"

[prolog]
budget = 10
timeout = 3
drain = false

[[prolog.checks]]
name = "gpu count"
check = "check-nvidia-smi"
args = ["-c", "gpu_num"]
options = { gpu_num = 8 }

[[prolog.checks]]
name = "gpu memory errors"
check = "check-nvidia-smi"
args = ["-c", "ecc_uncorrected_volatile_total", "-c", "row_remap"]

[[prolog.checks]]
name = "gpu xids"
check = "check-syslogs xid"
options = { "path.kmsg" = "$LOGS/clean-dmesg.txt" }

[[prolog.checks]]
name = "disk space"
check = "check-storage disk-usage"
args = ["-v", "/"]
TOML
SLURM_JOB_ID=4243 SLURM_JOB_GPUS=1,2 run_shown "$GCM" prolog --suite "$WORK/suite.toml" --node demo-node
echo "GPU -> job mapping files the prolog wrote for the job: $(cd "$WORK/gpu-jobs" 2>/dev/null && for f in *; do printf '%s=%s ' "$f" "$(cat "$f")"; done)"

section "gcm agent on 8 fake H100s of one job, in compressed time: GPU 3 turns 10 % slow, the detector finds it"
# tests/fake_nvml/scenarios/h100x8-slow-gpu3.json: from t = 60 s of scenario time GPU 3's SM clock is 1785 MHz,
# the others 1980, no throttle reason. GCM_FAKE_NVML_TIME_SCALE=0.05 plays 60 s in 3 s; windows are 0.3 s.
# Its kernel log names the fake GPUs' own addresses (the scenario's pci_bus_id), so the XID counters carry their
# GPU: XID 43 on GPU 1 and 63 on GPU 6, both IGNORE in the catalogue (counted, no detector reason).
printf '%s\n' \
  "4,2001,5000000000,-;NVRM: Xid (PCI:0000:28:00): 43, pid=3234, name=python, Ch 00000008" \
  "4,2002,5000100000,-;NVRM: Xid (PCI:0000:78:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row marked for remapping" \
  >"$WORK/agent-kmsg.txt"
AGENT_PORT=$(free_port)
mkdir -p "$WORK/agent-jobs"
for i in 0 1 2 3 4 5 6 7; do echo 4244 > "$WORK/agent-jobs/$i"; done
GCM_FAKE_NVML_SCENARIO="$ROOT/tests/fake_nvml/scenarios/h100x8-slow-gpu3.json" GCM_FAKE_NVML_TIME_SCALE=0.05 \
  "$GCM" --config /dev/null agent --collect-interval 0.03 --window 0.3 --listen "127.0.0.1:$AGENT_PORT" \
  --path.run "$WORK/agent-run" --path.kmsg "$WORK/agent-kmsg.txt" --attribution mapping-files \
  --gpu-job-mapping-dir "$WORK/agent-jobs" --suite "" --log-folder "$WORK/logs" &
AGENT_PID=$!
PIDS+=("$AGENT_PID")
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$AGENT_PORT/metrics" 2>/dev/null | grep -q 'gcm_gpu_health_state{gpu="3".*} 2' && break
  sleep 0.2
done
echo "/metrics of the agent (health and XIDs):"
curl -fsS "http://127.0.0.1:$AGENT_PORT/metrics" | grep -E '^gcm_gpu_(health_state|xid_errors_total|peer_deviation_ratio\{gpu="3".*sm_clock)' | sed 's/^/  /'
run_shown "$GCM" agent status --path.run "$WORK/agent-run"
cat > "$WORK/agent-suite.toml" <<TOML
[suite]
cluster = "demo"
log_folder = "$WORK/logs"
state_dir = "$WORK/state"
[prolog]
[[prolog.checks]]
name = "agent verdict"
check = "agent-verdict"
options = { path_run = "$WORK/agent-run" }
TOML
SLURM_JOB_ID=4245 run_shown "$GCM" prolog --suite "$WORK/agent-suite.toml" --node demo-node
kill "$AGENT_PID" 2>/dev/null || true
wait "$AGENT_PID" 2>/dev/null || true

section "an AMD node: 8 fake MI300X through amdsmi (the fake libamd_smi.so): its health check and the agent"
# tests/fake_amdsmi/scenarios/mi300x8.json; GPU 5's driver reports a ring hang 1 s after the agent registers for
# events, AMD's analogue of an XID: the agent counts it and fails that GPU, and the prolog's agent-verdict says so.
node -e '
  const fs=require("fs"); const s=JSON.parse(fs.readFileSync(process.argv[1],"utf8"));
  s.devices[5].events=[{type:"RING_HANG", at_ms:1000, message:"ring gfx_0.0.0 timeout"}];
  fs.writeFileSync(process.argv[2], JSON.stringify(s));' \
  "$ROOT/tests/fake_amdsmi/scenarios/mi300x8.json" "$WORK/amd-gpus.json"
AMD_ENV=(GCM_FAKE_AMDSMI_SCENARIO="$WORK/amd-gpus.json" GCM_AMDSMI_LIBRARY="$(cd "$BUILD" && pwd)/fake_amdsmi/libamd_smi.so")
run_shown env "${AMD_ENV[@]}" "$HC" check-amd-smi demo app -c gpu_num -c ecc_uncorrected -c bad_pages -c xgmi \
  --log-folder "$WORK/logs"
AMD_PORT=$(free_port)
mkdir -p "$WORK/amd-jobs"
for i in 0 1 2 3 4 5 6 7; do echo 4246 > "$WORK/amd-jobs/$i"; done
env "${AMD_ENV[@]}" "$GCM" --config /dev/null --backend amdsmi agent --collect-interval 0.1 --window 0.5 \
  --listen "127.0.0.1:$AMD_PORT" --path.run "$WORK/amd-run" --path.kmsg /dev/null --attribution mapping-files \
  --gpu-job-mapping-dir "$WORK/amd-jobs" --suite "" --log-folder "$WORK/amd-logs" &
AMD_PID=$!
PIDS+=("$AMD_PID")
for _ in $(seq 1 50); do
  grep -q '"failed"' "$WORK/amd-run/agent-state.json" 2>/dev/null && break
  sleep 0.2
done
echo "/metrics of the AMD node's agent (its events and health):"
curl -fsS "http://127.0.0.1:$AMD_PORT/metrics" | grep -E '^gcm_gpu_(amd_events_total|health_state\{gpu="5")' | sed 's/^/  /'
sed "s|$WORK/agent-run|$WORK/amd-run|" "$WORK/agent-suite.toml" >"$WORK/amd-suite.toml"
SLURM_JOB_ID=4247 run_shown "$GCM" prolog --suite "$WORK/amd-suite.toml" --node demo-amd-node
kill "$AMD_PID" 2>/dev/null || true
wait "$AMD_PID" 2>/dev/null || true

section "a local Slurm cluster (tests/testbed): 8 nodes x 2 fake GPUs, accounting, a varied workload"
# Its own state directory and ports, so a testbed a developer runs on the defaults is left alone (not under
# $WORK: munge and slurm run as their own users and need a directory they may enter).
export GCM_TESTBED_DIR="${GCM_DEMO_TESTBED_DIR:-/tmp/gcm-demo-testbed}" GCM_TESTBED_PORT_BASE="${GCM_DEMO_TESTBED_PORT_BASE:-17300}"
TESTBED_STARTED=1
bash "$ROOT/tests/testbed/start.sh"
# shellcheck source=../tests/testbed/env.sh
. "$ROOT/tests/testbed/env.sh"
bash "$ROOT/tests/testbed/workload.sh" | tail -3
SLURM_COMMON=(--cluster testbed --log-folder "$WORK/logs")

section "gcm slurm_job_monitor --once --sink file  (NodeData and JobData records, one JSON line each)"
"$GCM" slurm_job_monitor --once "${SLURM_COMMON[@]}" --sink file -o "file_path=$WORK/slurm.jsonl" \
  -o "node_file_path=$WORK/nodes.jsonl" -o "job_file_path=$WORK/jobs.jsonl"
echo "first node record: $(head -1 "$WORK/nodes.jsonl" | cut -c1-300)..."
echo "first job record:  $(head -1 "$WORK/jobs.jsonl" | cut -c1-300)..."

section "gcm slurm_job_monitor --slurm-backend rest  (the same records from slurmrestd on its unix socket)"
"$GCM" slurm_job_monitor --once "${SLURM_COMMON[@]}" --sink stdout --slurm-backend rest \
  --slurm-rest-url "unix:$GCM_TESTBED_REST_SOCKET" | node -e '
  let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
    const recs=s.split("\n").filter(l=>l.startsWith("[")).flatMap(l=>JSON.parse(l));
    const jobs=recs.filter(r=>"JOBID_RAW" in r), gpus=jobs.filter(r=>r.GRES_GPU_INDICES);
    console.log(`${recs.length-jobs.length} node row(s), ${jobs.length} job(s) from slurmrestd; ` +
                `${gpus.length} with their GPU indices (${gpus.slice(0,3).map(j=>j.JOBID+": "+j.GRES_GPU_INDICES).join(", ")})`);
  });'

section "gcm sacct_running --once --sink stdout  (running jobs and steps from sacct, Sacct records)"
"$GCM" sacct_running --once "${SLURM_COMMON[@]}" --sink stdout | node -e '
  let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
    const recs=s.split("\n").filter(Boolean).flatMap(l=>JSON.parse(l));
    const steps=recs.filter(r=>String(r.JobID).includes(".")).length;
    console.log(`${recs.length} record(s): ${recs.length-steps} running job(s), ${steps} step(s); first: ${JSON.stringify(recs[0]||{}).slice(0,300)}...`);});'

section "gcm scontrol, scontrol_config, sacctmgr_qos, sacctmgr_user --once --sink stdout  (abridged)"
for c in scontrol scontrol_config sacctmgr_qos sacctmgr_user; do
  echo "$c: $("$GCM" "$c" --once "${SLURM_COMMON[@]}" --sink stdout | node -e '
    let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const recs=s.split("\n").filter(Boolean).flatMap(l=>JSON.parse(l));
      const show=r=>r.Partition??r.ClusterName??r.sacctmgr_qos?.Name??(r.sacctmgr_user?`${r.sacctmgr_user.User}/${r.sacctmgr_user.Account}`:"?");
      console.log(`${recs.length} record(s): ${recs.map(show).join(", ")}`);});')"
done

section "gcm slurm_monitor --sink prometheus, scraped by Prometheus; slurm_job_monitor --sink otel to the receiver"
SLURM_PORT="$(free_port)"
"$GCM" slurm_monitor "${SLURM_COMMON[@]}" --interval 2 --sink prometheus -o "listen=127.0.0.1:$SLURM_PORT" &
PIDS+=($!)
cat >> "$WORK/prometheus.yml" <<YAML
  - job_name: gcm_slurm
    static_configs: [{targets: ['127.0.0.1:$SLURM_PORT']}]
YAML
kill -HUP "${PIDS[1]}" 2>/dev/null || true
for _ in $(seq 1 150); do
  if query 'gcm_slurm_nodes_total' | grep -q '"result":\[{'; then break; fi
  sleep 0.2
done
for q in 'gcm_slurm_nodes_total' 'gcm_slurm_total_gpus_avail' 'gcm_slurm_total_gpus_alloc' 'gcm_slurm_jobs_running' \
         'gcm_slurm_jobs_pending' 'gcm_slurm_account_total_gpus_alloc'; do
  printf '  %-40s' "$q"
  query "$q" | node -e '
    let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
      const r=JSON.parse(s||"{}").data?.result||[];
      console.log(r.length? r.map(x=>(x.metric.account?x.metric.account+"=":"")+x.value[1]).join(" ") : "(no result yet)");});'
done
before="$(grep -c '"signal":"logs"' "$RX_OUT" || true)"
"$GCM" slurm_job_monitor --once "${SLURM_COMMON[@]}" --sink otel -o "otel_endpoint=$ENDPOINT"
for _ in $(seq 1 50); do [ "$(grep -c '"signal":"logs"' "$RX_OUT")" -gt "$before" ] && break; sleep 0.1; done
echo "OTLP log records the receiver got from slurm_job_monitor: $(node -e '
  const lines=require("fs").readFileSync(process.argv[1],"utf8").split("\n").filter(Boolean).map(JSON.parse);
  let n=0; for(const l of lines.slice(+process.argv[2])) if(l.signal==="logs")
    for(const rl of l.data.resourceLogs) for(const sl of rl.scopeLogs) n+=sl.logRecords.length;
  console.log(n);' "$RX_OUT" "$before")"

section "alerts: node2's agent sees GPU 1 lost and an XID 79 on GPU 0 -> Prometheus with the shipped rules -> Alertmanager -> gcm drainer"
# deploy/prometheus/rules/*.yml as shipped, evaluated every second; Alertmanager posts drain alerts to `gcm drainer`,
# which runs report-only (no --drain): it says what it would send to slurmctld and sends nothing. (GPU 1 is lost
# from the agent's start, so NVML never gave its PCI address: an XID of its own could not be put under it.)
ALERTS="$WORK/alerts"
mkdir -p "$ALERTS/jobs"
cat > "$ALERTS/nvml.json" <<JSON
{"devices": [
  {"uuid": "GPU-node2-0", "pci_bus_id": "00000000:18:00.0", "utilization": {"gpu": 90, "memory": 30}},
  {"uuid": "GPU-node2-1", "pci_bus_id": "00000000:0D:00.0", "utilization": {"gpu": 90, "memory": 30},
   "errors": {"nvmlDeviceGetUtilizationRates": "GPU_IS_LOST"}}]}
JSON
printf '4,3001,6000000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=0, name=python, GPU has fallen off the bus.\n' \
  >"$ALERTS/kmsg.txt"
A_AGENT_PORT="$(free_port)"; A_PROM_PORT="$(free_port)"; A_AM_PORT="$(free_port)"; A_DRAINER_PORT="$(free_port)"
GCM_FAKE_NVML_SCENARIO="$ALERTS/nvml.json" "$GCM" --config /dev/null agent --slurm-node node2 \
  --collect-interval 0.2 --window 1 --listen "127.0.0.1:$A_AGENT_PORT" --path.run "$ALERTS/run" \
  --path.kmsg "$ALERTS/kmsg.txt" --attribution mapping-files --gpu-job-mapping-dir "$ALERTS/jobs" --suite "" \
  --log-folder "$ALERTS/logs" &
PIDS+=($!)
"$GCM" --config /dev/null drainer --listen "127.0.0.1:$A_DRAINER_PORT" --log-folder "$ALERTS/logs" &
PIDS+=($!)
cat > "$ALERTS/alertmanager.yml" <<YAML
route: {receiver: gcm-drainer, group_by: [alertname, node], group_wait: 1s, group_interval: 1s}
receivers:
  - name: gcm-drainer
    webhook_configs: [{url: "http://127.0.0.1:$A_DRAINER_PORT/alertmanager"}]
YAML
bash "$ROOT/scripts/alertmanager.sh" start "$ALERTS/am" "$ALERTS/alertmanager.yml" "$A_AM_PORT" >/dev/null
PIDS+=("$(cat "$ALERTS/am/alertmanager.pid")")
cat > "$ALERTS/prometheus.yml" <<YAML
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ['$ROOT/deploy/prometheus/rules/*.yml']
alerting: {alertmanagers: [{static_configs: [{targets: ['127.0.0.1:$A_AM_PORT']}]}]}
scrape_configs:
  - job_name: gcm-agent
    static_configs: [{targets: ['127.0.0.1:$A_AGENT_PORT'], labels: {cluster: testbed, node: node2}}]
YAML
prometheus --config.file="$ALERTS/prometheus.yml" --storage.tsdb.path="$ALERTS/tsdb" \
  --web.listen-address="127.0.0.1:$A_PROM_PORT" >"$ALERTS/prometheus.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 150); do
  if bash "$ROOT/scripts/alertmanager.sh" alerts "$A_AM_PORT" 2>/dev/null | grep -q GcmGpuXidRebootRequired; then break; fi
  sleep 0.2
done
echo "the alerts Alertmanager holds (GET /api/v2/alerts):"
bash "$ROOT/scripts/alertmanager.sh" alerts "$A_AM_PORT" | node -e '
  let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{
    for (const a of JSON.parse(s||"[]").sort((x,y)=>x.labels.alertname.localeCompare(y.labels.alertname))) {
      console.log(`  ${a.labels.alertname} [${a.labels.severity}, ${a.labels.gcm_action}] node=${a.labels.node} gpu=${a.labels.gpu??"-"}`);
      console.log(`    ${a.annotations.summary}`);
      const todo=(a.annotations.description||"").split("What to do:")[1];
      if (todo) console.log(`    what to do:${todo.trim().replace(/^/," ")}`);
    }});'
for _ in $(seq 1 50); do grep -q "would drain" "$ALERTS/logs/drainer_logs/drainer.log" 2>/dev/null && break; sleep 0.2; done
echo "gcm drainer (report only):"
grep -h "would drain\|already drained\|not draining" "$ALERTS/logs/drainer_logs/drainer.log" | sed 's/^/  /' | head -3

section "summary of the cluster, from the collectors' records"
node -e '
  const fs=require("fs"); const rd=f=>fs.readFileSync(f,"utf8").split("\n").filter(Boolean).map(JSON.parse);
  const nodes=rd(process.argv[1]), jobs=rd(process.argv[2]);
  const byName=new Map(nodes.map(n=>[n.NODE_NAME,n]));
  const states={}; for(const n of byName.values()) states[n.STATE]=(states[n.STATE]||0)+1;
  const gpus=[...byName.values()].reduce((a,n)=>a+(n.NUM_GPUS||0),0);
  const running=jobs.filter(j=>j.STATE==="RUNNING");
  const alloc=running.reduce((a,j)=>a+(j.TRES_GPUS_ALLOCATED||0),0);
  const jstates={}; for(const j of jobs) jstates[j.STATE]=(jstates[j.STATE]||0)+1;
  const reasons={}; for(const j of jobs.filter(j=>j.STATE==="PENDING")) reasons[j.REASON]=(reasons[j.REASON]||0)+1;
  console.log(`nodes by state: ${JSON.stringify(states)}`);
  console.log(`GPUs: ${gpus} in the cluster, ${alloc} allocated to running jobs`);
  console.log(`jobs by state: ${JSON.stringify(jstates)}; pending reasons: ${JSON.stringify(reasons)}`);
  for(const n of byName.values()) if(n.REASON && n.REASON!=="none") console.log(`  ${n.NODE_NAME} ${n.STATE}: ${n.REASON}`);
' "$WORK/nodes.jsonl" "$WORK/jobs.jsonl"

section "done"
echo "Everything the demo wrote is under $WORK"
