import { compare, DaemonSetInfo, HostPort } from './manifests';
import { CORDONED_HAZARD, EffectiveTaint, NodeFacts, OS_LABEL, formatTaint, impliedNote } from './nodes';
import { emptyProfileIsUnused, unprofiledNodes, waveOfGroup } from './profiles';
import { AffinityIndex, IndexedNodes } from '../../scheduling/affinity-index';
import { fieldRequirementMatches, nodeSelectorMatches, requirementMatches, termsMatch } from '../../scheduling/node-affinity';
import { controllerAddedTolerations, tolerationCheck } from '../../scheduling/tolerations';
import { NodeSelectorRequirementJson, NodeSelectorTermJson, TolerationJson } from '../../scheduling/types';
import { entryOf } from '../../util/maps';
import { SetIds } from '../../util/set-ids';
import { DEFAULT_WAVE_LABEL_KEY, FLEET_GROUP } from '../../waves/partition';


export interface CoverageOptions {
  /**
   * wave label key of the partition (default `node-agents.cdk8s.io/rollout-wave`). A node failing only a
   * requirement on this key falls between the waves: a gap, not a selector's intent.
   */
  readonly waveLabelKey?: string;
  /** taint keys an agent may leave untolerated on purpose: such nodes are reported as intended exclusions */
  readonly intendedTaintKeys?: readonly string[];
}

/**
 * How much a reason says about intent:
 * - selection: the DaemonSet's nodeSelector/affinity does not target the node (the author's choice);
 * - wave: only the wave requirement fails: the node falls between the waves of a partition (a gap);
 * - taint: an untolerated taint keeps a targeted node out (a gap: the agent is silently missing from that node);
 * - node-condition: a `node.kubernetes.io/*` taint from the node's state (NotReady, pressure...);
 * - intended: a taint the user said is excluded on purpose.
 */
export type BlockerClass = 'selection' | 'wave' | 'taint' | 'node-condition' | 'intended';

export interface RequirementFailure {
  readonly on: 'label' | 'field';
  readonly requirement: NodeSelectorRequirementJson;
  /** the node's value for the key (undefined: the node lacks the label) */
  readonly actual?: string;
}

export interface TermFailure {
  /** 0-based index in nodeSelectorTerms */
  readonly index: number;
  /** a term with no expressions and no fields matches nothing */
  readonly empty: boolean;
  readonly failed: readonly RequirementFailure[];
}

export type Blocker =
  | { readonly kind: 'nodeName'; readonly cls: BlockerClass; readonly want: string }
  | { readonly kind: 'nodeSelector'; readonly cls: BlockerClass; readonly key: string; readonly want: string; readonly actual?: string }
  | {
    readonly kind: 'affinity';
    readonly cls: BlockerClass;
    /** the first MAX_EXPLAINED_TERMS terms' failures */
    readonly terms: readonly TermFailure[];
    /** terms past those, not explained */
    readonly omittedTerms?: number;
  }
  | { readonly kind: 'taint'; readonly cls: BlockerClass; readonly taint: EffectiveTaint };

/** Why one DaemonSet does not place a pod on one node. */
export interface Placement {
  readonly daemonSet: string;
  readonly blockers: readonly Blocker[];
  /**
   * The DaemonSet targets the node and only NoSchedule taints block it: a pod already running there keeps
   * running (the controller's shouldContinueRunning), only a new one is not created.
   */
  readonly existingPodKeepsRunning: boolean;
}

/**
 * covered: one DaemonSet of the agent owns the node; duplicate: two or more do;
 * gap: a targeted node no DaemonSet covers (untolerated taint, or between waves);
 * excluded: non-linux / virtual node, or an intended taint; not-selected: no DaemonSet of the agent targets it;
 * node-condition: only the node's state (NotReady...) keeps the pod off.
 */
export type AgentNodeStatus = 'covered' | 'duplicate' | 'gap' | 'excluded' | 'not-selected' | 'node-condition';

export const AGENT_NODE_STATUSES: readonly AgentNodeStatus[] = ['covered', 'duplicate', 'gap', 'excluded', 'not-selected', 'node-condition'];

export interface AgentNode {
  readonly node: string;
  readonly status: AgentNodeStatus;
  readonly owners: readonly string[];
  /** one line: the reason behind the status (empty when covered) */
  readonly why: string;
  /** for a gap, node-condition or intended exclusion: the DaemonSet `why` explains */
  readonly closest?: string;
  /** for node-condition: a pod already running there keeps running (only NoSchedule taints block a new one) */
  readonly existingPodKeepsRunning?: boolean;
  /** for a gap an untolerated taint causes: the prop that tolerates it, or the flag that calls it intended */
  readonly fix?: string;
}

export interface AgentCoverage {
  readonly agent: string;
  /** DaemonSet ids in wave order */
  readonly daemonSets: readonly string[];
  readonly nodes: readonly AgentNode[];
  readonly counts: Readonly<Record<AgentNodeStatus, number>>;
}

export interface DaemonSetCoverage {
  readonly info: DaemonSetInfo;
  /** node names, sorted */
  readonly covered: readonly string[];
  /** the same nodes as positions in the report's `nodes`, ascending (tables by position need no map of names) */
  readonly positions: readonly number[];
}

export type ProblemKind = 'gap' | 'duplicate' | 'empty-wave' | 'unready-in-wave' | 'host-port-clash' | 'unsupported-node' | 'never-starts';

