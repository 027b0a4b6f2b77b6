import type { Pace } from '../../rollout/pace';
import { CoverageReport, DaemonSetCoverage } from '../coverage/analysis';
import { compare } from '../coverage/manifests';
import { NodeFacts } from '../coverage/nodes';

/**
 * One DaemonSet's rolling update over the nodes whose pod it replaces, as kubernetes
 * pkg/controller/daemon/update.go rollingUpdate runs it: one model, read by `estimate` (every node with a pod of
 * the DaemonSet) and by `plan` (the nodes a change replaces), so both give one answer for one DaemonSet.
 *
 * rollingUpdate walks every node with a pod of the DaemonSet (nodeToDaemonPods), targeted or not, and sorts each:
 * - an old pod that is not available is replaced at once, outside the budget (allowedReplacementPods,
 *   kubernetes#111073), whatever maxUnavailable or maxSurge says; since kubernetes#123233 (1.31, and 1.28-1.30
 *   patch releases) it also counts in numUnavailable in that same sync, so fewer available pods go with it;
 * - an old available pod is a candidate, taken while numUnavailable < maxUnavailable (numSurge < maxSurge);
 * - a node whose new pod never turns available holds one unit for good: a NotReady or unreachable node the
 *   DaemonSet still covers, and with maxSurge 0 an unreachable node it no longer places pods on (its deleted old pod
 *   stays Terminating: findUpdatedPodsOnNode skips it and `oldPod == nil && newPod == nil` counts the node unavailable).
 */
export interface RollingUpdateInput {
  readonly pace: Extract<Pace, { type: 'RollingUpdate' }>;
  /** the nodes, in name order */
  readonly nodes: readonly NodeFacts[];
  /** 1 at the positions of the nodes the DaemonSet covers (desiredNumberScheduled) */
  readonly covered: Uint8Array;
  /** positions (ascending) of the nodes whose pod the update replaces */
  readonly replacedAt: readonly number[];
  /** names of the nodes whose pod of the DaemonSet is not available now (read from the pods running, `--pods`) */
  readonly unavailable?: ReadonlySet<string>;
}

export interface RollingUpdateShape {
  /** covered Ready nodes whose old pod is available: the budget's candidates */
  readonly paced: number;
  /** covered Ready nodes whose old pod is not available: replaced at once, outside the budget (sorted) */
  readonly outsideBudget: readonly string[];
  /** nodes holding one unit of the budget for good (sorted) */
  readonly stuck: readonly string[];
  /** nodes the DaemonSet no longer places a pod on while their state lasts: the old pod goes, no new one comes (sorted) */
  readonly waiting: readonly string[];
  /** available old pods the first sync replaces beside the ones outside the budget */
  readonly firstCandidates: number;
  /** pods the first batch replaces: outsideBudget plus firstCandidates */
  readonly firstBatchSize: number;
  /** available old pods replaced at once after the first batch (the budget left beside the stuck nodes) */
  readonly podsAtOnce: number;
  /** every batch, the first included */
  readonly batches: number;
  readonly lastBatchSize: number;
  /** the stuck nodes fill the budget while available old pods remain: the rolling update stops */
  readonly stalled: boolean;
  /**
   * maxUnavailable only: how many more available pods a controller without kubernetes#123233 (before 1.31; 1.28-1.30
   * patch releases before the fix) replaces in the first sync, where the replacements outside the budget did not yet
   * count in numUnavailable. 0 when it makes no difference.
   */
  readonly olderControllerExtra: number;
}

/** The rolling update of `input` in batches (see RollingUpdateInput). */
export function rollingUpdateShape(input: RollingUpdateInput): RollingUpdateShape {
  const { pace, nodes, covered, replacedAt } = input;
  const down = (at: number) => nodes[at].notReady || nodes[at].unreachable || ['False', 'Unknown'].includes(nodes[at].ready);
  const surge = pace.mode === 'surge';
  const outsideAt: number[] = [];
  const stuckAt: number[] = [];
  const waitingAt: number[] = [];
  let paced = 0;
  for (const at of replacedAt) {
    if (covered[at] === 1) {
      if (down(at)) stuckAt.push(at);
      else if (input.unavailable?.has(nodes[at].name) === true) outsideAt.push(at);
      else paced++;
    } else {
      waitingAt.push(at);
      if (!surge && nodes[at].unreachable) stuckAt.push(at);
    }
  }
  const names = (positions: readonly number[]) => positions.map((at) => nodes[at].name);
  // with maxSurge 0 every old pod not available counts in numUnavailable in the first sync (kubernetes#123233): the
  // stuck nodes', the waiting nodes' (a live kubelet's too: it terminates within the sync) and those outside the budget
  const liveWaiting = waitingAt.filter((at) => !nodes[at].unreachable).length;
  const countedAtFirst = outsideAt.length + stuckAt.length + liveWaiting;
  const counts = batchCounts({ budget: pace.batch, surge, paced, outside: outsideAt.length, stuck: stuckAt.length, countedAtFirst });
  return { ...counts, outsideBudget: names(outsideAt), stuck: names(stuckAt).sort(compare), waiting: names(waitingAt) };
}

