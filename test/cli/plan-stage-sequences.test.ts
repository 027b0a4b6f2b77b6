/**
 * Every committed example stage pair (examples/log-collector-rollout/dist/<stage>: the only example with stages)
 * planned on every committed inventory, each against a hand-computed expectation of what the DaemonSet controller
 * (kubernetes pkg/controller/daemon/update.go rollingUpdate; percentages rounded up) and Argo CD (gitops-engine
 * pkg/sync/sync_context.go: sync waves in order, hooks on every sync, the last wave not waited on) do.
 *
 * The log collector tolerates every taint (operator Exists), so every Linux node is covered; the example's paces:
 * canary maxUnavailable 1, wave-1 and fleet 25%; pod cycle 30 s + minReadySeconds 10 = 40 s; the canary gate
 * (a Sync hook Job between canary and wave-1) bakes 600 s on every sync.
 *
 * test/fixtures/plan/states-cluster.json holds one node of each state: canary-1 cordoned (DaemonSet pods tolerate
 * node.kubernetes.io/unschedulable: no problem), wave1-3 unreachable (Ready=Unknown) in a wave whose budget is 1,
 * fleet-8 NotReady (Ready=False) in the fleet, the last sync wave.
 */
import { loadManifests, loadNodeList } from '../../src/cli/coverage/load';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { planChange } from '../../src/cli/plan/plan';
import { REPO } from '../util/paths';

const ROOT = `${REPO}`;
const DIST = 'examples/log-collector-rollout/dist';
const STAGES = ['0-before', '1-canary', '2-wave-1', '3-fleet', '4-done'];
const GATE = 600;

interface Expected {
  /** the DaemonSet that replaces pods (none: nothing changes) */
  readonly promoted?: 'logs-canary' | 'logs-wave-1' | 'logs';
  readonly replaced?: number;
  /** [pods at once, batches, rollout seconds (undefined: does not finish), stuck nodes] */
  readonly rollout?: [number, number, number | undefined, string[]];
  /** the agent's expected seconds: rollout + the gate's bake when anything changes */
  readonly seconds: number;
  /** [kind, cause, severity, DaemonSet, nodes] of every finding but the es-credentials Secret warnings */
  readonly findings: Array<[string, string, string, string, string[]]>;
}

