/**
 * Readiness taints with resource profiles: `resourceProfiles` renders one DaemonSet per profile and rollout wave, and
 * every one of them belongs to the agent's release of its wave. Each profile DaemonSet of a wave that runs a release
 * with `readinessTaint` tolerates the taint and runs the remover (they all remove it); the tools read a profile's
 * DaemonSets as part of their wave: a profile DaemonSet is no held group, no gap and no orphan because it is another
 * profile. The rollouts are walked stage by stage (before, canary, wave-1, fleet, done) and `plan`'s verdicts are
 * checked against test/util/taint-model.ts, written from pkg/controller/daemon/daemon_controller.go
 * NodeShouldRunDaemonPod's predicates (fitsNodeAffinity over the profiles' Gt/Lt/NotIn terms, fitsTaints) and the
 * scheduler's pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go TaintToleration.Filter.
 */
import { Chart, Testing } from 'cdk8s';
import {
  AgentRelease, FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeAgentDaemonSetProps,
  NodeExporterDaemonSet, Promotion, ResourceProfileNodes, RolloutWave,
} from '../../src';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { ManifestSet } from '../../src/cli/coverage/manifests';
import { readinessTaintGaps, uncoveredReadinessTaints } from '../../src/cli/coverage/readiness-taint-gaps';
import { withReadinessTaintProblems } from '../../src/cli/coverage/readiness-taints';
import { diagnose } from '../../src/cli/doctor/diagnose';
import { StateBuilder } from '../../src/cli/doctor/state';
import { REMOVER_CONTAINER, READINESS_TAINT_ANNOTATION } from '../../src/scheduling/readiness-taint';
import { TaintJson } from '../../src/scheduling/types';
import { agentPod, list, node, revision } from '../util/cluster';
import { Manifest, synthManifests } from '../util/manifests';
import { inventory, TestNode, tree, WAVE_KEY } from '../util/plan';
import { closedNodes, daemonPodCreated, removedTaintKey } from '../util/taint-model';
import { EMPTY_STAGE, freshInstall, modelNodes, summary, walk } from '../util/taint-walk';

const KEY = 'node-agents.cdk8s.io/scanner-not-ready';
const TAINT: TaintJson = { key: KEY, effect: 'NoSchedule' };
const CPU = 'karpenter.k8s.aws/instance-cpu';
const POOL = 'karpenter.sh/nodepool';
const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
const PROFILES: NodeAgentDaemonSetProps['resourceProfiles'] = [
  { name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 16 }), resources: { memoryRequest: '450Mi', memoryLimit: '900Mi' } },
  { name: 'gpu', nodes: ResourceProfileNodes.nodePools(['gpu']), resources: { memoryRequest: '300Mi', memoryLimit: '600Mi' } },
];
const V1: NodeAgentDaemonSetProps = { name: 'scanner', image: 'example.com/scanner:1.0.0', resourceProfiles: PROFILES };
const V2: NodeAgentDaemonSetProps = { ...V1, image: 'example.com/scanner:2.0.0', readinessTaint: { key: KEY } };
const V3: NodeAgentDaemonSetProps = { ...V1, image: 'example.com/scanner:3.0.0' };
const STAGES = ['before', 'canary', 'wave-1', 'fleet', 'done'] as const;
type Stage = typeof STAGES[number];
const PROMOTED: Record<Stage, Promotion> = {
  'before': Promotion.all(), 'canary': Promotion.through('canary'), 'wave-1': Promotion.through('wave-1'), 'fleet': Promotion.all(), 'done': Promotion.all(),
};

interface Rendered {
  readonly manifests: Manifest[];
  readonly set: ManifestSet;
  readonly agent: NodeAgentDaemonSet;
}

