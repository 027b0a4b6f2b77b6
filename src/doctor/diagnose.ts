import { ClusterState, DaemonSetState, PodEvent } from './state';
import { checkFit, describeShortfall } from '../capacity/fit';
import { displayName } from '../capacity/names';
import { PodRecord } from '../capacity/pods';
import { allocatableReader } from '../capacity/template';
import { analyzeCoverage, describeBlocker, placementExplainer } from '../coverage/analysis';
import { compare, isObject } from '../coverage/manifests';
import { nodeFacts, NodeFacts } from '../coverage/nodes';
import { paceOf, scaledValue } from '../estimate/estimate';
import { entryOf } from '../util/maps';

/** Why a node the DaemonSet should cover has no healthy pod of the current revision (the JSON `cause`). */
export type DoctorCause =
  | 'pending-resources' | 'pending-taint' | 'pending-host-port' | 'pending-affinity'
  | 'image-pull' | 'crash-loop' | 'config-error' | 'not-ready' | 'node-not-ready'
  | 'no-pod' | 'misscheduled' | 'old-revision' | 'terminating';

export const DOCTOR_CAUSES: readonly DoctorCause[] = ['pending-resources', 'pending-taint', 'pending-host-port', 'pending-affinity',
  'image-pull', 'crash-loop', 'config-error', 'not-ready', 'node-not-ready', 'no-pod', 'misscheduled', 'old-revision', 'terminating'];

export interface DoctorFinding {
  readonly cause: DoctorCause;
  /** error: the node has no working agent, or the rollout is blocked; warning: it waits its turn, or the model cannot tell */
  readonly severity: 'error' | 'warning';
  /** `namespace/name` */
  readonly daemonSet: string;
  readonly node: string;
  /** `namespace/name` of the pod concerned, when there is one */
  readonly pod?: string;
  readonly message: string;
  readonly fix: string;
}

export interface DaemonSetHealth {
  readonly daemonSet: string;
  readonly agent: string;
  /** from the DaemonSet's status (the controller's counts); our own count of the targeted nodes when the dump has none */
  readonly desired: number;
  readonly current: number;
  readonly updated: number;
  readonly ready: number;
  readonly available: number;
  readonly misscheduled: number;
  /** `maxUnavailable 1`, `maxSurge 10%`, `OnDelete` */
  readonly strategy: string;
  /** what the rollout waits on, one line ('nothing: complete' when every targeted node runs a ready current pod) */
  readonly waitsOn: string;
}

export interface DoctorReport {
  readonly daemonSets: readonly DaemonSetHealth[];
  readonly findings: readonly DoctorFinding[];
}

export interface DoctorOptions {
  /** only the DaemonSets of this agent (label app.kubernetes.io/name, else the DaemonSet name), waves included */
  readonly agent?: string;
}

const NO_PODS: readonly PodRecord[] = [];

