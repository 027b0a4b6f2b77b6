import * as v8 from 'v8';
import { ENTRY, HeapEstimate, SLOT, stringBytes } from '../../util/heap-estimate';
import { formatBytes } from '../../util/quantity';
import type { PodEvent } from '../capacity/pods';
import { PodRecord } from '../capacity/pods';

/**
 * The most bytes doctor keeps of what it reads by default, on a machine whose Node heap allows it (`--live-max-kept`),
 * as HeapEstimate counts them on the slimmed objects as they are kept: the nodes (slimNode), a record of each pod
 * (podRecord, with keptOf of a DaemonSet's), the newest events of each pod, the DaemonSets. Sized on the doctor
 * bench's 130,000-node cluster (30 pods a node, two of them DaemonSet pods): estimated at 512 bytes a node, 1,184 a
 * DaemonSet pod (its labels, affinity and status kept), 243 a workload pod's record and 479 an event (measured 515,
 * 1,240, 233 and 485), its state at 1.19 GiB (1.03 measured), 1.65 GiB with the 1M events a real cluster's hour of
 * event TTL may keep: 3 GiB leaves about twice that room.
 */
export const MAX_KEPT_CAP = 3 * 2 ** 30;

/**
 * The heap the default leaves beside what doctor keeps, for the page, read or file being parsed: its text and the
 * objects JSON.parse makes of it take 2.66 times its bytes at the peak (measured on Node 20: a 57 MiB page of 2,000
 * nodes with 450 labels each took 95 MiB of objects besides its text), so a page of up to 385 MiB of that shape
 * fits; a real page of 500 objects takes a few MiB to some tens.
 */
export const PARSE_RESERVE = 2 ** 30;

/** The least default: a heap smaller than the reserve and this cannot read a real cluster in any case. */
export const MIN_DEFAULT_KEPT = 256 * 2 ** 20;

/**
 * The default of `--live-max-kept`: MAX_KEPT_CAP, or the heap this Node process may use (v8 heap_size_limit: by
 * default a quarter of the machine's memory, at most about 4 GiB; `--max-old-space-size` sets it) less
 * PARSE_RESERVE when that is less (at least MIN_DEFAULT_KEPT), in whole MiB. A server sending nodes with hundreds of
 * labels is then stopped with doctor's exit 2 naming the limit rather than by Node running out of heap, on a 7 GB
 * CI runner (some 768 MiB kept) as on a large machine (3 GiB).
 */
export function defaultMaxKept(heapLimit: number = v8.getHeapStatistics().heap_size_limit): number {
  const room = Math.floor((heapLimit - PARSE_RESERVE) / 2 ** 20) * 2 ** 20;
  return Math.min(MAX_KEPT_CAP, Math.max(MIN_DEFAULT_KEPT, room));
}

/** defaultMaxKept() for this process. */
export const DEFAULT_MAX_KEPT = defaultMaxKept();

/** A bound on what a StateBuilder keeps: the most bytes (HeapEstimate), and the error once they are passed. */
export interface KeptLimit {
  readonly bytes: number;
  /** the error when what is kept passes `bytes` at `where` (the object that passed it) */
  readonly exceeded: (where: string) => Error;
}

/** The limit of a dump (`--state`): past it, an error naming the limit, its value and its flag. */
export function stateKeptLimit(bytes: number = DEFAULT_MAX_KEPT): KeptLimit {
  return { bytes, exceeded: (where) => keptExceeded(where, bytes, 'the limit of what doctor keeps') };
}

/** The error past the limit of what doctor keeps, worded as the live read's others (`whose`: the live read's, the dump's). */
export function keptExceeded(where: string, given: number, whose: string): Error {
  return new Error(`${where}: what doctor keeps of the objects read is estimated at more than ${formatBytes(given)}, ${whose} `
    + `(--live-max-kept${given === DEFAULT_MAX_KEPT ? ', the default' : ''}); raise it with --live-max-kept (default ${formatBytes(DEFAULT_MAX_KEPT)}) `
    + 'on a machine with the memory for it');
}

/**
 * What one pod's record keeps: its own fields, the values the index's interner shares (namespace, node, phase,
 * owner, request list) and the shared empty port list once, its slot in the index's lists (by node, by owner), and
 * the list of its node when it is the first pod there (`newList`: a server may put each pod on a node of its own).
 */
export function podBytes(estimate: HeapEstimate, pod: PodRecord, newList: boolean): number {
  const { namespace, node, phase, owner, requests, hostPorts } = pod;
  return estimate.of({ ...pod, namespace: 0, node: 0, phase: 0, owner: 0, requests: 0, hostPorts: 0 })
    + estimate.name(namespace) + estimate.name(node ?? '') + estimate.name(phase) + estimate.name(owner ?? '')
    + estimate.once(requests) + estimate.once(hostPorts) + 2 * SLOT + (newList ? LIST : 0);
}

/** A map's entry holding a new list that grew once (room for 17: V8 grows a backing store to 1.5 times and 16 more). */
const LIST = ENTRY + 32 + 16 + 17 * SLOT;

/** What one event kept of a pod holds (its slot in the pod's list is counted with the list); the same again when it is dropped. */
export function eventBytes(estimate: HeapEstimate, event: PodEvent): number {
  return estimate.of(event);
}

/** A map's entry of `key` (built, not parsed: a string of its own) holding a new list of events (LIST: room for more than are kept). */
export function listEntryBytes(key: string): number {
  return LIST + stringBytes(key);
}
