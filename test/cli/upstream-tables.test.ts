/**
 * Upstream table tests, ported as fixtures: each `test.each` below is one upstream test function, each row names the
 * upstream case, and the row drives OUR functions (paceOf / scaledValue, analyzeCoverage and the toleration helpers,
 * planChange, lastSyncStep / inLastSyncStep) and requires the outcome upstream requires.
 *
 * Sources (read for this port):
 * - kubernetes pkg/controller/daemon/update_test.go (TestGetUnavailableNumbers, TestDaemonSetUpdates*)
 * - kubernetes pkg/controller/daemon/daemon_controller_test.go (TestNodeShouldRunDaemonPod, the taint tests)
 * - kubernetes staging/src/k8s.io/apimachinery/pkg/util/intstr/intstr_test.go (TestGetValueFromIntOrPercent)
 * - kubernetes staging/src/k8s.io/api/core/v1/toleration_test.go (TestTolerationToleratesTaint)
 * - kubernetes staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go
 *   (TestPodMatchesNodeSelectorAndAffinityTerms, TestNodeSelectorMatch's matching rows)
 * - argoproj/gitops-engine pkg/health/health_test.go (TestDaemonSetOnDeleteHealth, testdata/daemonset-ondelete.yaml)
 * - argoproj/gitops-engine pkg/sync/sync_context_test.go (TestSyncSuccessfully, TestSyncCreateInSortedOrder, TestSyncWaveHook),
 *   pkg/sync/sync_phase_test.go (TestSyncPhase*), pkg/sync/syncwaves/waves_test.go (TestWave)
 *
 * Not ported, because our model takes no input for what they vary:
 * - update_test.go TestDaemonSetUpdatesWhenNewPodIsNotReady, TestDaemonSetUpdatesSomeOldPodsNotReady,
 *   TestDaemonSetUpdatesSaveOldHealthyPods, TestDaemonSetUpdatesAllOldNotReadyPodsAndNewNotReadyPods,
 *   TestDaemonSetUpdatesAllOldPodsNotReady, TestDaemonSetUpdatesAllOldPodsNotReadyMaxSurge: they mark individual pods
 *   Ready or not (markPodsReady / setPodReadiness, minReadySeconds against a fake clock). `plan` reads manifests and a
 *   node inventory, never pods: the before-tree is taken as converged with every pod available. The node-level analogue
 *   (a NotReady / unreachable node whose pod is unavailable and holds a unit of the budget) is pinned in
 *   test/cli/plan-not-ready.test.ts.
 * - update_test.go TestGetUnavailableNumbers' `emptyNodes` column: it counts nodes without a pod in nodeToPods, a pod
 *   list we do not have; the maxSurge / maxUnavailable columns are ported.
 * - update_test.go TestControlledHistories: ControllerRevision adoption, nothing the plan models.
 * - daemon_controller_test.go TestDaemonSetRespectsTermination: a pod with a deletionTimestamp (pod state).
 * - toleration_test.go TestTolerationToleratesTaint's Gt / Lt rows: numeric toleration operators are an alpha feature
 *   (gate TaintTolerationComparisonOperators, off by default: the API server refuses a pod using them), which
 *   TolerationJson does not take; toleratesTaint reads any other operator as Equal (no match for those rows' values
 *   but one, so the plan reports a pod that stays off the node rather than one that lands).
 * - util/daemonset_util_test.go (TestIsPodUpdated, TestCreatePodTemplate, TestReplaceDaemonSetPodNodeNameNodeAffinity,
 *   TestGetTargetNodeName): pod labels and the per-node affinity the controller writes into each pod, not modelled.
 * - intstr_test.go TestGetValueFromIntOrPercent's roundUp=false row: the DaemonSet controller always rounds up
 *   (util.UnavailableCount / util.SurgeCount pass roundUp=true), so scaledValue has no round-down mode.
 * - sync_context_test.go: TestSyncValidate, TestSyncNotPermittedNamespace, TestSyncNamespaceCreatedBeforeDryRun*,
 *   TestSyncCustomResources, TestSyncDeleteSuccessfully, TestSyncCreateFailure, TestSync_ApplyOutOfSyncOnly*,
 *   TestSyncPruneFailure, TestServerResourcesRetry, TestDoNotSyncOrPruneHooks, TestDoNotPrunePruneFalse,
 *   TestSyncOptionValidate, TestSync_Replace, TestSync_ServerSideApply, TestSync_Force, TestSelectiveSyncOnly,
 *   TestNamespaceAutoCreation*, TestPruneLast, TestWaveReorderingOfPruneTasks, TestWaitForCleanUpBeforeNextWave,
 *   TestSyncWaveHookFail, the hook-deletion tests (TestBeforeHookCreation, TestRunSync*Hooks*): API calls, dry runs,
 *   prune ordering and hook bookkeeping, none of which `plan` simulates (it orders steps and asks which one is last).
 */
import { analyzeCoverage, placementsFor } from '../../src/cli/coverage/analysis';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { inLastSyncStep, lastSyncStep } from '../../src/cli/plan/argo-sync';
import { planChange } from '../../src/cli/plan/plan';
import { paceOf, scaledValue } from '../../src/rollout/pace';
import { nodeSelectorMatches, requirementParses, termsMatch } from '../../src/scheduling/node-affinity';
import { controllerAddedTolerations, tolerated, toleratesTaint, untoleratedTaints } from '../../src/scheduling/tolerations';
import { NodeJson, NodeSelectorRequirementJson, NodeSelectorTermJson, TaintJson, TolerationJson } from '../../src/scheduling/types';
import { Manifest } from '../util/manifests';
import { daemonSet, inventory, tree } from '../util/plan';

