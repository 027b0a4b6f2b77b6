import { compare, isObject, shown } from './manifests';
import { NodeIdentity, NodeJson, TaintJson } from '../../scheduling/types';
import { terminalSafe } from '../../util/output-escape';
import { isLabelKey, isLabelValue } from '../../validation/values';

export const OS_LABEL = 'kubernetes.io/os';
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** Why a node is outside what a Linux node agent can run on; the base construct excludes these on purpose. */
export type Platform = 'linux' | 'non-linux' | 'virtual';

/** A taint the node will carry in a real cluster even when the inventory does not list it. */
export interface EffectiveTaint extends TaintJson {
  /** set when the taint is implied by the node's state rather than listed in spec.taints */
  readonly impliedBy?: string;
}

/** A node with what scheduling decisions need precomputed. */
export interface NodeFacts {
  readonly name: string;
  readonly identity: NodeIdentity;
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly EffectiveTaint[];
  /** status of the Ready condition; 'absent' when the inventory has no conditions */
  readonly ready: 'True' | 'False' | 'Unknown' | 'absent';
  /** spec.unschedulable: the node is cordoned */
  readonly unschedulable: boolean;
  /** Ready=False, or a listed `node.kubernetes.io/not-ready` taint */
  readonly notReady: boolean;
  /** Ready=Unknown, or a listed `node.kubernetes.io/unreachable` taint: the node controller lost the kubelet */
  readonly unreachable: boolean;
  /** every NoExecute taint, listed or implied by the node's state (a pod that does not tolerate one is evicted) */
  readonly noExecuteTaints: readonly EffectiveTaint[];
  /**
   * Why a rollout cannot count on this node (empty when it can): NotReady, unreachable, cordoned, a
   * NoExecute taint. A rolling update with maxUnavailable 1 waits for a pod that never gets Ready
   * there, so rollout waves keep such nodes out (see coverage/labelling.ts). One phrase per reason.
   */
  readonly rolloutHazards: readonly string[];
  readonly platform: Platform;
  /** e.g. `kubernetes.io/os=windows`, why the platform is not linux */
  readonly platformReason?: string;
  readonly zone?: string;
  readonly controlPlane: boolean;
  /** status.allocatable as listed (NO_ALLOCATABLE, empty, when the inventory has none) */
  readonly allocatable: Readonly<Record<string, string>>;
}

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
/**
 * The rollout hazard of a cordoned node. It keeps the node out of new waves (`label`: a cordoned node is usually
 * being drained or retired, a poor canary), but it does not keep a DaemonSet pod from running and turning Ready
 * there: the DaemonSet controller adds a toleration of node.kubernetes.io/unschedulable:NoSchedule to every pod
 * (pkg/controller/daemon/util/daemonset_util.go, AddOrUpdateDaemonPodTolerations).
 */
export const CORDONED_HAZARD = 'cordoned (spec.unschedulable)';
const UNREACHABLE_TAINT = 'node.kubernetes.io/unreachable';
const NOT_READY_TAINT = 'node.kubernetes.io/not-ready';
/** Taints the node lifecycle controller sets from the Ready condition. */
const STATE_TAINTS = [NOT_READY_TAINT, UNREACHABLE_TAINT];

/** A node name as the API server takes it (ValidateNodeName: a DNS-1123 subdomain). */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Refuses a node name no cluster can hold, before anything prints it: every reader of nodes (the --nodes inventory,
 * doctor's dump and live read) goes through here. The names go into kubectl command lines (`--all` would be read as
 * an option), comments, terminals and JSON; the message shows a short, escaped form of the name, never its raw bytes.
 */
export function checkNodeName(name: string, where: string): void {
  if (name.length <= 253 && NODE_NAME.test(name)) return;
  const cut = JSON.stringify(terminalSafe(name.length > 40 ? `${name.slice(0, 40)}…` : name));
  throw new Error(`${where}: node name ${cut} is not a valid Kubernetes node name (a DNS subdomain: `
    + 'lowercase letters, digits, "-" and ".", starting and ending with a letter or digit, at most 253 characters); '
    + 'the API server refuses such a node: fix or remove it in the input');
}

/**
 * Accepts what `kubectl get nodes -o json` prints (kind List) and a NodeList (kind NodeList), both with items[].
 * Throws an error naming the source and what is wrong otherwise.
 */
