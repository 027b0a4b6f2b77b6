/**
 * The node tools on hostile input. In the README's pull-request job every string of a manifest
 * tree or an inventory is attacker-controlled: nothing from it may reach a shell (command), a
 * kubectl option (option), a comment's markup (markup) or a terminal (escape); special files
 * (special file) and oversized or amplified input (size) must end in a clear error, exit 2.
 * Large inputs are generated here, never committed.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as fc from 'fast-check';
import { gpuRelabelSteps } from '../../src/cli/coverage/labelling';
import { manifestSet, ManifestSet } from '../../src/cli/coverage/manifests';
import { gpuText } from '../../src/cli/label-command';
import { planChange } from '../../src/cli/plan/plan';
import { planMarkdown, planText } from '../../src/cli/plan-command';
import { runCli } from '../../src/cli/run';
import { tolerated, toleratesTaint } from '../../src/scheduling/tolerations';
import { markdownEscape, terminalSafe } from '../../src/util/output-escape';
import { parseQuantity } from '../../src/util/quantity';
import { REPO } from '../util/paths';
import { daemonSet, inventory } from '../util/plan';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-hostile-'));
afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }));
let counter = 0;

/** A fresh directory holding the given files (name → content). */
function dir(files: Record<string, string>): string {
  const root = path.join(TMP, `case-${counter++}`);
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), content);
  }
  fs.mkdirSync(root, { recursive: true });
  return root;
}

function run(cwd: string, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    cwd,
  });
  return { code, stdout, stderr };
}

function node(name: string, labels: Record<string, string> = {}, extra: Record<string, unknown> = {}) {
  return {
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name, ...labels } },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
    ...extra,
  };
}

/**
 * A tree whose names (agent, DaemonSet id, group, version, source) are rewritten after reading: the
 * reader now refuses such names in manifests, but plan's output must stay safe whatever it is given.
 */
function renamed(set: ManifestSet, name: (base: string) => string): ManifestSet {
  return {
    ...set,
    daemonSets: set.daemonSets.map((d) => ({
      ...d,
      agent: name(d.agent),
      source: name(d.source),
      rolloutGroup: d.rolloutGroup === undefined ? undefined : name(d.rolloutGroup),
      version: d.version === undefined ? undefined : name(d.version),
    })),
  };
}

function nodeList(nodes: unknown[]): string {
  return JSON.stringify({ kind: 'List', apiVersion: 'v1', items: nodes });
}

/** A DaemonSet as YAML text (JSON is YAML). */
function yamlOf(...objects: unknown[]): string {
  return objects.map((o) => JSON.stringify(o)).join('\n---\n');
}

/** Terminal control: ESC, OSC (window title), clear screen, a CSI colour, the 8-bit CSI, a bidi override. */
const ESCAPES = '\u001b]0;pwned\u0007\u001b[2J\u001b[32msafe\u001b[0m\u009b31m\u202egnp.exe';
const HOSTILE = `x\`|<!-- \n**Safe**: no findings @org/team #12 GH-7 <img src=x onerror=alert(1)> [link](https://evil.example) -->|${ESCAPES}`;

describe('escape: no terminal control reaches the output', () => {
  test('terminalSafe writes every control, C1 and bidi character as its code', () => {
    expect(terminalSafe('a\u001b[2Jb\nc\u009b\u202e\u2066\u200b\ud800')).toBe('a\\x1b[2Jb\\nc\\x9b\\u202e\\u2066\\u200b\\ud800');
    expect(terminalSafe('plain-name.example:1 ✓ 東京')).toBe('plain-name.example:1 ✓ 東京');
  });

  test('plan text: hostile names print as their codes, never a line of their own', () => {
    const name = (base: string) => `${base}${HOSTILE}`;
    const before = renamed(manifestSet([{ source: 'before', object: daemonSet('a', { agent: 'x' }) }]), name);
    const after = renamed(manifestSet([
      { source: 'after', object: daemonSet('a', { agent: 'x', image: 'x:2' }) },
      { source: 'after', object: daemonSet('b', { agent: 'x' }) },
    ]), name);
    const text = planText([{ before: 'main', after: `pr\n${ESCAPES}`, report: planChange(before, after, inventory([{ name: 'n1' }])) }]);
    // eslint-disable-next-line no-control-regex
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(text.split('\n').filter((line) => line.startsWith('**Safe**'))).toEqual([]);
  });

  test('errors on stderr and coverage text carry no escape sequence', () => {
    const root = dir({
      'nodes.json': nodeList([node('n1')]),
      'ds.yaml': yamlOf(daemonSet('a')),
      [`bad${ESCAPES.replace(/\//g, '')}.yaml`]: 'kind: [',
    });
    const r = run(root, 'coverage', '--nodes', 'nodes.json', '.');
    expect(r.code).toBe(2);
    // eslint-disable-next-line no-control-regex
    expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/);
    expect(r.stderr).toContain('\\x1b]0;pwned');
  });
});