export interface Problem {
  readonly kind: ProblemKind;
  readonly agent?: string;
  readonly daemonSets: readonly string[];
  readonly nodes: readonly string[];
  readonly message: string;
  /** what to change, when the message ends with one (`Fix: …`): the same text, for machines */
  readonly fix?: string;
}

export interface CoverageReport {
  readonly waveLabelKey: string;
  readonly intendedTaintKeys: readonly string[];
  readonly nodes: readonly NodeFacts[];
  readonly daemonSets: readonly DaemonSetCoverage[];
  readonly agents: readonly AgentCoverage[];
  readonly problems: readonly Problem[];
}

/** nodeSelectorTerms explained per node (a DaemonSet may list thousands); the rest are counted. */
export const MAX_EXPLAINED_TERMS = 10;

/** A DaemonSet with what the per-node check needs precomputed. */
interface Prepared {
  readonly info: DaemonSetInfo;
  readonly selectorEntries: readonly (readonly [string, string])[];
  readonly tolerations: readonly TolerationJson[];
  /** the tolerations, plus the ones the controller adds, tolerate the taint */
  readonly tolerates: (taint: EffectiveTaint) => boolean;
  readonly mentionsOs: boolean;
  readonly mentionsVirtual: boolean;
  /** the required node affinity selects the node (termsMatch, through the index) */
  readonly affinityMatches: (node: NodeFacts) => boolean;
  /** some non-empty term fails on the node only on requirements on the wave key */
  readonly failsOnlyOnWave: (node: NodeFacts) => boolean;
}

/**
 * Which nodes each DaemonSet covers, per agent who owns each node or why nobody does, and the problems.
 * Semantics: the DaemonSet controller's nodeShouldRunDaemonPod (nodeName, nodeSelector, required node affinity,
 * NoSchedule/NoExecute taints against the pod's tolerations plus the ones the controller adds).
 */
export function analyzeCoverage(daemonSets: readonly DaemonSetInfo[], givenNodes: readonly NodeFacts[],
  options: CoverageOptions = {}): CoverageReport {
  // Nodes and DaemonSets in name order: the report does not depend on the order they were given in.
  const nodes = [...givenNodes].sort((a, b) => compare(a.name, b.name));
  const waveKey = options.waveLabelKey ?? DEFAULT_WAVE_LABEL_KEY;
  const intended = new Set(options.intendedTaintKeys ?? []);
  const index = new AffinityIndex(nodes);
  const prepared = [...daemonSets].sort((a, b) => compare(a.id, b.id)).map((info) => prepare(info, index, waveKey));
  const byId = new Map(prepared.map((p) => [p.info.id, p]));

  // coveredBy(i) = ids of the DaemonSets covering nodes[i]: a set number per node (most nodes share a few sets),
  // each set's list built once, instead of a list per node
  const covering = new SetIds<string>(nodes.length, prepared.length);
  const coveredPositions = new Map<string, number[]>(prepared.map((p) => [p.info.id, []]));
  prepared.forEach((ds, k) => {
    const positions = coveredPositions.get(ds.info.id)!;
    nodes.forEach((node, i) => {
      if (fits(ds, node)) {
        covering.add(i, k, ds.info.id);
        positions.push(i);
      }
    });
  });
  const lists = new Map<number, readonly string[]>();
  const coveredBy = (i: number): readonly string[] => {
    const set = covering.of(i);
    return set === 0 ? NO_OWNERS : entryOf(lists, set, () => covering.list(set));
  };

  const problems: Problem[] = [];
  const agents = groupByAgent(prepared.map((p) => p.info)).map(([agent, members]) => {
    const ids = members.map((m) => m.id);
    const memberSet = new Set(ids);
    const agentPrepared = members.map((m) => byId.get(m.id)!);
    // one shared owners array per DaemonSet: most nodes have exactly one owner, no need to allocate one each
    const single = new Map(ids.map((id) => [id, [id] as readonly string[]]));
    const counts = Object.fromEntries(AGENT_NODE_STATUSES.map((s) => [s, 0])) as Record<AgentNodeStatus, number>;
    const agentNodes = nodes.map((node, i): AgentNode => {
      const owners = ownersOf(coveredBy(i), memberSet, single);
      const entry = owners.length === 1 ? { node: node.name, status: 'covered' as const, owners, why: '' }
        : classify(node, owners, agentPrepared, waveKey, intended);
      counts[entry.status]++;
      return entry;
    });
    problems.push(...agentProblems(agent, agentNodes));
    return { agent, daemonSets: ids, nodes: agentNodes, counts };
  });

  const infos = prepared.map((p) => p.info);
  const coveredCount = (id: string) => coveredPositions.get(id)?.length ?? 0;
  for (const ds of prepared) {
    const group = ds.info.rolloutGroup;
    // a resource profile's DaemonSet belongs to its wave (`<wave>.<profile>`); a profile with no node at all is unused, not an empty wave
    if (coveredPositions.get(ds.info.id)!.length === 0 && group !== undefined && waveOfGroup(group) !== FLEET_GROUP
      && !emptyProfileIsUnused(ds.info, infos, coveredCount)) {
      problems.push({
        kind: 'empty-wave',
        agent: ds.info.agent,
        daemonSets: [ds.info.id],
        nodes: [],
        message: `${ds.info.id} (rollout group "${group}") covers zero nodes: Argo CD counts a DaemonSet with nothing to schedule (desiredNumberScheduled 0) as Healthy at once, so this wave gates nothing. Label nodes for it (node-agents label) or drop the wave.`,
      });
    }
  }
  problems.push(...profileGaps(infos, nodes, agents));
  problems.push(...unreadyInWaves(prepared, nodes, waveKey, intended));
  problems.push(...unsupportedNodes(prepared, nodes, coveredBy, byId));
  problems.push(...hostPortClashes(nodes, coveredBy, byId));

  return {
    waveLabelKey: waveKey,
    intendedTaintKeys: [...intended].sort(compare),
    nodes,
    daemonSets: prepared.map((p) => {
      const positions = coveredPositions.get(p.info.id)!;
      return { info: p.info, covered: positions.map((i) => nodes[i].name), positions };
    }),
    agents,
    problems: problems.sort((a, b) => compare(a.kind, b.kind) || compare(a.agent ?? '', b.agent ?? '') || compare(a.message, b.message)),
  };
}

