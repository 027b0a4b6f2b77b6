import { DoctorFinding } from './finding';
import { readinessTaintDoctorFindings } from './readiness-taints';
import { ClusterState, DaemonSetState } from './state';
import { paceOf, scaledValue } from '../../rollout/pace';
import { DOCTOR_CAUSES, DoctorCause, fixFor } from '../../rollout/stuck-causes';
import { entryOf } from '../../util/maps';
import { checkFit, describeShortfall } from '../capacity/fit';
import { displayName } from '../capacity/names';
import { PodEvent, PodRecord } from '../capacity/pods';
import { allocatableReader } from '../capacity/template';
import { analyzeCoverage, describeBlocker, placementExplainer } from '../coverage/analysis';
import { compare, isObject } from '../coverage/manifests';
import { nodeFacts, NodeFacts } from '../coverage/nodes';
import { BUILT_IN_PRIORITY_CLASSES } from '../coverage/priority';


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
  /**
   * The time the dump was taken (RFC 3339), against which a terminating pod's deadline is judged (`--now`).
   * @default the dump's newest timestamp (ClusterState.observedAt), never the wall clock
   */
  readonly now?: string;
}

const NO_PODS: readonly PodRecord[] = [];

/** The kubelet's image reasons (kubernetes pkg/kubelet/images/types.go), SignatureValidationFailed included. */
const IMAGE_PULL = ['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'ErrImageNeverPull', 'RegistryUnavailable', 'ImageInspectError', 'SignatureValidationFailed'];
/** The container's configuration cannot be built: a missing Secret, ConfigMap or key, runAsNonRoot (kuberuntime ErrCreateContainerConfig). */
const CONFIG = ['CreateContainerConfigError'];
/**
 * The runtime could not create or start the container, or a hook failed: a command or entrypoint missing from the
 * image, a seccomp or AppArmor profile absent on the node, a mount the runtime refuses (kuberuntime ErrCreateContainer,
 * ErrPreCreateHook, ErrPreStartHook, ErrPostStartHook; pkg/kubelet/container/sync_result.go ErrRunContainer,
 * ErrRunInitContainer, ErrVerifyNonRoot, ErrCreatePodSandbox, ErrConfigPodSandbox).
 */
const START = ['CreateContainerError', 'RunContainerError', 'PreCreateHookError', 'PreStartHookError', 'PostStartHookError',
  'RunInitContainerError', 'VerifyNonRootError', 'CreatePodSandboxError', 'ConfigPodSandboxError'];


/** What every DaemonSet's diagnosis reads: the dump, the nodes by position (coverage.nodes, name order) and the models. */
interface Diagnosis {
  readonly state: ClusterState;
  readonly nodes: readonly NodeFacts[];
  readonly nodeIndex: ReadonlyMap<string, number>;
  readonly explain: ReturnType<typeof placementExplainer>;
  /** a node's allocatable is read only for a Pending pod's node (few), each distinct listing parsed once */
  readonly allocatableOf: ReturnType<typeof allocatableReader>;
  /** the time a terminating pod's deadline is judged against, and where it comes from; undefined: the dump tells none */
  readonly now?: { readonly ms: number; readonly text: string; readonly basis: string };
}

type AddFinding = (cause: DoctorCause, node: string, pod: PodRecord | undefined, message: string, severity?: 'error' | 'warning', fix?: string) => void;

/**
 * Why each DaemonSet's rollout waits and why each node it should cover has no healthy pod of the current revision.
 * Which nodes a DaemonSet should cover comes from coverage's analyzeCoverage (the controller's
 * nodeShouldRunDaemonPod: one implementation with `coverage` and `plan`); resources and host ports of a Pending pod
 * from the capacity model (kube-scheduler's Fit and NodePorts filters, src/cli/capacity/fit.ts); the rest from the pods'
 * status and the scheduler's and kubelet's events.
 */
export function diagnose(state: ClusterState, options: DoctorOptions = {}): DoctorReport {
  const selected = state.daemonSets.filter((d) => options.agent === undefined || d.info.agent === options.agent);
  const coverage = analyzeCoverage(selected.map((d) => d.info), nodeFacts(state.nodes));
  // Nodes by position in coverage.nodes (name order): one name-keyed map for the whole run,
  // per-DaemonSet tables are arrays by position (maps of 130k names per DaemonSet cost more than the diagnosis).
  const nodes = coverage.nodes;
  const run: Diagnosis = {
    state,
    nodes,
    nodeIndex: new Map(nodes.map((n, i) => [n.name, i])),
    explain: placementExplainer(coverage),
    allocatableOf: allocatableReader(),
    now: nowOf(state, options.now),
  };
  const findings: DoctorFinding[] = [];
  const coverageOf = new Map(coverage.daemonSets.map((d) => [d.info.id, d]));
  const health = selected.map((ds): DaemonSetHealth => {
    const { covered, positions } = coverageOf.get(ds.info.id)!;
    const result = diagnoseDaemonSet(run, ds, covered.length, positions);
    findings.push(...result.findings);
    return result.health;
  });
  // a node still carrying an agent's readiness taint, and the pod that should remove it (src/cli/doctor/readiness-taints.ts)
  findings.push(...readinessTaintDoctorFindings(state, options.agent));
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
  const add: AddFinding = (cause, node, pod, message, severity = 'error', fix = fixFor(cause)) =>
    dsFindings.push({ cause, severity, daemonSet: id, node, pod: pod && `${pod.namespace}/${pod.name}`, message: `${displayName(node)}: ${message}`, fix });

  const pace = paceOf(ds.info.updateStrategy, coveredCount);
  const walk = walkTargeted(run, ds, isCovered, podsOn, add);
  for (let at = 0; at < run.nodes.length; at++) {
    if (isCovered[at] === 0 && podsAt[at] !== undefined) untargeted(run, ds, pace, run.nodes[at].name, at, podsOn(at), add);
  }
  for (const [node, pods] of elsewhere) untargeted(run, ds, pace, node, undefined, pods, add);

  // every node with a pod of the DaemonSet, in name order, then those not in the dump: rollingUpdate's nodeToDaemonPods
  const withPods = function* (): Generator<[string, readonly PodRecord[]]> {
    for (let at = 0; at < run.nodes.length; at++) if (podsAt[at] !== undefined) yield [run.nodes[at].name, podsOn(at)];
    yield* elsewhere;
  };
  const causeAt = new Map<string, DoctorCause>();
  for (const f of dsFindings) if (!causeAt.has(f.node)) causeAt.set(f.node, f.cause);
  const holders = pace.type === 'OnDelete' ? [] : budgetHolders(isCurrentOf(ds), pace.mode === 'surge', withPods(), causeAt);
  oldRevisionFindings(pace, coveredCount, walk.oldReady, holders, add);
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
}

/** One pass over the targeted nodes in order (large clusters: 130k nodes per DaemonSet): each one without a healthy current pod, and why. */
function walkTargeted(run: Diagnosis, ds: DaemonSetState, isCovered: Uint8Array, podsOn: (at: number) => readonly PodRecord[],
  add: AddFinding): TargetedWalk {
  const isCurrent = isCurrentOf(ds);
  const oldReady: { node: string; pod: PodRecord }[] = [];
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
    const pod = pods.find((p) => isCurrent(p) && !p.deleting) ?? pods.find((p) => !p.deleting) ?? pods[0];
    if (targetedNodeFinding(run, ds, n, pod, add)) oldReady.push({ node: n.name, pod: pod! });
  }
  return { counts: { current, updated, ready }, oldReady };
}

