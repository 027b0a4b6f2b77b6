import { createHash } from 'crypto';
import { factsOf } from './nodes';
import { NodeJson } from '../../scheduling/types';
import { shellWord } from '../../util/shell';
import { checkLabelKey } from '../../validation/values';
import { checkWaveName, DEFAULT_WAVE_LABEL_KEY, FLEET_GROUP } from '../../waves/partition';

/**
 * Canary-group node labelling: which nodes carry which wave label.
 *
 * The partition is only as good as its labels. Nodes are put in one "spread order" and the waves
 * take consecutive segments of it (wave counts from the fractions, rounded cumulatively):
 * - strata: nodes sharing every `spreadBy` value (default: the zone); within a stratum nodes rank
 *   by sha256(seed, name), so the result never depends on list order;
 * - the order takes every stratum's first node, then each stratum in proportion to its size
 *   (rank/size, Adams' divisor method). So the first wave spans every stratum once it has as many
 *   nodes as there are strata, and every later wave gets a proportional share of each stratum:
 *   it holds a node of stratum s once it has N/size(s) + strata nodes and s has nodes left.
 *   (Giving every wave one node per stratum first would cost the stability below);
 * - stable: adding or removing one node moves each cut of the order by at most 3 existing nodes,
 *   so at most 3 x (number of waves) existing nodes change wave. With several spreadBy labels the
 *   strata's first nodes are ordered greedily (to cover every value), which can reorder them too:
 *   at most 3 x waves + strata then;
 * - at least one node per wave once there are more nodes than waves;
 * - control-plane nodes rank last in their stratum and never join the first wave unless
 *   `includeControlPlane`;
 * - nodes a rollout cannot count on (NotReady, unreachable, cordoned, NoExecute-tainted: see
 *   `NodeFacts.rolloutHazards`) join no wave and stay in the fleet: a wave's DaemonSet with
 *   maxUnavailable 1 would wait for a pod that never gets Ready there, and with Argo CD gating every
 *   later wave would wait too. `unreadyInLaterWaves` lets them into the waves after the first (never
 *   into the first). Wave sizes still count them (fractions are of all the nodes given), so a wave
 *   is short only when too few other nodes are left.
 *
 * Current labels are never read (except by `labelCommands` to print a diff): the same node set
 * gives the same answer whoever runs it.
 */

export interface WaveFraction {
  /** Wave name: the label value, and the DaemonSet name suffix. */
  readonly name: string;
  /** Target share of the nodes, in (0, 1]. The shares sum to at most 1; the remainder is the fleet. */
  readonly fraction: number;
}

export interface LabellingOptions {
  /** Waves in rollout order (the first is the canary). */
  readonly waves: readonly WaveFraction[];
  /** @default DEFAULT_WAVE_LABEL_KEY */
  readonly labelKey?: string;
  /** Labels whose values every wave should span. @default ['topology.kubernetes.io/zone'] */
  readonly spreadBy?: readonly string[];
  /** Allow control-plane nodes in the first wave. @default false */
  readonly includeControlPlane?: boolean;
  /** Mixed into the hash: a different seed draws different canaries. @default '' */
  readonly seed?: string;
  /**
   * Let nodes with rollout hazards (NotReady, unreachable, cordoned, NoExecute-tainted) into the
   * waves after the first. They never join the first wave. @default false (they stay in the fleet)
   */
  readonly unreadyInLaterWaves?: boolean;
}

export interface WaveAssignment {
  readonly labelKey: string;
  /** Node name → wave name; `undefined` = fleet. Keys in sorted order. */
  readonly byNode: Record<string, string | undefined>;
  /** Wave name → its nodes, sorted; every wave is present, possibly empty. */
  readonly byWave: Record<string, string[]>;
  /** Nodes in no wave, sorted. */
  readonly fleet: string[];
  /**
   * Nodes kept out of the waves because a rollout cannot count on them → their hazards, keys sorted: every such
   * node by default; with `unreadyInLaterWaves`, those the first wave passed over that no later wave took.
   */
  readonly heldOut: Record<string, readonly string[]>;
}

export const DEFAULT_SPREAD_BY: readonly string[] = ['topology.kubernetes.io/zone'];
export const CONTROL_PLANE_LABELS: readonly string[] = ['node-role.kubernetes.io/control-plane', 'node-role.kubernetes.io/master'];