function prepare(info: DaemonSetInfo, index: AffinityIndex<NodeFacts>, waveKey: string): Prepared {
  const keys = new Set([
    ...Object.keys(info.nodeSelector),
    ...(info.requiredTerms ?? []).flatMap((t) => (t.matchExpressions ?? []).map((r) => r.key)),
  ]);
  const terms = info.requiredTerms;
  // computed on first use, for every indexed node at once
  let matching: IndexedNodes<NodeFacts> | undefined;
  let waveMatching: IndexedNodes<NodeFacts> | undefined;
  const tolerations = [...info.tolerations, ...controllerAddedTolerations(info.hostNetwork)];
  return {
    info,
    selectorEntries: Object.entries(info.nodeSelector),
    tolerations,
    tolerates: tolerationCheck(tolerations),
    mentionsOs: keys.has(OS_LABEL) || keys.has('beta.kubernetes.io/os'),
    mentionsVirtual: keys.has('eks.amazonaws.com/compute-type') || keys.has('type'),
    affinityMatches: (node) => {
      if (terms === undefined) return true;
      if (!index.has(node)) return termsMatch(terms, node.identity);
      matching ??= index.matching(terms, info.id);
      return matching.has(node);
    },
    failsOnlyOnWave: (node) => {
      if (terms === undefined) return false;
      if (!index.has(node)) return terms.some((term) => failsOnlyOnWave(term, node, waveKey));
      waveMatching ??= index.matching(terms, info.id, waveKey);
      return waveMatching.has(node);
    },
  };
}

/** The fast path: does the controller want a pod of `ds` on `node`? */
function fits(ds: Prepared, node: NodeFacts): boolean {
  const info = ds.info;
  if (info.nodeName !== undefined && info.nodeName !== node.name) return false;
  for (const [key, value] of ds.selectorEntries) {
    if (node.labels[key] !== value) return false;
  }
  if (!ds.affinityMatches(node)) return false;
  for (const taint of node.taints) {
    if (taint.effect !== 'PreferNoSchedule' && !ds.tolerates(taint)) return false;
  }
  return true;
}

/** The slow path, only for nodes a DaemonSet does not cover: every reason, classified. */
function place(ds: Prepared, node: NodeFacts, waveKey: string, intended: ReadonlySet<string>): Placement {
  const info = ds.info;
  const blockers: Blocker[] = [];
  if (info.nodeName !== undefined && info.nodeName !== node.name) {
    blockers.push({ kind: 'nodeName', cls: 'selection', want: info.nodeName });
  }
  if (!nodeSelectorMatches(info.nodeSelector, node.labels)) {
    for (const [key, want] of ds.selectorEntries) {
      if (node.labels[key] !== want) {
        blockers.push({ kind: 'nodeSelector', cls: key === waveKey ? 'wave' : 'selection', key, want, actual: node.labels[key] });
      }
    }
  }
  if (info.requiredTerms !== undefined && !ds.affinityMatches(node)) {
    // the first terms only: a DaemonSet may list thousands
    const terms = info.requiredTerms.slice(0, MAX_EXPLAINED_TERMS).map((term, index) => termFailure(term, index, node));
    const omitted = info.requiredTerms.length - terms.length;
    // Terms are ORed: if one term fails only on the wave key, the node would be targeted but for its wave.
    blockers.push({ kind: 'affinity', cls: ds.failsOnlyOnWave(node) ? 'wave' : 'selection', terms, ...(omitted > 0 ? { omittedTerms: omitted } : {}) });
  }
  let noExecute = false;
  for (const taint of node.taints) {
    if (taint.effect === 'PreferNoSchedule' || ds.tolerates(taint)) continue;
    if (taint.effect === 'NoExecute') noExecute = true;
    const cls: BlockerClass = taint.key.startsWith('node.kubernetes.io/') ? 'node-condition' : intended.has(taint.key) ? 'intended' : 'taint';
    blockers.push({ kind: 'taint', cls, taint });
  }
  const targeted = !blockers.some((b) => b.cls === 'selection' || b.cls === 'wave');
  return { daemonSet: info.id, blockers, existingPodKeepsRunning: targeted && !noExecute };
}

