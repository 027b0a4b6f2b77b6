/**
 * The readiness taint on every agent: the toleration of its own taint, the remover container and its token volume,
 * the DaemonSet annotation the tools read, the shared access objects, the key checked against each consumer, the
 * Karpenter NodePool entry; with rollout waves, held waves keep the previous release's pods.
 */
import { Testing } from 'cdk8s';
import {
  AgentRelease, FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeExporterDaemonSet, Promotion,
  ReadinessTaintConsumer, RolloutWave,
} from '../../src';
import { REMOVER_CONTAINER, READINESS_TAINT_ANNOTATION } from '../../src/scheduling/readiness-taint';
import { Manifest, synthManifests } from '../util/manifests';

const BASE = { image: 'registry.example.com/agent:1.0.0' };

type Build = (chart: ReturnType<typeof Testing.chart>, key: string) => unknown;

const AGENTS: [string, Build][] = [
  ['NodeAgentDaemonSet', (chart, key) => new NodeAgentDaemonSet(chart, 'a', { ...BASE, readinessTaint: { key } })],
  ['LogCollectorDaemonSet', (chart, key) => new LogCollectorDaemonSet(chart, 'a', { outputs: [FluentBitOutput.stdout()], readinessTaint: { key } })],
  ['NodeExporterDaemonSet', (chart, key) => new NodeExporterDaemonSet(chart, 'a', { readinessTaint: { key } })],
  ['GpuDriverDaemonSet', (chart, key) => new GpuDriverDaemonSet(chart, 'a', {
    image: 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04', shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 1800 }), readinessTaint: { key },
  })],
];

function daemonSets(manifests: Manifest[]): Manifest[] {
  return manifests.filter((m) => m.kind === 'DaemonSet');
}

describe.each(AGENTS)('%s', (_kind, build) => {
  test('tolerates its own taint, runs the remover, annotates its DaemonSet, renders the narrowed access', () => {
    const chart = Testing.chart();
    const key = 'node-agents.cdk8s.io/agent-not-ready';
    build(chart, key);
    const manifests = synthManifests(chart);
    const [ds] = daemonSets(manifests);
    const pod = ds.spec.template.spec;
    expect(ds.metadata.annotations[READINESS_TAINT_ANNOTATION]).toBe(`${key}:NoSchedule`);
    const tolerates = pod.tolerations.some((t: Manifest) => (t.key === key || t.key === undefined) && t.operator === 'Exists'
      && (t.effect === undefined || t.effect === 'NoSchedule'));
    expect(tolerates).toBe(true);
    const remover = pod.containers.find((c: Manifest) => c.name === REMOVER_CONTAINER);
    expect(remover.env.find((e: Manifest) => e.name === 'TAINT_KEY').value).toBe(key);
    expect(remover.volumeMounts).toEqual([{ name: 'readiness-taint-token', mountPath: '/var/run/secrets/node-agents.cdk8s.io/readiness-taint', readOnly: true }]);
    // the token is the remover's alone
    for (const c of pod.containers.filter((x: Manifest) => x !== remover)) {
      expect((c.volumeMounts ?? []).map((m: Manifest) => m.name)).not.toContain('readiness-taint-token');
    }
    expect(manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy')).toHaveLength(1);
    expect(manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicyBinding')).toHaveLength(1);
  });
});

test('without readinessTaint nothing of it is rendered', () => {
  const chart = Testing.chart();
  new NodeAgentDaemonSet(chart, 'a', BASE);
  const manifests = synthManifests(chart);
  expect(manifests.map((m) => m.kind)).not.toContain('ValidatingAdmissionPolicy');
  expect(JSON.stringify(manifests)).not.toContain('readiness-taint');
});

test('the GPU driver\'s taint: the driver tolerates it and its pod turns Ready only through its probe, so GPU workloads stay off until the driver is loaded', () => {
  const chart = Testing.chart();
  const driver = new GpuDriverDaemonSet(chart, 'nvidia', {
    image: 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04',
    shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 1800 }),
    readinessTaint: { key: 'node-agents.cdk8s.io/gpu-driver-not-ready' },
  });
  const [ds] = daemonSets(synthManifests(chart));
  const pod = ds.spec.template.spec;
  // the driver container is Ready only once its probe sees the module loaded; a GPU pod does not tolerate the taint
  expect(pod.containers[0].readinessProbe ?? pod.containers[0].startupProbe).toBeDefined();
  expect(pod.tolerations.map((t: Manifest) => t.key)).toContain('node-agents.cdk8s.io/gpu-driver-not-ready');
  expect(driver.agent.karpenterStartupTaint()).toEqual({ key: 'node-agents.cdk8s.io/gpu-driver-not-ready', effect: 'NoSchedule' });
});

