/**
 * What Karpenter's node termination does with each agent. Port of kubernetes-sigs/karpenter
 * pkg/utils/pod/scheduling.go (IsDrainable, IsEvictable, ToleratesDisruptedNoScheduleTaint) and
 * pkg/controllers/node/termination/terminator/terminator.go (Evict's four rounds), checked with the cases of
 * pkg/controllers/node/termination/suite_test.go, then applied to the pods this library renders.
 */
import { Chart, Testing } from 'cdk8s';
import { GpuDriverDaemonSet, LogCollectorDaemonSet, NodeExporterDaemonSet } from '../../src';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { DrainPod, karpenterDrains, karpenterEvictionRound } from '../../src/scheduling/karpenter-drain';
import { Manifest, synthManifests } from '../util/manifests';

const DISRUPTED = 'karpenter.sh/disrupted';
const REPLICA_SET = ['apps/v1/ReplicaSet'];

describe('port of IsDrainable / IsEvictable (pkg/utils/pod/scheduling.go), cases of pkg/controllers/node/termination/suite_test.go', () => {
  const cases: [string, DrainPod, boolean][] = [
    ['should not evict pods that tolerate karpenter disruption taint with equal operator',
      { owners: REPLICA_SET, tolerations: [{ key: DISRUPTED, operator: 'Equal', effect: 'NoSchedule', value: '' }] }, false],
    ['should not evict pods that tolerate karpenter disruption taint with exists operator',
      { owners: REPLICA_SET, tolerations: [{ key: DISRUPTED, operator: 'Exists', effect: 'NoSchedule' }] }, false],
    ['should evict pods that tolerate the node.kubernetes.io/unschedulable taint',
      { owners: REPLICA_SET, tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }, true],
    ['should not evict static pods', { owners: ['v1/Node'] }, false],
    ['should delete nodes with terminal pods', { terminal: true }, false],
    ['should delete nodes that have pods without an ownerRef (after evicting them)', {}, true],
    // core/v1 ToleratesTaint: an empty key with Exists matches every taint (tolerateAllTaints), an effect must match
    ['operator Exists with no key tolerates the disrupted taint', { tolerations: [{ operator: 'Exists' }] }, false],
    ['the disrupted key with effect NoExecute does not', { tolerations: [{ key: DISRUPTED, operator: 'Exists', effect: 'NoExecute' }] }, true],
  ];
  test.each(cases)('%s', (_name, pod, drained) => {
    expect(karpenterDrains(pod)).toBe(drained);
  });

  test('should evict pods in order: workloads, DaemonSet pods, critical workloads, critical DaemonSet pods', () => {
    const daemon = ['apps/v1/DaemonSet'];
    expect([
      { owners: REPLICA_SET },
      { owners: daemon },
      { owners: REPLICA_SET, priorityClassName: 'system-node-critical' },
      { owners: REPLICA_SET, priorityClassName: 'system-cluster-critical' },
      { owners: daemon, priorityClassName: 'system-node-critical' },
      { owners: daemon, priorityClassName: 'system-cluster-critical' },
      { owners: daemon, priorityClassName: 'system-node-critical', tolerations: [{ operator: 'Exists' as const }] },
    ].map(karpenterEvictionRound)).toEqual([0, 1, 2, 2, 3, 3, undefined]);
  });
});

function renderedPod(build: (chart: Chart) => void): DrainPod {
  const chart = new Chart(Testing.app(), 'test');
  build(chart);
  const ds = synthManifests(chart).find((m: Manifest) => m.kind === 'DaemonSet')!;
  const spec = ds.spec.template.spec;
  return { owners: ['apps/v1/DaemonSet'], tolerations: spec.tolerations, priorityClassName: spec.priorityClassName };
}

const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });

describe('the agents on a node Karpenter terminates', () => {
  test('the log collector is never drained: it reads the workloads\' last lines until they are gone', () => {
    expect(karpenterDrains(renderedPod((c) => new LogCollectorDaemonSet(c, 'logs', { outputs: [LOKI] })))).toBe(false);
  });

  test('with tolerateAllTaints: false too (it tolerates karpenter.sh/disrupted:NoSchedule on its own)', () => {
    const pod = renderedPod((c) => new LogCollectorDaemonSet(c, 'logs', { outputs: [LOKI], tolerateAllTaints: false }));
    expect(karpenterDrains(pod)).toBe(false);
    expect(pod.tolerations).toContainEqual({ key: DISRUPTED, operator: 'Exists', effect: 'NoSchedule' });
  });

  test('a toleration of the taint given in tolerations is not repeated', () => {
    const pod = renderedPod((c) => new LogCollectorDaemonSet(c, 'logs', {
      outputs: [LOKI], tolerateAllTaints: false, tolerations: [{ key: DISRUPTED, operator: 'Exists' as never }],
    }));
    expect(pod.tolerations!.filter((t) => t.key === DISRUPTED)).toEqual([{ key: DISRUPTED, operator: 'Exists' }]);
  });

  test('node-exporter (tolerates every taint by default) keeps exporting through the drain', () => {
    expect(karpenterDrains(renderedPod((c) => new NodeExporterDaemonSet(c, 'metrics')))).toBe(false);
  });

  test('the GPU driver is drained in the last round, after the GPU workloads', () => {
    expect(karpenterEvictionRound(renderedPod((c) => new GpuDriverDaemonSet(c, 'gpu', { image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04' })))).toBe(3);
  });
});