/** Why a targeted node has no healthy current pod; true when its pod is a ready one of an old revision (no finding yet). */
function targetedNodeFinding(run: Diagnosis, ds: DaemonSetState, n: NodeFacts, pod: PodRecord | undefined, add: AddFinding): boolean {
  const node = n.name;
  const nodeDown = n.notReady || n.unreachable;
  if (pod !== undefined && pod.deleting) {
    terminatingFinding(run, n, pod, add);
  } else if (nodeDown) {
    add('node-not-ready', node, pod, `the node is ${n.unreachable ? 'unreachable (Ready=Unknown)' : 'NotReady'}${pod ? `; pod ${podName(pod)} is not Ready there` : '; no pod there'}`);
  } else if (pod === undefined) {
    add('no-pod', node, undefined, `the DaemonSet targets the node (nodeSelector, affinity and taints match) but has no pod there${ds.object.status === undefined ? '' : ` (status: desired ${num(ds.object, 'desiredNumberScheduled')}, current ${num(ds.object, 'currentNumberScheduled')})`}`);
  } else if (pod.node === undefined) {
    pending(run, ds, pod, node, add, true);
  } else {
    const events = run.state.events.get(`${pod.namespace}/${pod.name}`) ?? [];
    const problem = containerProblem(pod, events);
    if (problem !== undefined) add(problem.cause, node, pod, problem.message, 'error', problem.fix);
    else if (!healthy(pod)) add('not-ready', node, pod, notReadyText(pod, events));
    else return true;
  }
  return false;
}

