/**
 * node-agents plan: what NotReady and unreachable nodes do to a rolling update, as the DaemonSet controller does it
 * (kubernetes pkg/controller/daemon/update.go rollingUpdate and findUpdatedPodsOnNode; the node lifecycle
 * controller's MarkPodsNotReady, pkg/controller/util/node/controller_utils.go), and what Argo CD waits for
 * (gitops-engine pkg/sync/sync_context.go Sync; pkg/health/health_daemonset.go).
 */
import { ARGOCD_SYNC_WAVE } from '../../src';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { estimateRollout, unreachableStalls } from '../../src/cli/estimate/estimate';
import { lastSyncStep } from '../../src/cli/plan/argo-sync';
import { planChange, PlanReport } from '../../src/cli/plan/plan';
import { Manifest } from '../util/manifests';
import { daemonSet, inventory, TestNode, tree } from '../util/plan';

/** 16 nodes: n-01..n-16 */
function nodes(states: Record<string, TestNode['ready']> = {}) {
  return inventory(Array.from({ length: 16 }, (_, i) => {
    const name = `n-${String(i + 1).padStart(2, '0')}`;
    return { name, ready: states[name] ?? 'True' };
  }));
}

function bump(options: Parameters<typeof daemonSet>[1] = {}, extra: Manifest[] = []): PlanReport {
  return plan([daemonSet('npd', { ...options, image: 'example.com/npd:1' }), ...extra], [daemonSet('npd', { ...options, image: 'example.com/npd:2' }), ...extra],
    nodes({ 'n-07': 'Unknown' }));
}

function plan(before: Manifest[], after: Manifest[], given = nodes()): PlanReport {
  return planChange(tree(before), tree(after), given);
}

const summary = (report: PlanReport) => report.findings.map((f) => [f.kind, f.cause, f.severity, [...f.nodes]]);

describe('an untolerated unreachable node under maxUnavailable (update.go rollingUpdate, maxSurge == 0)', () => {
  // node-problem-detector-like: no not-ready/unreachable NoSchedule toleration, so the controller places no new pod
  // on n-07 (nodeShouldRunDaemonPod: shouldRun false, shouldContinueRunning true), but rollingUpdate walks every node
  // with a pod of the DaemonSet: the old pod there is unavailable (MarkPodsNotReady) and is deleted at once
  // (allowedReplacementPods, numUnavailable++); it stays Terminating while the kubelet is unreachable, and
  // findUpdatedPodsOnNode skips terminating pods, so the node counts as unavailable (oldPod == nil && newPod == nil)
  // on every sync.
  test('maxUnavailable 1: the rollout replaces nothing: a stall error, not "15 batches of 1"', () => {
    const report = bump();
    const rollout = report.agents[0].daemonSets[0].rollout!;
    expect(rollout).toMatchObject({ nodes: 15, podsAtOnce: 0, batches: 0, stuck: ['n-07'], waiting: ['n-07'] });
    expect(rollout.seconds).toBeUndefined();
    expect(summary(report)).toEqual([
      ['stall', 'not-ready', 'error', ['n-07']],
      ['loses-agent', 'node-condition', 'warning', ['n-07']],
    ]);
    expect(report.findings[0].message).toContain('agents/npd replaces none of its other 15 pods');
    expect(report.findings[0].message).toContain('stays Terminating while no kubelet confirms it');
    expect(report.agents[0].manual).toEqual(['agents/npd']);
  });

  test('maxUnavailable 3: the unreachable node holds one unit, 2 at once remain: 8 batches', () => {
    const report = bump({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 3 } } });
    expect(report.agents[0].daemonSets[0].rollout).toMatchObject({ nodes: 15, podsAtOnce: 2, batches: 8, lastBatchSize: 1, seconds: 8 * 30, stuck: ['n-07'] });
    expect(summary(report)).toEqual([['loses-agent', 'node-condition', 'warning', ['n-07']]]);
  });

  test('maxSurge: the terminating pod is not counted (findUpdatedPodsOnNode: oldPod == nil, nothing to do there): full pace', () => {
    const report = bump({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } });
    expect(report.agents[0].daemonSets[0].rollout).toMatchObject({ nodes: 15, podsAtOnce: 1, batches: 15, stuck: [], waiting: ['n-07'] });
    expect(summary(report)).toEqual([['loses-agent', 'node-condition', 'warning', ['n-07']]]);
  });
});

describe('an untolerated Ready=False node: the model reads a live kubelet, and says so', () => {
  test('the old pod is deleted and not recreated while NotReady; a warning names the assumption and what a dead kubelet would do', () => {
    const report = plan([daemonSet('npd')], [daemonSet('npd', { image: 'example.com/npd:2' })], nodes({ 'n-03': 'False' }));
    expect(report.agents[0].daemonSets[0].rollout).toMatchObject({ nodes: 15, podsAtOnce: 1, batches: 15, stuck: [], waiting: ['n-03'] });
    expect(summary(report)).toEqual([
      ['stall', 'assumption', 'warning', ['n-03']],
      ['loses-agent', 'node-condition', 'warning', ['n-03']],
    ]);
    expect(report.findings[0].message).toContain('Ready=False is read as a live kubelet');
    expect(report.findings[0].message).toContain('the rolling update stops (a budget of 1 pod at once)');
  });
});

