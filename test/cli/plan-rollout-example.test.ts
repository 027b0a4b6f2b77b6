/**
 * node-agents plan on the committed upgrade example (examples/log-collector-rollout/dist/<stage>/) and the
 * example inventory: each stage replaces the pods of the promoted wave only, and says so.
 */
import * as fs from 'fs';
import * as path from 'path';
import { loadManifests, loadNodeList } from '../../src/cli/coverage/load';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { planChange, PlanReport } from '../../src/cli/plan/plan';
import { REPO } from '../util/paths';

const ROOT = REPO;
const DIST = 'examples/log-collector-rollout/dist';
const NODES = nodeFacts(loadNodeList('examples/inventories/mixed-cluster.json', ROOT));
/** the example inventory's wave labels: worker-a-1 canary; worker-a-4, worker-b-2, worker-c-3 wave-1 */
const CANARY = ['worker-a-1'];
const WAVE_1 = ['worker-a-4', 'worker-b-2', 'worker-c-3'];
const FLEET = ['cp-1', 'cp-2', 'cp-3', 'gpu-a-1', 'gpu-b-1', 'spot-a-1', 'spot-c-1', 'worker-a-2', 'worker-a-3', 'worker-b-1', 'worker-b-3',
  'worker-b-4', 'worker-b-5', 'worker-c-1', 'worker-c-2', 'worker-c-4'];

/** [kind, cause, severity, DaemonSets] of each finding */
function findings(report: PlanReport): Array<[string, string, string, string[]]> {
  return report.findings.map((f) => [f.kind, f.cause, f.severity, [...f.daemonSets]]);
}

/**
 * The new release's Elasticsearch output reads the Secret es-credentials, which lives outside the
 * tree: one warning (issue 35, case 8: one per missing object, not one per wave) naming every DaemonSet running the
 * new release. The fleet's NotReady node (worker-b-5)
 * keeps the fleet DaemonSet from turning Healthy, but the fleet is the last sync wave: Argo CD counts the
 * sync successful once it is applied (gitops-engine pkg/sync/sync_context.go Sync), so a warning.
 */
const SECRET = (...ds: string[]): [string, string, string, string[]] => ['missing-reference', 'Secret', 'warning', ds.map((d) => `observability/${d}`)];
const EXPECTED_FINDINGS: Record<string, Array<[string, string, string, string[]]>> = {
  '0-before': [SECRET('logs-canary')],
  '1-canary': [SECRET('logs-canary', 'logs-wave-1')],
  '2-wave-1': [['stall', 'not-ready', 'warning', ['observability/logs']], SECRET('logs', 'logs-canary', 'logs-wave-1')],
};

function plan(before: string, after: string): PlanReport {
  return planChange(loadManifests([`${DIST}/${before}`], ROOT), loadManifests([`${DIST}/${after}`], ROOT), NODES);
}

/** id → [change, replaced nodes] of every DaemonSet of the single agent */
function changes(report: PlanReport): Record<string, [string, string[]]> {
  expect(report.agents.map((a) => a.agent)).toEqual(['logs']);
  return Object.fromEntries(report.agents[0].daemonSets.map((d) => [d.id, [d.change, [...d.replaced]]]));
}

test.each([
  ['0-before', '1-canary', 'observability/logs-canary', CANARY, 1, 40],
  // 25% of 3 nodes rounds up to 1 pod at once
  ['1-canary', '2-wave-1', 'observability/logs-wave-1', WAVE_1, 3, 120],
  // 25% of 16 nodes: 4 at once; worker-b-5 is NotReady but tolerated: its new pod never turns available and holds one
  // unit for good (update.go rollingUpdate), so 3 at once for the other 15: 5 batches
  ['2-wave-1', '3-fleet', 'observability/logs', FLEET, 5, 200],
])('%s -> %s: only %s replaces pods, on its wave\'s nodes', (before, after, promoted, nodes, batches, seconds) => {
  const report = plan(before, after);
  const all = changes(report);
  for (const [id, [change, replaced]] of Object.entries(all)) {
    expect([id, change, replaced]).toEqual(id === promoted ? [id, 'changed', nodes] : [id, 'unchanged', []]);
  }
  const agent = report.agents[0];
  expect(agent.replaced).toEqual(nodes);
  // plus the canary gate's bake: Argo CD runs the gate Job (a Sync hook in sync wave 2) on every sync, and the later
  // waves wait for it; the plan reads the bake from the rendered Job's BAKE_SECONDS (600)
  expect(agent).toMatchObject({ moved: [], gained: [], lost: [], untouched: 20 - nodes.length, seconds: seconds + 600, gateSeconds: 600 });
  expect(agent.gates).toEqual([{ job: 'observability/logs-gate-canary', afterWave: 'canary', bakeSeconds: 600, deadlineSeconds: 900 }]);
  const ds = agent.daemonSets.find((d) => d.id === promoted)!;
  expect(ds).toMatchObject({ versionBefore: '4.1.1', versionAfter: '4.2.3', podTemplateChanged: true, nodesBefore: nodes.length, nodesAfter: nodes.length });
  expect(ds.rollout).toMatchObject({ batches, seconds, cycleSeconds: 40 });
  expect(findings(report)).toEqual(EXPECTED_FINDINGS[before]);
  expect(report.findings.find((f) => f.kind === 'stall')?.nodes ?? []).toEqual(before === '2-wave-1' ? ['worker-b-5'] : []);
});