function termFailure(term: NodeSelectorTermJson, index: number, node: NodeFacts): TermFailure {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  const failed: RequirementFailure[] = [
    ...expressions.filter((r) => !requirementMatches(r, node.labels)).map((r): RequirementFailure => ({ on: 'label', requirement: r, actual: node.labels[r.key] })),
    ...fields.filter((r) => !fieldRequirementMatches(r, node.name)).map((r): RequirementFailure => ({ on: 'field', requirement: r, actual: r.key === 'metadata.name' ? node.name : undefined })),
  ];
  return { index, empty: expressions.length === 0 && fields.length === 0, failed };
}

/** Which classes of reasons keep one DaemonSet's pod off one node (see BlockerClass), without the details. */
export interface ReasonClasses {
  selection: boolean;
  wave: boolean;
  taint: boolean;
  condition: boolean;
  intended: boolean;
  /** an untolerated NoExecute taint: a running pod is evicted */
  noExecute: boolean;
}

/**
 * The classes of `place`'s blockers, without building the blockers: classification runs for every node and
 * agent, and allocating detailed reasons there dominated the time on big clusters. Must agree with `place` (tested).
 */
function reasonClasses(ds: Prepared, node: NodeFacts, waveKey: string, intended: ReadonlySet<string>): ReasonClasses {
  const info = ds.info;
  const r: ReasonClasses = { selection: false, wave: false, taint: false, condition: false, intended: false, noExecute: false };
  if (info.nodeName !== undefined && info.nodeName !== node.name) r.selection = true;
  for (const [key, want] of ds.selectorEntries) {
    if (node.labels[key] !== want) {
      if (key === waveKey) r.wave = true;
      else r.selection = true;
    }
  }
  if (!ds.affinityMatches(node)) {
    if (ds.failsOnlyOnWave(node)) r.wave = true;
    else r.selection = true;
  }
  for (const taint of node.taints) {
    if (taint.effect === 'PreferNoSchedule' || ds.tolerates(taint)) continue;
    if (taint.effect === 'NoExecute') r.noExecute = true;
    if (taint.key.startsWith('node.kubernetes.io/')) r.condition = true;
    else if (intended.has(taint.key)) r.intended = true;
    else r.taint = true;
  }
  return r;
}

/** A non-empty term whose failing requirements are all label requirements on the wave key. */
function failsOnlyOnWave(term: NodeSelectorTermJson, node: NodeFacts, waveKey: string): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  if (!fields.every((r) => fieldRequirementMatches(r, node.name))) return false;
  return expressions.every((r) => r.key === waveKey || requirementMatches(r, node.labels));
}

/** How many kinds of reason besides the selection: the closest DaemonSet has the fewest. */
function reasonCount(r: ReasonClasses): number {
  return [r.wave, r.taint, r.condition, r.intended].filter(Boolean).length;
}

const NO_OWNERS: readonly string[] = [];

/** The agent's DaemonSets among those covering a node, allocating only when there are two or more. */
function ownersOf(covering: readonly string[], members: ReadonlySet<string>, single: ReadonlyMap<string, readonly string[]>): readonly string[] {
  let found: string | undefined;
  let count = 0;
  for (const id of covering) {
    if (members.has(id)) {
      found = id;
      count++;
    }
  }
  if (count === 0) return NO_OWNERS;
  if (count === 1) return single.get(found!)!;
  // every DaemonSet on the node is the agent's (one agent's many DaemonSets): the same list, not a copy
  if (count === covering.length) return covering;
  return covering.filter((id) => members.has(id));
}

/** The status of one node for one agent whose DaemonSets (`members`, in wave order) do not cover it exactly once. */
function classify(node: NodeFacts, owners: readonly string[], members: readonly Prepared[], waveKey: string,
  intended: ReadonlySet<string>): AgentNode {
  const entry = (status: AgentNodeStatus, why: string, closest?: string, existingPodKeepsRunning?: boolean): AgentNode =>
    ({ node: node.name, status, owners, why, closest, existingPodKeepsRunning });
  if (owners.length > 1) return entry('duplicate', `owned by ${owners.length} DaemonSets of the agent: ${idList(owners)}`);
  const reasons = members.map((ds) => reasonClasses(ds, node, waveKey, intended));
  // A Windows or virtual node is outside a Linux agent on purpose, unless the agent selects it by that very
  // label (a Windows agent with nodeSelector kubernetes.io/os=windows): then it is judged like any node.
  const asked = (ds: Prepared) => (node.platform === 'virtual' ? ds.mentionsVirtual : ds.mentionsOs);
  if (node.platform !== 'linux' && !members.some((ds, k) => !reasons[k].selection && asked(ds))) {
    return entry('excluded', `${node.platform} node (${node.platformReason}): excluded on purpose`);
  }
  // The detailed reasons, only for the one DaemonSet the status names.
  const list = (k: number, classes: readonly BlockerClass[]) =>
    place(members[k], node, waveKey, intended).blockers.filter((b) => classes.includes(b.cls)).map(describeBlocker).join(', ');
  const idOf = (k: number) => members[k].info.id;

  // DaemonSets whose nodeSelector, affinity and wave requirement all match: only taints keep them off.
  const targeting = reasons.map((_, k) => k).filter((k) => !reasons[k].selection && !reasons[k].wave);
  const tainted = targeting.find((k) => reasons[k].taint);
  if (tainted !== undefined) {
    return { ...entry('gap', `${idOf(tainted)}: ${list(tainted, ['taint'])}`, idOf(tainted)), fix: taintGapFix(members[tainted], node, waveKey, intended) };
  }
  const condition = targeting.find((k) => reasons[k].condition);
  if (condition !== undefined) {
    const keeps = !reasons[condition].noExecute;
    const consequence = keeps
      ? 'a pod already running there keeps running (the controller tolerates not-ready/unreachable NoExecute), but no new pod is created until the node recovers'
      : 'a running pod is evicted too (untolerated NoExecute)';
    return entry('node-condition', `${idOf(condition)}: ${list(condition, ['node-condition'])}: ${consequence}`, idOf(condition), keeps);
  }
  if (targeting.length > 0) {
    return entry('excluded', `${idOf(targeting[0])}: ${list(targeting[0], ['intended'])} (intended)`, idOf(targeting[0]));
  }
  // Targeted but for the wave label: the node falls between the waves of a partition. Explain the closest.
  const between = reasons.map((_, k) => k).filter((k) => !reasons[k].selection);
  if (between.length > 0) {
    const closest = between.reduce((best, k) => (reasonCount(reasons[k]) < reasonCount(reasons[best]) ? k : best));
    return entry('gap', `${idOf(closest)}: ${list(closest, ['wave', 'taint'])} (the node falls between the rollout waves: no wave DaemonSet matches its wave label)`,
      idOf(closest));
  }
  // Not a problem, and the most common status on big clusters: placementsFor gives the reasons on demand.
  return entry('not-selected', 'no DaemonSet of the agent targets the node (nodeSelector / affinity)');
}