const IMAGE_PULL = ['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'ErrImageNeverPull', 'RegistryUnavailable'];
const CONFIG = ['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError'];

const FIX: Record<DoctorCause, string> = {
  'pending-resources': 'lower the agent\'s requests, make room on the node (move workloads off, a larger instance type), or give the agent the system-node-critical priority class so the scheduler preempts lower-priority pods',
  'pending-taint': 'tolerate the taint in the DaemonSet\'s pod template, or remove the taint from the node',
  'pending-host-port': 'free the host port on the node (the pod holding it), or change the agent\'s host port',
  'pending-affinity': 'the pod\'s affinity, anti-affinity or nodeSelector rejects the node: with rollout waves, the other wave\'s pod leaves first; check the rules',
  'image-pull': 'check that the image and tag exist in the registry and that the pull secret (imagePullSecrets) is valid for it',
  'crash-loop': 'read the crashed container\'s log (kubectl logs --previous) and fix the configuration, or roll back',
  'config-error': 'create the missing Secret or ConfigMap (or key) in the pod\'s namespace, or fix the reference in the pod template',
  'not-ready': 'the readiness probe fails: check the probe\'s port and path and the agent\'s log',
  'node-not-ready': 'bring the node back (kubelet, network), or delete the Node object if the machine is gone: the agent cannot run there until the node is Ready',
  'no-pod': 'the DaemonSet controller created no pod there: read the DaemonSet\'s events (kubectl describe daemonset) and the controller manager\'s log',
  'misscheduled': 'the node no longer matches the DaemonSet (labels or taints changed): the controller deletes the pod, unless only a NoSchedule taint excludes the node',
  'old-revision': 'nothing while it waits its turn; when blocked, fix the nodes that hold the update budget (named above)',
  'terminating': 'the node is unreachable, so the pod cannot finish terminating: delete the Node object if the machine is gone (the pod goes with it), or force-delete the pod',
};

/** What every DaemonSet's diagnosis reads: the dump, the nodes by position (coverage.nodes, name order) and the models. */
interface Diagnosis {
  readonly state: ClusterState;
  readonly nodes: readonly NodeFacts[];
  readonly nodeIndex: ReadonlyMap<string, number>;
  readonly explain: ReturnType<typeof placementExplainer>;
  /** a node's allocatable is read only for a Pending pod's node (few), each distinct listing parsed once */
  readonly allocatableOf: ReturnType<typeof allocatableReader>;
}

type AddFinding = (cause: DoctorCause, node: string, pod: PodRecord | undefined, message: string, severity?: 'error' | 'warning') => void;

/**
 * Why each DaemonSet's rollout waits and why each node it should cover has no healthy pod of the current revision.
 * Which nodes a DaemonSet should cover comes from coverage's analyzeCoverage (the controller's
 * nodeShouldRunDaemonPod: one implementation with `coverage` and `plan`); resources and host ports of a Pending pod
 * from the capacity model (kube-scheduler's Fit and NodePorts filters, src/capacity/fit.ts); the rest from the pods'
 * status and the scheduler's and kubelet's events.
 */
export function diagnose(state: ClusterState, options: DoctorOptions = {}): DoctorReport {
  const selected = state.daemonSets.filter((d) => options.agent === undefined || d.info.agent === options.agent);
  const coverage = analyzeCoverage(selected.map((d) => d.info), nodeFacts(state.nodes));
  // Nodes by position in coverage.nodes (name order): one name-keyed map for the whole run,
  // per-DaemonSet tables are arrays by position (maps of 130k names per DaemonSet cost more than the diagnosis).
  const nodes = coverage.nodes;
  const run: Diagnosis = {
    state, nodes, nodeIndex: new Map(nodes.map((n, i) => [n.name, i])), explain: placementExplainer(coverage), allocatableOf: allocatableReader(),
  };
  const findings: DoctorFinding[] = [];
  const coverageOf = new Map(coverage.daemonSets.map((d) => [d.info.id, d]));
  const health = selected.map((ds): DaemonSetHealth => {
    const { covered, positions } = coverageOf.get(ds.info.id)!;
    const result = diagnoseDaemonSet(run, ds, covered.length, positions);
    findings.push(...result.findings);
    return result.health;
  });
  findings.sort((a, b) => compare(a.daemonSet, b.daemonSet) || compare(a.node, b.node)
    || DOCTOR_CAUSES.indexOf(a.cause) - DOCTOR_CAUSES.indexOf(b.cause));
  return { daemonSets: health, findings };
}

/** One DaemonSet: its pods by node, the targeted nodes, the nodes it no longer targets, the old revision's pods. */
function diagnoseDaemonSet(run: Diagnosis, ds: DaemonSetState, coveredCount: number, positions: readonly number[]):
{ findings: DoctorFinding[]; health: DaemonSetHealth } {
  const id = ds.info.id;
  const isCovered = new Uint8Array(run.nodes.length);
  for (const at of positions) isCovered[at] = 1;
  const { podsAt, elsewhere } = podsByNode(run, ds);
  const podsOn = (at: number): readonly PodRecord[] => {
    const held = podsAt[at];
    return held === undefined ? NO_PODS : Array.isArray(held) ? held : [held];
  };
  const dsFindings: DoctorFinding[] = [];
  const add: AddFinding = (cause, node, pod, message, severity = 'error') =>
    dsFindings.push({ cause, severity, daemonSet: id, node, pod: pod && `${pod.namespace}/${pod.name}`, message: `${displayName(node)}: ${message}`, fix: FIX[cause] });

  const walk = walkTargeted(run, ds, isCovered, podsOn, add, dsFindings);
  for (let at = 0; at < run.nodes.length; at++) {
    if (isCovered[at] === 0 && podsAt[at] !== undefined) untargeted(run, ds, run.nodes[at].name, at, podsOn(at), add);
  }
  for (const [node, pods] of elsewhere) untargeted(run, ds, node, undefined, pods, add);

  const pace = paceOf(ds.info.updateStrategy, coveredCount);
  oldRevisionFindings(pace, coveredCount, walk.oldReady, walk.holders, add);
  return { findings: dsFindings, health: healthOf(ds, pace, coveredCount, walk.counts, dsFindings) };
}

/**
 * The DaemonSet's pods by the position of the node they run on or, Pending, the node the controller made them
 * for (one pod, or a list when a node has several); pods for a node not in the dump by name.
 */
function podsByNode(run: Diagnosis, ds: DaemonSetState): { podsAt: (PodRecord | PodRecord[] | undefined)[]; elsewhere: Map<string, PodRecord[]> } {
  const podsAt: (PodRecord | PodRecord[] | undefined)[] = new Array(run.nodes.length);
  const elsewhere = new Map<string, PodRecord[]>();
  for (const pod of run.state.daemonSetPods.get(ds.info.id) ?? NO_PODS) {
    if (pod.terminal) continue;
    const node = pod.node ?? targetNode(pod);
    if (node === undefined) continue;
    const at = run.nodeIndex.get(node);
    if (at === undefined) {
      entryOf(elsewhere, node, () => []).push(pod);
      continue;
    }
    const held = podsAt[at];
    if (held === undefined) podsAt[at] = pod;
    else if (Array.isArray(held)) held.push(pod);
    else podsAt[at] = [held, pod];
  }
  return { podsAt, elsewhere };
}

function isCurrentOf(ds: DaemonSetState): (p: PodRecord) => boolean {
  return (p) => ds.currentHash === undefined || labelOf(p, 'controller-revision-hash') === ds.currentHash;
}

function healthy(p: PodRecord): boolean {
  return p.node !== undefined && !p.deleting && p.phase === 'Running' && podReady(p);
}

interface TargetedWalk {
  readonly counts: { readonly current: number; readonly updated: number; readonly ready: number };
  /** nodes whose pod is an old revision, ready: the rolling update's candidates */
  readonly oldReady: readonly { node: string; pod: PodRecord }[];
  /** the update budget's holders: unavailable pods on the nodes the DaemonSet targets (getUnavailableNumbers skips the others) */
  readonly holders: readonly string[];
}

/** One pass over the targeted nodes in order (large clusters: 130k nodes per DaemonSet): each one without a healthy current pod, and why. */
function walkTargeted(run: Diagnosis, ds: DaemonSetState, isCovered: Uint8Array, podsOn: (at: number) => readonly PodRecord[],
  add: AddFinding, dsFindings: readonly DoctorFinding[]): TargetedWalk {
  const isCurrent = isCurrentOf(ds);
  const oldReady: { node: string; pod: PodRecord }[] = [];
  const holders: string[] = [];
  let current = 0;
  let updated = 0;
  let ready = 0;
  for (let at = 0; at < run.nodes.length; at++) {
    if (isCovered[at] === 0) continue;
    const n = run.nodes[at];
    const pods = podsOn(at);
    if (pods.some((p) => p.node !== undefined)) current++;
    if (pods.some((p) => p.node !== undefined && isCurrent(p))) updated++;
    if (pods.some((p) => healthy(p))) ready++;
    if (pods.some((p) => isCurrent(p) && healthy(p))) continue;
    const before = dsFindings.length;
    const pod = pods.find((p) => isCurrent(p) && !p.deleting) ?? pods.find((p) => !p.deleting) ?? pods[0];
    if (targetedNodeFinding(run, ds, n, pod, add)) oldReady.push({ node: n.name, pod: pod! });
    for (const f of dsFindings.slice(before)) holders.push(`${displayName(f.node)} (${f.cause})`);
  }
  return { counts: { current, updated, ready }, oldReady, holders };
}

/** Why a targeted node has no healthy current pod; true when its pod is a ready one of an old revision (no finding yet). */
function targetedNodeFinding(run: Diagnosis, ds: DaemonSetState, n: NodeFacts, pod: PodRecord | undefined, add: AddFinding): boolean {
  const node = n.name;
  const nodeDown = n.notReady || n.unreachable;
  if (pod !== undefined && pod.deleting) {
    add('terminating', node, pod, `pod ${podName(pod)} has been terminating since ${deletedAt(pod)}${nodeDown ? ` on a node that is ${n.unreachable ? 'unreachable' : 'NotReady'}: the kubelet never confirms` : ''}`);
  } else if (nodeDown) {
    add('node-not-ready', node, pod, `the node is ${n.unreachable ? 'unreachable (Ready=Unknown)' : 'NotReady'}${pod ? `; pod ${podName(pod)} is not Ready there` : '; no pod there'}`);
  } else if (pod === undefined) {
    add('no-pod', node, undefined, `the DaemonSet targets the node (nodeSelector, affinity and taints match) but has no pod there${ds.object.status === undefined ? '' : ` (status: desired ${num(ds.object, 'desiredNumberScheduled')}, current ${num(ds.object, 'currentNumberScheduled')})`}`);
  } else if (pod.node === undefined) {
    pending(run, ds, pod, node, add, true);
  } else {
    const events = run.state.events.get(`${pod.namespace}/${pod.name}`) ?? [];
    const problem = containerProblem(pod, events);
    if (problem !== undefined) add(problem.cause, node, pod, problem.message);
    else if (!healthy(pod)) add('not-ready', node, pod, notReadyText(pod, events));
    else return true;
  }
  return false;
}

/** Pods on a node the DaemonSet does not target: Pending ones wait for a taint or label to change, running ones are misscheduled. */
function untargeted(run: Diagnosis, ds: DaemonSetState, node: string, at: number | undefined, pods: readonly PodRecord[], add: AddFinding): void {
  const id = ds.info.id;
  const n = at === undefined ? undefined : run.nodes[at];
  const blockers = () => run.explain(ds.info.agent, at!).find((p) => p.daemonSet === id)?.blockers.map(describeBlocker).join(', ');
  for (const pod of pods) {
    if (pod.node === undefined && n !== undefined) {
      pending(run, ds, pod, node, add, false, blockers());
    } else if (pod.node !== undefined && n !== undefined && (n.notReady || n.unreachable)) {
      // the node's not-ready / unreachable NoSchedule taint takes it out of the controller's targets (its pod
      // counts as misscheduled there and is kept: shouldContinueRunning); what the operator needs is the node's state
      const down = n.unreachable ? 'unreachable (Ready=Unknown)' : 'NotReady';
      if (pod.deleting) add('terminating', node, pod, `pod ${podName(pod)} has been terminating since ${deletedAt(pod)} on a node that is ${down}: the kubelet never confirms`);
      else add('node-not-ready', node, pod, `the node is ${down}; pod ${podName(pod)} is not Ready there (the controller no longer counts the node in its rollout)`);
    } else if (pod.node !== undefined) {
      add('misscheduled', node, pod, `pod ${podName(pod)} runs on a node the DaemonSet no longer targets${n === undefined ? ' (the node is not in the dump)' : `: ${blockers() ?? 'no longer selected'}`}`);
    }
  }
}

/** The old revision's ready pods: OnDelete waits for a deletion; a rolling update is blocked when the holders fill its budget. */
function oldRevisionFindings(pace: ReturnType<typeof paceOf>, coveredCount: number, oldReady: TargetedWalk['oldReady'],
  holders: readonly string[], add: AddFinding): void {
  if (oldReady.length === 0) return;
  const budget = pace.type === 'OnDelete' ? 0 : pace.mode === 'surge' ? scaledValue(pace.maxSurge, coveredCount, 'maxSurge') : pace.batch;
  for (const { node, pod } of oldReady) {
    if (pace.type === 'OnDelete') {
      add('old-revision', node, pod, `pod ${podName(pod)} runs an old revision; updateStrategy OnDelete replaces it only when it is deleted`);
    } else if (holders.length >= budget) {
      add('old-revision', node, pod, `pod ${podName(pod)} runs an old revision and the rollout is blocked: the update budget (${paceText(pace)}) is held by ${list(holders)}`);
    } else {
      add('old-revision', node, pod, `pod ${podName(pod)} runs an old revision, waiting for its turn (${paceText(pace)})`, 'warning');
    }
  }
}

/** The DaemonSet's counts (its status's, else ours) and what its rollout waits on, one line. */
function healthOf(ds: DaemonSetState, pace: ReturnType<typeof paceOf>, coveredCount: number, counts: TargetedWalk['counts'],
  dsFindings: readonly DoctorFinding[]): DaemonSetHealth {
  const status = isObject(ds.object.status) ? ds.object.status : undefined;
  const counted = (field: string, fallback: number) => (status !== undefined && typeof status[field] === 'number' ? status[field] as number : fallback);
  const causes = new Map<string, number>();
  for (const f of dsFindings) causes.set(f.cause, (causes.get(f.cause) ?? 0) + 1);
  const waitsOn = dsFindings.length === 0 ? 'nothing: every targeted node runs a ready pod of the current revision'
    : `${[...causes.entries()].sort(([a], [b]) => DOCTOR_CAUSES.indexOf(a as DoctorCause) - DOCTOR_CAUSES.indexOf(b as DoctorCause))
      .map(([c, k]) => `${k} ${c}`).join(', ')}${ds.currentHash === undefined ? ' (no ControllerRevision in the dump: revisions not compared)' : ''}`;
  return {
    daemonSet: ds.info.id,
    agent: ds.info.agent,
    desired: counted('desiredNumberScheduled', coveredCount),
    current: counted('currentNumberScheduled', counts.current),
    updated: counted('updatedNumberScheduled', counts.updated),
    ready: counted('numberReady', counts.ready),
    available: counted('numberAvailable', counts.ready),
    misscheduled: counted('numberMisscheduled', dsFindings.filter((f) => f.cause === 'misscheduled').length),
    strategy: paceText(pace),
    waitsOn,
  };
}

/** A Pending pod (not bound): the same Fit / NodePorts / taint semantics as coverage and plan, then the scheduler's events. */
function pending(run: Diagnosis, ds: DaemonSetState, pod: PodRecord, node: string, add: AddFinding, targeted: boolean, blockers?: string): void {
  const events = run.state.events.get(`${pod.namespace}/${pod.name}`) ?? [];
  const said = schedulerWords(pod, events);
  const quoted = said === undefined ? '' : `; the scheduler: "${said}"`;
  if (!targeted) {
    const taint = blockers !== undefined && /taint/.test(blockers);
    add(taint ? 'pending-taint' : 'pending-affinity', node, pod, `pod ${podName(pod)} is Pending: ${blockers ?? 'the node no longer matches'}${quoted}`);
    return;
  }
  const at = run.nodeIndex.get(node);
  const alloc = at === undefined ? undefined : run.allocatableOf(run.nodes[at]);
  const others = run.state.pods.on(node).filter((p) => p.owner !== ds.info.id);
  if (alloc !== undefined) {
    const fit = checkFit(pod.requests, pod.hostPorts, alloc, others);
    if (fit.portConflicts.length > 0) {
      const { pod: holder, port } = fit.portConflicts[0];
      add('pending-host-port', node, pod, `pod ${podName(pod)} is Pending: host port ${port.protocol}/${port.port} is held by ${podName(holder)}${quoted}`);
      return;
    }
    if (fit.insufficient.length > 0) {
      add('pending-resources', node, pod, `pod ${podName(pod)} is Pending: ${fit.insufficient.map(describeShortfall).join(', ')}${quoted}`);
      return;
    }
  }
  const text = said ?? '';
  if (/Insufficient|Too many pods/.test(text)) {add('pending-resources', node, pod, `pod ${podName(pod)} is Pending${quoted}`);} else if (/free ports/.test(text)) {add('pending-host-port', node, pod, `pod ${podName(pod)} is Pending${quoted}`);} else if (/taint/.test(text)) {add('pending-taint', node, pod, `pod ${podName(pod)} is Pending${quoted}`);} else if (/affinity|selector/.test(text)) {add('pending-affinity', node, pod, `pod ${podName(pod)} is Pending${quoted}`);} else {
    add('pending-resources', node, pod, `pod ${podName(pod)} is Pending and the reason cannot be told: the node has room by the requests counted, and the dump holds no FailedScheduling event${quoted}`, 'warning');
  }
}

/** The node a DaemonSet pod was made for: the controller pins it with a matchFields metadata.name requirement. */
export function targetNode(pod: PodRecord): string | undefined {
  const terms = pod.object?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (!Array.isArray(terms)) return undefined;
  for (const term of terms) {
    for (const field of isObject(term) && Array.isArray(term.matchFields) ? term.matchFields : []) {
      if (isObject(field) && field.key === 'metadata.name' && field.operator === 'In' && Array.isArray(field.values) && typeof field.values[0] === 'string') return field.values[0];
    }
  }
  return undefined;
}

function labelOf(pod: PodRecord, key: string): string | undefined {
  const labels = pod.object?.metadata?.labels;
  return isObject(labels) && typeof labels[key] === 'string' ? labels[key] : undefined;
}

function podReady(pod: PodRecord): boolean {
  const conditions = pod.object?.status?.conditions;
  return Array.isArray(conditions) && conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

function podName(pod: PodRecord): string {
  return `${displayName(pod.namespace)}/${displayName(pod.name)}`;
}

function deletedAt(pod: PodRecord): string {
  const at = pod.object?.metadata?.deletionTimestamp;
  return typeof at === 'string' && /^[0-9TZ:.+-]{1,40}$/.test(at) ? at : 'an unknown time';
}

function num(object: Record<string, any>, field: string): string {
  const value = object.status?.[field];
  return typeof value === 'number' ? String(value) : '?';
}

/** The scheduler's last word on a Pending pod: a FailedScheduling event, else the PodScheduled condition's message. */
function schedulerWords(pod: PodRecord, events: readonly PodEvent[]): string | undefined {
  const event = events.find((e) => e.reason === 'FailedScheduling');
  if (event !== undefined) return event.message;
  const conditions = pod.object?.status?.conditions;
  const scheduled = Array.isArray(conditions) ? conditions.find((c) => isObject(c) && c.type === 'PodScheduled' && c.status === 'False') : undefined;
  return typeof scheduled?.message === 'string' ? scheduled.message.slice(0, 500) : undefined;
}

/** A container that cannot start or keeps crashing, from the pod's container statuses and the kubelet's events. */
function containerProblem(pod: PodRecord, events: readonly PodEvent[]): { cause: DoctorCause; message: string } | undefined {
  const status = pod.object?.status ?? {};
  const statuses = [
    ...(Array.isArray(status.initContainerStatuses) ? status.initContainerStatuses.map((s: unknown) => ['init container', s] as const) : []),
    ...(Array.isArray(status.containerStatuses) ? status.containerStatuses.map((s: unknown) => ['container', s] as const) : []),
  ];
  for (const [what, s] of statuses) {
    if (!isObject(s)) continue;
    const name = typeof s.name === 'string' ? displayName(s.name) : '?';
    const waiting = isObject(s.state) && isObject(s.state.waiting) ? s.state.waiting : undefined;
    const reason = typeof waiting?.reason === 'string' ? waiting.reason : '';
    const said = typeof waiting?.message === 'string' && waiting.message !== '' ? `: "${waiting.message.slice(0, 300)}"` : '';
    if (IMAGE_PULL.includes(reason)) {
      const image = typeof s.image === 'string' ? s.image.slice(0, 300) : '?';
      const kubelet = events.find((e) => e.reason === 'Failed' && /image/i.test(e.message));
      return { cause: 'image-pull', message: `pod ${podName(pod)}, ${what} ${name}: ${reason} for image ${image}${said}${kubelet && !said ? `: "${kubelet.message}"` : ''}` };
    }
    if (CONFIG.includes(reason)) {
      return { cause: 'config-error', message: `pod ${podName(pod)}, ${what} ${name}: ${reason}${said}` };
    }
    const last = isObject(s.lastState) && isObject(s.lastState.terminated) ? s.lastState.terminated : undefined;
    if (reason === 'CrashLoopBackOff' || (last !== undefined && typeof s.restartCount === 'number' && s.restartCount > 0 && s.ready !== true)) {
      const exit = last === undefined ? 'no last termination recorded'
        : `last terminated: ${typeof last.reason === 'string' ? last.reason.slice(0, 100) : 'unknown reason'}, exit code ${typeof last.exitCode === 'number' ? last.exitCode : '?'}`;
      return { cause: 'crash-loop', message: `pod ${podName(pod)}, ${what} ${name}: CrashLoopBackOff, ${typeof s.restartCount === 'number' ? s.restartCount : '?'} restarts; ${exit}` };
    }
  }
  const mount = events.find((e) => e.reason === 'FailedMount' && /not found|couldn't find key/.test(e.message));
  if (mount !== undefined) return { cause: 'config-error', message: `pod ${podName(pod)} cannot mount a volume: "${mount.message}"` };
  return undefined;
}

function notReadyText(pod: PodRecord, events: readonly PodEvent[]): string {
  const probe = events.find((e) => e.reason === 'Unhealthy');
  return `pod ${podName(pod)} is ${pod.phase} but not Ready${probe === undefined ? '' : `; the kubelet: "${probe.message}"`}`;
}

function paceText(pace: ReturnType<typeof paceOf>): string {
  if (pace.type === 'OnDelete') return 'OnDelete';
  return pace.mode === 'surge' ? `maxSurge ${pace.maxSurge}` : `maxUnavailable ${pace.maxUnavailable}`;
}

function list(items: readonly string[]): string {
  return items.length <= 5 ? items.join(', ') : `${items.slice(0, 5).join(', ')}, … ${items.length - 5} more`;
}

/** The fix doctor gives for a cause, in its own words: the rollout watchers print the same (doctor/watch-script.ts). */
export function fixFor(cause: DoctorCause): string {
  return FIX[cause];
}