/** update_test.go newUpdateSurge / newUpdateUnavailable */
const surge = (value: number | string) => ({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: value } });
const unavailable = (value: number | string) => ({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: value } });
/** daemon_controller_test.go updateStrategies(): every case runs under each */
const UPDATE_STRATEGIES = [{ type: 'OnDelete' }, unavailable(1), surge(1)];

describe('kubernetes pkg/controller/daemon/update_test.go TestGetUnavailableNumbers (updatedDesiredNodeCounts → paceOf)', () => {
  // desiredNumberScheduled = the nodes the DaemonSet should run on (every node of the fixture); the controller scales
  // both values rounding up, and with pods to run and both 0 falls back to maxUnavailable 1.
  test.each([
    { name: 'No nodes', strategy: unavailable(0), desired: 0, maxSurge: 0, maxUnavailable: 0 },
    { name: 'Two nodes with ready pods', strategy: unavailable(1), desired: 2, maxSurge: 0, maxUnavailable: 1 },
    { name: 'Two nodes, one node without pods', strategy: unavailable(0), desired: 2, maxSurge: 0, maxUnavailable: 1 },
    { name: 'Two nodes, one node without pods, surge', strategy: surge(0), desired: 2, maxSurge: 0, maxUnavailable: 1 },
    { name: 'Two nodes with pods, MaxUnavailable in percents', strategy: unavailable('50%'), desired: 2, maxSurge: 0, maxUnavailable: 1 },
    { name: 'Two nodes with pods, MaxUnavailable in percents, surge', strategy: surge('50%'), desired: 2, maxSurge: 1, maxUnavailable: 0 },
    { name: 'Two nodes with pods, MaxUnavailable is 100%, surge', strategy: surge('100%'), desired: 2, maxSurge: 2, maxUnavailable: 0 },
    // three nodes should run the pod; the terminating pod changes nothing in the scaling: ceil(50% × 3) = 2
    { name: 'Two nodes with pods, MaxUnavailable in percents, pod terminating', strategy: unavailable('50%'), desired: 3, maxSurge: 0, maxUnavailable: 2 },
  ])('$name', ({ strategy, desired, maxSurge, maxUnavailable }) => {
    const pace = paceOf({ type: 'RollingUpdate', maxUnavailable: strategy.rollingUpdate.maxUnavailable, maxSurge: (strategy.rollingUpdate as { maxSurge?: number | string }).maxSurge }, desired);
    if (pace.type !== 'RollingUpdate') throw new Error('expected a RollingUpdate pace');
    expect({ maxSurge: pace.mode === 'surge' ? pace.batch : 0, maxUnavailable: pace.mode === 'unavailable' ? pace.batch : 0 })
      .toEqual({ maxSurge, maxUnavailable });
  });
});

describe('apimachinery pkg/util/intstr/intstr_test.go TestGetValueFromIntOrPercent (roundUp=true, as the DaemonSet controller calls it → scaledValue)', () => {
  test.each([
    { name: 'FromInt(123)', value: 123, total: 0, expected: 123 },
    { name: 'FromString("90%"), total 100', value: '90%', total: 100, expected: 90 },
    { name: 'FromString("90%"), total 95, roundUp', value: '90%', total: 95, expected: 86 },
  ])('$name', ({ value, total, expected }) => {
    expect(scaledValue(value, total, 'maxUnavailable')).toBe(expected);
  });

  test.each([
    { name: 'FromString("%")', value: '%' },
    { name: 'FromString("90#")', value: '90#' },
    { name: 'FromString("#%")', value: '#%' },
  ])('$name: an error', ({ value }) => {
    expect(() => scaledValue(value, 100, 'maxUnavailable')).toThrow(/neither an integer nor a percentage/);
  });
});

/** The per-sync counts a rollout plan implies: batches of batchSize, the last of lastBatchSize. */
function perSync(rollout: { batches: number; batchSize: number; lastBatchSize: number }): number[] {
  return Array.from({ length: rollout.batches }, (_, i) => (i === rollout.batches - 1 ? rollout.lastBatchSize : rollout.batchSize));
}

