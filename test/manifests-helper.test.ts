/**
 * The shared manifest check must itself be able to fail: each rule is exercised on a manifest that
 * breaks it (a check that never fires would let bad YAML through every other test).
 */
import { Manifest, validateManifests } from './util/manifests';
import { parseQuantity } from '../src/util/quantity';

function goodDaemonSet(): Manifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'agents', labels: { app: 'agent' } },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: {
        metadata: { labels: { app: 'agent' } },
        spec: {
          containers: [{
            name: 'agent',
            image: 'busybox:1.36',
            ports: [{ name: 'http', containerPort: 8080 }],
            volumeMounts: [{ name: 'logs', mountPath: '/var/log', readOnly: true }],
            resources: { requests: { memory: '64Mi' }, limits: { memory: '128Mi' } },
            securityContext: { allowPrivilegeEscalation: false },
          }],
          volumes: [{ name: 'logs', hostPath: { path: '/var/log', type: 'Directory' } }],
          tolerations: [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }],
        },
      },
    },
  };
}

function broken(mutate: (ds: Manifest) => void): Manifest {
  const ds = goodDaemonSet();
  mutate(ds);
  return ds;
}

test('a valid DaemonSet passes', () => {
  expect(() => validateManifests([goodDaemonSet()])).not.toThrow();
});

test.each<[string, (ds: Manifest) => void, string]>([
  ['schema: wrong type', (ds) => { ds.spec.minReadySeconds = 'ten'; }, 'schema:'],
  ['invalid name', (ds) => { ds.metadata.name = 'Agent_1'; }, 'metadata.name "Agent_1" is not a valid name'],
  ['invalid namespace', (ds) => { ds.metadata.namespace = 'A.B'; }, 'is not a DNS-1123 label'],
  ['invalid label value', (ds) => { ds.metadata.labels.app = 'a b'; }, 'label value "a b"'],
  ['empty selector', (ds) => { ds.spec.selector = {}; }, 'spec.selector is empty'],
  ['selector not matching the template', (ds) => { ds.spec.selector.matchLabels.app = 'other'; }, 'does not match the template labels'],
  ['selector expression not matching', (ds) => { ds.spec.selector.matchExpressions = [{ key: 'tier', operator: 'Exists' }]; }, 'expression on tier'],
  ['both budgets zero', (ds) => { ds.spec.updateStrategy.rollingUpdate = { maxUnavailable: 0, maxSurge: 0 }; }, 'cannot both be zero'],
  ['only maxSurge (maxUnavailable defaults to 1)', (ds) => { ds.spec.updateStrategy.rollingUpdate = { maxSurge: 1 }; }, 'cannot both be non-zero'],
  ['percent above 100', (ds) => { ds.spec.updateStrategy.rollingUpdate = { maxUnavailable: '150%', maxSurge: 0 }; }, 'must be a percentage from 0% to 100%'],
  ['negative budget', (ds) => { ds.spec.updateStrategy.rollingUpdate = { maxUnavailable: -1, maxSurge: 0 }; }, 'non-negative integer'],
  ['OnDelete with rollingUpdate', (ds) => { ds.spec.updateStrategy.type = 'OnDelete'; }, 'must be empty with type OnDelete'],
  ['duplicate container names', (ds) => { ds.spec.template.spec.initContainers = [{ name: 'agent', image: 'busybox:1.36' }]; }, 'container name "agent" is used twice'],
  ['duplicate volume names', (ds) => { ds.spec.template.spec.volumes.push({ name: 'logs', emptyDir: {} }); }, 'volume name "logs" is used twice'],
  ['mount naming no volume', (ds) => { ds.spec.template.spec.containers[0].volumeMounts[0].name = 'nope'; }, 'volumeMount "nope" names no volume'],
  ['duplicate port names', (ds) => { ds.spec.template.spec.containers[0].ports.push({ name: 'http', containerPort: 8081 }); }, 'port name "http" is used twice'],
  ['privileged without escalation', (ds) => { ds.spec.template.spec.containers[0].securityContext.privileged = true; }, 'privileged: true with allowPrivilegeEscalation: false'],
  ['Bidirectional without privileged', (ds) => { ds.spec.template.spec.containers[0].volumeMounts[0].mountPropagation = 'Bidirectional'; }, 'Bidirectional propagation needs a privileged container'],
  ['Exists toleration with a value', (ds) => { ds.spec.template.spec.tolerations[0].value = 'v'; }, 'operator Exists must not have a value'],
  ['tolerationSeconds without NoExecute', (ds) => { ds.spec.template.spec.tolerations[0].tolerationSeconds = 5; }, 'tolerationSeconds needs effect NoExecute'],
  ['hostNetwork with a different hostPort', (ds) => {
    ds.spec.template.spec.hostNetwork = true;
    ds.spec.template.spec.containers[0].ports[0].hostPort = 9090;
  }, 'hostPort 9090 must equal containerPort 8080'],
  ['probe with two handlers', (ds) => {
    ds.spec.template.spec.containers[0].readinessProbe = { exec: { command: ['true'] }, tcpSocket: { port: 8080 } };
  }, 'readinessProbe must have exactly one handler'],
  ['request above limit', (ds) => { ds.spec.template.spec.containers[0].resources.requests.memory = '1Gi'; }, 'requests.memory 1Gi is above its limit 128Mi'],
])('%s is caught', (_name, mutate, message) => {
  expect(() => validateManifests([broken(mutate)])).toThrow(message);
});

