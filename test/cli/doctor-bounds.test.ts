/**
 * doctor bounded on any input (issue 39): the live read has a total deadline, byte and object budget (a fake
 * kubectl on PATH answers pages without end, as test/cli/doctor-live.test.ts fakes it), and text and markdown print
 * at most 20 findings of a kind, every command's markdown under GitHub's comment limit. Figures (wall time and
 * peak RSS against endless pages, the markdown's size) are in `npm run bench`, never timed here.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as v8 from 'v8';
import { fitComment, GITHUB_COMMENT_LIMIT, MAX_MARKDOWN_CHARS } from '../../src/cli/comment';
import { DEFAULT_MAX_KEPT, defaultMaxKept, keptExceeded, MAX_KEPT_CAP } from '../../src/cli/doctor/kept';
import { DEFAULT_LIVE_BUDGET, PAGE_SIZE } from '../../src/cli/doctor/live';
import { StateBuilder } from '../../src/cli/doctor/state';
import { runCli } from '../../src/cli/run';
import { formatBytes } from '../../src/util/quantity';
import { agentDaemonSet, list, node, revision } from '../util/cluster';
import { REPO, TEST_ROOT } from '../util/paths';
import { daemonSet } from '../util/plan';

let dir: string;
let savedPath: string | undefined;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-bounds-'));
  savedPath = process.env.PATH;
  process.env.PATH = `${path.join(dir, 'bin')}${path.delimiter}${savedPath}`;
  fs.mkdirSync(path.join(dir, 'bin'));
});
afterEach(() => {
  process.env.PATH = savedPath;
  fs.rmSync(dir, { recursive: true, force: true });
});

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
  return { code, stdout, stderr };
}

/**
 * A kubectl that answers every list with the page in page.json and a fresh continue token (the one it was given
 * plus one): a server that pages without end. Each call appends a line to calls.log.
 */
function endlessKubectl(page: { items: unknown[] }): void {
  fs.writeFileSync(path.join(dir, 'page.json'), JSON.stringify(page.items));
  const script = [
    '#!/bin/sh',
    `echo call >> "${path.join(dir, 'calls.log')}"`,
    'n=0; for a in "$@"; do case "$a" in *continue=*) n="${a##*continue=}";; esac; done',
    'printf \'{"kind":"List","metadata":{"continue":"%s"},"items":\' "$((n + 1))"',
    `cat "${path.join(dir, 'page.json')}"`,
    "printf '}'",
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'bin', 'kubectl'), script, { mode: 0o755 });
}

const calls = () => fs.readFileSync(path.join(dir, 'calls.log'), 'utf-8').split('\n').filter((l) => l !== '').length;
const someNodes = (n: number, pad = 0) => Array.from({ length: n }, (_, i) => ({ metadata: { name: `n-${i}`, labels: { pad: 'x'.repeat(pad) } } }));