describe('kubernetes pkg/controller/daemon/update_test.go TestDaemonSetUpdates* (rollingUpdate → planChange)', () => {
  // addNodes(manager.nodeStore, 0, 5, nil): node-0 … node-4, all Ready; newDaemonSet starts OnDelete.
  const five = (taints: Record<string, TaintJson[]> = {}) => inventory(Array.from({ length: 5 }, (_, i) => ({ name: `node-${i}`, taints: taints[`node-${i}`] })));
  const onDelete = { type: 'OnDelete' };

  test.each([
    // expectSyncDaemonSets(…, 0, maxUnavailable, 0) then (maxUnavailable, 0, 0), three rounds: deletes 2, 2, 1
    { name: 'TestDaemonSetUpdatesPods', strategy: unavailable(2), mode: 'unavailable', syncs: [2, 2, 1] },
    // surge: creates maxSurge, maxSurge, 5 % maxSurge; each old pod goes once its new one is ready
    { name: 'TestDaemonSetUpdatesPodsWithMaxSurge', strategy: surge(2), mode: 'surge', syncs: [2, 2, 1] },
  ])('$name: replaced per sync as upstream expects', ({ strategy, mode, syncs }) => {
    const report = planChange(tree([daemonSet('foo', { strategy: onDelete, image: 'foo/bar' })]),
      tree([daemonSet('foo', { strategy, image: 'foo2/bar2' })]), five());
    const rollout = report.agents[0].daemonSets[0].rollout!;
    expect(rollout.pace).toMatchObject({ type: 'RollingUpdate', mode });
    expect(rollout.nodes).toBe(5);
    expect(perSync(rollout)).toEqual(syncs);
    expect(report.findings).toEqual([]);
  });

  test('TestDaemonSetUpdatesPodsNotMatchTainstWithMaxSurge: the untolerated node\'s old pod is deleted, the other 4 surge one at a time', () => {
    // node-0 tainted node-role.kubernetes.io/control-plane:NoSchedule; the update drops the toleration (maxSurge 1):
    // upstream creates 1,1,1,1 and deletes 1,1,1,1,1 (node-0's old pod with no replacement).
    const tolerations = [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }];
    const nodes = five({ 'node-0': [{ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }] });
    const report = planChange(tree([daemonSet('foo', { strategy: surge(1), tolerations, image: 'foo/bar' })]),
      tree([daemonSet('foo', { strategy: surge(1), image: 'foo/bar' })]), nodes);
    const agent = report.agents[0];
    const rollout = agent.daemonSets[0].rollout!;
    expect(agent.replaced).toEqual(['node-1', 'node-2', 'node-3', 'node-4']);
    expect(perSync(rollout)).toEqual([1, 1, 1, 1]);
    expect(agent.lost).toEqual([{ node: 'node-0', from: 'agents/foo' }]);
  });

  test('TestDaemonSetUpdatesNoTemplateChanged: a strategy change alone replaces no pod', () => {
    const report = planChange(tree([daemonSet('foo', { strategy: onDelete })]), tree([daemonSet('foo', { strategy: unavailable(3) })]), five());
    const plan = report.agents[0].daemonSets[0];
    expect(plan).toMatchObject({ change: 'changed', podTemplateChanged: false, replaced: [] });
    expect(plan.rollout).toBeUndefined();
    expect(report.findings).toEqual([]);
  });
});

describe('kubernetes staging/src/k8s.io/api/core/v1/toleration_test.go TestTolerationToleratesTaint (→ toleratesTaint, tolerated)', () => {
  test.each([
    {
      name: 'same key and effect, operator Exists, taint has no value: tolerated',
      toleration: { key: 'foo', operator: 'Exists', effect: 'NoSchedule' },
      taint: { key: 'foo', effect: 'NoSchedule' },
      expected: true,
    },
    {
      name: 'same key and effect, operator Exists, taint has some value: tolerated',
      toleration: { key: 'foo', operator: 'Exists', effect: 'NoSchedule' },
      taint: { key: 'foo', value: 'bar', effect: 'NoSchedule' },
      expected: true,
    },
    {
      name: 'same effect, empty key and operator Exists (match all taints): tolerated',
      toleration: { key: '', operator: 'Exists', effect: 'NoSchedule' },
      taint: { key: 'foo', value: 'bar', effect: 'NoSchedule' },
      expected: true,
    },
    {
      name: 'same key, effect and value, operator Equal: tolerated',
      toleration: { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' },
      taint: { key: 'foo', value: 'bar', effect: 'NoSchedule' },
      expected: true,
    },
    {
      name: 'same key and effect, different values, operator Equal: not tolerated',
      toleration: { key: 'foo', operator: 'Equal', value: 'value1', effect: 'NoSchedule' },
      taint: { key: 'foo', value: 'value2', effect: 'NoSchedule' },
      expected: false,
    },
    {
      name: 'same key and value, different effects, operator Equal: not tolerated',
      toleration: { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' },
      taint: { key: 'foo', value: 'bar', effect: 'NoExecute' },
      expected: false,
    },
  ] as { name: string; toleration: TolerationJson; taint: TaintJson; expected: boolean }[])('$name', ({ toleration, taint, expected }) => {
    expect(toleratesTaint(toleration, taint)).toBe(expected);
    expect(tolerated([toleration], taint)).toBe(expected);
  });
});

/** daemon_controller_test.go newNode(name, label): Ready, allocatable 100M / 1 CPU in TestNodeShouldRunDaemonPod */
function newNode(labels: Record<string, string>, extra: { taints?: TaintJson[]; unschedulable?: boolean; ready?: string } = {}): NodeJson {
  return {
    metadata: { name: 'test-node', labels: { 'kubernetes.io/os': 'linux', ...labels } },
    spec: { taints: extra.taints, unschedulable: extra.unschedulable },
    status: { conditions: [{ type: 'Ready', status: extra.ready ?? 'True' }], allocatable: { memory: '100M', cpu: '1' } },
  };
}

const SIMPLE_DAEMON_SET_LABEL = { name: 'simple-daemon', type: 'production' };
const SIMPLE_DAEMON_SET_LABEL_2 = { name: 'simple-daemon', type: 'test' };

/** A DaemonSet whose pod spec is the fixture's (containers get a name and an image, which the fixtures leave out). */
function fixtureDaemonSet(strategy: object, podSpec: Record<string, unknown>): Manifest {
  const base = daemonSet('simple', { strategy });
  const template = base.spec.template;
  const containers = (podSpec.containers as Manifest[] | undefined)?.map((c, i) => ({ name: `c${i}`, image: 'foo/bar', ...c })) ?? template.spec.containers;
  return { ...base, spec: { ...base.spec, template: { ...template, spec: { ...template.spec, ...podSpec, containers } } } };
}

/** NodeShouldRunDaemonPod as our coverage answers it: covered, or the placement's existingPodKeepsRunning. */
function shouldRunOn(manifest: Manifest, node: NodeJson): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const set = tree([manifest]);
  const report = analyzeCoverage(set.daemonSets, nodeFacts([node]));
  if (report.daemonSets[0].covered.includes(node.metadata.name)) return { shouldRun: true, shouldContinueRunning: true };
  const placement = placementsFor(report, set.daemonSets[0].agent, node.metadata.name)[0];
  return { shouldRun: false, shouldContinueRunning: placement.existingPodKeepsRunning };
}

/** resourcePodSpec(nodeName, memory, cpu) */
const resourcePodSpec = (nodeName: string, memory: string, cpu: string) => ({
  ...(nodeName ? { nodeName } : {}),
  containers: [{ resources: { requests: { memory, cpu } } }],
});
const affinityIn = (value: string) => ({
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'type', operator: 'In', values: [value] }] }] } } },
});