/** One stage of a rollout from `from` to `to` over the waves (`previous` from the canary stage to the fleet one). */
function stage(from: NodeAgentDaemonSetProps, to: NodeAgentDaemonSetProps, at: Stage): Rendered {
  const chart = new Chart(Testing.app(), 'stage');
  const props = at === 'before' ? from : to;
  const previous = at === 'before' || at === 'done' ? undefined : AgentRelease.fromProps(from);
  const agent = new NodeAgentDaemonSet(chart, 'scanner', { ...props, rollout: { waves: WAVES, promoted: PROMOTED[at], previous } });
  const manifests = synthManifests(chart);
  return { manifests, set: tree(manifests), agent };
}

const daemonSets = (manifests: readonly Manifest[]) => manifests.filter((m) => m.kind === 'DaemonSet');
const names = (manifests: readonly Manifest[]) => daemonSets(manifests).map((d) => d.metadata.name);

/** For each wave: a node of each profile (default, large by its CPU count, gpu by its node pool), and one of each that joined with the taint. */
const GROUP_NODES: [string, string | undefined][] = [['canary', 'canary'], ['wave1', 'wave-1'], ['fleet', undefined]];
const PROFILE_LABELS: [string, Record<string, string>][] = [['', { [CPU]: '4' }], ['large-', { [CPU]: '32' }], ['gpu-', { [POOL]: 'gpu', [CPU]: '8' }]];
const NODES: TestNode[] = GROUP_NODES.flatMap(([prefix, wave]) => PROFILE_LABELS.flatMap(([profile, labels]) => [
  { name: `${prefix}-${profile}1`, wave, labels },
  { name: `${prefix}-${profile}new`, wave, labels, taints: [TAINT] },
]));
const UNTAINTED: TestNode[] = NODES.map((n) => ({ ...n, taints: [] }));
const TAINTED = NODES.filter((n) => (n.taints ?? []).length > 0).map((n) => n.name).sort();

