/**
 * node-agents plan: one hand-built scenario per finding, each asserting the finding and its nodes, and one
 * ordinary change per agent kind.
 */
import { Chart, Testing } from 'cdk8s';
import {
  AgentRelease, AgentRollout, ARGOCD_SYNC_WAVE, FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeExporterDaemonSet,
  Promotion, RolloutWave,
} from '../../src';
import { Finding } from '../../src/cli/plan/finding';
import { planChange, PlanReport } from '../../src/cli/plan/plan';
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
const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });
const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];

function synth(build: (chart: Chart) => void): Manifest[] {
  const chart = new Chart(Testing.app(), 'tree');
  build(chart);
  return synthManifests(chart);
}

function plan(before: Manifest[], after: Manifest[], nodes = NODES): PlanReport {
  return planChange(tree(before), tree(after), nodes);
}

/** kind, cause and nodes of every finding */
function summary(report: PlanReport): Array<[string, string, readonly string[]]> {
  return report.findings.map((f: Finding) => [f.kind, f.cause, f.nodes]);
}

function scanner(image: string, rollout?: AgentRollout, extra: Record<string, unknown> = {}) {
  return synth((chart) => new NodeAgentDaemonSet(chart, 'scanner', { name: 'scanner', image, rollout, ...extra }));
}

describe('two pods of one agent on one node', () => {
  // Enabling waves moves the canary and wave-1 nodes from the fleet DaemonSet to their wave's.
  const before = () => scanner('example.com/scanner:1');
  const after = () => scanner('example.com/scanner:1', { waves: WAVES, promoted: Promotion.all() });

  test('the constructs\' anti-affinity holds the new pod Pending until the old one is gone: no two pods, but each moved pod restarts at once (wave-move)', () => {
    const report = plan(before(), after());
    expect(report.agents[0].moved).toEqual([
      { node: 'n-1', from: 'kube-system/scanner', to: 'kube-system/scanner-canary' },
      { node: 'n-2', from: 'kube-system/scanner', to: 'kube-system/scanner-wave-1' },
      { node: 'n-3', from: 'kube-system/scanner', to: 'kube-system/scanner-wave-1' },
    ]);
    expect(summary(report)).toEqual([
      ['held-wave-restart', 'wave-move', ['n-1']],
      ['held-wave-restart', 'wave-move', ['n-2', 'n-3']],
    ]);
  });

  test('without the anti-affinity: the moved nodes run two pods, and the fix names it', () => {
    const stripped = after().map((m: Manifest) => {
      if (m.kind === 'DaemonSet') delete m.spec.template.spec.affinity.podAntiAffinity;
      return m;
    });
    const report = plan(before(), stripped);
    expect(summary(report)).toEqual([
      ['two-pods-per-node', 'move', ['n-1']],
      ['two-pods-per-node', 'move', ['n-2', 'n-3']],
      // the moves are named once (above); the fleet's template lost its anti-affinity: its nodes restart on the same release
      ['held-wave-restart', 'wave-layout', ['n-4', 'n-5', 'n-6']],
    ]);
    expect(report.findings[0].daemonSets).toEqual(['kube-system/scanner', 'kube-system/scanner-canary']);
    expect(report.findings[0].fix).toContain('podAntiAffinity on kubernetes.io/hostname');
  });

  test('a shared host port also holds the new pod (NodePorts): no two pods, the move restarts the pod at once', () => {
    const b = [daemonSet('agent', { hostPort: 9000 })];
    const a = [daemonSet('agent-canary', { agent: 'agent', group: 'canary', hostPort: 9000, nodeSelector: { 'node-agents.cdk8s.io/rollout-wave': 'canary' } })];
    const report = plan(b, a);
    expect(report.agents[0].moved.map((m) => m.node)).toEqual(['n-1']);
    expect(report.agents[0].lost.map((l) => l.node)).toEqual(['n-2', 'n-3', 'n-4', 'n-5', 'n-6']);
    // no two-pods finding; the other nodes losing the agent is one (test/cli/plan-loses-agent.test.ts)
    expect(summary(report)).toEqual([['loses-agent', 'deleted', ['n-2', 'n-3', 'n-4', 'n-5', 'n-6']], ['held-wave-restart', 'wave-move', ['n-1']]]);
  });

  test('two DaemonSets of one agent covering the same nodes, without anti-affinity: two pods for good', () => {
    const report = plan([daemonSet('agent')], [daemonSet('agent'), daemonSet('agent-extra', { agent: 'agent', nodeSelector: { 'node-agents.cdk8s.io/rollout-wave': 'wave-1' } })]);
    expect(summary(report)).toEqual([['two-pods-per-node', 'duplicate', ['n-2', 'n-3']]]);
  });
});