/** Pods on a node the DaemonSet does not target: Pending ones wait for a taint or label to change, running ones are misscheduled. */
function untargeted(run: Diagnosis, ds: DaemonSetState, pace: Pace, node: string, at: number | undefined, pods: readonly PodRecord[],
  add: AddFinding): void {
  const id = ds.info.id;
  const n = at === undefined ? undefined : run.nodes[at];
  const blockers = () => run.explain(ds.info.agent, at!).find((p) => p.daemonSet === id)?.blockers.map(describeBlocker).join(', ');
  for (const pod of pods) {
    if (pod.node === undefined && n !== undefined) {
      pending(run, ds, pod, node, add, false, blockers());
    } else if (pod.node !== undefined && n !== undefined && (n.notReady || n.unreachable)) {
      // the node's not-ready / unreachable NoSchedule taint takes it out of the controller's targets (its pod is kept:
      // shouldContinueRunning), but rollingUpdate walks every node with a pod of the DaemonSet: what the pod does to
      // the rollout is said with the node's state
      const down = n.unreachable ? 'unreachable (Ready=Unknown)' : 'NotReady';
      if (pod.deleting) terminatingFinding(run, n, pod, add);
      else add('node-not-ready', node, pod, `the node is ${down}; pod ${podName(pod)} is not Ready there; ${untargetedRole(pace, isCurrentOf(ds)(pod), n.unreachable)}`);
    } else if (pod.node !== undefined && n !== undefined && pod.deleting) {
      // the controller deleted its pod from a node it no longer targets: normal while the grace period lasts
      terminatingFinding(run, n, pod, add);
    } else if (pod.node !== undefined) {
      add('misscheduled', node, pod, `pod ${podName(pod)} runs on a node the DaemonSet no longer targets${n === undefined ? ' (the node is not in the dump)' : `: ${blockers() ?? 'no longer selected'}`}`);
    }
  }
}

type Pace = ReturnType<typeof paceOf>;

/**
 * The nodes holding the rolling update's budget, counted as kubernetes pkg/controller/daemon/update.go rollingUpdate
 * counts them, on every node with a pod of the DaemonSet (nodeToDaemonPods), targeted or not. findUpdatedPodsOnNode
 * skips a pod being deleted. With maxSurge 0, numUnavailable counts a node with more than one old or new pod, with
 * only a terminating pod (`oldPod == nil && newPod == nil`), with an old and a new pod, with a new pod not available,
 * and with an old pod not available: that one is replaced at once, outside the budget (allowedReplacementPods), and
 * since kubernetes#123233 (1.31; 1.28-1.30 patch releases) counted in that same sync. With maxSurge, numSurge counts
 * a node with more than one pod of a kind, or an old pod beside a new one not available; a node with only a new pod
 * holds no surge unit (`case oldPod == nil:`), whatever that pod does. `node (cause)`, the cause of the node's
 * finding when it has one.
 */
function budgetHolders(isCurrent: (p: PodRecord) => boolean, surge: boolean, withPods: Iterable<[string, readonly PodRecord[]]>,
  causeAt: ReadonlyMap<string, DoctorCause>): string[] {
  const holders: string[] = [];
  for (const [node, pods] of withPods) {
    // findUpdatedPodsOnNode: the pods not being deleted, at most one new and one old (else `ok` is false)
    let fresh: PodRecord | undefined;
    let old: PodRecord | undefined;
    let excess = false;
    for (const p of pods) {
      if (p.deleting) continue;
      if (isCurrent(p)) {
        excess ||= fresh !== undefined;
        fresh = p;
      } else {
        excess ||= old !== undefined;
        old = p;
      }
    }
    let why: string | undefined;
    if (excess) why = 'more than one pod of the DaemonSet';
    else if (surge) why = old !== undefined && fresh !== undefined && !available(fresh) ? 'a new pod beside the old one, not available' : undefined;
    else if (fresh === undefined && old === undefined) why = 'a pod terminating';
    else if (fresh !== undefined && old !== undefined) why = 'an old and a new pod';
    else if (fresh !== undefined) why = available(fresh) ? undefined : 'a new pod not available';
    else why = available(old!) ? undefined : 'an old pod not available, replaced at once';
    if (why !== undefined) holders.push(`${displayName(node)} (${causeAt.get(node) ?? why})`);
  }
  return holders;
}