test('a cluster-scoped object with a namespace is refused', () => {
  const role = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'agent', namespace: 'agents' }, rules: [] };
  expect(() => validateManifests([role])).toThrow('metadata.namespace "agents" on a cluster-scoped ClusterRole');
  const { namespace: _dropped, ...metadata } = role.metadata;
  expect(() => validateManifests([{ ...role, metadata }])).not.toThrow();
});

test('an unknown kind is refused rather than passed unchecked', () => {
  expect(() => validateManifests([{ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }])).toThrow('no schema known for example.com/v1/Widget');
});

test('two objects with the same kind, namespace and name are refused', () => {
  expect(() => validateManifests([goodDaemonSet(), goodDaemonSet()])).toThrow('two objects with the same kind, namespace and name');
});

test('an invalid ConfigMap key is refused', () => {
  expect(() => validateManifests([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { 'a/b': 'x' } }])).toThrow('data key "a/b"');
});

test.each([
  ['100m', 0.1], ['0.5', 0.5], ['128Mi', 128 * 2 ** 20], ['1Gi', 2 ** 30], ['2G', 2e9], ['1e3', 1000], ['+1k', 1000],
])('quantity %s = %d', (text, value) => {
  expect(parseQuantity(text)).toBeCloseTo(value);
});

test.each(['512MB', 'abc', '', '1.2.3'])('%s is not a quantity', (text) => {
  expect(parseQuantity(text)).toBeNaN();
});

test('a Job must not restart Always, and its pod is checked like a DaemonSet\'s', () => {
  const job: Manifest = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'gate', namespace: 'agents' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'gate', image: 'curlimages/curl:8.11.1' }] } } },
  };
  expect(() => validateManifests([job])).not.toThrow();
  expect(() => validateManifests([{ ...job, spec: { template: { spec: { ...job.spec.template.spec, restartPolicy: 'Always' } } } }]))
    .toThrow(/Job restartPolicy "Always" must be Never or OnFailure/);
  expect(() => validateManifests([{ ...job, spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'Gate', image: 'x' }] } } } }]))
    .toThrow(/container name "Gate" is not a DNS-1123 label/);
});

test('a PrometheusRule is schema-checked', () => {
  const rule: Manifest = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'agent-alerts', namespace: 'agents' },
    spec: { groups: [{ name: 'g', rules: [{ alert: 'A', expr: 'up == 0', labels: { severity: 'warning' } }] }] },
  };
  expect(() => validateManifests([rule])).not.toThrow();
  expect(() => validateManifests([{ ...rule, spec: { groups: [{ name: 'g', rules: [{ alert: 'A' }] }] } }])).toThrow(/schema/);
});
