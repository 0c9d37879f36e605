// Checks what promtool cannot: every alert of deploy/prometheus/rules/ has a promtool test where it fires and one
// where it stays silent (tests/prometheus/*.test.yml), carries the labels and annotations the runbook and the
// drain receiver rely on, and has its section in docs/alerts.md; no expected annotation shows a template error.
// The files are the project's own, in one style, so they are read line by line rather than with a YAML library.
// Usage: node check_alerts.mjs REPO_ROOT
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const root = process.argv[2];
const problems = [];
const rulesDir = join(root, 'deploy/prometheus/rules');
const testsDir = join(root, 'tests/prometheus');

// alert name -> its block of lines
const alerts = new Map();
for (const f of readdirSync(rulesDir).filter((f) => f.endsWith('.yml'))) {
  let current = null;
  for (const line of readFileSync(join(rulesDir, f), 'utf8').split('\n')) {
    const a = line.match(/^\s+- alert: (\S+)/);
    if (a) {
      if (alerts.has(a[1])) problems.push(`${a[1]}: defined twice`);
      current = { file: f, lines: [] };
      alerts.set(a[1], current);
      continue;
    }
    if (/^\s+- (record|name):/.test(line)) current = null;
    if (current) current.lines.push(line);
  }
}
if (alerts.size === 0) problems.push(`no alert found in ${rulesDir}`);

// A label is one of its values, or a template that chooses between two of them by the alert's own labels
// ('{{ if eq $labels.hardware "agrees" }}drain{{ else }}notify{{ end }}').
function labelOf(name, values) {
  const v = `(?:${values})`;
  return new RegExp(`^\\s+${name}: (?:${v}|'\\{\\{ if eq \\$labels\\.[a-z_]+ "[a-z_]+" \\}\\}${v}\\{\\{ else \\}\\}${v}\\{\\{ end \\}\\}')$`, 'm');
}

const runbook = readFileSync(join(root, 'docs/alerts.md'), 'utf8');
for (const [name, { file, lines }] of alerts) {
  const text = lines.join('\n');
  const want = [
    [labelOf('severity', 'critical|warning|info'), 'label severity (critical, warning or info)'],
    [labelOf('gcm_action', 'drain|notify'), 'label gcm_action (drain or notify)'],
    [/^\s+gcm_remedy: [a-z_]+$/m, 'label gcm_remedy'],
    [/^\s+summary: /m, 'annotation summary'],
    [/^\s+description: /m, 'annotation description'],
    [/What to do:/, 'a "What to do:" in its description'],
    [new RegExp(`^\\s+runbook: "docs/alerts\\.md#${name.toLowerCase()}"$`, 'm'), `runbook "docs/alerts.md#${name.toLowerCase()}"`],
  ];
  for (const [re, what] of want) if (!re.test(text)) problems.push(`${name} (${file}): no ${what}`);
  if (!new RegExp(`^### ${name}$`, 'm').test(runbook)) problems.push(`${name}: no "### ${name}" section in docs/alerts.md`);
}

// alert name -> {fires, silent}: an alert_rule_test case with exp_alerts listing alerts, and one with [].
const seen = new Map();
for (const f of readdirSync(testsDir).filter((f) => f.endsWith('.test.yml'))) {
  const lines = readFileSync(join(testsDir, f), 'utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = lines[i].match(/^\s+alertname: (\S+)/);
    if (!m) continue;
    const s = seen.get(m[1]) ?? { fires: 0, silent: 0 };
    const next = lines[i + 1] ?? '';
    if (/exp_alerts: \[\]/.test(next)) s.silent++;
    else if (/exp_alerts:$/.test(next) && /- exp_labels:/.test(lines[i + 2] ?? '')) s.fires++;
    else problems.push(`${f}:${i + 1}: alertname ${m[1]} is not followed by exp_alerts`);
    seen.set(m[1], s);
  }
  lines.forEach((l, i) => {
    if (/exp_annotations:/.test(l) && /<no value>|%!|\{\{/.test(l)) problems.push(`${f}:${i + 1}: a template error in an expected annotation`);
  });
}
for (const name of alerts.keys()) {
  const s = seen.get(name);
  if (!s || !s.fires) problems.push(`${name}: no promtool test where it fires`);
  if (!s || !s.silent) problems.push(`${name}: no promtool test where it stays silent`);
}
for (const name of seen.keys()) if (!alerts.has(name)) problems.push(`tests name ${name}, which no rule file defines`);

if (problems.length) {
  for (const p of problems) console.error(p);
  console.error(`${problems.length} problem(s)`);
  process.exit(1);
}
console.log(`${alerts.size} alerts: each fires and stays silent in a promtool test, has its labels, annotations and runbook section`);
