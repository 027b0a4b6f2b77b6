/**
 * Resource profiles: one DaemonSet per profile and rollout wave, whose node affinity makes the profiles a partition
 * of the nodes (the first profile matching a node owns it, the default profile every node matching none), with the
 * anti-affinity that keeps a node changing profile from running two pods, and the node tools reading a profile's
 * DaemonSets as part of their wave.
 */
import { Chart, Testing } from 'cdk8s';
import {
  AgentRelease, FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeAgentDaemonSetProps, Promotion,
  ResourceProfileNodes, RolloutWave,
} from '../../src';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { antiAffinitySeparates } from '../../src/cli/coverage/pod-affinity';
import { estimateRollout } from '../../src/cli/estimate/estimate';
import { planChange } from '../../src/cli/plan/plan';
import { termsMatch } from '../../src/scheduling/node-affinity';
import { DEFAULT_PROFILE, profileTerms } from '../../src/waves/profiles';
import { Manifest, synthManifests } from '../util/manifests';
import { inventory, tree } from '../util/plan';

const CPU = 'karpenter.k8s.aws/instance-cpu';
const POOL = 'karpenter.sh/nodepool';

function agent(extra: Partial<NodeAgentDaemonSetProps> = {}): NodeAgentDaemonSetProps {
  return { name: 'logs', namespace: 'observability', image: 'ghcr.io/acme/logs:1.0.0', ...extra };
}

function render(props: NodeAgentDaemonSetProps): Manifest[] {
  const chart = new Chart(Testing.app(), 'profiles');
  new NodeAgentDaemonSet(chart, 'logs', props);
  return synthManifests(chart);
}

const daemonSets = (manifests: Manifest[]) => manifests.filter((m) => m.kind === 'DaemonSet');
const PROFILES = [
  { name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 16 }), resources: { memoryRequest: '450Mi', memoryLimit: '900Mi' } },
  { name: 'medium', nodes: ResourceProfileNodes.instanceCpu({ min: 4, max: 15 }), resources: { memoryRequest: '256Mi', memoryLimit: '512Mi' } },
  { name: 'gpu', nodes: ResourceProfileNodes.nodePools(['gpu']), resources: { memoryRequest: '300Mi', memoryLimit: '600Mi' } },
];

describe('the partition (k8s.io/apimachinery labels/selector.go Requirement.Matches: In, NotIn, DoesNotExist, Gt, Lt)', () => {
  const groups = profileTerms(PROFILES.map((p) => p.nodes._toSpec(p.name)), [{ matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] }]);
  const owner = (labels: Record<string, string>) => groups.filter((g) => termsMatch(g.terms, { name: 'n', labels: { 'kubernetes.io/os': 'linux', ...labels } })).map((g) => g.name);

  test.each([
    [{ [CPU]: '64' }, 'large'], [{ [CPU]: '16' }, 'large'], [{ [CPU]: '15' }, 'medium'], [{ [CPU]: '4' }, 'medium'], [{ [CPU]: '2' }, DEFAULT_PROFILE],
    [{}, DEFAULT_PROFILE], [{ [POOL]: 'gpu' }, 'gpu'], [{ [POOL]: 'gpu', [CPU]: '2' }, 'gpu'],
    // the first profile matching a node owns it
    [{ [POOL]: 'gpu', [CPU]: '32' }, 'large'], [{ [POOL]: 'general', [CPU]: '8' }, 'medium'], [{ [POOL]: 'general' }, DEFAULT_PROFILE],
  ])('a node labelled %j is owned by %s alone', (labels, profile) => {
    expect(owner(labels)).toEqual([profile]);
  });

  test('a node whose range label is not an integer matches no profile (the scheduler\'s integer parse fails): the one documented exception', () => {
    expect(owner({ [CPU]: 'sixteen' })).toEqual([]);
  });

  test('a gap between ranges belongs to the default profile', () => {
    const gapped = profileTerms([{ name: 'small', key: CPU, max: 2 }, { name: 'big', key: CPU, min: 32 }], []);
    const of = (cpu: string) => gapped.filter((g) => termsMatch(g.terms, { name: 'n', labels: { [CPU]: cpu } })).map((g) => g.name);
    expect([of('1'), of('2'), of('3'), of('31'), of('32')]).toEqual([['small'], ['small'], [DEFAULT_PROFILE], [DEFAULT_PROFILE], ['big']]);
  });
});