export function assignWaves(nodes: readonly NodeJson[], options: LabellingOptions): WaveAssignment {
  const labelKey = options.labelKey ?? DEFAULT_WAVE_LABEL_KEY;
  const spreadBy = options.spreadBy ?? DEFAULT_SPREAD_BY;
  validateLabelling(nodes, options, labelKey, spreadBy);
  const seed = options.seed ?? '';

  // Strata: nodes sharing every spreadBy value (a missing label is a value of its own), each ranked
  // by hash. Control-plane nodes rank last in their stratum unless allowed in the canary, so the
  // canary's per-stratum picks are workers and the control plane is updated late.
  const strata = new Map<string, RankedNode[]>();
  const lateControlPlane = !options.includeControlPlane;
  const hashed = nodes.map((node) => ({
    name: node.metadata.name,
    score: createHash('sha256').update(`${seed}\u0000${node.metadata.name}`).digest('hex'),
    values: spreadBy.map((key) => node.metadata.labels?.[key]),
    controlPlane: CONTROL_PLANE_LABELS.some((key) => node.metadata.labels?.[key] !== undefined),
    hazards: factsOf(node).rolloutHazards,
  })).sort((a, b) => (Number(lateControlPlane && a.controlPlane) - Number(lateControlPlane && b.controlPlane))
    || compare(a.score, b.score) || compare(a.name, b.name));
  for (const node of hashed) {
    const id = JSON.stringify(node.values);
    const members = strata.get(id) ?? [];
    strata.set(id, members);
    // fields copied one by one: an object spread per node was a large share of the time at 50k nodes
    members.push({
      name: node.name, score: node.score, values: node.values, controlPlane: node.controlPlane, hazards: node.hazards, rank: members.length, size: 0,
    });
  }
  for (const members of strata.values()) members.forEach((node) => node.size = members.length);
  const order = spreadOrder([...strata.values()].flat());

  // Wave 0 takes the first nodes of the order it may take; every later wave the next ones left.
  const waveOf = new Map<string, string>();
  const byWave: Record<string, string[]> = {};
  const held = new Map<string, readonly string[]>();
  let cursor = 0;
  waveCounts(options.waves.map((wave) => wave.fraction), nodes.length).forEach((count, w) => {
    const wave = options.waves[w].name;
    const members: string[] = [];
    if (w === 0) {
      // Nodes skipped here (control plane, hazards) keep their place in the order, for the next wave.
      for (const node of order) {
        if (members.length === count) break;
        if (node.controlPlane && lateControlPlane) continue;
        if (node.hazards.length > 0) {
          held.set(node.name, node.hazards);
          continue;
        }
        members.push(node.name);
        waveOf.set(node.name, wave);
      }
    } else {
      for (; cursor < order.length && members.length < count; cursor++) {
        const node = order[cursor];
        if (waveOf.has(node.name)) continue;
        if (node.hazards.length > 0 && !options.unreadyInLaterWaves) {
          held.set(node.name, node.hazards);
          continue;
        }
        members.push(node.name);
        waveOf.set(node.name, wave);
        held.delete(node.name);
      }
    }
    byWave[wave] = members.sort(compare);
  });

  // Every node with a hazard is kept out of the waves (by default), not only those a wave reached before it filled:
  // the list tells the operator which nodes no wave will ever gate on.
  if (!options.unreadyInLaterWaves) {
    for (const node of order) if (node.hazards.length > 0 && !waveOf.has(node.name)) held.set(node.name, node.hazards);
  }
  const names = nodes.map((node) => node.metadata.name).sort(compare);
  const byNode: Record<string, string | undefined> = {};
  for (const name of names) byNode[name] = waveOf.get(name);
  const heldOut: Record<string, readonly string[]> = {};
  for (const name of [...held.keys()].sort(compare)) heldOut[name] = held.get(name)!;
  return { labelKey, byNode, byWave, fleet: names.filter((name) => !waveOf.has(name)), heldOut };
}

/**
 * Node counts per wave: cumulative fractions rounded (so the counts add up to the rounded total),
 * each wave at least one node when there are more nodes than waves.
 */
