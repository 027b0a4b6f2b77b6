/**
 * Properties of node-agents plan over stages the constructs produce, on random inventories: a change of
 * promotion (or a new release entering at the canary, or waves added and removed) never runs two pods of the
 * agent on one node; a held wave restarts only when the waves change, and plan names every such restart; and
 * plan's time is estimate's for a change of one DaemonSet.
 */
import { Chart, Testing } from 'cdk8s';
import fc from 'fast-check';
import { AgentRelease, AgentRollout, NodeAgentDaemonSet, Promotion, RolloutBudget, RolloutWave, UpdateStrategy } from '../../src';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { ManifestSet } from '../../src/cli/coverage/manifests';
import { estimateRollout } from '../../src/cli/estimate/estimate';
import { planChange } from '../../src/cli/plan/plan';
import { Manifest, synthManifests } from '../util/manifests';
import { daemonSet, inventory, rolloutStage, TestNode, tree } from '../util/plan';

const WAVE_NAMES = ['canary', 'wave-1', 'wave-2'];
const RELEASES = ['example.com/scanner:1', 'example.com/scanner:2', 'example.com/scanner:3'];

/** The rollout prop of one stage (labelled waves, the first `promoted` groups promoted). */
function rolloutOf(waves: readonly string[], promoted: number, previous: AgentRelease | undefined): AgentRollout {
  return rolloutStage(waves.map((w) => RolloutWave.labelled(w)), Promotion.groups(promoted), previous);
}

interface Stage {
  readonly waves: readonly string[];
  readonly promoted: number;
  readonly current: number;
  readonly previous?: number;
}

function render(stage: Stage, strategy?: UpdateStrategy): ManifestSet {
  const chart = new Chart(Testing.app(), 'stage');
  new NodeAgentDaemonSet(chart, 'scanner', {
    name: 'scanner',
    image: RELEASES[stage.current],
    updateStrategy: strategy,
    rollout: rolloutOf(stage.waves, stage.promoted, stage.previous === undefined
      ? undefined
      : AgentRelease.fromProps({ name: 'scanner', image: RELEASES[stage.previous], updateStrategy: strategy })),
  });
  return tree(synthManifests(chart));
}

const nodesArb = fc.array(fc.record({
  wave: fc.constantFrom(undefined, ...WAVE_NAMES),
  ready: fc.constantFrom<'True' | 'False'>('True', 'True', 'True', 'False'),
  spot: fc.boolean(),
}), { minLength: 1, maxLength: 25 }).map((list) => inventory(list.map((n, i): TestNode => ({
  name: `node-${String(i).padStart(2, '0')}`,
  wave: n.wave,
  ready: n.ready,
  taints: n.spot ? [{ key: 'spot', value: 'true', effect: 'NoSchedule' }] : [],
}))));

const wavesArb = fc.subarray(WAVE_NAMES, { minLength: 1 });

/** Two stages a rollout goes through: the same releases promoted further or back, or a new release after a complete one. */
const stagePairArb = fc.oneof(
  fc.record({ wavesA: wavesArb, wavesB: wavesArb, a: fc.nat(4), b: fc.nat(4), current: fc.constantFrom(1, 2), withPrevious: fc.boolean() })
    .map(({ wavesA, wavesB, a, b, current, withPrevious }): [Stage, Stage] => {
      const previous = withPrevious ? current - 1 : undefined;
      // a new agent (no previous) renders at least its first wave
      const promoted = (n: number, waves: readonly string[]) => Math.max(previous === undefined ? 1 : 0, Math.min(n, waves.length + 1));
      return [
        { waves: wavesA, promoted: promoted(a, wavesA), current, previous },
        { waves: wavesB, promoted: promoted(b, wavesB), current, previous },
      ];
    }),
  fc.record({ waves: wavesArb, b: fc.nat(4), current: fc.constantFrom(1, 2) })
    .map(({ waves, b, current }): [Stage, Stage] => [
      { waves, promoted: waves.length + 1, current: current - 1 },
      { waves, promoted: Math.min(b, waves.length + 1), current, previous: current - 1 },
    ]),
);