describe('rendering', () => {
  const manifests = render(agent({
    resourceProfiles: PROFILES,
    rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all() },
  }));
  const sets = daemonSets(manifests);

  test('one DaemonSet per profile and wave, the default profile keeping the names it has without profiles', () => {
    expect(sets.map((d) => d.metadata.name)).toEqual(['logs-canary', 'logs-large-canary', 'logs-medium-canary', 'logs-gpu-canary', 'logs', 'logs-large', 'logs-medium', 'logs-gpu']);
    expect(sets.map((d) => d.spec.template.metadata.labels['node-agents.cdk8s.io/rollout-group']))
      .toEqual(['canary', 'canary.large', 'canary.medium', 'canary.gpu', 'fleet', 'fleet.large', 'fleet.medium', 'fleet.gpu']);
    expect(sets.map((d) => d.metadata.annotations['node-agents.cdk8s.io/resource-profile']))
      .toEqual(['default', 'large', 'medium', 'gpu', 'default', 'large', 'medium', 'gpu']);
  });

  test('each profile\'s pods get its resources; the default keeps the agent\'s', () => {
    const memory = Object.fromEntries(sets.map((d) => [d.metadata.name, d.spec.template.spec.containers[0].resources.requests.memory]));
    expect(memory).toMatchObject({ 'logs': '128Mi', 'logs-large': '450Mi', 'logs-large-canary': '450Mi', 'logs-medium': '256Mi', 'logs-gpu': '300Mi' });
  });

  test('every two DaemonSets of the agent keep each other\'s pods off a node (a node changing profile or wave never runs two pods)', () => {
    const infos = tree(manifests).daemonSets;
    for (const a of infos) {
      for (const b of infos) if (a.id !== b.id) expect(antiAffinitySeparates(a, b)).toBe(true);
    }
  });

  test('profiles without waves still get the anti-affinity', () => {
    const infos = tree(render(agent({ resourceProfiles: PROFILES.slice(0, 1) }))).daemonSets;
    expect(infos.map((d) => d.name)).toEqual(['logs', 'logs-large']);
    expect(antiAffinitySeparates(infos[0], infos[1])).toBe(true);
  });

  test('no profiles, or an empty list: the output an agent without profiles has', () => {
    expect(JSON.stringify(render(agent({ resourceProfiles: [] })))).toEqual(JSON.stringify(render(agent())));
  });
});

describe('refusals', () => {
  const refused = (resourceProfiles: NodeAgentDaemonSetProps['resourceProfiles'], extra: Partial<NodeAgentDaemonSetProps> = {}) =>
    expect(() => render(agent({ resourceProfiles, ...extra })));

  test('profiles on one label must be disjoint', () => {
    refused([
      { name: 'a', nodes: ResourceProfileNodes.instanceCpu({ min: 8 }) },
      { name: 'b', nodes: ResourceProfileNodes.instanceCpu({ min: 4, max: 8 }) },
    ]).toThrow(/resourceProfiles\[1\] \("b"\) and resourceProfiles\[0\] \("a"\) both select nodes by "karpenter.k8s.aws\/instance-cpu" \(\[4, 8\] and \[8, ∞\] overlap\)/);
    refused([
      { name: 'a', nodes: ResourceProfileNodes.instanceTypes(['m5.large', 'm5.xlarge']) },
      { name: 'b', nodes: ResourceProfileNodes.instanceTypes(['m5.xlarge']) },
    ]).toThrow(/"m5.xlarge"/);
  });

  test('names: DNS labels, unique, not "default", and DaemonSet names of 57 characters at most', () => {
    refused([{ name: 'default', nodes: ResourceProfileNodes.nodePools(['x']) }]).toThrow(/"default" is reserved/);
    refused([{ name: 'a', nodes: ResourceProfileNodes.nodePools(['x']) }, { name: 'a', nodes: ResourceProfileNodes.nodePools(['y']) }]).toThrow(/given twice/);
    refused([{ name: 'Big', nodes: ResourceProfileNodes.nodePools(['x']) }]).toThrow(/not a DNS-1123 label/);
    refused([{ name: 'p'.repeat(46), nodes: ResourceProfileNodes.nodePools(['x']) }], { rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all() } })
      .toThrow(/has 58 characters; at most 57/);
  });

  test('a label either with values or with bounds; a range needs a bound', () => {
    refused([
      { name: 'a', nodes: ResourceProfileNodes.labelValues('size', ['big']) },
      { name: 'b', nodes: ResourceProfileNodes.labelRange('size', { min: 3 }) },
    ]).toThrow(/used both with values and with numeric bounds/);
    refused([{ name: 'a', nodes: ResourceProfileNodes.instanceCpu({}) }]).toThrow(/give a lower bound, an upper bound or both/);
    refused([{ name: 'a', nodes: ResourceProfileNodes.instanceCpu({ min: 8, max: 4 }) }]).toThrow(/min 8 is above max 4/);
  });

  test('a profile\'s resources are checked like the agent\'s, naming the profile', () => {
    refused([{ name: 'big', nodes: ResourceProfileNodes.nodePools(['x']), resources: { memoryRequest: '1Gi', memoryLimit: '512Mi' } }])
      .toThrow(/resourceProfiles\[0\]\.resources memory: the request 1Gi is above the limit 512Mi/);
    refused([{ name: 'big', nodes: ResourceProfileNodes.nodePools(['x']), resources: { memoryRequest: 'lots' } }])
      .toThrow(/resourceProfiles\[0\]\.resources\.memoryRequest/);
  });

  test('fluent-bit buffer sizes only on the log collector', () => {
    refused([{ name: 'big', nodes: ResourceProfileNodes.nodePools(['x']), storageMaxChunksUp: 128 }]).toThrow(/only LogCollectorDaemonSet reads them/);
  });

  test('the previous release cannot have another partition', () => {
    const previous = AgentRelease.fromProps(agent({ image: 'ghcr.io/acme/logs:0.9.0', resourceProfiles: [{ name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 32 }) }] }));
    refused(PROFILES.slice(0, 1), { rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.through('canary'), previous } })
      .toThrow(/rollout.previous has resourceProfiles whose names or nodes differ/);
  });
});

