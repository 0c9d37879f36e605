// Validates Grafana dashboards (deploy/grafana/*.json):
//  1. against Grafana's own schema: the TypeScript types Grafana generates from its dashboard and panel schemas
//     (@grafana/schema: Dashboard, Panel, VariableModel, AnnotationQuery, and each panel plug-in's Options and
//     FieldConfig) and the Prometheus query type (@grafana/grafana-foundation-sdk, generated from the same
//     schemas), checked by the TypeScript compiler on each dashboard written out as an object literal, so unknown
//     keys, missing required fields, wrong types and values outside an enum are errors;
//  2. against the project's rules, which no schema states: one data source variable used by every panel and
//     query, every $variable defined, no node, instance, cluster or job written into a query, unique ids, a grid
//     without overlaps, a query in every panel.
// Usage: node validate.mjs FILE.json...          exit 1 naming each problem
//        node validate.mjs --self-test FILE.json  breaks a good dashboard in known ways; each must be rejected
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const here = dirname(fileURLToPath(import.meta.url));
const COMPOSABLE = '@grafana/schema/dist/esm/raw/composable';
// Panel type -> [Options type, FieldConfig type] in the generated TypeScript below.
const PANEL_TYPES = {
  timeseries: ['TimeSeriesOptions', 'TimeSeriesFieldConfig'],
  stat: ['StatOptions', 'Record<string, never>'],
  table: ['TableOptions', 'TableFieldConfig'],
};
const BUILTIN_VARS = new Set(['__rate_interval', '__interval', '__interval_ms', '__range', '__range_s',
                              '__range_ms', '__from', '__to', '__dashboard']);
const DS_REF = '${datasource}';

function header() {
  return `import type { Dashboard, Panel, RowPanel, AnnotationQuery } from '@grafana/schema';
import type { Options as TimeSeriesOptions, FieldConfig as TimeSeriesFieldConfig } from '${COMPOSABLE}/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';
import type { Options as StatOptions } from '${COMPOSABLE}/stat/panelcfg/x/StatPanelCfg_types.gen';
import type { Options as TableOptions, FieldConfig as TableFieldConfig } from '${COMPOSABLE}/table/panelcfg/x/TablePanelCfg_types.gen';
import type { Dataquery as PromQuery } from '@grafana/grafana-foundation-sdk/prometheus';
// JSON has no enums: each enum of the schema is accepted as the strings (or numbers) of its members.
type Json<T> = T extends string ? \`\${T}\` : T extends number | boolean | null | undefined ? T
  : T extends Array<infer U> ? Array<Json<U>> : T extends object ? { [K in keyof T]: Json<T[K]> } : T;
type PromTarget = Json<Omit<PromQuery, '_implementsDataqueryVariant'>> & { refId: string };
// Panel<O, F> types fieldConfig.defaults.custom with F but leaves options a Record: the plug-in's options are
// put in here.
type TypedPanel<O, F> = Json<Omit<Panel<O, F>, 'targets' | 'options'>> & { targets: PromTarget[]; options: Json<O> };
type TypedAnnotation = Json<Omit<AnnotationQuery, 'target'>> & { target?: PromTarget };
`;
}

// The dashboard as TypeScript: each panel and annotation a typed constant (so the compiler checks it against its
// plug-in's schema), then the dashboard referring to them.
function toTypeScript(name, d, problems) {
  const id = name.replace(/[^A-Za-z0-9]/g, '_');
  let out = '';
  const panelRefs = [];
  (d.panels ?? []).forEach((p, i) => {
    const ref = `${id}_panel_${i}_${String(p.type).replace(/[^A-Za-z0-9]/g, '_')}`;
    if (p.type === 'row') {
      out += `const ${ref}: Json<RowPanel> = ${JSON.stringify(p, null, 2)};\n`;
    } else if (PANEL_TYPES[p.type]) {
      const [o, f] = PANEL_TYPES[p.type];
      out += `const ${ref}: TypedPanel<${o}, ${f}> = ${JSON.stringify(p, null, 2)};\n`;
    } else {
      problems.push(`${name}: panel ${p.id} "${p.title}": no schema for panel type ${JSON.stringify(p.type)} here`);
      return;
    }
    panelRefs.push(ref);
  });
  const annoRefs = [];
  (d.annotations?.list ?? []).forEach((a, i) => {
    const ref = `${id}_annotation_${i}`;
    out += `const ${ref}: TypedAnnotation = ${JSON.stringify(a, null, 2)};\n`;
    annoRefs.push(ref);
  });
  const rest = { ...d, panels: '@PANELS@', annotations: d.annotations ? { ...d.annotations, list: '@ANNOS@' } : undefined };
  const body = JSON.stringify(rest, null, 2).replace('"@PANELS@"', `[${panelRefs.join(', ')}]`)
    .replace('"@ANNOS@"', `[${annoRefs.join(', ')}]`);
  out += `export const ${id}: Json<Dashboard> = ${body};\n`;
  return out;
}