/** How many nodes of each kind a rolling update has (see RollingUpdateShape); countedAtFirst: maxSurge 0 only. */
export interface UpdateCounts {
  readonly budget: number;
  readonly surge: boolean;
  readonly paced: number;
  readonly outside: number;
  readonly stuck: number;
  /** old pods not available in the first sync that count in numUnavailable there (maxSurge 0) */
  readonly countedAtFirst: number;
}

/** The batches of a rolling update from its counts: the numbers behind RollingUpdateShape. */
export function batchCounts(c: UpdateCounts): Omit<RollingUpdateShape, 'outsideBudget' | 'stuck' | 'waiting'> {
  // the first sync: every old pod not available goes at once (allowedReplacementPods / allowedNewNodes); with
  // maxSurge 0 they count in numUnavailable in that sync, with maxSurge a new pod counts only from the next sync
  // (numSurge: a node with an unavailable new pod beside its old one), so the first sync takes the whole budget
  const firstCandidates = Math.min(c.paced, Math.max(0, c.budget - (c.surge ? 0 : c.countedAtFirst)));
  const perBatch = Math.max(0, c.budget - c.stuck);
  const firstBatchSize = c.outside + firstCandidates;
  const rest = c.paced - firstCandidates;
  const stalled = rest > 0 && perBatch === 0;
  const later = stalled || rest === 0 ? 0 : Math.ceil(rest / perBatch);
  return {
    paced: c.paced,
    firstCandidates,
    firstBatchSize,
    podsAtOnce: Math.min(perBatch, c.paced),
    batches: (firstBatchSize > 0 ? 1 : 0) + later,
    lastBatchSize: later === 0 ? firstBatchSize : rest - (later - 1) * perBatch,
    stalled,
    olderControllerExtra: c.surge ? 0 : Math.min(c.paced, c.budget) - firstCandidates,
  };
}

/**
 * The positions (ascending) of the nodes with a pod of the DaemonSet, as rollingUpdate's nodeToDaemonPods holds
 * them: the nodes it covers, and the nodes where only the node's state (an untolerated not-ready or unreachable
 * NoSchedule taint) keeps a new pod off while the running one stays (shouldContinueRunning).
 */
export function podPositions(report: CoverageReport, ds: DaemonSetCoverage): number[] {
  const agent = report.agents.find((a) => a.daemonSets.includes(ds.info.id));
  const kept: number[] = [];
  agent?.nodes.forEach((entry, at) => {
    if (entry.status === 'node-condition' && entry.existingPodKeepsRunning === true && entry.closest === ds.info.id) kept.push(at);
  });
  if (kept.length === 0) return [...ds.positions];
  return [...ds.positions, ...kept].sort((a, b) => a - b);
}

/** The minor release whose DaemonSet controller counts the replacements outside the budget in their own sync (kubernetes#123233). */
export const REPLACEMENTS_COUNTED_SINCE = 31;

/**
 * What the shape adds to a rollout's one line: the pods outside the budget, the stuck and waiting nodes, and, unless
 * the control plane is known to be 1.31 or later (`counted`), what an older controller does in the first batch.
 */
export function shapeNote(shape: RollingUpdateShape, budget: number, surge: boolean, counted = false): string {
  const parts: string[] = [];
  const list = (names: readonly string[]) => names.slice(0, 5).join(', ') + (names.length > 5 ? `, … ${names.length - 5} more` : '');
  const n = shape.outsideBudget.length;
  if (n > 0) {
    parts.push(`${n} old pod${n === 1 ? '' : 's'} not available (${list(shape.outsideBudget)}) ${n === 1 ? 'is' : 'are'} replaced at once in the first batch, `
      + `outside the budget of ${budget} (update.go rollingUpdate: allowedReplacementPods)`);
  }
  if (surge) parts.push('maxSurge: each new pod starts beside the old one, which goes once the new one is available');
  const s = shape.stuck.length;
  if (s > 0) parts.push(`${s} stuck node${s === 1 ? '' : 's'} (${list(shape.stuck)}) hold${s === 1 ? 's' : ''} ${s} of the ${budget} pod${budget === 1 ? '' : 's'} at once for good`);
  const w = shape.waiting.length;
  if (w > 0) {
    parts.push(`${w} more (${list(shape.waiting)}) once their node is Ready again: their old pod is deleted now, and the DaemonSet places no pod there meanwhile`);
  }
  if (shape.olderControllerExtra > 0 && !counted) {
    parts.push('assumed a controller of Kubernetes 1.31 or later (1.28-1.30: a patch release with kubernetes#123233); an older one replaces '
      + `${shape.olderControllerExtra} more available pod${shape.olderControllerExtra === 1 ? '' : 's'} in the first batch`);
  }
  return parts.join('; ');
}
