/**
 * What all waves share while two releases run: the union both need, or a refusal that says why;
 * and the previous release goes through exactly the checks the current one does.
 */
import { Chart, Testing } from 'cdk8s';
import {
  AgentRelease, FluentBitOutput, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeAgentDaemonSetProps, NodeExporterDaemonSet, Promotion,
  RolloutWave, UpdateStrategy,
} from '../../src';
import { Manifest, synthManifests } from '../util/manifests';

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
const CURRENT: NodeAgentDaemonSetProps = { name: 'scanner', namespace: 'security', image: 'ghcr.io/acme/scanner:2.0.0' };
const PREVIOUS: NodeAgentDaemonSetProps = { name: 'scanner', namespace: 'security', image: 'ghcr.io/acme/scanner:1.0.0' };

function stage(current: Partial<NodeAgentDaemonSetProps>, previous: Partial<NodeAgentDaemonSetProps>): Manifest[] {
  const chart = new Chart(Testing.app(), 'chart');
  new NodeAgentDaemonSet(chart, 'scanner', {
    ...CURRENT,
    ...current,
    rollout: { waves: WAVES, promoted: Promotion.through('canary'), previous: AgentRelease.fromProps({ ...PREVIOUS, ...previous }) },
  });
  return synthManifests(chart);
}

function one(manifests: Manifest[], kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
}

function daemonSet(manifests: Manifest[], name: string): Manifest {
  return manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === name);
}