describe('kubernetes pkg/controller/daemon/daemon_controller_test.go TestNodeShouldRunDaemonPod (→ analyzeCoverage)', () => {
  // podsOnNode (another pod's host port or requests) is no input of ours, and upstream's answer ignores it too: the
  // controller leaves resources and host ports to the scheduler. Host-port clashes between DaemonSets are a coverage
  // problem of their own (host-port-clash), tested in test/cli/coverage-semantics.test.ts.
  test.each([
    { name: '[0] ShouldRunDaemonPod', podSpec: resourcePodSpec('', '50M', '0.5'), shouldRun: true, shouldContinueRunning: true },
    { name: '[1] InsufficientResourceError', podSpec: resourcePodSpec('', '200M', '0.5'), shouldRun: true, shouldContinueRunning: true },
    { name: '[2] ErrPodNotMatchHostName', podSpec: resourcePodSpec('other-node', '50M', '0.5'), shouldRun: false, shouldContinueRunning: false },
    { name: '[3] ErrPodNotFitsHostPorts (podsOnNode: host port 666)', podSpec: { containers: [{ ports: [{ containerPort: 666, hostPort: 666 }] }] }, shouldRun: true, shouldContinueRunning: true },
    { name: '[4] InsufficientResourceError (podsOnNode: 50M)', podSpec: resourcePodSpec('', '100M', '0.5'), shouldRun: true, shouldContinueRunning: true },
    { name: '[5] ShouldRunDaemonPod (podsOnNode: 50M)', podSpec: resourcePodSpec('', '50M', '0.5'), shouldRun: true, shouldContinueRunning: true },
    { name: '[6] ErrNodeSelectorNotMatch', podSpec: { nodeSelector: SIMPLE_DAEMON_SET_LABEL_2 }, shouldRun: false, shouldContinueRunning: false },
    { name: '[7] ShouldRunDaemonPod (nodeSelector)', podSpec: { nodeSelector: SIMPLE_DAEMON_SET_LABEL }, shouldRun: true, shouldContinueRunning: true },
    { name: '[8] ErrPodAffinityNotMatch', podSpec: affinityIn('test'), shouldRun: false, shouldContinueRunning: false },
    { name: '[9] ShouldRunDaemonPod (node affinity)', podSpec: affinityIn('production'), shouldRun: true, shouldContinueRunning: true },
    { name: '[10] ShouldRunDaemonPodOnUnschedulableNode', podSpec: resourcePodSpec('', '50M', '0.5'), unschedulable: true, shouldRun: true, shouldContinueRunning: true },
  ])('$name', ({ podSpec, unschedulable, shouldRun, shouldContinueRunning }) => {
    const node = newNode(SIMPLE_DAEMON_SET_LABEL, { unschedulable });
    for (const strategy of UPDATE_STRATEGIES) {
      expect(shouldRunOn(fixtureDaemonSet(strategy, podSpec), node)).toEqual({ shouldRun, shouldContinueRunning });
    }
  });
});

interface TaintCase {
  readonly name: string;
  readonly taints: TaintJson[];
  readonly tolerations?: TolerationJson[];
  readonly ready?: string;
  readonly shouldRun: boolean;
  readonly shouldContinueRunning: boolean;
  /** the fixture lists the NoExecute state taint only; our inventory reading adds the NoSchedule one a live node has */
  readonly inventoryAddsNoSchedule?: boolean;
}

