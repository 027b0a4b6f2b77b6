/**
 * Selector keys the API server refuses are refused (exit 2), never dropped or matched: ValidatePodSpec checks
 * nodeSelector with ValidateLabels, ValidateNodeSelectorRequirement a matchExpressions key with ValidateLabelName,
 * ValidateNodeFieldSelectorRequirement a matchFields requirement (metadata.name only, In/NotIn, one node name).
 * The key rule is apimachinery pkg/util/validation/validation.go IsQualifiedName; its table test
 * (validation_test.go TestIsQualifiedName) is ported below.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { daemonSetInfo } from '../../src/cli/coverage/manifests';
import { runCli } from '../../src/cli/run';
import { isLabelKey } from '../../src/validation/values';

describe('apimachinery validation_test.go TestIsQualifiedName (→ isLabelKey)', () => {
  test.each([
    'simple', 'now-with-dashes', '1-starts-with-num', '1234', 'simple/simple', 'now-with-dashes/simple',
    'now-with-dashes/now-with-dashes', 'now.with.dots/simple', 'now-with.dashes-and.dots/simple', '1-num.2-num/3-num',
    '1234/5678', '1.2.3.4/5678', 'Uppercase_Is_OK_123', 'example.com/Uppercase_Is_OK_123', 'requests.storage-foo',
    'a'.repeat(63), 'a'.repeat(253) + '/' + 'b'.repeat(63),
  ])('good: %s', (key) => expect(isLabelKey(key)).toBe(true));
  test.each([
    'nospecialchars%^=@', 'cantendwithadash-', '-cantstartwithadash-', 'only/one/slash', 'Example.com/abc', 'example_com/abc',
    'example.com/', '/simple', 'a'.repeat(64), 'a'.repeat(254) + '/abc', '__proto__', 'a b', '',
  ])('bad: %j', (key) => expect(isLabelKey(key)).toBe(false));
});

function ds(podSpec: Record<string, unknown>) {
  return () => daemonSetInfo({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'logs', namespace: 'agents' },
    spec: { selector: { matchLabels: { app: 'logs' } }, template: { metadata: { labels: { app: 'logs' } }, spec: { containers: [], ...podSpec } } },
  }, 'x.json');
}
const affinity = (term: Record<string, unknown>) => ({
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [term] } } },
});

describe('the DaemonSet reader refuses the keys the API server refuses', () => {
  test.each([
    [{ nodeSelector: JSON.parse('{"__proto__": "x"}') }, 'x.json: DaemonSet agents/logs: nodeSelector: "__proto__" is not a valid label key'],
    [{ nodeSelector: { 'a b': 'x' } }, 'nodeSelector: "a b" is not a valid label key'],
    [{ nodeSelector: { pool: 'not valid!' } }, 'nodeSelector: the value of pool ("not valid!") is not a valid label value'],
    [affinity({ matchExpressions: [{ key: '__proto__', operator: 'Exists' }] }), 'matchExpressions[0]: key "__proto__" is not a valid label key'],
    [affinity({ matchExpressions: [{ key: 'a b', operator: 'In', values: ['x'] }] }), 'matchExpressions[0]: key "a b" is not a valid label key'],
    [affinity({ matchFields: [{ key: 'metadata.labels', operator: 'In', values: ['x'] }] }), 'matchFields[0]: key "metadata.labels" is not a valid field selector key (only metadata.name)'],
    [affinity({ matchFields: [{ key: 'metadata.name', operator: 'Exists' }] }), 'matchFields[0]: operator "Exists" is not a valid field selector operator (In or NotIn)'],
    [affinity({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1', 'n2'] }] }), 'matchFields[0]: values must be a list of exactly one node name'],
    [affinity({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['N 1'] }] }), 'matchFields[0]: "N 1" is not a node name'],
  ])('%j', (spec, message) => {
    expect(ds(spec)).toThrow(message);
  });
  test('valid keys and a matchFields name pass', () => {
    expect(ds({ nodeSelector: { 'example.com/gpu': 'true', 'kubernetes.io/os': 'linux' } })().nodeSelector).toEqual({ 'example.com/gpu': 'true', 'kubernetes.io/os': 'linux' });
    expect(ds(affinity({ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['ip-10-0-0-1.ec2.internal'] }] }))().requiredTerms).toHaveLength(1);
  });
});

test('coverage with a nodeSelector key "__proto__" (JSON and YAML) exits 2 naming it, where it reported the DaemonSet on every node', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'selector-keys-'));
  try {
    fs.writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify({ kind: 'List', apiVersion: 'v1', items: [{ metadata: { name: 'n1', labels: { 'kubernetes.io/os': 'linux' } } }] }));
    const manifest = '{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"logs","namespace":"agents"},"spec":{"selector":{"matchLabels":{"app":"logs"}},'
      + '"template":{"metadata":{"labels":{"app":"logs"}},"spec":{"nodeSelector":{"__proto__":"gpu"},"containers":[{"name":"c","image":"x"}]}}}}';
    fs.writeFileSync(path.join(dir, 'ds.json'), manifest);
    fs.writeFileSync(path.join(dir, 'ds.yaml'), 'apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: logs, namespace: agents}\nspec:\n  selector: {matchLabels: {app: logs}}\n'
      + '  template:\n    metadata: {labels: {app: logs}}\n    spec:\n      nodeSelector:\n        __proto__: gpu\n      containers: [{name: c, image: x}]\n');
    for (const file of ['ds.json', 'ds.yaml']) {
      let stderr = '';
      const code = runCli(['coverage', '--nodes', 'nodes.json', file], { stdout: { write: () => undefined }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
      expect(code).toBe(2);
      expect(stderr).toContain('nodeSelector: "__proto__" is not a valid label key; the API server refuses it');
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