describe('markup: plan --markdown keeps its structure whatever the names (rendered with cmark-gfm)', () => {
  const CMARK = spawnSync('cmark-gfm', ['--version']).status === 0;

  /** A plan with a name used everywhere a name can appear: agent, DaemonSet, group, version, node, tree. */
  function markdownFor(name: (base: string) => string): string {
    const agent = 'agent';
    const ds = (n: string, options: Parameters<typeof daemonSet>[1]) => {
      const object = daemonSet(n, options) as any;
      object.metadata.labels['app.kubernetes.io/version'] = '1.0';
      object.spec.template.metadata.labels['node-agents.cdk8s.io/rollout-group'] = 'canary';
      return object;
    };
    const before = renamed(manifestSet([{ source: 'before.yaml', object: ds('a', { agent }) }]), name);
    const after = renamed(manifestSet([
      { source: 'after.yaml', object: ds('a', { agent, image: 'x:2' }) },
      { source: 'after.yaml', object: ds('b', { agent }) },
    ]), name);
    const nodes = inventory([{ name: name('node-1') }, { name: 'node-2' }]);
    return planMarkdown([{ before: name('main'), after: name('pr'), report: planChange(before, after, nodes) }]);
  }

  function render(markdown: string): string {
    const result = spawnSync('cmark-gfm', ['--unsafe', '-e', 'table', '-e', 'autolink', '-e', 'tagfilter', '-e', 'strikethrough'], { input: markdown, encoding: 'utf-8' });
    expect(result.status).toBe(0);
    return result.stdout;
  }

  /** The rendered HTML's tags in order: the comment's structure. */
  function skeleton(html: string): string[] {
    return html.match(/<\/?[a-zA-Z][a-zA-Z0-9]*|<!--/g) ?? [];
  }

  test('cmark-gfm is installed where CI runs (Debian package cmark-gfm; .ci/run installs it)', () => {
    if (process.env.CI !== undefined) expect(CMARK).toBe(true);
  });

  (CMARK ? test : test.skip)('hostile names render the same structure as plain ones, as literal text', () => {
    const plain = render(markdownFor((base) => base));
    const hostile = render(markdownFor((base) => `${base}${HOSTILE}`));
    expect(skeleton(hostile)).toEqual(skeleton(plain));
    expect(hostile).not.toContain('<!--');
    expect(hostile).not.toContain('<img');
    expect(hostile).not.toContain('href=');
    // mentions and references are broken by a zero-width space: GitHub links neither
    expect(hostile).not.toMatch(/@org/);
    expect(hostile).not.toMatch(/#12/);
    expect(hostile).not.toMatch(/GH-7/);
    // the name is all there, as text (HTML-escaped by the renderer)
    expect(hostile).toContain('**Safe**: no findings @\u200borg/team');
  });

  test('markdownEscape: punctuation escaped, newlines and controls as codes, mentions broken', () => {
    expect(markdownEscape('a|b`c\nd')).toBe('a\\|b\\`c\\\\nd');
    expect(markdownEscape('@team #1 gh-2')).toBe('\\@&#8203;team \\#&#8203;1 gh&#8203;\\-2');
    expect(markdownEscape('node-1.example')).toBe('node\\-1\\.example');
  });
});

const ROOT = REPO;
const KEY = 'node-agents.cdk8s.io/rollout-wave';

/** Runs a printed script in bash with kubectl replaced by a function printing its argv: what would run. */
function runInBash(script: string, cwd: string): { status: number | null; calls: string[][] } {
  const fake = 'kubectl() { printf \'%s\\0\' "$@"; printf \'\\1\'; }\ngrep() { return 0; }\n';
  const r = spawnSync('bash', ['-s'], { input: fake + script, encoding: 'utf-8', cwd });
  return { status: r.status, calls: r.stdout.split('\u0001').slice(0, -1).map((record) => record.split('\0').slice(0, -1)) };
}

describe('command: nothing from the inventory runs when label output is piped to sh', () => {
  test('a GPU node\'s current wave label value cannot end the # comment of its relabel steps', () => {
    const gpuCluster = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fixtures/label/gpu-cluster.json'), 'utf-8'));
    const root = dir({});
    const canary = path.join(root, 'pwned');
    const hostile = `old\ntouch ${canary}\n#`;
    // such a value is no label value: the inventory is refused where it is read (exit 2, nothing printed)
    for (const item of gpuCluster.items) {
      if (item.metadata.name.startsWith('gpu-')) item.metadata.labels[KEY] = hostile;
    }
    fs.writeFileSync(path.join(root, 'nodes.json'), JSON.stringify(gpuCluster));
    const r = run(ROOT, 'label', '--nodes', path.join(root, 'nodes.json'), '--wave', 'canary=0.3', '--diff',
      '--manifests', 'test/fixtures/label/gpu-driver-waves.yaml');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('is not a valid label value');
    // and were it printed, its comment line escapes it: the steps of a move from that value, piped to bash
    const text = gpuText({
      drivers: ['gpu-operator/gpu-driver-canary'],
      waved: true,
      moves: [{
        node: 'gpu-1',
        from: hostile,
        to: 'canary',
        driver: 'gpu-operator/gpu-driver-fleet',
        steps: gpuRelabelSteps(KEY, 'gpu-1', 'canary'),
      }],
    });
    expect(text).toContain('# gpu-1: old\\ntouch');
    const { status, calls } = runInBash(text, root);
    expect(status).toBe(0);
    expect(fs.existsSync(canary)).toBe(false);
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((argv) => argv[0] !== 'touch')).toBe(true);
  });
});

