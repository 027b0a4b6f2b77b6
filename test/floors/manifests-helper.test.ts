/**
 * The shared manifest check must itself be able to fail: each rule is exercised on a manifest that
 * breaks it (a check that never fires would let bad YAML through every other test).
 */
import { parseQuantity } from '../../src/util/quantity';
import { ANNOTATIONS_MAX_BYTES, CONFIGMAP_MAX_BYTES, Manifest, validateManifests } from '../util/manifests';

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
  ['revisionHistoryLimit above int32', (ds) => { ds.spec.revisionHistoryLimit = 2 ** 31; }, 'spec.revisionHistoryLimit must be a non-negative int32, got 2147483648'],
  ['minReadySeconds above int32', (ds) => { ds.spec.minReadySeconds = 2 ** 31; }, 'spec.minReadySeconds must be a non-negative int32'],
  ['fractional runAsUser', (ds) => { ds.spec.template.spec.containers[0].securityContext.runAsUser = 1.5; }, 'securityContext.runAsUser must be a whole number from 0 to 2147483647, got 1.5'],
  ['negative pod runAsGroup', (ds) => { ds.spec.template.spec.securityContext = { runAsGroup: -5 }; }, 'securityContext.runAsGroup must be a whole number'],
  ['grace period 1e20', (ds) => { ds.spec.template.spec.terminationGracePeriodSeconds = 1e20; }, 'terminationGracePeriodSeconds must be a non-negative int64'],
  ['probe port 2^53', (ds) => { ds.spec.template.spec.containers[0].livenessProbe = { httpGet: { path: '/', port: 2 ** 53 } }; }, 'livenessProbe.httpGet.port 9007199254740992 is neither a port'],
  ['probe port 0', (ds) => { ds.spec.template.spec.containers[0].readinessProbe = { tcpSocket: { port: 0 } }; }, 'readinessProbe.tcpSocket.port 0'],
  ['negative probe threshold', (ds) => { ds.spec.template.spec.containers[0].readinessProbe = { tcpSocket: { port: 'http' }, failureThreshold: -1 }; }, 'readinessProbe.failureThreshold must be a non-negative int32'],
  ['fractional probe period', (ds) => { ds.spec.template.spec.containers[0].readinessProbe = { tcpSocket: { port: 'http' }, periodSeconds: 1.5 }; }, 'readinessProbe.periodSeconds must be a non-negative int32, got 1.5'],
  ['non-ASCII env name', (ds) => { ds.spec.template.spec.containers[0].env = [{ name: 'NÄME', value: 'x' }]; }, 'env name "NÄME" is not a valid environment variable name'],
  ['empty env name', (ds) => { ds.spec.template.spec.containers[0].env = [{ name: '', value: 'x' }]; }, 'env name "" is not a valid'],
  ['env name starting with a digit', (ds) => { ds.spec.template.spec.containers[0].env = [{ name: '1A', value: 'x' }]; }, 'env name "1A"'],
  ['subPath with ..', (ds) => { ds.spec.template.spec.containers[0].volumeMounts[0].subPath = '../etc'; }, 'subPath "../etc" must be relative without ".."'],
  ['absolute subPath', (ds) => { ds.spec.template.spec.containers[0].volumeMounts[0].subPath = '/etc'; }, 'subPath "/etc" must be relative'],
  ['unknown mountPropagation', (ds) => { ds.spec.template.spec.containers[0].volumeMounts[0].mountPropagation = 'Sideways'; }, 'mountPropagation "Sideways" is unknown'],
  ['the same host port twice (sidecar)', (ds) => {
    ds.spec.template.spec.containers[0].ports[0].hostPort = 8080;
    ds.spec.template.spec.containers.push({ name: 'proxy', image: 'busybox:1.36', ports: [{ name: 'p', containerPort: 9000, hostPort: 8080 }] });
  }, 'host port :8080/TCP is used twice in the pod (containers "agent" and "proxy")'],
  ['the same host port twice (hostNetwork)', (ds) => {
    ds.spec.template.spec.hostNetwork = true;
    ds.spec.template.spec.containers.push({ name: 'proxy', image: 'busybox:1.36', ports: [{ name: 'p', containerPort: 8080 }] });
  }, 'host port :8080/TCP is used twice in the pod'],
  ['container port 0', (ds) => { ds.spec.template.spec.containers[0].ports[0].containerPort = 0; }, 'containerPort 0 is not a port'],
  ['toleration value with spaces', (ds) => { ds.spec.template.spec.tolerations = [{ key: 'k', operator: 'Equal', value: 'bad value!' }]; }, 'toleration value "bad value!" is not a label value'],
  ['toleration key invalid', (ds) => { ds.spec.template.spec.tolerations = [{ key: 'bad key', operator: 'Exists' }]; }, 'toleration key "bad key" is not a label key'],
  ['priorityClassName a..b', (ds) => { ds.spec.template.spec.priorityClassName = 'a..b'; }, 'priorityClassName "a..b" is not a DNS-1123 subdomain'],
  ['a quantity with a space', (ds) => { ds.spec.template.spec.containers[0].resources.requests.memory = ' 64Mi'; }, 'resources.requests.memory " 64Mi" is not a quantity string'],
  ['a quantity with a unit typo', (ds) => { ds.spec.template.spec.containers[0].resources.limits['example.com/dev'] = '1MB'; }, 'resources.limits.example.com/dev "1MB" is not a quantity string'],
  ['preStop with an empty command', (ds) => { ds.spec.template.spec.containers[0].lifecycle = { preStop: { exec: { command: [] } } }; }, 'lifecycle.preStop.exec.command is empty'],
  ['an invalid node selector key', (ds) => { ds.spec.template.spec.nodeSelector = { ']%': 'x' }; }, 'label key "]%" is invalid'],
  ['an invalid node affinity key', (ds) => {
    ds.spec.template.spec.affinity = { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'bad key!', operator: 'Exists' }] }] } } };
  }, 'node affinity key "bad key!" is not a label key'],
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

