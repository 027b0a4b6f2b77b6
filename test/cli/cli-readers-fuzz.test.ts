/**
 * Fuzzing the CLI's readers (the --nodes inventory and the manifest trees) with fast-check, fixed
 * seeds: every input gives output (exit 0 or 1) or a clear error with exit 2, never an internal
 * error (a TypeError, RangeError or stack overflow the readers did not turn into a message), and
 * every run ends promptly (a hang or a quadratic blow-up shows as a run far over its bound).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as fc from 'fast-check';
import * as YAML from 'yaml';
import { runCli } from '../../src/cli/run';
import { daemonSet } from '../util/plan';

const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-fuzz-'));
afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }));

const GOOD_NODES = JSON.stringify({
  kind: 'List',
  items: [{ kind: 'Node', metadata: { name: 'n1', labels: { 'kubernetes.io/os': 'linux' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }],
});
const GOOD_TREE = JSON.stringify(daemonSet('a'));

/** The most one run may take: far above a normal run, far below a hang. */
const RUN_BOUND_MS = 5_000;

function check(nodes: string, tree: string): void {
  fs.writeFileSync(path.join(TMP, 'nodes.json'), nodes);
  fs.writeFileSync(path.join(TMP, 'tree.yaml'), tree);
  fs.writeFileSync(path.join(TMP, 'before.yaml'), GOOD_TREE);
  for (const argv of [
    ['coverage', '--nodes', 'nodes.json', 'tree.yaml'],
    ['plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'tree.yaml', '--markdown'],
    ['label', '--nodes', 'nodes.json', '--wave', 'canary=0.5', '--manifests', 'tree.yaml'],
  ]) {
    let stderr = '';
    const start = Date.now();
    const code = runCli(argv, { stdout: { write: () => undefined }, stderr: { write: (t: string) => (stderr += t) }, cwd: TMP });
    const elapsed = Date.now() - start;
    expect(elapsed).toBeLessThan(RUN_BOUND_MS);
    expect([0, 1, 2]).toContain(code);
    expect(stderr).not.toContain('internal error');
    if (code === 2) expect(stderr).toMatch(/^node-agents \w+: \S/);
  }
}

/** Any JSON-like value, biased towards the shapes the readers look into. */
const value = fc.letrec((tie) => ({
  any: fc.oneof({ depthSize: 'small' },
    fc.constantFrom(null, true, false, 0, -1, 1.5, 1e300, '', 'linux', 'NoSchedule', 'Exists', '__proto__', 'constructor', '50%', '.nan', '--all'),
    fc.string({ maxLength: 8 }),
    fc.array(tie('any'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('key', 'operator', 'values', 'value', 'effect', 'name', 'labels', 'taints', 'items', 'kind', '__proto__', 'x'), tie('any'), { maxKeys: 4 })),
}));

/** Replaces the value at a random path of an object with `replacement`. */
function mutate(object: any, pathSeed: number, replacement: unknown): any {
  const copy = JSON.parse(JSON.stringify(object));
  let target = copy;
  let seed = pathSeed;
  for (;;) {
    const keys = target !== null && typeof target === 'object' ? Object.keys(target) : [];
    if (keys.length === 0) break;
    const key = keys[seed % keys.length];
    seed = Math.floor(seed / keys.length) + 7;
    const child = target[key];
    if (child === null || typeof child !== 'object' || seed % 3 === 0) {
      target[key] = replacement;
      return copy;
    }
    target = child;
  }
  return replacement;
}

describe('fuzz: the inventory reader', () => {
  test('a NodeList with one field replaced by anything', () => {
    const base = JSON.parse(GOOD_NODES);
    fc.assert(fc.property(fc.nat(), value.any, (seed, replacement) => {
      check(JSON.stringify(mutate(base, seed, replacement)), GOOD_TREE);
    }), { numRuns: 150, seed: 2601 });
  });

  test('any text, any JSON', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 40 }), fc.jsonValue().map((v) => JSON.stringify(v))), (text) => {
      check(text, GOOD_TREE);
    }), { numRuns: 100, seed: 2602 });
  });
});

describe('fuzz: the manifest reader', () => {
  test('a DaemonSet with one field replaced by anything (as YAML)', () => {
    const base = daemonSet('a', { nodeSelector: { 'kubernetes.io/os': 'linux' }, tolerations: [{ key: 'k', operator: 'Exists' }], hostPort: 9100 });
    (base as any).spec.template.spec.affinity = {
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] }] } },
    };
    fc.assert(fc.property(fc.nat(), value.any, (seed, replacement) => {
      check(GOOD_NODES, YAML.stringify(mutate(base, seed, replacement)));
    }), { numRuns: 200, seed: 2603 });
  });

  test('any text as YAML: anchors, tags, merge keys, documents', () => {
    const pieces = fc.constantFrom('kind: DaemonSet\n', '---\n', '&a ', '*a', '<<: ', '!!binary ', '!custom ', 'metadata: {name: a}\n', 'spec:\n', '  template: ',
      '{', '}', '[', ']', ': ', '- ', 'yes', '0x1F', '.nan', '"\\u001b"', '\n', '  ', '%YAML 1.2\n', '? ');
    fc.assert(fc.property(fc.array(pieces, { maxLength: 30 }).map((p) => p.join('')), (text) => {
      check(GOOD_NODES, text);
    }), { numRuns: 200, seed: 2604 });
  });
});
