// Writes gcm's Grafana dashboards (deploy/grafana/*.json) from one description, so that the five share their
// variables, data source and conventions. Run `node deploy/grafana/generate.mjs` after editing; the test
// grafana_dashboards fails when a committed JSON file differs from what this script writes.
//
// Conventions:
// - Every query uses the data source variable ${datasource}; no instance, node or job is written into a query.
// - Node series are selected by `cluster` and `node` (the scrape config's labels, docs/alerts.md "Labels"); jobs are
//   joined through gcm_gpu_job_info (on cluster, node, gpu), never by labels copied onto device series.
// - Variables: datasource, cluster, partition, user, job, node; "All" is the regex .* (which also matches series
//   without the label, so a Prometheus with a single unlabelled cluster works).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const DS = { type: 'prometheus', uid: '${datasource}' };
const C = 'cluster=~"$cluster"';
const CN = `${C}, node=~"$node"`;
// The clock a GPU's compute units run at, `kind` 'clock' or 'max_clock': NVIDIA's SM clock, and where a GPU has none
// (AMD) its graphics clock, so that a mixed cluster shows every GPU in the same panel.
function computeClock(sel, kind) {
  return `(gcm_gpu_${kind}_sm_hertz{${sel}} or on(cluster, node, gpu) gcm_gpu_${kind}_graphics_hertz{${sel}})`;
}

// ---- variables ----
const dsVar = { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', hide: 0 };
function queryVar(name, label, query, { multi = true, includeAll = true } = {}) {
  const v = { name, label, type: 'query', datasource: DS, query, refresh: 2, sort: 1, hide: 0,
              multi, includeAll };
  if (includeAll) v.allValue = '.*';
  return v;
}
const V = {
  clusterGpu: queryVar('cluster', 'Cluster', 'label_values(gcm_gpu_up, cluster)'),
  clusterSlurm: queryVar('cluster', 'Cluster', 'label_values(gcm_slurm_nodes_total, cluster)'),
  partition: queryVar('partition', 'Partition', `label_values(gcm_gpu_job_info{${C}}, partition)`),
  user: queryVar('user', 'User', `label_values(gcm_gpu_job_info{${C}, partition=~"$partition"}, user)`),
  job: queryVar('job', 'Job', `label_values(gcm_gpu_job_info{${C}, partition=~"$partition", user=~"$user"}, job_id)`,
                { multi: false, includeAll: false }),
  nodes: queryVar('node', 'Node', `label_values(gcm_gpu_up{${C}}, node)`),
  node: queryVar('node', 'Node', `label_values(gcm_gpu_up{${C}}, node)`, { multi: false, includeAll: false }),
  agentNodes: queryVar('node', 'Node', `label_values(gcm_agent_gpus{${C}}, node)`),
};

// ---- panels ----
function target(expr, legendFormat = '', extra = {}) {
  return { datasource: DS, expr, legendFormat, range: true, ...extra };
}
function instant(expr, legendFormat = '') {
  return target(expr, legendFormat, { range: false, instant: true, format: 'table' });
}
function withRefIds(targets) {
  return targets.map((t, i) => ({ ...t, refId: String.fromCharCode(65 + i) }));
}
function fieldDefaults(unit, custom, extra = {}) {
  const d = { custom, ...extra };
  if (unit) d.unit = unit;
  return { defaults: d, overrides: [] };
}
function timeseries(title, description, targets, { unit, min, max, stack = false, w = 12, h = 8 } = {}) {
  const custom = { drawStyle: 'line', lineWidth: 1, fillOpacity: stack ? 30 : 0, showPoints: 'never',
                   spanNulls: false, stacking: { mode: stack ? 'normal' : 'none', group: 'A' } };
  const extra = {};
  if (min !== undefined) extra.min = min;
  if (max !== undefined) extra.max = max;
  return { type: 'timeseries', title, description, w, h, targets: withRefIds(targets),
           fieldConfig: fieldDefaults(unit, custom, extra),
           options: { legend: { showLegend: true, displayMode: 'list', placement: 'bottom', calcs: [] },
                      tooltip: { mode: 'multi', sort: 'desc' } } };
}
function stat(title, description, targets, { unit, w = 4, h = 4, red, yellow } = {}) {
  const steps = [{ color: 'green', value: null }];
  if (yellow !== undefined) steps.push({ color: 'yellow', value: yellow });
  if (red !== undefined) steps.push({ color: 'red', value: red });
  return { type: 'stat', title, description, w, h, targets: withRefIds(targets),
           fieldConfig: fieldDefaults(unit, undefined, { thresholds: { mode: 'absolute', steps } }),
           options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, orientation: 'auto',
                      colorMode: 'value', graphMode: 'area', justifyMode: 'auto', textMode: 'auto',
                      wideLayout: true, showPercentChange: false, percentChangeColorMode: 'standard' } };
}
// A table of the labels of an instant query's series (one row per series); `hide` drops columns.
function table(title, description, targets, { w = 24, h = 8, hide = ['Time', '__name__', 'job', 'instance'] } = {}) {
  const excludeByName = Object.fromEntries(hide.map((k) => [k, true]));
  const transformations = [{ id: 'organize', options: { excludeByName, indexByName: {}, renameByName: {} } }];
  if (targets.length > 1) transformations.unshift({ id: 'merge', options: {} });
  return { type: 'table', title, description, w, h, targets: withRefIds(targets), transformations,
           fieldConfig: fieldDefaults(undefined, { align: 'auto', cellOptions: { type: 'auto' }, inspect: false }),
           options: { showHeader: true, frameIndex: 0, cellHeight: 'sm' } };
}
function row(title) {
  return { type: 'row', title, collapsed: false, w: 24, h: 1, panels: [] };
}

