/**
 * The rolling update `estimate` and `plan` share (src/cli/estimate/rollout-model.ts), against the DaemonSet controller:
 * kubernetes pkg/controller/daemon/update.go rollingUpdate. An old pod that is not available is replaced at once,
 * outside the budget (allowedReplacementPods, kubernetes#111073), and since kubernetes#123233 (1.31; 1.28-1.30 patch
 * releases) it counts in numUnavailable in that same sync. The table rows are ported from
 * pkg/controller/daemon/update_test.go: each names the test it comes from and what that test's syncs expect.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as fc from 'fast-check';
import { controlPlaneAtLeast } from '../../src/cli/capacity/pod-level';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { estimateRollout } from '../../src/cli/estimate/estimate';
import { batchCounts, UpdateCounts } from '../../src/cli/estimate/rollout-model';
import { planChange } from '../../src/cli/plan/plan';
import { runCli } from '../../src/cli/run';
import { NodeJson } from '../../src/scheduling/types';
import { Manifest } from '../util/manifests';
import { daemonSet, inventory, TestNode, tree } from '../util/plan';

/** The counts of a rollout whose nodes are all Ready, from a converged DaemonSet. */
const counts = (c: Partial<UpdateCounts> & { budget: number; paced: number }): UpdateCounts =>
  ({ surge: false, outside: 0, stuck: 0, countedAtFirst: (c.outside ?? 0) + (c.stuck ?? 0), ...c });

describe('pkg/controller/daemon/update_test.go, ported (update.go rollingUpdate)', () => {
  test.each([
    // [upstream test, counts, first batch, replaced at once after it, batches, last batch]
    ['TestDaemonSetUpdatesPods: 5 nodes, maxUnavailable 2: syncs delete 2, 2, then 1',
      counts({ budget: 2, paced: 5 }), 2, 2, 3, 1],
    ['TestDaemonSetUpdatesAllOldPodsNotReady: 5 nodes, maxUnavailable 3, every old pod unready: all 5 deleted in the first sync',
      counts({ budget: 3, paced: 0, outside: 5 }), 5, 0, 1, 5],
    ['TestDaemonSetUpdatesSomeOldPodsNotReady: 5 nodes, maxUnavailable 2, 2 old pods unready: those 2 go, the 3 available stay untouched in that sync',
      counts({ budget: 2, paced: 3, outside: 2 }), 2, 2, 3, 1],
    ['TestDaemonSetUpdatesSaveOldHealthyPods: 20 nodes, 10 unready, maxUnavailable 1: only the 10 unavailable are replaced first',
      counts({ budget: 1, paced: 10, outside: 10 }), 10, 1, 11, 1],
    ['TestDaemonSetUpdatesSaveOldHealthyPods: 20 nodes, 10 unready, maxUnavailable 9: only the 10 unavailable are replaced first',
      counts({ budget: 9, paced: 10, outside: 10 }), 10, 9, 3, 1],
    ['TestDaemonSetUpdatesSaveOldHealthyPods: 20 nodes, 10 unready, maxUnavailable 11: 11 deleted, 9 Ready pods left',
      counts({ budget: 11, paced: 10, outside: 10 }), 11, 10, 2, 9],
    ['TestDaemonSetUpdatesPodsWithMaxSurge: 5 nodes, maxSurge 2: syncs create 2, 2, then 1',
      counts({ budget: 2, paced: 5, surge: true }), 2, 2, 3, 1],
    ['TestDaemonSetUpdatesAllOldPodsNotReadyMaxSurge: 5 nodes, maxSurge 3, every old pod unready: 5 new pods created in the first sync',
      counts({ budget: 3, paced: 0, outside: 5, surge: true }), 5, 0, 1, 5],
  ] as const)('%s', (_name, given, first, atOnce, batches, last) => {
    const shape = batchCounts(given);
    const got = [shape.firstBatchSize, shape.podsAtOnce, shape.batches, shape.lastBatchSize, shape.stalled];
    expect(got).toEqual([first, atOnce, batches, last, false]);
  });

  test('TestDaemonSetUpdatesSaveOldHealthyPods: the 10 unready first, then 0 of the 10 Ready ones in that sync (firstCandidates), whatever maxUnavailable below 10', () => {
    for (const budget of [1, 5, 9]) expect(batchCounts(counts({ budget, paced: 10, outside: 10 })).firstCandidates).toBe(0);
    expect(batchCounts(counts({ budget: 11, paced: 10, outside: 10 })).firstCandidates).toBe(1);
  });

  test('TestDaemonSetUpdatesAllOldNotReadyPodsAndNewNotReadyPods: 88 unavailable new pods hold 88 units: the 2 unready old pods go, the 10 available stay', () => {
    // the 88 new pods that never turn available hold a unit each, as the model's stuck nodes do
    const shape = batchCounts(counts({ budget: 10, paced: 10, outside: 2, stuck: 88 }));
    expect([shape.firstBatchSize, shape.firstCandidates, shape.stalled]).toEqual([2, 0, true]);
  });

  test('before kubernetes#123233 the replacements outside the budget did not count in that sync: the model names the difference', () => {
    expect(batchCounts(counts({ budget: 2, paced: 3, outside: 2 })).olderControllerExtra).toBe(2);
    expect(batchCounts(counts({ budget: 2, paced: 3, outside: 2, surge: true })).olderControllerExtra).toBe(0);
    expect(batchCounts(counts({ budget: 2, paced: 5 })).olderControllerExtra).toBe(0);
  });
});