export function waveCounts(fractions: readonly number[], total: number): number[] {
  const m = fractions.length;
  const counts: number[] = [];
  let cumulative = 0;
  let previousCut = 0;
  fractions.forEach((fraction, i) => {
    cumulative += fraction;
    let cut = Math.min(total, Math.round(cumulative * total));
    if (total > m) {
      // Leave one node for each later wave, take at least one for this one.
      cut = Math.max(previousCut + 1, Math.min(cut, total - (m - 1 - i)));
    }
    cut = Math.max(cut, previousCut);
    counts.push(cut - previousCut);
    previousCut = cut;
  });
  return counts;
}

/**
 * The smallest node count above `total` at which wave `index` gets a node, with the rounding of
 * `waveCounts`. A wave gets 0 nodes only while there are no more nodes than waves (past that every
 * wave gets one), so the answer is at most the number of waves + 1.
 */
export function smallestClusterForWave(fractions: readonly number[], index: number, total: number): number {
  for (let n = total + 1; ; n++) {
    if (waveCounts(fractions, n)[index] > 0) return n;
  }
}

/** A wave of the assignment that got no node although its share is more than 0. */
export interface EmptyWave {
  readonly wave: string;
  readonly fraction: number;
  /** nodes the counts were computed from */
  readonly total: number;
  /** what the rounding gave the wave (0: too few nodes; more: the nodes it could take were held out) */
  readonly count: number;
  /** when count is 0: the smallest node count that gives the wave a node */
  readonly smallestCluster?: number;
}

/** Waves with a share > 0 that got no node (every share is > 0: validated), in wave order. */
export function emptyWaves(assignment: WaveAssignment, waves: readonly WaveFraction[], total: number): EmptyWave[] {
  const fractions = waves.map((wave) => wave.fraction);
  const counts = waveCounts(fractions, total);
  return waves.flatMap((wave, i): EmptyWave[] => (assignment.byWave[wave.name].length > 0 ? [] : [{
    wave: wave.name,
    fraction: wave.fraction,
    total,
    count: counts[i],
    ...(counts[i] === 0 ? { smallestCluster: smallestClusterForWave(fractions, i, total) } : {}),
  }]));
}

/**
 * Commands that make the nodes' labels match the assignment, sorted by node name. Without
 * `current`, every wave node is labelled and every fleet node unlabelled (idempotent; kubectl only
 * notes a missing label). With `current` (the nodes as they are now), only the changes are printed;
 * nodes not in the assignment are left alone, except the `excluded` ones (left out of the
 * assignment on purpose) that still carry a wave label: it is removed. Every argument is quoted for a POSIX shell: node
 * names come from an inventory file and are pasted into a terminal.
 */
export function labelCommands(assignment: WaveAssignment, current?: readonly NodeJson[], excluded: readonly NodeJson[] = []): string[] {
  return labelChanges(assignment, current, excluded).map((change) => change.command);
}

/** labelCommands with the node each command labels. */
export function labelChanges(assignment: WaveAssignment, current?: readonly NodeJson[],
  excluded: readonly NodeJson[] = []): { node: string; command: string }[] {
  const key = assignment.labelKey;
  const now = current === undefined ? undefined : new Map(current.map((node) => [node.metadata.name, node.metadata.labels?.[key]]));
  // Excluded nodes (Windows, virtual) still carrying a wave label: a stale label, removed. An own
  // property check: a node named `constructor` is not in byNode by inheritance.
  const assigned = (name: string) => Object.prototype.hasOwnProperty.call(assignment.byNode, name);
  const stale = excluded.filter((node) => node.metadata.labels?.[key] !== undefined && !assigned(node.metadata.name))
    .map((node) => node.metadata.name);
  // The label arguments quoted once, not per node: the same few words on every line. Options come
  // first and `--` ends them: a node name is never read as an option (`--all`, `--selector=...`).
  const unlabel = shellWord(`${key}-`);
  const setLabel = new Map<string, string>();
  const labelFor = (wave: string) => setLabel.get(wave) ?? setLabel.set(wave, shellWord(`${key}=${wave}`)).get(wave)!;
  const line = (name: string, args: string, options = '') => ({
    node: name, command: `kubectl label node ${options}-- ${shellWord(name)} ${args}`,
  });
  const commands: { node: string; command: string }[] = [];
  const entries: [string, string | undefined][] = [
    ...Object.entries(assignment.byNode), ...stale.map((name): [string, undefined] => [name, undefined]),
  ];
  const staleSet = new Set(stale);
  for (const [name, wave] of entries.sort((a, b) => compare(a[0], b[0]))) {
    if (staleSet.has(name)) {
      commands.push(line(name, unlabel));
      continue;
    }
    const present = now?.get(name);
    if (wave !== undefined) {
      if (now === undefined || present !== wave) commands.push(line(name, labelFor(wave), '--overwrite '));
    } else if (now === undefined || present !== undefined) {
      commands.push(line(name, unlabel));
    }
  }
  return commands;
}

