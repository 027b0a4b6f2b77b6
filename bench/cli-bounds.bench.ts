/**
 * The CLI's bounds on hostile input (a benchmark that prints figures, not a test), each shape beside its limit:
 * - YAML aliases: bytes read, the bytes they would expand to and the ratio, refused or read, with the time and
 *   peak RSS of `coverage` on it (goal: every amplification refused at once, in about the memory of a plain run);
 * - n mappings each merging one anchor at 300, 3,000 and 30,000: time per step of 10x (goal: ratio ≤ 12), beside
 *   the yaml package's parse of the same text (the floor: what reading it costs at all);
 * - `doctor --live` against a fake kubectl answering pages without end: wall time and peak RSS when the read
 *   stops, beside the limit that stopped it (goal: stopped at the limit, in its time, RSS below its bytes); and
 *   the pages of nodes with 450 labels each (what doctor keeps whole) with and without the budget on what doctor
 *   keeps (`--live-max-kept`), peak RSS per byte read (goal: the budget, not the bytes read, bounds the memory);
 * - doctor's and plan's `--markdown` on 5,000 and 50,000 broken nodes and on 3,000 agents: characters beside
 *   GitHub's 65,536 (goal: under it whatever the input);
 * - `plan --nodepools` with an instance type catalog of 2,000, 20,000 and 100,000 types (--max-instance-types raised):
 *   wall time per step of 10x (goal: ratio ≤ 12; it was quadratic, 10,000 types 20 s).
 * Inputs are generated in a temporary directory.
 *
 *   npx ts-node --project test/tsconfig.json bench/cli-bounds.bench.ts        (BENCH_BOUNDS=aliases,merges,live,markdown,catalog)
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { performance } from 'perf_hooks';
import * as YAML from 'yaml';
import { sized } from './mode';
import { GITHUB_COMMENT_LIMIT } from '../src/cli/comment';
import { parseManifestText } from '../src/cli/coverage/manifests';
import { aliasedArgs, mergedAnchors, nestedAliases, ONE_NODE_LIST } from '../test/util/hostile-yaml';

const ROOT = path.join(__dirname, '..');

interface ChildRun {
  readonly code: number | null;
  readonly ms: number;
  readonly rssMiB: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI in a child node (ts-node, transpile only) whose peak RSS is written to stderr at exit. */
function cli(dir: string, argv: readonly string[], env: Record<string, string> = {}): ChildRun {
  const preload = path.join(dir, 'rss.js');
  fs.writeFileSync(preload, "process.on('exit', () => require('fs').writeSync(2, '\\nRSS ' + process.resourceUsage().maxRSS + '\\n'));\n");
  const start = performance.now();
  const r = spawnSync(process.execPath, ['-r', require.resolve('ts-node/register/transpile-only'), '-r', preload, path.join(ROOT, 'src/cli/main.ts'), ...argv], {
    cwd: dir, encoding: 'utf-8', maxBuffer: 256 * 1024 * 1024, env: { ...process.env, TS_NODE_PROJECT: path.join(ROOT, 'test/tsconfig.json'), ...env },
  });
  const ms = performance.now() - start;
  const match = /\nRSS (\d+)\n/.exec(r.stderr);
  return { code: r.status, ms, rssMiB: match === null ? NaN : Number(match[1]) / 1024, stdout: r.stdout, stderr: r.stderr.replace(/\nRSS \d+\n/, '') };
}

function best(run: () => unknown): number {
  run();
  let fastest = Infinity;
  for (let k = 0; k < 3; k++) {
    const start = performance.now();
    run();
    fastest = Math.min(fastest, performance.now() - start);
  }
  return fastest;
}

/** One DaemonSet, in a file of its own: coverage needs one. */
const DS = JSON.stringify({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'a', namespace: 'agents', labels: { 'app.kubernetes.io/name': 'a' } },
  spec: { selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'main', image: 'example.com/a:1' }] } } },
});