/** n-01 … n-NN, Ready unless `states` says otherwise. */
function nodes(count: number, states: Record<string, TestNode['ready']> = {}) {
  return inventory(Array.from({ length: count }, (_, i) => {
    const name = `n-${String(i + 1).padStart(2, '0')}`;
    return { name, ready: states[name] ?? 'True' };
  }));
}

const all = [{ operator: 'Exists' }];
const bumped = (strategy: Manifest, image: string) => daemonSet('agent', { tolerations: all, strategy, image });

describe('the issue\'s wave: 30 old pods not available replace at once, whatever maxUnavailable says', () => {
  const strategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } };
  const given = nodes(40);
  const unready = new Set(given.slice(0, 30).map((n) => n.name));
  const unavailable = new Map([['agents/agent', unready]]);

  test('plan: a first batch of 30 outside the budget, then 10 batches of 1; the note says why', () => {
    const report = planChange(tree([bumped(strategy, 'example.com/agent:1')]), tree([bumped(strategy, 'example.com/agent:2')]), given, { unavailable });
    const rollout = report.agents[0].daemonSets[0].rollout!;
    expect(rollout).toMatchObject({ nodes: 10, firstBatchSize: 30, podsAtOnce: 1, batches: 11, lastBatchSize: 1, seconds: 11 * 30 });
    expect(rollout.outsideBudget).toHaveLength(30);
    expect(rollout.note).toContain('30 old pods not available (n-01, n-02, n-03, n-04, n-05, … 25 more) are replaced at once in the first batch, outside the budget of 1');
  });

  test('estimate: the same batches and time for the same DaemonSet', () => {
    const report = analyzeCoverage(tree([bumped(strategy, 'example.com/agent:2')]).daemonSets, given);
    const [agent] = estimateRollout(report.daemonSets, { report, unavailable });
    expect(agent.waves[0]).toMatchObject({ batches: 11, seconds: 11 * 30, rollout: { firstBatchSize: 30, podsAtOnce: 1 } });
  });

  test('without the pods, every pod on a Ready node is taken as available: 40 batches of 1', () => {
    const report = planChange(tree([bumped(strategy, 'example.com/agent:1')]), tree([bumped(strategy, 'example.com/agent:2')]), given);
    expect(report.agents[0].daemonSets[0].rollout).toMatchObject({ firstBatchSize: 1, batches: 40, seconds: 40 * 30 });
  });
});