/**
 * Why each DaemonSet of `agent` that does not own `nodeName` stays off it: every reason, classified.
 * Computed on demand (the report keeps only the status of each node).
 */
export function placementsFor(report: CoverageReport, agent: string, nodeName: string): Placement[] {
  const index = report.nodes.findIndex((n) => n.name === nodeName);
  return index < 0 ? [] : placementExplainer(report)(agent, index);
}

/** placementsFor for many nodes: DaemonSets prepared once, nodes by index. */
export function placementExplainer(report: CoverageReport): (agent: string, nodeIndex: number) => Placement[] {
  const index = new AffinityIndex(report.nodes);
  const prepared = new Map(report.daemonSets.map((d) => [d.info.id, prepare(d.info, index, report.waveLabelKey)]));
  const agents = new Map(report.agents.map((a) => [a.agent, a]));
  const intended = new Set(report.intendedTaintKeys);
  return (agent, nodeIndex) => {
    const coverage = agents.get(agent);
    const node = report.nodes[nodeIndex];
    if (coverage === undefined || node === undefined) return [];
    const owners = coverage.nodes[nodeIndex].owners;
    return coverage.daemonSets.filter((id) => !owners.includes(id)).map((id) => place(prepared.get(id)!, node, report.waveLabelKey, intended));
  };
}

/** The first position in `items` (in name order) whose name sorts after `name`. */
function upperBound<T>(items: readonly T[], nameOf: (item: T) => string, name: string): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    if (compare(nameOf(items[mid]), name) <= 0) low = mid + 1;
    else high = mid;
  }
  return low;
}

/**
 * The position of the node named `name` in `nodes` (in name order, as a report holds them), -1 when none; the last
 * one when a name repeats. A binary search: for the few nodes a finding names, no map of every node's name.
 */
export function positionByName(nodes: readonly { readonly name: string }[], name: string): number {
  const at = upperBound(nodes, (n) => n.name, name) - 1;
  return at >= 0 && nodes[at].name === name ? at : -1;
}

/** Whether `covered` (node names in name order, as a report lists them) holds `name`: a binary search. */
export function coversName(covered: readonly string[], name: string): boolean {
  const at = upperBound(covered, (n) => n, name) - 1;
  return at >= 0 && covered[at] === name;
}

/** The classes of `place`'s blockers, for the consistency test of the fast path. */
export function placementClasses(placement: Placement): ReasonClasses {
  const has = (cls: BlockerClass) => placement.blockers.some((b) => b.cls === cls);
  return {
    selection: has('selection'),
    wave: has('wave'),
    taint: has('taint'),
    condition: has('node-condition'),
    intended: has('intended'),
    noExecute: placement.blockers.some((b) => b.kind === 'taint' && b.taint.effect === 'NoExecute'),
  };
}

/**
 * Agents that select none of the inventory's linux nodes: every one not selected by any DaemonSet's nodeSelector / affinity (a label value spelled otherwise than the nodes carry it, e.g. a
 * NodePool's name in another case). Not a problem (an inventory may lack the pool), but "No problems" would hide it.
 */
export function coverageWarnings(report: CoverageReport): string[] {
  const linux = report.nodes.map((_, i) => i).filter((i) => report.nodes[i].platform === 'linux');
  if (linux.length === 0) return [];
  return report.agents.filter((a) => linux.every((i) => a.nodes[i].status === 'not-selected')).map((a) => {
    const ds = report.daemonSets.find((d) => d.info.id === a.daemonSets[0])!;
    const node = report.nodes[linux[0]];
    const prepared = prepare(ds.info, new AffinityIndex(report.nodes), report.waveLabelKey);
    const why = place(prepared, node, report.waveLabelKey, new Set(report.intendedTaintKeys)).blockers
      .filter((b) => b.cls === 'selection' || b.cls === 'wave').map(describeBlocker).join(', ');
    return `${a.agent} selects none of the ${linux.length} linux nodes (${a.daemonSets.join(', ')}): e.g. ${node.name}: ${why || 'not selected'}. `
      + 'Check the selector\'s labels and values against the nodes\' (kubectl get nodes -L KEY; values are case-sensitive), '
      + 'or leave the agent out of this cluster\'s tree';
  });
}