describe('option: no node name reaches kubectl as an option', () => {
  test.each([
    ['--all'], ['--selector=kubernetes.io/os=linux'], ['-A'], ['__proto__'], ['Node-1'], ['a\nb'], ['x'.repeat(254)], [`n${ESCAPES}`],
  ])('node named %j: refused where the inventory is read (exit 2, nothing on stdout, no raw bytes)', (name) => {
    const root = dir({ 'nodes.json': nodeList([node('ok-1'), node(name)]), 'ds.yaml': yamlOf(daemonSet('a')) });
    for (const argv of [
      ['label', '--nodes', 'nodes.json', '--wave', 'canary=0.5'],
      ['coverage', '--nodes', 'nodes.json', 'ds.yaml'],
      ['plan', '--nodes', 'nodes.json', '--before', 'ds.yaml', '--after', 'ds.yaml'],
    ]) {
      const r = run(root, ...argv);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain('items[1]: node name');
      expect(r.stderr).toContain('is not a valid Kubernetes node name');
      expect(r.stderr).not.toContain('\n ');
      // eslint-disable-next-line no-control-regex
      expect(r.stderr.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
    }
  });

  test('every kubectl line puts its options before "--" and the node after it', () => {
    const r = run(ROOT, 'label', '--nodes', 'test/fixtures/label/gpu-cluster.json', '--wave', 'canary=0.3',
      '--manifests', 'test/fixtures/label/gpu-driver-waves.yaml');
    const lines = r.stdout.split('\n').filter((l) => /^kubectl (label|cordon|drain|uncordon)/.test(l));
    expect(lines.length).toBeGreaterThan(10);
    for (const line of lines) expect(line).toMatch(/^kubectl (label node|cordon|drain|uncordon)( --[a-z-]+(=\S+)?)* -- [a-z0-9.-]+( \S+)?$/);
  });
});

describe('special file: regular files only, a size limit, no content in errors', () => {
  const DS = yamlOf(daemonSet('a'));

  test.each([['/dev/zero'], ['/dev/urandom'], ['/dev/null']])('a symlink in the after-tree to %s is refused (exit 2), not read', (target) => {
    const root = dir({ 'nodes.json': nodeList([node('n1')]), 'before/ds.yaml': DS, 'after/ds.yaml': DS });
    fs.symlinkSync(target, path.join(root, 'after', 'zz.yaml'));
    const r = run(root, 'plan', '--nodes', 'nodes.json', '--before', 'before', '--after', 'after');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('after/zz.yaml: a symbolic link to something other than a regular file, not a regular file');
  });

  test('a FIFO in the tree, or given as --nodes, is refused at once (never waits for a writer)', () => {
    const root = dir({ 'nodes.json': nodeList([node('n1')]), 'tree/ds.yaml': DS });
    const made = spawnSync('mkfifo', [path.join(root, 'tree', 'pipe.yaml'), path.join(root, 'fifo.json')]);
    expect(made.status).toBe(0);
    const tree = run(root, 'coverage', '--nodes', 'nodes.json', 'tree');
    expect(tree).toMatchObject({ code: 2, stdout: '' });
    expect(tree.stderr).toContain('tree/pipe.yaml: a named pipe (FIFO), not a regular file');
    const given = run(root, 'coverage', '--nodes', 'nodes.json', 'tree/pipe.yaml');
    expect(given.stderr).toContain('tree/pipe.yaml: a named pipe (FIFO), not a regular file');
    const nodes = run(root, 'coverage', '--nodes', 'fifo.json', 'tree/ds.yaml');
    expect(nodes.stderr).toContain('fifo.json: a named pipe (FIFO), not a regular file');
  });

  test('--nodes /etc/passwd, or any file that is not JSON: the error shows none of its content', () => {
    const root = dir({ 'ds.yaml': DS, 'secret.json': 'root:x:0:0:root:/root:/bin/bash\n', 'secret.yaml': 'root:x:0:0:root:/root:/bin/bash\n  - [\n' });
    const r = run(root, 'coverage', '--nodes', 'secret.json', 'ds.yaml');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('secret.json: not valid JSON');
    expect(r.stderr).not.toContain('root');
    const y = run(root, 'coverage', '--nodes', 'secret.json', 'secret.yaml');
    expect(y.stderr).not.toContain('root:x');
    const m = run(root, 'coverage', '--nodes', nodeListFile(root), 'secret.yaml');
    expect(m.code).toBe(2);
    expect(m.stderr).toContain('secret.yaml: ');
    expect(m.stderr).not.toContain('root:x');
  });

  test('a file over the size limit is refused before it is read (a sparse file: nothing large is written)', () => {
    const root = dir({ 'ds.yaml': DS });
    fs.writeFileSync(path.join(root, 'huge.json'), '');
    fs.truncateSync(path.join(root, 'huge.json'), 300 * 1024 * 1024);
    const r = run(root, 'coverage', '--nodes', 'huge.json', 'ds.yaml');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('huge.json: 300 MiB, more than the 256 MiB read from one file');
  });
});

function nodeListFile(root: string): string {
  fs.writeFileSync(path.join(root, 'nodes.json'), nodeList([node('n1')]));
  return 'nodes.json';
}

describe('nonsense values are errors (exit 2), as the API server\'s types refuse them, never "safe"', () => {
  const strategy = (maxUnavailable: string) => `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: a, namespace: ops, labels: {app.kubernetes.io/name: a}}
spec:
  selector: {matchLabels: {app: a}}
  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: ${maxUnavailable}}}
  template:
    metadata: {labels: {app: a}}
    spec: {containers: [{name: a, image: "a:2"}]}
`;
  test.each([
    ['.nan', 'maxUnavailable NaN is not an integer'],
    ['-5', 'maxUnavailable -5 is negative'],
    ['0.5', 'maxUnavailable 0.5 is not an integer'],
    ['"5"', 'maxUnavailable "5" is neither an integer nor a percentage'],
    ['yes', 'maxUnavailable true is neither an integer nor a percentage'],
  ])('maxUnavailable: %s', (value, message) => {
    const root = dir({ 'nodes.json': nodeList([node('n1')]), 'before.yaml': yamlOf(daemonSet('a')), 'after.yaml': strategy(value) });
    const r = run(root, 'plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'after.yaml');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain(message);
  });

  test.each([
    ['minReadySeconds 1e300', { minReadySeconds: 1e300 }, {}, 'spec.minReadySeconds 1e+300 is not a whole number from 0 to 2147483647'],
    ['minReadySeconds -1', { minReadySeconds: -1 }, {}, 'spec.minReadySeconds -1 is not a whole number'],
    ['a nodeSelector value that is not a string', {}, { nodeSelector: { ssd: true } }, 'nodeSelector: the value of "ssd" is true, not a string'],
    ['node affinity values given as a string', {}, {
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: 'gpu-large' }] }] } } },
    }, 'matchExpressions[0]: values must be a list of strings'],
    ['a toleration with a numeric value', {}, { tolerations: [{ key: 'k', operator: 'Equal', value: 5 }] }, 'tolerations[0].value: 5 is not a string'],
  ])('%s', (_name, spec, podSpec, message) => {
    const ds = daemonSet('a') as any;
    Object.assign(ds.spec, spec);
    Object.assign(ds.spec.template.spec, podSpec);
    const root = dir({ 'nodes.json': nodeList([node('n1', { pool: 'gpu' })]), 'ds.yaml': yamlOf(ds) });
    for (const argv of [['coverage', '--nodes', 'nodes.json', 'ds.yaml'], ['estimate', '--nodes', 'nodes.json', 'ds.yaml']]) {
      const r = run(root, ...argv);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain(message);
    }
  });

  test('a DaemonSet name or label the API server refuses is an error', () => {
    const named = daemonSet('a') as any;
    named.metadata.name = 'A_B';
    const labelled = daemonSet('b', { agent: 'x y' });
    for (const [object, message] of [[named, 'metadata.name "A_B" is not a DNS subdomain'], [labelled, 'is not a valid label value']] as const) {
      const root = dir({ 'nodes.json': nodeList([node('n1')]), 'ds.yaml': yamlOf(object) });
      const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml');
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain(message);
    }
  });
});