function aliasShapes(dir: string): void {
  console.log('YAML aliases: bytes read, bytes they expand to, and what coverage does with them (goal: amplification refused at once)');
  const block = `{${Array.from({ length: 20 }, (_, i) => `k${i}: v${i}`).join(', ')}}`;
  const shapes: [string, string][] = [
    ['1 MB scalar x 600 aliases', aliasedArgs(sized(1_000_000, 10_000), 600)],
    ['300 KB scalar x 900 aliases', aliasedArgs(sized(300_000, 3_000), 900)],
    ['30 anchors deep, 10 aliases each (laughs)', nestedAliases()],
    ['a 200-byte block used 5 times', `kind: ConfigMap\nmetadata: {name: c}\nbase: &b ${block}\nuses: [*b, *b, *b, *b, *b]\n`],
    ['30,000 merges of one anchor', mergedAnchors(sized(30_000, 300))],
  ];
  fs.writeFileSync(path.join(dir, 'nodes.json'), ONE_NODE_LIST);
  fs.writeFileSync(path.join(dir, 'ds.json'), DS);
  console.log(`${'shape'.padEnd(44)} ${'read'.padStart(10)} ${'expands to'.padStart(12)} ${'ratio'.padStart(9)}  ${'verdict'.padEnd(8)} ${'time'.padStart(9)} ${'peak RSS'.padStart(9)}`);
  for (const [label, text] of shapes) {
    let expanded: number;
    try {
      expanded = JSON.stringify(parseManifestText(text, 'a.yaml').map((d) => d.object)).length;
    } catch (error) {
      const match = /expand (\d+) bytes to ([\d.e+]+)/.exec((error as Error).message);
      expanded = match === null ? NaN : Number(match[2]) * (text.length / Number(match[1]));
    }
    fs.writeFileSync(path.join(dir, 'a.yaml'), text);
    const r = cli(dir, ['coverage', '--nodes', 'nodes.json', 'a.yaml', 'ds.json']);
    const verdict = r.code === 2 && /alias amplification/.test(r.stderr) ? 'refused' : r.code === 2 ? 'error' : 'read';
    console.log(`${label.padEnd(44)} ${String(text.length).padStart(10)} ${expanded.toPrecision(3).padStart(12)} ${(expanded / text.length).toPrecision(3).padStart(9)}x `
      + `${verdict.padEnd(8)} ${r.ms.toFixed(0).padStart(7)} ms ${r.rssMiB.toFixed(0).padStart(5)} MiB`);
  }
  const plain = cli(dir, ['coverage', '--nodes', 'nodes.json', 'ds.json']);
  console.log(`${'  floor: coverage of one DaemonSet, no alias'.padEnd(44)} ${''.padStart(10)} ${''.padStart(12)} ${''.padStart(9)}  ${''.padEnd(8)} ${plain.ms.toFixed(0).padStart(7)} ms ${plain.rssMiB.toFixed(0).padStart(5)} MiB`);
}

function mergeKeys(): void {
  console.log('\nn mappings each merging one anchor (once n² steps): best of 3, and the ratio per step of 10x (goal ≤ 12)');
  let previous: [number, number] | undefined;
  for (const n of sized([300, 3_000, 30_000], [300])) {
    const text = mergedAnchors(n);
    const ours = best(() => parseManifestText(text, 'm.yaml'));
    const floor = best(() => YAML.parseAllDocuments(text, { version: '1.1', merge: true, uniqueKeys: false }));
    const ratio = previous === undefined ? '' : `   ratio ${(ours / previous[0]).toFixed(1)} (floor ${(floor / previous[1]).toFixed(1)})`;
    console.log(`  n=${String(n).padEnd(7)} ${ours.toFixed(1).padStart(9)} ms   floor (the yaml package's parse alone) ${floor.toFixed(1).padStart(9)} ms${ratio}`);
    previous = [ours, floor];
  }
}

/** A kubectl that answers every list with page.json's items and a fresh continue token: a server that pages without end. */
function endlessKubectl(dir: string, items: unknown[]): void {
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'page.json'), JSON.stringify(items));
  fs.writeFileSync(path.join(dir, 'bin', 'kubectl'), [
    '#!/bin/sh',
    'n=0; for a in "$@"; do case "$a" in *continue=*) n="${a##*continue=}";; esac; done',
    'printf \'{"kind":"List","metadata":{"continue":"%s"},"items":\' "$((n + 1))"',
    `cat "${path.join(dir, 'page.json')}"`,
    "printf '}'",
  ].join('\n'), { mode: 0o755 });
}

