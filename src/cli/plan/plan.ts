import { inLastSyncStep } from './argo-sync';
import { Finding, FINDING_KINDS } from './finding';
import { gatesOf, renderedGates } from './gates';
import { readinessTaintFindings } from './readiness-taints';
import { DEFAULT_POD_SECONDS, Pace } from '../../rollout/pace';
import { entryOf } from '../../util/maps';
import { SetIds } from '../../util/set-ids';
import { FLEET_GROUP } from '../../waves/partition';
import {
  AgentCoverage, analyzeCoverage, CoverageReport, coversName, DaemonSetCoverage, hostPortsOverlap, idList, orderWaves, placementExplainer,
  positionByName,
} from '../coverage/analysis';
import { canonicalHash, compare, DaemonSetInfo, isObject, ManifestSet, ROLLOUT_GROUP_LABEL } from '../coverage/manifests';
import { NodeFacts } from '../coverage/nodes';
import { antiAffinitySeparates, HOSTNAME_TOPOLOGY_KEY } from '../coverage/pod-affinity';
import { priorityClassesOf, resolvePriority } from '../coverage/priority';
import { emptyProfileIsUnused, profileOfGroup, waveOfGroup } from '../coverage/profiles';
import { gapTaintKeys } from '../coverage/readiness-taint-gaps';
import { estimateRollout } from '../estimate/estimate';
import { rollingUpdateShape, shapeNote } from '../estimate/rollout-model';

/**
 * The annotation that acknowledges, on a DaemonSet of the after-tree, that the change takes its agent off nodes on
 * purpose (value: `"true"`). `plan` then reports the nodes losing the agent as a warning instead of an error.
 */
export const NARROWING_ANNOTATION = 'node-agents.cdk8s.io/narrowing-acknowledged';

/**
 * The annotation that acknowledges, on any object of the after-tree (the agent's DaemonSets are gone with it), that
 * the change removes agents altogether: a comma-separated list of their names (`"logs, node-exporter"`).
 */
export const REMOVAL_ANNOTATION = 'node-agents.cdk8s.io/removed-agents';

/**
 * The annotation that acknowledges, on a DaemonSet of the after-tree (value `"true"`), that the change restarts or
 * moves the agent's pods outside a promotion on purpose: waves reordered, added, dropped or enabled. `plan` then
 * reports those restarts as warnings.
 */
export const RESTART_ANNOTATION = 'node-agents.cdk8s.io/restart-acknowledged';

