/**
 * Last out. `plan --pods`: on every node of the log collector, the longest workload stop (its grace period, preStop
 * hook included, plus the kubelet's 2 s after a hook that used the period up: minimumGracePeriodInSeconds in
 * pkg/kubelet/kuberuntime/kuberuntime_container.go, killContainer) must fit in the collector's grace period.
 * `NodeShutdown.kubeletConfiguration()`: the kubelet's shutdownGracePeriodByPodPriority that stops node agents last,
 * checked against a port of the kubelet's grouping (pkg/kubelet/nodeshutdown/nodeshutdown_manager.go,
 * groupByPriority). Fixtures in test/fixtures/shutdown-order/.
 */
import * as path from 'path';
import { parse } from 'yaml';
import { NodeShutdown } from '../../src';
import { runCli } from '../../src/cli/run';
import { Manifest } from '../util/manifests';
import { FIXTURES as FIXTURE_ROOT } from '../util/paths';

const FIXTURES = path.join(FIXTURE_ROOT, 'shutdown-order');

function plan(tree: string) {
  let stdout = '';
  let stderr = '';
  const code = runCli(['plan', '--nodes', 'nodes.json', '--pods', 'pods.json', '--before', tree, '--after', tree, '--json'],
    { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: FIXTURES });
  expect(stderr).toBe('');
  return { code, findings: JSON.parse(stdout).steps[0].findings.filter((f: Manifest) => f.kind === 'shutdown-order') };
}

test('a workload that takes longer to stop than the collector\'s grace period: a warning naming the node, the pod and the seconds', () => {
  const { code, findings } = plan('collector-60.yaml');
  expect(findings).toHaveLength(1);
  expect(findings[0]).toMatchObject({ severity: 'warning', cause: 'collector-grace', agent: 'log-collector', nodes: ['n1'] });
  // 120 s grace (its 100 s preStop inside it) + 2 s; DaemonSet pods (other agents) are not workloads
  expect(findings[0].message).toContain('n1 (shop/orders-db-0: 122 s)');
  expect(findings[0].message).not.toContain('other-agent');
  expect(findings[0].fix).toContain('at least 127 s');
  expect(findings[0].fix).toContain('shutdownGracePeriodByPodPriority');
  // shutdownGracePeriodCriticalPods 0 does not stop them together (migrateConfig: critical pods are a second group,
  // killContainer gives them at least 2 s): the collector stops after the workloads with 2 s to flush
  expect(findings[0].message).not.toContain('without priority slots');
  expect(findings[0].message).toContain('shutdownGracePeriodCriticalPods 0 it stops after them, with 2 s to flush');
  expect(findings[0].fix).toContain('shutdownGracePeriodCriticalPods of at least');
  // a warning: who stops the node decides whether the two stop together
  expect(code).toBe(0);
});

test('a collector grace period longer than every workload stop: nothing', () => {
  expect(plan('collector-130.yaml').findings).toEqual([]);
});

/** pkg/kubelet/nodeshutdown/nodeshutdown_manager.go groupByPriority, ported: the index of the group a pod of `priority` joins. */
function groupIndex(groups: readonly number[], priority: number): number {
  let index = groups.findIndex((g) => g >= priority);
  if (index === -1) index = groups.length - 1;
  else if (index > 0 && groups[index] > priority) index--;
  return index;
}

describe('NodeShutdown.kubeletConfiguration', () => {
  test('three groups, low to high: workloads, system-cluster-critical, node agents last', () => {
    const config = parse(NodeShutdown.kubeletConfiguration({ workloadSeconds: 125, agentSeconds: 70 }));
    expect(config).toMatchObject({ apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration' });
    expect(config.shutdownGracePeriod).toBeUndefined();
    const groups: { priority: number; shutdownGracePeriodSeconds: number }[] = config.shutdownGracePeriodByPodPriority;
    expect(groups).toEqual([
      { priority: 0, shutdownGracePeriodSeconds: 125 },
      { priority: 2000000000, shutdownGracePeriodSeconds: 30 },
      { priority: 2000001000, shutdownGracePeriodSeconds: 70 },
    ]);
    const priorities = groups.map((g) => g.priority);
    // the kubelet's grouping: a system-node-critical agent in the last group, stopped after every other
    expect(groupIndex(priorities, 2000001000)).toBe(2);
    expect(groupIndex(priorities, 2000000000)).toBe(1);
    expect(groupIndex(priorities, 1000000)).toBe(0);
    expect(groupIndex(priorities, 0)).toBe(0);
    expect(groupIndex(priorities, -10)).toBe(0);
  });

  test('the comments say what Karpenter does: the collector is not drained, it stops in its slot', () => {
    const text = NodeShutdown.kubeletConfiguration();
    expect(text).not.toContain('leaves DaemonSet pods to the end');
    expect(text).toContain('never evicts a pod that tolerates karpenter.sh/disrupted:NoSchedule');
  });

  test('agentSeconds 0 is refused: the kubelet gives a group of 0 s 2 s a container and does not wait (kuberuntime_container.go killContainer)', () => {
    expect(() => NodeShutdown.kubeletConfiguration({ agentSeconds: 0 })).toThrow(/agentSeconds 0 .*2 s each .*at least the longest agent grace period/);
  });

  test('seconds are checked', () => {
    expect(() => NodeShutdown.kubeletConfiguration({ agentSeconds: -1 })).toThrow(/agentSeconds -1 must be a whole number of seconds from 0 to 3600/);
  });
});