describe('the key against its consumers', () => {
  const make = (key: string, consumers?: ReadinessTaintConsumer[], extra: object = {}) => () => {
    new NodeAgentDaemonSet(Testing.chart(), 'a', { ...BASE, readinessTaint: { key, consumers, ...extra } });
  };
  test('a key the API server refuses', () => {
    expect(make('bad key')).toThrow(/readinessTaint.key "bad key" is not a valid taint key/);
    expect(make('Example.com/x')).toThrow(/prefix \(before the "\/"\) must be a DNS subdomain/);
  });
  test('cluster-autoscaler needs its startup-taint prefix; node-readiness-controller its own; no key serves both', () => {
    expect(make('node-agents.cdk8s.io/a', [ReadinessTaintConsumer.CLUSTER_AUTOSCALER]))
      .toThrow(/only under the prefix "startup-taint.cluster-autoscaler.kubernetes.io\/".*"startup-taint.cluster-autoscaler.kubernetes.io\/a"/);
    expect(make('startup-taint.cluster-autoscaler.kubernetes.io/a', [ReadinessTaintConsumer.CLUSTER_AUTOSCALER])).not.toThrow();
    expect(make('node-agents.cdk8s.io/a', [ReadinessTaintConsumer.NODE_READINESS_CONTROLLER])).toThrow(/readiness.k8s.io\//);
    expect(make('readiness.k8s.io/a', [ReadinessTaintConsumer.NODE_READINESS_CONTROLLER])).not.toThrow();
    expect(make('readiness.k8s.io/a', [ReadinessTaintConsumer.CLUSTER_AUTOSCALER, ReadinessTaintConsumer.NODE_READINESS_CONTROLLER]))
      .toThrow(/no key serves both/);
    // Karpenter takes any valid key
    expect(make('example.com/anything', [ReadinessTaintConsumer.KARPENTER])).not.toThrow();
  });
  test('recheckSeconds and the remover image', () => {
    expect(make('a/b', undefined, { recheckSeconds: 1 })).toThrow(/recheckSeconds 1 must be a whole number from 5 to 3600/);
    expect(make('a/b', undefined, { removerImage: 'curlimages/curl:latest' })).toThrow(/readinessTaint.removerImage/);
  });
  test('the remover\'s container name is the agent\'s own', () => {
    expect(() => new NodeAgentDaemonSet(Testing.chart(), 'a', {
      ...BASE, readinessTaint: { key: 'a/b' }, sidecars: [{ name: REMOVER_CONTAINER, image: 'x/y:1' }],
    })).toThrow(/"readiness-taint-remover" is the readiness taint's remover container/);
  });
});

test('admissionPolicy: false (clusters before 1.30) renders no policy, the RBAC stays', () => {
  const chart = Testing.chart();
  new NodeAgentDaemonSet(chart, 'a', { ...BASE, readinessTaint: { key: 'a/b', admissionPolicy: false } });
  const kinds = synthManifests(chart).map((m) => m.kind);
  expect(kinds).not.toContain('ValidatingAdmissionPolicy');
  expect(kinds.filter((k) => k === 'ClusterRole')).toHaveLength(1);
});

test('with rollout waves, a held wave keeps the previous release\'s pod (no remover); the access covers both releases', () => {
  const chart = Testing.chart();
  const previous = { ...BASE };
  new NodeAgentDaemonSet(chart, 'a', {
    ...BASE,
    image: 'registry.example.com/agent:1.1.0',
    readinessTaint: { key: 'a/b' },
    rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.through('canary'), previous: AgentRelease.fromProps(previous) },
  });
  const manifests = synthManifests(chart);
  const byGroup = new Map(daemonSets(manifests).map((d) => [d.spec.template.metadata.labels['node-agents.cdk8s.io/rollout-group'], d]));
  const names = (d: Manifest) => d.spec.template.spec.containers.map((c: Manifest) => c.name);
  expect(names(byGroup.get('canary'))).toContain(REMOVER_CONTAINER);
  expect(names(byGroup.get('fleet'))).not.toContain(REMOVER_CONTAINER);
  expect(byGroup.get('fleet').metadata.annotations?.[READINESS_TAINT_ANNOTATION]).toBeUndefined();
  expect(manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy')).toHaveLength(1);
});