describe('rendering: every profile DaemonSet of every wave of a release with readinessTaint removes the taint', () => {
  function removes(ds: Manifest): boolean {
    const pod = ds.spec.template.spec;
    const tolerates = (pod.tolerations ?? []).some((t: Manifest) => (t.key === KEY || t.key === undefined) && t.operator === 'Exists'
      && (t.effect === undefined || t.effect === 'NoSchedule'));
    const remover = pod.containers.find((c: Manifest) => c.name === REMOVER_CONTAINER);
    const token = (pod.volumes ?? []).some((v: Manifest) => v.name === 'readiness-taint-token');
    return ds.metadata.annotations?.[READINESS_TAINT_ANNOTATION] === `${KEY}:NoSchedule` && tolerates && removedTaintKey(ds) === KEY
      && token && remover.volumeMounts.some((m: Manifest) => m.name === 'readiness-taint-token');
  }

  test('all promoted: the nine DaemonSets (three waves by three profiles) tolerate it, run the remover, carry the annotation; one access for all', () => {
    const { manifests, agent } = stage(V1, V2, 'done');
    expect(names(manifests)).toEqual([
      'scanner-canary', 'scanner-large-canary', 'scanner-gpu-canary', 'scanner-wave-1', 'scanner-large-wave-1', 'scanner-gpu-wave-1',
      'scanner', 'scanner-large', 'scanner-gpu',
    ]);
    expect(daemonSets(manifests).filter((d) => !removes(d)).map((d) => d.metadata.name)).toEqual([]);
    // the profiles' own resources stay
    const memory = (name: string) => daemonSets(manifests).find((d) => d.metadata.name === name)
      .spec.template.spec.containers[0].resources.requests.memory;
    expect([memory('scanner-large-wave-1'), memory('scanner-gpu')]).toEqual(['450Mi', '300Mi']);
    // one ServiceAccount for every DaemonSet: one policy, one binding, one grant
    expect(manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy')).toHaveLength(1);
    expect(manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicyBinding')).toHaveLength(1);
    expect(new Set(daemonSets(manifests).map((d) => d.spec.template.spec.serviceAccountName)).size).toBe(1);
    const grants = manifests.filter((m) => m.kind === 'ClusterRole').flatMap((r) => r.rules).filter((r: Manifest) => r.resources.includes('nodes'));
    expect(grants.flatMap((r: Manifest) => r.verbs)).toContain('patch');
    expect(agent.karpenterStartupTaint()).toEqual(TAINT);
  });

  test('the canary promoted: its three profile DaemonSets remove it, the six held ones keep the previous release (neither toleration nor remover)', () => {
    const { manifests, agent } = stage(V1, V2, 'canary');
    const removing = daemonSets(manifests).filter(removes).map((d) => d.metadata.name);
    expect(removing).toEqual(['scanner-canary', 'scanner-large-canary', 'scanner-gpu-canary']);
    for (const held of daemonSets(manifests).filter((d) => !removing.includes(d.metadata.name))) {
      expect(held.metadata.annotations?.[READINESS_TAINT_ANNOTATION]).toBeUndefined();
      expect(held.spec.template.spec.containers.map((c: Manifest) => c.name)).toEqual(['scanner']);
    }
    // the access is rendered from the canary stage on (the union of both releases' needs)
    expect(manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy')).toHaveLength(1);
    expect(agent.karpenterStartupTaint()).toBeUndefined();
  });

  test('karpenterStartupTaint() only from the stage on where every profile DaemonSet of every group removes it', () => {
    expect(STAGES.map((s) => stage(V1, V2, s).agent.karpenterStartupTaint())).toEqual([undefined, undefined, undefined, TAINT, TAINT]);
    expect(STAGES.map((s) => stage(V2, V3, s).agent.karpenterStartupTaint())).toEqual([TAINT, undefined, undefined, undefined, undefined]);
  });

  test('the model: on a tainted node of each profile, the DaemonSet of its profile and wave creates its pod and it removes the taint', () => {
    const { manifests } = stage(V1, V2, 'done');
    for (const n of modelNodes(NODES).filter((x) => x.taints.length > 0)) {
      const owners = daemonSets(manifests).filter((d) => daemonPodCreated(d, n)).map((d) => d.metadata.name);
      expect(owners).toHaveLength(1);
    }
    expect(closedNodes(modelNodes(NODES), manifests)).toEqual([]);
  });

  const LARGE = { name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 16 }), resources: { memoryRequest: '256Mi', memoryLimit: '1Gi' } };
  const rollout = { waves: WAVES, promoted: Promotion.all() };
  test.each<[string, (chart: Chart) => unknown]>([
    ['LogCollectorDaemonSet', (chart) => new LogCollectorDaemonSet(chart, 'a', {
      outputs: [FluentBitOutput.stdout()], readinessTaint: { key: KEY }, resourceProfiles: [LARGE], rollout,
    })],
    ['NodeExporterDaemonSet', (chart) => new NodeExporterDaemonSet(chart, 'a', { readinessTaint: { key: KEY }, resourceProfiles: [LARGE], rollout })],
    ['GpuDriverDaemonSet', (chart) => new GpuDriverDaemonSet(chart, 'a', {
      image: 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04',
      shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 1800 }),
      readinessTaint: { key: KEY },
      rollout,
      resourceProfiles: [{ name: 'multi', nodes: ResourceProfileNodes.labelRange('karpenter.k8s.aws/instance-gpu-count', { min: 4 }), resources: { memoryRequest: '2Gi', memoryLimit: '4Gi' } }],
    })],
  ])('%s with a profile and waves: its six DaemonSets all remove it', (_kind, build) => {
    const chart = Testing.chart();
    build(chart);
    const manifests = synthManifests(chart);
    expect(daemonSets(manifests)).toHaveLength(6);
    expect(daemonSets(manifests).filter((d) => !removes(d)).map((d) => d.metadata.name)).toEqual([]);
    expect(manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy')).toHaveLength(1);
  });
});