const EXPECTED: Record<string, Record<string, Expected>> = {
  'examples/inventories/mixed-cluster.json': {
    // canary: worker-a-1; 1 at once, 1 batch, 40 s
    '0-before': { promoted: 'logs-canary', replaced: 1, rollout: [1, 1, 40, []], seconds: 40 + GATE, findings: [] },
    // wave-1: 3 nodes, 25% of 3 = 0.75 -> 1; 3 batches, 120 s
    '1-canary': { promoted: 'logs-wave-1', replaced: 3, rollout: [1, 3, 120, []], seconds: 120 + GATE, findings: [] },
    // fleet: 16 nodes, 25% -> 4; worker-b-5 NotReady (tolerated) holds one unit for good: 3 at once for 15, 5 batches, 200 s;
    // the fleet is the last sync wave: a warning, not a stall of anything (cordoned worker-c-4 is replaced like any node)
    '2-wave-1': {
      promoted: 'logs',
      replaced: 16,
      rollout: [3, 5, 200, ['worker-b-5']],
      seconds: 200 + GATE,
      findings: [['stall', 'not-ready', 'warning', 'observability/logs', ['worker-b-5']]],
    },
    '3-fleet': { seconds: 0, findings: [] },
  },
  'test/fixtures/label/gpu-cluster.json': {
    // wave-1 has no node on this inventory: Healthy at once under its sync wave, an error on every step touching the agent
    // canary: gpu-a-2 and the cordoned worker-b-1 (win-a-1 is Windows): 1 at once, 2 batches, 80 s
    '0-before': {
      promoted: 'logs-canary',
      replaced: 2,
      rollout: [1, 2, 80, []],
      seconds: 80 + GATE,
      findings: [['stall', 'empty-wave', 'error', 'observability/logs-wave-1', []]],
    },
    '1-canary': { seconds: GATE, findings: [['stall', 'empty-wave', 'error', 'observability/logs-wave-1', []]] },
    // fleet: 7 nodes, 25% of 7 = 1.75 -> 2; gpu-c-2 NotReady holds one: 1 at once for 6, 6 batches, 240 s; last wave: a warning
    '2-wave-1': {
      promoted: 'logs',
      replaced: 7,
      rollout: [1, 6, 240, ['gpu-c-2']],
      seconds: 240 + GATE,
      findings: [['stall', 'not-ready', 'warning', 'observability/logs', ['gpu-c-2']], ['stall', 'empty-wave', 'error', 'observability/logs-wave-1', []]],
    },
    '3-fleet': { seconds: 0, findings: [] },
  },
  'test/fixtures/plan/states-cluster.json': {
    // canary: canary-1 (cordoned: runs and turns Ready) and canary-2: 1 at once, 2 batches, 80 s, no finding
    '0-before': { promoted: 'logs-canary', replaced: 2, rollout: [1, 2, 80, []], seconds: 80 + GATE, findings: [] },
    // wave-1: 3 nodes, budget 1; wave1-3 unreachable: its old pod is unavailable and replaced at once, the new one never
    // runs, and it holds the only unit: the controller replaces neither wave1-1 nor wave1-2. No automatic rollout.
    '1-canary': {
      promoted: 'logs-wave-1',
      replaced: 3,
      rollout: [0, 0, undefined, ['wave1-3']],
      seconds: GATE,
      findings: [['stall', 'not-ready', 'error', 'observability/logs-wave-1', ['wave1-3']]],
    },
    // fleet: 8 nodes, 25% -> 2; fleet-8 NotReady holds one: 1 at once for 7, 7 batches, 280 s; the last wave: a warning
    '2-wave-1': {
      promoted: 'logs',
      replaced: 8,
      rollout: [1, 7, 280, ['fleet-8']],
      seconds: 280 + GATE,
      findings: [['stall', 'not-ready', 'warning', 'observability/logs', ['fleet-8']]],
    },
    '3-fleet': { seconds: 0, findings: [] },
  },
};

describe.each(Object.keys(EXPECTED))('on %s', (inventory) => {
  const nodes = nodeFacts(loadNodeList(inventory, ROOT));
  test.each(STAGES.slice(0, -1).map((s, i) => [s, STAGES[i + 1]]))('%s -> %s', (before, after) => {
    const expected = EXPECTED[inventory][before];
    const report = planChange(loadManifests([`${DIST}/${before}`], ROOT), loadManifests([`${DIST}/${after}`], ROOT), nodes);
    const agent = report.agents[0];
    for (const ds of agent.daemonSets) {
      const promoted = expected.promoted !== undefined && ds.id === `observability/${expected.promoted}`;
      expect([ds.id, ds.replaced.length]).toEqual([ds.id, promoted ? expected.replaced : 0]);
      if (promoted && expected.rollout !== undefined) {
        const [atOnce, batches, seconds, stuck] = expected.rollout;
        const r = ds.rollout!;
        expect([ds.id, r.podsAtOnce, r.batches, r.seconds, r.stuck]).toEqual([ds.id, atOnce, batches, seconds, stuck]);
      }
    }
    expect(agent.seconds).toBe(expected.seconds);
    const findings = report.findings.filter((f) => !(f.kind === 'missing-reference' && f.cause === 'Secret'))
      .map((f) => [f.kind, f.cause, f.severity, f.daemonSets[0], [...f.nodes]]);
    expect(findings).toEqual(expected.findings);
    // the Secret the new release reads lives outside the tree: only ever a warning
    expect(report.findings.filter((f) => f.kind === 'missing-reference').every((f) => f.severity === 'warning')).toBe(true);
  });
});
