import { eventBytes, KeptLimit, listEntryBytes, podBytes, stateKeptLimit } from './kept';
import { NodeJson } from '../../scheduling/types';
import { ENTRY, HeapEstimate, SLOT } from '../../util/heap-estimate';
import { isDirectory, jsonFilesIn, readJsonFile } from '../capacity/input';
import { PodEvent, PodIndex, PodRecord, podRecord } from '../capacity/pods';
import { daemonSetInfo, DaemonSetInfo, isObject, KubeObject } from '../coverage/manifests';
import { parseNodeList } from '../coverage/nodes';


/** A DaemonSet of the dump with its status and revision. */
export interface DaemonSetState {
  readonly info: DaemonSetInfo;
  readonly object: KubeObject;
  /** the hash pods of the current revision carry in `controller-revision-hash` (undefined: no ControllerRevision in the dump) */
  readonly currentHash?: string;
}

/** What `doctor` reads: one `kubectl get nodes,pods,daemonsets,controllerrevisions,events -A -o json` dump. */
export interface ClusterState {
  readonly nodes: NodeJson[];
  readonly pods: PodIndex;
  /** pods each DaemonSet controls (by `namespace/name`), terminal ones included */
  readonly daemonSetPods: Map<string, PodRecord[]>;
  readonly daemonSets: DaemonSetState[];
  /** events by `namespace/pod`, newest first, at most MAX_EVENTS_PER_POD each */
  readonly events: Map<string, PodEvent[]>;
  /**
   * The dump's own time: its newest timestamp (events, the nodes' condition heartbeats, the pods' creation and
   * condition times), an RFC 3339 UTC time; undefined when it holds none. The dump was taken at that time or later.
   */
  readonly observedAt?: string;
}

/** Events kept per pod: the newest few say what is wrong now; the rest would only cost memory. */
const MAX_EVENTS_PER_POD = 8;
/** The longest event message kept (characters): kubelet messages are short, a forged one is cut. */
const MAX_MESSAGE = 500;

/** An RFC 3339 time in UTC as the API server writes it: such strings order as their times do. */
const UTC_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z$/;

/** Doctor keeps what it reads of the pods DaemonSets control. */
const hasOwner = (owner: string | undefined): boolean => owner !== undefined;

const KINDS = ['Node', 'Pod', 'DaemonSet', 'ControllerRevision', 'Event'];

/**
 * Collects the objects of one or more Lists into a state; call `finish` once all are added. What it keeps is
 * counted as it is kept (HeapEstimate, on the slimmed objects): past the limit, `add` throws the limit's error.
 */
export class StateBuilder {
  private readonly nodes: unknown[] = [];
  private readonly pods = new PodIndex();
  private readonly daemonSetPods = new Map<string, PodRecord[]>();
  private readonly daemonSetObjects: { object: KubeObject; source: string }[] = [];
  /** ds id → [revision number, hash] of the newest ControllerRevision */
  private readonly revisions = new Map<string, [number, string]>();
  private readonly events = new Map<string, PodEvent[]>();
  private newest: string | undefined;
  private readonly estimate = new HeapEstimate();
  private keptBytes = 0;

  constructor(private readonly limit: KeptLimit = stateKeptLimit()) {}

  /** The bytes kept so far, as HeapEstimate counts them. */
  get kept(): number {
    return this.keptBytes;
  }

  /** Counts `bytes` more kept for the object at `where` (less when negative: a value dropped); past the limit, throws. */
  private keep(bytes: number, where: string): void {
    this.keptBytes += bytes;
    if (this.keptBytes > this.limit.bytes) throw this.limit.exceeded(where);
  }

  /** Keeps the newest time seen (the dump's own time: see ClusterState.observedAt). */
  private seen(time: unknown): void {
    if (typeof time === 'string' && UTC_TIME.test(time) && (this.newest === undefined || time > this.newest)) this.newest = time;
  }

  private seenConditions(status: unknown, fields: readonly string[]): void {
    const conditions = isObject(status) && Array.isArray(status.conditions) ? status.conditions : [];
    for (const c of conditions) if (isObject(c)) for (const f of fields) this.seen(c[f]);
  }

