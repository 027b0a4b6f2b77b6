import { PodRecord } from './pods';
import { formatAmount, ResourceList, scheduledResource } from './resources';
import { hostPortsOverlap } from '../coverage/analysis';
import { HostPort } from '../coverage/manifests';

/** One resource the pod does not fit on (kube-scheduler's noderesources.InsufficientResource). */
export interface InsufficientResource {
  /** `pods`, `cpu`, `memory`, `ephemeral-storage`, an extended resource such as `nvidia.com/gpu` */
  readonly resource: string;
  /** what the pod asks for (1 for `pods`) */
  readonly requested: number;
  /** what the pods counted on the node request already */
  readonly used: number;
  /** the node's allocatable */
  readonly capacity: number;
}

/** A node as the Fit and NodePorts filters see it: allocatable and the pods counted there. */
export interface NodeCapacity {
  readonly allocatable: ResourceList;
  readonly pods: readonly PodRecord[];
}

/** Requests of a set of pods, summed (NodeInfo.Requested). */
export function sumRequests(pods: readonly PodRecord[]): ResourceList {
  return sumRequestsOf(pods, () => true).requests;
}

/** sumRequests of the pods `counts` selects, and how many: without an array of them. */
export function sumRequestsOf(pods: readonly PodRecord[], counts: (pod: PodRecord) => boolean): { requests: ResourceList; count: number } {
  const total: ResourceList = {};
  let count = 0;
  // for...in, not Object.entries: no array per pod (millions of pods at 130k nodes); a ResourceList is a plain object
  for (const pod of pods) {
    if (!counts(pod)) continue;
    count++;
    const requests = pod.requests;
    for (const name in requests) total[name] = (total[name] ?? 0) + requests[name];
  }
  return { requests: total, count };
}

/**
 * kube-scheduler's noderesources fitsRequest (pkg/scheduler/framework/plugins/noderesources/fit.go), in its order:
 * - pod count first: len(NodeInfo.Pods)+1 > allocatable pods is "Too many pods" (a node without `pods` in its
 *   allocatable is not checked for it: an inventory written by hand, not a kubelet's report);
 * - a pod requesting nothing at all fits (only the pod count applies);
 * - each of cpu, memory, ephemeral-storage and scalar (extended, hugepages) resources the pod requests (> 0) must be
 *   at most allocatable - requested; a resource the node does not offer has allocatable 0.
 */
export function fitsRequest(request: ResourceList, allocatable: ResourceList, used: ResourceList, podCount: number): InsufficientResource[] {
  const result: InsufficientResource[] = [];
  const allowed = allocatable.pods;
  if (allowed !== undefined && podCount + 1 > allowed) {
    result.push({ resource: 'pods', requested: 1, used: podCount, capacity: allowed });
  }
  const names = Object.keys(request).filter((name) => scheduledResource(name) && request[name] > 0).sort(resourceOrder);
  for (const name of names) {
    const capacity = allocatable[name] ?? 0;
    const usedNow = used[name] ?? 0;
    if (request[name] > capacity - usedNow) result.push({ resource: name, requested: request[name], used: usedNow, capacity });
  }
  return result;
}

/** cpu, memory, ephemeral-storage, then the others by name: the order fit.go reports them in. */
function resourceOrder(a: string, b: string): number {
  const rank = (n: string) => {
    const i = ['cpu', 'memory', 'ephemeral-storage'].indexOf(n);
    return i < 0 ? 3 : i;
  };
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The pods holding a host port the new pod binds (the NodePorts filter, same overlap rule as coverage). */
export function portHolders(ports: readonly HostPort[], pods: readonly PodRecord[]): { pod: PodRecord; port: HostPort }[] {
  const result: { pod: PodRecord; port: HostPort }[] = [];
  if (ports.length === 0) return result;
  for (const pod of pods) {
    for (const held of pod.hostPorts) {
      const port = ports.find((p) => hostPortsOverlap(p, held));
      if (port !== undefined) {
        result.push({ pod, port });
        break;
      }
    }
  }
  return result;
}

export interface FitResult {
  readonly insufficient: readonly InsufficientResource[];
  /** other pods holding a host port the new pod binds */
  readonly portConflicts: readonly { pod: PodRecord; port: HostPort }[];
}

export function fits(result: FitResult): boolean {
  return result.insufficient.length === 0 && result.portConflicts.length === 0;
}

/** Resources and host ports of one new pod against the pods counted on a node. */
export function checkFit(request: ResourceList, ports: readonly HostPort[], allocatable: ResourceList, pods: readonly PodRecord[]): FitResult {
  return { insufficient: fitsRequest(request, allocatable, sumRequests(pods), pods.length), portConflicts: portHolders(ports, pods) };
}

/**
 * The pods the default scheduler evicts to place a pod of priority `priority` on a node it does not fit on,
 * or undefined when even evicting every lower-priority pod does not make room. Follows
 * defaultpreemption's SelectVictimsOnNode (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go):
 * 1. every pod of strictly lower priority is a potential victim; all are removed, and if the pod still does
 *    not fit (resources and host ports), the node is no candidate;
 * 2. the potential victims are sorted most important first (util.MoreImportantPod: higher priority, then
 *    the earlier start time) and each is added back ("reprieved") when the pod still fits with it.
 * Simplified: PodDisruptionBudgets are not read (upstream reprieves PDB-violating victims first, so its choice
 * may differ when PDBs cover the node's pods), nor are nominated pods or inter-pod affinity to the victims.
 */
export function selectVictims(request: ResourceList, ports: readonly HostPort[], priority: number, allocatable: ResourceList,
  pods: readonly PodRecord[]): PodRecord[] | undefined {
  const kept = pods.filter((p) => p.priority >= priority);
  const potential = pods.filter((p) => p.priority < priority);
  if (potential.length === 0 || !fits(checkFit(request, ports, allocatable, kept))) return undefined;
  potential.sort(moreImportantFirst);
  const victims: PodRecord[] = [];
  for (const pod of potential) {
    kept.push(pod);
    if (!fits(checkFit(request, ports, allocatable, kept))) {
      kept.pop();
      victims.push(pod);
    }
  }
  return victims;
}

/**
 * util.MoreImportantPod (pkg/scheduler/util/utils.go): higher priority first; equal priority, the pod started
 * earlier first, where a pod without status.startTime starts "now" (GetPodStartTime), so after every started
 * pod. Two unstarted pods of one priority keep their order (upstream compares two readings of the clock).
 */
function moreImportantFirst(a: PodRecord, b: PodRecord): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.startTime === undefined || b.startTime === undefined) {
    return a.startTime === b.startTime ? 0 : a.startTime === undefined ? 1 : -1;
  }
  return a.startTime < b.startTime ? -1 : a.startTime > b.startTime ? 1 : 0;
}

/** `memory: needs 512Mi, 300Mi free of 8Gi allocatable (short 212Mi)` */
export function describeShortfall(r: InsufficientResource): string {
  if (r.resource === 'pods') return `pods: ${r.used} of ${r.capacity} allowed already run`;
  const free = r.capacity - r.used;
  return `${r.resource}: needs ${formatAmount(r.resource, r.requested)}, ${formatAmount(r.resource, Math.max(0, free))} free of `
    + `${formatAmount(r.resource, r.capacity)} allocatable (short ${formatAmount(r.resource, r.requested - free)})`;
}