describe('case 3: doctor --live has a total deadline, byte and object budget', () => {
  test('a server that pages without end (a fresh continue token every page): stopped at the deadline, exit 2 naming --live-timeout', () => {
    endlessKubectl({ items: someNodes(1) });
    const r = run('doctor', '--live', '--live-timeout', '2');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('kubectl get --raw /api/v1/nodes');
    expect(r.stderr).toContain('the live read took longer than 2 s, the live read\'s limit (--live-timeout); raise it with --live-timeout (default 7200 s)');
    expect(r.stderr).toContain('pass --state');
  }, 60_000);

  test('pages of 1.2 MB without end: stopped at the byte budget, exit 2 naming --live-max-bytes; no page read past it', () => {
    const items = someNodes(18, 60).map((n) => ({ ...n, metadata: { ...n.metadata, annotations: { a: 'x'.repeat(64 * 1024) } } }));
    endlessKubectl({ items });
    const r = run('doctor', '--live', '--live-max-bytes', '5Mi');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('kubectl printed more than 5Mi, the live read\'s limit (--live-max-bytes); raise it with --live-max-bytes (default 64Gi)');
    // four pages fit in 5 MiB; the fifth is cut off as kubectl prints it (its output past the budget is not kept)
    expect(Math.floor(5 * 2 ** 20 / JSON.stringify(items).length)).toBe(4);
    expect(calls()).toBe(5);
  }, 60_000);

  test('pages of 2,000 objects without end: stopped at the object budget, exit 2 naming --live-max-objects', () => {
    endlessKubectl({ items: someNodes(PAGE_SIZE) });
    const r = run('doctor', '--live', '--live-max-objects', '5000');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('kubectl get --raw /api/v1/nodes (page 3): the lists held more objects than 5000, the live read\'s limit (--live-max-objects); '
      + 'raise it with --live-max-objects (default 10000000)');
    expect(calls()).toBe(3);
  }, 60_000);

  test('the defaults: one hour of the read or more, 64 GiB, 10 million objects, 3 GiB kept; the flags are checked as typed and only with --live', () => {
    expect(DEFAULT_LIVE_BUDGET).toEqual({ seconds: 7200, bytes: 64 * 2 ** 30, objects: 10_000_000, kept: defaultMaxKept() });
    expect(DEFAULT_MAX_KEPT).toBe(DEFAULT_LIVE_BUDGET.kept);
    for (const [argv, message] of [
      [['--live', '--live-timeout', '0'], '--live-timeout "0": give more than 0 seconds'],
      [['--live', '--live-timeout', '30s'], '--live-timeout "30s" has a unit'],
      [['--live', '--live-max-bytes', 'lots'], '--live-max-bytes "lots": give a size of at least one byte, such as 64Gi or 500Mi'],
      [['--live', '--live-max-objects', '1e6'], '--live-max-objects "1e6": give a whole number of objects'],
      [['--state', 'x.json', '--live-max-objects', '5'], '--live-max-objects bounds the live read: give it with --live'],
      [['--live', '--live-max-kept', 'lots'], '--live-max-kept "lots": give a size of at least one byte, such as 3Gi or 500Mi'],
      [['--state', 'x.json', '--live-max-kept', '0'], '--live-max-kept "0": give a size of at least one byte'],
    ] as const) {
      const r = run('doctor', ...argv);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
    }
  });
});

/** `n` nodes of `k` labels each (40-character values): what doctor keeps whole of a node, since selectors match them. */
const labelledNodes = (n: number, k: number, from = 0) => Array.from({ length: n }, (_, i) => ({
  kind: 'Node',
  metadata: { name: `n-${from + i}`, labels: Object.fromEntries(Array.from({ length: k }, (__, j) => [`example.com/label-${j}`, 'v'.repeat(40)])) },
}));