  /** Adds one `kubectl get ... -o json` document (a List, or a single object). */
  addDocument(value: unknown, source: string): void {
    if (!isObject(value)) throw new Error(`${source}: not a Kubernetes List; ${HINT}`);
    if (Array.isArray(value.items)) {
      value.items.forEach((item: unknown, i: number) => this.add(item, `${source}: items[${i}]`));
    } else if (typeof value.kind === 'string' && KINDS.includes(value.kind)) {
      this.add(value, source);
    } else {
      throw new Error(`${source}: not a Kubernetes List (no items); ${HINT}`);
    }
  }

  /** Adds one object; kinds doctor does not read are skipped. */
  add(item: unknown, where: string): void {
    if (!isObject(item)) throw new Error(`${where}: not an object; ${HINT}`);
    switch (item.kind) {
      case 'Node': {
        const slim = slimNode(item);
        this.keep(this.estimate.of(slim) + SLOT, where);
        this.nodes.push(slim);
        this.seenConditions(item.status, ['lastHeartbeatTime', 'lastTransitionTime']);
        return;
      }
      case 'Pod': {
        const pod = podRecord(item, hasOwner, this.pods.interner);
        if (pod === undefined) throw new Error(`${where}: a Pod without metadata.name`);
        this.keep(podBytes(this.estimate, pod, pod.node !== undefined && !pod.terminal && this.pods.on(pod.node).length === 0), where);
        this.pods.add(pod);
        this.seen(isObject(item.metadata) ? item.metadata.creationTimestamp : undefined);
        if (pod.owner !== undefined) this.seenConditions(item.status, ['lastTransitionTime']);
        if (pod.owner !== undefined) {
          const list = this.daemonSetPods.get(pod.owner);
          if (list === undefined) this.daemonSetPods.set(pod.owner, [pod]);
          else list.push(pod);
        }
        return;
      }
      case 'DaemonSet': {
        const entry = { object: item as KubeObject, source: where };
        this.keep(this.estimate.of(entry) + SLOT, where);
        this.daemonSetObjects.push(entry);
        return;
      }
      case 'ControllerRevision':
        this.addRevision(item, where);
        return;
      case 'Event':
        this.addEvent(item, where);
        return;
      default:
    }
  }

  private addRevision(item: Record<string, any>, where: string): void {
    const meta = isObject(item.metadata) ? item.metadata : {};
    const owner = Array.isArray(meta.ownerReferences)
      ? meta.ownerReferences.find((o: unknown) => isObject(o) && o.kind === 'DaemonSet' && o.controller === true) : undefined;
    if (owner === undefined || typeof item.revision !== 'number') return;
    const id = `${typeof meta.namespace === 'string' ? meta.namespace : 'default'}/${owner.name}`;
    const labels = isObject(meta.labels) ? meta.labels : {};
    const name = typeof meta.name === 'string' ? meta.name : '';
    // the controller names a revision `<daemonset>-<hash>` and labels it controller-revision-hash=<hash>
    const hash = typeof labels['controller-revision-hash'] === 'string' ? labels['controller-revision-hash']
      : name.startsWith(`${owner.name}-`) ? name.slice(owner.name.length + 1) : undefined;
    if (hash === undefined) return;
    const seen = this.revisions.get(id);
    if (seen !== undefined && item.revision <= seen[0]) return;
    const newest: [number, string] = [item.revision, hash];
    this.keep(this.estimate.of(newest) + (seen === undefined ? ENTRY + this.estimate.of(id) : 0), where);
    this.revisions.set(id, newest);
  }

  private addEvent(item: Record<string, any>, where: string): void {
    const involved = isObject(item.involvedObject) ? item.involvedObject : isObject(item.regarding) ? item.regarding : undefined;
    if (involved === undefined || involved.kind !== 'Pod' || typeof involved.name !== 'string') return;
    const key = `${typeof involved.namespace === 'string' ? involved.namespace : 'default'}/${involved.name}`;
    const text = (v: unknown) => (typeof v === 'string' ? v : '');
    const message = text(item.message ?? item.note);
    const event: PodEvent = {
      reason: cut(text(item.reason), 100),
      message: message.length > MAX_MESSAGE ? `${cut(message, MAX_MESSAGE)}…` : message,
      type: cut(text(item.type), 20),
      time: text(item.lastTimestamp) || text(item.eventTime) || text(item.firstTimestamp),
      count: typeof item.count === 'number' ? item.count : 1,
    };
    this.seen(event.time);
    const list = this.events.get(key) ?? [];
    this.keep(eventBytes(this.estimate, event) + (list.length === 0 ? listEntryBytes(key) : 0), where);
    list.push(event);
    list.sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
    // the oldest past the few kept is dropped, and no longer counted
    if (list.length > MAX_EVENTS_PER_POD) this.keep(-eventBytes(this.estimate, list.pop()!), where);
    this.events.set(key, list);
  }