// Lays the panels out left to right in rows of 24 columns and numbers them.
function layout(items) {
  let x = 0, y = 0, rowH = 0, id = 1;
  return items.map((p) => {
    if (p.type === 'row' || x + p.w > 24) { y += rowH; x = 0; rowH = 0; }
    const { w, h, ...rest } = p;
    const out = { id: id++, ...rest, gridPos: { x, y, w, h } };
    if (p.type !== 'row') out.datasource = DS;
    x += w; rowH = Math.max(rowH, h);
    if (p.type === 'row') { y += h; x = 0; rowH = 0; }
    return out;
  });
}

function dashboard(uid, title, description, variables, panels, { annotations = [], tags = [] } = {}) {
  return {
    uid, title, description, tags: ['gcm', ...tags], editable: true, graphTooltip: 1, schemaVersion: 39,
    version: 1, refresh: '1m', time: { from: 'now-6h', to: 'now' }, timepicker: {}, timezone: 'browser',
    fiscalYearStartMonth: 0, liveNow: false, links: [
      { title: 'gcm dashboards', type: 'dashboards', tags: ['gcm'], asDropdown: true, icon: 'external link',
        includeVars: true, keepTime: true, targetBlank: false, tooltip: '', url: '' },
    ],
    annotations: { list: [
      { builtIn: 1, datasource: { type: 'grafana', uid: '-- Grafana --' }, enable: true, hide: true,
        iconColor: 'rgba(0, 211, 255, 1)', name: 'Annotations & Alerts', type: 'dashboard' },
      ...annotations,
    ] },
    templating: { list: [dsVar, ...variables] },
    panels: layout(panels),
  };
}