test('plan never reports two pods per node for stage pairs the constructs produce; a held wave restarts only when the waves change, and then never in silence', () => {
  fc.assert(fc.property(nodesArb, stagePairArb, (nodes, [a, b]) => {
    const report = planChange(render(a), render(b), nodes);
    const kinds = report.findings.map((f) => f.kind);
    expect(kinds).not.toContain('two-pods-per-node');
    // a new release promoted to every wave at once is its own finding (plan-wave-changes.test.ts)
    const restarts = report.findings.filter((f) => f.kind === 'held-wave-restart' && f.cause !== 'all-waves-at-once');
    // a promotion, a rollback or a new release at the canary restarts no held wave
    if (a.waves.join() === b.waves.join()) expect(restarts).toEqual([]);
    // waves reordered, added or dropped: only the wave-layout causes, and every node that moves between the agent's
    // DaemonSets (its pod restarted at once) is named by one
    expect(restarts.filter((f) => !f.cause.startsWith('wave-'))).toEqual([]);
    const named = new Set(restarts.filter((f) => f.cause === 'wave-move').flatMap((f) => f.nodes));
    expect(report.agents[0].moved.filter((m) => !named.has(m.node))).toEqual([]);
    // every node with a pod before or after is in exactly one bucket
    const agent = report.agents[0];
    const buckets = agent.replaced.length + agent.moved.length + agent.gained.length + agent.lost.length + agent.untouched;
    expect(new Set([...agent.replaced, ...agent.moved.map((m) => m.node), ...agent.gained.map((g) => g.node), ...agent.lost.map((l) => l.node)]).size)
      .toBe(buckets - agent.untouched);
  }), { seed: 20261203, numRuns: 60 });
});

test('for a change of one DaemonSet, plan\'s time is estimate\'s (constructs, random strategies)', () => {
  const strategyArb = fc.oneof(
    fc.integer({ min: 1, max: 5 }).map((n) => UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(n) })),
    fc.integer({ min: 1, max: 60 }).map((p) => UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.percent(p) })),
    fc.constant(UpdateStrategy.oneAtATime()),
    fc.constant(UpdateStrategy.steady()),
    fc.constant(UpdateStrategy.fast()),
  );
  fc.assert(fc.property(nodesArb, wavesArb, fc.nat(3), strategyArb, fc.integer({ min: 0, max: 120 }), (nodes, waves, k, strategy, podSeconds) => {
    const promoted = Math.min(k, waves.length);
    // one more group promoted: exactly one DaemonSet changes its pod template
    const before = render({ waves, promoted, current: 1, previous: 0 }, strategy);
    const after = render({ waves, promoted: promoted + 1, current: 1, previous: 0 }, strategy);
    const report = planChange(before, after, nodes, { podSeconds });
    const agent = report.agents[0];
    const changed = agent.daemonSets.filter((d) => d.podTemplateChanged);
    expect(changed).toHaveLength(1);
    expect(agent.moved.length + agent.gained.length + agent.lost.length).toBe(0);
    const estimate = estimateRollout(analyzeCoverage(after.daemonSets, nodes).daemonSets.filter((d) => d.info.id === changed[0].id), { podSeconds });
    expect(agent.seconds).toBe(estimate[0].totalSeconds);
    expect(changed[0].rollout?.batches ?? 0).toBe(estimate[0].waves[0].batches);
  }), { seed: 42, numRuns: 40 });
});

test('differential, hand-written DaemonSets: plan\'s batches and time are estimate\'s for every pace', () => {
  const nodesOf = (count: number) => inventory(Array.from({ length: count }, (_, i) => ({ name: `n-${String(i).padStart(3, '0')}` })));
  fc.assert(fc.property(
    fc.integer({ min: 1, max: 120 }),
    fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 100 }).map((p) => `${p}%`)),
    fc.boolean(),
    fc.integer({ min: 0, max: 60 }),
    (count, value, surge, minReadySeconds) => {
      const strategy = { type: 'RollingUpdate', rollingUpdate: surge ? { maxSurge: value, maxUnavailable: 0 } : { maxUnavailable: value } };
      const ds = (image: string): Manifest => {
        const m = daemonSet('agent', { image, strategy });
        m.spec.minReadySeconds = minReadySeconds;
        return m;
      };
      const nodes = nodesOf(count);
      const after = tree([ds('example.com/agent:2')]);
      const report = planChange(tree([ds('example.com/agent:1')]), after, nodes);
      const estimate = estimateRollout(analyzeCoverage(after.daemonSets, nodes).daemonSets)[0];
      expect(report.agents[0].seconds).toBe(estimate.totalSeconds);
      expect(report.agents[0].daemonSets[0].rollout!.batches).toBe(estimate.waves[0].batches);
    }), { seed: 7, numRuns: 200 });
});
