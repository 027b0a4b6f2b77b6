/**
 * What Karpenter's node termination does with a pod, ported from kubernetes-sigs/karpenter
 * pkg/utils/pod/scheduling.go (IsDrainable, IsEvictable, ToleratesDisruptedNoScheduleTaint) and
 * pkg/controllers/node/termination/terminator/terminator.go (Drain, Evict).
 *
 * Karpenter taints a node it terminates `karpenter.sh/disrupted:NoSchedule`. A pod that tolerates that taint is
 * neither evicted nor waited for: it keeps running through the drain and stops when the instance shuts down.
 * Every other pod (mirror pods aside) is evicted, in four rounds: non-critical workloads, non-critical DaemonSet
 * pods, critical workloads, critical DaemonSet pods (critical: priorityClassName system-cluster-critical or
 * system-node-critical).
 */
import { toleratesTaint } from './tolerations';
import { TolerationJson } from './types';

/** The taint Karpenter puts on a node it disrupts (kubernetes-sigs/karpenter pkg/apis/v1: DisruptedNoScheduleTaint). */
export const KARPENTER_DISRUPTED_TAINT = { key: 'karpenter.sh/disrupted', effect: 'NoSchedule' } as const;

/** The pod fields Karpenter's drain reads. */
export interface DrainPod {
  readonly tolerations?: readonly TolerationJson[];
  /** kinds of the pod's owner references, with their apiVersion: 'apps/v1/DaemonSet', 'v1/Node' */
  readonly owners?: readonly string[];
  readonly priorityClassName?: string;
  /** Succeeded or Failed */
  readonly terminal?: boolean;
}

/** ToleratesDisruptedNoScheduleTaint: one of the pod's tolerations matches `karpenter.sh/disrupted:NoSchedule`. */
export function toleratesKarpenterDisrupted(tolerations: readonly TolerationJson[] = []): boolean {
  return tolerations.some((t) => toleratesTaint(t, KARPENTER_DISRUPTED_TAINT));
}

/** IsDrainable without the stuck-terminating clause: Karpenter waits for this pod before it terminates the instance. */
export function karpenterDrains(pod: DrainPod): boolean {
  return !pod.terminal && !toleratesKarpenterDisrupted(pod.tolerations) && !(pod.owners ?? []).includes('v1/Node');
}

/** The round (0 to 3) in which Karpenter evicts a drained pod (Evict's four lists), undefined for a pod it leaves. */
export function karpenterEvictionRound(pod: DrainPod): number | undefined {
  if (!karpenterDrains(pod)) return undefined;
  const critical = pod.priorityClassName === 'system-cluster-critical' || pod.priorityClassName === 'system-node-critical';
  const daemon = (pod.owners ?? []).includes('apps/v1/DaemonSet');
  return (critical ? 2 : 0) + (daemon ? 1 : 0);
}
