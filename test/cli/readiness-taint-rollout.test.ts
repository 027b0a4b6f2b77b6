/**
 * Readiness taints across rollout waves. `readinessTaint` belongs to a release: a rollout that enables it leaves the
 * held groups on the previous release, whose DaemonSets neither tolerate the taint nor run the remover, and one
 * that drops it leaves the promoted groups without them. A node of such a group that joins with the taint (its node
 * pool lists it) keeps it, and takes no workload, until the group runs a release that removes it.
 *
 * Each rollout is walked stage by stage (before, canary, wave-1, fleet, done) and `plan`'s verdict at each step is
 * checked against test/util/taint-model.ts, written from the upstream functions: the DaemonSet controller's
 * NodeShouldRunDaemonPod predicates (pkg/controller/daemon/daemon_controller.go: fitsNodeAffinity and fitsTaints,
 * v1helper.FindMatchingUntoleratedTaint over NoSchedule and NoExecute, with AddOrUpdateDaemonPodTolerations), the
 * remover's TAINT_KEY, and the scheduler's TaintToleration plugin's Filter
 * (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go) for a workload without tolerations.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import * as YAML from 'yaml';
import { AgentRelease, NodeAgentDaemonSet, NodeAgentDaemonSetProps, Promotion, RolloutWave } from '../../src';
import { manifestSet, ManifestSet } from '../../src/cli/coverage/manifests';
import { diagnose } from '../../src/cli/doctor/diagnose';
import { StateBuilder } from '../../src/cli/doctor/state';
import { runCli } from '../../src/cli/run';
import { TaintJson } from '../../src/scheduling/types';
import { agentPod, list, node, revision } from '../util/cluster';
import { schemaProblems } from '../util/crd-schemas';
import { Manifest, synthManifests } from '../util/manifests';
import { TestNode, tree, WAVE_KEY } from '../util/plan';
import { closedNodes } from '../util/taint-model';
import { EMPTY_STAGE, freshInstall, modelNodes, summary, walk } from '../util/taint-walk';
import { upstream } from '../util/upstream';

const KEY = 'node-agents.cdk8s.io/scanner-not-ready';
const TAINT: TaintJson = { key: KEY, effect: 'NoSchedule' };
const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
const V1: NodeAgentDaemonSetProps = { name: 'scanner', image: 'example.com/scanner:1.0.0' };
const V2: NodeAgentDaemonSetProps = { ...V1, image: 'example.com/scanner:2.0.0', readinessTaint: { key: KEY } };
const V3: NodeAgentDaemonSetProps = { ...V1, image: 'example.com/scanner:3.0.0' };
const STAGES = ['before', 'canary', 'wave-1', 'fleet', 'done'] as const;
type Stage = typeof STAGES[number];

/** A Karpenter NodePool (karpenter.sh/v1) giving its nodes these startup taints. */
function nodePool(name: string, startupTaints: { key: string; effect: string }[]): Manifest {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      template: {
        spec: {
          nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' },
          requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
          ...(startupTaints.length > 0 ? { startupTaints } : {}),
        },
      },
    },
  };
}

interface Rendered {
  readonly manifests: Manifest[];
  readonly set: ManifestSet;
  readonly agent: NodeAgentDaemonSet;
}

/** One stage of a rollout from `from` to `to` over the waves; `pools`: the NodePools the tree holds (none: not in the tree). */
function stage(from: NodeAgentDaemonSetProps, to: NodeAgentDaemonSetProps, at: Stage, pools?: Manifest[],
  extra: Partial<NodeAgentDaemonSetProps> = {}): Rendered {
  const chart = new Chart(Testing.app(), 'stage');
  const promoted = { 'before': Promotion.all(), 'canary': Promotion.through('canary'), 'wave-1': Promotion.through('wave-1'), 'fleet': Promotion.all(), 'done': Promotion.all() }[at];
  const props = at === 'before' ? from : to;
  const previous = at === 'before' || at === 'done' ? undefined : AgentRelease.fromProps({ ...from, ...extra });
  const agent = new NodeAgentDaemonSet(chart, 'scanner', { ...props, ...extra, rollout: { waves: WAVES, promoted, previous } });
  const manifests = synthManifests(chart);
  const set = tree(manifests);
  // NodePools are not in the schema set the manifest check knows: added to the tree as plan reads them
  const withPools = pools === undefined ? set : manifestSet([...set.documents, ...pools.map((object) => ({ source: 'nodepools', object }))]);
  return { manifests, set: withPools, agent };
}

