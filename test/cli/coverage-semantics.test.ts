/**
 * Kubernetes scheduling semantics as the coverage analysis applies them, case by case from the documented behaviour:
 * - tolerations: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/ and
 *   k8s.io/api/core/v1 Toleration.ToleratesTaint;
 * - node affinity: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/ and
 *   k8s.io/component-helpers/scheduling/corev1/nodeaffinity;
 * - DaemonSet controller tolerations: pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations.
 * Each case runs through analyzeCoverage, so the analysis (not only the helpers) is held to it.
 */
import { analyzeCoverage, explainPlacement, placementsFor } from '../../src/cli/coverage/analysis';
import { daemonSetInfo } from '../../src/cli/coverage/manifests';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { NodeJson, NodeSelectorTermJson, TaintJson, TolerationJson } from '../../src/scheduling/types';

function node(name: string, labels: Record<string, string> = {}, taints: TaintJson[] = [], extra: Partial<NodeJson> = {}): NodeJson {
  return { metadata: { name, labels: { 'kubernetes.io/os': 'linux', ...labels } }, spec: { taints }, ...extra };
}

function daemonSet(podSpec: Record<string, unknown>, name = 'agent') {
  return daemonSetInfo({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'ns', labels: { 'app.kubernetes.io/name': name } },
    spec: { template: { metadata: { labels: { 'app.kubernetes.io/name': name } }, spec: { containers: [{ name: 'c', image: 'i' }], ...podSpec } } },
  }, 'test.yaml');
}

function covers(podSpec: Record<string, unknown>, n: NodeJson): boolean {
  const report = analyzeCoverage([daemonSet(podSpec)], nodeFacts([n]));
  return report.daemonSets[0].covered.includes(n.metadata.name);
}

describe('toleration matching (documented cases)', () => {
  const taint: TaintJson = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  const cases: [string, TolerationJson[], TaintJson, boolean][] = [
    ['no toleration: a NoSchedule taint keeps the pod off', [], taint, false],
    ['Equal with the same key, value and effect', [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }], taint, true],
    ['operator defaults to Equal', [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }], taint, true],
    ['Equal needs the value: another value does not match', [{ key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoSchedule' }], taint, false],
    ['Equal without a value does not match a taint with a value', [{ key: 'dedicated', operator: 'Equal', effect: 'NoSchedule' }], taint, false],
    ['Equal without a value matches a taint without a value', [{ key: 'dedicated', effect: 'NoSchedule' }], { key: 'dedicated', effect: 'NoSchedule' }, true],
    ['Exists ignores the value', [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }], taint, true],
    ['Exists on another key does not match', [{ key: 'other', operator: 'Exists' }], taint, false],
    ['empty effect matches every effect (NoSchedule)', [{ key: 'dedicated', operator: 'Exists' }], taint, true],
    ['empty effect matches every effect (NoExecute)', [{ key: 'dedicated', operator: 'Exists' }], { key: 'dedicated', value: 'gpu', effect: 'NoExecute' }, true],
    ['a different effect does not match', [{ key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }], taint, false],
    ['empty key with Exists matches every taint', [{ operator: 'Exists' }], { key: 'anything', value: 'x', effect: 'NoExecute' }, true],
    ['empty key with Exists and an effect matches every taint of that effect', [{ operator: 'Exists', effect: 'NoSchedule' }], taint, true],
    ['empty key with Exists and an effect does not match other effects', [{ operator: 'Exists', effect: 'NoSchedule' }],
      { key: 'spot', value: 'true', effect: 'NoExecute' }, false],
    ['empty key with Equal matches nothing', [{ operator: 'Equal', value: 'gpu' }], taint, false],
    ['PreferNoSchedule never keeps a DaemonSet pod off', [], { key: 'soft', effect: 'PreferNoSchedule' }, true],
    ['one of several tolerations is enough', [{ key: 'x', operator: 'Exists' }, { key: 'dedicated', operator: 'Exists' }], taint, true],
  ];
  test.each(cases)('%s', (_name, tolerations, t, expected) => {
    expect(covers({ tolerations }, node('n1', {}, [t]))).toBe(expected);
  });

  test('every taint must be tolerated: tolerating one of two is not enough', () => {
    const taints: TaintJson[] = [taint, { key: 'spot', value: 'true', effect: 'NoExecute' }];
    expect(covers({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }, node('n1', {}, taints))).toBe(false);
    expect(covers({ tolerations: [{ key: 'dedicated', operator: 'Exists' }, { key: 'spot', operator: 'Exists' }] }, node('n1', {}, taints))).toBe(true);
  });
});