/** podutil.IsPodAvailable as the dump shows it: bound, Running and Ready (minReadySeconds is not judged). */
function available(p: PodRecord): boolean {
  return p.node !== undefined && p.phase === 'Running' && podReady(p);
}

/** What the rolling update does with a pod on a NotReady or unreachable node the DaemonSet no longer places pods on. */
function untargetedRole(pace: Pace, current: boolean, unreachable: boolean): string {
  if (pace.type === 'OnDelete') return 'with OnDelete nothing replaces it until it is deleted';
  if (pace.mode === 'surge') {
    return current ? 'it holds no surge unit (update.go rollingUpdate: a node with only a new pod)'
      : 'the rolling update deletes this old pod (not available, on a node the DaemonSet no longer places pods on) and holds no surge unit for it';
  }
  if (current) return 'the pod is not available and counts against maxUnavailable: the rolling update walks every node with a pod of the DaemonSet, targeted or not (update.go rollingUpdate)';
  return 'the rolling update walks every node with a pod of the DaemonSet, targeted or not (update.go rollingUpdate): this old pod is not available, so it is deleted at once '
    + `and counts against maxUnavailable in that sync${unreachable ? ', then stays Terminating while no kubelet confirms it and counts on every sync' : ''}`;
}

/**
 * A pod being deleted. Its deletionTimestamp is the deadline (the deletion's time plus its grace period): before it
 * the kubelet is stopping the containers, which is normal. Judged against the dump's own time (or --now), never the
 * wall clock. Force-deletion is advised only for an unreachable node, where no kubelet can confirm the deletion: on
 * a reachable node the containers may still run, and the new pod would start beside them.
 */
function terminatingFinding(run: Diagnosis, n: NodeFacts, pod: PodRecord, add: AddFinding): void {
  const node = n.name;
  const deadline = pod.object?.metadata?.deletionTimestamp;
  const deadlineMs = typeof deadline === 'string' ? Date.parse(deadline) : Number.NaN;
  const until = `its grace period ends at ${deletedAt(pod)}`;
  const down = n.unreachable ? 'unreachable (Ready=Unknown)' : n.notReady ? 'NotReady' : undefined;
  if (run.now === undefined || Number.isNaN(deadlineMs)) {
    add('terminating', node, pod, `pod ${podName(pod)} is terminating (${until}); the dump holds no timestamp to judge that against, so whether it is late cannot be told`
      + `${down === undefined ? '' : `; the node is ${down}`}`, 'warning', 'give --now with the time the dump was taken (RFC 3339, e.g. 2026-01-01T12:00:00Z)');
    return;
  }
  const at = `${run.now.text} (${run.now.basis})`;
  if (run.now.ms <= deadlineMs) {
    if (down !== undefined) {
      add('node-not-ready', node, pod, `the node is ${down}; pod ${podName(pod)} is terminating (${until}; now ${at})${n.unreachable ? ' and stays so: no kubelet confirms the deletion' : ''}`);
    } else {
      add('terminating', node, pod, `pod ${podName(pod)} is terminating within its grace period (${until}; now ${at}): the kubelet is stopping it, then the new pod comes`, 'warning',
        'nothing: a pod takes up to its terminationGracePeriodSeconds to stop; run doctor again after its grace period if it is still there');
    }
    return;
  }
  const late = `pod ${podName(pod)} is still terminating at ${at}, past its grace period (it ended at ${deletedAt(pod)})`;
  if (n.unreachable) {
    add('terminating', node, pod, `${late}, on a node that is unreachable (Ready=Unknown): no kubelet confirms the deletion`);
  } else {
    add('terminating', node, pod, `${late}, on a node that is ${down ?? 'Ready'}: its kubelet has not confirmed the deletion (a finalizer, a container that does not stop, a volume that does not unmount)`,
      'error', 'read the pod\'s finalizers (kubectl get pod -o jsonpath=\'{.metadata.finalizers}\') and the kubelet\'s log on the node; do not force-delete it while the node is reachable: '
        + 'its containers may still run, and the new pod would start beside them');
  }
}

/** The time to judge deadlines against: `--now`, else the dump's newest timestamp; undefined when neither is known. */
function nowOf(state: ClusterState, given: string | undefined): Diagnosis['now'] {
  if (given !== undefined) {
    const ms = Date.parse(given);
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)$/.test(given) || Number.isNaN(ms)) {
      throw new Error(`--now ${JSON.stringify(given.slice(0, 40))}: not an RFC 3339 time; give one like 2026-01-01T12:00:00Z`);
    }
    return { ms, text: given, basis: '--now' };
  }
  if (state.observedAt === undefined) return undefined;
  return { ms: Date.parse(state.observedAt), text: state.observedAt, basis: 'the dump\'s newest timestamp' };
}