describe('kubernetes pkg/controller/daemon/daemon_controller_test.go taint tests (one case each → tolerations + analyzeCoverage)', () => {
  // noScheduleTolerations / noScheduleTaints / noExecuteTaints / nodeNotReady / nodeUnreachable of the upstream file
  const noScheduleTolerations: TolerationJson[] = [{ key: 'dedicated', value: 'user1', effect: 'NoSchedule' }];
  const noScheduleTaints: TaintJson[] = [{ key: 'dedicated', value: 'user1', effect: 'NoSchedule' }];
  const noExecuteTaints: TaintJson[] = [{ key: 'dedicated', value: 'user1', effect: 'NoExecute' }];
  const nodeNotReady: TaintJson[] = [{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }];
  const nodeUnreachable: TaintJson[] = [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }];
  const pressure: TaintJson[] = ['disk-pressure', 'memory-pressure', 'pid-pressure'].map((k) => ({ key: `node.kubernetes.io/${k}`, effect: 'NoSchedule' }));

  test.each([
    // expectSyncDaemonSets(…, creates, deletes, …): a running pod kept (0 deletes) ⇔ shouldContinueRunning
    { name: 'TestNoScheduleTaintedDoesntEvicitRunningIntolerantPod', taints: noScheduleTaints, shouldRun: false, shouldContinueRunning: true },
    { name: 'TestNoExecuteTaintedDoesEvicitRunningIntolerantPod', taints: noExecuteTaints, shouldRun: false, shouldContinueRunning: false },
    { name: 'TestTaintedNodeDaemonDoesNotLaunchIntolerantPod', taints: noScheduleTaints, shouldRun: false, shouldContinueRunning: true },
    { name: 'TestTaintedNodeDaemonLaunchesToleratePod', taints: noScheduleTaints, tolerations: noScheduleTolerations, shouldRun: true, shouldContinueRunning: true },
    { name: 'TestNotReadyNodeDaemonLaunchesPod', taints: nodeNotReady, ready: 'False', shouldRun: true, shouldContinueRunning: true, inventoryAddsNoSchedule: true },
    { name: 'TestUnreachableNodeDaemonLaunchesPod', taints: nodeUnreachable, ready: 'Unknown', shouldRun: true, shouldContinueRunning: true, inventoryAddsNoSchedule: true },
    { name: 'TestNodeDaemonLaunchesToleratePod', taints: [], tolerations: noScheduleTolerations, shouldRun: true, shouldContinueRunning: true },
    { name: 'TestTaintPressureNodeDaemonLaunchesPod', taints: pressure, shouldRun: true, shouldContinueRunning: true },
  ] as TaintCase[])(
    '$name', ({ taints, tolerations, ready, shouldRun, shouldContinueRunning, inventoryAddsNoSchedule }) => {
      for (const strategy of UPDATE_STRATEGIES) {
        // The controller's own check on the fixture's node object: its taints against the pod's tolerations plus the
        // ones AddOrUpdateDaemonPodTolerations adds (the same helpers coverage uses).
        const podTolerations = [...(tolerations ?? []), ...controllerAddedTolerations(false)];
        expect(untoleratedTaints(podTolerations, taints).length === 0).toBe(shouldRun);
        const manifest = fixtureDaemonSet(strategy, tolerations ? { tolerations } : {});
        const node = newNode({}, { taints, ready });
        if (inventoryAddsNoSchedule) {
          // The fixture's node carries only the NoExecute state taint. A live node with Ready=False / Unknown also carries
          // the NoSchedule one (the node lifecycle controller's TaintNodesByCondition), which DaemonSet pods do not
          // tolerate, and coverage reads the inventory that way (nodes.ts factsOf): no new pod, a running one stays.
          // With the state taint alone, as listed in the fixture, coverage agrees with upstream.
          expect(shouldRunOn(manifest, node)).toEqual({ shouldRun: false, shouldContinueRunning: true });
          const listedOnly = newNode({}, { taints });
          delete (listedOnly.status as { conditions?: unknown }).conditions;
          expect(shouldRunOn(manifest, listedOnly)).toEqual({ shouldRun, shouldContinueRunning });
        } else {
          expect(shouldRunOn(manifest, node)).toEqual({ shouldRun, shouldContinueRunning });
        }
      }
    });
});

describe('argoproj/gitops-engine pkg/health/health_test.go TestDaemonSetOnDeleteHealth (getAppsv1DaemonSetHealth → planChange)', () => {
  // testdata/daemonset-ondelete.yaml: an OnDelete DaemonSet is Healthy whatever its pods run. Under sync-wave gating
  // the next wave therefore syncs at once: plan reports the OnDelete wave as a stall that gates nothing.
  test.each([
    { name: 'daemonset-ondelete.yaml: Healthy', strategy: { type: 'OnDelete' } },
  ])('$name', ({ strategy }) => {
    const wave = (image: string) => daemonSet('fluentd-elasticsearch', { strategy, image, annotations: { 'argocd.argoproj.io/sync-wave': '1' } });
    const later = daemonSet('later', { annotations: { 'argocd.argoproj.io/sync-wave': '2' } });
    const report = planChange(tree([wave('example.com/fluentd:1'), later]), tree([wave('example.com/fluentd:2'), later]),
      inventory([{ name: 'n-1' }, { name: 'n-2' }]));
    const onDelete = report.findings.filter((f) => f.cause === 'on-delete');
    expect(onDelete.map((f) => [f.kind, f.severity, f.daemonSets])).toEqual([['stall', 'error', ['agents/fluentd-elasticsearch']]]);
    expect(onDelete[0].message).toContain('Argo CD counts it Healthy at once');
  });
});

/** A document of a sync (upstream uses Pods; the kind does not matter to phases and waves). */
function doc(name: string, annotations: Record<string, string> = {}): Manifest {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'agents', annotations }, data: {} };
}
const PHASE_NAMES = ['PreSync', 'Sync', 'PostSync'];
const lastPhase = (manifests: Manifest[]) => {
  const last = lastSyncStep(tree(manifests));
  return last === undefined ? undefined : PHASE_NAMES[last.phase] ?? `phase ${last.phase}`;
};