describe('tolerations the DaemonSet controller adds', () => {
  const cases: [string, TaintJson, boolean, boolean][] = [
    // [taint, hostNetwork, covered]
    ['not-ready NoExecute', { key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }, false, true],
    ['unreachable NoExecute', { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }, false, true],
    ['disk-pressure NoSchedule', { key: 'node.kubernetes.io/disk-pressure', effect: 'NoSchedule' }, false, true],
    ['memory-pressure NoSchedule', { key: 'node.kubernetes.io/memory-pressure', effect: 'NoSchedule' }, false, true],
    ['pid-pressure NoSchedule', { key: 'node.kubernetes.io/pid-pressure', effect: 'NoSchedule' }, false, true],
    ['unschedulable NoSchedule (a cordoned node still gets the pod)', { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }, false, true],
    ['network-unavailable NoSchedule without hostNetwork', { key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }, false, false],
    ['network-unavailable NoSchedule with hostNetwork', { key: 'node.kubernetes.io/network-unavailable', effect: 'NoSchedule' }, true, true],
    ['not-ready NoSchedule is NOT added (only NoExecute)', { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }, false, false],
  ];
  test.each(cases)('%s', (_name, taint, hostNetwork, expected) => {
    expect(covers({ hostNetwork }, node('n1', {}, [taint]))).toBe(expected);
  });

  test('a cordoned node (spec.unschedulable) is covered and reported as such', () => {
    const cordoned = node('n1', {}, [], { spec: { unschedulable: true } });
    expect(covers({}, cordoned)).toBe(true);
    expect(nodeFacts([cordoned])[0].taints).toEqual([
      { key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule', impliedBy: 'spec.unschedulable (cordoned)' },
    ]);
  });

  test('a NotReady node gets the lifecycle taints when the inventory omits them: no new pod unless tolerated', () => {
    const notReady = node('n1', {}, [], { status: { conditions: [{ type: 'Ready', status: 'False' }] } });
    expect(covers({}, notReady)).toBe(false);
    expect(covers({ tolerations: [{ key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoSchedule' }] }, notReady)).toBe(true);
    const report = analyzeCoverage([daemonSet({})], nodeFacts([notReady]));
    const entry = report.agents[0].nodes[0];
    expect(entry.status).toBe('node-condition');
    expect(entry.why).toContain('node.kubernetes.io/not-ready:NoSchedule not tolerated (implied by Ready=False');
    // the tool adds it on purpose (the DaemonSet controller's table tests give the node the NoExecute taint only): said
    expect(entry.why).toContain('(implied by Ready=False: not listed in the inventory, added on purpose as the node lifecycle controller taints such a node)');
    expect(entry.why).toContain('a pod already running there keeps running');
    expect(entry.existingPodKeepsRunning).toBe(true);
    expect(placementsFor(report, 'agent', 'n1')[0].existingPodKeepsRunning).toBe(true);
    expect(report.problems).toEqual([]);
  });

  test('Ready=Unknown implies the unreachable taints', () => {
    const unknown = node('n1', {}, [], { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } });
    expect(nodeFacts([unknown])[0].taints.map((t) => `${t.key}:${t.effect}`)).toEqual([
      'node.kubernetes.io/unreachable:NoSchedule', 'node.kubernetes.io/unreachable:NoExecute',
    ]);
  });

  test('a NoExecute taint evicts a running pod; a NoSchedule one leaves it running', () => {
    const noExecute = analyzeCoverage([daemonSet({})], nodeFacts([node('n1', {}, [{ key: 'spot', effect: 'NoExecute' }])]));
    expect(placementsFor(noExecute, 'agent', 'n1')[0].existingPodKeepsRunning).toBe(false);
    const noSchedule = analyzeCoverage([daemonSet({})], nodeFacts([node('n1', {}, [{ key: 'gpu', effect: 'NoSchedule' }])]));
    expect(placementsFor(noSchedule, 'agent', 'n1')[0].existingPodKeepsRunning).toBe(true);
  });
});

describe('nodeSelector and required node affinity (documented cases)', () => {
  const affinity = (terms: NodeSelectorTermJson[]) =>
    ({ affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } } });
  const labelled = node('node-1', { disk: 'ssd', zone: 'a', cores: '16' });
  const cases: [string, Record<string, unknown>, boolean][] = [
    ['nodeSelector: every entry equal', { nodeSelector: { disk: 'ssd', zone: 'a' } }, true],
    ['nodeSelector: one entry different', { nodeSelector: { disk: 'ssd', zone: 'b' } }, false],
    ['nodeSelector: a missing label fails', { nodeSelector: { gpu: 'true' } }, false],
    ['In: value listed', affinity([{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['hdd', 'ssd'] }] }]), true],
    ['In: value not listed', affinity([{ matchExpressions: [{ key: 'disk', operator: 'In', values: ['hdd'] }] }]), false],
    ['In: missing key fails', affinity([{ matchExpressions: [{ key: 'gpu', operator: 'In', values: ['true'] }] }]), false],
    ['NotIn: value not listed', affinity([{ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['hdd'] }] }]), true],
    ['NotIn: value listed', affinity([{ matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['ssd'] }] }]), false],
    ['NotIn matches a node without the key', affinity([{ matchExpressions: [{ key: 'gpu', operator: 'NotIn', values: ['true'] }] }]), true],
    ['Exists: key present', affinity([{ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }]), true],
    ['Exists: key missing', affinity([{ matchExpressions: [{ key: 'gpu', operator: 'Exists' }] }]), false],
    ['DoesNotExist matches a node without the key', affinity([{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }]), true],
    ['DoesNotExist: key present', affinity([{ matchExpressions: [{ key: 'disk', operator: 'DoesNotExist' }] }]), false],
    ['Gt: integer comparison 16 > 8', affinity([{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['8'] }] }]), true],
    ['Gt: integer, not string, comparison (16 > 9 although "16" < "9")', affinity([{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['9'] }] }]), true],
    ['Gt: equal is not greater', affinity([{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['16'] }] }]), false],
    ['Lt: 16 < 32', affinity([{ matchExpressions: [{ key: 'cores', operator: 'Lt', values: ['32'] }] }]), true],
    ['Lt: missing key fails', affinity([{ matchExpressions: [{ key: 'memory', operator: 'Lt', values: ['32'] }] }]), false],
    ['Gt: a non-integer label value never matches', affinity([{ matchExpressions: [{ key: 'disk', operator: 'Gt', values: ['1'] }] }]), false],
    ['Gt: a non-integer requirement value never matches', affinity([{ matchExpressions: [{ key: 'cores', operator: 'Gt', values: ['eight'] }] }]), false],
    ['expressions of a term are ANDed (one fails)', affinity([{
      matchExpressions: [
        { key: 'disk', operator: 'In', values: ['ssd'] }, { key: 'zone', operator: 'In', values: ['b'] },
      ],
    }]), false],
    ['expressions of a term are ANDed (all match)', affinity([{
      matchExpressions: [
        { key: 'disk', operator: 'In', values: ['ssd'] }, { key: 'zone', operator: 'In', values: ['a'] },
      ],
    }]), true],
    ['terms are ORed (the second matches)', affinity([
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
      { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
    ]), true],
    ['an empty term matches no node', affinity([{}]), false],
    ['an empty term ORed with a matching one: the other term decides', affinity([{}, { matchExpressions: [{ key: 'disk', operator: 'Exists' }] }]), true],
    ['no terms at all match no node', affinity([]), false],
    ['matchFields metadata.name In', affinity([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] }]), true],
    ['matchFields metadata.name In another name', affinity([{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }] }]), false],
    ['matchFields metadata.name NotIn', affinity([{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['node-2'] }] }]), true],
    // matchFields on another field than metadata.name: the API server refuses it (ValidateNodeFieldSelectorRequirement),
    // and so does the reader (test/cli/selector-keys.test.ts)
    ['matchFields and matchExpressions of one term are ANDed', affinity([{
      matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }],
      matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }],
    }]), false],
    ['nodeSelector and affinity must both match', { nodeSelector: { disk: 'hdd' }, ...affinity([{ matchExpressions: [{ key: 'disk', operator: 'Exists' }] }]) }, false],
    ['spec.nodeName pins the pod to that node', { nodeName: 'node-2' }, false],
  ];
  test.each(cases)('%s', (_name, podSpec, expected) => {
    expect(covers(podSpec, labelled)).toBe(expected);
  });
});