describe('the log collector sizes its buffers per profile', () => {
  const chart = new Chart(Testing.app(), 'logs');
  new LogCollectorDaemonSet(chart, 'logs', {
    outputs: [FluentBitOutput.stdout()],
    alerts: {},
    resourceProfiles: [{ name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 16 }), storageMaxChunksUp: 192, resources: { memoryLimit: '1Gi' } }],
    rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all(), argoCdSyncWaves: true, gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus:9090' }] },
  });
  const manifests = synthManifests(chart);
  const configOf = (name: string) => {
    const ds = manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === name)!;
    const volume = ds.spec.template.spec.volumes.find((v: Manifest) => v.name === 'config');
    return manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === volume.configMap.name)!.data['fluent-bit.conf'];
  };

  test('the profile gets a config (and ConfigMap) of its own; the default keeps the collector\'s', () => {
    expect(configOf('log-collector-large')).toMatch(/storage.max_chunks_up\s+192/);
    expect(configOf('log-collector-large-canary')).toMatch(/storage.max_chunks_up\s+192/);
    expect(configOf('log-collector')).toMatch(/storage.max_chunks_up\s+64/);
  });

  test('buffers that would not fit the profile\'s memory limit are refused', () => {
    expect(() => new LogCollectorDaemonSet(new Chart(Testing.app(), 'x'), 'logs', {
      outputs: [FluentBitOutput.stdout()],
      resourceProfiles: [{ name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 16 }), storageMaxChunksUp: 256 }],
    })).toThrow(/256 chunks of about 2 MB in memory plus a 5M backlog need about 517Mi, not below the memory limit 512Mi/);
  });

  test('the alerts cover every profile\'s DaemonSets', () => {
    const rule = manifests.find((m) => m.kind === 'PrometheusRule')!;
    expect(JSON.stringify(rule)).toContain('daemonset=~\\"log-collector(-large)?(-canary)?\\"');
  });

  test('the gate after the canary checks every profile\'s canary DaemonSet', () => {
    const job = manifests.find((m) => m.kind === 'Job')!;
    const env = job.spec.template.spec.containers[0].env as Manifest[];
    const expr = env.find((e) => e.name === 'CHECK_2_EXPR')!.value;
    expect(expr).toBe('kube_daemonset_status_number_unavailable{job="kube-state-metrics",namespace="observability",daemonset=~"log-collector-canary|log-collector-large-canary"} > 0');
    expect(env.find((e) => e.name === 'CHECK_5_EXPR')!.value).toContain('pod=~"(log-collector-canary|log-collector-large-canary)-[a-z0-9]{5}"');
  });
});