// ---- Cluster ----
const cluster = dashboard('gcm-cluster', 'gcm / Cluster',
  'Slurm as gcm\'s central collectors see it (slurm_monitor, slurm_job_monitor) and GPU use per partition and ' +
  'account from the node agents, joined to jobs through gcm_gpu_job_info.',
  [V.clusterSlurm, V.partition],
  [
    row('Nodes'),
    timeseries('Nodes by state', 'sinfo node counts (a node in several partitions counts once).', [
      target(`gcm_slurm_nodes_allocated{${C}}`, 'allocated'), target(`gcm_slurm_nodes_mixed{${C}}`, 'mixed'),
      target(`gcm_slurm_nodes_idle{${C}}`, 'idle'), target(`gcm_slurm_nodes_drained{${C}}`, 'drained'),
      target(`gcm_slurm_nodes_draining{${C}}`, 'draining'), target(`gcm_slurm_nodes_down{${C}}`, 'down'),
      target(`gcm_slurm_nodes_not_responding{${C}}`, 'not responding'),
    ], { stack: true, w: 16 }),
    stat('Drained or draining', 'Nodes out of scheduling; `sinfo -R` shows why (gcm\'s reasons start with "gcm: ").',
      [target(`sum(gcm_slurm_nodes_drained{${C}}) + sum(gcm_slurm_nodes_draining{${C}})`)], { red: 1, w: 4 }),
    stat('Down or not responding', 'Nodes Slurm cannot use.',
      [target(`sum(gcm_slurm_nodes_down{${C}}) + sum(gcm_slurm_nodes_not_responding{${C}})`)], { red: 1, w: 4 }),
    table('Nodes out of scheduling and why', 'Drained, draining, down, failing or in maintenance: the reason, who ' +
      'set it and when (sinfo through slurm_job_monitor, gcm_slurm_node_info). gcm\'s own reasons start with "gcm: ".',
      [instant(`max by (NODE_NAME, STATE, REASON, USER, TIMESTAMP) ` +
        `(gcm_slurm_node_info{${C}, STATE=~"(drain|down|fail|maint|inval|reboot).*"})`)],
      { hide: ['Time', 'Value'] }),
    row('GPUs'),
    stat('GPUs allocated', 'Slurm\'s view (sinfo GRES).', [target(`sum(gcm_slurm_total_gpus_alloc{${C}})`)]),
    stat('GPUs idle', 'Up and not allocated.',
      [target(`sum(gcm_slurm_total_gpus_up{${C}}) - sum(gcm_slurm_total_gpus_alloc{${C}})`)]),
    stat('GPUs down', 'On nodes Slurm has down or drained.', [target(`sum(gcm_slurm_total_gpus_down{${C}})`)],
      { red: 1 }),
    stat('GPUs answering NVML', 'The node agents\' view: GPUs that answered in their last window.',
      [target(`sum(gcm_gpu_up{${C}})`)]),
    stat('GPUs lost or not answering', 'gcm_gpu_up 0 on the node agents (GcmGpuLost, GcmGpuDown).',
      [target(`count(gcm_gpu_up{${C}} == 0) or vector(0)`)], { red: 1 }),
    stat('Busy GPU equivalent', 'Sum of the utilisation of the GPUs that belong to jobs, in whole GPUs.',
      [target(`sum(gcm:job_gpu:utilization_percent{${C}, partition=~"$partition"}) / 100`)], { unit: 'none' }),
    row('Jobs'),
    timeseries('Jobs running and pending', 'sacct over slurm_monitor\'s window.', [
      target(`sum(gcm_slurm_jobs_running{${C}})`, 'running'), target(`sum(gcm_slurm_jobs_pending{${C}})`, 'pending'),
      target(`sum(gcm_slurm_jobs_failed{${C}})`, 'failed'),
    ]),
    timeseries('Jobs pending by reason', 'squeue\'s reason of each pending job (slurm_job_monitor, ' +
      'gcm_slurm_job_info): Resources and Priority wait for nodes; QOS and association limits, dependencies and ' +
      'holds wait for something else.',
      [target(`count by (REASON) (gcm_slurm_job_info{${C}, STATE="PENDING", PARTITION=~"$partition"})`, '{{REASON}}')],
      { stack: true }),
    timeseries('GPUs pending and wait time', 'GPUs requested by pending jobs; mean wait of the window\'s jobs.', [
      target(`sum(gcm_slurm_gpus_pending{${C}})`, 'GPUs pending'),
      target(`max(gcm_slurm_job_wait_time_mean_seconds{${C}}) / 60`, 'mean wait (min)'),
    ]),
    row('Use per partition and account'),
    timeseries('GPUs in use per partition', 'GPUs that belong to Slurm jobs (node agents, gcm_gpu_job_info; ' +
      'the GPU of a pod with no Slurm job has no partition).',
      [target(`count by (partition) (gcm_gpu_job_info{${C}, job_id!="", partition=~"$partition"})`, '{{partition}}')],
      { stack: true }),
    timeseries('GPUs in use per Kubernetes namespace', 'GPUs the kubelet gave to pods (attribution kubelet), with ' +
      'or without a Slurm job.',
      [target(`count by (namespace) (gcm_gpu_job_info{${C}, pod!=""})`, '{{namespace}}')], { stack: true }),
    timeseries('GPU utilisation per partition', 'Mean utilisation of the GPUs of each partition\'s jobs.',
      [target(`avg by (partition) (gcm:job_gpu:utilization_percent{${C}, partition=~"$partition"})`,
        '{{partition}}')], { unit: 'percent', min: 0, max: 100 }),
    timeseries('GPUs allocated per account (Slurm)', 'slurm_monitor\'s per-account GPUs of running jobs.',
      [target('sum by (account) (gcm_slurm_account_total_gpus_alloc{derived_cluster=~"$cluster"})', '{{account}}')],
      { stack: true }),
    table('GPU-hours per account in the time range', 'Allocated (GPUs held by the account\'s jobs) and used ' +
      '(weighted by utilisation), from the once-a-minute recording rules: a sample is a GPU-minute.', [
      instant(`sum by (account) (sum_over_time(gcm:account:gpus{${C}}[$__range])) / 60`),
      instant(`sum by (account) (sum_over_time(gcm:account:gpus_busy{${C}}[$__range])) / 60`),
    ], { w: 12 }),
    row('Scheduler'),
    timeseries('slurmctld (sdiag)', 'RPC server threads in use (limit 256) and queued agent and DBD messages.', [
      target(`max(gcm_slurm_server_thread_count{${C}})`, 'server threads'),
      target(`max(gcm_slurm_agent_queue_size{${C}})`, 'agent queue'),
      target(`max(gcm_slurm_dbd_agent_queue_size{${C}})`, 'DBD agent queue'),
    ]),
    table('Collector freshness', 'Seconds since each collector\'s last good round (GcmCollectorStale, ' +
      'GcmSlurmctldUnresponsive above 3 intervals).',
      [instant('time() - gcm_collector_last_success_timestamp_seconds')], { w: 12, hide: ['Time', '__name__'] }),
  ], { tags: ['slurm'] });