  finish(source: string): ClusterState {
    const nodes = parseNodeList({ kind: 'List', items: this.nodes }, source);
    const seen = new Set<string>();
    const daemonSets = this.daemonSetObjects.map(({ object, source: where }) => {
      const info = daemonSetInfo(object, where);
      if (seen.has(info.id)) throw new Error(`${where}: DaemonSet ${info.id} is listed twice`);
      seen.add(info.id);
      return { info, object, currentHash: this.revisions.get(info.id)?.[1] };
    }).sort((a, b) => (a.info.id < b.info.id ? -1 : a.info.id > b.info.id ? 1 : 0));
    return { nodes, pods: this.pods, daemonSetPods: this.daemonSetPods, daemonSets, events: this.events, observedAt: this.newest };
  }
}

/**
 * The first `max` characters of `text`, as a string of their own: V8 makes a slice of a long string a view into it,
 * which would keep all of a forged event's megabytes alive for its few characters (and past the kept budget's count).
 * JSON's round trip copies it exactly, lone surrogates included.
 */
function cut(text: string, max: number): string {
  return text.length > max ? JSON.parse(JSON.stringify(text.slice(0, max))) as string : text;
}

/**
 * What doctor reads of a node (its name and labels, taints, cordon, conditions, allocatable, kubelet version);
 * the rest (managedFields, annotations, the images its status lists: most of a real node's bytes) is dropped as
 * it is read, so a live read or a dump keeps little per node. Shapes are kept as given: parseNodeList checks them.
 */
function slimNode(item: Record<string, any>): Record<string, unknown> {
  const meta = isObject(item.metadata) ? item.metadata : {};
  const spec = isObject(item.spec) ? item.spec : undefined;
  const status = isObject(item.status) ? item.status : undefined;
  return {
    kind: item.kind,
    metadata: { name: meta.name, labels: meta.labels },
    ...(spec === undefined ? {} : { spec: { taints: spec.taints, unschedulable: spec.unschedulable } }),
    ...(status === undefined ? {} : {
      status: {
        conditions: status.conditions,
        allocatable: status.allocatable,
        ...(isObject(status.nodeInfo) ? { nodeInfo: { kubeletVersion: status.nodeInfo.kubeletVersion } } : {}),
      },
    }),
  };
}

/** What --state takes, as readJsonFile's `expected` (it says "pass" itself). */
const EXPECTED = 'the output of `kubectl get nodes,pods,daemonsets,controllerrevisions,events -A -o json` (a List), or a directory of such files';
const HINT = `pass ${EXPECTED}`;

/**
 * Reads `--state FILE|DIR`: one dump, or every `.json` file of a directory (a large cluster's dump split up), keeping
 * at most `maxKept` bytes of it (DEFAULT_MAX_KEPT; `--live-max-kept`).
 */
export function loadState(given: string, cwd: string, maxKept?: number): ClusterState {
  const builder = new StateBuilder(stateKeptLimit(maxKept));
  const files = isDirectory(given, cwd) ? jsonFilesIn(given, cwd) : [given];
  if (files.length === 0) throw new Error(`${given}: the directory holds no .json files; ${HINT}`);
  for (const file of files) builder.addDocument(readJsonFile(file, cwd, EXPECTED), file);
  return checkedState(builder.finish(given), given, HINT);
}

/** A state doctor can work on: at least one DaemonSet and one Node (`given` names where it came from). */
export function checkedState(state: ClusterState, given: string, hint: string): ClusterState {
  if (state.daemonSets.length === 0) throw new Error(`${given}: no DaemonSet in the dump; ${hint}`);
  if (state.nodes.length === 0) throw new Error(`${given}: no Node in the dump; ${hint}`);
  return state;
}
