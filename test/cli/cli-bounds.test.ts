/**
 * The CLI bounded on any input (issue 39): aliases measured in the bytes they expand to, merge keys read in
 * linear time, a library warning turned into an error of ours. Large inputs are generated here, never committed;
 * the figures (time at n and 10n, bytes expanded per byte read) are in `npm run bench` (bench/cli-input.bench.ts),
 * never asserted as times here: jest's timeout only catches a run that does the quadratic work again.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as fc from 'fast-check';
import * as YAML from 'yaml';
import { parseManifestText } from '../../src/cli/coverage/manifests';
import { ALIAS_SLACK_BYTES } from '../../src/cli/coverage/yaml-aliases';
import { runCli } from '../../src/cli/run';
import { aliasedArgs, mergedAnchors, nestedAliases, ONE_NODE_LIST } from '../util/hostile-yaml';
import { REPO } from '../util/paths';
import { daemonSet } from '../util/plan';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-bounds-'));
afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }));
let counter = 0;

/** A fresh directory holding the given files (name → content). */
function dir(files: Record<string, string>): string {
  const root = path.join(TMP, `case-${counter++}`);
  fs.mkdirSync(root, { recursive: true });
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(root, name), content);
  return root;
}

function run(cwd: string, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd });
  return { code, stdout, stderr };
}

const NODES = ONE_NODE_LIST;
const DS = JSON.stringify(daemonSet('a'));