function liveRead(dir: string): void {
  console.log('\ndoctor --live against a kubectl answering pages without end: where the read stops (goal: stopped at the limit, in its time and below its bytes)');
  const nodes = (n: number, pad: number) => Array.from({ length: n }, (_, i) => ({ metadata: { name: `n-${i}`, labels: { 'kubernetes.io/os': 'linux' }, annotations: { a: 'x'.repeat(pad) } } }));
  const labelled = (k: number) => Object.fromEntries(Array.from({ length: k }, (_, j) => [`example.com/label-${j}`, 'v'.repeat(40)]));
  const shapes: [string, unknown[], string[], string][] = sized([
    ['1 node a page, a fresh token each', nodes(1, 0), ['--live-timeout', '20'], 'limit 20 s'],
    ['2,000 nodes a page', nodes(2000, 0), ['--live-max-objects', '1000000'], 'limit 1,000,000 objects'],
    ['64 MB pages (2,000 nodes, 32 KB notes)', nodes(2000, 32 * 1024), ['--live-max-bytes', '1Gi'], 'limit 1Gi'],
  ], [
    ['1 node a page, a fresh token each', nodes(1, 0), ['--live-timeout', '2'], 'limit 2 s'],
    ['200 nodes a page', nodes(200, 0), ['--live-max-objects', '2000'], 'limit 2,000 objects'],
    ['6 MB pages (200 nodes, 32 KB notes)', nodes(200, 32 * 1024), ['--live-max-bytes', '32Mi'], 'limit 32Mi'],
  ]);
  const hostile = nodes(sized(2000, 200), 0).map((n) => ({ metadata: { ...n.metadata, labels: labelled(450) } }));
  // the same bytes in labels, which doctor keeps (it matches selectors against them): without the kept budget memory
  // follows the bytes read; with it, the budget stops the read (the default's own row: the other limits at theirs)
  const labelShapes: [string, string[], string][] = sized([
    ['no kept budget (--live-max-kept 1Ti)', ['--live-max-bytes', '1Gi', '--live-max-kept', '1Ti'], 'limit 1Gi read'],
    ['--live-max-kept 512Mi', ['--live-max-bytes', '1Gi', '--live-max-kept', '512Mi'], 'limit 512Mi kept'],
    ['the defaults (3Gi kept, 64Gi read)', [], 'limit 3Gi kept'],
    // a smaller Node heap: the default follows it (the heap limit less 1Gi); a fixed 3Gi ran Node out of heap here
    ['the defaults under a 1,280 MiB heap', [], 'limit: the heap less 1Gi'],
    ['--live-max-kept 3Gi under a 1,280 MiB heap', ['--live-max-kept', '3Gi'], 'Node\'s heap limit'],
  ], [
    ['--live-max-kept 16Mi', ['--live-max-bytes', '256Mi', '--live-max-kept', '16Mi'], 'limit 16Mi kept'],
  ]);
  const heapOf = (label: string): Record<string, string> => (label.includes('1,280 MiB heap') ? { NODE_OPTIONS: '--max-old-space-size=1280' } : {});
  const env = { PATH: `${path.join(dir, 'bin')}${path.delimiter}${process.env.PATH}` };
  for (const [label, items, flags, limit] of shapes) {
    endlessKubectl(dir, items);
    const r = cli(dir, ['doctor', '--live', ...flags], env);
    const stopped = /page (\d+)\): (.*?),/.exec(r.stderr);
    console.log(`  ${label.padEnd(36)} exit ${r.code}, stopped at page ${stopped?.[1] ?? '?'} (${stopped?.[2] ?? r.stderr.slice(0, 80)}; ${limit}): `
      + `wall ${(r.ms / 1000).toFixed(1)} s, peak RSS ${r.rssMiB.toFixed(0)} MiB`);
  }
  const pageBytes = JSON.stringify(hostile).length;
  console.log(`  64 MB pages (2,000 nodes, 450 labels each; ${(pageBytes / 2 ** 20).toFixed(0)} MiB a page): peak RSS per byte read, without and with the budget on what doctor keeps`);
  endlessKubectl(dir, hostile);
  for (const [label, flags, limit] of labelShapes) {
    const r = cli(dir, ['doctor', '--live', ...flags], { ...env, ...heapOf(label) });
    const page = Number(/page (\d+)\)/.exec(r.stderr)?.[1] ?? NaN);
    const stopped = /: (kubectl printed more than [^,]*|what doctor keeps of the objects read is estimated at more than [^,]*),/.exec(r.stderr)?.[1]
      ?? (/heap out of memory/.test(r.stderr) ? 'Node ran out of heap' : r.stderr.slice(0, 80));
    // the page that passed a limit is read whole (the byte budget cuts it as kubectl prints it: read at most that)
    const read = page * pageBytes;
    console.log(`    ${label.padEnd(36)} exit ${r.code}, stopped in page ${page} (${stopped}; ${limit}): read at most ${(read / 2 ** 20).toFixed(0)} MiB, `
      + `wall ${(r.ms / 1000).toFixed(1)} s, peak RSS ${r.rssMiB.toFixed(0)} MiB, ${(r.rssMiB * 2 ** 20 / read).toFixed(2)} bytes of RSS per byte read`);
  }
}