// ---- GPU fleet health ----
const fleet = dashboard('gcm-gpu-fleet', 'gcm / GPU fleet health',
  'Every GPU the node agents watch: up or lost, XIDs by code and catalogue action, throttling, ECC and row ' +
  'remapping, PCIe and NVLink, the zombie-GPU detector\'s states, and what gcm wants drained.',
  [V.clusterGpu, V.nodes],
  [
    stat('GPUs up', 'GPUs that answered NVML in the last window.', [target(`sum(gcm_gpu_up{${CN}})`)]),
    stat('GPUs down', 'Lost or not answering.', [target(`count(gcm_gpu_up{${CN}} == 0) or vector(0)`)], { red: 1 }),
    stat('GPUs degraded or failed', 'Detector state 2 or 3.',
      [target(`count(gcm_gpu_health_state{${CN}} >= 2) or vector(0)`)], { red: 1 }),
    stat('GPUs suspect', 'Detector state 1: flagged in a window, not yet degraded.',
      [target(`count(gcm_gpu_health_state{${CN}} == 1) or vector(0)`)], { yellow: 1 }),
    stat('Active XIDs', 'XIDs still active by the catalogue\'s clearing rule.',
      [target(`sum(gcm_gpu_xid_active{${CN}}) or vector(0)`)], { yellow: 1 }),
    stat('Nodes gcm wants drained', 'Nodes with a firing alert labelled gcm_action="drain".',
      [target(`count(count by (cluster, node) (ALERTS{alertstate="firing", gcm_action="drain", ${CN}})) or vector(0)`)],
      { red: 1 }),
    table('Nodes to drain and why', 'Firing alerts whose right action is a drain (the drain receiver acts on ' +
      'them); the runbook of each is in docs/alerts.md.',
      [instant(`ALERTS{alertstate="firing", gcm_action="drain", ${CN}}`)],
      { hide: ['Time', '__name__', 'job', 'instance', 'Value', 'alertstate'] }),
    table('Nodes drained by gcm and why', 'Nodes whose Slurm reason gcm wrote ("gcm: <check>: ..." from the ' +
      'prolog and epilog suites, "gcm: detector: ..." from gcm drainer or gcm agent --drain), with their state, who ' +
      'drained them and when (slurm_job_monitor, gcm_slurm_node_info); docs/alerts.md#gcmnodedrainedbygcm.',
      [instant(`max by (NODE_NAME, STATE, REASON, USER, TIMESTAMP) ` +
        `(gcm_slurm_node_info{${C}, NODE_NAME=~"$node", REASON=~"gcm: .*"})`)],
      { hide: ['Time', 'Value'] }),
    table('GPUs not OK', 'Each active reason of each GPU whose detector state is not ok.',
      [instant(`(gcm_gpu_health_reason{${CN}} == 1) and on(cluster, node, gpu) (gcm_gpu_health_state{${CN}} > 0)`)],
      { hide: ['Time', '__name__', 'job', 'instance', 'Value'] }),
    row('XIDs'),
    timeseries('XIDs by code', 'New XIDs per code over each interval, and AMD GPU events (amdsmi) by type.',
      [target(`sum by (xid) (increase(gcm_gpu_xid_errors_total{${CN}}[$__rate_interval]))`, 'XID {{xid}}'),
        target(`sum by (event) (increase(gcm_gpu_amd_events_total{${CN}}[$__rate_interval]))`, 'AMD {{event}}')],
      { stack: true }),
    timeseries('Active XIDs by catalogue action', 'RESET_GPU, RESTART_BM, CONTACT_SUPPORT, ... (GcmGpuXid* alerts).',
      [target(`sum by (action) (gcm_gpu_xid_active{${CN}})`, '{{action}}')], { stack: true }),
    row('Throttling and clocks'),
    timeseries('SM clock against its maximum', 'Below 1 while busy: throttled or slow. AMD GPUs: the graphics clock.',
      [target(`${computeClock(CN, 'clock')} / ${computeClock(CN, 'max_clock')}`, '{{node}} GPU {{gpu}}')],
      { unit: 'percentunit' }),
    timeseries('Throttle reasons held by the detector', 'GPUs with hw_slowdown, hw_thermal or power_brake.',
      [target(`sum by (reason) (gcm_gpu_health_reason{${CN}, reason=~"hw_slowdown|hw_thermal|power_brake"})`,
        '{{reason}}')], { stack: true }),
    timeseries('Temperature', '', [target(`gcm_gpu_temperature_celsius{${CN}}`, '{{node}} GPU {{gpu}}')],
      { unit: 'celsius' }),
    timeseries('Power against limit', '', [target(`gcm_gpu_power_used_percent{${CN}}`, '{{node}} GPU {{gpu}}')],
      { unit: 'percent' }),
    row('Memory errors'),
    timeseries('Uncorrectable ECC errors (volatile)', 'New double-bit errors per interval (GcmGpuEccDoubleBit).',
      [target(`increase(gcm_gpu_ecc_volatile_uncorrected_errors_total{${CN}}[$__rate_interval])`,
        '{{node}} GPU {{gpu}}')]),
    timeseries('Correctable ECC errors (volatile)', 'Single-bit errors per second.',
      [target(`rate(gcm_gpu_ecc_volatile_corrected_errors_total{${CN}}[$__rate_interval])`,
        '{{node}} GPU {{gpu}}')]),
    table('Row remapping', 'Pending remaps wait for a GPU reset; a failure means no spare rows are left.', [
      instant(`gcm_gpu_remapped_rows_pending{${CN}}`), instant(`gcm_gpu_remapped_rows_failure{${CN}}`),
      instant(`gcm_gpu_remapped_rows_correctable{${CN}}`), instant(`gcm_gpu_remapped_rows_uncorrectable{${CN}}`),
    ], { w: 12, hide: ['Time', '__name__', 'job', 'instance', 'uuid'] }),
    row('PCIe and NVLink'),
    table('PCIe links below their width', 'A narrower link than the GPU supports (GcmGpuPcieLinkDegraded).',
      [instant(`gcm_gpu_pcie_link_width{${CN}} < gcm_gpu_pcie_link_width_max{${CN}}`)], { w: 12 }),
    timeseries('PCIe replays per minute', 'Over 8 a minute is the detector\'s pcie_replays.',
      [target(`rate(gcm_gpu_pcie_replays_total{${CN}}[$__rate_interval]) * 60`, '{{node}} GPU {{gpu}}')]),
    timeseries('NVLinks down', 'Links the GPU has minus links up.',
      [target(`gcm_gpu_nvlink_links{${CN}} - gcm_gpu_nvlink_links_active{${CN}}`, '{{node}} GPU {{gpu}}')]),
    timeseries('NVLink errors per second', 'CRC flit, replay and recovery errors.', [
      target(`sum by (cluster, node, gpu) (rate(gcm_gpu_nvlink_crc_flit_errors_total{${CN}}[$__rate_interval]))`,
        '{{node}} GPU {{gpu}} CRC'),
      target(`sum by (cluster, node, gpu) (rate(gcm_gpu_nvlink_replay_errors_total{${CN}}[$__rate_interval]) + ` +
        `rate(gcm_gpu_nvlink_recovery_errors_total{${CN}}[$__rate_interval]))`, '{{node}} GPU {{gpu}} replay+recovery'),
    ]),
    row('Detector'),
    timeseries('Health state', '0 ok, 1 suspect, 2 degraded, 3 failed.',
      [target(`gcm_gpu_health_state{${CN}}`, '{{node}} GPU {{gpu}}')], { min: 0, max: 3 }),
    timeseries('SM clock deviation from the job\'s other GPUs on the node', 'The detector\'s peer comparison ' +
      '(peer_slow needs -3 % and a robust z of -3).',
      [target(`gcm_gpu_peer_deviation_ratio{${CN}, signal="sm_clock"}`, '{{node}} GPU {{gpu}}')],
      { unit: 'percentunit' }),
  ], { tags: ['gpu'] });

