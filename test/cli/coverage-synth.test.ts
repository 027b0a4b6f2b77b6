/**
 * Coverage of what the constructs synthesize (through the shared manifest check), on the example inventory:
 * the analysis reads the library's own output the way the CLI reads a dist/ directory.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { GpuDriverDaemonSet, GpuNodeSelection, NodeAgentDaemonSet, NodeAgentDaemonSetProps, Promotion, RolloutWave } from '../../src';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { loadNodeList } from '../../src/cli/coverage/load';
import { manifestSet } from '../../src/cli/coverage/manifests';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { estimateRollout } from '../../src/cli/estimate/estimate';
import { runCli } from '../../src/cli/run';
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

describe('coverage says what to change, and does not call an agent that selects nothing fine', () => {
  function runCoverage(manifests: Manifest[]): { code: number; out: string } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coverage-synth-'));
    fs.writeFileSync(path.join(dir, 'agents.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: manifests }));
    let out = '';
    const code = runCli(['coverage', '--nodes', path.join(REPO, 'examples/inventories/mixed-cluster.json'), dir],
      { stdout: { write: (s: string) => { out += s; } }, stderr: { write: (s: string) => { out += s; } }, cwd: REPO });
    fs.rmSync(dir, { recursive: true, force: true });
    return { code, out };
  }

  test('a gap an untolerated taint causes names the prop that tolerates it and the flag that calls it intended (as never-starts names its fix)', () => {
    const report = analyze(synth({}));
    const spot = report.problems.find((p) => p.kind === 'gap' && p.message.includes('spot=true:NoExecute'))!;
    expect(spot.message).toContain('Fix: tolerate it in logs: prop `tolerations` [{ key: "spot", operator: Exists, effect: NoExecute }] (or `tolerateAllTaints: true`)');
    expect(spot.message).toContain('--allow-taint spot');
  });

  test('an agent whose selection matches none of the inventory\'s nodes gets a warning, not "No problems" alone', () => {
    const chart = new Chart(Testing.app(), 'gpu');
    new GpuDriverDaemonSet(chart, 'nvidia', {
      image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04',
      // the nodes carry g5.2xlarge: label values are case-sensitive
      gpuNodes: GpuNodeSelection.labelIn('node.kubernetes.io/instance-type', ['G5.2XLARGE']),
    });
    const { out } = runCoverage(synthManifests(chart));
    expect(out).toMatch(/WARNINGS \(1\)\n {2}gpu-driver selects none of the 20 linux nodes \(kube-system\/gpu-driver\): e\.g\. [^:]+: required affinity node\.kubernetes\.io\/instance-type In \[G5\.2XLARGE\]/);
  });
});