/** The old revision's ready pods: OnDelete waits for a deletion; a rolling update is blocked when the holders fill its budget. */
function oldRevisionFindings(pace: Pace, coveredCount: number, oldReady: TargetedWalk['oldReady'],
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
      add('pending-resources', node, pod, `pod ${podName(pod)} is Pending: ${fit.insufficient.map(describeShortfall).join(', ')}${quoted}`, 'error', resourcesFix(pod));
      return;
    }
  }
  const text = said ?? '';
  if (/Insufficient|Too many pods/.test(text)) {add('pending-resources', node, pod, `pod ${podName(pod)} is Pending${quoted}`, 'error', resourcesFix(pod));} else if (/free ports/.test(text)) {add('pending-host-port', node, pod, `pod ${podName(pod)} is Pending${quoted}`);} else if (/taint/.test(text)) {add('pending-taint', node, pod, `pod ${podName(pod)} is Pending${quoted}`);} else if (/affinity|selector/.test(text)) {add('pending-affinity', node, pod, `pod ${podName(pod)} is Pending${quoted}`);} else {
    add('pending-resources', node, pod, `pod ${podName(pod)} is Pending and the reason cannot be told: the node has room by the requests counted, and the dump holds no FailedScheduling event${quoted}`, 'warning');
  }
}

/**
 * The fix of a pod that does not fit: the system-node-critical priority class lets the scheduler preempt
 * lower-priority pods; a pod that has it already, and still waits, needs room or smaller requests.
 */