// ---- Job ----
const JOB = `${C}, job_id="$job"`;
const jobPanel = (rec) => `${rec}{${JOB}}`;
const job = dashboard('gcm-job', 'gcm / Job',
  'One Slurm job: its GPUs\' utilisation, SM clock, power, memory and energy, each GPU against the job\'s other ' +
  'GPUs, and XIDs and throttling as annotations. Pick the job (or a user first).',
  [V.clusterGpu, V.partition, V.user, V.job],
  [
    stat('GPUs', 'GPUs of the job on nodes with a gcm agent.', [target(`gcm:job:gpus{${JOB}}`)]),
    stat('Mean utilisation', '', [target(`gcm:job:utilization_percent:avg{${JOB}}`)], { unit: 'percent' }),
    stat('Power', 'All the job\'s GPUs.', [target(`gcm:job:power_watts:sum{${JOB}}`)], { unit: 'watt' }),
    stat('Energy in the time range', 'GPU energy while the job held its GPUs, in the dashboard\'s time range.',
      [target(`sum(gcm_gpu_job_info{${JOB}} * on(cluster, node, gpu) group_left() ` +
        `increase(gcm_gpu_energy_joules_total{${C}}[$__range])) / 3600000`)], { unit: 'kwatth' }),
    stat('GPUs allocated and idle', 'GPUs of the job that did nothing in the last window.',
      [target(`gcm:job:gpus_allocated_idle{${JOB}} or vector(0)`)], { yellow: 1 }),
    stat('GPUs not OK', 'Detector state above ok.',
      [target(`count((gcm_gpu_job_info{${JOB}} * on(cluster, node, gpu) group_left() gcm_gpu_health_state) > 0) ` +
        'or vector(0)')], { red: 1 }),
    timeseries('Utilisation per GPU', '', [target(jobPanel('gcm:job_gpu:utilization_percent'), '{{node}} GPU {{gpu}}')],
      { unit: 'percent', min: 0, max: 100 }),
    timeseries('SM clock per GPU', '', [target(jobPanel('gcm:job_gpu:sm_clock_hertz'), '{{node}} GPU {{gpu}}')],
      { unit: 'hertz' }),
    timeseries('SM clock against the job\'s other GPUs', '-0.1: this GPU runs 10 % slower than the job\'s mean, ' +
      'and the whole job at its pace.',
      [target(jobPanel('gcm:job_gpu:sm_clock_deviation_ratio'), '{{node}} GPU {{gpu}}')], { unit: 'percentunit' }),
    timeseries('Power per GPU', '', [target(jobPanel('gcm:job_gpu:power_watts'), '{{node}} GPU {{gpu}}')],
      { unit: 'watt' }),
    timeseries('Memory used per GPU', '', [target(jobPanel('gcm:job_gpu:memory_used_bytes'), '{{node}} GPU {{gpu}}')],
      { unit: 'bytes' }),
    timeseries('Temperature per GPU', '',
      [target(jobPanel('gcm:job_gpu:temperature_celsius'), '{{node}} GPU {{gpu}}')], { unit: 'celsius' }),
    timeseries('Health state of the job\'s GPUs', '0 ok, 1 suspect, 2 degraded, 3 failed.',
      [target(`gcm_gpu_job_info{${JOB}} * on(cluster, node, gpu) group_left() gcm_gpu_health_state`,
        '{{node}} GPU {{gpu}}')], { min: 0, max: 3 }),
    // The job's own signal (docs/reference/job-signals.md): present only while the job reports its steps to the
    // agents. Per node, not per rank: the agents export one bounded summary per job and node.
    timeseries('Step time per node', 'Median step wall time of the job\'s ranks on each node (what the job ' +
      'reports to the agent). The collective makes it equal on every node; a rise is the whole job slowing.',
      [target(`max by (node) (gcm_job_step_duration_seconds{${JOB}})`, '{{node}}')], { unit: 's' }),
    timeseries('Slowest rank\'s compute time per node', 'The compute time (forward and backward, up to the ' +
      'gradient collective) of the slowest rank on each node: a straggler node stands out here ' +
      '(GcmStragglerNode), and the node\'s median below it tells one slow GPU from a slow node.',
      [target(`max by (node) (gcm_job_slowest_compute_duration_seconds{${JOB}})`, '{{node}} slowest'),
        target(`max by (node) (gcm_job_compute_duration_seconds{${JOB}})`, '{{node}} median')], { unit: 's' }),
    timeseries('Step time against the job\'s usual pace', 'Each node\'s step time over the job\'s own reference ' +
      'on that node (1.12: 12 % slower). A sustained rise is a job slowdown (the agent\'s JobSlowdownEvent, marked ' +
      'on every panel by the "Job slowdowns" annotation with the hardware cause it found, or none).',
      [target(`max by (node) (gcm_job_step_time_ratio{${JOB}})`, '{{node}}')], { unit: 'none' }),
    table('The job\'s GPUs', 'Where the job runs: node, GPU, UUID, user, account, partition.',
      [instant(`gcm_gpu_job_info{${JOB}}`)], { w: 12, hide: ['Time', '__name__', 'job', 'instance', 'Value'] }),
  ], {
    tags: ['jobs'],
    annotations: [
      // From the time of the last XID rather than from changes of the counter: a GPU's first XID creates its
      // counter at 1, which changes() and increase() never see. Marks the two minutes after each XID.
      { name: 'XIDs', datasource: DS, enable: true, hide: false, iconColor: 'red',
        target: { refId: 'Anno', datasource: DS,
          expr: `(time() - gcm_gpu_xid_last_timestamp_seconds{${C}} < 120) and on(cluster, node, gpu) ` +
            `gcm_gpu_job_info{${JOB}}`,
          legendFormat: 'XID {{xid}} on {{node}} GPU {{gpu}}', range: true } },
      { name: 'Throttling and slow GPUs', datasource: DS, enable: true, hide: false, iconColor: 'orange',
        target: { refId: 'Anno', datasource: DS,
          expr: `(gcm_gpu_health_reason{${C}, reason=~"hw_slowdown|hw_thermal|power_brake|peer_slow"} == 1) ` +
            `and on(cluster, node, gpu) gcm_gpu_job_info{${JOB}}`,
          legendFormat: '{{reason}} on {{node}} GPU {{gpu}}', range: true } },
      { name: 'Straggler ranks and nodes', datasource: DS, enable: true, hide: false, iconColor: 'purple',
        target: { refId: 'Anno', datasource: DS,
          expr: `((gcm_gpu_health_reason{${C}, reason="rank_slow"} == 1) and on(cluster, node, gpu) ` +
            `gcm_gpu_job_info{${JOB}}) or ALERTS{${JOB}, alertname="GcmStragglerNode", alertstate="firing"}`,
          legendFormat: '{{reason}}{{alertname}} on {{node}} {{gpu}}', range: true } },
      // While the agent holds the job slowed (from the change point to the recovery), with the kind of hardware
      // cause it found on the node's GPUs ("none": software or data); the sentence is in its log and gcm jobstats.
      { name: 'Job slowdowns', datasource: DS, enable: true, hide: false, iconColor: 'blue',
        target: { refId: 'Anno', datasource: DS,
          expr: `(gcm_job_slowed{${JOB}} == 1) * on(cluster, node, job_id) group_left(hardware_cause) ` +
            `gcm_job_slowdown_info{${JOB}}`,
          legendFormat: 'step time slowed on {{node}}: hardware cause {{hardware_cause}}', range: true } },
    ],
  });