/** Where the GPU driver pod of a relabelled node comes back: the DaemonSet of the node's new group. */
export interface DriverTarget {
  readonly namespace: string;
  /** the DaemonSet's `spec.selector.matchLabels`, as a kubectl selector (`k=v,k2=v2`) */
  readonly podSelector: string;
  /** seconds to wait for the new driver pod: at least the startup budget its manifests give it (default DRIVER_READY_TIMEOUT_SECONDS) */
  readonly readyTimeoutSeconds?: number;
}

/** gpu-operator's default wait for a driver pod (a kernel module build plus the image pull). */
export const DRIVER_READY_TIMEOUT_SECONDS = 25 * 60;

/**
 * The steps that relabel one GPU driver node: a driver cannot be unloaded under running GPU
 * workloads, and relabelling moves the node's driver pod to another wave's DaemonSet. So: cordon,
 * drain (DaemonSet pods stay: the driver keeps running until the relabel), relabel, wait for the
 * new driver pod to be Ready, uncordon. A failed step leaves the node cordoned, and a node that was
 * cordoned before (for other work) stays cordoned after: its `.spec.unschedulable` is read first, as
 * gpu-operator's upgrade controller keeps it (upgrade state `cordon-required` only uncordons nodes it
 * cordoned itself).
 */
export function gpuRelabelSteps(labelKey: string, node: string, wave: string | undefined, target?: DriverTarget): string[] {
  // options first, then `--`, then the node: a name is never read as an option by kubectl
  const name = shellWord(node);
  const steps = [
    `was_cordoned=$(kubectl get node -o ${shellWord('jsonpath={.spec.unschedulable}')} -- ${name})`,
    `kubectl cordon -- ${name}`,
    `kubectl drain --ignore-daemonsets --delete-emptydir-data --timeout=600s -- ${name}`,
    wave === undefined
      ? `kubectl label node -- ${name} ${shellWord(`${labelKey}-`)}`
      : `kubectl label node --overwrite -- ${name} ${shellWord(`${labelKey}=${wave}`)}`,
  ];
  if (target !== undefined) {
    // every value as an option's `=` value: none can become an option of its own
    const pods = `--namespace=${shellWord(target.namespace)} --selector=${shellWord(target.podSelector)} --field-selector=${shellWord(`spec.nodeName=${node}`)}`;
    // kubectl wait fails at once when no pod matches yet: first wait for the controller to create it
    // bounded like the wait after it: the controller creates the pod within seconds of the relabel
    const seconds = target.readyTimeoutSeconds ?? DRIVER_READY_TIMEOUT_SECONDS;
    const tries = Math.ceil(seconds / 5);
    steps.push(`tries=0; until kubectl get pods ${pods} -o name | grep -q .; do tries=$((tries+1)); `
      + `if [ "$tries" -ge ${tries} ]; then echo ${shellWord(`no driver pod on ${node} after ${seconds}s; the node stays cordoned`)} >&2; exit 1; fi; sleep 5; done`);
    steps.push(`kubectl wait pod --for=condition=Ready ${pods} --timeout=${seconds}s`);
  }
  // a node cordoned before the upgrade stays cordoned
  steps.push(`if [ "$was_cordoned" != true ]; then kubectl uncordon -- ${name}; fi`);
  return steps;
}

/**
 * The label to put on a node-pool template (Karpenter NodePool, EKS nodegroup, GKE node pool) whose
 * nodes all belong to `wave`. Fleet pools carry no wave label: absence is what makes a node fleet.
 * Cluster API copies only labels under `node.cluster.x-k8s.io/` to nodes, so pick such a key there.
 */
export function nodePoolLabel(labelKey: string, wave: string): Record<string, string> {
  if (wave === FLEET_GROUP) {
    throw new Error(`wave: "${FLEET_GROUP}" node pools carry no "${labelKey}" label: a node is in the fleet because it lacks the label`);
  }
  checkWaveName(wave, 'wave');
  return { [labelKey]: wave };
}

