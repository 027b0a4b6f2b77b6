import { Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import {
  HostPathType, MountPropagation, NodeAgentDaemonSet, NodeAgentDaemonSetProps, NodeRequirement, PodSecurityLevel,
  RolloutBudget, TaintEffect, TolerationOperator, UpdateStrategy,
} from '../../src';
import { AgentProbe } from '../../src/agent/container-inputs';
import { Manifest, synthManifests } from '../util/manifests';

const IMAGE = 'ghcr.io/acme/scanner:1.2.3';

function synth(props: Partial<NodeAgentDaemonSetProps> = {}, chartNamespace?: string): Manifest[] {
  const chart = new Chart(Testing.app(), 'test', { namespace: chartNamespace });
  new NodeAgentDaemonSet(chart, 'scanner', { image: IMAGE, ...props });
  return synthManifests(chart);
}

function only(manifests: Manifest[], kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
}

function daemonSet(props: Partial<NodeAgentDaemonSetProps> = {}): Manifest {
  return only(synth(props), 'DaemonSet');
}

function podSpec(props: Partial<NodeAgentDaemonSetProps> = {}): Manifest {
  return daemonSet(props).spec.template.spec;
}

describe('identity', () => {
  test('name comes from the name prop, or is derived from the id', () => {
    expect(daemonSet({ name: 'cve-scanner' }).metadata.name).toBe('cve-scanner');
    const chart = new Chart(Testing.app(), 'test');
    new NodeAgentDaemonSet(chart, 'My_Scanner.Agent', { image: IMAGE });
    expect(only(synthManifests(chart), 'DaemonSet').metadata.name).toBe('my-scanner-agent');
  });

  test('namespace is configurable, defaults to the chart namespace, else kube-system', () => {
    expect(daemonSet({ namespace: 'security' }).metadata.namespace).toBe('security');
    expect(only(synth({}, 'agents'), 'DaemonSet').metadata.namespace).toBe('agents');
    expect(daemonSet().metadata.namespace).toBe('kube-system');
  });

  test('recommended labels, version from the image tag', () => {
    const ds = daemonSet({ component: 'security-scanner', partOf: 'platform' });
    expect(ds.metadata.labels).toEqual({
      'app.kubernetes.io/name': 'scanner',
      'app.kubernetes.io/instance': 'scanner',
      'app.kubernetes.io/version': '1.2.3',
      'app.kubernetes.io/component': 'security-scanner',
      'app.kubernetes.io/part-of': 'platform',
      'app.kubernetes.io/managed-by': 'cdk8s',
    });
    expect(ds.spec.template.metadata.labels['app.kubernetes.io/version']).toBe('1.2.3');
  });

  test('a digest-only image gets a short digest as version label', () => {
    const ds = daemonSet({ image: `ghcr.io/acme/scanner@sha256:${'a'.repeat(64)}` });
    expect(ds.metadata.labels['app.kubernetes.io/version']).toBe('sha256-aaaaaaaaaaaa');
  });

  test('the selector holds only stable identity labels and matches the template', () => {
    const ds = daemonSet();
    expect(ds.spec.selector).toEqual({
      matchLabels: {
        'app.kubernetes.io/name': 'scanner',
        'app.kubernetes.io/instance': 'scanner',
        'node-agents.cdk8s.io/rollout-group': 'fleet',
      },
    });
    expect(JSON.stringify(ds)).not.toContain('cdk8s.io/metadata.addr');
  });

  test('changing image, config, resources, tolerations or tree position leaves spec.selector unchanged', () => {
    const base = daemonSet().spec.selector;
    const variants: Array<Partial<NodeAgentDaemonSetProps>> = [
      { image: 'ghcr.io/acme/scanner:2.0.0' },
      { configData: { 'scanner.yaml': 'level: high' } },
      { resources: { cpuRequest: '250m', memoryRequest: '256Mi', memoryLimit: '1Gi' } },
      { tolerations: [{ key: 'dedicated', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE }] },
      { tolerateAllTaints: true },
    ];
    for (const props of variants) {
      expect(daemonSet(props).spec.selector).toEqual(base);
    }
    // re-parented under another construct: same name, same selector
    const chart = new Chart(Testing.app(), 'test');
    new NodeAgentDaemonSet(new Construct(chart, 'Team'), 'Other', { image: IMAGE, name: 'scanner' });
    expect(only(synthManifests(chart), 'DaemonSet').spec.selector).toEqual(base);
  });
});

describe('image', () => {
  test('pinned images are pulled IfNotPresent', () => {
    expect(podSpec().containers[0]).toMatchObject({ image: IMAGE, imagePullPolicy: 'IfNotPresent' });
  });

  test.each([
    ['ghcr.io/acme/scanner', 'no tag or digest'],
    ['ghcr.io/acme/scanner:latest', ':latest'],
    ['registry.local:5000/scanner', 'no tag or digest'],
  ])('%s is rejected', (image, message) => {
    expect(() => synth({ image })).toThrow(message);
  });

  test('a registry port is not mistaken for a tag', () => {
    expect(podSpec({ image: 'registry.local:5000/scanner:1.0.0' }).containers[0].image).toBe('registry.local:5000/scanner:1.0.0');
  });
});

describe('resources', () => {
  test('defaults: requests 100m / 128Mi, memory limit 512Mi, no CPU limit', () => {
    expect(podSpec().containers[0].resources).toEqual({
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '512Mi' },
    });
  });

  test('given values are written exactly (Quantity fields survive synth)', () => {
    const resources = podSpec({ resources: { cpuRequest: '0.25', cpuLimit: '1', memoryRequest: '1Gi', memoryLimit: '1Gi' } }).containers[0].resources;
    expect(resources).toEqual({ requests: { cpu: '0.25', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } });
  });

  test('requests above limits are rejected', () => {
    expect(() => synth({ resources: { memoryRequest: '1Gi', memoryLimit: '512Mi' } })).toThrow('the request 1Gi is above the limit 512Mi');
    expect(() => synth({ resources: { cpuRequest: '2', cpuLimit: '500m' } })).toThrow('the request 2 is above the limit 500m');
  });
});