// ---- Node ----
const N = `${C}, node="$node"`;
const node = dashboard('gcm-node', 'gcm / Node',
  'One node, every GPU: jobs, health, utilisation, clocks, power, memory, links, XIDs, and its agent.',
  [V.clusterGpu, V.node],
  [
    table('GPUs and their jobs', 'gcm_gpu_job_info on this node: which job, user and account holds each GPU.',
      [instant(`gcm_gpu_job_info{${N}}`)], { w: 12, hide: ['Time', '__name__', 'job', 'instance', 'Value'] }),
    table('Active health reasons and XIDs', 'The detector\'s reasons that hold, and XIDs still active.', [
      instant(`gcm_gpu_health_reason{${N}} == 1`), instant(`gcm_gpu_xid_active{${N}} == 1`),
    ], { w: 12, hide: ['Time', '__name__', 'job', 'instance', 'Value'] }),
    timeseries('GPU up', '1 answering NVML, 0 lost or not answering.', [target(`gcm_gpu_up{${N}}`, 'GPU {{gpu}}')],
      { min: 0, max: 1, w: 8 }),
    timeseries('Health state', '0 ok, 1 suspect, 2 degraded, 3 failed.',
      [target(`gcm_gpu_health_state{${N}}`, 'GPU {{gpu}}')], { min: 0, max: 3, w: 8 }),
    timeseries('XIDs', 'New XIDs per interval, and AMD GPU events (amdsmi).', [
      target(`increase(gcm_gpu_xid_errors_total{${N}}[$__rate_interval])`, 'GPU {{gpu}} XID {{xid}}'),
      target(`increase(gcm_gpu_amd_events_total{${N}}[$__rate_interval])`, 'GPU {{gpu}} {{event}}'),
    ], { w: 8 }),
    timeseries('Utilisation', '', [target(`gcm_gpu_utilization_percent{${N}}`, 'GPU {{gpu}}')],
      { unit: 'percent', min: 0, max: 100 }),
    timeseries('SM activity (GPM)', 'Hopper and later.', [target(`gcm_gpu_gpm_sm_activity_ratio{${N}}`, 'GPU {{gpu}}')],
      { unit: 'percentunit', min: 0, max: 1 }),
    timeseries('SM clock', 'AMD GPUs: the graphics clock, the one their compute units run at.',
      [target(computeClock(N, 'clock'), 'GPU {{gpu}}')], { unit: 'hertz' }),
    timeseries('Power', '', [target(`gcm_gpu_power_watts{${N}}`, 'GPU {{gpu}}')], { unit: 'watt' }),
    timeseries('Temperature', '', [target(`gcm_gpu_temperature_celsius{${N}}`, 'GPU {{gpu}}')], { unit: 'celsius' }),
    timeseries('Memory used', '', [target(`gcm_gpu_memory_used_bytes{${N}}`, 'GPU {{gpu}}')], { unit: 'bytes' }),
    timeseries('Energy', 'Power averaged over each interval from the energy counter.',
      [target(`rate(gcm_gpu_energy_joules_total{${N}}[$__rate_interval])`, 'GPU {{gpu}}')], { unit: 'watt' }),
    timeseries('PCIe throughput', '', [
      target(`gcm_gpu_pcie_tx_bytes_per_second{${N}}`, 'GPU {{gpu}} tx'),
      target(`gcm_gpu_pcie_rx_bytes_per_second{${N}}`, 'GPU {{gpu}} rx'),
    ], { unit: 'Bps' }),
    timeseries('NVLink throughput (GPM)', '', [
      target(`gcm_gpu_gpm_nvlink_tx_bytes_per_second{${N}}`, 'GPU {{gpu}} tx'),
      target(`gcm_gpu_gpm_nvlink_rx_bytes_per_second{${N}}`, 'GPU {{gpu}} rx'),
    ], { unit: 'Bps' }),
    timeseries('The agent on this node', 'CPU (share of one core) and resident memory of gcm agent.', [
      target(`rate(gcm_agent_cpu_seconds_total{${N}}[$__rate_interval])`, 'CPU'),
    ], { unit: 'percentunit', w: 12 }),
    timeseries('The agent\'s memory', '', [target(`gcm_agent_resident_memory_bytes{${N}}`, 'RSS')],
      { unit: 'bytes', w: 12 }),
  ], { tags: ['gpu'] });