describe('case 3: what doctor keeps is bounded (--live-max-kept), whatever the bytes read allow', () => {
  test('the default follows the Node heap: 3 GiB where the heap allows it, else the heap less 1 GiB for the page being parsed, at least 256 MiB', () => {
    const MiB = 2 ** 20;
    expect(defaultMaxKept(4144 * MiB)).toBe(MAX_KEPT_CAP); // a 16 GB machine's default heap
    expect(defaultMaxKept(1792 * MiB + 123)).toBe(768 * MiB); // a 7 GB runner's, to whole MiB
    expect(defaultMaxKept(1100 * MiB)).toBe(256 * MiB);
    expect(DEFAULT_MAX_KEPT).toBe(defaultMaxKept(v8.getHeapStatistics().heap_size_limit));
  });

  test('under a small Node heap (--max-old-space-size=1280), pages of nodes with 450 labels each stop at the default with exit 2, not at Node\'s heap limit', () => {
    endlessKubectl({ items: labelledNodes(2000, 450) });
    const r = spawnSync(process.execPath, ['--max-old-space-size=1280', '-r', require.resolve('ts-node/register/transpile-only'),
      path.join(REPO, 'src', 'cli', 'main.ts'), 'doctor', '--live'], {
      cwd: dir, encoding: 'utf-8', env: { ...process.env, TS_NODE_PROJECT: path.join(TEST_ROOT, 'tsconfig.json') },
    });
    expect(r.stderr).toMatch(/^node-agents doctor: kubectl get --raw \/api\/v1\/nodes \(page \d+\): items\[\d+\]: what doctor keeps of the objects read is estimated at more than \d+Mi, the live read's limit \(--live-max-kept, the default\)/);
    expect(r.status).toBe(2);
  }, 120_000);

  test('pages of nodes with 450 labels each without end: stopped at the kept budget, long before the byte budget, exit 2 naming --live-max-kept', () => {
    // 200 nodes a page: some 1.3 MB of JSON, about 10 MB kept (HeapEstimate: some 50 KB a node in dictionary mode)
    endlessKubectl({ items: labelledNodes(200, 450) });
    const r = run('doctor', '--live', '--live-max-kept', '30Mi');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^node-agents doctor: kubectl get --raw \/api\/v1\/nodes \(page \d\): items\[\d+\]: what doctor keeps of the objects read is estimated at more than 30Mi, the live read's limit \(--live-max-kept\); raise it with --live-max-kept \(default (3Gi|\d+Mi)\) on a machine with the memory for it\n$/);
    // it stops inside the page that passes the budget: three pages (some 3.9 MB read) hold about 30 MB kept
    expect(r.stderr).toContain('(page 4)');
    expect(calls()).toBe(4);
  }, 60_000);

  test('the error says when the limit is the default', () => {
    expect(keptExceeded('here', DEFAULT_MAX_KEPT, 'the live read\'s limit').message).toBe(`here: what doctor keeps of the objects read is estimated at more than ${formatBytes(DEFAULT_MAX_KEPT)}, `
      + `the live read's limit (--live-max-kept, the default); raise it with --live-max-kept (default ${formatBytes(DEFAULT_MAX_KEPT)}) on a machine with the memory for it`);
    // a node's 450 labels of 40 characters are counted (a dictionary-mode object: 18 KB of values and more)
    const builder = new StateBuilder();
    builder.add(labelledNodes(1, 450)[0], 'x');
    expect(builder.kept).toBeGreaterThan(450 * (16 + 40));
  });

  test('doctor --state: a dump whose nodes carry 450 labels each stops at the same budget, naming the file, the object and the flag', () => {
    fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify({ kind: 'List', items: labelledNodes(400, 450) }));
    const r = run('doctor', '--state', 'state.json', '--live-max-kept', '10Mi');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toMatch(/^node-agents doctor: state\.json: items\[\d+\]: what doctor keeps of the objects read is estimated at more than 10Mi, the limit of what doctor keeps \(--live-max-kept\); raise it with --live-max-kept \(default (3Gi|\d+Mi)\)/);
  }, 60_000);
});

/** A dump of `n` Linux nodes and one DaemonSet that should cover them all, with no pod anywhere: n no-pod findings. */
function brokenNodes(n: number, daemonSets = 1): string {
  const sets = Array.from({ length: daemonSets }, (_, i) => agentDaemonSet(`logs-${i}`));
  return JSON.stringify(list([...Array.from({ length: n }, (_, i) => node(`node-${i}`)), ...sets, ...sets.map((ds) => revision(ds, 'v1', 1))]));
}

const CMARK = spawnSync('cmark-gfm', ['--version']).status === 0;
function render(markdown: string): string {
  const result = spawnSync('cmark-gfm', ['--unsafe', '-e', 'table', '-e', 'autolink', '-e', 'tagfilter'], { input: markdown, encoding: 'utf-8' });
  expect(result.status).toBe(0);
  return result.stdout;
}