describe('the node tools read a profile\'s DaemonSets as part of its wave', () => {
  const manifests = render(agent({
    resourceProfiles: PROFILES,
    rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all(), argoCdSyncWaves: true },
  }));
  const nodes = inventory([
    { name: 'small-1', wave: 'canary', labels: { [CPU]: '2' } }, { name: 'small-2', labels: { [CPU]: '2' } },
    { name: 'large-1', labels: { [CPU]: '32' } }, { name: 'large-2', labels: { [CPU]: '32' } },
  ]);

  test('coverage: each node owned once; an unused profile (no node) is no empty wave, a used one without a canary node is', () => {
    const report = analyzeCoverage(tree(manifests).daemonSets, nodes);
    expect(report.agents[0].counts.covered).toBe(4);
    const empty = report.problems.filter((p) => p.kind === 'empty-wave');
    // medium and gpu have no node at all; large has two, none in the canary
    expect(empty.map((p) => p.daemonSets)).toEqual([['observability/logs-large-canary']]);
  });

  test('coverage: a node whose range label is not an integer, which no profile and not the default can take, is a gap (not a silent "not selected")', () => {
    const odd = inventory([...[{ name: 'ok', labels: { [CPU]: '2' } }], { name: 'odd', labels: { [CPU]: 'sixteen' } }]);
    const report = analyzeCoverage(tree(manifests).daemonSets, odd);
    const gap = report.problems.find((p) => p.kind === 'gap')!;
    expect(gap.nodes).toEqual(['odd']);
    expect(gap.message).toContain('their label karpenter.k8s.aws/instance-cpu=sixteen is not an integer');
  });

  test('estimate: a wave\'s profiles roll in parallel, one bake between waves', () => {
    const report = analyzeCoverage(tree(manifests).daemonSets, nodes);
    const [estimate] = estimateRollout(report.daemonSets, { podSeconds: 30, bakeSeconds: 600 });
    // canary: small-1 (one at a time, 40 s); fleet: small-2 and the large nodes in parallel, 25% batches of 1 → 40 s; one bake
    expect(estimate.bakes).toBe(1);
    expect(estimate.totalSeconds).toBe(40 + 600 + 80);
  });
});

describe('a profile change replaces exactly that profile\'s nodes', () => {
  const nodes = inventory([
    { name: 'a', labels: { [CPU]: '2' } }, { name: 'b', labels: { [CPU]: '8' } }, { name: 'c', labels: { [CPU]: '32' } },
    { name: 'd', labels: { [CPU]: '64' } }, { name: 'e', labels: { [POOL]: 'gpu', [CPU]: '8' } },
  ]);
  const stage = (largeMemory: string) => tree(render(agent({
    resourceProfiles: [{ ...PROFILES[0], resources: { memoryRequest: largeMemory, memoryLimit: '1Gi' } }, ...PROFILES.slice(1)],
    rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all() },
  })));

  test('only the large profile\'s DaemonSets change, and only its nodes restart', () => {
    const report = planChange(stage('450Mi'), stage('500Mi'), nodes);
    const plan = report.agents[0];
    expect(plan.daemonSets.filter((d) => d.change !== 'unchanged').map((d) => d.id)).toEqual(['observability/logs-large-canary', 'observability/logs-large']);
    expect(plan.replaced).toEqual(['c', 'd']);
    expect(plan.moved.length + plan.gained.length + plan.lost.length).toBe(0);
    expect(report.findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});

describe('the GPU driver\'s runbook covers every profile\'s DaemonSet', () => {
  const chart = new Chart(Testing.app(), 'gpu');
  const driver = new GpuDriverDaemonSet(chart, 'nvidia', {
    image: 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04',
    shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 30 * 60 }),
    resourceProfiles: [{ name: 'multi', nodes: ResourceProfileNodes.labelRange('karpenter.k8s.aws/instance-gpu-count', { min: 4 }), resources: { memoryRequest: '2Gi', memoryLimit: '4Gi' } }],
  });

  test('one section per DaemonSet, each selecting its own pods', () => {
    const runbook = driver.runbook();
    expect(runbook).toContain('# Profile `fleet`');
    expect(runbook).toContain('# Profile `fleet.multi`');
    expect(driver.runbookScript({ group: 'fleet.multi' })).toContain('node-agents.cdk8s.io/rollout-group=fleet.multi');
  });
});
