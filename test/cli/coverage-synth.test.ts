/**
 * Coverage of what the constructs synthesize (through the shared manifest check), on the example inventory:
 * the analysis reads the library's own output the way the CLI reads a dist/ directory.
 */
import { Chart, Testing } from 'cdk8s';
import { NodeAgentDaemonSet, NodeAgentDaemonSetProps, Promotion, RolloutWave } from '../../src';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { loadNodeList } from '../../src/cli/coverage/load';
import { manifestSet } from '../../src/cli/coverage/manifests';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { estimateRollout } from '../../src/cli/estimate/estimate';
import { Manifest, synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';

const nodes = nodeFacts(loadNodeList('examples/inventories/mixed-cluster.json', REPO));

function synth(props: Partial<NodeAgentDaemonSetProps>): Manifest[] {
  const chart = new Chart(Testing.app(), 'agents');
  new NodeAgentDaemonSet(chart, 'logs', { name: 'logs', namespace: 'observability', image: 'cr.fluentbit.io/fluent/fluent-bit:3.1.9', ...props });
  return synthManifests(chart);
}

function analyze(manifests: Manifest[]) {
  const set = manifestSet(manifests.map((object) => ({ source: 'synth', object })));
  return analyzeCoverage(set.daemonSets, nodes);
}

describe('synthesized agents on the mixed inventory', () => {
  test('the base construct excludes Windows and virtual nodes on purpose, tolerates the control plane; other taints are gaps', () => {
    const report = analyze(synth({}));
    const agent = report.agents[0];
    expect(agent.agent).toBe('logs');
    const by = (status: string) => agent.nodes.filter((n) => n.status === status).map((n) => n.node);
    expect(by('excluded')).toEqual(['fargate-ip-10-0-12-34.eu-west-1.compute.internal', 'win-a-1', 'win-b-1']);
    expect(by('gap')).toEqual(['gpu-a-1', 'gpu-b-1', 'spot-a-1', 'spot-c-1']);
    expect(by('covered')).toContain('cp-1');
    expect(by('node-condition')).toEqual(['worker-b-5']);
    expect(report.problems.map((p) => p.kind)).toEqual(['gap', 'gap']);
  });

  test('tolerateAllTaints covers every linux node, NotReady included', () => {
    const report = analyze(synth({ tolerateAllTaints: true }));
    expect(report.problems).toEqual([]);
    expect(report.agents[0].counts).toMatchObject({ covered: 20, excluded: 3, gap: 0, duplicate: 0 });
  });

  test('a wave partition owns every node exactly once; an unlabelled wave is flagged as empty', () => {
    const report = analyze(synth({
      tolerateAllTaints: true,
      rollout: { waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1'), RolloutWave.labelled('wave-2')], promoted: Promotion.all() },
    }));
    const agent = report.agents[0];
    expect(agent.daemonSets).toEqual(['observability/logs-canary', 'observability/logs-wave-1', 'observability/logs-wave-2', 'observability/logs']);
    expect(agent.counts).toMatchObject({ covered: 20, duplicate: 0, gap: 0 });
    expect(report.daemonSets.map((d) => [d.info.id, d.info.rolloutGroup, d.covered.length])).toEqual([
      ['observability/logs', 'fleet', 16],
      ['observability/logs-canary', 'canary', 1],
      ['observability/logs-wave-1', 'wave-1', 3],
      ['observability/logs-wave-2', 'wave-2', 0],
    ]);
    expect(report.problems).toEqual([expect.objectContaining({ kind: 'empty-wave', daemonSets: ['observability/logs-wave-2'] })]);

    const [estimate] = estimateRollout(report.daemonSets, { podSeconds: 30, bakeSeconds: 0 });
    expect(estimate.waves.map((w) => [w.daemonSet, w.nodes, w.blastRadiusPercent])).toEqual([
      ['observability/logs-canary', 1, 5],
      ['observability/logs-wave-1', 3, 15],
      ['observability/logs-wave-2', 0, 0],
      ['observability/logs', 16, 80],
    ]);
  });
});