describe('case 4: doctor prints at most 20 findings of a kind; every command\'s markdown fits one comment', () => {
  test('5,000 nodes without a pod: 20 findings and a count in text and markdown, all 5,000 in JSON; the markdown under 65,536 characters', () => {
    fs.writeFileSync(path.join(dir, 'state.json'), brokenNodes(5000));
    const json = run('doctor', '--state', 'state.json', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).findings.filter((f: { cause: string }) => f.cause === 'no-pod')).toHaveLength(5000);

    const text = run('doctor', '--state', 'state.json');
    expect(text.code).toBe(1);
    expect(text.stdout.split('\n').filter((l) => l.startsWith('! [no-pod]'))).toHaveLength(20);
    expect(text.stdout).toContain('FINDINGS (5000 errors, 0 warnings)');
    expect(text.stdout).toContain('! … 4980 more no-pod errors (all in --json)');
    expect(text.stdout.split('\n').length).toBeLessThan(100);

    const markdown = run('doctor', '--state', 'state.json', '--markdown');
    expect(markdown.code).toBe(1);
    expect(markdown.stdout.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
    expect(markdown.stdout).toContain('**5000 findings**');
    expect(markdown.stdout.split('\n').filter((l) => l.startsWith('| ❌ | no-pod |'))).toHaveLength(20);
    expect(markdown.stdout).toContain('- … 4980 more no\\-pod errors (all in `--json`)');
    if (CMARK) {
      const html = render(markdown.stdout);
      expect(html.match(/<tr>/g)).toHaveLength(2 + 21); // the DaemonSet table's header and row, the findings' header and 20 rows
      expect(html).toContain('<li>… 4980 more no-pod errors (all in <code>--json</code>)</li>');
    }
  }, 120_000);

  test('5,000 DaemonSets: the markdown lists 50 and counts the rest, under the comment limit', () => {
    fs.writeFileSync(path.join(dir, 'state.json'), brokenNodes(2, 5000));
    const markdown = run('doctor', '--state', 'state.json', '--markdown');
    expect(markdown.code).toBe(1);
    expect(markdown.stdout.length).toBeLessThan(GITHUB_COMMENT_LIMIT);
    expect(markdown.stdout).toContain('… 4950 more DaemonSets (all in `--json`)');
  }, 120_000);

  test('plan --markdown of 1,000 agents (a table row each, over the limit): cut at a line end, its <details> closed, the cut said', () => {
    const nodes = JSON.stringify(list([node('n1'), node('n2')]));
    const agents = Array.from({ length: 1000 }, (_, i) => daemonSet(`agent-with-a-long-name-${i}`, { agent: `agent-with-a-long-name-${i}` }));
    const changed = agents.map((a) => JSON.parse(JSON.stringify(a).replace(/"image":"[^"]*"/, '"image":"example.com/x:2"')));
    fs.writeFileSync(path.join(dir, 'nodes.json'), nodes);
    fs.writeFileSync(path.join(dir, 'before.json'), JSON.stringify(list(agents)));
    fs.writeFileSync(path.join(dir, 'after.json'), JSON.stringify(list(changed)));
    const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--markdown');
    expect(r.stderr).toBe('');
    expect(r.stdout.length).toBeLessThanOrEqual(MAX_MARKDOWN_CHARS);
    expect(r.stdout).toMatch(/\*\*Cut here\*\*: \d+ more characters would not fit in one comment \(GitHub takes at most 65536\); the whole report is in the command's `--json` output\.\n$/);
    expect((r.stdout.match(/^<details>/gm) ?? []).length).toBe((r.stdout.match(/^<\/details>/gm) ?? []).length);
    if (CMARK) {
      const html = render(r.stdout);
      expect((html.match(/<details>/g) ?? []).length).toBe((html.match(/<\/details>/g) ?? []).length);
      expect(html).toContain('<strong>Cut here</strong>');
    }
  }, 120_000);

  test('fitComment: a comment that fits is unchanged; one that does not is cut at a line end, never past the limit', () => {
    expect(fitComment('short\n')).toBe('short\n');
    const long = Array.from({ length: 5000 }, (_, i) => `| row ${i} | ${'x'.repeat(20)} |`).join('\n');
    const cut = fitComment(`### title\n\n<details><summary>s</summary>\n\n${long}\n\n</details>\n`);
    expect(cut.length).toBeLessThanOrEqual(MAX_MARKDOWN_CHARS);
    expect(cut).toMatch(/\| row \d+ \| x{20} \|\n\n<\/details>\n\n---\n\n\*\*Cut here\*\*/);
  });
});