function markdownSizes(dir: string): void {
  console.log(`\n--markdown size against GitHub's comment limit (${GITHUB_COMMENT_LIMIT} characters; goal: under it whatever the input)`);
  const node = (name: string) => ({ kind: 'Node', metadata: { name, labels: { 'kubernetes.io/os': 'linux' } }, status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '4', memory: '8Gi', pods: '110' } } });
  const ds = (name: string) => ({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'agents', labels: { 'app.kubernetes.io/name': name }, generation: 1 },
    spec: { selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: `example.com/${name}:1` }] } } },
  });
  for (const n of sized([5_000, 50_000], [500])) {
    fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify({ kind: 'List', items: [...Array.from({ length: n }, (_, i) => node(`node-${i}`)), ds('logs')] }));
    const markdown = cli(dir, ['doctor', '--state', 'state.json', '--markdown']);
    const text = cli(dir, ['doctor', '--state', 'state.json']);
    console.log(`  doctor, ${String(n).padStart(6)} nodes without their pod: markdown ${String(markdown.stdout.length).padStart(6)} characters `
      + `(${(100 * markdown.stdout.length / GITHUB_COMMENT_LIMIT).toFixed(0)}% of the limit), text ${text.stdout.split('\n').length} lines`);
  }
  const agents = Array.from({ length: sized(3_000, 30) }, (_, i) => ds(`agent-with-a-long-name-${i}`));
  fs.writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify({ kind: 'List', items: [node('n1'), node('n2')] }));
  fs.writeFileSync(path.join(dir, 'before.json'), JSON.stringify({ kind: 'List', items: agents }));
  fs.writeFileSync(path.join(dir, 'after.json'), JSON.stringify({ kind: 'List', items: agents.map((a) => JSON.parse(JSON.stringify(a).replace(':1"', ':2"'))) }));
  const plan = cli(dir, ['plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--markdown']);
  console.log(`  plan, 3,000 agents changed:                  markdown ${String(plan.stdout.length).padStart(6)} characters `
    + `(${(100 * plan.stdout.length / GITHUB_COMMENT_LIMIT).toFixed(0)}% of the limit)${/\*\*Cut here\*\*: (\d+) more/.test(plan.stdout) ? `, ${/\*\*Cut here\*\*: (\d+) more/.exec(plan.stdout)![1]} characters cut` : ''}`);
}

function catalogSizes(dir: string): void {
  // text output: --json lists every type (100,000 types are more than the child's output buffer)
  console.log('\nplan --nodepools, one pool allowing every type of the catalog (goal: time per step of 10x ≤ 12)');
  const d = path.join(ROOT, 'test/fixtures/nodepools/karpenter-3199');
  fs.writeFileSync(path.join(dir, 'pools.json'), JSON.stringify({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'wide' },
    spec: { template: { spec: { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7i'] }] } } },
  }));
  let last: number | undefined;
  for (const n of sized([2_000, 20_000, 100_000], [200, 2_000])) {
    const instanceTypes = Array.from({ length: n }, (_, i) => ({ name: `m7i.s${i}`, vcpu: 2 + (i % 64), memoryMiB: 8192 + i, maxPods: 29 }));
    fs.writeFileSync(path.join(dir, 'catalog.json'), JSON.stringify({ apiVersion: 'node-agents.cdk8s.io/v1alpha1', kind: 'InstanceTypeCatalog', instanceTypes }));
    const r = cli(dir, ['plan', '--nodes', `${d}/nodes.json`, '--before', `${d}/before.yaml`, '--after', `${d}/after.yaml`, '--nodepools', 'pools.json',
      '--instance-types', 'catalog.json', '--max-instance-types', String(n)]);
    console.log(`  ${String(n).padStart(7)} types: exit ${r.code}, wall ${(r.ms / 1000).toFixed(1)} s, peak RSS ${r.rssMiB.toFixed(0)} MiB`
      + `${last === undefined ? '' : `, ×${(r.ms / last).toFixed(1)} the previous`}`);
    last = r.ms;
  }
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-bench-bounds-'));
  try {
    // BENCH_BOUNDS=live,markdown runs only those parts
    const parts = process.env.BENCH_BOUNDS?.split(',');
    const all: [string, () => void][] = [['aliases', () => aliasShapes(dir)], ['merges', mergeKeys], ['live', () => liveRead(dir)], ['markdown', () => markdownSizes(dir)],
      ['catalog', () => catalogSizes(dir)]];
    for (const [name, part] of all) if (parts === undefined || parts.includes(name)) part();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