export interface PlanOptions {
  /** one pod's cycle (pull + start + ready + termination of the old pod), as `estimate` takes it (default 30) */
  readonly podSeconds?: number;
  /**
   * Agents whose loss of nodes is deliberate (`plan --allow-narrowing AGENT`): nodes losing them are a warning.
   * @default none: every node losing an agent that still exists is an error
   */
  readonly allowNarrowing?: readonly string[];
  /**
   * Agents whose pods the change restarts or moves outside a promotion on purpose (`plan --allow-restart AGENT`):
   * waves reordered, added, dropped or enabled. Those restarts are a warning.
   * @default none: each is an error
   */
  readonly allowRestart?: readonly string[];
  /**
   * The coverage of the trees on the same nodes, when the caller computed it already (analyzeCoverage of
   * `before.daemonSets` and `after.daemonSets` on `nodes`): a sequence of stages shares each tree's, and
   * `--pods` reuses the after-tree's. Read only.
   * @default computed here
   */
  readonly coverage?: { readonly before?: CoverageReport; readonly after?: CoverageReport };
  /**
   * DaemonSet id → names of the nodes whose pod of it is not available now (read from the pods running, `--pods`):
   * the rolling update replaces those at once, outside its budget.
   * @default every pod on a Ready node is taken as available
   */
  readonly unavailable?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * The control plane is known to run Kubernetes 1.31 or later (kubernetes#123233): the rollout notes leave out what an
   * older controller does in the first batch.
   * @default false
   */
  readonly replacementsCounted?: boolean;
}

/** created / deleted: in one tree only; changed: anything in the object differs; unchanged: identical. */
export type DaemonSetChange = 'created' | 'changed' | 'deleted' | 'unchanged';

/** The DaemonSet controller's rolling update of the nodes whose pod one DaemonSet replaces. */
export interface DaemonSetRolloutPlan {
  /** the update pace as `estimate` computes it, scaled against the DaemonSet's nodes in the after-tree */
  readonly pace: Pace;
  /** replaced nodes the rolling update paces: Ready nodes the DaemonSet covers in the after-tree whose old pod is available */
  readonly nodes: number;
  /** pods replaced at once (0 for OnDelete) */
  readonly podsAtOnce: number;
  /** the batches, the first included; 0 for OnDelete */
  readonly batches: number;
  /**
   * the first batch: the old pods not available (outsideBudget), replaced at once outside the budget, and the
   * available ones the budget leaves beside them (update.go rollingUpdate: allowedReplacementPods, kubernetes#111073)
   */
  readonly firstBatchSize: number;
  /** size of every batch after the first but the last (the budget left beside the stuck nodes), and of the last */
  readonly batchSize: number;
  readonly lastBatchSize: number;
  /** covered Ready nodes whose old pod is not available now (read with `--pods`): replaced at once, outside the budget. Sorted. */
  readonly outsideBudget: readonly string[];
  /** podSeconds + minReadySeconds */
  readonly cycleSeconds: number;
  /**
   * Replaced nodes whose pod holds one unit of the update budget for good (kubernetes pkg/controller/daemon/update.go,
   * rollingUpdate): a NotReady or unreachable node the DaemonSet still covers (its new pod never turns available),
   * and with maxSurge 0 an unreachable node it no longer places a pod on (the deleted old pod stays Terminating:
   * findUpdatedPodsOnNode skips it, and the node counts as unavailable on every sync). Sorted.
   */
  readonly stuck: readonly string[];
  /**
   * Replaced nodes the DaemonSet no longer places a pod on while their state lasts (an untolerated NotReady or
   * unreachable node, or another node.kubernetes.io condition taint): the rolling update deletes the old pod there
   * (at once when it is unavailable, as MarkPodsNotReady makes it) and no new pod comes until the node recovers. Sorted.
   */
  readonly waiting: readonly string[];
  readonly terminationGracePeriodSeconds?: number;
  /** batches × cycleSeconds; undefined when the rollout does not run by itself (OnDelete, rejected, deadlocked) */
  readonly seconds?: number;
  /** why the rollout does not run by itself, or nothing happens */
  readonly note?: string;
}

export interface DaemonSetPlan {
  /** `namespace/name` */
  readonly id: string;
  readonly rolloutGroup?: string;
  readonly syncWave?: number;
  readonly change: DaemonSetChange;
  /** the pod template differs: every pod of the DaemonSet is replaced */
  readonly podTemplateChanged: boolean;
  readonly versionBefore?: string;
  readonly versionAfter?: string;
  /** nodes with a pod of the DaemonSet, before and after */
  readonly nodesBefore: number;
  readonly nodesAfter: number;
  /** nodes whose pod this DaemonSet replaces in place (sorted) */
  readonly replaced: readonly string[];
  /** set when it replaces pods */
  readonly rollout?: DaemonSetRolloutPlan;
}

/** A node whose pod goes from one DaemonSet of the agent to another (a wave relabel, a renamed DaemonSet). */
export interface NodeMove {
  readonly node: string;
  readonly from: string;
  readonly to: string;
}

export interface AgentPlan {
  readonly agent: string;
  /** after-tree DaemonSets in wave order, then the deleted ones */
  readonly daemonSets: readonly DaemonSetPlan[];
  /** nodes whose pod is replaced by its own DaemonSet, sorted */
  readonly replaced: readonly string[];
  readonly moved: readonly NodeMove[];
  readonly gained: readonly { readonly node: string; readonly to: string }[];
  readonly lost: readonly { readonly node: string; readonly from: string }[];
  /** nodes with a pod of the agent that nothing changes */
  readonly untouched: number;
  /**
   * Expected time: the rolling updates one after the other when every DaemonSet that replaces pods carries an
   * Argo CD sync wave (Argo CD applies them in turn), else in parallel (the longest); at least one pod cycle
   * when pods move, come or go (the controller does those at once, outside any update budget); plus the bakes of
   * the agent's gate Jobs (gateSeconds).
   */
  readonly seconds: number;
  readonly sequential: boolean;
  /**
   * The agent's rendered gate Jobs (Argo CD Sync hooks: Argo CD runs every hook on every sync and the next wave waits
   * for it), with the bake each sleeps (its BAKE_SECONDS); their bakes are in `seconds` when the agent changes.
   */
  readonly gates: readonly { readonly job: string; readonly afterWave?: string; readonly bakeSeconds: number; readonly deadlineSeconds?: number }[];
  /** the sum of the gates' bakes: part of `seconds` when the change touches the agent, else 0 */
  readonly gateSeconds: number;
  /** DaemonSets that replace pods only when they are deleted (OnDelete) or cannot roll out as written */
  readonly manual: readonly string[];
}


function findingKey(finding: Finding): string {
  return [finding.kind, finding.cause, finding.daemonSets.join(','), finding.nodes.join(',')].join('\0');
}

export interface PlanReport {
  readonly podSeconds: number;
  readonly nodes: number;
  /** every agent of either tree, by name; agents with no change included (all untouched) */
  readonly agents: readonly AgentPlan[];
  readonly findings: readonly Finding[];
  /**
   * The pull-only DaemonSets of rollout.prePull in either tree (not agents: their pods pull an image and idle, no
   * agent pod moves or restarts for them), created, deleted or kept.
   */
  readonly prePulls: readonly PrePullPlan[];
}

/** A pull-only DaemonSet and what the change does to it. */
export interface PrePullPlan {
  readonly id: string;
  /** the DaemonSet whose image it pulls beforehand */
  readonly for: string;
  readonly image: string;
  readonly change: 'created' | 'deleted' | 'changed' | 'unchanged';
}

/** The pre-pull DaemonSets of both trees, in id order. */
function prePullPlans(before: ManifestSet, after: ManifestSet): PrePullPlan[] {
  const was = new Map((before.prePulls ?? []).map((p) => [p.id, p]));
  const is = new Map((after.prePulls ?? []).map((p) => [p.id, p]));
  return [...new Set([...was.keys(), ...is.keys()])].sort(compare).map((id) => {
    const b = was.get(id);
    const a = is.get(id);
    const change = a === undefined ? 'deleted' : b === undefined ? 'created' : a.image === b.image && a.for === b.for ? 'unchanged' : 'changed';
    return { ...(a ?? b)!, change };
  });
}

/** The agent's DaemonSets that have a pod on a node: its owner, or the DaemonSet whose pod stays on a NotReady node. */
function podOwners(coverage: AgentCoverage | undefined, index: number): readonly string[] {
  if (coverage === undefined) return [];
  const entry = coverage.nodes[index];
  if (entry.status === 'covered' || entry.status === 'duplicate') return entry.owners;
  if (entry.status === 'node-condition' && entry.existingPodKeepsRunning && entry.closest !== undefined) return [entry.closest];
  return [];
}

/** What planning one change reads: both trees by id, both coverage reports, the after-tree's gates. */
interface PlanContext {
  readonly before: ManifestSet;
  readonly after: ManifestSet;
  readonly podSeconds: number;
  readonly beforeReport: CoverageReport;
  readonly afterReport: CoverageReport;
  /** the nodes, in name order (the coverage reports' positions point into it) */
  readonly sorted: readonly NodeFacts[];
  readonly beforeById: ReadonlyMap<string, DaemonSetInfo>;
  readonly afterById: ReadonlyMap<string, DaemonSetInfo>;
  readonly afterGates: ReturnType<typeof renderedGates>;
  readonly unavailable?: ReadonlyMap<string, ReadonlySet<string>>;
  readonly replacementsCounted: boolean;
}

/**
 * What applying `after` over `before` does on every node: the before-tree is taken as converged (every node it
 * covers runs its pod template), and the DaemonSet controller and scheduler are simulated on the inventory with
 * the coverage semantics. Pure: no cluster, no cdk8s.
 */
export function planChange(before: ManifestSet, after: ManifestSet, nodes: readonly NodeFacts[], options: PlanOptions = {}): PlanReport {
  const beforeReport = options.coverage?.before ?? analyzeCoverage(before.daemonSets, nodes);
  const afterReport = options.coverage?.after ?? analyzeCoverage(after.daemonSets, nodes);
  const ctx: PlanContext = {
    before,
    after,
    podSeconds: options.podSeconds ?? DEFAULT_POD_SECONDS,
    beforeReport,
    afterReport,
    sorted: afterReport.nodes,
    beforeById: new Map(before.daemonSets.map((d) => [d.id, d])),
    afterById: new Map(after.daemonSets.map((d) => [d.id, d])),
    afterGates: renderedGates(after),
    unavailable: options.unavailable,
    replacementsCounted: options.replacementsCounted ?? false,
  };
  const beforeAgents = new Map(beforeReport.agents.map((a) => [a.agent, a]));
  const afterAgents = new Map(afterReport.agents.map((a) => [a.agent, a]));
  const agentNames = [...new Set([...beforeAgents.keys(), ...afterAgents.keys()])].sort(compare);
  const agents = agentNames.map((agent) => agentPlan(ctx, agent, beforeAgents.get(agent), afterAgents.get(agent)));
  const touched = new Set(agents.filter((a) => a.daemonSets.some((d) => d.change !== 'unchanged')).map((a) => a.agent));
  const findings = [...changeFindings(ctx, agents, touched, options), ...afterTreeFindings(ctx, agents, touched),
    ...readinessTaintFindings(before, after, beforeReport, afterReport, nodes)];
  return {
    podSeconds: ctx.podSeconds,
    nodes: ctx.sorted.length,
    agents,
    findings: findings.sort((x, y) => FINDING_KINDS.indexOf(x.kind) - FINDING_KINDS.indexOf(y.kind)
      || compare(x.agent ?? '', y.agent ?? '') || compare(x.message, y.message)),
    prePulls: prePullPlans(before, after),
  };
}

/** What the change does to each node of one agent: the nodes gained, lost, moved between its DaemonSets, replaced in place. */
interface NodeWalk {
  /** the nodes whose pod each DaemonSet replaces, as positions in `sorted` */
  readonly replacedAt: ReadonlyMap<string, number[]>;
  readonly moved: NodeMove[];
  readonly gained: { node: string; to: string }[];
  readonly lost: { node: string; from: string }[];
  readonly countBefore: ReadonlyMap<string, number>;
  readonly countAfter: ReadonlyMap<string, number>;
  readonly untouched: number;
}

function walkNodes(ctx: PlanContext, b: AgentCoverage | undefined, a: AgentCoverage | undefined): NodeWalk {
  const replacedAt = new Map<string, number[]>();
  const moved: NodeMove[] = [];
  const gained: { node: string; to: string }[] = [];
  const lost: { node: string; from: string }[] = [];
  const countBefore = new Map<string, number>();
  const countAfter = new Map<string, number>();
  let untouched = 0;
  ctx.sorted.forEach((node, i) => {
    const was = podOwners(b, i);
    const will = podOwners(a, i);
    for (const id of was) countBefore.set(id, (countBefore.get(id) ?? 0) + 1);
    for (const id of will) countAfter.set(id, (countAfter.get(id) ?? 0) + 1);
    if (was.length === 0 && will.length === 0) return;
    if (was.length === 0) {
      gained.push({ node: node.name, to: will[0] });
    } else if (will.length === 0) {
      lost.push({ node: node.name, from: was[0] });
    } else {
      const arriving = will.find((id) => !was.includes(id));
      const leaving = was.find((id) => !will.includes(id));
      if (arriving !== undefined && leaving !== undefined) {
        moved.push({ node: node.name, from: leaving, to: arriving });
        return;
      }
      // the same DaemonSets, or one more or one fewer beside them (a duplicate: see the findings)
      let replaced = false;
      for (const id of will) {
        if (was.includes(id) && ctx.beforeById.get(id)!.templateHash !== ctx.afterById.get(id)!.templateHash) {
          entryOf(replacedAt, id, () => []).push(i);
          replaced = true;
        }
      }
      if (!replaced) untouched++;
    }
  });
  return { replacedAt, moved, gained, lost, countBefore, countAfter, untouched };
}

/** One DaemonSet of the agent, in the after-tree or deleted: its change, version, node counts and rollout. */
function daemonSetPlan(ctx: PlanContext, info: DaemonSetInfo, walk: NodeWalk): DaemonSetPlan {
  const was = ctx.beforeById.get(info.id);
  const will = ctx.afterById.get(info.id);
  const change: DaemonSetChange = was === undefined ? 'created' : will === undefined ? 'deleted'
    : was.objectHash === will.objectHash ? 'unchanged' : 'changed';
  const positions = walk.replacedAt.get(info.id) ?? [];
  const replaced = positions.map((at) => ctx.sorted[at].name);
  const coverage = ctx.afterReport.daemonSets.find((d) => d.info.id === info.id);
  return {
    id: info.id,
    rolloutGroup: info.rolloutGroup,
    syncWave: info.syncWave,
    change,
    podTemplateChanged: was !== undefined && will !== undefined && was.templateHash !== will.templateHash,
    versionBefore: was?.version,
    versionAfter: will?.version,
    nodesBefore: walk.countBefore.get(info.id) ?? 0,
    nodesAfter: walk.countAfter.get(info.id) ?? 0,
    replaced,
    rollout: replaced.length > 0 ? rolloutPlan(will!, coverage!, positions, ctx, ctx.unavailable?.get(info.id)) : undefined,
  };
}

/** One agent's plan: its DaemonSets in wave order (then the deleted ones), the nodes it moves, and how long it takes. */
function agentPlan(ctx: PlanContext, agent: string, b: AgentCoverage | undefined, a: AgentCoverage | undefined): AgentPlan {
  const walk = walkNodes(ctx, b, a);
  const { moved, gained, lost } = walk;
  const afterMembers = orderWaves(ctx.after.daemonSets.filter((d) => d.agent === agent));
  const deleted = ctx.before.daemonSets.filter((d) => d.agent === agent && !ctx.afterById.has(d.id));
  const daemonSets = [...afterMembers, ...deleted].map((info) => daemonSetPlan(ctx, info, walk));

  const rolling = daemonSets.filter((d) => d.rollout !== undefined);
  const sequential = rolling.length > 1 && rolling.every((d) => d.syncWave !== undefined);
  const times = rolling.map((d) => d.rollout!.seconds ?? 0);
  // DaemonSets of one Argo CD sync wave (a wave's resource profiles) roll in parallel; the sync waves one after the other
  let seconds = sequential ? slowestPerSyncWave(rolling) : Math.max(0, ...times);
  const arriving = [...moved.map((m) => m.to), ...gained.map((g) => g.to)];
  if (arriving.length > 0) {
    seconds = Math.max(seconds, ...[...new Set(arriving)].map((id) => ctx.podSeconds + ctx.afterById.get(id)!.minReadySeconds));
  }
  // Every gate of the agent bakes during a sync of the change (hooks run on every sync), one after the other
  // between the sync waves: the sync takes its rollouts plus the gates' bakes.
  const gates = gatesOf(ctx.afterGates, agent, new Set(afterMembers.map((d) => d.namespace)))
    .map((g) => ({ job: g.job, afterWave: g.afterWave, bakeSeconds: g.bakeSeconds, deadlineSeconds: g.deadlineSeconds }));
  const changes = daemonSets.some((d) => d.change !== 'unchanged') || moved.length + gained.length + lost.length > 0;
  const gateSeconds = changes ? gates.reduce((sum, g) => sum + g.bakeSeconds, 0) : 0;
  seconds += gateSeconds;
  return {
    agent,
    daemonSets,
    replaced: daemonSets.flatMap((d) => d.replaced).sort(compare),
    moved,
    gained,
    lost,
    untouched: walk.untouched,
    seconds,
    sequential,
    gates,
    gateSeconds,
    manual: rolling.filter((d) => d.rollout!.seconds === undefined).map((d) => d.id),
  };
}

/** The sum over sync waves of the slowest rollout in each (each DaemonSet its own sync wave: the plain sum). */
function slowestPerSyncWave(rolling: readonly DaemonSetPlan[]): number {
  const slowest = new Map<number, number>();
  for (const d of rolling) slowest.set(d.syncWave!, Math.max(slowest.get(d.syncWave!) ?? 0, d.rollout!.seconds ?? 0));
  return [...slowest.values()].reduce((sum, t) => sum + t, 0);
}

/** The findings of what the change does to each touched agent: moves, stalls, held waves, selectors, nodes lost. */
function changeFindings(ctx: PlanContext, agents: readonly AgentPlan[], touched: ReadonlySet<string>, options: PlanOptions): Finding[] {
  // the few nodes findings name are found by binary search in the name-ordered nodes (no map of 130k names)
  const facts = (name: string): NodeFacts => ctx.sorted[positionByName(ctx.sorted, name)];
  const findings: Finding[] = [];
  for (const agent of agents) {
    if (!touched.has(agent.agent)) continue;
    const moves = moveFindings(agent, ctx.beforeById, ctx.afterById);
    findings.push(...moves);
    findings.push(...stallFindings(agent, ctx.afterById, ctx.afterReport, facts, ctx.after));
    findings.push(...heldWaveFindings(agent, ctx.before, ctx.after));
    findings.push(...selectorFindings(agent, ctx.before, ctx.after));
    findings.push(...lossFindings(agent, ctx.after, options.allowNarrowing ?? []));
    findings.push(...waveRestartFindings(ctx, agent, options.allowRestart ?? [], new Set(moves.flatMap((f) => f.nodes))));
    findings.push(...allWavesFindings(ctx, agent, options.allowRestart ?? []));
  }
  findings.push(...admissionFindings(ctx, agents, touched));
  return findings;
}

/**
 * What is wrong in the after-tree alone: a finding the before-tree has too (same DaemonSets, same nodes) is
 * not the change's doing, and is a warning marked standing.
 */
function afterTreeFindings(ctx: PlanContext, agents: readonly AgentPlan[], touched: ReadonlySet<string>): Finding[] {
  const restarting = new Set(agents.flatMap((a) => a.daemonSets.filter((d) => d.podTemplateChanged || d.change === 'created').map((d) => d.id)));
  const beforeCovered = new Map(ctx.beforeReport.daemonSets.map((d) => [d.info.id, d.covered]));
  const afterCovered = new Map(ctx.afterReport.daemonSets.map((d) => [d.info.id, d.covered]));
  const standing = new Set([
    ...steadyStateFindings(ctx.beforeReport, ctx.beforeById, touched, gapTaintKeys(ctx.before)),
    ...referenceFindings(ctx.before, ctx.before, touched, new Set(), beforeCovered),
  ].map(findingKey));
  const found = [
    ...steadyStateFindings(ctx.afterReport, ctx.afterById, touched, gapTaintKeys(ctx.after)),
    ...referenceFindings(ctx.before, ctx.after, touched, restarting, afterCovered),
  ];
  return found.map((finding) => (standing.has(findingKey(finding))
    ? { ...finding, severity: 'warning' as const, standing: true, message: `${finding.message} (already so before the change)` }
    : finding));
}

/**
 * `estimate`'s figures for the DaemonSet (its pace, its strategy's problems), and the rolling update over the nodes
 * it replaces by the model `estimate` uses too (estimate/rollout-model.ts: kubernetes pkg/controller/daemon/update.go
 * rollingUpdate walks every node with a pod of the DaemonSet, with no should-run check):
 * - a node it covers (desiredNumberScheduled) is paced by the budget (maxUnavailable or maxSurge, scaled against
 *   the covered nodes); one whose old pod is not available (`--pods`) is replaced at once, outside the budget;
 * - one that is NotReady or unreachable is stuck: its old pod is unavailable (the node lifecycle controller's
 *   MarkPodsNotReady), so it is replaced at once, and the new pod never turns available: it holds one unit for good;
 * - a node it no longer places a pod on (an untolerated NotReady / unreachable node: only a pod already there
 *   keeps running) is waiting: the old pod is deleted (at once when unavailable) and no new pod is created while
 *   the node's state lasts. With maxSurge 0 the deleted pod of an unreachable node stays Terminating (no kubelet
 *   confirms it), findUpdatedPodsOnNode skips it and the node counts as unavailable on every sync: stuck too.
 *   With maxSurge the terminating pod is not counted (`oldPod == nil`: nothing to do on that node).
 */
function rolloutPlan(info: DaemonSetInfo, coverage: DaemonSetCoverage, replacedAt: readonly number[],
  ctx: Pick<PlanContext, 'podSeconds' | 'sorted' | 'replacementsCounted'>, unavailable: ReadonlySet<string> | undefined): DaemonSetRolloutPlan {
  const { podSeconds, sorted: nodes } = ctx;
  const wave = estimateRollout([{ info, covered: coverage.covered }], { podSeconds })[0].waves[0];
  const pace = wave.pace;
  const grace = { terminationGracePeriodSeconds: info.terminationGracePeriodSeconds };
  // the covered nodes by position in `nodes`: marks, not a set of names
  const covered = new Uint8Array(nodes.length);
  for (const at of coverage.positions) covered[at] = 1;
  if (pace.type === 'OnDelete') {
    const down = (at: number) => nodes[at].notReady || nodes[at].unreachable || ['False', 'Unknown'].includes(nodes[at].ready);
    return {
      pace,
      nodes: replacedAt.filter((at) => covered[at] === 1 && !down(at)).length,
      podsAtOnce: 0,
      batches: 0,
      batchSize: 0,
      firstBatchSize: 0,
      lastBatchSize: 0,
      cycleSeconds: wave.cycleSeconds,
      outsideBudget: [],
      stuck: [],
      waiting: [],
      ...grace,
      note: 'OnDelete: nothing happens until the pods are deleted; each node gets the new pod when its pod is deleted (by hand or by an operator)',
    };
  }
  // pace.batch is scaled against every node the DaemonSet covers, as the controller scales maxUnavailable/maxSurge
  const shape = rollingUpdateShape({ pace, nodes, covered, replacedAt, unavailable });
  const base = {
    pace,
    nodes: shape.paced,
    podsAtOnce: shape.podsAtOnce,
    batches: shape.batches,
    batchSize: shape.podsAtOnce,
    firstBatchSize: shape.firstBatchSize,
    lastBatchSize: shape.lastBatchSize,
    cycleSeconds: wave.cycleSeconds,
    outsideBudget: shape.outsideBudget,
    stuck: shape.stuck,
    waiting: shape.waiting,
    ...grace,
  };
  const note = shapeNote(shape, pace.batch, pace.mode === 'surge', ctx.replacementsCounted);
  if (wave.problem !== undefined) return { ...base, note: wave.problem };
  if (shape.stalled) {
    const done = shape.firstBatchSize === 0 ? 'none' : `the first batch (${shape.firstBatchSize}) and none`;
    return { ...base, note: `the stuck nodes fill the whole budget of ${pace.batch}: the controller replaces ${done} of the other ${shape.paced} pods${note === '' ? '' : `; ${note}`}` };
  }
  // a surge replacement runs the old and the new pod side by side by design: not a two-pods finding
  return { ...base, seconds: shape.batches * wave.cycleSeconds, note: note === '' ? undefined : note };
}

const ANTI_AFFINITY_FIX = 'give every DaemonSet of the agent a required podAntiAffinity on kubernetes.io/hostname against the agent\'s pods of the other rollout groups '
  + `(label ${ROLLOUT_GROUP_LABEL}), as the rollout-wave constructs write: the new pod then stays Pending until the old one is gone`;

/** A node whose pod moves to another DaemonSet runs both pods at once unless the scheduler holds the new one. */
function moveFindings(agent: AgentPlan, beforeById: ReadonlyMap<string, DaemonSetInfo>, afterById: ReadonlyMap<string, DaemonSetInfo>): Finding[] {
  const groups = new Map<string, { from: string; to: string; nodes: string[] }>();
  for (const move of agent.moved) {
    const key = `${move.from}\0${move.to}`;
    const group = groups.get(key) ?? { from: move.from, to: move.to, nodes: [] };
    group.nodes.push(move.node);
    groups.set(key, group);
  }
  const result: Finding[] = [];
  for (const group of groups.values()) {
    const old = beforeById.get(group.from)!;
    const incoming = afterById.get(group.to)!;
    const portWait = incoming.hostPorts.some((p) => old.hostPorts.some((q) => hostPortsOverlap(p, q)));
    if (antiAffinitySeparates(incoming, old) || portWait) {
      // The new pod waits for the old one, which goes only once the old DaemonSet's new spec is applied. Under
      // Argo CD sync waves that DaemonSet syncs after the one waiting: the earlier wave never turns Healthy.
      const releasing = afterById.get(group.from);
      if (incoming.syncWave !== undefined && releasing?.syncWave !== undefined && releasing.syncWave > incoming.syncWave) {
        result.push({
          kind: 'stall',
          severity: 'error',
          cause: 'sync-wave-order',
          agent: agent.agent,
          daemonSets: [group.to, group.from],
          nodes: group.nodes,
          message: `${group.to} (sync wave ${incoming.syncWave}) waits on ${nodeList(group.nodes)} for the pods of ${group.from}, which leave only `
            + `once ${group.from} (sync wave ${releasing.syncWave}) is applied: Argo CD applies it only after ${group.to} is Healthy, so the sync wedges`,
          fix: 'sync this change without argoCdSyncWaves (the commit that enables waves, or moves nodes between them, carries no gating), '
            + 'or apply the wave labels only after it has synced',
        });
      }
      continue;
    }
    result.push({
      kind: 'two-pods-per-node',
      severity: 'error',
      cause: 'move',
      agent: agent.agent,
      daemonSets: [group.from, group.to],
      nodes: group.nodes,
      message: `${agent.agent} runs two pods on ${nodeList(group.nodes)} while they move from ${group.from} to ${group.to}: `
        + `the controller of ${group.to} creates its pod at once, and nothing keeps it off the node while ${group.from}'s pod terminates`,
      fix: ANTI_AFFINITY_FIX,
    });
  }
  return result;
}

/** `n-1 (unreachable)`: a node and the state the plan reads from the inventory. */
function stateOf(facts: NodeFacts): string {
  return facts.unreachable ? 'unreachable' : 'NotReady';
}

/**
 * What NotReady and unreachable nodes do to one rolling update (see rolloutPlan for the controller's walk):
 * - the stuck nodes fill the budget: the controller replaces nothing more (an error);
 * - nodes it covers whose new pod never turns available keep the DaemonSet unhealthy for Argo CD
 *   (gitops-engine pkg/health/health_daemonset.go: numberAvailable < desiredNumberScheduled is Progressing): under
 *   a sync wave that holds every later wave (an error), unless the DaemonSet is in the last step of the sync
 *   (sync_context.go: the last wave succeeds once applied, without waiting for health): a warning;
 * - the waiting nodes lose their running pod until they recover (a warning);
 * - a Ready=False node is read as a live kubelet (its deleted pod terminates and frees its unit): a warning names
 *   that assumption, and what happens if the kubelet is gone (Ready turns Unknown: the pod stays Terminating).
 */
function notReadyFindings(agent: string, ds: DaemonSetPlan, rollout: DaemonSetRolloutPlan, afterReport: CoverageReport,
  facts: (name: string) => NodeFacts, after: ManifestSet): Finding[] {
  if (rollout.pace.type !== 'RollingUpdate') return [];
  const result: Finding[] = [];
  const budget = rollout.pace.batch;
  const covered = afterReport.daemonSets.find((d) => d.info.id === ds.id)!.covered;
  const neverAvailable = rollout.stuck.filter((n) => coversName(covered, n));
  const terminating = rollout.stuck.filter((n) => !coversName(covered, n));
  const describe = [
    ...neverAvailable.length > 0 ? [`${nodeList(neverAvailable)} ${neverAvailable.map((n) => stateOf(facts(n))).join('/')} where it still places pods: `
      + 'the old pod is unavailable (the node lifecycle controller marks it NotReady), so it is replaced at once, and the new pod never turns available'] : [],
    ...terminating.length > 0 ? [`${nodeList(terminating)} unreachable where it no longer places pods (the not-ready/unreachable NoSchedule taint is not tolerated): `
      + 'the old pod is unavailable, so it is deleted at once, and stays Terminating while no kubelet confirms it; the controller counts the node '
      + 'against maxUnavailable on every sync (update.go rollingUpdate: findUpdatedPodsOnNode skips terminating pods)'] : [],
  ].join('; and ');
  const unit = (n: number) => `${n} pod${n === 1 ? '' : 's'}`;
  const firstCandidates = rollout.firstBatchSize - rollout.outsideBudget.length;
  if (rollout.stuck.length >= budget && rollout.nodes > firstCandidates) {
    const replaced = firstCandidates === 0 ? 'none' : `${firstCandidates} in the first sync (maxSurge counts a new pod from the next one) and then none`;
    result.push({
      kind: 'stall',
      severity: 'error',
      cause: 'not-ready',
      agent,
      daemonSets: [ds.id],
      nodes: rollout.stuck,
      message: `${ds.id} replaces ${replaced} of its other ${rollout.nodes} pods: ${describe}. Each holds one unit of a budget of ${unit(budget)} at once for good, `
        + 'so the rolling update stops there',
      fix: `bring the nodes back (or delete the Node objects of machines that are gone: their pods go with them), or raise ${rollout.pace.mode !== 'surge' ? 'maxUnavailable'
        : isLogCollector(after.daemonSets.find((d) => d.id === ds.id)) ? 'maxUnavailable (with maxSurge 0: a log collector must not surge)' : 'maxSurge'} above ${rollout.stuck.length}`,
    });
  } else if (neverAvailable.length > 0 && ds.syncWave !== undefined) {
    const last = inLastSyncStep(after, ds.syncWave);
    result.push({
      kind: 'stall',
      severity: last ? 'warning' : 'error',
      cause: 'not-ready',
      agent,
      daemonSets: [ds.id],
      nodes: neverAvailable,
      message: last
        ? `${ds.id} (Argo CD sync wave ${ds.syncWave}, the last step of the sync) never turns Healthy: ${describe}. Argo CD counts the sync successful once `
          + 'the last wave is applied, without waiting for its health (gitops-engine sync_context.go), so nothing is held back; the Application stays Progressing until the nodes are back'
        : `${ds.id} stalls under Argo CD sync wave ${ds.syncWave}: ${describe}, so the DaemonSet never turns Healthy (numberAvailable < desiredNumberScheduled), `
          + 'the wave stays Progressing and the next waves never sync',
      fix: 'bring the nodes back (or delete the Node objects of machines that are gone), or move them to a wave synced last',
    });
  }
  if (rollout.waiting.length > 0) {
    result.push({
      kind: 'loses-agent',
      severity: 'warning',
      cause: 'node-condition',
      agent,
      daemonSets: [ds.id],
      nodes: rollout.waiting,
      message: `${ds.id}: the rolling update deletes the old pod on ${nodeList(rollout.waiting)}, where the DaemonSet no longer places pods while `
        + 'the node is not Ready (the controller walks every node with a pod of the DaemonSet, update.go rollingUpdate); those nodes run no pod of '
        + `${agent} until they recover`,
      fix: 'bring the nodes back (the new pod comes then), or tolerate node.kubernetes.io/not-ready and node.kubernetes.io/unreachable (NoSchedule) if the agent must stay',
    });
  }
  const assumed = rollout.pace.mode === 'unavailable' ? rollout.waiting.filter((n) => !facts(n).unreachable) : [];
  if (assumed.length > 0) {
    const wouldStick = terminating.length + neverAvailable.length + assumed.length >= budget;
    result.push({
      kind: 'stall',
      severity: 'warning',
      cause: 'assumption',
      agent,
      daemonSets: [ds.id],
      nodes: assumed,
      message: `${ds.id}: ${nodeList(assumed)} Ready=False is read as a live kubelet: the old pod deleted there terminates and frees its unit of maxUnavailable. `
        + 'The inventory cannot tell: if the kubelet is gone (the node lifecycle controller turns Ready to Unknown), the pod stays Terminating and holds '
        + `one unit for good${wouldStick ? `, and the rolling update stops (a budget of ${unit(budget)} at once)` : ''}`,
      fix: 'check the nodes (kubectl get node; kubectl get pods -o wide --field-selector spec.nodeName=NODE) before the change syncs',
    });
  }
  return result;
}

/**
 * maxSurge places the new pod beside the old one (update.go rollingUpdate), so the node must fit both pods'
 * extended resources (scheduler NodeResourcesFit: extended resources are whole units, never overcommitted). Where
 * the inventory's allocatable holds fewer than two pods' worth, the new pod stays Pending, numSurge stays at
 * maxSurge and no old pod is deleted: a deadlock (an error). Where it holds two or more, or lists nothing, the
 * plan cannot see what other pods use: a warning naming that.
 */
function surgeResourceFindings(agent: string, ds: DaemonSetPlan, info: DaemonSetInfo, afterReport: CoverageReport,
  facts: (name: string) => NodeFacts): Finding[] {
  const requests = Object.entries(info.extendedResources);
  if (requests.length === 0) return [];
  const covered = afterReport.daemonSets.find((d) => d.info.id === ds.id)!.covered;
  const nodes = ds.replaced.filter((n) => coversName(covered, n));
  const tooSmall: string[] = [];
  const unknown: string[] = [];
  for (const node of nodes) {
    const allocatable = facts(node).allocatable;
    const fits = requests.map(([name, n]) => {
      const text = allocatable[name];
      return text === undefined || !/^\d+$/.test(text.trim()) ? undefined : Number(text) >= 2 * n;
    });
    if (fits.some((f) => f === false)) tooSmall.push(node);
    else unknown.push(node);
  }
  const wanted = requests.map(([name, n]) => `${name}: ${n}`).join(', ');
  const result: Finding[] = [];
  if (tooSmall.length > 0) {
    result.push({
      kind: 'stall',
      severity: 'error',
      cause: 'surge-resource',
      agent,
      daemonSets: [ds.id],
      nodes: tooSmall,
      message: `${ds.id} deadlocks on ${nodeList(tooSmall)}: maxSurge starts the new pod beside the old one, and both request ${wanted}, `
        + 'which the node\'s allocatable holds once only: the new pod stays Pending (scheduler NodeResourcesFit), numSurge stays at maxSurge and no old pod is deleted',
      fix: 'use maxUnavailable (with maxSurge 0) for an agent that requests an extended resource',
    });
  }
  if (unknown.length > 0) {
    result.push({
      kind: 'stall',
      severity: 'warning',
      cause: 'assumption',
      agent,
      daemonSets: [ds.id],
      nodes: unknown,
      message: `${ds.id} requests ${wanted} under maxSurge: the new pod needs that much free beside the old one on ${nodeList(unknown)}; `
        + 'the plan cannot see what other pods use there (or the inventory lists no allocatable), and where it is taken the new pod stays Pending and the rollout deadlocks',
      fix: 'use maxUnavailable (with maxSurge 0), or make sure every node has room for two pods\' worth',
    });
  }
  return result;
}

function stallFindings(agent: AgentPlan, afterById: ReadonlyMap<string, DaemonSetInfo>, afterReport: CoverageReport,
  facts: (name: string) => NodeFacts, after: ManifestSet): Finding[] {
  const result: Finding[] = [];
  for (const ds of agent.daemonSets) {
    const rollout = ds.rollout;
    if (rollout !== undefined && rollout.pace.type === 'RollingUpdate') {
      result.push(...notReadyFindings(agent.agent, ds, rollout, afterReport, facts, after));
      if (rollout.pace.mode === 'surge') result.push(...surgeResourceFindings(agent.agent, ds, afterById.get(ds.id)!, afterReport, facts));
      if (rollout.pace.mode === 'surge' && isLogCollector(afterById.get(ds.id))) result.push(surgingCollectorFinding(agent.agent, ds));
    }
    if (rollout !== undefined && rollout.pace.type === 'RollingUpdate' && rollout.seconds === undefined && rollout.batches > 0) {
      result.push({
        kind: 'stall',
        severity: 'error',
        cause: 'strategy',
        agent: agent.agent,
        daemonSets: [ds.id],
        nodes: ds.replaced,
        message: `${ds.id} cannot roll out as written: ${rollout.note}`,
        fix: 'use maxUnavailable (with maxSurge 0) for an agent that binds a host port, and a strategy the API server accepts',
      });
    }
    const info = afterById.get(ds.id);
    if (info === undefined || info.syncWave === undefined) continue;
    const covered = afterReport.daemonSets.find((d) => d.info.id === ds.id)!.covered;
    const coveredCount = (id: string) => afterReport.daemonSets.find((d) => d.info.id === id)?.covered.length ?? 0;
    if (covered.length === 0 && info.rolloutGroup !== undefined && waveOfGroup(info.rolloutGroup) !== FLEET_GROUP
      && !emptyProfileIsUnused(info, [...afterById.values()], coveredCount)) {
      result.push({
        kind: 'stall',
        severity: 'error',
        cause: 'empty-wave',
        agent: agent.agent,
        daemonSets: [ds.id],
        nodes: [],
        message: `${ds.id} (sync wave ${info.syncWave}, rollout group "${info.rolloutGroup}") covers zero nodes: Argo CD counts it Healthy at once, `
          + 'so the gate it should be opens without any pod having run the new version',
        fix: 'label nodes for the wave (node-agents label) or drop the wave',
      });
    }
    if (info.updateStrategy.type === 'OnDelete' && (ds.change === 'created' || ds.podTemplateChanged)) {
      result.push({
        kind: 'stall',
        severity: 'error',
        cause: 'on-delete',
        agent: agent.agent,
        daemonSets: [ds.id],
        nodes: ds.replaced,
        message: `${ds.id} is OnDelete under Argo CD sync-wave gating: Argo CD counts it Healthy at once, so the next waves sync while `
          + `${ds.replaced.length > 0 ? nodeList(ds.replaced) : 'its nodes'} still run the old pod (nothing happens until the pods are deleted)`,
        fix: 'use a RollingUpdate strategy for gated waves, or drop the sync-wave gating and promote wave by wave after deleting the pods',
      });
    }
  }
  return result;
}

/**
 * A log collector: a fluent-bit image, or the library's log-collector component label. Two of it on one
 * node tail the same files into one tail database (the library's LogCollectorDaemonSet refuses surge).
 */
function isLogCollector(info: DaemonSetInfo | undefined): boolean {
  if (info === undefined) return false;
  return info.podLabels['app.kubernetes.io/component'] === 'log-collector' || info.imageRepositories.some((r) => /(^|\/)fluent-bit$/.test(r));
}

/** maxSurge on a log collector: every replaced node runs two collectors on one tail database while the new pod starts. */
function surgingCollectorFinding(agent: string, ds: DaemonSetPlan): Finding {
  return {
    kind: 'stall',
    severity: 'error',
    cause: 'strategy',
    agent,
    daemonSets: [ds.id],
    nodes: ds.replaced,
    message: `${ds.id} is a log collector with maxSurge: on each node the new pod starts beside the old one (update.go rollingUpdate), two fluent-bit `
      + 'processes on one tail database and one filesystem buffer: duplicated logs and corrupted offsets',
    fix: 'use maxUnavailable with maxSurge 0 (LogCollectorDaemonSet refuses a surging updateStrategy; drop the patch that sets maxSurge)',
  };
}

/**
 * A pod template with what differs between the rollout groups of one release removed: the group label, the
 * node affinity (the wave requirement) and anti-affinity terms on the group label.
 */
function releaseHash(object: Record<string, unknown>): string {
  const template = JSON.parse(JSON.stringify((object.spec as Record<string, unknown>).template)) as Record<string, any>;
  if (isObject(template.metadata) && isObject(template.metadata.labels)) delete template.metadata.labels[ROLLOUT_GROUP_LABEL];
  const affinity = isObject(template.spec) && isObject(template.spec.affinity) ? template.spec.affinity : undefined;
  if (affinity !== undefined) {
    delete affinity.nodeAffinity;
    const anti = affinity.podAntiAffinity;
    if (isObject(anti) && Array.isArray(anti.requiredDuringSchedulingIgnoredDuringExecution)) {
      anti.requiredDuringSchedulingIgnoredDuringExecution = anti.requiredDuringSchedulingIgnoredDuringExecution
        .filter((term: unknown) => !JSON.stringify(term).includes(ROLLOUT_GROUP_LABEL));
    }
  }
  return canonicalHash(template);
}

/**
 * A changed rollout group must take a release some group ran before (a promotion), take the one the first group
 * runs now (a new release enters at the canary, or every group moves together), or leave the release the first
 * group runs now (a rollback to the previous release). Any other template change restarts a group that no
 * promotion named: a setting changed in the current props that `previous` does not hold back.
 */
function heldWaveFindings(agent: AgentPlan, before: ManifestSet, after: ManifestSet): Finding[] {
  // each resource profile rolls its own release through the waves: its first group leads it
  const byProfile = new Map<string, DaemonSetPlan[]>();
  for (const d of agent.daemonSets) {
    if (d.rolloutGroup !== undefined && d.change !== 'deleted') entryOf(byProfile, profileOfGroup(d.rolloutGroup), () => []).push(d);
  }
  return [...byProfile.values()].flatMap((grouped) => profileHeldWaveFindings(agent, grouped, before, after));
}

function profileHeldWaveFindings(agent: AgentPlan, grouped: readonly DaemonSetPlan[], before: ManifestSet, after: ManifestSet): Finding[] {
  const beforeObjects = daemonSetObjects(before);
  const afterObjects = daemonSetObjects(after);
  const allowed = new Set(agent.daemonSets.filter((d) => beforeObjects.has(d.id)).map((d) => releaseHash(beforeObjects.get(d.id)!)));
  const lead = grouped[0];
  const leadRelease = releaseHash(afterObjects.get(lead.id)!);
  allowed.add(leadRelease);
  // a group leaving the release the lead runs now is rolled back (to the previous release, new to the tree)
  const rolledBack = (d: DaemonSetPlan) => releaseHash(beforeObjects.get(d.id)!) === leadRelease;
  const restarted = (d: DaemonSetPlan) => d !== lead && d.podTemplateChanged && !allowed.has(releaseHash(afterObjects.get(d.id)!)) && !rolledBack(d);
  return grouped.filter(restarted).map((d) => ({
    kind: 'held-wave-restart' as const,
    severity: 'error' as const,
    cause: 'template',
    agent: agent.agent,
    daemonSets: [d.id],
    nodes: d.replaced,
    message: `${d.id} (rollout group "${d.rolloutGroup}") restarts its pods on ${nodeList(d.replaced)} with a pod template no group ran before `
      + `and ${lead.id} does not take: a change reaches a wave that was not promoted`,
    fix: 'give the setting that changed its old value in `rollout.previous` (the held groups keep the previous release), or promote the wave',
  }));
}

/**
 * Pods a change restarts or moves outside a promotion, which heldWaveFindings (a new template on a held group) does
 * not see: a group restarting with the release it runs already (only what the wave layout sets changed: the waves
 * reordered, added, dropped or enabled), a new release led by another group than the one that led before (the
 * canary skipped), and nodes moving between the agent's DaemonSets (the old DaemonSet's pod is deleted at once,
 * outside any update budget) that moveFindings does not report already (`moveFound`). Errors unless acknowledged: `--allow-restart AGENT` or RESTART_ANNOTATION.
 */
function waveRestartFindings(ctx: PlanContext, agent: AgentPlan, allowed: readonly string[], moveFound: ReadonlySet<string>): Finding[] {
  const beforeObjects = daemonSetObjects(ctx.before);
  const afterObjects = daemonSetObjects(ctx.after);
  const annotated = agent.daemonSets.some((d) => (afterObjects.get(d.id)?.metadata as { annotations?: Record<string, string> } | undefined)
    ?.annotations?.[RESTART_ANNOTATION] === 'true');
  const acknowledged = allowed.includes(agent.agent) ? '--allow-restart' : annotated ? `the ${RESTART_ANNOTATION} annotation` : undefined;
  const finding = (cause: string, daemonSets: string[], nodes: readonly string[], message: string): Finding => ({
    kind: 'held-wave-restart',
    severity: acknowledged === undefined ? 'error' : 'warning',
    cause,
    agent: agent.agent,
    daemonSets,
    nodes: [...nodes].sort(compare),
    message: `${message}${acknowledged === undefined ? '' : ` (acknowledged by ${acknowledged})`}`,
    fix: 'keep the waves in their order and set (promote through them, then change the layout in a commit of its own), or acknowledge the restart: '
      + `plan --allow-restart ${agent.agent}, or annotate a DaemonSet of the agent ${RESTART_ANNOTATION}: "true"`,
  });
  const findings: Finding[] = [];
  const kept = agent.daemonSets.filter((d) => d.podTemplateChanged && beforeObjects.has(d.id) && afterObjects.has(d.id)
    && releaseHash(beforeObjects.get(d.id)!) === releaseHash(afterObjects.get(d.id)!));
  for (const d of kept) {
    findings.push(finding('wave-layout', [d.id], d.replaced, `${d.id} restarts its pods on ${nodeList(d.replaced)} with the release it runs already: `
      + 'only what the wave layout sets in its pod template changed (the waves reordered, added, dropped or enabled)'));
  }
  const beforeLead = orderWaves(ctx.before.daemonSets.filter((d) => d.agent === agent.agent))[0];
  const afterLead = agent.daemonSets.find((d) => d.change !== 'deleted');
  const ranBefore = new Set(agent.daemonSets.filter((d) => beforeObjects.has(d.id)).map((d) => releaseHash(beforeObjects.get(d.id)!)));
  if (beforeLead !== undefined && afterLead !== undefined && afterLead.id !== beforeLead.id && afterLead.replaced.length > 0
    && !ranBefore.has(releaseHash(afterObjects.get(afterLead.id)!))) {
    findings.push(finding('wave-order', [afterLead.id, beforeLead.id], afterLead.replaced, `a new release reaches ${afterLead.id} (${nodeList(afterLead.replaced)}) first: `
      + `${beforeLead.id} led the rollout before, and the waves' order changed`));
  }
  const moves = new Map<string, { from: string; to: string; nodes: string[] }>();
  // a move moveFindings reports already (two pods on the node, a wedged sync) is not named twice
  for (const m of agent.moved.filter((x) => !moveFound.has(x.node))) {
    entryOf(moves, `${m.from}\0${m.to}`, () => ({ from: m.from, to: m.to, nodes: [] })).nodes.push(m.node);
  }
  for (const m of moves.values()) {
    findings.push(finding('wave-move', [m.from, m.to], m.nodes, `${nodeList(m.nodes)} move from ${m.from} to ${m.to}: the pods there restart at once, `
      + 'outside any update budget, when the old DaemonSet is deleted or narrowed'));
  }
  return findings;
}

/**
 * A new release (one no group of the agent ran before) reaching two or more rollout groups in one change: with
 * `rollout.previous` set and `Promotion.all()`, every wave takes it at once. Without Argo CD sync waves nothing orders
 * them (the DaemonSets roll in parallel): the canary protects nothing, an error unless acknowledged (`--allow-restart
 * AGENT` or RESTART_ANNOTATION). With sync waves but no gate, Argo CD applies each wave once the one before is
 * Healthy, with no metric checked in between: a warning. With sync waves and gates the plan's rollout line says so.
 */
function allWavesFindings(ctx: PlanContext, agent: AgentPlan, allowed: readonly string[]): Finding[] {
  if (agent.sequential && agent.gates.length > 0) return [];
  const beforeObjects = daemonSetObjects(ctx.before);
  const afterObjects = daemonSetObjects(ctx.after);
  const ranBefore = new Set([...beforeObjects.entries()].filter(([id]) => agent.daemonSets.some((d) => d.id === id)).map(([, o]) => releaseHash(o)));
  const reached = agent.daemonSets.filter((d) => d.rolloutGroup !== undefined && d.replaced.length > 0 && afterObjects.has(d.id)
    && !ranBefore.has(releaseHash(afterObjects.get(d.id)!)));
  // the release enters at the first group (a held group's new template alone is heldWaveFindings')
  const first = agent.daemonSets.find((d) => d.rolloutGroup !== undefined && d.change !== 'deleted');
  if (first === undefined || !reached.includes(first) || new Set(reached.map((d) => d.rolloutGroup)).size < 2) return [];
  const annotated = agent.daemonSets.some((d) => (afterObjects.get(d.id)?.metadata as { annotations?: Record<string, string> } | undefined)
    ?.annotations?.[RESTART_ANNOTATION] === 'true');
  const acknowledged = allowed.includes(agent.agent) ? '--allow-restart' : annotated ? `the ${RESTART_ANNOTATION} annotation` : undefined;
  const nodes = reached.flatMap((d) => d.replaced).sort(compare);
  const groups = reached.map((d) => d.rolloutGroup).join(', ');
  const ordered = agent.sequential;
  return [{
    kind: 'held-wave-restart',
    severity: ordered || acknowledged !== undefined ? 'warning' : 'error',
    cause: 'all-waves-at-once',
    agent: agent.agent,
    daemonSets: reached.map((d) => d.id),
    nodes,
    message: `a new release reaches ${reached.length} rollout groups at once (${groups}; ${nodeList(nodes)}): `
      + (ordered ? 'Argo CD sync waves apply them in turn, each once the one before is Healthy, but no gate checks the canary\'s metrics in between'
        : 'nothing orders them (no Argo CD sync waves), so the DaemonSets roll in parallel and the canary protects nothing')
      + (acknowledged === undefined ? '' : ` (acknowledged by ${acknowledged})`),
    fix: 'promote one wave per commit (Promotion.through(WAVE)), or order the waves: rollout.argoCdSyncWaves with rollout.gates; '
      + `or acknowledge it: plan --allow-restart ${agent.agent}, or annotate a DaemonSet of the agent ${RESTART_ANNOTATION}: "true"`,
  }];
}

/**
 * Nodes that lose an agent the after-tree still runs elsewhere: a DaemonSet deleted (e.g. the held waves' DaemonSets
 * when `rollout.previous` is dropped mid-upgrade) or narrowed (selector, affinity, tolerations) while the agent
 * remains. The DaemonSet controller deletes those pods at once, outside any update budget. An error unless
 * acknowledged: `--allow-narrowing AGENT`, or the NARROWING_ANNOTATION on a DaemonSet of the agent in the after-tree.
 * An agent the after-tree no longer holds at all is a removal (removalFinding).
 */
function lossFindings(agent: AgentPlan, after: ManifestSet, allowed: readonly string[]): Finding[] {
  if (agent.lost.length === 0) return [];
  const remaining = agent.daemonSets.filter((d) => d.change !== 'deleted');
  if (remaining.length === 0) return [removalFinding(agent, after, allowed)];
  const objects = daemonSetObjects(after);
  const annotated = remaining.some((d) => {
    const metadata = objects.get(d.id)?.metadata as { annotations?: Record<string, string> } | undefined;
    return metadata?.annotations?.[NARROWING_ANNOTATION] === 'true';
  });
  const acknowledged = allowed.includes(agent.agent) ? '--allow-narrowing' : annotated ? `the ${NARROWING_ANNOTATION} annotation` : undefined;
  const groups = new Map<string, string[]>();
  for (const loss of agent.lost) entryOf(groups, loss.from, () => []).push(loss.node);
  return [...groups.entries()].map(([from, nodes]) => {
    const deleted = agent.daemonSets.find((d) => d.id === from)?.change === 'deleted';
    const how = deleted ? `${from} is deleted` : `${from} no longer covers them`;
    return {
      kind: 'loses-agent' as const,
      severity: acknowledged === undefined ? 'error' as const : 'warning' as const,
      cause: deleted ? 'deleted' : 'narrowed',
      agent: agent.agent,
      daemonSets: [from],
      nodes,
      message: `${nodeList(nodes)} lose ${agent.agent}, which stays on ${remaining.map((d) => d.id).join(', ')}: ${how}, and the controller removes `
        + `their pods at once, outside any update budget${acknowledged === undefined ? '' : ` (acknowledged by ${acknowledged})`}`,
      fix: deleted
        ? 'keep the DaemonSet (a rollout that drops `rollout.previous` before every wave is promoted deletes the held waves: promote them first), '
          + `or acknowledge the narrowing: plan --allow-narrowing ${agent.agent}, or annotate a DaemonSet of the agent ${NARROWING_ANNOTATION}: "true"`
        : `keep the nodes selected, or acknowledge the narrowing: plan --allow-narrowing ${agent.agent}, or annotate a DaemonSet of the agent ${NARROWING_ANNOTATION}: "true"`,
    };
  });
}

/** The agents the after-tree's REMOVAL_ANNOTATION names, on any object. */
function acknowledgedRemovals(after: ManifestSet): Set<string> {
  const names = new Set<string>();
  for (const { object } of after.documents) {
    const value = (object.metadata as { annotations?: Record<string, unknown> } | undefined)?.annotations?.[REMOVAL_ANNOTATION];
    if (typeof value === 'string') for (const name of value.split(',')) if (name.trim() !== '') names.add(name.trim());
  }
  return names;
}

/**
 * The agent is removed altogether: every node that ran it loses it when its DaemonSets are deleted (the garbage
 * collector deletes their pods at once, outside any update budget; with Argo CD, when it prunes them). An error
 * unless acknowledged: --allow-narrowing AGENT, or REMOVAL_ANNOTATION naming it on an object of the after-tree.
 */
function removalFinding(agent: AgentPlan, after: ManifestSet, allowed: readonly string[]): Finding {
  const acknowledged = allowed.includes(agent.agent) ? '--allow-narrowing'
    : acknowledgedRemovals(after).has(agent.agent) ? `the ${REMOVAL_ANNOTATION} annotation` : undefined;
  const ids = agent.daemonSets.map((d) => d.id);
  const nodes = agent.lost.map((l) => l.node);
  return {
    kind: 'loses-agent',
    severity: acknowledged === undefined ? 'error' : 'warning',
    cause: 'removed',
    agent: agent.agent,
    daemonSets: ids,
    nodes,
    message: `${nodeList(nodes)} lose ${agent.agent}, which the change removes altogether (${ids.join(', ')} deleted): their pods are deleted at once `
      + `(the garbage collector; with Argo CD when it prunes), outside any update budget${acknowledged === undefined ? '' : ` (acknowledged by ${acknowledged})`}`,
    fix: `keep the agent, or acknowledge its removal: plan --allow-narrowing ${agent.agent}, or annotate an object the change keeps (a Namespace, a ConfigMap) `
      + `${REMOVAL_ANNOTATION}: "${agent.agent}"`,
  };
}

/**
 * The Priority admission plugin on the pods a change creates (coverage/priority.ts resolvePriority): a template it
 * refuses gets no pod at all (the DaemonSet's FailedCreate), while the rolling update has already deleted the first
 * node's old pod: an error. A priorityClassName neither built in nor in the trees is a warning: admission refuses
 * the pods unless the cluster holds that class.
 */
function admissionFindings(ctx: PlanContext, agents: readonly AgentPlan[], touched: ReadonlySet<string>): Finding[] {
  const classes = priorityClassesOf(ctx.after);
  const objects = daemonSetObjects(ctx.after);
  const findings: Finding[] = [];
  for (const agent of agents) {
    if (!touched.has(agent.agent)) continue;
    for (const d of agent.daemonSets.filter((x) => x.change === 'created' || x.podTemplateChanged)) {
      const spec = (objects.get(d.id)?.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template?.spec;
      const resolved = resolvePriority(spec, classes);
      const arriving = [...agent.gained, ...agent.moved].filter((x) => x.to === d.id).map((x) => x.node);
      const nodes = [...new Set([...d.replaced, ...arriving])].sort(compare);
      const base = { agent: agent.agent, daemonSets: [d.id], nodes };
      if (resolved.refusal !== undefined) {
        findings.push({
          ...base,
          kind: 'never-starts',
          severity: 'error',
          cause: 'priority-admission',
          message: `${d.id}: the Priority admission plugin refuses every pod of the new template ("${resolved.refusal}"): the DaemonSet reports FailedCreate, `
            + `and no new pod starts on ${nodeList(nodes)}${d.replaced.length > 0 ? ', where the rolling update deletes the old pods first' : ''}`,
          fix: 'drop spec.priority and spec.preemptionPolicy from the pod template: admission sets both from the PriorityClass '
            + '(a non-preempting agent needs a PriorityClass with preemptionPolicy: Never)',
        });
      } else if (resolved.priority === undefined) {
        findings.push({
          ...base,
          kind: 'never-starts',
          severity: 'warning',
          cause: 'unknown-priority-class',
          message: `${d.id}: priorityClassName ${resolved.className} is neither built in nor a PriorityClass of the manifests: `
            + 'the Priority admission plugin refuses every pod ("no PriorityClass with name ... was found") unless the cluster holds it',
          fix: `include the PriorityClass ${resolved.className} in the manifests (or check that the cluster has it)`,
        });
      }
    }
  }
  return findings;
}

/** The DaemonSet objects of a tree by id. */
function daemonSetObjects(set: ManifestSet): Map<string, Record<string, unknown>> {
  return new Map(set.documents.filter((d) => d.object.kind === 'DaemonSet')
    .map((d) => [`${d.object.metadata?.namespace ?? 'default'}/${d.object.metadata?.name}`, d.object as Record<string, unknown>]));
}

/** spec.selector of a live DaemonSet is immutable: the API server rejects the update, so nothing of it rolls out. */
function selectorFindings(agent: AgentPlan, before: ManifestSet, after: ManifestSet): Finding[] {
  const was = daemonSetObjects(before);
  const will = daemonSetObjects(after);
  const selector = (object: Record<string, unknown>) => canonicalHash((object.spec as Record<string, unknown>).selector ?? null);
  return agent.daemonSets.filter((d) => d.change === 'changed' && selector(was.get(d.id)!) !== selector(will.get(d.id)!)).map((d) => ({
    kind: 'stall' as const,
    severity: 'error' as const,
    cause: 'immutable-selector',
    agent: agent.agent,
    daemonSets: [d.id],
    nodes: d.replaced,
    message: `${d.id} changes spec.selector, which is immutable: the API server rejects the update (Argo CD's sync fails), so none of its changes reach the nodes`,
    fix: 'keep the selector as it is, or delete and recreate the DaemonSet (Argo CD: the Replace=true sync option), which replaces every pod at once',
  }));
}

/**
 * In the after-tree: pods that never start on a node (host port, anti-affinity, untolerated taint) and two pods of one agent for good.
 * `rolloutTaints`: per DaemonSet, its agent's readiness taints it does not remove while others of the agent do (gapTaintKeys).
 */
function steadyStateFindings(report: CoverageReport, byId: ReadonlyMap<string, DaemonSetInfo>, touched: ReadonlySet<string>,
  rolloutTaints: ReadonlyMap<string, ReadonlySet<string>>): Finding[] {
  return [
    ...hostPortClashFindings(report, byId, touched),
    ...coLocationGroups(report, touched).map(coLocationFinding),
    ...tolerationFindings(report, touched, rolloutTaints),
  ];
}

/** Two DaemonSets binding one host port on a node (coverage's host-port-clash problems) of a touched agent. */
function hostPortClashFindings(report: CoverageReport, byId: ReadonlyMap<string, DaemonSetInfo>, touched: ReadonlySet<string>): Finding[] {
  const result: Finding[] = [];
  for (const problem of report.problems) {
    if (problem.kind !== 'host-port-clash' || !problem.daemonSets.some((id) => touched.has(byId.get(id)!.agent))) continue;
    result.push({
      kind: 'never-starts',
      severity: 'error',
      cause: 'host-port',
      agent: problem.agent,
      daemonSets: problem.daemonSets,
      nodes: problem.nodes,
      message: problem.message,
      fix: 'give one of them another host port, or keep them off each other\'s nodes (nodeSelector / affinity)',
    });
  }
  return result;
}

/** DaemonSets placed together on nodes, one group per cause and set of DaemonSets with its nodes, in the report's order. */
function coLocationGroups(report: CoverageReport, touched: ReadonlySet<string>): CoLocationGroup[] {
  // DaemonSets on one node whose anti-affinity keeps a pod Pending; of one agent without it, or of two agents
  // running one program, they run twice. Decided per node from the DaemonSets covering it (once per distinct
  // set of them), not for every pair of DaemonSets: one finding per cause and set of DaemonSets, listing its nodes.
  const rank = new Map(report.daemonSets.map((d, i) => [d.info.id, i]));
  const sets = new SetIds<DaemonSetInfo>(report.nodes.length, report.daemonSets.length);
  report.daemonSets.forEach(({ info, positions }, d) => {
    for (const at of positions) sets.add(at, d, info);
  });
  const groups = new Map<string, CoLocationGroup>();
  // per distinct set of DaemonSets: its findings' groups (a touched agent among their DaemonSets)
  const memo = new Map<number, { nodes: string[] }[]>();
  report.nodes.forEach((node, i) => {
    const set = sets.of(i);
    if (sets.size(set) < 2) return;
    let found = memo.get(set);
    if (found === undefined) {
      const here = sets.list(set);
      found = (here.some((d) => touched.has(d.agent)) ? coLocations(here) : [])
        .filter((c) => c.members.some((d) => touched.has(d.agent)))
        .map((c) => {
          const key = `${c.cause}\0${c.program ?? ''}\0${c.members.map((d) => d.id).join('\0')}`;
          return entryOf(groups, key, () => ({ ...c, nodes: [] }));
        });
      memo.set(set, found);
    }
    for (const group of found) group.nodes.push(node.name);
  });
  return [...groups.values()].sort((x, y) => rank.get(x.members[0].id)! - rank.get(y.members[0].id)!);
}

/** The Helm charts `AgentAdoption` knows, by chart name (`helm.sh/chart` without its version), and their factories. */
const ADOPTABLE_CHARTS: Readonly<Record<string, string>> = {
  'fluent-bit': 'AgentAdoption.fluentBitChart',
  'prometheus-node-exporter': 'AgentAdoption.nodeExporterChart',
};

/**
 * When one of the DaemonSets is a Helm release of a chart `AgentAdoption` knows (labels `app.kubernetes.io/managed-by:
 * Helm`, `helm.sh/chart: <chart>-<version>`, `app.kubernetes.io/instance: <release>`), the adoption that takes it over,
 * with the release name, and nameOverride / fullnameOverride when its names are not the chart's defaults (the charts'
 * `<chart>.name` / `<chart>.fullname` helpers); kube-prometheus-stack's subchart (pod label jobLabel: node-exporter) says so.
 */
function chartAdoptionFix(members: readonly DaemonSetInfo[]): string | undefined {
  for (const ds of members) {
    const labels = ds.labels ?? {};
    const chart = /^(.+)-v?\d+\.\d+\.\d+.*$/.exec(labels['helm.sh/chart'] ?? '')?.[1];
    const release = labels['app.kubernetes.io/instance'];
    if (labels['app.kubernetes.io/managed-by'] !== 'Helm' || chart === undefined || release === undefined || !(chart in ADOPTABLE_CHARTS)) continue;
    const name = labels['app.kubernetes.io/name'] ?? ds.podLabels['app.kubernetes.io/name'] ?? chart;
    const fullname = release.includes(name) ? release : `${release}-${name}`;
    const options = [
      `namespace: '${ds.namespace}'`, `releaseName: '${release}'`,
      ...(name !== chart ? [`nameOverride: '${name}'`] : []),
      ...(ds.name !== fullname ? [`fullnameOverride: '${ds.name}'`] : []),
      ...(chart === 'prometheus-node-exporter' && ds.podLabels.jobLabel === 'node-exporter' ? ['kubePrometheusStack: true'] : []),
    ];
    const other = members.find((m) => m !== ds);
    return `adopt the chart's DaemonSet ${ds.id} (Helm release ${release}, chart ${labels['helm.sh/chart']}) instead of adding a second one: `
      + `${other ? `in ${other.agent}, ` : ''}adopt: ${ADOPTABLE_CHARTS[chart]}({ ${options.join(', ')} })`;
  }
  return undefined;
}

/** The finding of one co-location group: one program twice, an anti-affinity that keeps a pod Pending, or a duplicate. */
function coLocationFinding({ cause, members, program, nodes }: CoLocationGroup): Finding {
  const [a, b] = members;
  const two = members.length === 2;
  const agents = new Set(members.map((d) => d.agent));
  const ids = members.map((d) => d.id);
  if (cause === 'same-program') {
    return {
      kind: 'two-pods-per-node',
      severity: 'error',
      cause: 'same-program',
      agent: a.agent,
      daemonSets: ids,
      nodes,
      message: (two ? `${a.id} (${a.agent}) and ${b.id} (${b.agent}) both run`
        : `${members.length} DaemonSets of ${agents.size} agents (${idList(members.map((d) => `${d.id} (${d.agent})`))}) all run`)
        + ` ${program} on ${nodeList(nodes)} for good: ${two ? 'two copies' : 'several copies'} of one agent on each node (a log collector ships every line ${two ? 'twice' : 'several times'})`,
      fix: `${chartAdoptionFix(members) ?? 'adopt the running DaemonSet instead of adding a second one (prop `adopt`, e.g. AgentAdoption.fluentBitChart())'}, `
        + `or delete ${two ? `${a.id} or ${b.id}` : 'all but one of them'}; if both are meant to run, keep their node selections disjoint`,
    };
  } else if (cause === 'anti-affinity') {
    return {
      kind: 'never-starts',
      severity: 'error',
      cause: 'anti-affinity',
      agent: agents.size === 1 ? a.agent : undefined,
      daemonSets: ids,
      nodes,
      message: two
        ? `${a.id} and ${b.id} both place a pod on ${nodeList(nodes)}, and a required pod anti-affinity keeps them apart: one of the two stays Pending for good`
        : `${members.length} DaemonSets (${idList(ids)}) all place a pod on ${nodeList(nodes)}, and required pod anti-affinity keeps them apart: `
          + 'all but one of them stay Pending for good',
      fix: 'make their node selections disjoint (nodeSelector / affinity, or the wave labels), or drop one of them',
    };
  } else {
    return {
      kind: 'two-pods-per-node',
      severity: 'error',
      cause: 'duplicate',
      agent: a.agent,
      daemonSets: ids,
      nodes,
      message: two
        ? `${a.agent} runs two pods on ${nodeList(nodes)} for good: both ${a.id} and ${b.id} cover them`
        : `${a.agent} runs ${members.length} pods on ${nodeList(nodes)} for good: ${members.length} of its DaemonSets (${idList(ids)}) all cover them`,
      // one of them a chart's install of the agent (an adoption with the wrong release name renders a second one)
      fix: `${prefixed(chartAdoptionFix(members), ', or ')}make the DaemonSets' node selections disjoint (one rollout partition), and ${ANTI_AFFINITY_FIX}`,
    };
  }
}

const prefixed = (text: string | undefined, then: string): string => (text === undefined ? '' : `${text}${then}`);

/** Targeted nodes an untolerated (non-condition) taint keeps a touched agent off. */
function tolerationFindings(report: CoverageReport, touched: ReadonlySet<string>,
  rolloutTaints: ReadonlyMap<string, ReadonlySet<string>>): Finding[] {
  const result: Finding[] = [];
  const explain = placementExplainer(report);
  for (const agent of report.agents) {
    if (!touched.has(agent.agent)) continue;
    const byTaint = new Map<string, { ds: string; taints: string; nodes: string[] }>();
    agent.nodes.forEach((entry, i) => {
      if (entry.status !== 'gap' || entry.closest === undefined) return;
      const placement = explain(agent.agent, i).find((p) => p.daemonSet === entry.closest);
      // a readiness taint of the agent that this group's release does not have yet (or no more) is the rollout's
      // state, with its own finding (readiness-taint-held / -dropped), not a toleration to add
      const rollout = rolloutTaints.get(entry.closest);
      const taints = placement?.blockers.filter((x) => x.kind === 'taint' && x.cls === 'taint' && !rollout?.has(x.taint.key)) ?? [];
      if (taints.length === 0 || placement!.blockers.some((x) => x.cls === 'wave' || x.cls === 'selection')) return;
      const text = taints.map((x) => (x.kind === 'taint' ? `${x.taint.key}${x.taint.value ? `=${x.taint.value}` : ''}:${x.taint.effect}` : '')).join(', ');
      const key = `${entry.closest}\0${text}`;
      const group = byTaint.get(key) ?? { ds: entry.closest, taints: text, nodes: [] };
      group.nodes.push(entry.node);
      byTaint.set(key, group);
    });
    for (const group of byTaint.values()) {
      result.push({
        kind: 'never-starts',
        severity: 'error',
        cause: 'toleration',
        agent: agent.agent,
        daemonSets: [group.ds],
        nodes: group.nodes,
        message: `${group.ds} targets ${nodeList(group.nodes)} but does not tolerate ${group.taints}: no pod of ${agent.agent} ever runs there`,
        fix: `add a toleration for ${group.taints} (or leave the nodes out on purpose with nodeSelector / affinity)`,
      });
    }
  }
  return result;
}

/** A co-location on the nodes it happens on. */
type CoLocationGroup = CoLocation & { nodes: string[] };

/** DaemonSets placed together on a node that cannot (anti-affinity) or should not (two pods of one program) be. */
interface CoLocation {
  readonly cause: 'same-program' | 'anti-affinity' | 'duplicate';
  /** in report order */
  readonly members: DaemonSetInfo[];
  readonly program?: string;
}

/**
 * What the DaemonSets covering one node (in report order) do to each other, as the pairwise rules read: a pair
 * a required anti-affinity separates (antiAffinitySeparates) never starts both pods; a pair of two agents it
 * does not separate that shares an image repository runs one program twice (same-program); a pair of one agent
 * it does not separate runs the agent twice (duplicate). Each cause groups every DaemonSet in such a pair. The
 * separated pairs are found from the DaemonSets that hold a hostname anti-affinity term only, so a node
 * covered by DaemonSets without one costs one pass.
 */
function coLocations(here: readonly DaemonSetInfo[]): CoLocation[] {
  const separated = new Map<string, Set<string>>();
  const mark = (x: string, y: string) => entryOf(separated, x, () => new Set()).add(y);
  for (const owner of here) {
    if (!owner.podAntiAffinity.some((t) => t.topologyKey === HOSTNAME_TOPOLOGY_KEY)) continue;
    for (const other of here) {
      if (other !== owner && antiAffinitySeparates(owner, other)) {
        mark(owner.id, other.id);
        mark(other.id, owner.id);
      }
    }
  }
  const apart = (x: DaemonSetInfo) => separated.get(x.id)?.size ?? 0;
  const result: CoLocation[] = [];
  const anti = here.filter((d) => apart(d) > 0);
  if (anti.length > 0) result.push({ cause: 'anti-affinity', members: anti });
  // one agent: a member runs twice when some other member of the agent is not separated from it
  const byAgent = new Map<string, DaemonSetInfo[]>();
  for (const d of here) entryOf(byAgent, d.agent, () => []).push(d);
  for (const members of byAgent.values()) {
    if (members.length < 2) continue;
    const twice = members.filter((d) => members.some((o) => o !== d && !separated.get(d.id)?.has(o.id)));
    if (twice.length > 0) result.push({ cause: 'duplicate', members: twice });
  }
  // two agents, one program: by image repository, the members with a member of another agent not separated from them
  const byProgram = new Map<string, DaemonSetInfo[]>();
  for (const d of here) for (const r of new Set(d.imageRepositories)) entryOf(byProgram, r, () => []).push(d);
  const claimed = new Set<string>();
  // in the order the node's DaemonSets list them: for two, the first repository of the first that the other runs too
  for (const [program, runners] of byProgram) {
    if (new Set(runners.map((d) => d.agent)).size < 2) continue;
    const twice = runners.filter((d) => runners.some((o) => o.agent !== d.agent && !separated.get(d.id)?.has(o.id)) && !claimed.has(d.id));
    if (twice.length < 2) continue;
    for (const d of twice) claimed.add(d.id);
    result.push({ cause: 'same-program', members: twice, program });
  }
  return result;
}

/** ConfigMaps published by the control plane in every namespace: never in a tree. */
const CLUSTER_PROVIDED = new Set(['ConfigMap/kube-root-ca.crt']);

/**
 * References the after-tree leaves dangling. A missing ConfigMap is an error; a missing Secret only when the
 * before-tree had it (the change deletes it): Secrets are often kept out of Git (created by hand, by an external
 * secrets operator or from a sealed secret), so one the tree never held is a warning. One finding per missing
 * object and agent, naming every DaemonSet and place that needs it (an agent's waves share their Secrets: one
 * warning, not one per wave and field).
 */
function referenceFindings(before: ManifestSet, after: ManifestSet, touched: ReadonlySet<string>, restarting: ReadonlySet<string>,
  afterCovered: ReadonlyMap<string, readonly string[]>): Finding[] {
  const present = (set: ManifestSet) => new Set(set.documents
    .filter((d) => d.object.kind === 'ConfigMap' || d.object.kind === 'Secret')
    .map((d) => `${d.object.kind}/${d.object.metadata?.namespace ?? 'default'}/${d.object.metadata?.name}`));
  const had = present(before);
  const has = present(after);
  const groups = new Map<string, MissingReference>();
  for (const ds of after.daemonSets) {
    if (!touched.has(ds.agent)) continue;
    for (const ref of ds.references) {
      if (CLUSTER_PROVIDED.has(`${ref.kind}/${ref.name}`)) continue;
      const key = `${ref.kind}/${ds.namespace}/${ref.name}`;
      if (has.has(key)) continue;
      const group = entryOf(groups, `${ds.agent}\0${key}`, () => ({ agent: ds.agent, kind: ref.kind, namespace: ds.namespace, name: ref.name, deleted: had.has(key), places: new Map() }));
      entryOf(group.places, ds.id, () => []).push(ref.from);
    }
  }
  return [...groups.values()].map((group) => missingReferenceFinding(group, restarting, afterCovered));
}

/** One missing ConfigMap or Secret of one agent: DaemonSet id → where its template names it. */
interface MissingReference {
  readonly agent: string;
  readonly kind: 'ConfigMap' | 'Secret';
  readonly namespace: string;
  readonly name: string;
  readonly deleted: boolean;
  readonly places: Map<string, string[]>;
}

function missingReferenceFinding(group: MissingReference, restarting: ReadonlySet<string>,
  afterCovered: ReadonlyMap<string, readonly string[]>): Finding {
  const { kind, namespace, name, deleted } = group;
  const error = kind === 'ConfigMap' || deleted;
  const ids = [...group.places.keys()];
  const nodesOf = (members: readonly string[]) => [...new Set(members.flatMap((id) => afterCovered.get(id) ?? []))].sort(compare);
  const nodes = nodesOf(ids);
  const shown = ids.slice(0, 10).map((id) => `${id} (${group.places.get(id)!.join(', ')})`).join(', ') + (ids.length > 10 ? `, … ${ids.length - 10} more` : '');
  const object = `${kind} ${namespace}/${name}`;
  const lacks = `which the after-tree ${deleted ? 'deletes' : 'does not hold'}`;
  const restarted = ids.filter((id) => restarting.has(id));
  const kept = ids.filter((id) => !restarting.has(id));
  const pods = (what: string, members: readonly string[]) => (ids.length === 1 ? `its ${what} pods` : `the ${what} pods of ${members.join(', ')}`);
  const effects = [
    ...restarted.length > 0 ? [`${pods('new', restarted)} on ${nodeList(nodesOf(restarted))} stay in ContainerCreating`] : [],
    ...kept.length > 0 ? [`${pods('running', kept)} on ${nodeList(nodesOf(kept))} keep running, but one restarted or on a new node stays in ContainerCreating`] : [],
  ];
  return {
    kind: 'missing-reference',
    severity: error ? 'error' : 'warning',
    cause: kind,
    agent: group.agent,
    daemonSets: ids,
    nodes,
    message: (ids.length === 1 ? `${ids[0]} needs ${object} (${group.places.get(ids[0])!.join(', ')}), ${lacks}` : `${object}, ${lacks}, is needed by ${ids.length} DaemonSets: ${shown}`)
      + (error ? `: ${effects.join('; ')}` : ': make sure it exists in the cluster (created outside the tree)'),
    fix: deleted ? `keep ${kind} ${name} in the tree until no pod template names it`
      : kind === 'ConfigMap' ? `add ConfigMap ${name} to the tree (same namespace), or mark the reference optional`
        : `create Secret ${name} in namespace ${namespace} before the change syncs, or mark the reference optional`,
  };
}

export function nodeList(names: readonly string[]): string {
  const shown = names.slice(0, 5).join(', ');
  return `${names.length} node${names.length === 1 ? '' : 's'} (${shown}${names.length > 5 ? `, … ${names.length - 5} more` : ''})`;
}
