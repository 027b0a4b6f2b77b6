import { batchCounts, podPositions, RollingUpdateShape, rollingUpdateShape, shapeNote } from './rollout-model';
import { DEFAULT_POD_SECONDS, nonNegative, Pace, paceOf } from '../../rollout/pace';
import { entryOf } from '../../util/maps';
import { CoverageReport, orderWaves } from '../coverage/analysis';
import { compare, DaemonSetInfo } from '../coverage/manifests';
import { antiAffinitySeparates } from '../coverage/pod-affinity';
import { waveOfGroup } from '../coverage/profiles';

export interface EstimateOptions {
  /** image pull + container start + readiness + termination of the old pod, per pod (default 30) */
  readonly podSeconds?: number;
  /** wait after each wave before the next one starts (default 600) */
  readonly bakeSeconds?: number;
  /**
   * DaemonSet id → why its rollout cannot finish on some of its nodes (e.g. a NotReady node in a
   * wave, from the coverage problems): reported as the wave's problem. @default none
   */
  readonly stalls?: ReadonlyMap<string, string>;
  /**
   * DaemonSet id → the bake of the gate Job the tree renders after its wave (the Job's BAKE_SECONDS): that wave's
   * bake, in place of bakeSeconds. A rendered gate bakes on every sync that reaches it, so it counts even after
   * the last wave with pods. @default none
   */
  readonly gateBakes?: ReadonlyMap<string, number>;
  /**
   * The coverage the DaemonSets come from (analyzeCoverage on the inventory): each wave's batches then follow the
   * rolling update over its nodes' states (rollout-model.ts, the model `plan` uses): stuck NotReady and unreachable
   * nodes, and old pods not available replaced outside the budget. @default every covered node paced by the budget
   */
  readonly report?: CoverageReport;
  /**
   * DaemonSet id → names of the nodes whose pod of it is not available now (`--pods`): replaced at once, outside the
   * budget. @default every pod on a Ready node is taken as available
   */
  readonly unavailable?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * The control plane is known to run Kubernetes 1.31 or later (kubernetes#123233): the note on what an older
   * controller does in the first batch is left out. @default false
   */
  readonly replacementsCounted?: boolean;
  /**
   * DaemonSet id → the seconds of its pod cycle spent pulling the image, when the tree renders a pull-only
   * DaemonSet for it (rollout.prePull): its nodes hold the new image before it rolls, so those seconds are not
   * counted per node. @default none
   */
  readonly prePulled?: ReadonlyMap<string, number>;
}

export const DEFAULT_BAKE_SECONDS = 600;

/** One DaemonSet's rollout, i.e. one wave of an agent. */
export interface WaveEstimate {
  readonly daemonSet: string;
  readonly rolloutGroup?: string;
  /** nodes it covers = desiredNumberScheduled */
  readonly nodes: number;
  readonly pace: Pace;
  /** podSeconds + the DaemonSet's minReadySeconds */
  readonly cycleSeconds: number;
  /** 0 for OnDelete */
  readonly batches: number;
  /**
   * The rolling update as the controller runs it (rollout-model.ts): the first batch (old pods not available go in it,
   * outside the budget), the pods at once after it, the stuck and waiting nodes. Undefined for OnDelete and invalid strategies.
   */
  readonly rollout?: RollingUpdateShape;
  /** undefined for OnDelete (no automatic rollout) and invalid strategies */
  readonly seconds?: number;
  /** nodes of this wave as a % of the agent's nodes: what a bad version can break before the next gate */
  readonly blastRadiusPercent: number;
  /** nodes updated once this wave is done, and their % of the agent's nodes */
  readonly cumulativeNodes: number;
  readonly cumulativePercent: number;
  /** information: OnDelete, no nodes */
  readonly note?: string;
  /** the wave cannot roll out as written: rejected by the API server, a surge that deadlocks on a host port, or a node it stalls on */
  readonly problem?: string;
  /** the bake of the rendered gate Job that follows this wave, when the tree has one */
  readonly gateSeconds?: number;
}

export interface AgentEstimate {
  readonly agent: string;
  /** distinct nodes covered by the agent's DaemonSets */
  readonly nodes: number;
  readonly waves: readonly WaveEstimate[];
  /** waves with pods, minus one, that no rendered gate follows: the default bakes between them */
  readonly bakes: number;
  readonly bakeSeconds: number;
  /** the bakes of the rendered gate Jobs after waves with pods (each replaces the default bake after its wave) */
  readonly gateSeconds: number;
  /** automatic rollout time of every wave plus the bakes and the gates' bakes; OnDelete waves excluded (see manualWaves) */
  readonly totalSeconds: number;
  /** DaemonSets with nodes that do not roll out by themselves: OnDelete, rejected or deadlocked strategies */
  readonly manualWaves: readonly string[];
}

export interface CoveredDaemonSet {
  readonly info: DaemonSetInfo;
  readonly covered: readonly string[];
}

/**
 * Rollout time per agent, treating its DaemonSets as waves run one after the other (Argo CD sync waves, or one
 * promotion commit each) with a bake between waves. Each wave takes ceil(nodes / batch) cycles; the controller
 * keeps `batch` pods in flight, so with equal pod times that is the wall time.
 */
export function estimateRollout(daemonSets: readonly CoveredDaemonSet[], options: EstimateOptions = {}): AgentEstimate[] {
  const podSeconds = nonNegative(options.podSeconds ?? DEFAULT_POD_SECONDS, 'podSeconds');
  const bakeSeconds = nonNegative(options.bakeSeconds ?? DEFAULT_BAKE_SECONDS, 'bakeSeconds');
  const agents = new Map<string, CoveredDaemonSet[]>();
  for (const ds of daemonSets) entryOf(agents, ds.info.agent, () => []).push(ds);

  return [...agents.entries()].sort((a, b) => compare(a[0], b[0])).map(([agent, members]) => {
    const coveredById = new Map(members.map((m) => [m.info.id, m.covered]));
    const ordered = orderWaves(members.map((m) => m.info));
    // distinct nodes: one DaemonSet's list in name order (as coverage gives it; the plan estimates each DaemonSet
    // alone) is counted without a set of its names, several lists go through a set
    const sortedCount = members.length === 1 ? distinctInOrder(members[0].covered) : undefined;
    const agentNodes = sortedCount ?? new Set(members.flatMap((m) => m.covered)).size;
    const seen = new Set<string>();
    const waves = ordered.map((info): WaveEstimate => {
      const covered = coveredById.get(info.id)!;
      if (sortedCount === undefined) covered.forEach((n) => seen.add(n));
      const shapeOf = shapeInput(options, info.id);
      const pulled = Math.min(options.prePulled?.get(info.id) ?? 0, podSeconds);
      const estimate = waveEstimate(info, covered.length, podSeconds - pulled, agentNodes, sortedCount ?? seen.size, shapeOf,
        options.replacementsCounted);
      const gate = options.gateBakes?.get(info.id);
      const gated = gate === undefined ? estimate : { ...estimate, gateSeconds: gate };
      const stall = options.stalls?.get(info.id);
      if (stall === undefined) return gated;
      // a stall the caller names (unreachable nodes, a NotReady node in a wave) says why the model's stall happens
      const own = gated.rollout?.stalled === true ? undefined : gated.problem;
      return { ...gated, problem: own === undefined ? stall : `${own}; and ${stall}` };
    });
    // a wave's DaemonSets of every resource profile roll together: one step, as long as its slowest
    const steps = rolloutSteps(waves);
    const withPods = steps.filter((w) => w.nodes > 0);
    // after each wave with pods: its gate's bake when the tree renders one, else the default bake before the next wave
    const gateSeconds = withPods.reduce((sum, w) => sum + (w.gateSeconds ?? 0), 0);
    const bakes = withPods.filter((w, i) => w.gateSeconds === undefined && i < withPods.length - 1).length;
    return {
      agent,
      nodes: agentNodes,
      waves,
      bakes,
      bakeSeconds,
      gateSeconds,
      totalSeconds: steps.reduce((sum, w) => sum + w.seconds, 0) + bakes * bakeSeconds + gateSeconds,
      manualWaves: waves.filter((w) => w.seconds === undefined && w.nodes > 0).map((w) => w.daemonSet),
    };
  });
}

/**
 * The waves as rolled: neighbouring DaemonSets of one wave (a resource profile's `<wave>.<profile>` rollout group beside
 * the wave's own) are one step, taking as long as the slowest, with one gate; every other DaemonSet is a step of its own.
 */
function rolloutSteps(waves: readonly WaveEstimate[]): { nodes: number; seconds: number; gateSeconds?: number }[] {
  const steps: { key?: string; nodes: number; seconds: number; gateSeconds?: number }[] = [];
  for (const w of waves) {
    const key = waveOfGroup(w.rolloutGroup);
    const last = steps[steps.length - 1];
    if (key !== undefined && last !== undefined && last.key === key) {
      last.nodes += w.nodes;
      last.seconds = Math.max(last.seconds, w.seconds ?? 0);
      if (w.gateSeconds !== undefined) last.gateSeconds = Math.max(last.gateSeconds ?? 0, w.gateSeconds);
    } else {
      steps.push({ key, nodes: w.nodes, seconds: w.seconds ?? 0, gateSeconds: w.gateSeconds });
    }
  }
  return steps;
}

/** How many distinct names a list in name order holds (repeats are neighbours); undefined when it is not in order. */
function distinctInOrder(names: readonly string[]): number | undefined {
  let count = names.length === 0 ? 0 : 1;
  for (let i = 1; i < names.length; i++) {
    const c = compare(names[i - 1], names[i]);
    if (c > 0) return undefined;
    if (c < 0) count++;
  }
  return count;
}

/** What the rolling update of one DaemonSet reads of the nodes, when the estimate has the coverage report. */
function shapeInput(options: EstimateOptions, id: string): ((pace: RollingPace) => RollingUpdateShape) | undefined {
  const report = options.report;
  const coverage = report?.daemonSets.find((d) => d.info.id === id);
  if (report === undefined || coverage === undefined) return undefined;
  return (pace) => {
    const covered = new Uint8Array(report.nodes.length);
    for (const at of coverage.positions) covered[at] = 1;
    const replacedAt = podPositions(report, coverage);
    return rollingUpdateShape({ pace, nodes: report.nodes, covered, replacedAt, unavailable: options.unavailable?.get(id) });
  };
}

type RollingPace = Extract<Pace, { type: 'RollingUpdate' }>;

function waveEstimate(info: DaemonSetInfo, nodes: number, podSeconds: number, agentNodes: number, cumulativeNodes: number,
  shapeOf?: (pace: RollingPace) => RollingUpdateShape, replacementsCounted = false): WaveEstimate {
  let pace: Pace;
  try {
    pace = paceOf(info.updateStrategy, nodes);
  } catch (error) {
    throw new Error(`${info.source}: DaemonSet ${info.id}: updateStrategy.rollingUpdate.${(error as Error).message}`);
  }
  const cycleSeconds = podSeconds + info.minReadySeconds;
  const percent = (n: number) => (agentNodes === 0 ? 0 : (100 * n) / agentNodes);
  const base = {
    daemonSet: info.id,
    rolloutGroup: info.rolloutGroup,
    nodes,
    pace,
    cycleSeconds,
    blastRadiusPercent: percent(nodes),
    cumulativeNodes,
    cumulativePercent: percent(cumulativeNodes),
  };
  if (pace.type === 'OnDelete') {
    return { ...base, batches: 0, note: 'OnDelete: no automatic rollout; each pod is replaced only when it is deleted (by hand or by an operator)' };
  }
  const batches = nodes === 0 ? 0 : Math.ceil(nodes / pace.batch);
  if (pace.invalid !== undefined) {
    return { ...base, batches, problem: `the API server rejects this updateStrategy: ${pace.invalid}` };
  }
  if (pace.mode === 'surge' && info.hostPorts.length > 0 && nodes > 0) {
    return {
      ...base,
      batches,
      problem: `maxSurge with host port ${info.hostPorts[0].port}: the new pod never fits next to the old one (scheduler NodePorts), so the rollout deadlocks (kubernetes#106417); use maxUnavailable`,
    };
  }
  // kubernetes pkg/controller/daemon/update.go rollingUpdate (maxSurge > 0): the new pod is created beside the old
  // one, and the old one goes only once the new one is available. A required anti-affinity on
  // kubernetes.io/hostname that selects the DaemonSet's own pods keeps the new pod Pending next to the old one
  // (scheduler InterPodAffinity filter): numSurge stays at maxSurge and no old pod is ever deleted.
  if (pace.mode === 'surge' && nodes > 0 && antiAffinitySeparates(info, info)) {
    return {
      ...base,
      batches,
      problem: 'maxSurge with a required pod anti-affinity on kubernetes.io/hostname that selects the DaemonSet\'s own pods: the new pod never '
        + 'schedules next to the old one (scheduler InterPodAffinity), so the rollout deadlocks; use maxUnavailable',
    };
  }
  if (nodes === 0) return { ...base, batches, seconds: 0, note: 'no nodes: nothing to roll out (Argo CD counts it Healthy at once)' };
  // one model with plan (rollout-model.ts): without the nodes' states, every covered node is paced by the budget
  const rollout = shapeOf?.(pace)
    ?? { ...batchCounts({ budget: pace.batch, surge: pace.mode === 'surge', paced: nodes, outside: 0, stuck: 0, countedAtFirst: 0 }), outsideBudget: [], stuck: [], waiting: [] };
  const note = shapeNote(rollout, pace.batch, false, replacementsCounted);
  const withShape = { ...base, batches: rollout.batches, rollout, note: note === '' ? undefined : note };
  if (rollout.stalled) {
    const done = rollout.firstBatchSize === 0 ? 'none' : `the first batch (${rollout.firstBatchSize}) and no more`;
    return { ...withShape, problem: `the stuck nodes fill the whole budget of ${pace.batch}: the controller replaces ${done} of its ${rollout.paced + rollout.outsideBudget.length} pods on Ready nodes` };
  }
  return { ...withShape, seconds: rollout.batches * cycleSeconds };
}

/**
 * DaemonSet id → why its maxUnavailable rolling update replaces nothing: unreachable nodes it no longer places pods on
 * but still has a pod on (an untolerated not-ready/unreachable NoSchedule taint; the pod keeps running). kubernetes
 * pkg/controller/daemon/update.go rollingUpdate walks every node with a pod of the DaemonSet: the old pod there is
 * unavailable, so it is deleted at once, and it stays Terminating while no kubelet confirms it; findUpdatedPodsOnNode
 * skips terminating pods, so the node counts against maxUnavailable on every sync. As many such nodes as the budget:
 * the rollout stops. (With maxSurge the terminating pod is not counted.)
 */
export function unreachableStalls(report: CoverageReport): Map<string, string> {
  const held = new Map<string, string[]>();
  for (const agent of report.agents) {
    agent.nodes.forEach((entry, i) => {
      if (entry.status !== 'node-condition' || !entry.existingPodKeepsRunning || entry.closest === undefined || !report.nodes[i].unreachable) return;
      entryOf(held, entry.closest, () => []).push(entry.node);
    });
  }
  const result = new Map<string, string>();
  for (const { info, covered } of report.daemonSets) {
    const nodes = held.get(info.id);
    if (nodes === undefined || covered.length === 0) continue;
    let pace: Pace;
    try {
      pace = paceOf(info.updateStrategy, covered.length);
    } catch {
      continue; // waveEstimate reports the bad value
    }
    if (pace.type !== 'RollingUpdate' || pace.mode !== 'unavailable' || nodes.length < pace.batch) continue;
    const list = nodes.slice(0, 5).join(', ') + (nodes.length > 5 ? `, … ${nodes.length - 5} more` : '');
    result.set(info.id, `${nodes.length} unreachable node${nodes.length === 1 ? '' : 's'} (${list}) it no longer places pods on: the old pod there is `
      + 'deleted at once and stays Terminating while no kubelet confirms it, and counts against maxUnavailable on every sync '
      + `(a budget of ${pace.batch}): the rolling update replaces nothing`);
  }
  return result;
}