/** Two nodes per group; `new` ones joined with the taint (their node pool lists it). */
const NODES: TestNode[] = [
  { name: 'canary-1', wave: 'canary' }, { name: 'canary-new', wave: 'canary', taints: [TAINT] },
  { name: 'wave1-1', wave: 'wave-1' }, { name: 'wave1-new', wave: 'wave-1', taints: [TAINT] },
  { name: 'fleet-1' }, { name: 'fleet-new', taints: [TAINT] },
];
const UNTAINTED: TestNode[] = NODES.map((n) => ({ ...n, taints: [] }));

describe('a rollout that enables the readiness taint', () => {
  test('the model: on a node that joined with the taint, a held group creates no pod and nothing removes the taint; once promoted, it does', () => {
    const canary = stage(V1, V2, 'canary');
    // the held DaemonSets' pod templates: no toleration of the taint, no remover
    const held = canary.manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === 'scanner');
    expect(held.spec.template.spec.tolerations.map((t: Manifest) => t.key)).not.toContain(KEY);
    expect(held.spec.template.spec.containers.map((c: Manifest) => c.name)).toEqual(['scanner']);
    expect(closedNodes(modelNodes(NODES), canary.manifests)).toEqual(['fleet-new', 'wave1-new']);
    expect(closedNodes(modelNodes(NODES), stage(V1, V2, 'fleet').manifests)).toEqual([]);
  });

  test('node pools list the taint from the start: each step\'s findings name exactly the nodes the model leaves closed', () => {
    const stages = STAGES.map((s) => stage(V1, V2, s));
    const steps = walk(stages, NODES);
    // before -> canary: the change enables the taint while wave-1 and the fleet are held, and a node of each carries it
    expect(steps[0].findings.map(summary)).toEqual([
      ['readiness-taint-held', 'error', ['kube-system/scanner-wave-1', 'kube-system/scanner'], ['fleet-new', 'wave1-new']],
    ]);
    expect(steps[0].findings[0].message).toContain('held rollout groups wave-1, fleet (kube-system/scanner-wave-1, kube-system/scanner) keep the previous release');
    expect(steps[0].findings[0].message).toContain('nor tolerate it: the DaemonSet controller creates no pod of theirs on a node with the taint');
    expect(steps[0].findings[0].message).toContain('2 nodes (fleet-new, wave1-new) of these groups carry it now');
    expect(steps[0].findings[0].fix).toContain('only after the last group is promoted');
    expect(steps[0].findings[0].fix).toContain(`kubectl taint nodes NODE ${KEY}:NoSchedule-`);
    // canary -> wave-1: the promotion opens wave1-new; the fleet's node stays closed, as it was: a standing warning
    expect(steps[1].findings.map(summary)).toEqual([['readiness-taint-held', 'warning', ['kube-system/scanner'], ['fleet-new']]]);
    expect(steps[1].findings[0].standing).toBe(true);
    expect(steps.slice(2).map((s) => s.findings)).toEqual([[], []]);
    // the model: exactly the nodes each finding names
    expect(steps.map((s) => s.closed)).toEqual([['fleet-new', 'wave1-new'], ['fleet-new'], [], []]);
    expect(steps.map((s) => s.findings.flatMap((f) => f.nodes).sort())).toEqual(steps.map((s) => s.closed));
  });

  test('the held groups\' untolerated taint is not reported as a toleration to add (the rollout\'s finding explains it); another taint still is', () => {
    const other: TaintJson = { key: 'dedicated', value: 'db', effect: 'NoSchedule' };
    const nodes = NODES.map((n) => (n.name === 'fleet-new' ? { ...n, taints: [TAINT, other] } : n));
    const [step] = walk([stage(V1, V2, 'before'), stage(V1, V2, 'canary')], nodes);
    const toleration = step.all.filter((f) => f.cause === 'toleration');
    expect(toleration.map((f) => [f.daemonSets, f.nodes])).toEqual([[['kube-system/scanner'], ['fleet-new']]]);
    expect(toleration[0].message).toContain('does not tolerate dedicated=db:NoSchedule:');
    expect(toleration[0].message).not.toContain(KEY);
  });

  test('the taint kept out of the node pools until done: no node closed at any step; a warning while groups are held and the trees do not show the pools', () => {
    const stages = STAGES.map((s) => stage(V1, V2, s));
    const steps = walk(stages, UNTAINTED);
    expect(steps.map((s) => s.closed)).toEqual([[], [], [], []]);
    expect(steps.map((s) => s.findings.map(summary))).toEqual([
      [['readiness-taint-held', 'warning', ['kube-system/scanner-wave-1', 'kube-system/scanner'], []]],
      [['readiness-taint-held', 'warning', ['kube-system/scanner'], []]],
      [], [],
    ]);
    expect(steps[0].findings[0].message).toContain('whether the node pools give new nodes this taint the trees do not show: they must not until every group removes it');
  });

  test('the trees hold the NodePools: none lists it, no finding; one lists it before the last group is promoted, an error naming it', () => {
    const pool = (keys: string[]) => [nodePool('general', keys.map((key) => ({ key, effect: 'NoSchedule' })))];
    const clean = walk(STAGES.map((s) => stage(V1, V2, s, pool([]))), UNTAINTED);
    expect(clean.map((s) => s.findings)).toEqual([[], [], [], []]);
    // listed at the canary stage (the pools changed in the same commit): every new node of a held group keeps it
    const early = walk([stage(V1, V2, 'before', pool([])), stage(V1, V2, 'canary', pool([KEY])), stage(V1, V2, 'wave-1', pool([KEY]))], UNTAINTED);
    expect(early.map((s) => s.findings.map(summary))).toEqual([
      [['readiness-taint-held', 'error', ['kube-system/scanner-wave-1', 'kube-system/scanner'], []]],
      [['readiness-taint-held', 'warning', ['kube-system/scanner'], []]],
    ]);
    expect(early[0].findings[0].message).toContain('the NodePools general list it: their new nodes in these groups keep it');
    // listed once done: every group removes it
    const late = walk([stage(V1, V2, 'done', pool([])), stage(V1, V2, 'done', pool([KEY]))], NODES);
    expect(late[0].findings).toEqual([]);
    expect(late[0].closed).toEqual([]);
  });

  test('an agent that tolerates every taint: its held pods run on the tainted node without the remover, and the node stays closed all the same', () => {
    const tolerant = { tolerateAllTaints: true };
    const steps = walk([stage(V1, V2, 'before', undefined, tolerant), stage(V1, V2, 'canary', undefined, tolerant)], NODES);
    expect(steps[0].closed).toEqual(['fleet-new', 'wave1-new']);
    expect(steps[0].findings.map(summary)).toEqual([
      ['readiness-taint-held', 'error', ['kube-system/scanner-wave-1', 'kube-system/scanner'], ['fleet-new', 'wave1-new']],
    ]);
    expect(steps[0].findings[0].message).toContain('their pods tolerate it and run there, without the remover');
  });

  test('karpenterStartupTaint() gives the NodePool entry only from the stage on where every group removes the taint', () => {
    const entry = (s: Rendered) => s.agent.karpenterStartupTaint();
    expect(STAGES.map((s) => entry(stage(V1, V2, s)))).toEqual([undefined, undefined, undefined, TAINT, TAINT]);
    // a release that keeps the same taint: the held groups remove it too
    const V2b = { ...V2, image: 'example.com/scanner:2.1.0' };
    expect(entry(stage(V2, V2b, 'canary'))).toEqual(TAINT);
    // renamed: the held groups remove the old key only
    expect(entry(stage(V2, { ...V2b, readinessTaint: { key: `${KEY}-2` } }, 'canary'))).toBeUndefined();
    // a new agent installed wave by wave: the groups not promoted have no DaemonSet at all
    const chart = new Chart(Testing.app(), 'new');
    const fresh = new NodeAgentDaemonSet(chart, 'scanner', { ...V2, rollout: { waves: WAVES, promoted: Promotion.through('canary') } });
    expect(fresh.karpenterStartupTaint()).toBeUndefined();
    const all = new NodeAgentDaemonSet(chart, 'scanner-all', { ...V2, name: 'scanner-all', rollout: { waves: WAVES, promoted: Promotion.all() } });
    expect(all.karpenterStartupTaint()).toEqual(TAINT);
  });

  /**
   * Karpenter's NodePool CRD (kubernetes-sigs/karpenter pkg/apis/crds/karpenter.sh_nodepools.yaml, v1): the items of
   * spec.template.spec.startupTaints are objects with required key and effect; a null item is refused.
   */
  test('karpenterStartupTaints() is a list a NodePool takes at every stage: empty while a group is held, never a null entry', () => {
    const schema = upstream('karpenter/karpenter.sh_nodepools.json').spec.versions.find((v: Manifest) => v.name === 'v1')
      .schema.openAPIV3Schema.properties.spec.properties.template.properties.spec.properties.startupTaints;
    const lists = STAGES.map((s) => stage(V1, V2, s).agent.karpenterStartupTaints());
    expect(lists).toEqual([[], [], [], [TAINT], [TAINT]]);
    for (const entries of lists) expect(schemaProblems(schema, entries)).toEqual([]);
    // the single form put in a list, as the examples did: `- null` while a group is held, which the API server refuses
    expect(schemaProblems(schema, [stage(V1, V2, 'canary').agent.karpenterStartupTaint() ?? null])).toEqual(['/0: must not be null']);
  });

  test('a new agent installed wave by wave: the groups not promoted have no DaemonSet, so nothing removes the taint on their nodes (readiness-taint-uncovered)', () => {
    const fresh = (promoted: Promotion) => freshInstall(V2, WAVES, promoted);
    const empty = EMPTY_STAGE;
    const steps = walk([empty, fresh(Promotion.through('canary')), fresh(Promotion.through('wave-1')), fresh(Promotion.all())], NODES);
    expect(steps.map((s) => s.closed)).toEqual([['fleet-new', 'wave1-new'], ['fleet-new'], []]);
    expect(steps.map((s) => s.findings.map(summary))).toEqual([
      [['readiness-taint-uncovered', 'error', ['kube-system/scanner-canary'], ['fleet-new', 'wave1-new']]],
      [['readiness-taint-uncovered', 'warning', ['kube-system/scanner-canary', 'kube-system/scanner-wave-1'], ['fleet-new']]],
      [],
    ]);
    expect(steps[0].findings[0].message).toContain('2 nodes (fleet-new, wave1-new) carry scanner\'s readiness taint');
    expect(steps[0].findings[0].message).toContain('no DaemonSet of scanner selects them');
  });
});