describe('a pod that never starts', () => {
  test('a host port another agent binds on the same nodes', () => {
    const exporter = synth((chart) => new NodeExporterDaemonSet(chart, 'node-exporter', {}));
    const clash = daemonSet('metrics', { namespace: 'monitoring', hostPort: 9100, nodeSelector: { 'node-agents.cdk8s.io/rollout-wave': 'wave-1' } });
    const report = plan(exporter, [...exporter, clash]);
    expect(summary(report)).toEqual([['never-starts', 'host-port', ['n-2', 'n-3']]]);
    expect(report.findings[0].daemonSets).toEqual(['monitoring/metrics', 'monitoring/node-exporter']);
  });

  test('a required anti-affinity against a pod already on the node (the GPU driver and another driver)', () => {
    const gpu = inventory([{ name: 'gpu-1', labels: { 'nvidia.com/gpu.present': 'true' } }, { name: 'gpu-2', labels: { 'nvidia.com/gpu.present': 'true' } }, { name: 'cpu-1' }]);
    const driver = synth((chart) => new GpuDriverDaemonSet(chart, 'driver', { image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04' }));
    const other = daemonSet('other-driver', { namespace: 'kube-system', nodeSelector: { 'nvidia.com/gpu.present': 'true' } });
    other.spec.template.metadata.labels['app.kubernetes.io/component'] = 'nvidia-driver';
    other.spec.selector.matchLabels['app.kubernetes.io/component'] = 'nvidia-driver';
    const report = plan([other], [other, ...driver], gpu);
    expect(summary(report)).toEqual([['never-starts', 'anti-affinity', ['gpu-1', 'gpu-2']]]);
  });

  test('an untolerated taint on a node the agent targets', () => {
    const nodes = inventory([{ name: 'a' }, { name: 'spot-1', taints: [{ key: 'spot', value: 'true', effect: 'NoExecute' }] }]);
    const spot = [{ key: 'spot', operator: 'Exists' }];
    const report = plan([daemonSet('agent', { tolerations: spot })], [daemonSet('agent', { image: 'example.com/agent:2' })], nodes);
    // the running pod there is evicted too (the NoExecute taint is no longer tolerated): the node loses the agent
    expect(summary(report)).toEqual([['never-starts', 'toleration', ['spot-1']], ['loses-agent', 'narrowed', ['spot-1']]]);
    expect(report.agents[0].lost).toEqual([{ node: 'spot-1', from: 'agents/agent' }]);
    expect(report.findings[0]).toMatchObject({ severity: 'error', fix: expect.stringContaining('spot=true:NoExecute') });
    // the same gap in the before-tree: not the change's doing, a standing warning
    const standing = plan([daemonSet('agent')], [daemonSet('agent', { image: 'example.com/agent:2' })], nodes);
    expect(standing.findings).toMatchObject([{ kind: 'never-starts', severity: 'warning', standing: true, nodes: ['spot-1'] }]);
    expect(standing.findings[0].message).toMatch(/\(already so before the change\)$/);
  });
});

describe('a rollout that stalls', () => {
  test('a NotReady node the DaemonSet tolerates, inside a budget of 1', () => {
    const nodes = inventory([{ name: 'a' }, { name: 'b', ready: 'False' }, { name: 'c' }]);
    const all = [{ operator: 'Exists' }];
    const report = plan([daemonSet('agent', { tolerations: all })], [daemonSet('agent', { tolerations: all, image: 'example.com/agent:2' })], nodes);
    expect(summary(report)).toEqual([['stall', 'not-ready', ['b']]]);
    // with a budget of 2 the rollout goes on around the NotReady node
    const wide = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } };
    expect(plan([daemonSet('agent', { tolerations: all })], [daemonSet('agent', { tolerations: all, strategy: wide, image: 'example.com/agent:2' })], nodes).findings).toEqual([]);
  });

  test('a NotReady node under sync-wave gating stalls even inside a wider budget (the wave never turns Healthy)', () => {
    const nodes = inventory([{ name: 'a' }, { name: 'b', ready: 'Unknown' }, { name: 'c' }]);
    const gated = (image: string) => daemonSet('agent', {
      image, tolerations: [{ operator: 'Exists' }], strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } }, annotations: { [ARGOCD_SYNC_WAVE]: '2' },
    });
    // a later sync wave: Argo CD waits for this one's health before it (gitops-engine sync_context.go); the last wave
    // is not waited on (test/cli/plan-not-ready.test.ts)
    const later = daemonSet('later', { image: 'example.com/later:1', annotations: { [ARGOCD_SYNC_WAVE]: '3' } });
    const report = plan([gated('example.com/agent:1'), later], [gated('example.com/agent:2'), later], nodes);
    expect(summary(report)).toEqual([['stall', 'not-ready', ['b']]]);
    expect(report.findings[0].message).toContain('the wave stays Progressing and the next waves never sync');
  });

  // kubernetes pkg/controller/daemon/update.go rollingUpdate walks every node with a pod of the DaemonSet, with no
  // should-run check: the old pod on the NotReady node is unavailable (MarkPodsNotReady) and deleted at once; no new
  // pod is created there while the node is NotReady (nodeShouldRunDaemonPod: the NoSchedule taint is not tolerated)
  test('a NotReady node the DaemonSet does not tolerate: its old pod is deleted, and it runs no pod until Ready (warnings, no error)', () => {
    const nodes = inventory([{ name: 'a' }, { name: 'b', ready: 'False' }]);
    const report = plan([daemonSet('agent')], [daemonSet('agent', { image: 'example.com/agent:2' })], nodes);
    expect(summary(report)).toEqual([['stall', 'assumption', ['b']], ['loses-agent', 'node-condition', ['b']]]);
    expect(report.findings.every((f) => f.severity === 'warning')).toBe(true);
    expect(report.agents[0].replaced).toEqual(['a', 'b']);
    expect(report.agents[0].daemonSets[0].rollout).toMatchObject({ nodes: 1, batches: 1, waiting: ['b'] });
    expect(report.agents[0].daemonSets[0].rollout!.note).toContain('1 more (b) once their node is Ready again: their old pod is deleted now');
  });

  test('a sync-wave gated wave with zero nodes', () => {
    const gated = (image: string) => scanner(image, { waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('nobody')], promoted: Promotion.all(), argoCdSyncWaves: true });
    const report = plan(gated('example.com/scanner:1'), gated('example.com/scanner:2'));
    // every wave takes the new release in one change: ordered by the sync waves, but no gate between them
    expect(summary(report)).toEqual([['stall', 'empty-wave', []], ['held-wave-restart', 'all-waves-at-once', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6']]]);
    expect(report.findings[1].severity).toBe('warning');
    expect(report.findings[0].daemonSets).toEqual(['kube-system/scanner-nobody']);
    expect(report.agents[0].sequential).toBe(true);
  });

  test('a changed selector: the API server rejects the update', () => {
    const relabelled = daemonSet('agent', { image: 'example.com/agent:2' });
    relabelled.spec.selector.matchLabels.tier = 'node';
    relabelled.spec.template.metadata.labels.tier = 'node';
    const report = plan([daemonSet('agent')], [relabelled]);
    expect(summary(report)).toEqual([['stall', 'immutable-selector', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6']]]);
  });

  test('an OnDelete DaemonSet under sync-wave gating', () => {
    const onDelete = (image: string) => daemonSet('agent', { image, strategy: { type: 'OnDelete' }, annotations: { [ARGOCD_SYNC_WAVE]: '1' } });
    const report = plan([onDelete('example.com/agent:1')], [onDelete('example.com/agent:2')]);
    expect(summary(report)).toEqual([['stall', 'on-delete', ['n-1', 'n-2', 'n-3', 'n-4', 'n-5', 'n-6']]]);
  });
});

describe('a held wave whose pod template changes', () => {
  const rollout = (promoted: Promotion, previousArgs?: string[]): AgentRollout =>
    rolloutStage(WAVES, promoted, AgentRelease.fromProps({ name: 'scanner', image: 'example.com/scanner:1', args: previousArgs }));

  test('an edit of the previous release restarts the waves that were not promoted', () => {
    const before = scanner('example.com/scanner:2', rollout(Promotion.through('canary')));
    const after = scanner('example.com/scanner:2', rollout(Promotion.through('canary'), ['--verbose']));
    const report = plan(before, after);
    expect(summary(report)).toEqual([
      ['held-wave-restart', 'template', ['n-4', 'n-5', 'n-6']],
      ['held-wave-restart', 'template', ['n-2', 'n-3']],
    ]);
    expect(report.findings.map((f) => f.daemonSets[0])).toEqual(['kube-system/scanner', 'kube-system/scanner-wave-1']);
  });

  test('promoting the next wave is no restart of a held wave', () => {
    const report = plan(scanner('example.com/scanner:2', rollout(Promotion.through('canary'))), scanner('example.com/scanner:2', rollout(Promotion.through('wave-1'))));
    expect(report.agents[0].replaced).toEqual(['n-2', 'n-3']);
    expect(report.findings).toEqual([]);
  });
});

describe('a ConfigMap or Secret the after-tree lacks', () => {
  const volumes = [{ name: 'config', configMap: { name: 'agent-config' } }, { name: 'token', secret: { secretName: 'agent-token' } }];
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'agent-config', namespace: 'agents' }, data: { a: 'b' } };
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'agent-token', namespace: 'agents' }, stringData: { t: 'x' } };

  test('a missing ConfigMap is an error; a Secret no tree holds is a warning (it may live outside Git)', () => {
    const report = plan([daemonSet('agent', { volumes }), configMap], [daemonSet('agent', { volumes, image: 'example.com/agent:2' })]);
    expect(report.findings.map((f) => [f.kind, f.cause, f.severity, f.nodes.length])).toEqual([
      ['missing-reference', 'ConfigMap', 'error', 6],
      ['missing-reference', 'Secret', 'warning', 6],
    ]);
    expect(report.findings[0].message).toContain('ConfigMap agents/agent-config (volumes[config]), which the after-tree deletes');
  });

  test('a Secret the before-tree held and the after-tree drops is an error', () => {
    const report = plan([daemonSet('agent', { volumes }), configMap, secret], [daemonSet('agent', { volumes, image: 'example.com/agent:2' }), configMap]);
    expect(report.findings.map((f) => [f.cause, f.severity])).toEqual([['Secret', 'error']]);
  });
});

