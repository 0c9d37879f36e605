// The example scrape config's relabelling, through Prometheus' own service discovery and relabelling (`promtool
// check service-discovery`): an agent target's `node` is the targets file's label when it has one, else the host
// part of its address, and `instance` is the same name.
// Usage: node check_relabel.mjs REPO_ROOT
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const dir = join(process.argv[2], 'deploy/prometheus');
const out = execFileSync('promtool', ['check', 'service-discovery', '--timeout=2s', 'prometheus.yml', 'gcm-agent'],
                         { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
const got = Object.fromEntries(JSON.parse(out).map((t) => [t.labels.__address__, t.labels]));
const want = {
  'node1:9410': { node: 'node1', instance: 'node1', cluster: 'mycluster', job: 'gcm-agent' },
  'node2:9410': { node: 'node2', instance: 'node2', cluster: 'mycluster', job: 'gcm-agent' },
  '10.0.3.17:9410': { node: 'node17', instance: 'node17', cluster: 'mycluster', job: 'gcm-agent' },
};
let bad = 0;
for (const [address, labels] of Object.entries(want)) {
  for (const [k, v] of Object.entries(labels)) {
    if (got[address]?.[k] !== v) {
      console.error(`${address}: ${k} is ${JSON.stringify(got[address]?.[k])}, expected ${JSON.stringify(v)}`);
      bad++;
    }
  }
}
if (Object.keys(got).length !== Object.keys(want).length) {
  console.error(`targets: ${Object.keys(got).join(', ')}; expected ${Object.keys(want).join(', ')}`);
  bad++;
}
if (bad) process.exit(1);
console.log(`gcm-agent targets relabelled: ${Object.entries(got).map(([a, l]) => `${a} -> node=${l.node} instance=${l.instance}`).join('; ')}`);