function typeCheck(sources) {
  const virtual = new Map(Object.entries(sources).map(([n, s]) => [join(here, `__check_${n}.ts`), s]));
  const options = { strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext,
                    moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true, types: [] };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists, readFile } = host;
  host.fileExists = (f) => virtual.has(f) || fileExists.call(host, f);
  host.readFile = (f) => virtual.get(f) ?? readFile.call(host, f);
  host.getSourceFile = (f, lang, ...r) =>
    virtual.has(f) ? ts.createSourceFile(f, virtual.get(f), lang) : getSourceFile.call(host, f, lang, ...r);
  const program = ts.createProgram([...virtual.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((diag) => {
    const msg = ts.flattenDiagnosticMessageText(diag.messageText, '\n');
    if (!diag.file) return msg;
    const { line } = diag.file.getLineAndCharacterOfPosition(diag.start);
    const text = diag.file.text.split('\n');
    // Name the constant (panel or annotation) the error is in.
    let owner = '';
    for (let l = line; l >= 0 && !owner; l--) owner = (text[l].match(/^(?:export )?const (\w+)/) ?? [])[1] ?? '';
    return `${basename(diag.file.fileName)} ${owner}, line ${line + 1}: ${text[line].trim()}\n    ${msg}`;
  });
}

// Every string of a query: targets' expr, variables' query, annotation targets' expr.
function queries(d) {
  const out = [];
  for (const p of d.panels ?? []) for (const t of p.targets ?? []) out.push([`panel ${p.id} "${p.title}"`, t.expr]);
  for (const v of d.templating?.list ?? []) if (v.type === 'query') out.push([`variable ${v.name}`, v.query]);
  for (const a of d.annotations?.list ?? []) if (a.target?.expr) out.push([`annotation "${a.name}"`, a.target.expr]);
  return out;
}

function projectRules(name, d, problems) {
  const bad = (m) => problems.push(`${name}: ${m}`);
  if (!d.uid || !/^[a-z0-9-]{1,40}$/.test(d.uid)) bad(`uid ${JSON.stringify(d.uid)} is not a short lowercase id`);
  if (!d.title) bad('no title');
  const vars = new Map((d.templating?.list ?? []).map((v) => [v.name, v]));
  const ds = vars.get('datasource');
  if (!ds || ds.type !== 'datasource' || ds.query !== 'prometheus') bad('no datasource variable of type prometheus');
  const sameDs = (x) => x && x.type === 'prometheus' && x.uid === DS_REF;
  for (const v of vars.values()) if (v.type === 'query' && !sameDs(v.datasource)) bad(`variable ${v.name}: data source is not ${DS_REF}`);
  const ids = new Set();
  const boxes = [];
  for (const p of d.panels ?? []) {
    const where = `panel ${p.id} "${p.title}"`;
    if (ids.has(p.id)) bad(`${where}: duplicate id`);
    ids.add(p.id);
    const g = p.gridPos ?? {};
    if (!(g.x >= 0 && g.y >= 0 && g.w >= 1 && g.h >= 1 && g.x + g.w <= 24)) bad(`${where}: gridPos ${JSON.stringify(g)} is off the 24-column grid`);
    for (const b of boxes)
      if (g.x < b.g.x + b.g.w && b.g.x < g.x + g.w && g.y < b.g.y + b.g.h && b.g.y < g.y + g.h) bad(`${where} overlaps ${b.where}`);
    boxes.push({ g, where });
    if (p.type === 'row') continue;
    if (!sameDs(p.datasource)) bad(`${where}: data source is not ${DS_REF}`);
    if (!p.targets?.length) bad(`${where}: no query`);
    const refs = new Set();
    for (const t of p.targets ?? []) {
      if (!sameDs(t.datasource)) bad(`${where}: query ${t.refId} does not use ${DS_REF}`);
      if (!t.expr || !t.expr.trim()) bad(`${where}: query ${t.refId} has no expr`);
      if (refs.has(t.refId)) bad(`${where}: two queries ${t.refId}`);
      refs.add(t.refId);
    }
  }
  for (const a of d.annotations?.list ?? []) if (a.target && !sameDs(a.datasource)) bad(`annotation "${a.name}": data source is not ${DS_REF}`);
  for (const [where, q] of queries(d)) {
    if (typeof q !== 'string') { bad(`${where}: query is not a string`); continue; }
    for (const m of q.matchAll(/\$\{?(\w+)/g))
      if (!vars.has(m[1]) && !BUILTIN_VARS.has(m[1])) bad(`${where}: $${m[1]} is not a variable of the dashboard`);
    for (const m of q.matchAll(/\b(instance|node|cluster|job_id|uuid|user|account|partition)\s*(=~|!~|=|!=)\s*"([^"]*)"/g))
      // label!="" says only that the label is there (a GPU with a Slurm job), which no variable stands for.
      if (!m[3].startsWith('$') && m[3] !== '.*' && !(m[2] === '!=' && m[3] === '')) bad(`${where}: ${m[1]} is written into the query (${m[0]}); use a variable`);
  }
}

function validate(files) {
  const problems = [];
  const sources = {};
  for (const f of files) {
    let d;
    try {
      d = JSON.parse(readFileSync(f, 'utf8'));
    } catch (e) {
      problems.push(`${f}: not JSON: ${e.message}`);
      continue;
    }
    const name = basename(f, '.json');
    projectRules(name, d, problems);
    sources[name] = header() + toTypeScript(name, d, problems);
  }
  const uids = files.map((f) => { try { return JSON.parse(readFileSync(f, 'utf8')).uid; } catch { return null; } });
  uids.forEach((u, i) => { if (u && uids.indexOf(u) !== i) problems.push(`${files[i]}: uid ${u} is used twice`); });
  if (Object.keys(sources).length) problems.push(...typeCheck(sources));
  return problems;
}

// Known ways to break a dashboard; the validator must reject each (an honest validator can fail).
function selfTest(file) {
  const good = JSON.parse(readFileSync(file, 'utf8'));
  const firstOf = (d, type) => d.panels.find((p) => p.type === type);
  // Each break, and what the rejection must mention (so that it is rejected for the right reason).
  const breaks = {
    'unknown top-level key': [(d) => { d.pannels = []; }, /pannels/],
    'schemaVersion as a string': [(d) => { d.schemaVersion = '39'; }, /schemaVersion[\s\S]*not assignable/],
    'gridPos.w as a string': [(d) => { firstOf(d, 'timeseries').gridPos.w = '12'; }, /"w": "12"[\s\S]*not assignable/],
    'stat colorMode outside its enum': [(d) => { firstOf(d, 'stat').options.colorMode = 'rainbow'; }, /"rainbow"/],
    'timeseries legend without showLegend': [(d) => { delete firstOf(d, 'timeseries').options.legend.showLegend; },
                                             /showLegend/],
    'unknown key in a Prometheus query': [(d) => { firstOf(d, 'timeseries').targets[0].exprr = 'up'; }, /exprr/],
    'variable refresh outside its enum': [(d) => { d.templating.list[1].refresh = 7; }, /"refresh": 7/],
    'table without showHeader': [(d) => { delete firstOf(d, 'table').options.showHeader; }, /showHeader/],
    'a query without expr': [(d) => { delete firstOf(d, 'timeseries').targets[0].expr; }, /has no expr/],
    'a hard-coded node': [(d) => { firstOf(d, 'timeseries').targets[0].expr = 'gcm_gpu_up{node="node17"}'; },
                          /node is written into the query/],
    'an undefined variable': [(d) => { firstOf(d, 'timeseries').targets[0].expr = 'gcm_gpu_up{node=~"$host"}'; },
                              /\$host is not a variable/],
    'a panel on another data source': [(d) => { firstOf(d, 'stat').datasource = { type: 'prometheus', uid: 'prod' }; },
                                       /data source is not/],
    'overlapping panels': [(d) => { const [a, b] = d.panels.filter((p) => p.type !== 'row'); b.gridPos = { ...a.gridPos }; },
                           /overlaps/],
    'a panel type without a schema here': [(d) => { firstOf(d, 'stat').type = 'gauge-ish'; }, /no schema for panel type/],
  };
  let failed = 0;
  const base = validate([file]);
  if (base.length) { console.error(`self-test: ${file} is not valid to begin with:\n${base.join('\n')}`); return 1; }
  // One compiler run for every broken copy (one virtual file each), as a run costs about a second.
  const cases = Object.entries(breaks).map(([what, [mutate, reason]], i) => {
    const d = structuredClone(good);
    mutate(d);
    const name = `break_${i}`;
    const problems = [];
    projectRules(name, d, problems);
    return { what, reason, name, problems, source: header() + toTypeScript(name, d, problems) };
  });
  const diagnostics = typeCheck(Object.fromEntries(cases.map((c) => [c.name, c.source])));
  for (const c of cases) {
    const all = [...c.problems, ...diagnostics.filter((m) => m.startsWith(`__check_${c.name}.ts `))];
    const why = all.find((p) => c.reason.test(p));
    if (!why) {
      console.error(`self-test: not rejected for ${c.reason}: ${c.what}${all.length ? `\n${all.join('\n')}` : ''}`);
      failed++;
    } else console.log(`rejected as it should be: ${c.what} (${why.split('\n').pop().trim().slice(0, 120)})`);
  }
  return failed ? 1 : 0;
}

const args = process.argv.slice(2);
if (args[0] === '--self-test') process.exit(selfTest(args[1]));
if (!args.length) { console.error('usage: node validate.mjs FILE.json... | --self-test FILE.json'); process.exit(2); }
const problems = validate(args);
if (problems.length) {
  for (const p of problems) console.error(p);
  console.error(`${problems.length} problem(s) in ${args.length} dashboard(s)`);
  process.exit(1);
}
console.log(`${args.length} dashboard(s) valid against Grafana's dashboard, panel and Prometheus query schemas`);