describe('argoproj/gitops-engine pkg/sync/sync_phase_test.go TestSyncPhase* (syncPhases → lastSyncStep)', () => {
  // The phases a document takes part in; SyncFail runs only when a sync fails, so it is never a step of the
  // successful sync lastSyncStep describes (sync_context.go splits syncFailTasks out): no step, like Skip.
  test.each([
    { name: 'TestSyncPhaseNone', annotations: {}, phase: 'Sync' },
    { name: 'TestSyncPhasePreSync', annotations: { 'argocd.argoproj.io/hook': 'PreSync' }, phase: 'PreSync' },
    { name: 'TestSyncPhaseSync', annotations: { 'argocd.argoproj.io/hook': 'Sync' }, phase: 'Sync' },
    { name: 'TestSyncPhaseSkip', annotations: { 'argocd.argoproj.io/hook': 'Skip' }, phase: undefined },
    { name: 'TestSyncPhaseGarbage', annotations: { 'argocd.argoproj.io/hook': 'Garbage' }, phase: undefined },
    { name: 'TestSyncPhasePost', annotations: { 'argocd.argoproj.io/hook': 'PostSync' }, phase: 'PostSync' },
    { name: 'TestSyncPhaseFail (SyncFail: outside a successful sync)', annotations: { 'argocd.argoproj.io/hook': 'SyncFail' }, phase: undefined },
    { name: 'TestSyncPhaseTwoPhases', annotations: { 'argocd.argoproj.io/hook': 'PreSync,PostSync' }, phase: 'PostSync' },
    { name: 'TestSyncDuplicatedPhases', annotations: { 'argocd.argoproj.io/hook': 'PreSync,PreSync' }, phase: 'PreSync' },
    { name: 'TestSyncDuplicatedPhases (helm.sh/hook)', annotations: { 'helm.sh/hook': 'pre-install,pre-upgrade' }, phase: 'PreSync' },
  ] as { name: string; annotations: Record<string, string>; phase?: string }[])('$name', ({ annotations, phase }) => {
    expect(lastPhase([doc('my-pod', annotations)])).toBe(phase);
  });
});

describe('argoproj/gitops-engine pkg/sync/syncwaves/waves_test.go TestWave (Wave → lastSyncStep)', () => {
  test.each([
    { name: 'no annotation', annotations: {}, wave: 0 },
    { name: 'argocd.argoproj.io/sync-wave: 1', annotations: { 'argocd.argoproj.io/sync-wave': '1' }, wave: 1 },
    { name: 'helm.sh/hook-weight: 1', annotations: { 'helm.sh/hook-weight': '1' }, wave: 1 },
  ] as { name: string; annotations: Record<string, string>; wave: number }[])('$name', ({ annotations, wave }) => {
    expect(lastSyncStep(tree([doc('my-pod', annotations)]))?.wave).toBe(wave);
  });
});

describe('argoproj/gitops-engine pkg/sync/sync_context_test.go (Sync → lastSyncStep / inLastSyncStep / planChange)', () => {
  test.each([
    // wave -1 first (final false), then wave 0 (final false: a PostSync hook follows), then PostSync wave 0 (final true)
    {
      name: 'TestSyncWaveHook',
      documents: [doc('pod-1', { 'argocd.argoproj.io/sync-wave': '-1' }), doc('pod-2'), doc('pod-3', { 'argocd.argoproj.io/hook': 'PostSync' })],
      last: { phase: 2, wave: 0 },
      final: { '-1': false, '0': false },
    },
    // the same without the hook: wave 0 of the Sync phase is the final step
    {
      name: 'TestSyncWaveHook (without the PostSync hook)',
      documents: [doc('pod-1', { 'argocd.argoproj.io/sync-wave': '-1' }), doc('pod-2')],
      last: { phase: 1, wave: 0 },
      final: { '-1': false, '0': true },
    },
  ])('$name', ({ documents, last, final }) => {
    const set = tree(documents);
    expect(lastSyncStep(set)).toEqual(last);
    for (const [wave, expected] of Object.entries(final)) expect(inLastSyncStep(set, Number(wave))).toBe(expected);
  });

  // No waves, no hooks: one apply and the operation is Succeeded (OperationSucceeded after a single Sync(), before any
  // health), "EVEN if those objects subsequently degraded". A DaemonSet whose new pod never turns available on a
  // NotReady node holds nothing back: no stall error.
  test.each([
    { name: 'TestSyncSuccessfully' },
    { name: 'TestSyncCreateInSortedOrder' },
  ])('$name: a sync without waves or hooks succeeds once applied', () => {
    const all = [{ operator: 'Exists' }];
    const agent = (image: string) => daemonSet('agent', { image, tolerations: all, strategy: unavailable(2) });
    const nodes = inventory([{ name: 'n-1' }, { name: 'n-2', ready: 'Unknown' }, { name: 'n-3' }]);
    const after = tree([agent('example.com/agent:2'), doc('service')]);
    expect(inLastSyncStep(after, undefined)).toBe(true);
    const report = planChange(tree([agent('example.com/agent:1'), doc('service')]), after, nodes);
    expect(report.agents[0].daemonSets[0].rollout).toMatchObject({ stuck: ['n-2'], podsAtOnce: 1 });
    expect(report.findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});

describe('what the helm.sh/hook reading changes in plan (gitops-engine pkg/sync/hook/hook.go Types: Helm hooks when no Argo CD hook)', () => {
  // A chart rendered as it is keeps its helm.sh/hook Jobs; Argo CD runs a post-install one in PostSync, after waiting for
  // the Sync phase to be Healthy. A DaemonSet that never turns Healthy (a NotReady node it still covers) is then not the
  // last step: the sync stalls there (an error), where reading the Job as a plain Sync resource said "last step" (a warning).
  const all = [{ operator: 'Exists' }];
  const agent = (image: string) => daemonSet('agent', { image, tolerations: all, strategy: unavailable(4), annotations: { 'argocd.argoproj.io/sync-wave': '2' } });
  const hookJob = (hook: string): Manifest => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'chart-test', namespace: 'agents', annotations: { 'helm.sh/hook': hook } },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'example.com/check:1' }] } } },
  });
  const nodes = inventory([{ name: 'n-1' }, { name: 'n-2', ready: 'Unknown' }, { name: 'n-3' }]);
  test.each([
    { name: 'post-install: PostSync, after the DaemonSet', hook: 'post-install', severity: 'error' },
    { name: 'pre-install: PreSync, before it (the DaemonSet stays the last step)', hook: 'pre-install', severity: 'warning' },
    { name: 'crd-install: no hook, a Sync resource in wave 0 (the DaemonSet in wave 2 stays last)', hook: 'crd-install', severity: 'warning' },
  ])('$name', ({ hook, severity }) => {
    const report = planChange(tree([agent('example.com/agent:1'), hookJob(hook)]), tree([agent('example.com/agent:2'), hookJob(hook)]), nodes);
    expect(report.findings.map((f) => [f.kind, f.cause, f.severity, f.nodes])).toEqual([['stall', 'not-ready', severity, ['n-2']]]);
  });
});