describe('update pace', () => {
  test.each([
    ['default (steady)', undefined, { maxUnavailable: '25%', maxSurge: 0 }],
    ['conservative', UpdateStrategy.conservative(), { maxUnavailable: 0, maxSurge: 1 }],
    ['steady', UpdateStrategy.steady(), { maxUnavailable: '25%', maxSurge: 0 }],
    ['fast', UpdateStrategy.fast(), { maxUnavailable: '50%', maxSurge: 0 }],
    ['one at a time', UpdateStrategy.oneAtATime(), { maxUnavailable: 1, maxSurge: 0 }],
    ['surge only', UpdateStrategy.rollingUpdate({ maxSurge: RolloutBudget.percent(10) }), { maxUnavailable: 0, maxSurge: '10%' }],
  ])('%s writes both budgets explicitly (IntOrString fields survive synth)', (_name, updateStrategy, rollingUpdate) => {
    expect(daemonSet({ updateStrategy }).spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate });
  });

  test('OnDelete has no rollingUpdate', () => {
    expect(daemonSet({ updateStrategy: UpdateStrategy.onDelete() }).spec.updateStrategy).toEqual({ type: 'OnDelete' });
  });

  test('minReadySeconds 10 and revisionHistoryLimit 10 by default, configurable', () => {
    expect(daemonSet().spec).toMatchObject({ minReadySeconds: 10, revisionHistoryLimit: 10 });
    expect(daemonSet({ minReadySeconds: 30, revisionHistoryLimit: 3 }).spec).toMatchObject({ minReadySeconds: 30, revisionHistoryLimit: 3 });
  });

  test('surge is refused with a host port, with hostNetwork ports, and with a writable hostPath', () => {
    const surge = UpdateStrategy.conservative();
    expect(() => synth({ updateStrategy: surge, ports: [{ name: 'metrics', containerPort: 9100, hostPort: 9100 }] }))
      .toThrow('rollout deadlocks');
    expect(() => synth({ updateStrategy: surge, hostNetwork: true, ports: [{ name: 'metrics', containerPort: 9100 }] }))
      .toThrow('host port(s) 9100/TCP');
    expect(() => synth({ updateStrategy: surge, hostPaths: [{ name: 'state', hostPath: '/var/lib/scanner', readOnly: false }] }))
      .toThrow('old and new pod would write the same host state');
    // read-only host paths and plain container ports are fine with surge
    expect(daemonSet({ updateStrategy: surge, ports: [{ name: 'http', containerPort: 8080 }], hostPaths: [{ name: 'proc', hostPath: '/proc' }] })
      .spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: 0, maxSurge: 1 });
  });
});