describe('what an older controller does in the first batch is named unless the control plane is known to be 1.31 or later', () => {
  const strategy = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } };
  const given = nodes(6);
  const unavailable = new Map([['agents/agent', new Set(['n-01'])]]);
  const noteOf = (replacementsCounted?: boolean) => planChange(tree([bumped(strategy, 'example.com/agent:1')]), tree([bumped(strategy, 'example.com/agent:2')]), given,
    { unavailable, replacementsCounted }).agents[0].daemonSets[0].rollout!.note ?? '';

  test('unknown version: the note says what a controller without kubernetes#123233 replaces more', () => {
    expect(noteOf()).toContain('assumed a controller of Kubernetes 1.31 or later (1.28-1.30: a patch release with kubernetes#123233); an older one replaces 1 more available pod in the first batch');
  });

  test('1.31 or later (a kubelet of 1.31, or --kubernetes-version): no such note', () => {
    expect(noteOf(true)).not.toContain('older one');
    const kubelet = (kubeletVersion: string) => [{ metadata: { name: 'a' }, status: { nodeInfo: { kubeletVersion } } }] as unknown as NodeJson[];
    expect(controlPlaneAtLeast(kubelet('v1.31.2'), undefined, 31)).toBe(true);
    expect(controlPlaneAtLeast(kubelet('v1.30.4-eks-a737599'), undefined, 31)).toBe(false);
    expect(controlPlaneAtLeast([], '1.31', 31)).toBe(true);
  });
});

describe('one answer: estimate\'s time is plan\'s time for a DaemonSet whose every pod the change replaces', () => {
  test('the new user\'s fleet: 20 nodes at 25% with one NotReady node take 3 min 20 s in both (estimate said 2 min 40 s)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'one-answer-'));
    try {
      fs.cpSync('examples/log-collector/dist', `${dir}/before`, { recursive: true });
      fs.cpSync('examples/log-collector/dist', `${dir}/after`, { recursive: true });
      const file = `${dir}/after/log-collector.k8s.yaml`;
      fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/fluent-bit:(\d+\.\d+\.)(\d+)/, (_m, head, patch) => `fluent-bit:${head}${Number(patch) + 1}`));
      const cli = (...argv: string[]) => {
        let stdout = '';
        runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined }, cwd: process.cwd() });
        return stdout;
      };
      const nodesFile = 'examples/inventories/mixed-cluster.json';
      const estimate = JSON.parse(cli('estimate', '--nodes', nodesFile, `${dir}/after`, '--json'));
      const plan = JSON.parse(cli('plan', '--nodes', nodesFile, '--before', `${dir}/before`, '--after', `${dir}/after`, '--json'));
      const wave = estimate.agents[0].waves[0];
      const rollout = plan.steps[0].agents[0].daemonSets[0].rollout;
      expect(wave.seconds).toBe(200);
      expect(rollout.seconds).toBe(200);
      expect([wave.batches, wave.rollout.stuck]).toEqual([rollout.batches, rollout.stuck]);
      expect(cli('estimate', '--nodes', nodesFile, `${dir}/after`)).toContain('total 3 min 20 s');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('property: on random node states, strategies and unready pods, a full bump takes what estimate says', () => {
    const state = fc.constantFrom<TestNode['ready']>('True', 'True', 'True', 'False', 'Unknown');
    fc.assert(fc.property(
      fc.array(fc.record({ ready: state, unready: fc.boolean(), tolerated: fc.boolean() }), { minLength: 1, maxLength: 24 }),
      fc.oneof(
        fc.record({ maxUnavailable: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constantFrom('10%', '25%', '50%')) }),
        fc.record({ maxUnavailable: fc.constant(0), maxSurge: fc.oneof(fc.integer({ min: 1, max: 4 }), fc.constantFrom('20%', '50%')) }),
      ),
      fc.boolean(),
      (specs, rollingUpdate, tolerate) => {
        const given = nodes(specs.length, Object.fromEntries(specs.map((s, i) => [`n-${String(i + 1).padStart(2, '0')}`, s.ready])));
        const unavailable = new Map([['agents/agent', new Set(given.filter((_, i) => specs[i].unready).map((n) => n.name))]]);
        const ds = (image: string) => daemonSet('agent', { tolerations: tolerate ? all : undefined, strategy: { type: 'RollingUpdate', rollingUpdate }, image });
        const report = planChange(tree([ds('example.com/agent:1')]), tree([ds('example.com/agent:2')]), given, { unavailable });
        const coverage = analyzeCoverage(tree([ds('example.com/agent:2')]).daemonSets, given);
        const [agent] = estimateRollout(coverage.daemonSets, { report: coverage, unavailable });
        const rollout = report.agents[0].daemonSets[0].rollout;
        const wave = agent.waves[0];
        if (rollout === undefined) return wave.nodes === 0 || wave.batches === 0;
        expect([wave.seconds, wave.batches]).toEqual([rollout.seconds, rollout.batches]);
        return true;
      },
    ), { numRuns: 150, seed: 35 });
  });
});