describe('coverage: the profile DaemonSets of one agent are one agent', () => {
  test('every profile DaemonSet tolerates the taint: no never-starts wait; the gaps and uncovered nodes are empty once all remove it', () => {
    const { set } = stage(V1, V2, 'done');
    const report = withReadinessTaintProblems(set, analyzeCoverage(set.daemonSets, inventory(NODES)));
    expect(report.problems.filter((p) => p.kind === 'never-starts')).toEqual([]);
    expect(readinessTaintGaps(set, inventory(NODES))).toEqual([]);
    expect(uncoveredReadinessTaints(set, inventory(NODES))).toEqual([]);
  });

  test('part way: the gap is the held waves\' profile DaemonSets, never another profile of a promoted wave', () => {
    const { set } = stage(V1, V2, 'canary');
    const [gap] = readinessTaintGaps(set, inventory(NODES));
    expect(gap.direction).toBe('held');
    // in wave order, each wave's default profile first (its group label is the wave alone)
    expect(gap.removers.map((r) => r.group)).toEqual(['canary', 'canary.gpu', 'canary.large']);
    expect(gap.gaps.map((d) => d.group)).toEqual(['wave-1', 'wave-1.gpu', 'wave-1.large', 'fleet', 'fleet.gpu', 'fleet.large']);
    expect(gap.nodes).toEqual(TAINTED.filter((n) => !n.startsWith('canary')));
  });
});

describe('plan: a rollout that enables the readiness taint over waves and profiles', () => {
  test('node pools list it from the start: the held profile DaemonSets are named, and each step\'s nodes are those the model leaves closed', () => {
    const steps = walk(STAGES.map((s) => stage(V1, V2, s)), NODES);
    expect(steps[0].findings.map(summary)).toEqual([['readiness-taint-held', 'error', [
      'kube-system/scanner-wave-1', 'kube-system/scanner-gpu-wave-1', 'kube-system/scanner-large-wave-1',
      'kube-system/scanner', 'kube-system/scanner-gpu', 'kube-system/scanner-large',
    ], TAINTED.filter((n) => !n.startsWith('canary'))]]);
    expect(steps[0].findings[0].message).toContain('held rollout groups wave-1, wave-1.gpu, wave-1.large, fleet, fleet.gpu, fleet.large');
    expect(steps[1].findings.map(summary)).toEqual([['readiness-taint-held', 'warning',
      ['kube-system/scanner', 'kube-system/scanner-gpu', 'kube-system/scanner-large'], ['fleet-gpu-new', 'fleet-large-new', 'fleet-new']]]);
    expect(steps.slice(2).map((s) => s.findings)).toEqual([[], []]);
    expect(steps.map((s) => s.findings.flatMap((f) => f.nodes).sort())).toEqual(steps.map((s) => s.closed));
  });

  test('the taint kept out of the node pools until done: no node closed; warnings name only held groups', () => {
    const steps = walk(STAGES.map((s) => stage(V1, V2, s)), UNTAINTED);
    expect(steps.map((s) => s.closed)).toEqual([[], [], [], []]);
    expect(steps.map((s) => s.findings.map((f) => [f.cause, f.severity, f.daemonSets.length]))).toEqual([
      [['readiness-taint-held', 'warning', 6]], [['readiness-taint-held', 'warning', 3]], [], [],
    ]);
  });

  test('a release that keeps the taint, rolled out over waves and profiles: every DaemonSet removes it at every step, no finding', () => {
    const V2b = { ...V2, image: 'example.com/scanner:2.1.0' };
    const steps = walk(STAGES.map((s) => stage(V2, V2b, s)), NODES);
    expect(steps.map((s) => s.all.filter((f) => f.cause.startsWith('readiness-taint') || f.cause === 'toleration'))).toEqual([[], [], [], []]);
    expect(steps.map((s) => s.closed)).toEqual([[], [], [], []]);
  });

  test('a profile removed or added with the taint kept: its nodes change DaemonSet, the taint is not orphaned and no node is closed', () => {
    const withTaint = (profiles: NodeAgentDaemonSetProps['resourceProfiles']) => {
      const chart = new Chart(Testing.app(), 'p');
      const agent = new NodeAgentDaemonSet(chart, 'scanner', { ...V2, resourceProfiles: profiles, rollout: { waves: WAVES, promoted: Promotion.all() } });
      const manifests = synthManifests(chart);
      return { manifests, set: tree(manifests), agent };
    };
    const steps = walk([withTaint(PROFILES), withTaint(PROFILES!.slice(0, 1)), withTaint(PROFILES)], NODES);
    expect(steps.map((s) => s.findings)).toEqual([[], []]);
    expect(steps.map((s) => s.closed)).toEqual([[], []]);
  });

  test('a new agent installed wave by wave: the tainted nodes of every profile of the groups not rendered yet are uncovered, no other', () => {
    const fresh = (promoted: Promotion) => freshInstall(V2, WAVES, promoted);
    const empty = EMPTY_STAGE;
    const steps = walk([empty, fresh(Promotion.through('canary')), fresh(Promotion.all())], NODES);
    expect(steps.map((s) => s.findings.map(summary))).toEqual([
      [['readiness-taint-uncovered', 'error', ['kube-system/scanner-canary', 'kube-system/scanner-gpu-canary', 'kube-system/scanner-large-canary'],
        TAINTED.filter((n) => !n.startsWith('canary'))]],
      [],
    ]);
    expect(steps.map((s) => s.closed)).toEqual([TAINTED.filter((n) => !n.startsWith('canary')), []]);
  });

  test('the agent deleted while the node pools still list it: one orphaned finding naming every profile DaemonSet', () => {
    const done = stage(V1, V2, 'done');
    const empty = { manifests: [], set: tree([]), agent: undefined as unknown as NodeAgentDaemonSet };
    const [step] = walk([done, empty], NODES);
    expect(step.findings.map((f) => [f.cause, f.severity, f.daemonSets.length, [...f.nodes]])).toEqual([['readiness-taint-orphaned', 'error', 9, TAINTED]]);
  });
});