describe('scheduling', () => {
  test('linux only and virtual nodes excluded by default', () => {
    const spec = podSpec();
    expect(spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    expect(spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([{
      matchExpressions: [
        { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
        { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
      ],
    }]);
  });

  test('user nodeSelector and requirements with every operator (affinity survives synth)', () => {
    const spec = podSpec({
      nodeSelector: { 'kubernetes.io/os': 'linux', 'node.kubernetes.io/instance-type': 'm5.large' },
      excludeVirtualNodes: false,
      nodeRequirements: [
        NodeRequirement.in('topology.kubernetes.io/zone', ['a', 'b']),
        NodeRequirement.notIn('pool', ['batch']),
        NodeRequirement.exists('storage'),
        NodeRequirement.doesNotExist('spot'),
        NodeRequirement.gt('cores', 4),
        NodeRequirement.lt('generation', 9),
      ],
    });
    expect(spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', 'node.kubernetes.io/instance-type': 'm5.large' });
    expect(spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions).toEqual([
      { key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a', 'b'] },
      { key: 'pool', operator: 'NotIn', values: ['batch'] },
      { key: 'storage', operator: 'Exists' },
      { key: 'spot', operator: 'DoesNotExist' },
      { key: 'cores', operator: 'Gt', values: ['4'] },
      { key: 'generation', operator: 'Lt', values: ['9'] },
    ]);
  });

  test('no affinity at all when nothing restricts the nodes', () => {
    expect(podSpec({ excludeVirtualNodes: false }).affinity).toBeUndefined();
  });

  test('explicit control-plane tolerations by default', () => {
    expect(podSpec().tolerations).toEqual([
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  test('tolerateAllTaints writes a single operator: Exists', () => {
    expect(podSpec({ tolerateAllTaints: true }).tolerations).toEqual([{ operator: 'Exists' }]);
  });

  test('extra tolerations follow the defaults; tolerateControlPlane: false drops them', () => {
    const tolerations = podSpec({
      tolerateControlPlane: false,
      tolerations: [{ key: 'nvidia.com/gpu', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE },
        { key: 'spot', value: 'true', effect: TaintEffect.NO_EXECUTE, tolerationSeconds: 30 }],
    }).tolerations;
    expect(tolerations).toEqual([
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'spot', operator: 'Equal', value: 'true', effect: 'NoExecute', tolerationSeconds: 30 },
    ]);
  });
});

describe('priority', () => {
  test('system-node-critical by default, with a scoped ResourceQuota outside kube-system', () => {
    const manifests = synth({ namespace: 'security' });
    expect(only(manifests, 'DaemonSet').spec.template.spec.priorityClassName).toBe('system-node-critical');
    const quota = only(manifests, 'ResourceQuota');
    expect(quota.metadata.namespace).toBe('security');
    expect(quota.spec.scopeSelector.matchExpressions).toEqual([{ scopeName: 'PriorityClass', operator: 'In', values: ['system-node-critical'] }]);
    expect(quota.spec.hard.pods).toBe('1000000');
  });

  test('no quota in kube-system, nor when turned off', () => {
    expect(synth().filter((m) => m.kind === 'ResourceQuota')).toHaveLength(0);
    expect(synth({ namespace: 'security', createPriorityQuota: false }).filter((m) => m.kind === 'ResourceQuota')).toHaveLength(0);
  });

  test('a dedicated PriorityClass when asked', () => {
    const manifests = synth({ namespace: 'security', priorityClass: { value: 1000000 } });
    expect(only(manifests, 'PriorityClass')).toMatchObject({ metadata: { name: 'scanner-critical' }, value: 1000000, globalDefault: false });
    expect(only(manifests, 'DaemonSet').spec.template.spec.priorityClassName).toBe('scanner-critical');
    expect(manifests.filter((m) => m.kind === 'ResourceQuota')).toHaveLength(0);
  });
});

describe('host access', () => {
  test('hostPaths are read-only with a type unless said otherwise', () => {
    const spec = podSpec({
      hostPaths: [
        { name: 'proc', hostPath: '/proc', mountPath: '/host/proc' },
        { name: 'state', hostPath: '/var/lib/scanner', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false },
        { name: 'root', hostPath: '/', mountPath: '/host/root', propagation: MountPropagation.HOST_TO_CONTAINER },
      ],
    });
    expect(spec.volumes).toEqual([
      { name: 'proc', hostPath: { path: '/proc', type: 'Directory' } },
      { name: 'state', hostPath: { path: '/var/lib/scanner', type: 'DirectoryOrCreate' } },
      { name: 'root', hostPath: { path: '/', type: 'Directory' } },
    ]);
    expect(spec.containers[0].volumeMounts).toEqual([
      { name: 'proc', mountPath: '/host/proc', readOnly: true },
      { name: 'state', mountPath: '/var/lib/scanner', readOnly: false },
      { name: 'root', mountPath: '/host/root', readOnly: true, mountPropagation: 'HostToContainer' },
    ]);
  });

  test('Bidirectional propagation needs privileged', () => {
    const hostPaths = [{ name: 'run', hostPath: '/run/scanner', readOnly: false, propagation: MountPropagation.BIDIRECTIONAL }];
    expect(() => synth({ hostPaths })).toThrow('Bidirectional propagation, which the API allows only in a privileged container');
    expect(podSpec({ hostPaths, privileged: true, runAsRoot: true }).containers[0].volumeMounts[0].mountPropagation).toBe('Bidirectional');
  });

  test('hostNetwork and hostPID are off by default', () => {
    const spec = podSpec();
    expect(spec.hostNetwork).toBe(false);
    expect(spec.hostPID).toBeUndefined();
  });

  test('hostNetwork sets ClusterFirstWithHostNet and hostPort = containerPort; hostPID survives synth', () => {
    const spec = podSpec({ hostNetwork: true, hostPid: true, ports: [{ name: 'metrics', containerPort: 9100 }], updateStrategy: UpdateStrategy.oneAtATime() });
    expect(spec).toMatchObject({ hostNetwork: true, hostPID: true, dnsPolicy: 'ClusterFirstWithHostNet' });
    expect(spec.containers[0].ports).toEqual([{ name: 'metrics', containerPort: 9100, hostPort: 9100 }]);
  });
});

describe('security', () => {
  test('hardened by default', () => {
    const spec = podSpec();
    expect(spec.containers[0].securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(spec.securityContext).toEqual({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
  });

  test('capabilities are added by name, everything else dropped', () => {
    expect(podSpec({ capabilities: ['SYS_PTRACE', 'NET_ADMIN'] }).containers[0].securityContext.capabilities)
      .toEqual({ drop: ['ALL'], add: ['NET_ADMIN', 'SYS_PTRACE'] });
  });

  test('privileged emits allowPrivilegeEscalation: true (the API rejects it false)', () => {
    const sc = podSpec({ privileged: true, runAsRoot: true }).containers[0].securityContext;
    expect(sc).toMatchObject({ privileged: true, allowPrivilegeEscalation: true, runAsNonRoot: false, runAsUser: 0 });
  });

  test('runAsRoot opts out of runAsNonRoot on pod and container', () => {
    const spec = podSpec({ runAsRoot: true });
    expect(spec.securityContext.runAsNonRoot).toBe(false);
    expect(spec.containers[0].securityContext).toMatchObject({ runAsNonRoot: false, runAsUser: 0 });
  });
});

describe('API identity', () => {
  test('a dedicated ServiceAccount, no token without RBAC', () => {
    const manifests = synth();
    expect(only(manifests, 'ServiceAccount')).toMatchObject({ metadata: { name: 'scanner', namespace: 'kube-system' }, automountServiceAccountToken: false });
    const spec = only(manifests, 'DaemonSet').spec.template.spec;
    expect(spec).toMatchObject({ serviceAccountName: 'scanner', automountServiceAccountToken: false });
    expect(manifests.filter((m) => m.kind.startsWith('ClusterRole'))).toHaveLength(0);
  });

  test('rules become a ClusterRole and ClusterRoleBinding named after the agent, and the token is mounted', () => {
    const manifests = synth({ namespace: 'security', rbacRules: [{ resources: ['pods', 'namespaces'], verbs: ['get', 'list', 'watch'] }] });
    expect(only(manifests, 'ClusterRole')).toMatchObject({
      metadata: { name: 'scanner' },
      rules: [{ apiGroups: [''], resources: ['pods', 'namespaces'], verbs: ['get', 'list', 'watch'] }],
    });
    expect(only(manifests, 'ClusterRoleBinding')).toMatchObject({
      metadata: { name: 'scanner' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'scanner' },
      subjects: [{ kind: 'ServiceAccount', name: 'scanner', namespace: 'security' }],
    });
    expect(only(manifests, 'DaemonSet').spec.template.spec.automountServiceAccountToken).toBe(true);
  });
});

describe('config', () => {
  const configData = { 'scanner.yaml': 'level: high\n', 'rules.yaml': 'deny: []\n' };

  test('a content-addressed ConfigMap, mounted read-only, and a checksum annotation', () => {
    const manifests = synth({ configData });
    const configMap = only(manifests, 'ConfigMap');
    expect(configMap.metadata.name).toMatch(/^scanner-config-[0-9a-f]{10}$/);
    expect(configMap.data).toEqual(configData);
    expect(configMap.immutable).toBe(true);
    const template = only(manifests, 'DaemonSet').spec.template;
    expect(template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    expect(template.spec.volumes).toContainEqual({ name: 'config', configMap: { name: configMap.metadata.name } });
    expect(template.spec.containers[0].volumeMounts).toContainEqual({ name: 'config', mountPath: '/etc/scanner', readOnly: true });
  });

  test('a config change changes the checksum; the same config in another key order changes nothing', () => {
    const checksum = (data: { [k: string]: string }) => daemonSet({ configData: data }).spec.template.metadata.annotations['checksum/config'];
    expect(checksum(configData)).not.toBe(checksum({ ...configData, 'scanner.yaml': 'level: low\n' }));
    expect(checksum(configData)).toBe(checksum({ 'rules.yaml': 'deny: []\n', 'scanner.yaml': 'level: high\n' }));
  });

  test('no ConfigMap and no annotation without config', () => {
    const manifests = synth();
    expect(manifests.filter((m) => m.kind === 'ConfigMap')).toHaveLength(0);
    expect(only(manifests, 'DaemonSet').spec.template.metadata.annotations).toBeUndefined();
  });
});

describe('namespace', () => {
  test.each([
    ['restricted for a plain agent', {}, PodSecurityLevel.RESTRICTED],
    ['baseline for a root agent', { runAsRoot: true }, PodSecurityLevel.BASELINE],
    ['privileged with a hostPath', { hostPaths: [{ name: 'proc', hostPath: '/proc' }] }, PodSecurityLevel.PRIVILEGED],
    ['privileged with hostNetwork', { hostNetwork: true }, PodSecurityLevel.PRIVILEGED],
    ['privileged with hostPID', { hostPid: true }, PodSecurityLevel.PRIVILEGED],
    ['privileged when privileged', { privileged: true, runAsRoot: true }, PodSecurityLevel.PRIVILEGED],
    ['privileged with a non-baseline capability', { capabilities: ['SYS_ADMIN'] }, PodSecurityLevel.PRIVILEGED],
  ] as Array<[string, Partial<NodeAgentDaemonSetProps>, PodSecurityLevel]>)('%s', (_name, props, level) => {
    const namespace = only(synth({ ...props, namespace: 'agents', createNamespace: true }), 'Namespace');
    expect(namespace.metadata.name).toBe('agents');
    expect(namespace.metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': level,
      'pod-security.kubernetes.io/audit': level,
      'pod-security.kubernetes.io/warn': level,
    });
  });

  test('not created unless asked', () => {
    expect(synth().filter((m) => m.kind === 'Namespace')).toHaveLength(0);
  });
});

describe('lifecycle', () => {
  test('grace period 30 by default, configurable', () => {
    expect(podSpec().terminationGracePeriodSeconds).toBe(30);
    expect(podSpec({ terminationGracePeriodSeconds: 60 }).terminationGracePeriodSeconds).toBe(60);
  });

  test('no probe the user did not ask for, even with a port', () => {
    const container = podSpec({ ports: [{ name: 'http', containerPort: 8080 }] }).containers[0];
    expect(container.startupProbe).toBeUndefined();
    expect(container.readinessProbe).toBeUndefined();
    expect(container.livenessProbe).toBeUndefined();
  });

  test('probes are passed through', () => {
    const container = podSpec({
      ports: [{ name: 'http', containerPort: 8080 }],
      readiness: AgentProbe.fromHttpGet('/ready', { port: 8080 }),
      liveness: AgentProbe.fromHttpGet('/healthz', { port: 8080, failureThreshold: 5 }),
      startup: AgentProbe.fromCommand(['cat', '/tmp/started']),
    }).containers[0];
    expect(container.readinessProbe.httpGet).toMatchObject({ path: '/ready', port: 8080 });
    expect(container.livenessProbe).toMatchObject({ httpGet: { path: '/healthz', port: 8080 }, failureThreshold: 5 });
    expect(container.startupProbe.exec).toEqual({ command: ['cat', '/tmp/started'] });
  });
});

describe('exposed objects', () => {
  test('the kplus DaemonSet, main container, ServiceAccount and ConfigMap are reachable', () => {
    const chart = new Chart(Testing.app(), 'test');
    const agent = new NodeAgentDaemonSet(chart, 'scanner', { image: IMAGE, configData: { a: 'b' } });
    expect(agent.daemonSet).toBeInstanceOf(kplus.DaemonSet);
    expect(agent.mainContainer).toBeInstanceOf(kplus.Container);
    expect(agent.mainContainer.image).toBe(IMAGE);
    expect(agent.serviceAccount).toBeInstanceOf(kplus.ServiceAccount);
    expect(agent.configMap).toBeInstanceOf(kplus.ConfigMap);
    // users can extend through the exposed objects
    agent.mainContainer.env.addVariable('EXTRA', kplus.EnvValue.fromValue('1'));
    const container = only(synthManifests(chart), 'DaemonSet').spec.template.spec.containers[0];
    expect(container.env).toContainEqual({ name: 'EXTRA', value: '1' });
  });
});

describe('agents in one app', () => {
  test('two agents binding the same host port on nodes they may share: an error naming both', () => {
    const chart = new Chart(Testing.app(), 'test');
    new NodeAgentDaemonSet(chart, 'a', { image: IMAGE, hostNetwork: true, ports: [{ name: 'metrics', containerPort: 9100 }], updateStrategy: UpdateStrategy.oneAtATime() });
    new NodeAgentDaemonSet(chart, 'b', { image: IMAGE, ports: [{ name: 'metrics', containerPort: 8080, hostPort: 9100 }] });
    expect(() => synthManifests(chart)).toThrow(/NodeAgentDaemonSet test\/a and NodeAgentDaemonSet test\/b both bind host port 9100\/TCP/);
  });

  test('the same host port on disjoint node sets is fine', () => {
    const chart = new Chart(Testing.app(), 'test');
    new NodeAgentDaemonSet(chart, 'a', { image: IMAGE, ports: [{ name: 'metrics', containerPort: 9100, hostPort: 9100 }], nodeRequirements: [NodeRequirement.in('pool', ['gpu'])] });
    new NodeAgentDaemonSet(chart, 'b', { image: IMAGE, ports: [{ name: 'metrics', containerPort: 9100, hostPort: 9100 }], nodeRequirements: [NodeRequirement.notIn('pool', ['gpu'])] });
    expect(synthManifests(chart).filter((m) => m.kind === 'DaemonSet')).toHaveLength(2);
  });
});

describe('bad input', () => {
  const cases: Array<[string, Partial<NodeAgentDaemonSetProps>, string]> = [
    ['name not DNS-1123', { name: 'Scanner_1' }, 'name "Scanner_1" must be a DNS-1123 label'],
    ['name too long', { name: 'a'.repeat(51) }, 'at most 50 characters'],
    ['namespace invalid', { namespace: 'Kube_System' }, 'namespace "Kube_System" must be a DNS-1123 label'],
    ['empty image', { image: '' }, 'is not an image reference'],
    ['untagged image', { image: 'busybox' }, 'has no tag or digest'],
    ['latest image', { image: 'busybox:latest' }, 'uses ":latest"'],
    ['malformed digest', { image: 'busybox@sha256:xyz' }, 'malformed digest'],
    ['bad quantity', { resources: { memoryLimit: '512MB' } }, 'resources.memoryLimit "512MB" is not a Kubernetes quantity'],
    ['negative quantity', { resources: { cpuRequest: '-1' } }, 'resources.cpuRequest "-1" is negative'],
    ['request above limit', { resources: { memoryRequest: '2Gi', memoryLimit: '1Gi' } }, 'the request 2Gi is above the limit 1Gi'],
    ['both budgets zero', { updateStrategy: UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(0), maxSurge: RolloutBudget.count(0) }) }, 'both zero'],
    ['both budgets non-zero', { updateStrategy: UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(1), maxSurge: RolloutBudget.count(1) }) }, 'both non-zero'],
    ['percent above 100', { updateStrategy: UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.percent(150) }) }, 'at most 100%, got 150%'],
    ['negative budget', { updateStrategy: UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(-1) }) }, '0 or more, got -1'],
    ['fractional budget', { updateStrategy: UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(1.5) }) }, 'whole number of nodes or percent'],
    ['surge with host port', { updateStrategy: UpdateStrategy.conservative(), ports: [{ name: 'm', containerPort: 1, hostPort: 1 }] }, 'rollout deadlocks'],
    ['surge with writable hostPath', { updateStrategy: UpdateStrategy.conservative(), hostPaths: [{ name: 's', hostPath: '/var/lib/x', readOnly: false }] }, 'write the same host state'],
    ['negative minReadySeconds', { minReadySeconds: -1 }, 'minReadySeconds must be a whole number of at least 0, got -1'],
    ['fractional revisionHistoryLimit', { revisionHistoryLimit: 2.5 }, 'revisionHistoryLimit must be a whole number'],
    ['negative grace period', { terminationGracePeriodSeconds: -5 }, 'terminationGracePeriodSeconds must be a whole number of at least 0, got -5'],
    ['Exists with a value', { tolerations: [{ key: 'k', operator: TolerationOperator.EXISTS, value: 'v' }] }, 'operator Exists with value "v"'],
    ['tolerationSeconds without NoExecute', { tolerations: [{ key: 'k', effect: TaintEffect.NO_SCHEDULE, tolerationSeconds: 10 }] }, 'tolerationSeconds is only meaningful with effect NoExecute'],
    ['unknown effect', { tolerations: [{ key: 'k', effect: 'NoRun' as TaintEffect }] }, 'prop tolerations[0].effect must be one of TaintEffect.NO_SCHEDULE, PREFER_NO_SCHEDULE or NO_EXECUTE'],
    ['Equal without key', { tolerations: [{ value: 'v' }] }, 'operator Equal needs a key'],
    ['In without values', { nodeRequirements: [NodeRequirement.in('zone', [])] }, 'In on "zone" needs at least one value'],
    ['invalid nodeSelector key', { nodeSelector: { 'bad key': 'x' } }, '"bad key" is not a valid label key'],
    ['invalid nodeSelector value', { nodeSelector: { zone: 'a b' } }, 'is not a valid label value'],
    ['relative hostPath', { hostPaths: [{ name: 'logs', hostPath: 'var/log' }] }, 'hostPath "var/log" must be an absolute path'],
    ['duplicate hostPath name', { hostPaths: [{ name: 'logs', hostPath: '/var/log' }, { name: 'logs', hostPath: '/var/lib' }] }, 'the volume name is used twice'],
    ['reserved volume name', { hostPaths: [{ name: 'config', hostPath: '/etc' }] }, '"config" is reserved'],
    ['Bidirectional without privileged', { hostPaths: [{ name: 'run', hostPath: '/run/x', propagation: MountPropagation.BIDIRECTIONAL }] }, 'Bidirectional propagation'],
    ['mount of an unknown volume', { sidecars: [{ name: 'proxy', image: IMAGE, mounts: [{ volume: 'nope', mountPath: '/x' }] }] }, 'mounts "nope", which is not a volume of the agent'],
    ['duplicate container names', { sidecars: [{ name: 'scanner', image: IMAGE }] }, 'the name "scanner" is used by two containers'],
    ['port out of range', { ports: [{ name: 'http', containerPort: 70000 }] }, 'containerPort 70000 is outside 1-65535'],
    ['port name too long', { ports: [{ name: 'a-very-long-port-name', containerPort: 80 }] }, 'must be an IANA service name'],
    ['duplicate port names', { ports: [{ name: 'http', containerPort: 80 }, { name: 'http', containerPort: 81 }] }, 'the port name "http" is used twice'],
    ['hostNetwork with a different hostPort', { hostNetwork: true, updateStrategy: UpdateStrategy.oneAtATime(), ports: [{ name: 'http', containerPort: 80, hostPort: 8080 }] }, 'must equal the containerPort'],
    ['capability with CAP_ prefix', { capabilities: ['CAP_NET_ADMIN'] }, 'without the CAP_ prefix'],
    ['priorityClass and priorityClassName', { priorityClass: { value: 1000 }, priorityClassName: 'x' }, 'priorityClassName and priorityClass are both set'],
    ['priority value too high', { priorityClass: { value: 2000000000 } }, 'above 1000000000'],
    ['invalid config key', { configData: { 'a/b': 'x' } }, '"a/b" is not a valid ConfigMap key'],
    ['relative config mount path', { configData: { a: 'b' }, configMountPath: 'etc/x' }, 'configMountPath "etc/x" must be an absolute path'],
    ['RBAC rule without verbs', { rbacRules: [{ resources: ['pods'], verbs: [] }] }, 'rbacRules[0].verbs is empty'],
    ['invalid label', { labels: { team: 'platform team' } }, 'is not a valid label value'],
  ];

  test.each(cases)('%s', (_name, props, message) => {
    const chart = new Chart(Testing.app(), 'test');
    let error: Error | undefined;
    try {
      new NodeAgentDaemonSet(chart, 'scanner', { image: IMAGE, ...props });
    } catch (e) {
      error = e as Error;
    }
    expect(error).toBeDefined();
    // names the construct path, and the prop with its bad value and fix
    expect(error!.message).toMatch(/^NodeAgentDaemonSet test\/scanner: /);
    expect(error!.message).toContain(message);
    // and nothing was rendered
    expect(Testing.synth(chart)).toEqual([]);
  });

  test('all problems are reported at once', () => {
    expect(() => synth({ name: 'Bad_Name', image: 'busybox' })).toThrow(/Bad_Name[\s\S]*busybox/);
  });

  test('the table covers at least 25 invalid inputs', () => {
    expect(cases.length).toBeGreaterThanOrEqual(25);
  });
});

test('snapshot (second net)', () => {
  expect(synth({
    namespace: 'security',
    createNamespace: true,
    configData: { 'scanner.yaml': 'level: high\n' },
    hostPaths: [{ name: 'proc', hostPath: '/proc', mountPath: '/host/proc' }],
    rbacRules: [{ resources: ['pods'], verbs: ['get', 'list', 'watch'] }],
    ports: [{ name: 'metrics', containerPort: 8080 }],
  })).toMatchSnapshot();
});