describe('reasons name exactly what fails', () => {
  test('the failing nodeSelector entry, with what the node has', () => {
    const report = analyzeCoverage([daemonSet({ nodeSelector: { disk: 'ssd', zone: 'b' } })], nodeFacts([node('n1', { disk: 'ssd', zone: 'a' })]));
    const entry = report.agents[0].nodes[0];
    expect(entry.status).toBe('not-selected');
    expect(placementsFor(report, 'agent', 'n1')[0].blockers).toEqual([{ kind: 'nodeSelector', cls: 'selection', key: 'zone', want: 'b', actual: 'a' }]);
  });

  test('the failing affinity requirement of every term', () => {
    const ds = daemonSet({
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [
              { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }, { key: 'zone', operator: 'In', values: ['b'] }] },
              { matchExpressions: [{ key: 'gpu', operator: 'Exists' }] },
            ],
          },
        },
      },
    });
    const report = analyzeCoverage([ds], nodeFacts([node('n1', { disk: 'ssd', zone: 'a' })]));
    expect(explainPlacement(placementsFor(report, 'agent', 'n1')[0])).toBe('ns/agent: required affinity: none of 2 terms matches '
      + '(term 1: zone In [b] (node has zone=a); term 2: gpu Exists (node has no gpu label))');
  });

  test('the untolerated taint with key, value and effect', () => {
    const report = analyzeCoverage([daemonSet({})], nodeFacts([node('n1', {}, [{ key: 'spot', value: 'true', effect: 'NoExecute' }])]));
    expect(report.agents[0].nodes[0]).toMatchObject({ status: 'gap', why: 'ns/agent: taint spot=true:NoExecute not tolerated' });
    expect(placementsFor(report, 'agent', 'n1')[0].blockers).toEqual([
      { kind: 'taint', cls: 'taint', taint: { key: 'spot', value: 'true', effect: 'NoExecute' } },
    ]);
  });
});

