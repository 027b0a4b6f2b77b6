/**
 * Volumes beyond hostPaths (Secret, ConfigMap, emptyDir) with their mounts, per-container extended
 * resources and SELinux level, exclusive components, and cross-agent checks per cluster scope.
 */
import { App, Chart, Testing } from 'cdk8s';
import { Construct } from 'constructs';
import { AgentVolume, NodeAgentDaemonSet, NodeAgentDaemonSetProps, NodeExporterDaemonSet } from '../../src';
import { Manifest, synthManifests } from '../util/manifests';

const IMAGE = 'ghcr.io/acme/scanner:1.2.3';

function synth(props: Partial<NodeAgentDaemonSetProps>): Manifest {
  const chart = new Chart(Testing.app(), 'chart');
  new NodeAgentDaemonSet(chart, 'scanner', { image: IMAGE, ...props });
  return synthManifests(chart).find((m) => m.kind === 'DaemonSet').spec.template.spec;
}

describe('volumes and mounts', () => {
  test('Secret, ConfigMap and emptyDir volumes are mounted only where named', () => {
    const pod = synth({
      volumes: [
        AgentVolume.secret('tls', 'scanner-tls', { defaultMode: 0o440 }),
        AgentVolume.configMap('rules', 'scanner-rules', { optional: true }),
        AgentVolume.emptyDir('scratch', { memory: true, sizeLimit: '64Mi' }),
      ],
      mounts: [{ volume: 'tls', mountPath: '/etc/tls' }, { volume: 'scratch', mountPath: '/tmp', readOnly: false }],
      sidecars: [{ name: 'reloader', image: 'ghcr.io/acme/reloader:1.0.0', mounts: [{ volume: 'rules', mountPath: '/rules' }] }],
    });
    const volumes = new Map(pod.volumes.map((v: Manifest) => [v.name, v]));
    expect(volumes.get('tls')).toEqual({ name: 'tls', secret: { secretName: 'scanner-tls', defaultMode: 0o440 } });
    expect(volumes.get('rules')).toEqual({ name: 'rules', configMap: { name: 'scanner-rules', optional: true } });
    expect(volumes.get('scratch')).toEqual({ name: 'scratch', emptyDir: { medium: 'Memory', sizeLimit: '64Mi' } });
    expect(pod.containers[0].volumeMounts).toEqual([
      { name: 'tls', mountPath: '/etc/tls', readOnly: true },
      { name: 'scratch', mountPath: '/tmp', readOnly: false },
    ]);
    expect(pod.containers[1].volumeMounts).toEqual([{ name: 'rules', mountPath: '/rules', readOnly: true }]);
  });

  test.each([
    ['a volume name used twice', { volumes: [AgentVolume.emptyDir('x')], hostPaths: [{ name: 'x', hostPath: '/x' }] }, 'volumes["x"]: the volume name is used twice'],
    ['the reserved name config', { volumes: [AgentVolume.emptyDir('config')] }, 'volumes["config"].name "config" is reserved'],
    ['a bad Secret name', { volumes: [AgentVolume.secret('tls', 'Bad_Name')] }, 'volumes["tls"]: "Bad_Name" is not a valid Secret name'],
    ['a bad file mode', { volumes: [AgentVolume.secret('tls', 'tls', { defaultMode: 0o1000 })] }, 'volumes["tls"].defaultMode 512 must be a file mode'],
    ['a size cdk8s cannot express', { volumes: [AgentVolume.emptyDir('s', { sizeLimit: '1.5Gi' })] }, 'volumes["s"].sizeLimit "1.5Gi" must be a whole number of Mi, Gi or Ti'],
    ['a mount of no volume', { mounts: [{ volume: 'nope', mountPath: '/x' }] }, 'mounts "nope", which is not a volume of the agent; add it to hostPaths or volumes'],
  ])('%s is refused', (_name, props, message) => {
    expect(() => synth(props as Partial<NodeAgentDaemonSetProps>)).toThrow(message);
  });
});

describe('per-container settings', () => {
  test('extended resources are requested and limited alike; SELinux level in the security context', () => {
    const pod = synth({ extendedResources: { 'example.com/device': '2', 'hugepages-2Mi': '64Mi' }, seLinuxLevel: 's0:c1,c2' });
    const resources = pod.containers[0].resources;
    expect(resources.requests['example.com/device']).toBe('2');
    expect(resources.limits['example.com/device']).toBe('2');
    expect(resources.limits['hugepages-2Mi']).toBe('64Mi');
    expect(pod.containers[0].securityContext.seLinuxOptions).toEqual({ level: 's0:c1,c2' });
  });

  test.each([
    ['cpu as an extended resource', { extendedResources: { cpu: '1' } }, 'extendedResources: "cpu" is not an extended resource name'],
    ['a bad quantity', { extendedResources: { 'example.com/device': 'two' } }, 'extendedResources["example.com/device"] "two" is not a Kubernetes quantity'],
    ['a bad SELinux level', { seLinuxLevel: 'level zero' }, 'seLinuxLevel "level zero" is not an SELinux MLS/MCS level'],
  ])('%s is refused', (_name, props, message) => {
    expect(() => synth(props as Partial<NodeAgentDaemonSetProps>)).toThrow(message);
  });

  test('exclusiveComponents keeps the pods off nodes running such a component', () => {
    const pod = synth({ exclusiveComponents: ['cni-agent', 'legacy-cni'] });
    expect(pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution).toEqual([{
      labelSelector: { matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: ['cni-agent', 'legacy-cni'] }] },
      namespaceSelector: {},
      topologyKey: 'kubernetes.io/hostname',
    }]);
  });
});

describe('cross-agent checks per cluster', () => {
  /** A construct standing for one cluster, marked as the fleet's per-cluster construct is. */
  class Cluster extends Construct {
    public constructor(scope: Construct, id: string) {
      super(scope, id);
      Object.defineProperty(this, Symbol.for('cdk8s-node-agents.cluster-scope'), { value: true });
    }
  }

  test('two node exporters in one app share nodes: the host port clash is reported, across charts too', () => {
    const app = new App();
    new NodeExporterDaemonSet(new Chart(app, 'a'), 'metrics', { name: 'exporter-a' });
    new NodeExporterDaemonSet(new Chart(app, 'b'), 'metrics', { name: 'exporter-b' });
    expect(() => app.synth()).toThrow(/both bind host port 9100\/TCP on nodes they may share/);
  });

  test('one node exporter per cluster scope: no clash', () => {
    const app = Testing.app();
    const charts = ['eu-1', 'us-1'].map((name) => new Chart(new Cluster(app, name), 'agents'));
    for (const chart of charts) new NodeExporterDaemonSet(chart, 'metrics');
    // each cluster's manifests on their own: the same names in two clusters are no duplicates
    for (const chart of charts) expect(synthManifests(chart).filter((m) => m.kind === 'DaemonSet')).toHaveLength(1);
  });

  test('the check is computed once per scope and stays current when an agent joins', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'a');
    const first = new NodeExporterDaemonSet(chart, 'one', { name: 'one' });
    expect(first.node.validate()).toEqual([]);
    new NodeExporterDaemonSet(chart, 'two', { name: 'two' });
    expect(first.node.validate()).toHaveLength(0); // the validation lives on the base construct
    expect(first.agent.node.validate()).toEqual([expect.stringContaining('both bind host port 9100/TCP')]);
  });
});
