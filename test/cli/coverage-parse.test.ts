import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { loadManifests, loadNodeList } from '../../src/cli/coverage/load';
import { daemonSetInfo, manifestSet, parseManifestText, ROLLOUT_GROUP_LABEL } from '../../src/cli/coverage/manifests';
import { nodeFacts, parseNodeList } from '../../src/cli/coverage/nodes';
import { DEFAULT_WAVE_LABEL_KEY } from '../../src/waves/partition';
import { REPO } from '../util/paths';

const ROOT = REPO;
const FIXTURES = 'test/fixtures/coverage';

function ds(name: string, podSpec: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return daemonSetInfo({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'ns' },
    spec: { template: { metadata: { labels: { app: name } }, spec: podSpec }, ...extra },
  }, 'inline.yaml');
}

describe('manifests', () => {
  test('multi-document YAML: empty documents skipped, List expanded, other kinds counted', () => {
    const docs = parseManifestText([
      '---',
      'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}',
      '---',
      'apiVersion: v1\nkind: List\nitems:\n  - {apiVersion: v1, kind: ServiceAccount, metadata: {name: b}}\n'
        + '  - {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: c, namespace: x}, spec: {template: {spec: {containers: []}}}}',
      '---',
    ].join('\n'), 'multi.yaml');
    const set = manifestSet(docs);
    expect(set.otherKinds).toEqual({ ConfigMap: 1, ServiceAccount: 1 });
    expect(set.daemonSets.map((d) => [d.id, d.source, d.agent])).toEqual([['x/c', 'multi.yaml', 'c']]);
  });

  test('agent name: DaemonSet label, then pod template label, then the DaemonSet name', () => {
    const fromMeta = daemonSetInfo({
      kind: 'DaemonSet',
      metadata: { name: 'a', labels: { 'app.kubernetes.io/name': 'meta' } },
      spec: { template: { metadata: { labels: { 'app.kubernetes.io/name': 'pod' } }, spec: {} } },
    }, 's');
    const fromPod = daemonSetInfo({
      kind: 'DaemonSet',
      metadata: { name: 'a' },
      spec: { template: { metadata: { labels: { 'app.kubernetes.io/name': 'pod' } }, spec: {} } },
    }, 's');
    expect([fromMeta.agent, fromPod.agent, ds('plain', {}).agent]).toEqual(['meta', 'pod', 'plain']);
    expect(fromPod.namespace).toBe('default');
  });

  test('rollout group, Argo CD sync wave, update strategy and minReadySeconds are read', () => {
    const info = daemonSetInfo({
      kind: 'DaemonSet',
      metadata: { name: 'a', annotations: { 'argocd.argoproj.io/sync-wave': '2' } },
      spec: {
        minReadySeconds: 15,
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 0 } },
        template: { metadata: { labels: { [ROLLOUT_GROUP_LABEL]: 'canary' } }, spec: {} },
      },
    }, 's');
    expect(info).toMatchObject({
      rolloutGroup: 'canary',
      syncWave: 2,
      minReadySeconds: 15,
      updateStrategy: { type: 'RollingUpdate', maxUnavailable: '25%', maxSurge: 0 },
    });
  });

  test('the wave key is the one the waves module writes', () => {
    expect(analyzeCoverage([], []).waveLabelKey).toBe(DEFAULT_WAVE_LABEL_KEY);
  });

  test('host ports: hostPort, containerPort under hostNetwork, sidecar init containers; not plain init containers', () => {
    const info = ds('a', {
      hostNetwork: true,
      initContainers: [
        { name: 'setup', ports: [{ containerPort: 1000 }] },
        { name: 'sidecar', restartPolicy: 'Always', ports: [{ containerPort: 2000, protocol: 'UDP' }] },
      ],
      containers: [{ name: 'main', ports: [{ containerPort: 9100 }, { containerPort: 8080, hostPort: 18080, hostIP: '127.0.0.1' }] }],
    });
    expect(info.hostPorts).toEqual([
      { container: 'main', port: 9100, protocol: 'TCP', hostIP: '' },
      { container: 'main', port: 18080, protocol: 'TCP', hostIP: '127.0.0.1' },
      { container: 'sidecar', port: 2000, protocol: 'UDP', hostIP: '' },
    ]);
    expect(ds('b', { containers: [{ name: 'm', ports: [{ containerPort: 9100 }] }] }).hostPorts).toEqual([]);
  });

  test.each([
    ['a DaemonSet without metadata.name', 'kind: DaemonSet\nspec: {}', 'x.yaml: a DaemonSet has no metadata.name'],
    ['a DaemonSet without a pod template', 'kind: DaemonSet\nmetadata: {name: a}\nspec: {}', 'x.yaml: DaemonSet default/a: spec.template is missing or not an object'],
    ['a document without kind', 'apiVersion: v1\nmetadata: {name: a}', 'x.yaml: a document is not a Kubernetes object (no "kind")'],
    ['a scalar document', 'just text', 'x.yaml: a document is not a Kubernetes object'],
    ['an unknown update strategy', 'kind: DaemonSet\nmetadata: {name: a}\nspec: {updateStrategy: {type: Recreate}, template: {spec: {}}}',
      'updateStrategy.type is "Recreate"; it must be RollingUpdate or OnDelete'],
    ['an anchor used across documents', 'kind: ConfigMap\nmetadata: {name: a}\ndata: &d {k: v}\n---\nkind: ConfigMap\nmetadata: {name: b}\ndata: *d',
      'x.yaml: not valid YAML'],
  ])('rejects %s', (_name, text, message) => {
    expect(() => manifestSet(parseManifestText(text, 'x.yaml'))).toThrow(message);
  });

  test('the same DaemonSet twice is an error naming both files', () => {
    // (not `namespace: n`: YAML 1.1, as kubectl reads it, makes that the boolean false)
    const text = 'kind: DaemonSet\nmetadata: {name: a, namespace: ns}\nspec: {template: {spec: {}}}';
    expect(() => manifestSet([...parseManifestText(text, 'one.yaml'), ...parseManifestText(text, 'two.yaml')]))
      .toThrow('two.yaml: DaemonSet ns/a is defined twice (also in one.yaml)');
  });

  test('directories are read recursively in name order; a directory without manifests is an error', () => {
    const set = loadManifests([`${FIXTURES}/cluster`], ROOT);
    expect([...new Set(set.documents.map((d) => d.source))]).toEqual([
      `${FIXTURES}/cluster/fluent-bit.yaml`, `${FIXTURES}/cluster/gpu.yaml`, `${FIXTURES}/cluster/node-exporter.yaml`, `${FIXTURES}/cluster/promtail.yaml`,
    ]);
    expect(() => loadManifests(['src/cli'], ROOT)).toThrow('src/cli: the directory holds no .yaml/.yml/.json files');
    expect(() => loadManifests(['does/not/exist'], ROOT)).toThrow('does/not/exist: cannot read (no such file or directory)');
    expect(() => loadManifests([`${FIXTURES}/invalid.yaml`], ROOT)).toThrow(`${FIXTURES}/invalid.yaml: not valid YAML (BLOCK_AS_IMPLICIT_KEY at line 4, column 9)`);
  });
});