describe('a rollout that drops the readiness taint', () => {
  test('node pools still list it: the promoted groups\' new nodes keep it (readiness-taint-dropped), then no agent removes it (orphaned)', () => {
    const stages = STAGES.map((s) => stage(V2, V3, s));
    const steps = walk(stages, NODES);
    expect(steps.map((s) => s.closed)).toEqual([['canary-new'], ['canary-new', 'wave1-new'], ['canary-new', 'fleet-new', 'wave1-new'], ['canary-new', 'fleet-new', 'wave1-new']]);
    expect(steps[0].findings.map(summary)).toEqual([['readiness-taint-dropped', 'error', ['kube-system/scanner-canary'], ['canary-new']]]);
    expect(steps[0].findings[0].message).toContain('promoted rollout groups canary (kube-system/scanner-canary) run a release that does not remove the readiness taint '
      + `${KEY}:NoSchedule, which its held groups wave-1, fleet still remove`);
    expect(steps[0].findings[0].message).toContain('for good: no release of these groups removes it');
    expect(steps[0].findings[0].fix).toContain('out of the node pools\' startup taints before a release without it reaches any group');
    // wave-1 promoted: one more node closed, so not standing
    expect(steps[1].findings.map(summary)).toEqual([
      ['readiness-taint-dropped', 'error', ['kube-system/scanner-canary', 'kube-system/scanner-wave-1'], ['canary-new', 'wave1-new']],
    ]);
    // the fleet promoted: no DaemonSet removes it any more (the finding names the one that removed it last)
    expect(steps[2].findings.map(summary)).toEqual([['readiness-taint-orphaned', 'error', ['kube-system/scanner'], ['canary-new', 'fleet-new', 'wave1-new']]]);
    // `previous` dropped: nothing changes on any node; the closed nodes were named by the step that closed them
    expect(steps[3].all).toEqual([]);
    expect(stages.map((s) => s.agent.karpenterStartupTaint())).toEqual([TAINT, undefined, undefined, undefined, undefined]);
  });

  test('the taint taken out of the node pools first (the trees show it): no finding at any step, no node closed', () => {
    const pools = [nodePool('general', [])];
    const stages = [stage(V2, V3, 'before', [nodePool('general', [TAINT])]), ...STAGES.slice(1).map((s) => stage(V2, V3, s, pools))];
    // the step that takes it out of the pool comes first, with the agent unchanged
    const steps = walk([stages[0], stage(V2, V3, 'before', pools), ...stages.slice(1)], UNTAINTED);
    expect(steps.map((s) => s.findings)).toEqual([[], [], [], [], []]);
    expect(steps.map((s) => s.closed)).toEqual([[], [], [], [], []]);
  });
});

