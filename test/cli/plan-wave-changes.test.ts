/**
 * Waves reordered or dropped while some are held (issue: verdicts round 3, case 1): every held node's pod restarted
 * and the new version reached the bigger wave first, and plan said "No findings: safe to apply". A DaemonSet whose
 * pod template changes gets new pods (kubernetes pkg/controller/daemon/update.go rollingUpdate replaces every pod
 * whose controller-revision-hash is not the new revision's); a node leaving a DaemonSet loses its pod at once
 * (daemon_controller.go podsShouldBeOnNode), outside the update budget.
 */
import { Chart, Testing } from 'cdk8s';
import { AgentRelease, AgentRollout, NodeAgentDaemonSet, Promotion, RolloutWave } from '../../src';
import { planChange, PlanReport, RESTART_ANNOTATION } from '../../src/cli/plan/plan';
import { planText } from '../../src/cli/plan-command';
import { Manifest, synthManifests } from '../util/manifests';
import { inventory, rolloutStage, tree } from '../util/plan';

const NODES = inventory([
  { name: 'n-1', wave: 'canary' }, { name: 'n-2', wave: 'wave-1' }, { name: 'n-3', wave: 'wave-1' }, { name: 'n-4' }, { name: 'n-5' },
]);
const V1 = 'example.com/scanner:4.2.3';
const V2 = 'example.com/scanner:5.1.1';
const previous = AgentRelease.fromProps({ name: 'scanner', image: V1 });
const wave = (name: string) => RolloutWave.labelled(name);

function scanner(image: string, rollout: AgentRollout): Manifest[] {
  const chart = new Chart(Testing.app(), 'tree');
  new NodeAgentDaemonSet(chart, 'scanner', { name: 'scanner', image, rollout });
  return synthManifests(chart);
}
const allOnV1 = () => scanner(V1, rolloutStage([wave('canary'), wave('wave-1')], Promotion.all(), undefined));
const summary = (report: PlanReport) => report.findings.map((f) => [f.kind, f.cause, f.severity, [...f.nodes]]);
const plan = (before: Manifest[], after: Manifest[], allowRestart?: string[]) => planChange(tree(before), tree(after), NODES, { allowRestart });

test('waves reordered ([wave-1, canary]) and the first promoted: the held groups restart on the release they run, and the new release skips the canary', () => {
  const report = plan(allOnV1(), scanner(V2, rolloutStage([wave('wave-1'), wave('canary')], Promotion.through('wave-1'), previous)));
  expect(summary(report)).toEqual([
    ['held-wave-restart', 'wave-order', 'error', ['n-2', 'n-3']],
    ['held-wave-restart', 'wave-layout', 'error', ['n-4', 'n-5']],
    ['held-wave-restart', 'wave-layout', 'error', ['n-1']],
  ]);
  expect(report.findings[0].message).toBe('a new release reaches kube-system/scanner-wave-1 (2 nodes (n-2, n-3)) first: kube-system/scanner-canary led the rollout before, and the waves\' order changed');
  expect(report.findings[2].message).toContain('kube-system/scanner-canary restarts its pods on 1 node (n-1) with the release it runs already');
});

test('a wave dropped ([canary] only): its nodes move to the fleet (each pod restarted at once), the fleet restarts on its release', () => {
  const report = plan(allOnV1(), scanner(V2, rolloutStage([wave('canary')], Promotion.through('canary'), previous)));
  expect(summary(report)).toEqual([
    ['held-wave-restart', 'wave-move', 'error', ['n-2', 'n-3']],
    ['held-wave-restart', 'wave-layout', 'error', ['n-4', 'n-5']],
  ]);
});

test('acknowledged with --allow-restart or the restart-acknowledged annotation on a DaemonSet of the agent: warnings', () => {
  const reordered = scanner(V2, rolloutStage([wave('wave-1'), wave('canary')], Promotion.through('wave-1'), previous));
  expect(plan(allOnV1(), reordered, ['scanner']).findings.map((f) => f.severity)).toEqual(['warning', 'warning', 'warning']);
  const annotated = reordered.map((m) => (m.kind === 'DaemonSet' && m.metadata.name === 'scanner'
    ? { ...m, metadata: { ...m.metadata, annotations: { ...m.metadata.annotations, [RESTART_ANNOTATION]: 'true' } } } : m));
  const report = plan(allOnV1(), annotated);
  expect(report.findings.map((f) => f.severity)).toEqual(['warning', 'warning', 'warning']);
  expect(report.findings[0].message).toContain(`(acknowledged by the ${RESTART_ANNOTATION} annotation)`);
});

test('the same waves, promoted one further, or a new release entering at the canary: no restart finding', () => {
  const midway = scanner(V2, rolloutStage([wave('canary'), wave('wave-1')], Promotion.through('canary'), previous));
  expect(summary(plan(allOnV1(), midway))).toEqual([]);
  const further = scanner(V2, rolloutStage([wave('canary'), wave('wave-1')], Promotion.through('wave-1'), previous));
  expect(summary(plan(midway, further))).toEqual([]);
});

describe('a commit that promotes every wave at once (previous set, Promotion.all())', () => {
  const PROM = 'http://prometheus-operated.monitoring.svc:9090';
  const waves = [wave('canary'), wave('wave-1')];

  test('nothing orders the waves: an error naming the groups, unless acknowledged', () => {
    const all = scanner(V2, rolloutStage(waves, Promotion.all(), previous));
    const report = plan(allOnV1(), all);
    expect(summary(report)).toEqual([['held-wave-restart', 'all-waves-at-once', 'error', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5']]]);
    expect(report.findings[0].message).toContain('a new release reaches 3 rollout groups at once (canary, wave-1, fleet');
    expect(report.findings[0].message).toContain('nothing orders them (no Argo CD sync waves), so the DaemonSets roll in parallel and the canary protects nothing');
    expect(report.findings[0].fix).toContain('Promotion.through(WAVE)');
    expect(plan(allOnV1(), all, ['scanner']).findings.map((f) => f.severity)).toEqual(['warning']);
  });

  test('Argo CD sync waves without gates: a warning; with gates: no finding, and the plan says the waves are gated', () => {
    const synced = (gates: boolean): AgentRollout => ({
      ...rolloutStage(waves, Promotion.all(), previous),
      argoCdSyncWaves: true,
      ...(gates ? { gates: [{ afterWave: 'canary', prometheusUrl: PROM }] } : {}),
    });
    const before = scanner(V1, { ...rolloutStage(waves, Promotion.all(), undefined), argoCdSyncWaves: true });
    expect(summary(plan(before, scanner(V2, synced(false))))).toEqual([['held-wave-restart', 'all-waves-at-once', 'warning', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5']]]);
    const gated = plan(before, scanner(V2, synced(true)));
    expect(summary(gated)).toEqual([]);
    expect(gated.agents[0].sequential).toBe(true);
    const out = planText([{ before: 'main', after: 'pr', report: gated }]);
    expect(out).toContain('waves one after the other (Argo CD sync waves), gated after canary: a failed gate stops the later waves');
  });
});
