import { PodLevelResourcesGate } from './pod-level';
import { hasPodLevelResources, podRequests, ResourceList } from './resources';
import { HostPort, hostPorts, isObject } from '../coverage/manifests';

/** An event about a pod, as kubectl lists it (the scheduler's and the kubelet's own words). */
export interface PodEvent {
  readonly reason: string;
  readonly message: string;
  readonly type: string;
  /** lastTimestamp, else eventTime, else firstTimestamp ('' when none) */
  readonly time: string;
  readonly count: number;
}

/** What capacity checks and `doctor` need of one pod, read once from `kubectl get pods -A -o json`. */
export interface PodRecord {
  readonly namespace: string;
  readonly name: string;
  /** spec.nodeName: the node the pod is bound to (undefined: not scheduled) */
  readonly node?: string;
  readonly phase: string;
  /** Succeeded or Failed: the scheduler no longer counts it */
  readonly terminal: boolean;
  /** metadata.deletionTimestamp is set */
  readonly deleting: boolean;
  /** spec.priority as the Priority admission plugin resolved it (0 when absent) */
  readonly priority: number;
  /** the requests the scheduler counts (podRequests, with or without the pod-level resources its index was read for) */
  readonly requests: ResourceList;
  /** true when the pod sets pod-level spec.resources (whether they count depends on the PodLevelResources gate) */
  readonly podLevelResources?: true;
  readonly hostPorts: readonly HostPort[];
  /** `namespace/name` of the DaemonSet controlling it, if one does */
  readonly owner?: string;
  /** spec.terminationGracePeriodSeconds, when the pod object has it (the API server defaults it to 30) */
  readonly graceSeconds?: number;
  /**
   * A DaemonSet's pod, bound and not being deleted, that is not available: its Ready condition is not True
   * (podutil.IsPodAvailable). The rolling update replaces it at once, outside its budget.
   */
  readonly unavailable?: true;
  /**
   * status.startTime, the preemption order's tie-break; undefined for a pod not started yet (bound or not),
   * which the scheduler's util.GetPodStartTime takes as now: later than every started pod, never its creation time
   */
  readonly startTime?: string;
  /**
   * What doctor reads of the pod object, kept only for pods a DaemonSet controls: metadata.labels and
   * deletionTimestamp, spec.affinity and priorityClassName, and status, as the object holds them (the rest is dropped: keptOf)
   */
  readonly object?: Record<string, any>;
}

/**
 * One copy of each value many pods share: node names, namespaces, owners, phases and request lists (130k nodes
 * × 30 pods hold a few hundred thousand distinct strings, not millions of copies). Values are returned unchanged;
 * a request list returned is shared, so it is never written to.
 */
export class Interner {
  private readonly strings = new Map<string, string>();
  private readonly lists = new Map<string, ResourceList>();

  string<T extends string | undefined>(value: T): T {
    if (value === undefined) return value;
    const seen = this.strings.get(value);
    if (seen !== undefined) return seen as T;
    this.strings.set(value, value);
    return value;
  }

  requests(list: ResourceList): ResourceList {
    let key = '';
    for (const name in list) key += `${name}\u0000${list[name]}\u0000`;
    const seen = this.lists.get(key);
    if (seen !== undefined) return seen;
    this.lists.set(key, list);
    return list;
  }
}

/** Without an interner: every value as it is. */
const UNSHARED: Pick<Interner, 'string' | 'requests'> = { string: (value) => value, requests: (list) => list };

/** Shared by the pods that bind no host port (most of them): one array, not millions. */
const NO_PORTS: readonly HostPort[] = Object.freeze([]);

/**
 * One pod object into a record; undefined when it is not a Pod with a name. With an interner (an index's), the
 * record shares the strings and request lists other pods hold.
 */
export function podRecord(item: unknown, keepObject: (owner: string | undefined) => boolean = () => false,
  interner: Pick<Interner, 'string' | 'requests'> = UNSHARED, podLevel = true): PodRecord | undefined {
  if (!isObject(item) || (item.kind !== undefined && item.kind !== 'Pod')) return undefined;
  const meta = isObject(item.metadata) ? item.metadata : {};
  if (typeof meta.name !== 'string' || meta.name === '') return undefined;
  const spec = isObject(item.spec) ? item.spec : {};
  const status = isObject(item.status) ? item.status : {};
  const namespace = typeof meta.namespace === 'string' ? meta.namespace : 'default';
  const phase = typeof status.phase === 'string' ? status.phase : 'Unknown';
  const ownerRef = Array.isArray(meta.ownerReferences)
    ? meta.ownerReferences.find((o: unknown) => isObject(o) && o.controller === true && o.kind === 'DaemonSet' && typeof o.name === 'string')
    : undefined;
  const owner = ownerRef === undefined ? undefined : `${namespace}/${ownerRef.name}`;
  const node = typeof spec.nodeName === 'string' && spec.nodeName !== '' ? spec.nodeName : undefined;
  return {
    namespace: interner.string(namespace),
    name: meta.name,
    node: interner.string(node),
    phase: interner.string(phase),
    terminal: phase === 'Succeeded' || phase === 'Failed',
    deleting: typeof meta.deletionTimestamp === 'string',
    priority: typeof spec.priority === 'number' && Number.isFinite(spec.priority) ? spec.priority : 0,
    requests: interner.requests(podRequests(spec, podLevel)),
    podLevelResources: hasPodLevelResources(spec) || undefined,
    hostPorts: portsOf(spec),
    owner: interner.string(owner),
    graceSeconds: typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : undefined,
    startTime: typeof status.startTime === 'string' ? status.startTime : undefined,
    unavailable: owner !== undefined && node !== undefined && typeof meta.deletionTimestamp !== 'string' && !readyCondition(status) ? true : undefined,
    object: keepObject(owner) ? keptOf(meta, spec, item.status) : undefined,
  };
}