describe('shared objects hold what both releases need', () => {
  test('the ClusterRole has the rules of both releases, each once', () => {
    const manifests = stage(
      { rbacRules: [{ resources: ['pods'], verbs: ['get'] }, { resources: ['nodes'], verbs: ['get'] }] },
      { rbacRules: [{ resources: ['pods'], verbs: ['get'] }, { resources: ['events'], verbs: ['create'] }] },
    );
    expect(one(manifests, 'ClusterRole').rules.map((r: Manifest) => r.resources[0])).toEqual(['pods', 'nodes', 'events']);
  });

  test('a rule only the previous release needs keeps the ClusterRole, and its token, while waves hold it', () => {
    const manifests = stage({}, { rbacRules: [{ resources: ['nodes'], verbs: ['get'] }] });
    expect(one(manifests, 'ClusterRole').rules).toHaveLength(1);
    expect(one(manifests, 'ServiceAccount').automountServiceAccountToken).toBe(true);
    // each pod template keeps its own release's setting
    expect(daemonSet(manifests, 'scanner-canary').spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(daemonSet(manifests, 'scanner').spec.template.spec.automountServiceAccountToken).toBe(true);
  });

  test('a created namespace allows the wider Pod Security level of the two releases', () => {
    const manifests = stage({ createNamespace: true }, { createNamespace: true, hostPaths: [{ name: 'log', hostPath: '/var/log' }] });
    expect(one(manifests, 'Namespace').metadata.labels['pod-security.kubernetes.io/enforce']).toBe('privileged');
  });

  test('a priority quota for each critical class a release uses', () => {
    const manifests = stage({ priorityClassName: 'system-cluster-critical' }, {});
    expect(manifests.filter((m) => m.kind === 'ResourceQuota').map((m) => m.metadata.name).sort())
      .toEqual(['scanner-system-cluster-critical', 'scanner-system-node-critical']);
  });

  test('held waves keep their own node requirements, pace and priority', () => {
    const manifests = stage({ updateStrategy: UpdateStrategy.fast(), priorityClassName: 'system-cluster-critical' }, {});
    expect(daemonSet(manifests, 'scanner-wave-1').spec.updateStrategy.rollingUpdate.maxUnavailable).toBe('25%');
    expect(daemonSet(manifests, 'scanner-wave-1').spec.template.spec.priorityClassName).toBe('system-node-critical');
    expect(daemonSet(manifests, 'scanner-canary').spec.template.spec.priorityClassName).toBe('system-cluster-critical');
  });
});

describe('changes no wave can hold are refused with why and what to do', () => {
  test.each([
    ['the name', {}, { name: 'old-scanner' }, 'rollout.previous names the agent "old-scanner" but the current props name it "scanner"'],
    ['the namespace', {}, { namespace: 'kube-system' }, 'rollout.previous runs in namespace "kube-system" but the current props in "security"'],
    ['createNamespace', { createNamespace: true }, {}, 'differ in createNamespace: the Namespace object is shared by every wave'],
    ['a created PriorityClass', { priorityClass: { value: 1000 } }, { priorityClass: { value: 900 } }, 'differ in priorityClass'],
  ])('%s', (_name, current, previous, message) => {
    expect(() => stage(current, previous)).toThrow(message);
  });
});

describe('the previous release is checked like the current one', () => {
  test.each([
    ['a malformed quantity', { resources: { memoryRequest: '1.5.3Gi' } }, 'rollout.previous: container "scanner" resources.memoryRequest "1.5.3Gi" is not a Kubernetes quantity'],
    ['request above limit', { resources: { memoryRequest: '1Gi', memoryLimit: '512Mi' } }, 'rollout.previous: container "scanner" resources memory: the request 1Gi is above the limit 512Mi'],
    ['a sidecar named like the main container', { sidecars: [{ name: 'scanner', image: 'ghcr.io/acme/helper:1.0.0' }] }, 'rollout.previous: containers: the name "scanner" is used by two containers'],
    ['a bad config key', { configData: { 'bad/key': 'x' } }, 'rollout.previous: configData: "bad/key" is not a valid ConfigMap key'],
    ['a bad port name', { ports: [{ name: 'BAD', containerPort: 80 }] }, 'rollout.previous: container "scanner" port name "BAD"'],
    ['an empty image', { image: '' }, 'rollout.previous: container "scanner" image "" is not an image reference'],
    ['a :latest image', { image: 'ghcr.io/acme/scanner:latest' }, 'rollout.previous: container "scanner" image'],
    ['a mount of an unknown volume', { sidecars: [{ name: 'helper', image: 'ghcr.io/acme/helper:1.0.0', mounts: [{ volume: 'nope', mountPath: '/x' }] }] },
      'rollout.previous: container "helper" mounts "nope", which is not a volume of the agent'],
    ['a config mount without configData', { sidecars: [{ name: 'helper', image: 'ghcr.io/acme/helper:1.0.0', mounts: [{ volume: 'config', mountPath: '/x' }] }] },
      'rollout.previous: container "helper" mounts "config" but the agent has no configData'],
  ])('%s', (_name, previous, message) => {
    expect(() => stage({}, previous as Partial<NodeAgentDaemonSetProps>)).toThrow(message);
  });

  test('the error names the agent construct path', () => {
    expect(() => stage({}, { image: '' })).toThrow(/^NodeAgentDaemonSet chart\/scanner: invalid props:/);
  });

  test('an agent construct reports its previous release\'s errors under its own path and prop', () => {
    const chart = new Chart(Testing.app(), 'chart');
    expect(() => new LogCollectorDaemonSet(chart, 'logs', {
      outputs: [FluentBitOutput.stdout()],
      rollout: {
        waves: WAVES,
        promoted: Promotion.through('canary'),
        previous: LogCollectorDaemonSet.release({ outputs: [FluentBitOutput.stdout()], resources: { memoryRequest: '1.5.3Gi' } }),
      },
    })).toThrow(/^LogCollectorDaemonSet chart\/logs: rollout\.previous: resources\.memoryRequest "1\.5\.3Gi" is not a Kubernetes quantity/);
  });

  test('a release of another agent kind is refused, naming the right factory', () => {
    const chart = new Chart(Testing.app(), 'chart');
    expect(() => new NodeExporterDaemonSet(chart, 'metrics', {
      rollout: { waves: WAVES, promoted: Promotion.through('canary'), previous: LogCollectorDaemonSet.release({ outputs: [FluentBitOutput.stdout()] }) },
    })).toThrow('NodeExporterDaemonSet chart/metrics: rollout.previous was made by LogCollectorDaemonSet.release(); a NodeExporterDaemonSet\'s previous release is NodeExporterDaemonSet.release(previousProps)');
    expect(() => new NodeAgentDaemonSet(chart, 'scanner', {
      ...CURRENT,
      rollout: { waves: WAVES, promoted: Promotion.through('canary'), previous: NodeExporterDaemonSet.release({}) },
    })).toThrow('a NodeAgentDaemonSet\'s previous release is AgentRelease.fromProps(previousProps)');
  });

  test('a wave named like an Object.prototype member is an ordinary wave', () => {
    const chart = new Chart(Testing.app(), 'chart');
    new NodeAgentDaemonSet(chart, 'scanner', { ...CURRENT, rollout: { waves: [RolloutWave.labelled('constructor')], promoted: Promotion.all() } });
    expect(synthManifests(chart).filter((m) => m.kind === 'DaemonSet').map((m) => m.metadata.name)).toEqual(['scanner-constructor', 'scanner']);
  });
});