describe('case 1: alias amplification is measured in expanded bytes', () => {
  test.each([
    // the issue's shapes: a 1 MB scalar aliased 600 times (was: "internal error (RangeError: Invalid string length)"
    // after 677 MB), and a 300 KB string aliased 900 times in a 300 KB file (was: accepted, 3 GB, "safe")
    ['1 MB scalar x 600', 1_000_000, 600],
    ['300 KB scalar x 900', 300_000, 900],
  ])('%s: refused at once (exit 2), naming the bytes, no internal error', (_name, bytes, count) => {
    const root = dir({ 'nodes.json': NODES, 'before.yaml': DS, 'after.yaml': `${DS}\n---\n${aliasedArgs(bytes, count)}` });
    const r = run(root, 'plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'after.yaml');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).not.toContain('internal error');
    expect(r.stderr).toMatch(/after\.yaml: not valid YAML \(its aliases expand \d+ bytes to \d+, more than double: refused as an alias amplification; write the values out, line 3\)/);
    const [, own, expanded] = /expand (\d+) bytes to (\d+)/.exec(r.stderr)!.map(Number);
    expect(expanded).toBeGreaterThan(count * bytes);
    expect(own).toBeLessThan(bytes + 10 * count + 1000);
  });

  test('a nested amplification (each anchor aliases the one before ten times): refused, measured without expanding', () => {
    expect(() => parseManifestText(nestedAliases(), 'lol.yaml')).toThrow(/its aliases expand \d+ bytes to \d\.\d+e\+30, more than double: refused as an alias amplification/);
  });

  test('aliases that keep a document within double its size (and a file within 64 KiB more) are read, as go-yaml reads them', () => {
    const block = `{${Array.from({ length: 20 }, (_, i) => `k${i}: v${i}`).join(', ')}}`;
    const text = (uses: number) => `kind: ConfigMap\nmetadata: {name: c}\nbase: &b ${block}\nuses: [${Array.from({ length: uses }, () => '*b').join(', ')}]\n`;
    const [doc] = parseManifestText(text(1), 'ok.yaml');
    expect((doc.object as any).uses[0]).toEqual((doc.object as any).base);
    // five uses of a block of about 200 bytes: three times the document, within the file's allowance
    expect(parseManifestText(text(5), 'ok.yaml')).toHaveLength(1);
    // the allowance is the file's, not each document's: enough such documents in one file are refused
    const many = Array.from({ length: Math.ceil(ALIAS_SLACK_BYTES / 600) + 1 }, () => text(5)).join('---\n');
    expect(() => parseManifestText(many, 'many.yaml')).toThrow('refused as an alias amplification');
  });

  test('an anchor holding an alias of itself, and an alias without an anchor: refused (go-yaml: "anchor value contains itself")', () => {
    expect(() => parseManifestText('kind: X\na: &a [1, *a]\n', 'self.yaml')).toThrow('self.yaml: not valid YAML (the anchor "a" holds an alias of itself, line 2)');
    expect(() => parseManifestText('kind: X\na: *nowhere\n', 'none.yaml')).toThrow('none.yaml: not valid YAML (an alias without an anchor of its name before it, line 2)');
  });
});

describe('case 2: merge keys are read in linear time', () => {
  test('10,000 mappings merging one anchor: read, each with the merged keys (was: 212 s, then "too many aliases")', () => {
    const [doc] = parseManifestText(mergedAnchors(10_000), 'merge.yaml');
    const items = (doc.object as any).items as Record<string, string>[];
    expect(items).toHaveLength(10_000);
    expect(items[9_999]).toEqual({ a: '1', b: '2', name: 'x9999' });
  }, 60_000);

  test('merge semantics kept (decode.go d.merge): an explicit key wins over a merged one, earlier sources over later ones', () => {
    const [doc] = parseManifestText('kind: X\na: &a {k: a, only-a: 1}\nb: &b {k: b, only-b: 2}\nm: {<<: [*a, *b], own: 3}\no: {k: mine, <<: *a}\n', 'm.yaml');
    expect((doc.object as any).m).toEqual({ 'k': 'a', 'only-a': 1, 'only-b': 2, 'own': 3 });
    expect((doc.object as any).o).toEqual({ 'k': 'mine', 'only-a': 1 });
  });

  test('the expansion reads as the yaml package reads the same text (fast-check, anchors, aliases and merge keys)', () => {
    const scalar = fc.constantFrom('1', 'x', 'yes', '"q"', '~', '0755');
    const piece = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: 'small' }, scalar, fc.constant('*A'), fc.constant('*B'),
        fc.array(tie('node'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
        fc.array(fc.tuple(fc.constantFrom('k', 'l', '<<'), tie('node')), { maxLength: 3 }).map((pairs) => `{${pairs.map(([k, v]) => `${k}: ${v}`).join(', ')}}`)),
    }));
    const anchored = fc.tuple(piece.node, piece.node, piece.node).map(([a, b, c]) => `kind: X\na: &A ${a}\nb: &B ${b}\nc: ${c}\n`);
    fc.assert(fc.property(anchored, (text) => {
      let theirs: unknown;
      try {
        theirs = YAML.parse(text, { version: '1.1', merge: true, uniqueKeys: false, logLevel: 'error' });
      } catch {
        return; // the package refuses it (a merge of a scalar, an alias before its anchor): not compared
      }
      let ours: unknown;
      try {
        ours = parseManifestText(text, 'x.yaml')[0].object;
      } catch (error) {
        // refused here and read by the package: only for a key that is a collection, or an anchor that holds itself
        expect((error as Error).message).toMatch(/a mapping key is a mapping or a list|holds an alias of itself|a key appears twice|appears twice/);
        return;
      }
      expect(ours).toEqual(theirs);
    }), { numRuns: 500, seed: 39 });
  });
});

describe('case 6: the yaml package\'s warning never reaches stderr; such input is an error of ours', () => {
  test.each([
    ['a mapping as a key', 'kind: ConfigMap\nmetadata: {name: c}\ndata:\n  ? {a: "\\e]0;x\\a"}\n  : v\n', 'a mapping key is a mapping or a list; the API server reads string keys only, line 6'],
    ['a list as a key', 'kind: ConfigMap\nmetadata: {name: c}\ndata: {[a, b]: v}\n', 'a mapping key is a mapping or a list; the API server reads string keys only, line 5'],
    ['an alias of a mapping as a key', 'kind: ConfigMap\nmetadata: {name: c}\nx: &m {a: b}\ndata:\n  ? *m\n  : v\n', 'a mapping key is a mapping or a list'],
  ])('%s: exit 2 with a formatted error, no process warning', (_name, text, message) => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const root = dir({ 'nodes.json': NODES, 'ds.yaml': `${DS}\n---\n${text}` });
      const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.yaml');
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain(`node-agents coverage: ds.yaml: not valid YAML (${message}`);
      expect(warn).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
    }
  });
});