describe('the node-agents plan command', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readiness-rollout-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const trees = (['before', 'canary'] as Stage[]).map((s) => {
    const file = path.join(dir, `${s}.yaml`);
    fs.writeFileSync(file, stage(V1, V2, s).manifests.map((m) => YAML.stringify(m)).join('---\n'));
    return file;
  });
  const nodesFile = path.join(dir, 'nodes.json');
  fs.writeFileSync(nodesFile, JSON.stringify(list(NODES.map((n) => node(n.name, {
    labels: n.wave ? { [WAVE_KEY]: n.wave } : {}, taints: n.taints as Manifest[],
  })))));
  function run(...argv: string[]) {
    let stdout = '';
    const code = runCli(['plan', '--nodes', nodesFile, '--before', trees[0], '--after', trees[1], ...argv],
      { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined }, cwd: dir });
    return { code, stdout };
  }

  test('text, JSON and markdown name the held groups, the nodes and the fix; exit 1', () => {
    const json = run('--json');
    expect(json.code).toBe(1);
    const [f] = JSON.parse(json.stdout).steps[0].findings.filter((x: Manifest) => x.cause === 'readiness-taint-held');
    expect(f).toMatchObject({ kind: 'never-starts', severity: 'error', agent: 'scanner', nodes: ['fleet-new', 'wave1-new'] });
    const text = run();
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('readiness-taint-held');
    expect(text.stdout).toContain('held rollout groups wave-1, fleet');
    expect(text.stdout).toContain('only after the last group is promoted');
    const markdown = run('--markdown');
    expect(markdown.code).toBe(1);
    expect(markdown.stdout).toContain('❌ **never\\-starts** (readiness\\-taint\\-held)');
    expect(markdown.stdout).toContain('held rollout groups wave\\-1\\, fleet');
  });
});

