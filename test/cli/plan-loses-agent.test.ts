/**
 * node-agents plan: nodes losing an agent that still exists are a finding (issue: "4 replaced, 79 lose it" with
 * "Safe: no findings"). The DaemonSet controller deletes the pods of a deleted DaemonSet (garbage collection of its
 * pods) and of a node a DaemonSet no longer covers (kubernetes pkg/controller/daemon/daemon_controller.go
 * podsShouldBeOnNode: !shouldContinueRunning deletes the pod) at once, outside any update budget.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { AgentRelease, AgentRollout, NodeAgentDaemonSet, Promotion, RolloutWave } from '../../src';
import { NARROWING_ANNOTATION, planChange, PlanReport, REMOVAL_ANNOTATION } from '../../src/cli/plan/plan';
import { runCli } from '../../src/cli/run';
import { Manifest, synthManifests } from '../util/manifests';
import { daemonSet, inventory, rolloutStage, tree } from '../util/plan';

const NODES = inventory([
  { name: 'n-1', wave: 'canary' },
  { name: 'n-2', wave: 'wave-1' },
  { name: 'n-3', wave: 'wave-1' },
  { name: 'n-4' },
  { name: 'n-5' },
  { name: 'n-6' },
]);
const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];

function scanner(image: string, rollout?: AgentRollout): Manifest[] {
  const chart = new Chart(Testing.app(), 'tree');
  new NodeAgentDaemonSet(chart, 'scanner', { name: 'scanner', image, rollout });
  return synthManifests(chart);
}

function plan(before: Manifest[], after: Manifest[], allowNarrowing?: string[]): PlanReport {
  return planChange(tree(before), tree(after), NODES, { allowNarrowing });
}

const summary = (report: PlanReport) => report.findings.map((f) => [f.kind, f.cause, f.severity, [...f.nodes]]);

describe('rollout.previous dropped mid-upgrade', () => {
  const previous = AgentRelease.fromProps({ name: 'scanner', image: 'example.com/scanner:1' });
  const midUpgrade = () => scanner('example.com/scanner:2', rolloutStage(WAVES, Promotion.through('canary'), previous));
  const dropped = () => scanner('example.com/scanner:2', rolloutStage(WAVES, Promotion.through('canary'), undefined));

  test('the held waves\' DaemonSets are deleted: their nodes lose the agent, an error per DaemonSet', () => {
    const report = plan(midUpgrade(), dropped());
    expect(report.agents[0].lost.map((l) => l.node)).toEqual(['n-2', 'n-3', 'n-4', 'n-5', 'n-6']);
    expect(summary(report)).toEqual([
      ['loses-agent', 'deleted', 'error', ['n-2', 'n-3']],
      ['loses-agent', 'deleted', 'error', ['n-4', 'n-5', 'n-6']],
    ]);
    expect(report.findings[1].message).toContain('lose scanner, which stays on kube-system/scanner-canary: kube-system/scanner is deleted');
    expect(report.findings[0].fix).toContain('--allow-narrowing scanner');
  });

  test('acknowledged with allowNarrowing: warnings saying so', () => {
    const report = plan(midUpgrade(), dropped(), ['scanner']);
    expect(report.findings.map((f) => f.severity)).toEqual(['warning', 'warning']);
    expect(report.findings[0].message).toContain('(acknowledged by --allow-narrowing)');
  });
});

describe('a narrowed DaemonSet', () => {
  const narrowed = (annotations?: Record<string, string>) => [
    daemonSet('agent', { image: 'example.com/agent:1', nodeSelector: { 'kubernetes.io/os': 'linux', ['node-agents.cdk8s.io/rollout-wave']: 'canary' }, annotations }),
  ];

  test('a selector that drops nodes: an error naming them', () => {
    const report = plan([daemonSet('agent')], narrowed());
    expect(summary(report)).toEqual([['loses-agent', 'narrowed', 'error', ['n-2', 'n-3', 'n-4', 'n-5', 'n-6']]]);
    expect(report.findings[0].message).toContain('agents/agent no longer covers them');
  });

  test('acknowledged by the annotation on the after-tree\'s DaemonSet: a warning', () => {
    const report = plan([daemonSet('agent')], narrowed({ [NARROWING_ANNOTATION]: 'true' }));
    expect(summary(report)).toEqual([['loses-agent', 'narrowed', 'warning', ['n-2', 'n-3', 'n-4', 'n-5', 'n-6']]]);
    expect(report.findings[0].message).toContain(`(acknowledged by the ${NARROWING_ANNOTATION} annotation)`);
  });

  // issue 35 case 2: a commit deleting the log collector listed "2 lose it" then "No findings: safe to apply"
  test('removing the agent altogether is a finding: every node loses it', () => {
    const other = daemonSet('other');
    const report = plan([daemonSet('agent'), other], [other]);
    expect(report.agents.find((a) => a.agent === 'agent')!.lost).toHaveLength(6);
    expect(summary(report)).toEqual([['loses-agent', 'removed', 'error', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6']]]);
    expect(report.findings[0].message).toContain('lose agent, which the change removes altogether (agents/agent deleted)');
    expect(report.findings[0].fix).toContain(`plan --allow-narrowing agent, or annotate an object the change keeps (a Namespace, a ConfigMap) ${REMOVAL_ANNOTATION}: "agent"`);
  });
  test('a removal is acknowledged by --allow-narrowing or by the after-tree\'s removed-agents annotation on any object (then a warning)', () => {
    const other = daemonSet('other');
    expect(summary(plan([daemonSet('agent'), other], [other], ['agent']))).toEqual([['loses-agent', 'removed', 'warning', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6']]]);
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'agents', annotations: { [REMOVAL_ANNOTATION]: 'exporter, agent' } } };
    const acknowledged = plan([daemonSet('agent'), other], [other, namespace]);
    expect(summary(acknowledged)).toEqual([['loses-agent', 'removed', 'warning', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6']]]);
    expect(acknowledged.findings[0].message).toContain(`(acknowledged by the ${REMOVAL_ANNOTATION} annotation)`);
    // another agent's name does not acknowledge this one
    const wrong = { ...namespace, metadata: { name: 'agents', annotations: { [REMOVAL_ANNOTATION]: 'agents' } } };
    expect(summary(plan([daemonSet('agent'), other], [other, wrong]))[0][2]).toBe('error');
  });
});

describe('plan --allow-narrowing', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-narrow-'));
    const write = (name: string, manifests: Manifest[]) => fs.writeFileSync(path.join(dir, name), manifests.map((m) => JSON.stringify(m)).join('\n---\n'));
    write('before.yaml', [daemonSet('agent')]);
    write('after.yaml', [daemonSet('agent', { nodeSelector: { 'kubernetes.io/os': 'linux', 'node-agents.cdk8s.io/rollout-wave': 'canary' } })]);
    fs.writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify({
      kind: 'List',
      items: NODES.map((n) => ({ kind: 'Node', metadata: { name: n.name, labels: n.labels }, status: { conditions: [{ type: 'Ready', status: 'True' }] } })),
    }));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const run = (...extra: string[]) => {
    let stdout = '';
    const code = runCli(['plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'after.yaml', ...extra], {
      stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined }, cwd: dir,
    });
    return { code, stdout };
  };

  test('without it: exit 1, the loses-agent error; with it: exit 0, a warning', () => {
    const without = run();
    expect(without.code).toBe(1);
    expect(without.stdout).toContain('! [loses-agent narrowed] 5 nodes (n-2, n-3, n-4, n-5, n-6) lose agent');
    const acknowledged = run('--allow-narrowing', 'agent');
    expect(acknowledged.code).toBe(0);
    expect(acknowledged.stdout).toContain('~ [loses-agent narrowed]');
  });

  test('an agent removed: exit 1 in text, JSON and markdown, never "safe to apply"; acknowledged: exit 0', () => {
    fs.writeFileSync(path.join(dir, 'removed.yaml'), JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kept', namespace: 'agents' }, data: {} }));
    const removed = (...extra: string[]) => {
      let stdout = '';
      const code = runCli(['plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'removed.yaml', ...extra], {
        stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined }, cwd: dir,
      });
      return { code, stdout };
    };
    const text = removed();
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('! [loses-agent removed] 6 nodes (n-1, n-2, n-3, n-4, n-5, … 1 more) lose agent');
    expect(text.stdout).not.toContain('safe to apply');
    const json = removed('--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).steps[0].findings.map((f: any) => [f.kind, f.cause, f.severity])).toEqual([['loses-agent', 'removed', 'error']]);
    const markdown = removed('--markdown');
    expect(markdown.code).toBe(1);
    expect(markdown.stdout).not.toContain('**Safe**');
    expect(removed('--allow-narrowing', 'agent').code).toBe(0);
  });
});