describe('case 5: values the API server refuses are refused where they are read', () => {
  const ROOT = REPO;
  const GPU_CLUSTER = fs.readFileSync(path.join(ROOT, 'test/fixtures/label/gpu-cluster.json'), 'utf-8');
  const GPU_WAVES = fs.readFileSync(path.join(ROOT, 'test/fixtures/label/gpu-driver-waves.yaml'), 'utf-8');

  test('a spec.selector.matchLabels value that is no label value never reaches the drain script\'s --selector (ValidateLabelSelector)', () => {
    const hostile = GPU_WAVES.replace('app.kubernetes.io/instance: gpu-driver,', '"app.kubernetes.io/instance": "a,app notin (logs)",');
    expect(hostile).not.toBe(GPU_WAVES);
    const root = dir({ 'nodes.json': GPU_CLUSTER, 'waves.yaml': hostile });
    const r = run(root, 'label', '--nodes', 'nodes.json', '--wave', 'canary=0.3', '--manifests', 'waves.yaml');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('waves.yaml: DaemonSet gpu-driver/gpu-driver-canary: spec.selector.matchLabels: the value of app.kubernetes.io/instance ("a,app notin (logs)") is not a valid label value; the API server refuses it');
    // the fixture as it is: the selector reaches the script
    const plain = run(root, 'label', '--nodes', 'nodes.json', '--wave', 'canary=0.3', '--manifests', path.join(ROOT, 'test/fixtures/label/gpu-driver-waves.yaml'));
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('--selector=app.kubernetes.io/instance=gpu-driver,');
  });

  test.each([
    [{ matchLabels: { 'a b': 'x' } }, 'spec.selector.matchLabels: "a b" is not a valid label key'],
    [{ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['a,b'] }] }, 'spec.selector.matchExpressions[0]: values must be a list of label values, and "a,b" is not one'],
    [{ matchExpressions: [{ key: 'app', operator: 'Gt', values: ['1'] }] }, 'spec.selector.matchExpressions[0]: operator "Gt" is not one of In, NotIn, Exists, DoesNotExist'],
    [{ matchExpressions: [{ key: 'app', operator: 'In' }] }, 'spec.selector.matchExpressions[0]: operator In needs at least one value'],
    [{ matchExpressions: [{ key: 'app', operator: 'Exists', values: ['x'] }] }, 'spec.selector.matchExpressions[0]: operator Exists takes no values'],
    [{ matchExpressions: [{ key: '__proto__', operator: 'Exists' }] }, 'spec.selector.matchExpressions[0]: key "__proto__" is not a valid label key'],
  ])('spec.selector %j: exit 2 (apimachinery ValidateLabelSelectorRequirement)', (selector, message) => {
    const ds = daemonSet('a') as any;
    ds.spec.selector = selector;
    const root = dir({ 'nodes.json': NODES, 'ds.json': JSON.stringify(ds) });
    const r = run(root, 'coverage', '--nodes', 'nodes.json', 'ds.json');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain(`ds.json: DaemonSet agents/a: ${message}`);
  });

  test.each([
    ['a newline', 'old\ntouch /tmp/pwned\n#', '"old\\ntouch /tmp/pwned\\n#"'],
    ['an escape sequence', 'x\u001b]0;owned\u0007', '"x\\u001b]0;owned\\u0007"'],
    ['a comma', 'a,b', '"a,b"'],
    ['64 characters', 'v'.repeat(64), `"${'v'.repeat(59)}…`],
  ])('an inventory label value with %s: every command exits 2 naming the node and the label (ValidateLabels)', (_name, value, shownValue) => {
    const inventory = JSON.parse(GPU_CLUSTER);
    inventory.items[1].metadata.labels['node-agents.cdk8s.io/rollout-wave'] = value;
    const name = inventory.items[1].metadata.name;
    const root = dir({ 'nodes.json': JSON.stringify(inventory), 'ds.json': DS });
    for (const argv of [['label', '--nodes', 'nodes.json', '--wave', 'canary=0.3', '--diff'], ['coverage', '--nodes', 'nodes.json', 'ds.json'],
      ['plan', '--nodes', 'nodes.json', '--before', 'ds.json', '--after', 'ds.json']]) {
      const r = run(root, ...argv);
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).toContain(`nodes.json: items[1] (node ${name}): metadata.labels: the value of node-agents.cdk8s.io/rollout-wave (${shownValue}) is not a valid label value`);
      // eslint-disable-next-line no-control-regex
      expect(r.stderr.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    }
  });

  test('an inventory label key the API server refuses: exit 2', () => {
    const inventory = JSON.parse(NODES);
    inventory.items[0].metadata.labels['bad key'] = 'x';
    const r = run(dir({ 'nodes.json': JSON.stringify(inventory), 'ds.json': DS }), 'coverage', '--nodes', 'nodes.json', 'ds.json');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('nodes.json: items[0] (node n1): metadata.labels: "bad key" is not a valid label key');
  });
});