/** The fast path's classes for one DaemonSet and node of a report (for the consistency test). */
export function reasonClassesFor(report: CoverageReport, daemonSet: string, nodeName: string): ReasonClasses {
  const ds = report.daemonSets.find((d) => d.info.id === daemonSet)!;
  const node = report.nodes.find((n) => n.name === nodeName)!;
  const prepared = prepare(ds.info, new AffinityIndex(report.nodes), report.waveLabelKey);
  return reasonClasses(prepared, node, report.waveLabelKey, new Set(report.intendedTaintKeys));
}

/** How to end a gap an untolerated taint causes: tolerate it (the agent's prop), or call it intended (the flag). */
function taintGapFix(ds: Prepared, node: NodeFacts, waveKey: string, intended: ReadonlySet<string>): string {
  const taints = place(ds, node, waveKey, intended).blockers.flatMap((b) => (b.kind === 'taint' && b.cls === 'taint' ? [b.taint] : []));
  const entries = taints.map((t) => `{ key: "${t.key}", operator: Exists, effect: ${t.effect} }`).join(', ');
  const flags = [...new Set(taints.map((t) => `--allow-taint ${t.key}`))].join(' ');
  return `tolerate ${taints.length === 1 ? 'it' : 'them'} in ${ds.info.agent}: prop \`tolerations\` [${entries}] (or \`tolerateAllTaints: true\`); `
    + `or, when the taint keeps the agent off these nodes on purpose, pass ${flags}`;
}

function agentProblems(agent: string, agentNodes: readonly AgentNode[]): Problem[] {
  // One problem per agent and reason, listing its nodes: readable on a 5000-node cluster.
  const groups = new Map<string, { kind: ProblemKind; daemonSets: string[]; nodes: string[]; why: string; fix?: string }>();
  for (const entry of agentNodes) {
    if (entry.status !== 'gap' && entry.status !== 'duplicate') continue;
    const daemonSets = entry.status === 'duplicate' ? [...entry.owners] : [entry.closest!];
    const key = `${entry.status}\0${entry.why}`;
    const group = groups.get(key) ?? { kind: entry.status, daemonSets, nodes: [], why: entry.why, fix: entry.fix };
    group.nodes.push(entry.node);
    groups.set(key, group);
  }
  return [...groups.values()].map((g) => ({
    kind: g.kind,
    agent,
    daemonSets: g.daemonSets,
    nodes: g.nodes,
    message: g.kind === 'gap'
      ? `${agent} is missing from ${nodeList(g.nodes)}: ${g.why}${g.fix ? `. Fix: ${g.fix}` : ''}`
      : `${agent} runs twice on ${nodeList(g.nodes)}: ${g.why}`,
    ...(g.fix ? { fix: g.fix } : {}),
  }));
}

/**
 * A wave DaemonSet (not the fleet) that targets a node a rollout cannot count on (NodeFacts.rolloutHazards:
 * NotReady, unreachable): its rolling update waits on a pod that never gets Ready there, and with Argo CD gating
 * every later wave waits too. A cordoned node is not one: DaemonSet pods tolerate node.kubernetes.io/unschedulable
 * (daemonset_util.go AddOrUpdateDaemonPodTolerations), so the new pod runs and turns Ready there.
 */
function unreadyInWaves(prepared: readonly Prepared[], nodes: readonly NodeFacts[], waveKey: string, intended: ReadonlySet<string>): Problem[] {
  const hazardous = nodes.filter((node) => node.rolloutHazards.length > 0);
  const problems: Problem[] = [];
  for (const ds of prepared) {
    const group = ds.info.rolloutGroup;
    if (group === undefined || waveOfGroup(group) === FLEET_GROUP) continue;
    const found: { node: string; why: readonly string[] }[] = [];
    for (const node of hazardous) {
      const r = reasonClasses(ds, node, waveKey, intended);
      if (r.selection || r.wave) continue;
      // A NoExecute taint is left out: one the DaemonSet tolerates does not keep its pod from running, and one
      // it does not tolerate keeps the node out of the DaemonSet altogether (reported as a gap).
      const noExecute = new Set(node.noExecuteTaints.map((t) => `NoExecute taint ${formatTaint(t)}`));
      const why = node.rolloutHazards.filter((h) => !noExecute.has(h) && h !== CORDONED_HAZARD);
      if (why.length > 0) found.push({ node: node.name, why });
    }
    if (found.length === 0) continue;
    const named = found.slice(0, 5).map((f) => `${f.node}: ${f.why.join(', ')}`).join('; ') + (found.length > 5 ? `; … ${found.length - 5} more` : '');
    problems.push({
      kind: 'unready-in-wave',
      agent: ds.info.agent,
      daemonSets: [ds.info.id],
      nodes: found.map((f) => f.node),
      message: `${ds.info.id} (rollout group "${group}") holds ${found.length === 1 ? '1 node' : `${found.length} nodes`} a rollout cannot count on (${named}): `
        + 'its rolling update waits on a pod that never gets Ready there, and with Argo CD gating every later wave waits too. '
        + `Fix the node${found.length === 1 ? '' : 's'}, or move ${found.length === 1 ? 'it' : 'them'} to the fleet (node-agents label --diff removes the wave label).`,
    });
  }
  return problems;
}