describe('Windows and virtual nodes', () => {
  const windows = node('win-1', { 'kubernetes.io/os': 'windows' }, [{ key: 'os', value: 'windows', effect: 'NoSchedule' }]);
  const linux = node('linux-1');

  test('a Linux agent misses them on purpose: excluded, whatever keeps it off', () => {
    const report = analyzeCoverage([daemonSet({})], nodeFacts([windows, linux]));
    expect(report.agents[0].nodes.map((n) => [n.node, n.status])).toEqual([['linux-1', 'covered'], ['win-1', 'excluded']]);
    expect(report.problems).toEqual([]);
  });

  test('an agent that selects Windows by label is judged like any agent: a missing toleration is a gap', () => {
    const windowsAgent = daemonSet({ nodeSelector: { 'kubernetes.io/os': 'windows' } });
    const report = analyzeCoverage([windowsAgent], nodeFacts([windows, linux]));
    expect(report.agents[0].nodes.map((n) => [n.node, n.status])).toEqual([['linux-1', 'not-selected'], ['win-1', 'gap']]);
    const tolerating = daemonSet({ nodeSelector: { 'kubernetes.io/os': 'windows' }, tolerations: [{ key: 'os', operator: 'Equal', value: 'windows' }] });
    expect(analyzeCoverage([tolerating], nodeFacts([windows])).agents[0].nodes[0].status).toBe('covered');
  });

  test('a Linux agent that lands on them without selecting them is flagged', () => {
    const everywhere = daemonSet({ tolerations: [{ operator: 'Exists' }] });
    const report = analyzeCoverage([everywhere], nodeFacts([windows, linux]));
    expect(report.problems).toEqual([expect.objectContaining({ kind: 'unsupported-node', nodes: ['win-1'] })]);
  });
});

describe('issue #52: what kubernetes refuses, said as such', () => {
  const affinityOf = (values: string[], operator = 'NotIn') => ({
    affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'disk', operator, values }] }] } } },
  });

  test('a NotIn of an invalid label value: the API server refuses the object (ValidateNodeSelectorRequirement), never "not equal"', () => {
    expect(() => daemonSet(affinityOf(['invalid value: ___@#$%^']))).toThrow(
      /matchExpressions\[0\]: "invalid value: ___@#\$%\^" is not a valid label value; the API server refuses the object, and the scheduler matches no node with this term \(a NotIn of it is not "not equal"\)/);
    expect(() => daemonSet(affinityOf(['x'.repeat(64)], 'In'))).toThrow(/is not a valid label value; the API server refuses the object/);
    expect(() => daemonSet(affinityOf(['hdd']))).not.toThrow();
  });

  test.each(['Gt', 'Lt'])('a %s toleration: refused, naming the version and the feature gate that accept it', (operator) => {
    expect(() => daemonSet({ tolerations: [{ key: 'sla', operator, value: '950', effect: 'NoSchedule' }] })).toThrow(
      `tolerations[0].operator: ${operator}: a numeric comparison, accepted only from Kubernetes 1.35 with the alpha feature gate `
      + 'TaintTolerationComparisonOperators enabled (off by default: the API server refuses it otherwise); not modelled here: tolerate with Exists or Equal');
  });
});