describe('doctor on a node of a held group carrying the taint', () => {
  function findings(extra: Partial<NodeAgentDaemonSetProps>, withPods: boolean) {
    const { manifests } = stage(V1, V2, 'canary', undefined, extra);
    const daemonSets = manifests.filter((m) => m.kind === 'DaemonSet');
    const items: Manifest[] = [node('wave1-new', { labels: { [WAVE_KEY]: 'wave-1' }, taints: [TAINT] }), node('canary-1', { labels: { [WAVE_KEY]: 'canary' } })];
    for (const ds of daemonSets) items.push(ds, revision(ds, 'v2', 1));
    const heldDs = daemonSets.find((d) => d.metadata.name === 'scanner-wave-1');
    if (withPods) items.push(agentPod(heldDs, 'wave1-new'));
    const builder = new StateBuilder();
    builder.addDocument(list(items), 'test');
    return diagnose(builder.finish('test')).findings.filter((f) => f.cause === 'readiness-taint');
  }

  test('not tolerating it, the held group has no pod there: the finding names its DaemonSet, not "no pod of the agent"', () => {
    const [f] = findings({}, false);
    expect(f).toMatchObject({ severity: 'error', node: 'wave1-new', daemonSet: 'kube-system/scanner-wave-1', pod: undefined });
    expect(f.message).toContain('kube-system/scanner-wave-1 (rollout group "wave-1") selects the node but runs a release without this readiness taint and '
      + 'does not tolerate it: the DaemonSet controller creates no pod there');
    expect(f.message).not.toContain('no pod of scanner runs there');
    expect(f.fix).toContain(`kubectl taint nodes wave1-new ${KEY}:NoSchedule-`);
  });

  test('tolerating it, the held group\'s pod runs there without the remover: named, not blamed on a failed remover', () => {
    const [f] = findings({ tolerateAllTaints: true }, true);
    expect(f).toMatchObject({ severity: 'error', node: 'wave1-new', daemonSet: 'kube-system/scanner-wave-1', pod: 'kube-system/scanner-wave-1-wave1-new' });
    expect(f.message).toContain('its pod kube-system/scanner-wave-1-wave1-new of kube-system/scanner-wave-1 (rollout group "wave-1") runs a release without this readiness taint');
    expect(f.message).not.toContain('its remover did not remove it');
  });
});
