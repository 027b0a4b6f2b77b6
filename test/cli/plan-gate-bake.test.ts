/**
 * plan and estimate count the rendered gate Jobs' bake: a gate is an Argo CD Sync hook Job in the sync wave between two
 * waves; Argo CD runs every hook on every sync and applies the next wave only once the Job has completed
 * (gitops-engine pkg/sync/sync_context.go Sync: a wave's tasks, hooks included, must finish before the next wave),
 * and the Job sleeps its BAKE_SECONDS before its checks. The bake is read from the rendered Job.
 */
import { Chart, Testing } from 'cdk8s';
import { NodeAgentDaemonSet, Promotion, RolloutWave } from '../../src';
import { renderedGates } from '../../src/cli/plan/gates';
import { planChange } from '../../src/cli/plan/plan';
import { runCli } from '../../src/cli/run';
import { Manifest, synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';
import { inventory, tree } from '../util/plan';

const NODES = inventory([{ name: 'n-1', wave: 'canary' }, { name: 'n-2', wave: 'wave-1' }, { name: 'n-3' }, { name: 'n-4' }]);

function scanner(image: string, bakeMinutes: number, promoted = Promotion.all()): Manifest[] {
  const chart = new Chart(Testing.app(), 'tree');
  new NodeAgentDaemonSet(chart, 'scanner', {
    name: 'scanner',
    image,
    rollout: {
      waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')],
      promoted,
      argoCdSyncWaves: true,
      gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus.monitoring.svc:9090', bakeMinutes }],
    },
  });
  return synthManifests(chart);
}

test('renderedGates reads the bake and the deadline from the rendered Job', () => {
  expect(renderedGates(tree(scanner('example.com/scanner:1', 15)))).toEqual([{
    job: 'kube-system/scanner-gate-canary',
    namespace: 'kube-system',
    agent: 'scanner',
    afterWave: 'canary',
    syncWave: 2,
    bakeSeconds: 900,
    deadlineSeconds: 1200,
  }]);
});

test('plan: a sync with a 15-minute gate takes the rollouts plus 15 min, not "2 min"', () => {
  const report = planChange(tree(scanner('example.com/scanner:1', 15)), tree(scanner('example.com/scanner:2', 15)), NODES);
  const agent = report.agents[0];
  // three waves one after the other: 1, 1 and 2 nodes, one pod at a time, 40 s each (30 s + minReadySeconds 10)
  expect(agent.daemonSets.map((d) => d.rollout?.seconds)).toEqual([40, 40, 80]);
  expect(agent).toMatchObject({ sequential: true, gateSeconds: 900, seconds: 160 + 900 });
  expect(agent.gates).toEqual([{ job: 'kube-system/scanner-gate-canary', afterWave: 'canary', bakeSeconds: 900, deadlineSeconds: 1200 }]);
});

test('plan: no change to the agent, no sync: the gate is not counted', () => {
  const report = planChange(tree(scanner('example.com/scanner:1', 15)), tree(scanner('example.com/scanner:1', 15)), NODES);
  expect(report.agents[0]).toMatchObject({ seconds: 0, gateSeconds: 0 });
});

describe('estimate', () => {
  const ROOT = REPO;
  const run = (...argv: string[]) => {
    let stdout = '';
    const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined }, cwd: ROOT });
    return { code, stdout };
  };

  test('the rollout example: the canary gate\'s rendered 10 min bake replaces the default bake after the canary', () => {
    const r = run('estimate', '--nodes', 'examples/inventories/mixed-cluster.json', '--bake-seconds', '60', '--json', 'examples/log-collector-rollout/dist/3-fleet');
    const agent = JSON.parse(r.stdout).agents[0];
    expect(agent.waves.map((w: { daemonSet: string; gateSeconds?: number }) => [w.daemonSet, w.gateSeconds])).toEqual([
      ['observability/logs-canary', 600], ['observability/logs-wave-1', undefined], ['observability/logs', undefined],
    ]);
    // one default bake (after wave-1), the gate's 600 s after the canary
    expect(agent).toMatchObject({ bakes: 1, bakeSeconds: 60, gateSeconds: 600 });
    const rollouts = agent.waves.reduce((sum: number, w: { seconds?: number }) => sum + (w.seconds ?? 0), 0);
    expect(agent.totalSeconds).toBe(rollouts + 60 + 600);
    expect(run('estimate', '--nodes', 'examples/inventories/mixed-cluster.json', '--bake-seconds', '60', 'examples/log-collector-rollout/dist/3-fleet').stdout)
      .toContain('(1 bake of 1 min included) (gate Jobs\' bake of 10 min included)');
  });
});