function resourcesFix(pod: PodRecord): string {
  const critical = pod.object?.spec?.priorityClassName === 'system-node-critical' || pod.priority >= BUILT_IN_PRIORITY_CLASSES.get('system-node-critical')!.value;
  return critical
    ? 'the agent has the system-node-critical priority class already, so the scheduler could not preempt enough (the pods there are as important, or '
      + 'a preemption is under way): lower the agent\'s requests, or make room on the node (move workloads off, a larger instance type)'
    : fixFor('pending-resources');
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

/**
 * A container that cannot start or keeps crashing, from the pod's container statuses and the kubelet's events, by the
 * kubelet's own reasons: the image ones (kubernetes pkg/kubelet/images/types.go), the container's configuration
 * (kuberuntime ErrCreateContainerConfig), the runtime's refusals to create or start it (START), and CrashLoopBackOff
 * (pkg/kubelet/container/sync_result.go ErrCrashLoopBackOff), the only crash loop: a running container that is not
 * Ready after a restart is a readiness matter (notReadyText).
 */
function containerProblem(pod: PodRecord, events: readonly PodEvent[]): { cause: DoctorCause; message: string; fix?: string } | undefined {
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
    const said = typeof waiting?.message === 'string' && waiting.message !== '' ? waiting.message.slice(0, 300) : undefined;
    const where = `pod ${podName(pod)}, ${what} ${name}`;
    if (IMAGE_PULL.includes(reason)) return imageProblem(where, reason, s, said, events);
    if (CONFIG.includes(reason)) {
      const missing = said === undefined || /not found|couldn't find key/i.test(said);
      return { cause: 'config-error', message: `${where}: ${reason}${quote(said)}`, fix: missing ? undefined : CONFIG_FIX };
    }
    if (START.includes(reason)) return { cause: 'start-error', message: `${where}: ${reason}${quote(said ?? kubeletFailure(events))}` };
    if (reason === 'CrashLoopBackOff') {
      const last = isObject(s.lastState) && isObject(s.lastState.terminated) ? s.lastState.terminated : undefined;
      const lastReason = typeof last?.reason === 'string' ? last.reason.slice(0, 100) : undefined;
      const exit = last === undefined ? 'no last termination recorded'
        : `last terminated: ${lastReason ?? 'unknown reason'}, exit code ${typeof last.exitCode === 'number' ? last.exitCode : '?'}`;
      return {
        cause: 'crash-loop',
        message: `${where}: CrashLoopBackOff, ${typeof s.restartCount === 'number' ? s.restartCount : '?'} restarts; ${exit}`,
        fix: lastReason === 'OOMKilled' ? OOM_FIX : lastReason === 'StartError' || lastReason === 'ContainerCannotRun' ? fixFor('start-error') : undefined,
      };
    }
  }
  const mount = events.find((e) => e.reason === 'FailedMount' && /not found|couldn't find key/.test(e.message));
  if (mount !== undefined) return { cause: 'config-error', message: `pod ${podName(pod)} cannot mount a volume: "${mount.message}"` };
  return undefined;
}

const CONFIG_FIX = 'read the kubelet\'s message: the container\'s configuration cannot be built (e.g. runAsNonRoot with an image that runs as root, '
  + 'a subPath or an env reference it cannot resolve); fix the pod template, or roll back';
const OOM_FIX = 'the container was OOM-killed at its memory limit (exit code 137): raise the memory limit (resources.limits.memory, and the request with it), '
  + 'or lower what the agent holds in memory (buffers, queues); or roll back';

/**
 * An image reason. The kubelet's event keeps the pull's real error ("Failed to pull image ...: 429 Too Many
 * Requests"); ImagePullBackOff's own message says only that it backs off, so the event's words are kept over it.
 */
function imageProblem(where: string, reason: string, s: Record<string, any>, said: string | undefined,
  events: readonly PodEvent[]): { cause: DoctorCause; message: string; fix: string } {
  const image = typeof s.image === 'string' ? s.image.slice(0, 300) : '?';
  const failure = kubeletFailure(events);
  const backOff = said === undefined || /^Back-off pulling image/i.test(said);
  const words = backOff && failure !== undefined ? failure : said ?? failure;
  const text = `${reason} ${words ?? ''}`;
  const fix = reason === 'ImageInspectError'
    ? 'the container runtime cannot read the image already on the node: remove it there (crictl rmi IMAGE on the node) so the kubelet pulls it again, or check the runtime\'s image store'
    : reason === 'ErrImageNeverPull' ? 'imagePullPolicy is Never and the image is not on the node: load the image on every node, or set imagePullPolicy IfNotPresent'
      : reason === 'InvalidImageName' ? 'the image reference cannot be parsed: fix the image in the pod template (registry/repository:tag or @sha256:digest)'
        : /\b429\b|too many requests|toomanyrequests|rate limit/i.test(text)
          ? 'the registry limits the pull rate (HTTP 429): authenticate the pulls (imagePullSecrets), or pull through a mirror or cache of your own; the kubelet retries by itself'
          : /\b40[13]\b|unauthorized|denied|forbidden|authentication required/i.test(text)
            ? 'the registry refuses the pull: give the pod an imagePullSecrets entry whose credentials can read the image, or make the repository readable'
            : /not found|manifest unknown|no such/i.test(text) ? 'the image or tag does not exist in the registry: fix the tag (or digest) in the pod template, or push the image'
              : fixFor('image-pull');
  return { cause: 'image-pull', message: `${where}: ${reason} for image ${image}${quote(words)}`, fix };
}

/** The kubelet's last error about the pod's containers: its Failed event, other than its one-word "Error: <reason>" echo. */
function kubeletFailure(events: readonly PodEvent[]): string | undefined {
  return events.find((e) => e.reason === 'Failed' && !/^Error: \w+$/.test(e.message))?.message;
}

function quote(text: string | undefined): string {
  return text === undefined ? '' : `: "${text}"`;
}

function notReadyText(pod: PodRecord, events: readonly PodEvent[]): string {
  const probe = events.find((e) => e.reason === 'Unhealthy');
  const statuses = pod.object?.status?.containerStatuses;
  const restarted = Array.isArray(statuses) ? statuses.find((s) => isObject(s) && typeof s.restartCount === 'number' && s.restartCount > 0 && s.ready !== true) : undefined;
  const restarts = restarted === undefined ? '' : `; container ${typeof restarted.name === 'string' ? displayName(restarted.name) : '?'} restarted ${restarted.restartCount} `
    + `time${restarted.restartCount === 1 ? '' : 's'} and runs now (not a crash loop)`;
  return `pod ${podName(pod)} is ${pod.phase} but not Ready${restarts}${probe === undefined ? '' : `; the kubelet: "${probe.message}"`}`;
}

function paceText(pace: ReturnType<typeof paceOf>): string {
  if (pace.type === 'OnDelete') return 'OnDelete';
  return pace.mode === 'surge' ? `maxSurge ${pace.maxSurge}` : `maxUnavailable ${pace.maxUnavailable}`;
}

function list(items: readonly string[]): string {
  return items.length <= 5 ? items.join(', ') : `${items.slice(0, 5).join(', ')}, … ${items.length - 5} more`;
}