export function parseNodeList(value: unknown, source: string): NodeJson[] {
  const hint = 'expected a NodeList: an object with "kind": "NodeList" (or "List") and "items": [Node...], as printed by `kubectl get nodes -o json`';
  if (!isObject(value)) {
    throw new Error(`${source}: not a NodeList: the JSON is ${Array.isArray(value) ? 'an array' : typeof value}; ${hint}`);
  }
  if (value.kind !== 'NodeList' && value.kind !== 'List') {
    throw new Error(`${source}: not a NodeList: kind is ${shown(value.kind ?? null)}; ${hint}`);
  }
  if (!Array.isArray(value.items)) {
    throw new Error(`${source}: not a NodeList: "items" is missing or not an array; ${hint}`);
  }
  const names = new Set<string>();
  return value.items.map((item: unknown, index: number) => {
    const node = checkNode(item, `${source}: items[${index}]`);
    if (names.has(node.metadata.name)) {
      throw new Error(`${source}: node ${node.metadata.name} is listed twice; node names are unique in a cluster`);
    }
    names.add(node.metadata.name);
    return node;
  });
}

function checkNode(item: unknown, where: string): NodeJson {
  if (!isObject(item) || (item.kind !== undefined && item.kind !== 'Node')) {
    throw new Error(`${where} is not a Node (kind ${isObject(item) ? shown(item.kind) : typeof item}); a NodeList holds Node objects only`);
  }
  const name = isObject(item.metadata) ? item.metadata.name : undefined;
  if (typeof name !== 'string' || name === '') {
    throw new Error(`${where}: a Node without metadata.name`);
  }
  checkNodeName(name, where);
  checkNodeLabels(isObject(item.metadata) ? item.metadata.labels : undefined, `${where} (node ${name}): metadata.labels`);
  const taints = isObject(item.spec) ? item.spec.taints : undefined;
  if (taints !== undefined && !Array.isArray(taints)) {
    throw new Error(`${where} (node ${name}): spec.taints must be a list`);
  }
  for (const taint of taints ?? []) {
    if (!isObject(taint) || typeof taint.key !== 'string' || !EFFECTS.includes(taint.effect)) {
      throw new Error(`${where} (node ${name}): taint ${shown(taint)} needs a key and an effect of ${EFFECTS.join(', ')}`);
    }
  }
  return item as unknown as NodeJson;
}

/** Label keys already seen valid: the nodes of a cluster share most of their keys. */
const GOOD_LABEL_KEYS = new Set<string>();

/**
 * A node's labels as the API server validates them (ValidateNode's ValidateObjectMeta, ValidateLabels): keys
 * qualified names, values label values. A value with a newline or an escape sequence never
 * reaches a kubectl command, a comment or a terminal: the inventory is refused.
 */
function checkNodeLabels(labels: unknown, what: string): void {
  if (labels === undefined) return;
  if (!isObject(labels)) throw new Error(`${what} must map strings to strings`);
  for (const key of Object.keys(labels)) {
    const value: unknown = labels[key];
    if (typeof value !== 'string') throw new Error(`${what} must map strings to strings`);
    if (!GOOD_LABEL_KEYS.has(key)) {
      if (!isLabelKey(key)) throw new Error(`${what}: ${shown(key)} is not a valid label key; the API server refuses it: fix or remove it in the inventory`);
      if (GOOD_LABEL_KEYS.size < 100_000) GOOD_LABEL_KEYS.add(key);
    }
    if (!isLabelValue(value)) {
      throw new Error(`${what}: the value of ${key} (${shown(value)}) is not a valid label value; the API server refuses it: fix or remove it in the inventory`);
    }
  }
}

// Shared by the nodes without taints or hazards (most of them): three arrays fewer per node at 130k nodes.
const NO_TAINTS: readonly EffectiveTaint[] = Object.freeze([]);
const NO_HAZARDS: readonly string[] = Object.freeze([]);
/** NodeFacts.allocatable of a node whose inventory entry lists no status.allocatable (one listing `{}` has its own) */
export const NO_ALLOCATABLE: Readonly<Record<string, string>> = Object.freeze({});

/** Precomputes the facts of a node; nodes come back in name order so every report is stable. */
export function nodeFacts(nodes: readonly NodeJson[]): NodeFacts[] {
  return nodes.map(factsOf).sort((a, b) => compare(a.name, b.name));
}