describe('size: work and output bounded by the input (jest\'s timeout bounds the time; figures in npm run bench)', () => {
  const ds = (name: string, extra: (object: any) => void = () => undefined) => {
    const object = daemonSet(name, { agent: 'one' }) as any;
    extra(object);
    return object;
  };

  test('1,000 DaemonSets of one agent (one host port): checked node by node, one grouped finding per cause, output bounded by the input', () => {
    const many = Array.from({ length: 1000 }, (_, i) => ds(`a-${i}`, (o) => { o.spec.template.spec.containers[0].ports = [{ containerPort: 9100, hostPort: 9100 }]; }));
    const after = yamlOf(...many);
    const nodes = Array.from({ length: 20 }, (_, i) => node(`n${i}`));
    const root = dir({ 'nodes.json': nodeList(nodes), 'before.yaml': yamlOf(ds('a-0')), 'after.yaml': after });
    const argv = ['plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'after.yaml'];
    const json = run(root, ...argv, '--json');
    expect(json).toMatchObject({ code: 1, stderr: '' });
    const findings = JSON.parse(json.stdout).steps[0].findings as { kind: string; cause: string; daemonSets: string[]; nodes: string[] }[];
    // pairwise, these were 499,500 duplicate and 499,500 host-port findings
    expect(findings.map((f) => `${f.kind}/${f.cause} ${f.daemonSets.length} DaemonSets on ${f.nodes.length} nodes`).sort()).toEqual([
      'never-starts/host-port 1000 DaemonSets on 20 nodes',
      'two-pods-per-node/duplicate 1000 DaemonSets on 20 nodes',
    ]);
    for (const format of [[], ['--markdown']]) {
      const r = run(root, ...argv, ...format);
      expect(r).toMatchObject({ code: 1, stderr: '' });
      // (markdown escapes punctuation with backslashes)
      expect(r.stdout.replace(/\\/g, '')).toContain('one runs 1000 pods on 20 nodes (n0, n1, n10, n11, n12, … 15 more) for good: '
        + '1000 of its DaemonSets (agents/a-0, agents/a-1, agents/a-10, agents/a-100, agents/a-101, … 995 more) all cover them');
      // one table row per DaemonSet and a few lines more: a fraction of the input's size
      expect(r.stdout.length).toBeLessThan(after.length / 2);
    }
    expect(json.stdout.length).toBeLessThan(after.length);
    const coverage = run(root, 'coverage', '--nodes', 'nodes.json', 'after.yaml', '--json');
    expect(coverage.stderr).toBe('');
    const problems = JSON.parse(coverage.stdout).problems as { kind: string; daemonSets: string[]; nodes: string[] }[];
    expect(problems.map((p) => `${p.kind} ${p.daemonSets.length} ${p.nodes.length}`).sort()).toEqual(['duplicate 1000 20', 'host-port-clash 1000 20']);
  }, 60_000);

  test('findings past 20 of a kind are counted, not printed (text and markdown); --json lists them all', () => {
    // 30 agents each run twice: 30 duplicate findings (the DaemonSets of one agent make one finding)
    const many = Array.from({ length: 30 }, (_, i) => [daemonSet(`a-${i}`, { agent: `agent-${i}` }), daemonSet(`b-${i}`, { agent: `agent-${i}` })]).flat();
    const root = dir({ 'nodes.json': nodeList([node('n1'), node('n2')]), 'before.yaml': yamlOf(ds('a-0')), 'after.yaml': yamlOf(...many) });
    const argv = ['plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'after.yaml'];
    const json = JSON.parse(run(root, ...argv, '--json').stdout);
    const twoPods = json.steps[0].findings.filter((f: { kind: string }) => f.kind === 'two-pods-per-node').length;
    expect(twoPods).toBeGreaterThan(20);
    const text = run(root, ...argv);
    expect(text.code).toBe(1);
    expect(text.stdout.split('\n').filter((l) => l.startsWith('! [two-pods-per-node'))).toHaveLength(20);
    expect(text.stdout).toContain(`! … ${twoPods - 20} more two-pods-per-node errors (all in --json)`);
    const markdown = run(root, ...argv, '--markdown').stdout;
    expect(markdown.split('\n').filter((l) => l.includes('**two\\-pods\\-per\\-node**'))).toHaveLength(20);
    expect(markdown).toContain(`- … ${twoPods - 20} more two\\-pods\\-per\\-node errors (all in \`--json\`)`);
  }, 30_000);

  test('30,000 taints x 30,000 tolerations: indexed, not compared pairwise', () => {
    const taints = Array.from({ length: 30_000 }, (_, i) => ({ key: `example.com/t-${i}`, value: `v${i}`, effect: 'NoSchedule' }));
    const tolerations = Array.from({ length: 30_000 }, (_, i) => ({ key: `example.com/t-${i + 1}`, operator: 'Equal', value: `v${i + 1}`, effect: 'NoSchedule' }));
    const root = dir({
      'nodes.json': nodeList([node('n1', {}, { spec: { taints } }), node('n2')]),
      'ds.yaml': yamlOf(ds('a', (o) => { o.spec.template.spec.tolerations = tolerations; })),
    });
    const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml', '--json');
    expect(r.stderr).toBe('');
    const agent = JSON.parse(r.stdout).agents[0];
    // t-0 is the one taint no toleration matches
    expect(agent.nodes.find((n: { node: string }) => n.node === 'n1').placements[0].reasons.join(' ')).toContain('example.com/t-0');
  }, 30_000);

  test('20,000 nodeSelectorTerms on 20,000 nodes: indexed by label, not 4e8 checks; the right nodes covered', () => {
    // term i: pool In [p-i] and (for odd i) zone In [z-1]; node j: pool p-(j mod 2,000), zone z-(j mod 3)
    const terms = Array.from({ length: 20_000 }, (_, i) => ({
      matchExpressions: [{ key: 'pool', operator: 'In', values: [`p-${i}`] }, ...(i % 2 === 1 ? [{ key: 'zone', operator: 'In', values: ['z-1'] }] : [])],
    }));
    terms.push({ matchExpressions: [{ key: 'pool', operator: 'In', values: ['p-0'] }] }); // repeated: checked once
    const nodes = Array.from({ length: 20_000 }, (_, j) => node(`n-${j}`, { pool: `p-${j % 2_000}`, zone: `z-${j % 3}` }));
    const root = dir({
      'nodes.json': nodeList(nodes),
      'ds.yaml': yamlOf(ds('a', (o) => { o.spec.template.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } }; })),
    });
    const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml', '--json');
    expect(r.stderr).toBe('');
    const covered = (JSON.parse(r.stdout).daemonSets[0].covered as string[]).map((n) => Number(n.slice(2)));
    const expected = Array.from({ length: 20_000 }, (_, j) => j).filter((j) => (j % 2_000) % 2 === 0 || j % 3 === 1);
    expect(covered.sort((a, b) => a - b)).toEqual(expected);
  }, 120_000);

  test('nodeSelectorTerms the index cannot narrow (no In requirement), past the limit: a clear error (exit 2) naming the DaemonSet', () => {
    const terms = Array.from({ length: 5_000 }, (_, i) => ({ matchExpressions: [{ key: 'pool', operator: 'NotIn', values: [`p${i}`] }, { key: 'gpu', operator: 'Exists' }] }));
    const root = dir({
      'nodes.json': nodeList(Array.from({ length: 20_000 }, (_, i) => node(`n-${i}`))),
      'ds.yaml': yamlOf(ds('a', (o) => { o.spec.template.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } }; })),
    });
    const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('agents/a: its required node affinity (5000 nodeSelectorTerms) on 20000 nodes needs more than 5e+7 requirement checks even indexed');
  }, 60_000);

  test('a key twice in one mapping (block or flow) is refused as the API server\'s strict decoding does, naming the file, key and line (of the file)', () => {
    const cases: [string, string][] = [
      ['kind: ConfigMap\nmetadata: {name: c}\ndata:\n  a: "1"\n  b: "2"\n  a: "3"\n', 'the key "a" appears twice in one mapping, line 8'],
      ['kind: ConfigMap\nmetadata: {name: c, name: d}\n', 'the key "name" appears twice in one mapping, line 4'],
      ['kind: ConfigMap\nmetadata: {name: c}\ndata: {"x y": "1", "x y": "2"}\n', 'a key appears twice in one mapping, line 5'],
      // 100,000 keys, the last one a repeat: found in one pass (the yaml package's own check compared each key
      // with every earlier one, 260 s; the figure is in npm run bench)
      [`kind: ConfigMap\nmetadata: {name: c}\ndata:\n${Array.from({ length: 100_000 }, (_, i) => `  k${i}: v`).join('\n')}\n  k5: v\n`,
        'the key "k5" appears twice in one mapping, line 100006'],
    ];
    for (const [text, message] of cases) {
      const root = dir({ 'nodes.json': nodeList([node('n1')]), 'ds.yaml': `${yamlOf(ds('a'))}\n---\n${text}` });
      const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml');
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain(`ds.yaml: not valid YAML (${message}`);
    }
    // equal values of different types are different keys (1 and "1"), as the yaml package reads them
    const root = dir({ 'nodes.json': nodeList([node('n1')]), 'ds.yaml': `${yamlOf(ds('a'))}\n---\nkind: ConfigMap\nmetadata: {name: c}\nx: {1: a, "1": b}\n` });
    expect(run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml')).toMatchObject({ code: 0, stderr: '' });
  });

  test('alias amplification under the alias count limit: refused, not expanded', () => {
    const base = `{${Array.from({ length: 2000 }, (_, i) => `k${i}: v`).join(', ')}}`;
    const text = `kind: ConfigMap\nmetadata: {name: c}\nbase: &b ${base}\ndata:\n${Array.from({ length: 900 }, () => '  - *b').join('\n')}\n---\n${yamlOf(ds('a'))}`;
    const root = dir({ 'nodes.json': nodeList([node('n1')]), 'ds.yaml': text });
    const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('refused as an alias amplification');
  }, 30_000);

  test('200,000 documents in one file: read (no "Maximum call stack size exceeded")', () => {
    const docs = Array.from({ length: 200_000 }, (_, i) => `{kind: ConfigMap, metadata: {name: c${i}}}`);
    const root = dir({ 'nodes.json': nodeList([node('n1')]), 'ds.yaml': `${docs.join('\n---\n')}\n---\n${yamlOf(ds('a'))}` });
    const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('also ConfigMap 200000');
  }, 120_000);

  test('a quantity of 30,000 digits is parsed at once (the regex no longer backtracks quadratically)', () => {
    expect(parseQuantity(`${'1'.repeat(30_000)}x`)).toBeNaN();
    expect(parseQuantity('1.5Gi')).toBe(1.5 * 2 ** 30);
  }, 2_000);

  test('the toleration index answers as ToleratesTaint over the list (fast-check)', () => {
    const word = fc.constantFrom('', 'a', 'b');
    const toleration = fc.record({
      key: fc.option(word, { nil: undefined }),
      operator: fc.option(fc.constantFrom('Exists', 'Equal', ''), { nil: undefined }),
      value: fc.option(word, { nil: undefined }),
      effect: fc.option(fc.constantFrom('', 'NoSchedule', 'NoExecute'), { nil: undefined }),
    });
    const taint = fc.record({ key: fc.constantFrom('a', 'b'), value: fc.option(word, { nil: undefined }), effect: fc.constantFrom('NoSchedule', 'NoExecute', 'PreferNoSchedule') });
    fc.assert(fc.property(fc.array(toleration, { maxLength: 5 }), taint, (list, t) => {
      expect(tolerated(list as any, t as any)).toBe(list.some((x) => toleratesTaint(x as any, t as any)));
    }), { numRuns: 2000, seed: 26 });
  });
});

