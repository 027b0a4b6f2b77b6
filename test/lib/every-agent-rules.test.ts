/**
 * Rules every agent follows, whatever its kind: cluster-scoped objects carry no namespace, one
 * namespace rule (explicit prop > chart namespace > the agent's default), and agent-specific
 * container settings and late checks apply to every DaemonSet of a rollout, not only the fleet's.
 */
import { ApiObject, Chart, JsonPatch, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import {
  FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeExporterDaemonSet, Promotion, RolloutWave,
} from '../../src';
import { Manifest, synthManifests } from '../util/manifests';

const CLUSTER_SCOPED = ['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass'];
const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });
const DRIVER_IMAGE = 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04';
const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];

type Build = (chart: Chart, props: { namespace?: string; createNamespace?: boolean }) => void;
const AGENTS: Array<[string, Build, string]> = [
  ['NodeAgentDaemonSet', (c, p) => new NodeAgentDaemonSet(c, 'agent', {
    image: 'ghcr.io/acme/scanner:1.2.3', rbacRules: [{ resources: ['nodes'], verbs: ['get'] }], priorityClass: { value: 1000 }, ...p,
  }), 'kube-system'],
  ['LogCollectorDaemonSet', (c, p) => new LogCollectorDaemonSet(c, 'agent', { outputs: [LOKI], ...p }), 'observability'],
  ['NodeExporterDaemonSet', (c, p) => new NodeExporterDaemonSet(c, 'agent', { kubeRbacProxy: {}, ...p }), 'monitoring'],
  ['GpuDriverDaemonSet', (c, p) => new GpuDriverDaemonSet(c, 'agent', { image: DRIVER_IMAGE, ...p }), 'kube-system'],
];

function synth(build: Build, chartNamespace: string | undefined, props: { namespace?: string; createNamespace?: boolean }): Manifest[] {
  const chart = new Chart(Testing.app(), 'chart', { namespace: chartNamespace });
  build(chart, props);
  return synthManifests(chart);
}

test('the agents with RBAC render their cluster-scoped RBAC objects without a namespace', () => {
  for (const [, build] of AGENTS.slice(0, 3)) {
    const kinds = synth(build, 'platform', {}).filter((m) => CLUSTER_SCOPED.includes(m.kind));
    expect(kinds.map((m) => m.kind)).toEqual(expect.arrayContaining(['ClusterRole', 'ClusterRoleBinding']));
    for (const m of kinds) expect(m.metadata.namespace).toBeUndefined();
  }
});

describe.each(AGENTS)('%s', (_kind, build, agentDefault) => {
  test('cluster-scoped objects carry no namespace, also in a chart with a namespace', () => {
    const manifests = synth(build, 'platform', { createNamespace: true });
    const clusterScoped = manifests.filter((m) => CLUSTER_SCOPED.includes(m.kind));
    expect(clusterScoped.map((m) => m.kind)).toContain('Namespace');
    for (const m of clusterScoped) expect(m.metadata.namespace).toBeUndefined();
    // namespaced objects still get theirs
    expect(manifests.find((m) => m.kind === 'DaemonSet').metadata.namespace).toBe('platform');
  });

  test('namespace: explicit prop > chart namespace > the agent default', () => {
    const namespaces = (ms: Manifest[]) => [...new Set(ms.filter((m) => !CLUSTER_SCOPED.includes(m.kind)).map((m) => m.metadata.namespace))];
    expect(namespaces(synth(build, 'platform', { namespace: 'agents' }))).toEqual(['agents']);
    expect(namespaces(synth(build, 'platform', {}))).toEqual(['platform']);
    expect(namespaces(synth(build, undefined, {}))).toEqual([agentDefault]);
    // the ClusterRoleBinding names the ServiceAccount where it really is
    const binding = synth(build, 'platform', {}).find((m) => m.kind === 'ClusterRoleBinding');
    if (binding) expect(binding.subjects[0].namespace).toBe('platform');
  });
});

