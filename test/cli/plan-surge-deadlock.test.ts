/**
 * maxSurge deadlocks beyond host ports. With maxSurge, kubernetes pkg/controller/daemon/update.go rollingUpdate
 * creates the new pod beside the old one and deletes the old one only once the new one is available; a new pod
 * that cannot be placed beside the old one stays Pending, numSurge stays at maxSurge and no old pod is ever deleted.
 * The scheduler keeps it off the node for a required hostname anti-affinity matching the DaemonSet's own pods
 * (InterPodAffinity filter), a host port both bind (NodePorts, kubernetes#106417), or an extended resource the node
 * holds once only (NodeResourcesFit).
 */
import { daemonSetInfo } from '../../src/cli/coverage/manifests';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { estimateRollout } from '../../src/cli/estimate/estimate';
import { planChange, PlanReport } from '../../src/cli/plan/plan';
import { Manifest } from '../util/manifests';
import { daemonSet, inventory, tree } from '../util/plan';
import { upstreamObject } from '../util/upstream';

const SURGE = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } };
const summary = (report: PlanReport) => report.findings.map((f) => [f.kind, f.cause, f.severity, [...f.nodes]]);

describe('gpu-operator\'s driver DaemonSet (its exclusivity term selects every nvidia-driver pod, its own included)', () => {
  const driver = (image: string, strategy: Manifest): Manifest => {
    const copy = upstreamObject('gpu-operator/0500_daemonset.json', 'DaemonSet');
    copy.metadata.namespace = 'gpu-operator';
    copy.spec.updateStrategy = strategy;
    // the operator drops the OpenShift toolkit container (and fills the images) outside OpenShift
    copy.spec.template.spec.containers = copy.spec.template.spec.containers.filter((c: { name: string }) => c.name !== 'openshift-driver-toolkit-ctr');
    for (const c of [...copy.spec.template.spec.initContainers, ...copy.spec.template.spec.containers]) c.image = image;
    return copy;
  };
  const nodes = inventory([{ name: 'gpu-1', labels: { 'nvidia.com/gpu.deploy.driver': 'true' } }, { name: 'gpu-2', labels: { 'nvidia.com/gpu.deploy.driver': 'true' } }]);

  test('with maxSurge: a deadlock, reported (stall, strategy), exit 1', () => {
    const report = planChange(tree([driver('nvcr.io/nvidia/driver:550', SURGE)]), tree([driver('nvcr.io/nvidia/driver:570', SURGE)]), nodes);
    // (the ConfigMap the operator creates beside it is not in this tree: a standing missing-reference warning)
    expect(summary(report).filter(([kind]) => kind !== 'missing-reference')).toEqual([['stall', 'strategy', 'error', ['gpu-1', 'gpu-2']]]);
    expect(report.findings[0].message).toContain('required pod anti-affinity on kubernetes.io/hostname that selects the DaemonSet\'s own pods');
    expect(report.agents[0].daemonSets[0].rollout!.seconds).toBeUndefined();
  });

  test('with maxUnavailable: the old pod goes first, no deadlock', () => {
    const unavailable = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } };
    const report = planChange(tree([driver('nvcr.io/nvidia/driver:550', unavailable)]), tree([driver('nvcr.io/nvidia/driver:570', unavailable)]), nodes);
    expect(report.findings.filter((f) => f.kind !== 'missing-reference')).toEqual([]);
  });

  test('estimate reports the same wave problem', () => {
    const info = daemonSetInfo(driver('nvcr.io/nvidia/driver:570', SURGE), 'driver.yaml');
    const [agent] = estimateRollout([{ info, covered: ['gpu-1', 'gpu-2'] }]);
    expect(agent.waves[0].problem).toContain('the rollout deadlocks; use maxUnavailable');
    expect(agent.manualWaves).toEqual(['gpu-operator/nvidia-driver-daemonset']);
  });
});

test('an anti-affinity against other rollout groups only (the constructs\' term) is no deadlock', () => {
  const term = [{ labelSelector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'NotIn', values: ['agent'] }] }, topologyKey: 'kubernetes.io/hostname' }];
  const report = planChange(tree([daemonSet('agent', { strategy: SURGE, antiAffinity: term })]),
    tree([daemonSet('agent', { strategy: SURGE, antiAffinity: term, image: 'example.com/agent:2' })]), inventory([{ name: 'a' }]));
  expect(report.findings).toEqual([]);
});

describe('an extended resource both pods request', () => {
  const withGpu = (image: string): Manifest => {
    const ds = daemonSet('agent', { strategy: SURGE, image });
    ds.spec.template.spec.containers[0].resources = { limits: { 'nvidia.com/gpu': 1 } };
    return ds;
  };
  const node = (name: string, gpus?: string) => ({
    metadata: { name, labels: { 'kubernetes.io/os': 'linux' } },
    status: { conditions: [{ type: 'Ready', status: 'True' }], ...(gpus === undefined ? {} : { allocatable: { 'nvidia.com/gpu': gpus } }) },
  });

  test('a node whose allocatable holds one: deadlock (error); two or more, or none listed: a warning (other pods\' use is not visible)', () => {
    const nodes = nodeFacts([node('one', '1'), node('eight', '8'), node('unlisted')]);
    const report = planChange(tree([withGpu('example.com/agent:1')]), tree([withGpu('example.com/agent:2')]), nodes);
    expect(summary(report)).toEqual([
      ['stall', 'surge-resource', 'error', ['one']],
      ['stall', 'assumption', 'warning', ['eight', 'unlisted']],
    ]);
    expect(report.findings[0].message).toContain('both request nvidia.com/gpu: 1');
  });

  test('daemonSetInfo counts a limit without a request, sums containers, and leaves cpu/memory out', () => {
    const ds = withGpu('x');
    ds.spec.template.spec.containers.push({ name: 'side', image: 'x', resources: { requests: { 'nvidia.com/gpu': '2', 'cpu': '1', 'example.com/fpga': '0' } } });
    expect(daemonSetInfo(ds, 't').extendedResources).toEqual({ 'nvidia.com/gpu': 3 });
  });
});