describe('node lists', () => {
  test('accepts kubectl output (kind List) and NodeList', () => {
    expect(loadNodeList('examples/inventories/mixed-cluster.json', ROOT)).toHaveLength(23);
    expect(parseNodeList({ kind: 'NodeList', items: [{ metadata: { name: 'a' } }] }, 'n.json')).toHaveLength(1);
  });

  test.each([
    ['an array', [], 'n.json: not a NodeList: the JSON is an array'],
    ['another kind', { kind: 'PodList', items: [] }, 'n.json: not a NodeList: kind is "PodList"'],
    ['no kind', { items: [] }, 'n.json: not a NodeList: kind is null'],
    ['no items', { kind: 'NodeList' }, 'n.json: not a NodeList: "items" is missing or not an array'],
    ['a Pod among the items', { kind: 'List', items: [{ kind: 'Pod', metadata: { name: 'p' } }] }, 'n.json: items[0] is not a Node (kind "Pod")'],
    ['a node without a name', { kind: 'NodeList', items: [{ metadata: {} }] }, 'n.json: items[0]: a Node without metadata.name'],
    ['a bad taint', { kind: 'NodeList', items: [{ metadata: { name: 'a' }, spec: { taints: [{ key: 'k', effect: 'Sometimes' }] } }] },
      'n.json: items[0] (node a): taint {"key":"k","effect":"Sometimes"} needs a key and an effect of NoSchedule, PreferNoSchedule, NoExecute'],
    ['a duplicate node', { kind: 'NodeList', items: [{ metadata: { name: 'a' } }, { metadata: { name: 'a' } }] }, 'n.json: node a is listed twice'],
  ])('rejects %s', (_name, value, message) => {
    expect(() => parseNodeList(value, 'n.json')).toThrow(message);
  });

  test('unreadable and non-JSON files', () => {
    expect(() => loadNodeList('missing.json', ROOT)).toThrow('missing.json: cannot read (no such file or directory)');
    expect(() => loadNodeList(`${FIXTURES}/not-json.json`, ROOT)).toThrow(`${FIXTURES}/not-json.json: not valid JSON`);
    expect(() => loadNodeList(FIXTURES, ROOT)).toThrow(`${FIXTURES}: a directory, not a regular file; pass a regular file`);
  });

  test('platforms: non-linux by kubernetes.io/os, virtual by Fargate or virtual-kubelet labels', () => {
    const facts = nodeFacts(parseNodeList({
      kind: 'NodeList',
      items: [
        { metadata: { name: 'a', labels: { 'kubernetes.io/os': 'linux' } } },
        { metadata: { name: 'b', labels: { 'kubernetes.io/os': 'windows' } } },
        { metadata: { name: 'c', labels: { 'eks.amazonaws.com/compute-type': 'fargate' } } },
        { metadata: { name: 'd', labels: { type: 'virtual-kubelet' } } },
        { metadata: { name: 'e' } },
      ],
    }, 'n.json'));
    expect(facts.map((f) => f.platform)).toEqual(['linux', 'non-linux', 'virtual', 'virtual', 'linux']);
  });
});