interface AffinityCase {
  readonly name: string;
  readonly pod: { nodeSelector?: Record<string, string>; required?: NodeSelectorTermJson[] };
  readonly labels?: Record<string, string>;
  readonly nodeName?: string;
  readonly want: boolean;
}

describe('kubernetes staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go (→ nodeSelectorMatches, termsMatch)', () => {
  const expr = (key: string, operator: string, values?: string[]): NodeSelectorRequirementJson =>
    ({ key, operator, ...(values ? { values } : {}) } as NodeSelectorRequirementJson);
  const terms = (...list: NodeSelectorTermJson[]) => list;
  /** GetRequiredNodeAffinity(pod).Match: the nodeSelector, and the required terms when the pod has them (nil: every node). */
  const match = (pod: { nodeSelector?: Record<string, string>; required?: NodeSelectorTermJson[] }, labels: Record<string, string> = {}, name = '') =>
    nodeSelectorMatches(pod.nodeSelector, labels) && (pod.required === undefined || termsMatch(pod.required, { name, labels }));

  test.each([
    { name: 'no selector', pod: {}, want: true },
    { name: 'missing labels', pod: { nodeSelector: { foo: 'bar' } }, want: false },
    { name: 'same labels', pod: { nodeSelector: { foo: 'bar' } }, labels: { foo: 'bar' }, want: true },
    { name: 'node labels are superset', pod: { nodeSelector: { foo: 'bar' } }, labels: { foo: 'bar', baz: 'blah' }, want: true },
    { name: 'node labels are subset', pod: { nodeSelector: { foo: 'bar', baz: 'blah' } }, labels: { foo: 'bar' }, want: false },
    { name: 'Pod with matchExpressions using In operator that matches the existing node', pod: { required: terms({ matchExpressions: [expr('foo', 'In', ['bar', 'value2'])] }) }, labels: { foo: 'bar' }, want: true },
    { name: 'Pod with matchExpressions using Gt operator that matches the existing node', pod: { required: terms({ matchExpressions: [expr('kernel-version', 'Gt', ['0204'])] }) }, labels: { 'kernel-version': '0206' }, want: true },
    { name: 'Pod with matchExpressions using NotIn operator that matches the existing node', pod: { required: terms({ matchExpressions: [expr('mem-type', 'NotIn', ['DDR', 'DDR2'])] }) }, labels: { 'mem-type': 'DDR3' }, want: true },
    { name: 'Pod with matchExpressions using Exists operator that matches the existing node', pod: { required: terms({ matchExpressions: [expr('GPU', 'Exists')] }) }, labels: { GPU: 'NVIDIA-GRID-K1' }, want: true },
    { name: 'Pod with affinity that don\'t match node\'s labels won\'t schedule onto the node', pod: { required: terms({ matchExpressions: [expr('foo', 'In', ['value1', 'value2'])] }) }, labels: { foo: 'bar' }, want: false },
    { name: 'Pod with a nil []NodeSelectorTerm in affinity, can\'t match the node\'s labels and won\'t schedule onto the node', pod: { required: [] }, labels: { foo: 'bar' }, want: false },
    { name: 'Pod with an empty []NodeSelectorTerm in affinity, can\'t match the node\'s labels and won\'t schedule onto the node', pod: { required: [] }, labels: { foo: 'bar' }, want: false },
    { name: 'Pod with empty MatchExpressions is not a valid value will match no objects and won\'t schedule onto the node', pod: { required: terms({ matchExpressions: [] }) }, labels: { foo: 'bar' }, want: false },
    { name: 'Pod with no Affinity will schedule onto a node', pod: {}, labels: { foo: 'bar' }, want: true },
    { name: 'Pod with Affinity but nil NodeSelector will schedule onto a node', pod: {}, labels: { foo: 'bar' }, want: true },
    { name: 'Pod with multiple matchExpressions ANDed that matches the existing node', pod: { required: terms({ matchExpressions: [expr('GPU', 'Exists'), expr('GPU', 'NotIn', ['AMD', 'INTER'])] }) }, labels: { GPU: 'NVIDIA-GRID-K1' }, want: true },
    { name: 'Pod with multiple matchExpressions ANDed that doesn\'t match the existing node', pod: { required: terms({ matchExpressions: [expr('GPU', 'Exists'), expr('GPU', 'In', ['AMD', 'INTER'])] }) }, labels: { GPU: 'NVIDIA-GRID-K1' }, want: false },
    { name: 'Pod with multiple NodeSelectorTerms ORed in affinity, matches the node\'s labels and will schedule onto the node', pod: { required: terms({ matchExpressions: [expr('foo', 'In', ['bar', 'value2'])] }, { matchExpressions: [expr('diffkey', 'In', ['wrong', 'value2'])] }) }, labels: { foo: 'bar' }, want: true },
    { name: 'Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are satisfied, will schedule onto the node', pod: { nodeSelector: { foo: 'bar' }, required: terms({ matchExpressions: [expr('foo', 'Exists')] }) }, labels: { foo: 'bar' }, want: true },
    { name: 'Pod with an Affinity matches node\'s labels but the PodSpec.NodeSelector(the old thing that we are deprecating) is not satisfied, won\'t schedule onto the node', pod: { nodeSelector: { foo: 'bar' }, required: terms({ matchExpressions: [expr('foo', 'Exists')] }) }, labels: { foo: 'barrrrrr' }, want: false },
    // the bug of issue #52: read as "not equal", this NotIn matched; the term's parse fails, so it matches no node
    { name: 'Pod with an invalid value in Affinity term won\'t be scheduled onto the node', pod: { required: terms({ matchExpressions: [expr('foo', 'NotIn', ['invalid value: ___@#$%^'])] }) }, labels: { foo: 'bar' }, want: false },
    { name: 'Pod with matchFields using In operator that matches the existing node', pod: { required: terms({ matchFields: [expr('metadata.name', 'In', ['node_1'])] }) }, nodeName: 'node_1', want: true },
    { name: 'Pod with matchFields using In operator that does not match the existing node', pod: { required: terms({ matchFields: [expr('metadata.name', 'In', ['node_1'])] }) }, nodeName: 'node_2', want: false },
    { name: 'Pod with two terms: matchFields does not match, but matchExpressions matches', pod: { required: terms({ matchFields: [expr('metadata.name', 'In', ['node_1'])] }, { matchExpressions: [expr('foo', 'In', ['bar'])] }) }, nodeName: 'node_2', labels: { foo: 'bar' }, want: true },
    { name: 'Pod with one term: matchFields does not match, but matchExpressions matches', pod: { required: terms({ matchFields: [expr('metadata.name', 'In', ['node_1'])], matchExpressions: [expr('foo', 'In', ['bar'])] }) }, nodeName: 'node_2', labels: { foo: 'bar' }, want: false },
    { name: 'Pod with one term: both matchFields and matchExpressions match', pod: { required: terms({ matchFields: [expr('metadata.name', 'In', ['node_1'])], matchExpressions: [expr('foo', 'In', ['bar'])] }) }, nodeName: 'node_1', labels: { foo: 'bar' }, want: true },
    { name: 'Pod with two terms: both matchFields and matchExpressions do not match', pod: { required: terms({ matchFields: [expr('metadata.name', 'In', ['node_1'])] }, { matchExpressions: [expr('foo', 'In', ['not-match-to-bar'])] }) }, nodeName: 'node_2', labels: { foo: 'bar' }, want: false },
  ] as AffinityCase[])(
    'TestPodMatchesNodeSelectorAndAffinityTerms: $name', ({ pod, labels, nodeName, want }) => {
      expect(match(pod, labels, nodeName)).toBe(want);
    });

  // TestNodeSelectorMatch: NewNodeSelector's parse error rows are, in the scheduler's lazy selector, terms that match
  // no node while the other terms still match (the "invalid field selector and label selector" row's terms 0 and 2)
  test.each([
    { name: 'node matches field selector, but not labels', required: terms({ matchExpressions: [expr('label_1', 'In', ['label_1_val'])], matchFields: [expr('metadata.name', 'In', ['host_1'])] }), nodeName: 'host_1', labels: {}, want: false },
    { name: 'node matches field selector and label selector', required: terms({ matchExpressions: [expr('label_1', 'In', ['label_1_val'])], matchFields: [expr('metadata.name', 'In', ['host_1'])] }), nodeName: 'host_1', labels: { label_1: 'label_1_val' }, want: true },
    { name: 'second term matches', required: terms({ matchExpressions: [expr('label_1', 'In', ['label_1_val'])] }, { matchFields: [expr('metadata.name', 'In', ['host_1'])] }), nodeName: 'host_1', labels: {}, want: true },
    { name: 'invalid field selector and label selector: term 0 (two values) and term 2 (invalid key) match nothing', required: terms({ matchFields: [expr('metadata.name', 'In', ['host_1', 'host_2'])] }, { matchExpressions: [expr('invalid key', 'In', ['label_value'])] }), nodeName: 'host_1', labels: { 'invalid key': 'label_value' }, want: false },
  ] as { name: string; required: NodeSelectorTermJson[]; nodeName: string; labels: Record<string, string>; want: boolean }[])(
    'TestNodeSelectorMatch: $name', ({ required, nodeName, labels, want }) => {
      expect(termsMatch(required, { name: nodeName, labels })).toBe(want);
    });

  test('labels.NewRequirement\'s value rule (requirementParses): an In / NotIn value that is no label value fails the term\'s parse', () => {
    expect(requirementParses(expr('foo', 'NotIn', ['invalid value: ___@#$%^']))).toBe(false);
    expect(requirementParses(expr('foo', 'In', ['x'.repeat(64)]))).toBe(false);
    expect(requirementParses(expr('foo', 'NotIn', ['DDR', 'DDR2']))).toBe(true);
    expect(requirementParses(expr('kernel-version', 'Gt', ['0204']))).toBe(true);
  });
});