describe('the executable writes with backpressure', () => {
  test('coverage --json to a pipe closed early (| head): exit quietly, the output a prefix of the whole', () => {
    const nodes = Array.from({ length: 2000 }, (_, i) => node(`n-${i}`));
    const root = dir({ 'nodes.json': nodeList(nodes), 'ds.yaml': yamlOf(daemonSet('a')) });
    const main = `'${process.execPath}' -r '${require.resolve('ts-node/register/transpile-only')}' '${path.join(ROOT, 'src/cli/main.ts')}'`;
    const env = { ...process.env, TS_NODE_PROJECT: path.join(ROOT, 'test/tsconfig.json') };
    const whole = spawnSync('sh', ['-c', `${main} coverage --nodes nodes.json ds.yaml --json`], { cwd: root, env, encoding: 'utf-8', maxBuffer: 64 * 1024 * 1024 });
    expect(whole.stderr).toBe('');
    expect(whole.stdout.length).toBeGreaterThan(100_000);
    const head = spawnSync('sh', ['-c', `${main} coverage --nodes nodes.json ds.yaml --json 2>err.txt | head -c 1000`],
      { cwd: root, env, encoding: 'utf-8' });
    expect(whole.stdout.startsWith(head.stdout.slice(0, 1000))).toBe(true);
    expect(fs.readFileSync(path.join(root, 'err.txt'), 'utf-8')).toBe('');
  }, 60_000);
});