/** The facts of one node (nodeFacts for a list). */
export function factsOf(node: NodeJson): NodeFacts {
  const name = node.metadata.name;
  const labels = node.metadata.labels ?? {};
  const readyCondition = (node.status?.conditions ?? []).find((c) => c.type === 'Ready');
  const ready = readyCondition === undefined ? 'absent'
    : readyCondition.status === 'True' || readyCondition.status === 'False' ? readyCondition.status : 'Unknown';
  const unschedulable = node.spec?.unschedulable === true;
  const listed: readonly EffectiveTaint[] = node.spec?.taints ?? NO_TAINTS;
  // copied only when a taint is implied (most nodes: the listed array as it is)
  let taints = listed;

  // The node lifecycle controller taints nodes by condition (TaintNodesByCondition) and for taint-based
  // eviction; an inventory written by hand may omit those taints, a live one already has them.
  const implied = (key: string, effect: TaintJson['effect'], why: string) => {
    if (!taints.some((t) => t.key === key && t.effect === effect)) taints = [...taints, { key, effect, impliedBy: why }];
  };
  if (ready === 'False') {
    implied(NOT_READY_TAINT, 'NoSchedule', 'Ready=False');
    implied(NOT_READY_TAINT, 'NoExecute', 'Ready=False');
  } else if (ready === 'Unknown') {
    implied(UNREACHABLE_TAINT, 'NoSchedule', 'Ready=Unknown');
    implied(UNREACHABLE_TAINT, 'NoExecute', 'Ready=Unknown');
  }
  if (unschedulable) implied('node.kubernetes.io/unschedulable', 'NoSchedule', 'spec.unschedulable (cordoned)');

  const notReady = ready === 'False' || taints.some((t) => t.key === NOT_READY_TAINT && t.impliedBy === undefined);
  const unreachable = ready === 'Unknown' || taints.some((t) => t.key === UNREACHABLE_TAINT && t.impliedBy === undefined);
  const noExecuteTaints = taints.some((t) => t.effect === 'NoExecute') ? taints.filter((t) => t.effect === 'NoExecute') : NO_TAINTS;
  const rolloutHazards = !notReady && !unreachable && !unschedulable && noExecuteTaints.length === 0 ? NO_HAZARDS : [
    ...(notReady ? [`NotReady (${ready === 'False' ? 'Ready=False' : `taint ${NOT_READY_TAINT}`})`] : []),
    ...(unreachable ? [`unreachable (${ready === 'Unknown' ? 'Ready=Unknown' : `taint ${UNREACHABLE_TAINT}`})`] : []),
    ...(unschedulable ? [CORDONED_HAZARD] : []),
    // the not-ready / unreachable NoExecute taints are the states named above, not a reason of their own
    ...noExecuteTaints.filter((t) => !STATE_TAINTS.includes(t.key)).map((t) => `NoExecute taint ${formatTaint(t)}`),
  ];
  const [platform, platformReason] = platformOf(labels);
  return {
    name,
    identity: { name, labels },
    labels,
    taints: taints.length === 0 ? NO_TAINTS : taints,
    ready,
    unschedulable,
    notReady,
    unreachable,
    noExecuteTaints,
    rolloutHazards,
    platform,
    platformReason,
    zone: labels[ZONE_LABEL] ?? labels['failure-domain.beta.kubernetes.io/zone'],
    controlPlane: 'node-role.kubernetes.io/control-plane' in labels || 'node-role.kubernetes.io/master' in labels,
    allocatable: isObject(node.status?.allocatable) ? node.status!.allocatable : NO_ALLOCATABLE,
  };
}

/** Same exclusions as the base construct: not linux, EKS Fargate, virtual-kubelet. */
function platformOf(labels: Readonly<Record<string, string>>): [Platform, string | undefined] {
  const os = labels[OS_LABEL] ?? labels['beta.kubernetes.io/os'];
  if (os !== undefined && os !== 'linux') return ['non-linux', `${OS_LABEL}=${os}`];
  if (labels['eks.amazonaws.com/compute-type'] === 'fargate') return ['virtual', 'eks.amazonaws.com/compute-type=fargate'];
  if (labels.type === 'virtual-kubelet') return ['virtual', 'type=virtual-kubelet'];
  return ['linux', undefined];
}

/**
 * What a taint the inventory does not list says of itself: ` (implied by Ready=False: …)`. The tool adds the node
 * lifecycle controller's taints on purpose (a live NotReady node carries not-ready:NoSchedule, which DaemonSet pods do
 * not tolerate), where the DaemonSet controller's own table tests give the node only the NoExecute one: said, so a
 * reader comparing the two knows why. '' for a listed taint.
 */
export function impliedNote(taint: EffectiveTaint): string {
  if (taint.impliedBy === undefined) return '';
  return ` (implied by ${taint.impliedBy}: not listed in the inventory, added on purpose as the node lifecycle controller taints such a node)`;
}

export function formatTaint(taint: TaintJson): string {
  return `${taint.key}${taint.value ? `=${taint.value}` : ''}:${taint.effect}`;
}