/** Nodes an agent's resource profiles all leave out: a label they compare as an integer is not one (see unprofiledNodes). */
function profileGaps(infos: readonly DaemonSetInfo[], nodes: readonly NodeFacts[], agents: readonly AgentCoverage[]): Problem[] {
  const byAgent = new Map(agents.map((a) => [a.agent, a]));
  return unprofiledNodes(infos, nodes, () => false).flatMap((gap) => {
    const coverage = byAgent.get(gap.agent);
    const missed = gap.nodes.filter((name) => coverage?.nodes.find((n) => n.node === name)?.owners.length === 0);
    if (missed.length === 0) return [];
    return [{
      kind: 'gap' as const,
      agent: gap.agent,
      daemonSets: gap.daemonSets,
      nodes: missed,
      message: `${gap.agent} is missing from ${nodeList(missed)}: their label ${gap.labels.join(', ')} is not an integer, which the resource profiles compare `
        + 'with Gt/Lt: the scheduler matches no such requirement then, so no profile and not the default takes the node. Give the label an integer value',
    }];
  });
}

/** A DaemonSet landing on a Windows or virtual node it did not ask for by label: its pods cannot run there. */
function unsupportedNodes(prepared: readonly Prepared[], nodes: readonly NodeFacts[], coveredBy: (i: number) => readonly string[],
  byId: ReadonlyMap<string, Prepared>): Problem[] {
  const hits = new Map<string, string[]>();
  nodes.forEach((node, i) => {
    if (node.platform === 'linux') return;
    for (const id of coveredBy(i)) {
      const ds = byId.get(id)!;
      const asked = node.platform === 'virtual' ? ds.mentionsVirtual : ds.mentionsOs;
      if (!asked) entryOf(hits, id, () => []).push(node.name);
    }
  });
  return prepared.filter((p) => hits.has(p.info.id)).map((p) => {
    const names = hits.get(p.info.id)!;
    return {
      kind: 'unsupported-node' as const,
      agent: p.info.agent,
      daemonSets: [p.info.id],
      nodes: names,
      message: `${p.info.id} places pods on ${nodeList(names)} (non-linux or virtual) without selecting them by label: a Linux agent cannot run there. Require ${OS_LABEL}=linux and exclude eks.amazonaws.com/compute-type=fargate and type=virtual-kubelet.`,
    };
  });
}

/**
 * The scheduler's NodePorts filter: two pods conflict on a node when they bind the same protocol and port and
 * their host IPs overlap (an empty / 0.0.0.0 host IP overlaps every address). Grouped by node and port, not
 * compared in pairs of DaemonSets: one problem per port and set of clashing DaemonSets, listing its nodes.
 */
function hostPortClashes(nodes: readonly NodeFacts[], coveredBy: (i: number) => readonly string[], byId: ReadonlyMap<string, Prepared>): Problem[] {
  const groups = new Map<string, { ds: string[]; port: HostPort; nodes: string[] }>();
  const binding = [...byId.values()].filter((p) => p.info.hostPorts.length > 0).map((p) => p.info.id);
  if (binding.length < 2) return [];
  // the binding DaemonSets of each node as a set number, and the clashes of each set computed once
  const numbers = new Map(binding.map((id, k) => [id, k]));
  const sets = new SetIds<string>(nodes.length, binding.length);
  nodes.forEach((_, i) => {
    for (const id of coveredBy(i)) {
      const k = numbers.get(id);
      if (k !== undefined) sets.add(i, k, id);
    }
  });
  const clashesOf = new Map<number, { ds: string[]; port: HostPort; nodes: string[] }[]>();
  nodes.forEach((node, i) => {
    const set = sets.of(i);
    if (sets.size(set) < 2) return;
    let clashes = clashesOf.get(set);
    if (clashes === undefined) {
      clashes = portClashes(sets.list(set), byId)
        .map((clash) => entryOf(groups, clash.key, () => ({ ds: clash.ds, port: clash.port, nodes: [] })));
      clashesOf.set(set, clashes);
    }
    for (const group of clashes) group.nodes.push(node.name);
  });
  return [...groups.values()].map((g) => {
    const infos = g.ds.map((id) => byId.get(id)!.info);
    const agents = new Set(infos.map((d) => d.agent));
    const who = infos.length === 2
      ? `${infos[0].id} (agent ${infos[0].agent}) and ${infos[1].id} (agent ${infos[1].agent})`
      : `${infos.length} DaemonSets: ${idList(infos.map((d) => `${d.id} (agent ${d.agent})`))}`;
    return {
      kind: 'host-port-clash' as const,
      agent: agents.size === 1 ? infos[0].agent : undefined,
      daemonSets: g.ds,
      nodes: g.nodes,
      message: `host port ${g.port.protocol}/${g.port.port} is bound by ${who} on ${nodeList(g.nodes)}: the scheduler keeps `
        + `${infos.length === 2 ? 'the second pod' : 'all pods but the first'} Pending (NodePorts).`,
    };
  });
}

/**
 * Per protocol and port, the DaemonSets of `binders` (in their order) whose binding overlaps another one's:
 * bindings bucketed by protocol/port, then by host IP, the empty host IP overlapping every other.
 */