describe('host port clashes follow the scheduler NodePorts filter', () => {
  const nodes = nodeFacts([{ metadata: { name: 'n1', labels: { 'kubernetes.io/os': 'linux' } } }]);
  const bind = (name: string, port: Record<string, unknown>) => ds(name, { containers: [{ name: 'c', ports: [{ containerPort: 1, ...port }] }] });
  test.each([
    ['same port, both on every address', { hostPort: 9100 }, { hostPort: 9100 }, true],
    ['same port, one on a specific address', { hostPort: 9100, hostIP: '10.0.0.1' }, { hostPort: 9100 }, true],
    ['same port, 0.0.0.0 counts as every address', { hostPort: 9100, hostIP: '0.0.0.0' }, { hostPort: 9100, hostIP: '10.0.0.1' }, true],
    ['same port, two different specific addresses', { hostPort: 9100, hostIP: '10.0.0.1' }, { hostPort: 9100, hostIP: '127.0.0.1' }, false],
    ['same port, different protocols', { hostPort: 53, protocol: 'UDP' }, { hostPort: 53 }, false],
    ['different ports', { hostPort: 9100 }, { hostPort: 9101 }, false],
  ])('%s', (_name, a, b, clash) => {
    const report = analyzeCoverage([bind('a', a), bind('b', b)], nodes);
    expect(report.problems.filter((p) => p.kind === 'host-port-clash').length).toBe(clash ? 1 : 0);
  });
});