describe('a tolerated NotReady node: the new pod never turns available and holds a unit', () => {
  const all = [{ operator: 'Exists' }];
  test('maxUnavailable 4 on 16 nodes with 1 NotReady: 3 at once for the other 15 (5 batches)', () => {
    const wide = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%' } };
    const report = plan([daemonSet('agent', { tolerations: all, strategy: wide })],
      [daemonSet('agent', { tolerations: all, strategy: wide, image: 'example.com/agent:2' })], nodes({ 'n-16': 'False' }));
    expect(report.agents[0].daemonSets[0].rollout).toMatchObject({ nodes: 15, podsAtOnce: 3, batches: 5, seconds: 150, stuck: ['n-16'], waiting: [] });
    expect(report.findings).toEqual([]);
  });
});

describe('Argo CD: the last step of a sync is not waited on (gitops-engine sync_context.go: "successful EVEN if those objects subsequently degrades")', () => {
  const all = [{ operator: 'Exists' }];
  const wide = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 4 } };
  const gated = (image: string) => daemonSet('agent', { image, tolerations: all, strategy: wide, annotations: { [ARGOCD_SYNC_WAVE]: '2' } });
  const later = daemonSet('later', { image: 'example.com/later:1', annotations: { [ARGOCD_SYNC_WAVE]: '3' } });
  const postSync: Manifest = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'after', namespace: 'agents', annotations: { 'argocd.argoproj.io/hook': 'PostSync' } },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'example.com/check:1' }] } } },
  };
  const given = nodes({ 'n-05': 'Unknown' });

  test('a NotReady node in the last sync wave: a warning (the Application stays Progressing), exit 0', () => {
    const report = plan([gated('example.com/agent:1')], [gated('example.com/agent:2')], given);
    expect(summary(report)).toEqual([['stall', 'not-ready', 'warning', ['n-05']]]);
    expect(report.findings[0].message).toContain('the last step of the sync');
    expect(report.findings[0].message).toContain('the Application stays Progressing');
  });

  test('a later sync wave: an error (the wave stays Progressing and the next waves never sync)', () => {
    const report = plan([gated('example.com/agent:1'), later], [gated('example.com/agent:2'), later], given);
    expect(summary(report)).toEqual([['stall', 'not-ready', 'error', ['n-05']]]);
    expect(report.findings[0].message).toContain('the next waves never sync');
  });

  test('a PostSync hook after it: Argo CD waits for the Sync phase to be Healthy first: an error', () => {
    const report = plan([gated('example.com/agent:1'), postSync], [gated('example.com/agent:2'), postSync], given);
    expect(summary(report)).toEqual([['stall', 'not-ready', 'error', ['n-05']]]);
  });

  test('lastSyncStep: hooks by their phase, resources in Sync, wave 0 when not annotated', () => {
    expect(lastSyncStep(tree([gated('x')]))).toEqual({ phase: 1, wave: 2 });
    expect(lastSyncStep(tree([gated('x'), later]))).toEqual({ phase: 1, wave: 3 });
    expect(lastSyncStep(tree([gated('x'), postSync]))).toEqual({ phase: 2, wave: 0 });
    expect(lastSyncStep(tree([daemonSet('plain')]))).toEqual({ phase: 1, wave: 0 });
  });
});

describe('estimate: the same untolerated unreachable node (update.go rollingUpdate, findUpdatedPodsOnNode)', () => {
  const stalls = (options: Parameters<typeof daemonSet>[1], states: Record<string, TestNode['ready']>) =>
    unreachableStalls(analyzeCoverage(tree([daemonSet('npd', options)]).daemonSets, nodes(states)));

  test('maxUnavailable 1: the wave stalls, named; estimateRollout reports it as the wave\'s problem (exit 1)', () => {
    const found = stalls({}, { 'n-07': 'Unknown' });
    expect([...found.keys()]).toEqual(['agents/npd']);
    expect(found.get('agents/npd')).toContain('1 unreachable node (n-07) it no longer places pods on');
    const report = analyzeCoverage(tree([daemonSet('npd')]).daemonSets, nodes({ 'n-07': 'Unknown' }));
    const [agent] = estimateRollout(report.daemonSets, { stalls: found });
    expect(agent.waves[0].problem).toContain('the rolling update replaces nothing');
  });

  test('no stall: a wider budget, maxSurge (the terminating pod is not counted), or Ready=False (a live kubelet removes the pod)', () => {
    expect(stalls({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } }, { 'n-07': 'Unknown' }).size).toBe(0);
    expect(stalls({ strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } }, { 'n-07': 'Unknown' }).size).toBe(0);
    expect(stalls({}, { 'n-07': 'False' }).size).toBe(0);
  });
});
