/**
 * node-agents plan over the committed migration (examples/migrate-from-helm/dist/<stage>/) on the example
 * inventory: adopting the charts' DaemonSets replaces each node's pod in place (the DaemonSet controller's
 * rolling update of one object, pkg/controller/daemon/update.go rollingUpdate), no node loses the agent or runs
 * two; the library's collector added beside the chart's DaemonSet instead is reported as two per node.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { buildStage, STAGES } from '../../examples/migrate-from-helm/main';
import { loadManifests, loadNodeList } from '../../src/cli/coverage/load';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { planChange, PlanReport } from '../../src/cli/plan/plan';
import { runCli } from '../../src/cli/run';
import { REPO } from '../util/paths';

const ROOT = REPO;
const DIST = 'examples/migrate-from-helm/dist';
const NODES = nodeFacts(loadNodeList('examples/inventories/mixed-cluster.json', ROOT));

function plan(before: string[], after: string[]): PlanReport {
  return planChange(loadManifests(before, ROOT), loadManifests(after, ROOT), NODES);
}

describe('the adoption stages', () => {
  test.each([
    ['1-chart', '2-adopt'],
    ['2-adopt', '3-complete'],
  ])('%s -> %s: no findings, no node loses an agent, every DaemonSet kept', (before, after) => {
    const report = plan([`${DIST}/${before}`], [`${DIST}/${after}`]);
    expect(report.findings).toEqual([]);
    expect(report.agents.map((a) => a.agent)).toEqual(['fluent-bit', 'prometheus-node-exporter']);
    for (const agent of report.agents) {
      expect(agent.lost).toEqual([]);
      expect(agent.daemonSets.filter((d) => d.change === 'deleted')).toEqual([]);
    }
  });

  test('1-chart -> 2-adopt: every node that ran the chart\'s pod has it replaced in place by the same DaemonSet', () => {
    const before = loadManifests([`${DIST}/1-chart`], ROOT);
    const report = plan([`${DIST}/1-chart`], [`${DIST}/2-adopt`]);
    for (const agent of report.agents) {
      expect(agent.moved).toEqual([]);
      expect(agent.daemonSets.map((d) => [d.id, d.change, d.podTemplateChanged])).toEqual([[before.daemonSets.find((d) => d.agent === agent.agent)!.id, 'changed', true]]);
      const ds = agent.daemonSets[0];
      // nodes the chart covered: all replaced; the rest (the library tolerates more taints) gain the agent
      expect(ds.replaced.length).toBe(ds.nodesBefore);
      expect(agent.replaced.length + agent.gained.length).toBe(ds.nodesAfter);
      expect((ds.rollout?.pace as { mode?: string }).mode).not.toBe('surge');
    }
  });

  test('3-complete -> 4-waves: the canary node moves to its wave DaemonSet, held back by the anti-affinity (no two pods); '
    + 'its pod restarts at once, a held-wave-restart to acknowledge; no node loses an agent', () => {
    const report = plan([`${DIST}/3-complete`], [`${DIST}/4-waves`]);
    expect(report.findings.map((f) => [f.kind, f.cause, f.agent, [...f.nodes]])).toEqual([
      ['held-wave-restart', 'wave-move', 'fluent-bit', ['worker-a-1']],
      ['held-wave-restart', 'wave-move', 'prometheus-node-exporter', ['worker-a-1']],
    ]);
    for (const agent of report.agents) {
      expect(agent.lost).toEqual([]);
      expect(agent.daemonSets.filter((d) => d.change === 'deleted')).toEqual([]);
    }
    for (const agent of report.agents) {
      expect(agent.moved.map((m) => m.node)).toEqual(['worker-a-1']);
      expect(agent.daemonSets.map((d) => d.id)).toContain(`${agent.agent === 'fluent-bit' ? 'logging/fluent-bit' : 'monitoring/prometheus-node-exporter'}`);
    }
  });

  test('adopting and enabling waves in one step (1-chart -> 4-waves): the canary pod waits for the chart\'s pod (anti-affinity on the identity labels), no two pods', () => {
    const report = plan([`${DIST}/1-chart`], [`${DIST}/4-waves`]);
    expect(report.findings.filter((f) => f.kind === 'two-pods-per-node')).toEqual([]);
    for (const agent of report.agents) {
      expect(agent.lost).toEqual([]);
      expect(agent.moved.map((m) => m.node)).toEqual(['worker-a-1']);
    }
  });

  test('node-agents plan --stages over the four stages exits 0 once the canary\'s move is acknowledged (1 without)', () => {
    const stages = (...extra: string[]) => {
      let out = '';
      const code = runCli(['plan', '--nodes', '../inventories/mixed-cluster.json', '--stages', 'dist/1-chart', 'dist/2-adopt', 'dist/3-complete', 'dist/4-waves', ...extra], {
        stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (out += t) }, cwd: path.join(ROOT, 'examples', 'migrate-from-helm'),
      });
      return { code, out };
    };
    const acknowledged = stages('--allow-restart', 'fluent-bit', '--allow-restart', 'prometheus-node-exporter');
    expect(acknowledged.out).not.toMatch(/two-pods-per-node|lose the agent/);
    expect(acknowledged.code).toBe(0);
    expect(stages().code).toBe(1);
  });
});

describe('the chart\'s DaemonSet left in the after-tree', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'migrate-'));
    // the library's agents under their own names (no adopt), beside the chart's objects
    buildStage(STAGES[0], dir, { adopt: false }).synth();
    fs.copyFileSync(path.join(ROOT, DIST, '1-chart', 'fluent-bit.yaml'), path.join(dir, 'chart-fluent-bit.yaml'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('two collectors on every node both cover: two-pods-per-node (same-program), an error', () => {
    const report = planChange(loadManifests([`${DIST}/1-chart`], ROOT), loadManifests([path.join(dir, 'logging.k8s.yaml'), path.join(dir, 'chart-fluent-bit.yaml')], '/'), NODES);
    const two = report.findings.filter((f) => f.kind === 'two-pods-per-node');
    expect(two.map((f) => [f.cause, f.severity, [...f.daemonSets].sort()])).toEqual([['same-program', 'error', ['logging/fluent-bit', 'logging/log-collector']]]);
    // every Ready node both select (the chart's fluent-bit tolerates no taint: the workers)
    expect(two[0].nodes).toEqual(expect.arrayContaining(['worker-a-1', 'worker-b-1', 'worker-c-1']));
    expect(two[0].nodes.every((n) => n.startsWith('worker-'))).toBe(true);
    expect(two[0].fix).toMatch(/adopt/);
    // the chart's DaemonSet carries Helm's labels: the fix names the adoption with the release's name
    expect(two[0].fix).toContain('adopt the chart\'s DaemonSet logging/fluent-bit (Helm release fluent-bit, chart fluent-bit-0.58.1) instead of adding a second one: '
      + 'in log-collector, adopt: AgentAdoption.fluentBitChart({ namespace: \'logging\', releaseName: \'fluent-bit\' })');
  });

  test('the same tree with the chart\'s DaemonSet removed has no such finding', () => {
    const report = planChange(loadManifests([`${DIST}/1-chart`], ROOT), loadManifests([path.join(dir, 'logging.k8s.yaml')], '/'), NODES);
    expect(report.findings.filter((f) => f.kind === 'two-pods-per-node')).toEqual([]);
  });
});