describe('plan: a rollout that drops the readiness taint over waves and profiles', () => {
  test('node pools still list it: every profile DaemonSet of the promoted waves is named, held profile DaemonSets are the removers', () => {
    const steps = walk(STAGES.map((s) => stage(V2, V3, s)), NODES);
    expect(steps[0].findings.map(summary)).toEqual([['readiness-taint-dropped', 'error',
      ['kube-system/scanner-canary', 'kube-system/scanner-gpu-canary', 'kube-system/scanner-large-canary'], ['canary-gpu-new', 'canary-large-new', 'canary-new']]]);
    expect(steps[0].findings[0].message).toContain('which its held groups wave-1, wave-1.gpu, wave-1.large, fleet, fleet.gpu, fleet.large still remove; '
      + 'nor do they tolerate it: the DaemonSet controller creates no pod of theirs on a node with the taint.');
    expect(steps[2].findings.map((f) => [f.cause, f.daemonSets.length])).toEqual([['readiness-taint-orphaned', 3]]);
    expect(steps.map((s) => s.closed)).toEqual([
      TAINTED.filter((n) => n.startsWith('canary')), TAINTED.filter((n) => !n.startsWith('fleet')), TAINTED, TAINTED,
    ]);
  });
});

describe('doctor: a profile DaemonSet is diagnosed like a wave\'s', () => {
  /** A dump of the cluster at a stage: the DaemonSets with their revisions (`current` the hash of their template), nodes and pods. */
  function report(at: Stage, nodes: Manifest[], pods: (dsOf: (name: string) => Manifest) => Manifest[], agent?: string) {
    const { manifests } = stage(V1, V2, at);
    const items: Manifest[] = [...nodes];
    for (const ds of daemonSets(manifests)) items.push(ds, revision(ds, 'v1', 1), revision(ds, 'v2', 2));
    const dsOf = (name: string) => daemonSets(manifests).find((d) => d.metadata.name === name)!;
    items.push(...pods(dsOf));
    const builder = new StateBuilder();
    builder.addDocument(list(items), 'test');
    return diagnose(builder.finish('test'), agent === undefined ? {} : { agent });
  }
  const large = (name: string, wave?: string, taints: Manifest[] = []) => node(name, { labels: { [CPU]: '32', ...(wave ? { [WAVE_KEY]: wave } : {}) }, taints });

  test('a held wave\'s profile DaemonSet on a node carrying the taint: the finding names scanner-large-wave-1, not the default profile\'s', () => {
    const r = report('canary', [large('wave1-large-new', 'wave-1', [TAINT])], () => []);
    const f = r.findings.filter((x) => x.cause === 'readiness-taint');
    expect(f.map((x) => [x.node, x.daemonSet, x.severity])).toEqual([['wave1-large-new', 'kube-system/scanner-large-wave-1', 'error']]);
    expect(f[0].message).toContain('kube-system/scanner-large-wave-1 (rollout group "wave-1.large") selects the node but runs a release without this readiness taint');
  });

  test('the stuck rolling update of a profile DaemonSet: the held budget, the old-revision pod without the remover on the tainted node, both named with that DaemonSet', () => {
    // scanner-large (the fleet's large profile, promoted to the release with the taint) on three large nodes: one runs
    // a current pod that is not Ready (it holds the budget of maxUnavailable 1), two run old-revision pods (no remover)
    // and one of those joined with the taint
    const nodes = [large('fleet-large-1'), large('fleet-large-2'), large('fleet-large-3', undefined, [TAINT])];
    const r = report('done', nodes, (dsOf) => {
      const ds = dsOf('scanner-large');
      return [agentPod(ds, 'fleet-large-1', { hash: 'v2', ready: false }), agentPod(ds, 'fleet-large-2', { hash: 'v1' }), agentPod(ds, 'fleet-large-3', { hash: 'v1' })];
    }, 'scanner');
    const byCause = (cause: string) => r.findings.filter((x) => x.cause === cause).map((x) => [x.daemonSet, x.node, x.severity]);
    expect(byCause('not-ready')).toEqual([['kube-system/scanner-large', 'fleet-large-1', 'error']]);
    expect(byCause('old-revision')).toEqual([
      ['kube-system/scanner-large', 'fleet-large-2', 'error'], ['kube-system/scanner-large', 'fleet-large-3', 'error'],
    ]);
    expect(r.findings.find((x) => x.cause === 'old-revision')!.message).toContain('the update budget (maxUnavailable 25%) is held by fleet-large-1 (not-ready)');
    const [taint] = r.findings.filter((x) => x.cause === 'readiness-taint');
    expect(taint).toMatchObject({ severity: 'error', node: 'fleet-large-3', daemonSet: 'kube-system/scanner-large', pod: 'kube-system/scanner-large-fleet-large-3' });
    expect(taint.message).toContain('has no remover container: it runs a release without readinessTaint (a revision of kube-system/scanner-large older');
    // the health table: one row per DaemonSet of the agent, the profile's with what its rollout waits on
    const health = r.daemonSets.find((d) => d.daemonSet === 'kube-system/scanner-large')!;
    expect(health).toMatchObject({ agent: 'scanner', updated: 1, ready: 2 });
    expect(r.daemonSets).toHaveLength(9);
  });

  test('a Ready pod of a profile DaemonSet whose remover failed: the finding names that DaemonSet and its pod', () => {
    const r = report('done', [large('fleet-large-1', undefined, [TAINT])], (dsOf) => {
      const pod = agentPod(dsOf('scanner-large'), 'fleet-large-1', { hash: 'v2' });
      pod.status.containerStatuses.push({ name: REMOVER_CONTAINER, image: 'curl:1', ready: true, restartCount: 0, state: { running: {} } });
      return [pod];
    });
    const [f] = r.findings.filter((x) => x.cause === 'readiness-taint');
    expect(f).toMatchObject({ daemonSet: 'kube-system/scanner-large', pod: 'kube-system/scanner-large-fleet-large-1' });
    expect(f.message).toContain('its remover did not remove it');
  });

  test('no pod at all on a profile\'s tainted node: the finding names the profile DaemonSet that selects the node', () => {
    const r = report('done', [large('fleet-large-1', undefined, [TAINT])], () => []);
    const [f] = r.findings.filter((x) => x.cause === 'readiness-taint');
    expect(f).toMatchObject({ daemonSet: 'kube-system/scanner-large', node: 'fleet-large-1', pod: undefined });
  });
});