describe('GPU driver: its own container settings and late checks cover every wave DaemonSet', () => {
  function rolloutDriver(promoted: Promotion) {
    const chart = new Chart(Testing.app(), 'chart');
    const settings = { seLinuxLevel: 's0:c1,c2', extendedResources: { 'example.com/driver-slot': '1' } };
    const driver = new GpuDriverDaemonSet(chart, 'nvidia', {
      image: DRIVER_IMAGE,
      ...settings,
      rollout: { waves: WAVES, promoted, previous: GpuDriverDaemonSet.release({ image: 'nvcr.io/nvidia/driver:535.183.01-ubuntu22.04', ...settings }) },
    });
    return { chart, driver };
  }

  test.each([['canary only', Promotion.through('canary')], ['all', Promotion.all()]])('seLinuxLevel and extended resources on every DaemonSet (%s)', (_name, promoted) => {
    const { chart } = rolloutDriver(promoted);
    const daemonSets = synthManifests(chart).filter((m) => m.kind === 'DaemonSet');
    expect(daemonSets.map((d) => d.metadata.name)).toEqual(['gpu-driver-canary', 'gpu-driver-wave-1', 'gpu-driver']);
    for (const ds of daemonSets) {
      const container = ds.spec.template.spec.containers[0];
      expect(container.securityContext.seLinuxOptions).toEqual({ level: 's0:c1,c2' });
      expect(container.resources.requests['example.com/driver-slot']).toBe('1');
      expect(container.resources.limits['example.com/driver-slot']).toBe('1');
    }
  });

  test('a GPU request patched into a wave DaemonSet fails the late check, naming that DaemonSet', () => {
    expect(rolloutDriver(Promotion.through('canary')).driver.node.validate()).toEqual([]);
    // The late checks run once, on the first validation (at synthesis, after every patch): patch first.
    const { driver } = rolloutDriver(Promotion.through('canary'));
    const canary = driver.agent.daemonSets.find((ds) => ds.name === 'gpu-driver-canary')!;
    ApiObject.of(canary).addJsonPatch(
      JsonPatch.add('/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu', kplus.k8s.Quantity.fromNumber(1)),
    );
    const errors = driver.node.validate();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('GpuDriverDaemonSet chart/nvidia (DaemonSet gpu-driver-canary): container "nvidia-driver" requests "nvidia.com/gpu"');
  });

  test('settings the new release adds stay off the held waves: they render the previous release\'s props', () => {
    const chart = new Chart(Testing.app(), 'chart');
    new GpuDriverDaemonSet(chart, 'nvidia', {
      image: DRIVER_IMAGE,
      seLinuxLevel: 's0:c1,c2',
      extendedResources: { 'example.com/driver-slot': '1' },
      rollout: { waves: WAVES, promoted: Promotion.through('canary'), previous: GpuDriverDaemonSet.release({ image: 'nvcr.io/nvidia/driver:535.183.01-ubuntu22.04' }) },
    });
    const containers = new Map(synthManifests(chart).filter((m) => m.kind === 'DaemonSet')
      .map((ds) => [ds.metadata.name, ds.spec.template.spec.containers[0]]));
    expect(containers.get('gpu-driver-canary').securityContext.seLinuxOptions).toEqual({ level: 's0:c1,c2' });
    for (const held of ['gpu-driver-wave-1', 'gpu-driver']) {
      expect(containers.get(held).securityContext.seLinuxOptions).toBeUndefined();
      expect(containers.get(held).resources.limits['example.com/driver-slot']).toBeUndefined();
    }
  });
});

describe('agent-specific settings reach every wave DaemonSet', () => {
  const BUILDS: Array<[string, (chart: Chart) => void]> = [
    ['NodeAgentDaemonSet', (c) => new NodeAgentDaemonSet(c, 'a', {
      image: 'ghcr.io/acme/scanner:1.2.3', sidecars: [{ name: 'helper', image: 'ghcr.io/acme/helper:1.0.0' }], rollout: { waves: WAVES, promoted: Promotion.all() },
    })],
    ['LogCollectorDaemonSet', (c) => new LogCollectorDaemonSet(c, 'a', {
      outputs: [FluentBitOutput.elasticsearch({ host: 'es.logging.svc', httpUser: 'fb', httpPassword: { secretName: 'es', key: 'password' } })],
      rollout: { waves: WAVES, promoted: Promotion.all() },
    })],
    ['NodeExporterDaemonSet', (c) => new NodeExporterDaemonSet(c, 'a', {
      kubeRbacProxy: { tlsSecretName: 'node-exporter-tls' }, rollout: { waves: WAVES, promoted: Promotion.all() },
    })],
    ['GpuDriverDaemonSet', (c) => new GpuDriverDaemonSet(c, 'a', {
      image: DRIVER_IMAGE, seLinuxLevel: 's0:c1,c2', extendedResources: { 'example.com/driver-slot': '1' }, rollout: { waves: WAVES, promoted: Promotion.all() },
    })],
  ];

  /** The pod template without what legitimately differs between groups: the group label, node affinity and the group's own anti-affinity term. */
  function groupIndependent(ds: Manifest): string {
    const template = JSON.parse(JSON.stringify(ds.spec.template));
    delete template.metadata.labels['node-agents.cdk8s.io/rollout-group'];
    delete template.spec.affinity.nodeAffinity;
    const terms = template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution = terms
      .filter((t: Manifest) => !(t.labelSelector.matchExpressions ?? []).some((e: Manifest) => e.key === 'node-agents.cdk8s.io/rollout-group'));
    return JSON.stringify(template);
  }

  test.each(BUILDS)('%s: with everything promoted, the wave and fleet pod templates differ only in the group', (_kind, build) => {
    const chart = new Chart(Testing.app(), 'chart');
    build(chart);
    const daemonSets = synthManifests(chart).filter((m) => m.kind === 'DaemonSet');
    expect(daemonSets).toHaveLength(3);
    const [first, ...rest] = daemonSets.map(groupIndependent);
    for (const other of rest) expect(other).toBe(first);
  });
});