test('node counts per wave: canary 1, wave-1 3, fleet 16 (Windows and Fargate nodes excluded)', () => {
  const counts = Object.fromEntries(plan('0-before', '1-canary').agents[0].daemonSets.map((d) => [d.rolloutGroup, d.nodesAfter]));
  expect(counts).toEqual({ 'canary': CANARY.length, 'wave-1': WAVE_1.length, 'fleet': FLEET.length });
});

test('3-fleet -> 4-done (removing previous): nothing happens on any node', () => {
  const report = plan('3-fleet', '4-done');
  expect(Object.values(changes(report)).map(([change]) => change)).toEqual(['unchanged', 'unchanged', 'unchanged']);
  // nothing changes for the agent: no sync of it, no gate bake counted
  expect(report.agents[0]).toMatchObject({ replaced: [], untouched: 20, seconds: 0, gateSeconds: 0 });
  expect(report.findings).toEqual([]);
});

test('a rollback (reverting 1-canary) replaces the canary again, and is no held-wave restart', () => {
  const report = plan('1-canary', '0-before');
  expect(report.agents[0].replaced).toEqual(CANARY);
  expect(report.findings).toEqual([]);
});

test('skipping stages (0-before -> 3-fleet): every wave in one commit, one after another under the sync waves', () => {
  const report = plan('0-before', '3-fleet');
  expect(report.agents[0].replaced).toEqual([...CANARY, ...WAVE_1, ...FLEET].sort());
  expect(report.agents[0]).toMatchObject({ sequential: true, seconds: 360 + 600 });
  expect(findings(report)).toEqual([['stall', 'not-ready', 'warning', ['observability/logs']], SECRET('logs', 'logs-canary', 'logs-wave-1')]);
});

describe.each(fs.readdirSync(path.join(ROOT, 'examples/inventories')).filter((f) => f.endsWith('.json')))('on examples/inventories/%s', (file) => {
  const nodes = nodeFacts(loadNodeList(`examples/inventories/${file}`, ROOT));
  // counted from the inventory itself: Linux, non-virtual nodes by their wave label (the fleet: any other)
  const linux = nodes.filter((n) => n.platform === 'linux');
  const expected: Record<string, number> = {
    'canary': linux.filter((n) => n.labels['node-agents.cdk8s.io/rollout-wave'] === 'canary').length,
    'wave-1': linux.filter((n) => n.labels['node-agents.cdk8s.io/rollout-wave'] === 'wave-1').length,
  };
  expected.fleet = linux.length - expected.canary - expected['wave-1'];

  test.each([['0-before', '1-canary', 'canary'], ['1-canary', '2-wave-1', 'wave-1'], ['2-wave-1', '3-fleet', 'fleet']])('%s -> %s replaces the %s nodes only', (before, after, group) => {
    const report = planChange(loadManifests([`${DIST}/${before}`], ROOT), loadManifests([`${DIST}/${after}`], ROOT), nodes);
    const agent = report.agents[0];
    expect(agent.daemonSets.map((d) => [d.rolloutGroup, d.replaced.length])).toEqual(
      ['canary', 'wave-1', 'fleet'].map((g) => [g, g === group ? expected[g] : 0]));
    expect(agent.replaced).toHaveLength(expected[group]);
    expect(agent.untouched).toBe(linux.length - expected[group]);
  });
});