// ---- gcm itself ----
const AN = `${C}, node=~"$node"`;
const self = dashboard('gcm-self', 'gcm / gcm itself',
  'The health of gcm: scrape targets, node agents (CPU, memory, sources, OTLP spool), the collectors\' rounds and ' +
  'slurm_processor.',
  [V.clusterGpu, V.agentNodes],
  [
    stat('gcm targets up', '', [target('sum(up{job=~"gcm.*"})')]),
    stat('gcm targets down', '', [target('count(up{job=~"gcm.*"} == 0) or vector(0)')], { red: 1 }),
    stat('Agents without NVML', '', [target(`count(gcm_agent_nvml_up{${AN}} == 0) or vector(0)`)], { red: 1 }),
    stat('Agent sources down', '', [target(`count(gcm_agent_source_up{${AN}} == 0) or vector(0)`)], { yellow: 1 }),
    stat('Points dropped (1 h)', 'OTLP points the agents dropped.',
      [target(`sum(increase(gcm_agent_dropped_points_total{${AN}}[1h])) or vector(0)`)], { red: 1 }),
    stat('Firing gcm alerts', '', [target('count(ALERTS{alertstate="firing", alertname=~"Gcm.*"}) or vector(0)')],
      { yellow: 1 }),
    row('Node agents'),
    timeseries('Agent CPU', 'Share of one core.',
      [target(`rate(gcm_agent_cpu_seconds_total{${AN}}[$__rate_interval])`, '{{node}}')], { unit: 'percentunit' }),
    timeseries('Agent memory', '', [target(`gcm_agent_resident_memory_bytes{${AN}}`, '{{node}}')], { unit: 'bytes' }),
    timeseries('Samples per second', '', [target(`rate(gcm_agent_samples_total{${AN}}[$__rate_interval])`, '{{node}}')]),
    timeseries('Last sample duration', 'One sample of every GPU of the node.',
      [target(`gcm_agent_last_sample_duration_seconds{${AN}}`, '{{node}}')], { unit: 's' }),
    table('Sources down', 'Each agent source that failed (kmsg, nvml_events, attribution, checks, otlp, state_file).',
      [instant(`gcm_agent_source_up{${AN}} == 0`)], { w: 12, hide: ['Time', '__name__', 'job', 'instance', 'Value'] }),
    timeseries('Source errors per minute', '',
      [target(`sum by (source) (rate(gcm_agent_source_errors_total{${AN}}[$__rate_interval])) * 60`, '{{source}}')]),
    row('OTLP spool'),
    timeseries('Spool use', 'Bytes on disk against --spool-max-bytes.',
      [target(`gcm_agent_spool_bytes{${AN}} / gcm_agent_spool_limit_bytes{${AN}}`, '{{node}}')],
      { unit: 'percentunit', min: 0, max: 1, w: 8 }),
    timeseries('Oldest window in the spool', '', [target(`gcm_agent_spool_oldest_age_seconds{${AN}}`, '{{node}}')],
      { unit: 's', w: 8 }),
    timeseries('Points sent and dropped per second', '', [
      target(`sum(rate(gcm_agent_sent_points_total{${AN}}[$__rate_interval]))`, 'sent'),
      target(`sum(rate(gcm_agent_dropped_points_total{${AN}}[$__rate_interval]))`, 'dropped'),
      target(`sum(rate(gcm_agent_export_failures_total{${AN}}[$__rate_interval]))`, 'failed requests'),
    ], { w: 8 }),
    row('Collectors'),
    timeseries('Seconds since the last good round', 'Per collector and record type.',
      [target('time() - gcm_collector_last_success_timestamp_seconds', '{{collector}} {{schema}}')], { unit: 's' }),
    timeseries('Failed rounds per hour', '',
      [target('rate(gcm_collector_failed_rounds_total[$__rate_interval]) * 3600', '{{collector}} {{schema}}')]),
    row('slurm_processor'),
    timeseries('Items per second', 'Received, enriched with Slurm jobs, and forwarded.', [
      target('sum by (signal) (rate(gcm_slurm_processor_received_total[$__rate_interval]))', 'received {{signal}}'),
      target('sum by (signal) (rate(gcm_slurm_processor_enriched_total[$__rate_interval]))', 'enriched {{signal}}'),
      target('sum(rate(gcm_slurm_processor_forwarded_total[$__rate_interval]))', 'forwarded'),
    ], { w: 8 }),
    timeseries('Lost and refused', 'Dropped items are lost; refused ones are retried by their senders.', [
      target('sum(rate(gcm_slurm_processor_dropped_total[$__rate_interval]))', 'dropped'),
      target('sum(rate(gcm_slurm_processor_refused_total[$__rate_interval]))', 'refused'),
      target('sum by (code) (rate(gcm_slurm_processor_bad_requests_total[$__rate_interval]))', 'bad {{code}}'),
    ], { w: 8 }),
    timeseries('Queue and spool', '', [
      target('sum(gcm_slurm_processor_queue_bytes)', 'queue'),
      target('sum(gcm_slurm_processor_spool_bytes)', 'spool'),
    ], { unit: 'bytes', w: 8 }),
  ], { tags: ['self'] });

const here = dirname(fileURLToPath(import.meta.url));
const all = { 'gcm-cluster.json': cluster, 'gcm-gpu-fleet.json': fleet, 'gcm-job.json': job, 'gcm-node.json': node,
              'gcm-self.json': self };
// `--check DIR` writes nowhere and exits 1 when a file in DIR differs (the test); otherwise the files are written.
const check = process.argv[2] === '--check';
let differ = 0;
for (const [file, d] of Object.entries(all)) {
  const text = JSON.stringify(d, null, 2) + '\n';
  const path = join(check ? process.argv[3] : here, file);
  if (check) {
    let old = '';
    try { old = readFileSync(path, 'utf8'); } catch { /* missing: differs */ }
    if (old !== text) { console.error(`${path} differs from what generate.mjs writes; run node deploy/grafana/generate.mjs`); differ++; }
  } else {
    writeFileSync(path, text);
  }
}
process.exit(differ ? 1 : 0);
