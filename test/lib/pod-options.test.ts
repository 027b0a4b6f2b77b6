/**
 * The pod settings every agent construct takes (AgentPodOptions): pull secrets, ServiceAccount
 * annotations or an existing ServiceAccount, pod labels and annotations, env and envFrom, volumes
 * and mounts, sidecars and init containers, DNS, per-container resources; and the escape hatch.
 */
import { ApiObject, Chart, JsonPatch, Testing } from 'cdk8s';
import {
  AgentDnsPolicy, AgentEnvSource, AgentPodOptions, AgentRelease, AgentVolume, FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet,
  NodeAgentDaemonSet, NodeExporterDaemonSet, Promotion, RolloutWave,
} from '../../src';
import { AgentEnvValue } from '../../src/agent/container-inputs';
import { Manifest, synthManifests } from '../util/manifests';

type Build = (chart: Chart, options: AgentPodOptions) => { agent: NodeAgentDaemonSet } | NodeAgentDaemonSet;
const AGENTS: Array<[string, Build, string]> = [
  ['NodeAgentDaemonSet', (c, o) => new NodeAgentDaemonSet(c, 'agent', { name: 'scanner', image: 'ghcr.io/acme/scanner:1.2.3', ...o }), 'scanner'],
  ['LogCollectorDaemonSet', (c, o) => new LogCollectorDaemonSet(c, 'agent', { outputs: [FluentBitOutput.stdout()], ...o }), 'fluent-bit'],
  ['NodeExporterDaemonSet', (c, o) => new NodeExporterDaemonSet(c, 'agent', { kubeRbacProxy: {}, ...o }), 'node-exporter'],
  ['GpuDriverDaemonSet', (c, o) => new GpuDriverDaemonSet(c, 'agent', { image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', ...o }), 'nvidia-driver'],
];

const OPTIONS: AgentPodOptions = {
  imagePullSecrets: ['registry-creds'],
  serviceAccountAnnotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/agent' },
  podLabels: { team: 'platform' },
  podAnnotations: { 'example.com/owner': 'platform' },
  extraEnv: { HTTPS_PROXY: AgentEnvValue.fromValue('http://proxy.internal:3128') },
  envFrom: [AgentEnvSource.configMap('agent-settings', { prefix: 'AGENT_' })],
  volumes: [AgentVolume.emptyDir('scratch', { sizeLimit: '64Mi' })],
  mounts: [{ volume: 'scratch', mountPath: '/scratch', readOnly: false }],
  sidecars: [{ name: 'watcher', image: 'ghcr.io/acme/watcher:1.0.0', mounts: [{ volume: 'scratch', mountPath: '/scratch' }] }],
  initContainers: [{ name: 'prepare', image: 'ghcr.io/acme/prepare:1.0.0' }],
  dnsConfig: { options: { ndots: '2' } },
};

function synth(build: Build, options: AgentPodOptions): Manifest[] {
  const chart = new Chart(Testing.app(), 'chart');
  build(chart, options);
  return synthManifests(chart);
}

describe.each(AGENTS)('%s', (_kind, build, mainContainer) => {
  test('every pod option reaches the DaemonSet and the ServiceAccount', () => {
    const manifests = synth(build, { ...OPTIONS, containerResources: { watcher: { memoryLimit: '64Mi', memoryRequest: '32Mi' } } });
    const ds = manifests.find((m) => m.kind === 'DaemonSet');
    const pod = ds.spec.template.spec;
    const main = pod.containers.find((c: Manifest) => c.name === mainContainer) ?? pod.containers[0];
    expect(pod.imagePullSecrets).toEqual([{ name: 'registry-creds' }]);
    expect(ds.spec.template.metadata.labels.team).toBe('platform');
    expect(ds.spec.selector.matchLabels.team).toBeUndefined();
    expect(ds.spec.template.metadata.annotations['example.com/owner']).toBe('platform');
    expect(main.env).toContainEqual({ name: 'HTTPS_PROXY', value: 'http://proxy.internal:3128' });
    expect(main.envFrom).toEqual([{ prefix: 'AGENT_', configMapRef: { name: 'agent-settings' } }]);
    expect(main.volumeMounts).toContainEqual({ name: 'scratch', mountPath: '/scratch', readOnly: false });
    expect(pod.volumes).toContainEqual({ name: 'scratch', emptyDir: { sizeLimit: '64Mi' } });
    const watcher = pod.containers.find((c: Manifest) => c.name === 'watcher');
    expect(watcher.resources.limits.memory).toBe('64Mi');
    expect(pod.initContainers.map((c: Manifest) => c.name)).toContain('prepare');
    expect(pod.initContainers[pod.initContainers.length - 1].name).toBe('prepare');
    expect(pod.dnsConfig).toEqual({ options: [{ name: 'ndots', value: '2' }] });
    const sa = manifests.find((m) => m.kind === 'ServiceAccount');
    expect(sa.metadata.annotations).toEqual({ 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/agent' });
  });

  test('an existing ServiceAccount is used, not created; RBAC binds to it', () => {
    const manifests = synth(build, { serviceAccountName: 'shared-agent' });
    expect(manifests.filter((m) => m.kind === 'ServiceAccount')).toEqual([]);
    expect(manifests.find((m) => m.kind === 'DaemonSet').spec.template.spec.serviceAccountName).toBe('shared-agent');
    const binding = manifests.find((m) => m.kind === 'ClusterRoleBinding');
    if (binding) expect(binding.subjects[0].name).toBe('shared-agent');
  });

  test('the escape hatch: a JSON patch on every DaemonSet survives synthesis', () => {
    const chart = new Chart(Testing.app(), 'chart');
    const built = build(chart, {});
    const agent = built instanceof NodeAgentDaemonSet ? built : built.agent;
    for (const ds of agent.daemonSets) ApiObject.of(ds).addJsonPatch(JsonPatch.add('/spec/template/spec/shareProcessNamespace', true));
    for (const ds of synthManifests(chart).filter((m) => m.kind === 'DaemonSet')) expect(ds.spec.template.spec.shareProcessNamespace).toBe(true);
  });
});

describe('pod options are checked', () => {
  function base(options: AgentPodOptions): Manifest[] {
    return synth(AGENTS[0][1], options);
  }
  test.each([
    ['a bad pull secret name', { imagePullSecrets: ['Bad Name'] }, 'imagePullSecrets[0] "Bad Name" is not a valid object name'],
    ['a pod label the agent owns', { podLabels: { 'app.kubernetes.io/name': 'x' } }, 'podLabels: "app.kubernetes.io/name" is set by the agent itself'],
    ['an invalid pod label', { podLabels: { 'bad key!': 'x' } }, 'podLabels: "bad key!" is not a valid label key'],
    ['an env name with =', { extraEnv: { 'A=B': AgentEnvValue.fromValue('x') } }, 'extraEnv: "A=B" is not a valid environment variable name'],
    ['an envFrom prefix with a space', { envFrom: [AgentEnvSource.secret('s', { prefix: 'A B' })] }, 'envFrom[0].prefix "A B"'],
    ['dnsPolicy None without name servers', { dnsPolicy: AgentDnsPolicy.NONE }, 'dnsPolicy None needs dnsConfig.nameservers'],
    ['four name servers', { dnsConfig: { nameservers: ['1.1.1.1', '1.0.0.1', '8.8.8.8', '8.8.4.4'] } }, 'the API allows at most 3'],
    ['resources of no container', { containerResources: { nope: { memoryLimit: '1Gi' } } }, 'containerResources names "nope", which is not a container of the pod; the containers are "scanner"'],
    ['an existing ServiceAccount with a bad name', { serviceAccountName: 'Bad_SA' }, 'serviceAccountName "Bad_SA" is not a valid object name'],
  ])('%s', (_name, options, message) => {
    expect(() => base(options as AgentPodOptions)).toThrow(message);
  });

  test('the ServiceAccount identity cannot differ between releases while waves are held', () => {
    const chart = new Chart(Testing.app(), 'chart');
    expect(() => new NodeAgentDaemonSet(chart, 'scanner', {
      image: 'ghcr.io/acme/scanner:2.0.0',
      serviceAccountAnnotations: { 'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/new' },
      rollout: {
        waves: [RolloutWave.labelled('canary')],
        promoted: Promotion.through('canary'),
        previous: AgentRelease.fromProps({ image: 'ghcr.io/acme/scanner:1.0.0' }),
      },
    })).toThrow('differ in serviceAccountName or serviceAccountAnnotations');
  });

  test('held waves keep the previous release\'s pod options', () => {
    const chart = new Chart(Testing.app(), 'chart');
    new NodeAgentDaemonSet(chart, 'scanner', {
      image: 'ghcr.io/acme/scanner:2.0.0',
      imagePullSecrets: ['new-registry'],
      podLabels: { tier: 'new' },
      rollout: {
        waves: [RolloutWave.labelled('canary')],
        promoted: Promotion.through('canary'),
        previous: AgentRelease.fromProps({ image: 'ghcr.io/acme/scanner:1.0.0' }),
      },
    });
    const [canary, fleet] = synthManifests(chart).filter((m) => m.kind === 'DaemonSet');
    expect(canary.spec.template.spec.imagePullSecrets).toEqual([{ name: 'new-registry' }]);
    expect(canary.spec.template.metadata.labels.tier).toBe('new');
    expect(fleet.spec.template.spec.imagePullSecrets).toBeUndefined();
    expect(fleet.spec.template.metadata.labels.tier).toBeUndefined();
  });
});