function portClashes(binders: readonly string[], byId: ReadonlyMap<string, Prepared>): { key: string; ds: string[]; port: HostPort }[] {
  const buckets = new Map<string, { port: HostPort; bindings: { id: string; hostIP: string }[] }>();
  for (const id of binders) {
    for (const port of byId.get(id)!.info.hostPorts) {
      const key = `${port.protocol}/${port.port}`;
      const bucket = entryOf(buckets, key, () => ({ port, bindings: [] }));
      bucket.bindings.push({ id, hostIP: port.hostIP });
    }
  }
  const result: { key: string; ds: string[]; port: HostPort }[] = [];
  for (const [portKey, { port, bindings }] of buckets) {
    const owners = new Set(bindings.map((b) => b.id));
    if (owners.size < 2) continue;
    const wildcard = new Set(bindings.filter((b) => b.hostIP === '').map((b) => b.id));
    const byIp = new Map<string, Set<string>>();
    for (const b of bindings) if (b.hostIP !== '') entryOf(byIp, b.hostIP, () => new Set()).add(b.id);
    const clashing = new Set<string>();
    for (const b of bindings) {
      const others = (set: Set<string> | undefined) => set !== undefined && (set.size > 1 || (set.size === 1 && !set.has(b.id)));
      // an empty host IP overlaps any binding of another DaemonSet; a given one, another's empty or equal one
      if ((b.hostIP === '' && owners.size > 1) || others(wildcard) || (b.hostIP !== '' && others(byIp.get(b.hostIP)))) clashing.add(b.id);
    }
    if (clashing.size < 2) continue;
    const ds = binders.filter((id) => clashing.has(id));
    result.push({ key: `${portKey}\0${ds.join('\0')}`, ds, port });
  }
  return result;
}

/** Up to five ids, then how many more. */
export function idList(ids: readonly string[]): string {
  return `${ids.slice(0, 5).join(', ')}${ids.length > 5 ? `, … ${ids.length - 5} more` : ''}`;
}

function groupByAgent(infos: readonly DaemonSetInfo[]): [string, DaemonSetInfo[]][] {
  const groups = new Map<string, DaemonSetInfo[]>();
  for (const info of infos) entryOf(groups, info.agent, () => []).push(info);
  return [...groups.entries()].sort((a, b) => compare(a[0], b[0])).map(([agent, members]) => [agent, orderWaves(members)]);
}

/**
 * Wave order of one agent's DaemonSets: Argo CD sync-wave, then wave groups before the fleet and ungrouped
 * DaemonSets, then the wave index the construct writes (WAVE_INDEX_ANNOTATION), then id.
 */
export function orderWaves<T extends DaemonSetInfo>(members: readonly T[]): T[] {
  const last = (ds: DaemonSetInfo) => (ds.rolloutGroup === undefined || waveOfGroup(ds.rolloutGroup) === FLEET_GROUP ? 1 : 0);
  return [...members].sort((a, b) => (a.syncWave ?? Number.MAX_SAFE_INTEGER) - (b.syncWave ?? Number.MAX_SAFE_INTEGER)
    || last(a) - last(b) || (a.waveIndex ?? Number.MAX_SAFE_INTEGER) - (b.waveIndex ?? Number.MAX_SAFE_INTEGER) || compare(a.id, b.id));
}

export function describeBlocker(blocker: Blocker): string {
  switch (blocker.kind) {
    case 'nodeName':
      return `spec.nodeName pins the pod to ${blocker.want}`;
    case 'nodeSelector':
      return `nodeSelector ${blocker.key}=${blocker.want} (node has ${blocker.actual === undefined ? `no ${blocker.key} label` : `${blocker.key}=${blocker.actual}`})`;
    case 'affinity': {
      const terms = blocker.terms.map(describeTerm);
      const omitted = blocker.omittedTerms ?? 0;
      return terms.length === 1 && omitted === 0 ? `required affinity ${terms[0]}`
        : `required affinity: none of ${terms.length + omitted} terms matches (${terms.map((t, i) => `term ${i + 1}: ${t}`).join('; ')}`
          + `${omitted > 0 ? `; … ${omitted} more terms` : ''})`;
    }
    case 'taint':
      return `taint ${formatTaint(blocker.taint)} not tolerated${impliedNote(blocker.taint)}`;
  }
}

function describeTerm(term: TermFailure): string {
  if (term.empty) return 'an empty term (matches no node)';
  return term.failed.map((f) => {
    const r = f.requirement;
    const values = r.values !== undefined && r.operator !== 'Exists' && r.operator !== 'DoesNotExist' ? ` [${r.values.join(', ')}]` : '';
    const actual = f.on === 'field' ? `node name ${f.actual}`
      : f.actual === undefined ? `node has no ${r.key} label` : `node has ${r.key}=${f.actual}`;
    return `${r.key} ${r.operator}${values} (${actual})`;
  }).join(' and ');
}

export function explainPlacement(placement: Placement): string {
  return `${placement.daemonSet}: ${placement.blockers.map(describeBlocker).join(', ')}`;
}

function nodeList(names: readonly string[]): string {
  const shown = names.slice(0, 5).join(', ');
  return `${names.length} node${names.length === 1 ? '' : 's'} (${shown}${names.length > 5 ? `, … ${names.length - 5} more` : ''})`;
}

/** The NodePorts rule: same protocol and port, and host IPs that overlap (an empty host IP overlaps every address). */
export function hostPortsOverlap(a: HostPort, b: HostPort): boolean {
  return a.port === b.port && a.protocol === b.protocol && (a.hostIP === '' || b.hostIP === '' || a.hostIP === b.hostIP);
}
