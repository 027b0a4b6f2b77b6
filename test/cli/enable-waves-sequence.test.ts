/**
 * The commit that enables rollout waves on a running agent, and the relabelling after it, as one
 * sequence under `node-agents plan`: in the documented order (enable without Argo CD gating, then
 * label the nodes, then gate later upgrades) nothing wedges and no node runs two pods, and the moves the labels
 * cause (each pod restarted at once) are findings to acknowledge; enabling
 * with gating on nodes already labelled would wedge the sync, and plan says so.
 */
import { Chart, Testing } from 'cdk8s';
import { AgentRelease, AgentRollout, NodeAgentDaemonSet, Promotion, RolloutWave } from '../../src';
import { ManifestSet } from '../../src/cli/coverage/manifests';
import { planChange } from '../../src/cli/plan/plan';
import { synthManifests } from '../util/manifests';
import { inventory, TestNode, tree } from '../util/plan';

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
const V1 = 'example.com/scanner:1.0.0';
const V2 = 'example.com/scanner:2.0.0';

function stage(image: string, rollout?: AgentRollout): ManifestSet {
  const chart = new Chart(Testing.app(), 'stage');
  new NodeAgentDaemonSet(chart, 'scanner', { name: 'scanner', image, rollout });
  return tree(synthManifests(chart));
}

const UNLABELLED: TestNode[] = [{ name: 'n-1' }, { name: 'n-2' }, { name: 'n-3' }, { name: 'n-4' }];
const LABELLED: TestNode[] = [{ name: 'n-1', wave: 'canary' }, { name: 'n-2', wave: 'wave-1' }, { name: 'n-3' }, { name: 'n-4' }];

function findings(before: ManifestSet, after: ManifestSet, nodes: TestNode[]): Array<[string, string, string[]]> {
  return planChange(before, after, inventory(nodes)).findings.map((f) => [f.kind, f.cause, [...f.nodes]]);
}

test('1. the enabling commit without gating, before any label: no node changes DaemonSet, nothing to find', () => {
  const report = planChange(stage(V1), stage(V1, { waves: WAVES, promoted: Promotion.all() }), inventory(UNLABELLED));
  expect(report.findings).toEqual([]);
  expect(report.agents[0].moved).toEqual([]);
});

test('2. labels applied afterwards: the new pod waits for the old one (no two pods, no wedge), but each move restarts the pod at once: a finding to acknowledge', () => {
  // the same trees on the labelled inventory: what the controllers do once the labels land
  const before = stage(V1);
  const after = stage(V1, { waves: WAVES, promoted: Promotion.all() });
  const report = planChange(before, after, inventory(LABELLED));
  expect(report.agents[0].moved.map((m) => [m.node, m.to])).toEqual([['n-1', 'kube-system/scanner-canary'], ['n-2', 'kube-system/scanner-wave-1']]);
  expect(report.findings.map((f) => [f.kind, f.cause, f.severity, [...f.nodes]])).toEqual([
    ['held-wave-restart', 'wave-move', 'error', ['n-1']],
    ['held-wave-restart', 'wave-move', 'error', ['n-2']],
  ]);
  expect(report.findings[0].message).toContain('1 node (n-1) move from kube-system/scanner to kube-system/scanner-canary: the pods there restart at once, outside any update budget');
  // acknowledged: warnings
  const acknowledged = planChange(before, after, inventory(LABELLED), { allowRestart: ['scanner'] });
  expect(acknowledged.findings.map((f) => f.severity)).toEqual(['warning', 'warning']);
  expect(acknowledged.findings[0].message).toContain('(acknowledged by --allow-restart)');
});

test('3. later upgrades may be gated: turning gating on and promoting the canary wedges nothing', () => {
  const enabled = stage(V1, { waves: WAVES, promoted: Promotion.all() });
  const gatedCanary = stage(V2, {
    waves: WAVES,
    promoted: Promotion.through('canary'),
    argoCdSyncWaves: true,
    previous: AgentRelease.fromProps({ name: 'scanner', image: V1 }),
  });
  expect(findings(enabled, gatedCanary, LABELLED)).toEqual([]);
});

test('enabling waves with gating on nodes already labelled wedges the sync: plan names the nodes and the fix', () => {
  const report = planChange(stage(V1), stage(V1, { waves: WAVES, promoted: Promotion.all(), argoCdSyncWaves: true }), inventory(LABELLED));
  expect(report.findings.map((f) => [f.kind, f.cause, [...f.nodes]])).toEqual([
    ['stall', 'sync-wave-order', ['n-1']],
    ['stall', 'sync-wave-order', ['n-2']],
  ]);
  expect(report.findings[0].message).toContain('kube-system/scanner-canary (sync wave 1) waits on 1 node (n-1) for the pods of kube-system/scanner, which leave only once kube-system/scanner (sync wave 5) is applied');
  expect(report.findings[0].fix).toContain('without argoCdSyncWaves');
});