test('a ConfigMap key ".." is refused', () => {
  expect(() => validateManifests([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { '..': 'x' } }])).toThrow('data key ".."');
});

test('a ConfigMap over 1 MiB is refused; one just under passes the ConfigMap rule', () => {
  const configMap = (bytes: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { f: 'x'.repeat(bytes) } });
  expect(() => validateManifests([configMap(CONFIGMAP_MAX_BYTES)])).toThrow(`exceeds the ConfigMap limit of ${CONFIGMAP_MAX_BYTES} bytes`);
  expect(() => validateManifests([configMap(200 * 1024)])).not.toThrow();
});

test('an object too large for the last-applied-configuration annotation is refused, with server-side apply as the fix', () => {
  const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { f: 'x'.repeat(ANNOTATIONS_MAX_BYTES) } };
  expect(() => validateManifests([big])).toThrow(/would not fit the 262144-byte annotation limit .* apply it server-side/);
});

test('a Service name must start with a letter (DNS-1035)', () => {
  const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: '1collector-metrics' }, spec: { ports: [{ port: 80 }] } };
  expect(() => validateManifests([service])).toThrow('metadata.name "1collector-metrics" is not a DNS-1035 label');
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

describe('Job pod specs, int64 fields and dnsConfig', () => {
  const job = (spec: Manifest = {}, pod: Manifest = {}): Manifest => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'gate', namespace: 'agents' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'gate', image: 'curlimages/curl:8.11.1' }], ...pod } }, ...spec },
  });
  test('a valid Job passes', () => {
    expect(() => validateManifests([job({ activeDeadlineSeconds: 86400 + 1440 * 60, backoffLimit: 0 })])).not.toThrow();
  });
  test.each<[string, Manifest, Manifest, string]>([
    ['activeDeadlineSeconds past int64', { activeDeadlineSeconds: 2 ** 64 }, {}, 'Job activeDeadlineSeconds must be a positive int64'],
    ['activeDeadlineSeconds 0', { activeDeadlineSeconds: 0 }, {}, 'Job activeDeadlineSeconds must be a positive int64'],
    ['a negative backoffLimit', { backoffLimit: -1 }, {}, 'Job backoffLimit must be a non-negative int32'],
    ['a container without image in a Job', {}, { containers: [{ name: 'gate', image: '' }] }, 'container "gate" has no image'],
    ['four nameservers', {}, { dnsConfig: { nameservers: ['1.1.1.1', '1.0.0.1', '8.8.8.8', '8.8.4.4'] } }, 'dnsConfig has 4 nameservers; at most 3'],
    ['a nameserver that is a name', {}, { dnsConfig: { nameservers: ['dns.local'] } }, 'dnsConfig nameserver "dns.local" is not an IP address'],
    ['a search with a space', {}, { dnsConfig: { searches: ['svc cluster.local'] } }, 'dnsConfig search "svc cluster.local" is not a DNS name'],
    ['dnsPolicy None without nameservers', {}, { dnsPolicy: 'None' }, 'dnsPolicy None needs dnsConfig.nameservers'],
  ])('%s is refused', (_what, spec, pod, message) => {
    expect(() => validateManifests([job(spec, pod)])).toThrow(message);
  });
});