describe('case 6: an error quotes at most 60 characters of a value from a file, escaped', () => {
  const LONG = `${'Q'.repeat(5000)}\u001b[2J`;
  const dsWith = (change: (ds: any) => void) => {
    const ds = daemonSet('a') as any;
    change(ds);
    return JSON.stringify(ds);
  };
  const nodesWith = (change: (node: any) => void) => {
    const nodes = JSON.parse(NODES);
    change(nodes.items[0]);
    return JSON.stringify(nodes);
  };
  test.each([
    ['updateStrategy.type', dsWith((ds) => { ds.spec.updateStrategy = { type: LONG }; }), NODES],
    ['maxUnavailable', dsWith((ds) => { ds.spec.updateStrategy.rollingUpdate.maxUnavailable = LONG; }), NODES],
    ['metadata.name', dsWith((ds) => { ds.metadata.name = LONG; }), NODES],
    ['a nodeSelector key', dsWith((ds) => { ds.spec.template.spec.nodeSelector = { [LONG]: 'x' }; }), NODES],
    ['a nodeSelector value', dsWith((ds) => { ds.spec.template.spec.nodeSelector = { pool: LONG }; }), NODES],
    ['a matchLabels value', dsWith((ds) => { ds.spec.selector.matchLabels.app = LONG; }), NODES],
    ['a matchExpressions value', dsWith((ds) => { ds.spec.selector.matchExpressions = [{ key: 'app', operator: 'In', values: [LONG] }]; }), NODES],
    ['a toleration operator', dsWith((ds) => { ds.spec.template.spec.tolerations = [{ key: 'k', operator: LONG }]; }), NODES],
    ['the inventory\'s kind', DS, JSON.stringify({ kind: LONG, items: [] })],
    ['a node\'s kind', DS, nodesWith((n) => { n.kind = LONG; })],
    ['a node name', DS, nodesWith((n) => { n.metadata.name = LONG; })],
    ['a node label key', DS, nodesWith((n) => { n.metadata.labels[LONG] = 'x'; })],
    ['a node label value', DS, nodesWith((n) => { n.metadata.labels.pool = LONG; })],
    ['a taint', DS, nodesWith((n) => { n.spec = { taints: [{ key: 'k', effect: LONG }] }; })],
  ])('%s of 5,000 characters: exit 2, the error quotes at most 60 of them', (_name, tree, nodes) => {
    const r = run(dir({ 'nodes.json': nodes, 'ds.json': tree }), 'coverage', '--nodes', 'nodes.json', 'ds.json');
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('Q'.repeat(20));
    expect(r.stderr).not.toContain('Q'.repeat(61));
    // eslint-disable-next-line no-control-regex
    expect(r.stderr.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });

  test('a doctor dump\'s node name or taint of 5,000 characters: the same', () => {
    for (const change of [(n: any) => { n.metadata.name = LONG; }, (n: any) => { n.spec = { taints: [{ key: LONG, effect: 'Nope' }] }; }]) {
      const dump = JSON.parse(NODES);
      change(dump.items[0]);
      dump.items.push({ ...JSON.parse(DS), status: {} });
      const r = run(dir({ 'state.json': JSON.stringify(dump) }), 'doctor', '--state', 'state.json');
      expect(r).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr).not.toContain('Q'.repeat(61));
    }
  });
});