/** The pod's Ready condition is True. */
function readyCondition(status: Record<string, any>): boolean {
  return Array.isArray(status.conditions) && status.conditions.some((c: unknown) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

/** The parts of a pod object doctor reads (see PodRecord.object); the containers, volumes and the rest are dropped. */
function keptOf(meta: Record<string, any>, spec: Record<string, any>, status: unknown): Record<string, any> {
  return {
    metadata: { labels: meta.labels, deletionTimestamp: meta.deletionTimestamp },
    spec: { affinity: spec.affinity, priorityClassName: spec.priorityClassName },
    status,
  };
}

/** The gate of an index read without a version: on, as Kubernetes 1.34 and later run it, not certain. */
const ASSUMED_ON: PodLevelResourcesGate = { enabled: true, basis: 'no Kubernetes version given', certain: false };

/** The pods bound to each node that the scheduler counts: non-terminal (NodeInfo.Pods of its cache). */
export class PodIndex {
  /** shared by the records read into this index (podRecord's interner) */
  readonly interner = new Interner();
  private readonly byNode = new Map<string, PodRecord[]>();
  private count = 0;
  private podLevelCount = 0;
  private readonly unavailableByOwner = new Map<string, Set<string>>();

  /** @param gate whether the pods' pod-level spec.resources count (the scheduler's PodLevelResources gate), and why */
  constructor(readonly gate: PodLevelResourcesGate = ASSUMED_ON) {}

  get podLevel(): boolean {
    return this.gate.enabled;
  }

  add(pod: PodRecord): void {
    this.count++;
    if (pod.podLevelResources) this.podLevelCount++;
    if (pod.node === undefined || pod.terminal) return;
    if (pod.unavailable && pod.owner !== undefined) {
      const nodes = this.unavailableByOwner.get(pod.owner);
      if (nodes === undefined) this.unavailableByOwner.set(pod.owner, new Set([pod.node]));
      else nodes.add(pod.node);
    }
    const list = this.byNode.get(pod.node);
    if (list === undefined) this.byNode.set(pod.node, [pod]);
    else list.push(pod);
  }

  /** pods counted on a node (empty when none) */
  on(node: string): readonly PodRecord[] {
    return this.byNode.get(node) ?? [];
  }

  /** DaemonSet id → the nodes where its pod is not available (PodRecord.unavailable): what the rolling update replaces outside its budget */
  get unavailableDaemonPods(): ReadonlyMap<string, ReadonlySet<string>> {
    return this.unavailableByOwner;
  }

  /** how many pods read set pod-level resources */
  get withPodLevelResources(): number {
    return this.podLevelCount;
  }

  /** how many pod objects were read, bound or not */
  get size(): number {
    return this.count;
  }
}

/**
 * A PodList (`kubectl get pods -A -o json`, kind List or PodList) into an index. Throws, naming the source, when
 * the shape is wrong; items that are not Pods are an error too (a wrong file, not a pod list).
 */
export function parsePodList(value: unknown, source: string, into = new PodIndex()): PodIndex {
  const hint = 'expected the output of `kubectl get pods -A -o json` (a List or PodList with items)';
  if (!isObject(value) || (value.kind !== 'List' && value.kind !== 'PodList') || !Array.isArray(value.items)) {
    throw new Error(`${source}: not a pod list; ${hint}`);
  }
  value.items.forEach((item: unknown, index: number) => {
    const pod = podRecord(item, undefined, into.interner, into.podLevel);
    if (pod === undefined) throw new Error(`${source}: items[${index}] is not a Pod with metadata.name; ${hint}`);
    into.add(pod);
  });
  return into;
}

function portsOf(spec: Record<string, unknown>): readonly HostPort[] {
  const ports = hostPorts(spec, spec.hostNetwork === true);
  return ports.length === 0 ? NO_PORTS : ports;
}