interface RankedNode {
  readonly name: string;
  readonly score: string;
  readonly values: readonly (string | undefined)[];
  readonly controlPlane: boolean;
  /** NodeFacts.rolloutHazards: non-empty keeps the node out of the waves */
  readonly hazards: readonly string[];
  /** Position in its stratum by hash (0 = lowest hash), and the stratum's size. */
  readonly rank: number;
  size: number;
}

/**
 * All nodes in the order waves take them: by rank/size within their stratum (Adams' divisor
 * method: first every stratum's first node, then each stratum in proportion to its size), ties
 * by hash. Every prefix is a spread sample, and a node joining or leaving shifts each cut of
 * this order by a few nodes only, which is what keeps assignments stable.
 *
 * The strata's first nodes (the canary's candidates) go greedily instead: next the one adding
 * the most spreadBy values not seen yet, so a small canary spans every zone and every instance
 * type rather than every combination. With one spreadBy label this is plain hash order.
 */
function spreadOrder(nodes: readonly RankedNode[]): RankedNode[] {
  // rank/size compared cross-multiplied, to stay in exact integers
  const order = [...nodes].sort((a, b) => (a.rank * b.size - b.rank * a.size) || compare(a.score, b.score) || compare(a.name, b.name));
  const firsts = order.filter((node) => node.rank === 0); // the head of `order`, in hash order
  const seen = (firsts[0]?.values ?? []).map(() => new Set<string | undefined>());
  for (let i = 0; i < firsts.length; i++) {
    let best = i;
    let bestFresh = -1;
    for (let j = i; j < firsts.length; j++) {
      const fresh = firsts[j].values.filter((value, l) => !seen[l].has(value)).length;
      if (fresh > bestFresh) {
        best = j;
        bestFresh = fresh;
      }
    }
    const [node] = firsts.splice(best, 1);
    firsts.splice(i, 0, node);
    node.values.forEach((value, l) => seen[l].add(value));
    order[i] = node;
  }
  return order;
}

function validateLabelling(nodes: readonly NodeJson[], options: LabellingOptions, labelKey: string, spreadBy: readonly string[]): void {
  if (nodes.length === 0) {
    throw new Error('nodes: the node list is empty; pass the output of `kubectl get nodes -o json` (its items)');
  }
  const nodeNames = new Set<string>();
  for (const node of nodes) {
    if (nodeNames.has(node.metadata.name)) {
      throw new Error(`nodes: node "${node.metadata.name}" is listed twice; pass each node once`);
    }
    nodeNames.add(node.metadata.name);
  }
  if (options.waves.length === 0) {
    throw new Error('waves: at least one wave is required, e.g. [{ name: "canary", fraction: 0.02 }]');
  }
  const names = new Set<string>();
  let sum = 0;
  options.waves.forEach((wave, i) => {
    checkWaveName(wave.name, `waves[${i}].name`);
    if (names.has(wave.name)) {
      throw new Error(`waves[${i}].name: duplicate wave name "${wave.name}"; give every wave a different name`);
    }
    names.add(wave.name);
    if (!(wave.fraction > 0 && wave.fraction <= 1)) {
      throw new Error(`waves[${i}].fraction ("${wave.name}"): ${wave.fraction} is not in (0, 1]; use the share of nodes, e.g. 0.02 for 2%`);
    }
    sum += wave.fraction;
  });
  // A little slack for decimal fractions that do not add up exactly in binary (0.1 + 0.2 + 0.7).
  if (sum > 1 + 1e-9) {
    throw new Error(`waves: the fractions add up to ${sum}, more than 1; the waves share the nodes and the fleet gets the rest`);
  }
  const keyProblems = [checkLabelKey('labelKey', labelKey), ...spreadBy.map((key, i) => checkLabelKey(`spreadBy[${i}]`, key))].flat();
  if (keyProblems.length > 0) throw new Error(keyProblems.join('; '));
  if (spreadBy.includes(labelKey)) {
    throw new Error(`spreadBy: cannot spread by the wave label "${labelKey}" itself: the assignment would depend on its own output`);
  }
}

/** Code-unit order: locale-independent, so every machine sorts alike. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