/** The previous release of each case below: the same props with the older image. */
const PREVIOUS_RELEASE: Record<string, (image: string) => AgentRelease> = {
  NodeAgentDaemonSet: (image) => AgentRelease.fromProps({ name: 'scanner', image }),
  LogCollectorDaemonSet: (image) => LogCollectorDaemonSet.release({ name: 'logs', image, outputs: [LOKI] }),
  NodeExporterDaemonSet: (image) => NodeExporterDaemonSet.release({ image }),
  GpuDriverDaemonSet: (image) => GpuDriverDaemonSet.release({ image }),
};

describe('one ordinary change per agent kind: a new version on the canary', () => {
  const cases: Array<[string, (chart: Chart, image: string, rollout: AgentRollout) => void, string]> = [
    ['NodeAgentDaemonSet', (c, image, rollout) => new NodeAgentDaemonSet(c, 'a', { name: 'scanner', image, rollout }), 'example.com/scanner'],
    ['LogCollectorDaemonSet', (c, image, rollout) => new LogCollectorDaemonSet(c, 'a', { name: 'logs', image, outputs: [LOKI], rollout }), 'cr.fluentbit.io/fluent/fluent-bit'],
    ['NodeExporterDaemonSet', (c, image, rollout) => new NodeExporterDaemonSet(c, 'a', { image, rollout }), 'quay.io/prometheus/node-exporter'],
    ['GpuDriverDaemonSet', (c, image, rollout) => new GpuDriverDaemonSet(c, 'a', { image, rollout, gpuNodes: undefined }), 'nvcr.io/nvidia/driver'],
  ];
  const gpuNodes = inventory([
    { name: 'n-1', wave: 'canary', labels: { 'nvidia.com/gpu.present': 'true' } },
    { name: 'n-2', wave: 'wave-1', labels: { 'nvidia.com/gpu.present': 'true' } },
    { name: 'n-3', labels: { 'nvidia.com/gpu.present': 'true' } },
  ]);

  test.each(cases)('%s', (kind, build, repository) => {
    const [v1, v2] = kind === 'GpuDriverDaemonSet' ? ['550.90.07-ubuntu22.04', '550.127.05-ubuntu22.04'] : kind === 'NodeExporterDaemonSet' ? ['v1.8.2', 'v1.9.1'] : ['1.0.0', '2.0.0'];
    const previous = PREVIOUS_RELEASE[kind](`${repository}:${v1}`);
    const stage = (promoted: Promotion) => synth((chart) => build(chart, `${repository}:${v2}`, rolloutStage(WAVES, promoted, previous)));
    const nodes = kind === 'GpuDriverDaemonSet' ? gpuNodes : NODES;
    const report = plan(stage(Promotion.none()), stage(Promotion.through('canary')), nodes);
    expect(report.agents).toHaveLength(1);
    const agent = report.agents[0];
    expect(agent.replaced).toEqual(['n-1']);
    expect(agent.daemonSets.filter((d) => d.change !== 'unchanged').map((d) => d.rolloutGroup)).toEqual(['canary']);
    expect(report.findings).toEqual([]);
    const canary = agent.daemonSets[0];
    if (kind === 'GpuDriverDaemonSet') {
      // OnDelete: the plan says nothing happens until the pod is deleted
      expect(canary.rollout).toMatchObject({ batches: 0, note: expect.stringContaining('nothing happens until the pods are deleted') });
      expect(agent.manual).toEqual([canary.id]);
    } else {
      expect(canary.rollout).toMatchObject({ batches: 1, podsAtOnce: 1 });
      expect(agent.seconds).toBe(canary.rollout!.seconds);
    }
  });
});
