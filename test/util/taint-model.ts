/**
 * What the DaemonSet controller, the remover and the scheduler do with a readiness taint on a node, written from the
 * upstream functions, independently of src/ (which reads the DaemonSets' readiness-taint annotation; this reads their
 * pod templates), so the node tools' verdicts can be checked against it:
 * - the DaemonSet controller creates a pod of a DaemonSet on a node when pkg/controller/daemon/daemon_controller.go
 *   NodeShouldRunDaemonPod's `predicates` hold: fitsNodeName, fitsNodeAffinity (nodeSelector and the required node
 *   affinity, component-helpers nodeaffinity.GetRequiredNodeAffinity(pod).Match), fitsTaints (no NoSchedule or
 *   NoExecute taint left untolerated: v1helper.FindMatchingUntoleratedTaint), with the tolerations NewPod adds
 *   (pkg/controller/daemon/util/daemonset_util.go AddOrUpdateDaemonPodTolerations);
 * - a toleration tolerates a taint as k8s.io/api/core/v1 Toleration.ToleratesTaint says;
 * - the pod's remover container (env TAINT_KEY) removes that taint from its node once the pod is Ready;
 * - the scheduler places a workload on a node only when its TaintToleration plugin's Filter passes
 *   (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go: FindMatchingUntoleratedTaint over the
 *   NoSchedule and NoExecute taints).
 */
import { Manifest } from './manifests';

export interface ModelTaint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
}

export interface ModelNode {
  readonly name: string;
  readonly labels: Record<string, string>;
  readonly taints: readonly ModelTaint[];
}

/** k8s.io/api/core/v1 toleration.go, ToleratesTaint. */
export function toleratesTaint(t: Manifest, taint: ModelTaint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  if (!t.key) return t.operator === 'Exists';
  if (t.key !== taint.key) return false;
  return (t.operator ?? 'Equal') === 'Exists' || (t.value ?? '') === (taint.value ?? '');
}

/** v1helper.FindMatchingUntoleratedTaint with the filter NoSchedule || NoExecute: the first taint no toleration tolerates. */
export function untoleratedTaint(taints: readonly ModelTaint[], tolerations: readonly Manifest[]): ModelTaint | undefined {
  return taints.filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute').find((t) => !tolerations.some((x) => toleratesTaint(x, t)));
}

/** AddOrUpdateDaemonPodTolerations: what NewPod adds to every DaemonSet pod. */
function daemonPodTolerations(spec: Manifest): Manifest[] {
  const added = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    ...['disk-pressure', 'memory-pressure', 'pid-pressure', 'unschedulable'].map((k) => ({ key: `node.kubernetes.io/${k}`, operator: 'Exists', effect: 'NoSchedule' })),
    ...spec.hostNetwork ? [{ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' }] : [],
  ];
  return [...spec.tolerations ?? [], ...added];
}

/** labels/selector.go Requirement.Matches for the operators node affinity takes. */
function requirementMatches(r: Manifest, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  switch (r.operator) {
    case 'In': return has && r.values.includes(value);
    case 'NotIn': return !has || !r.values.includes(value);
    case 'Exists': return has;
    case 'DoesNotExist': return !has;
    case 'Gt': case 'Lt': {
      if (!has || !/^-?\d+$/.test(value)) return false;
      return r.operator === 'Gt' ? Number(value) > Number(r.values[0]) : Number(value) < Number(r.values[0]);
    }
    default: throw new Error(`operator ${r.operator}`);
  }
}

/** nodeaffinity.GetRequiredNodeAffinity(pod).Match: the nodeSelector, and any one required term (its expressions and fields all hold). */
function fitsNodeAffinity(spec: Manifest, node: ModelNode): boolean {
  if (!Object.entries(spec.nodeSelector ?? {}).every(([k, v]) => node.labels[k] === v)) return false;
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  if (terms === undefined) return true;
  return terms.some((term: Manifest) => (term.matchExpressions ?? []).every((r: Manifest) => requirementMatches(r, node.labels))
    && (term.matchFields ?? []).every((r: Manifest) => requirementMatches(r, { 'metadata.name': node.name })));
}

/** NodeShouldRunDaemonPod's `predicates`: whether the controller creates the DaemonSet's pod on the node. */
export function daemonPodCreated(ds: Manifest, node: ModelNode): boolean {
  const spec = ds.spec.template.spec;
  const fitsNodeName = !spec.nodeName || spec.nodeName === node.name;
  return fitsNodeName && fitsNodeAffinity(spec, node) && untoleratedTaint(node.taints, daemonPodTolerations(spec)) === undefined;
}

/** The taint key the pod's remover container removes from its node once Ready (its TAINT_KEY), if it has one. */
export function removedTaintKey(ds: Manifest): string | undefined {
  const remover = ds.spec.template.spec.containers.find((c: Manifest) => c.name === 'readiness-taint-remover');
  return remover?.env?.find((e: Manifest) => e.name === 'TAINT_KEY')?.value;
}

/**
 * The node once the agents' pods have started and turned Ready: the readiness taints their removers removed are
 * gone. Readiness taints of one agent's pods are removed in any order, so this repeats until nothing changes.
 */
export function settled(node: ModelNode, daemonSets: readonly Manifest[]): ModelNode {
  let current = node;
  for (;;) {
    const removed = new Set(daemonSets.filter((ds) => daemonPodCreated(ds, current)).map(removedTaintKey).filter((k) => k !== undefined));
    const taints = current.taints.filter((t) => !(t.effect === 'NoSchedule' && removed.has(t.key)));
    if (taints.length === current.taints.length) return current;
    current = { ...current, taints };
  }
}

/** TaintToleration.Filter for a workload with no tolerations: it lands only on a node without NoSchedule / NoExecute taints. */
export function workloadLands(node: ModelNode): boolean {
  return untoleratedTaint(node.taints, []) === undefined;
}

/** The nodes where, once the tree's agents have run, a workload never lands (sorted). */
export function closedNodes(nodes: readonly ModelNode[], manifests: readonly Manifest[]): string[] {
  const daemonSets = manifests.filter((m) => m.kind === 'DaemonSet');
  return nodes.filter((n) => !workloadLands(settled(n, daemonSets))).map((n) => n.name).sort();
}
