import { TaintJson, TolerationJson } from './types';

/**
 * Kubernetes toleration semantics (k8s.io/api/core/v1 Toleration.ToleratesTaint):
 * - an empty effect matches every effect; otherwise effects must be equal;
 * - an empty key with operator Exists matches every taint;
 * - Exists ignores the value; Equal (the default operator) needs key and value equal.
 */
export function toleratesTaint(toleration: TolerationJson, taint: TaintJson): boolean {
  if (toleration.effect && toleration.effect !== taint.effect) return false;
  const operator = toleration.operator ?? 'Equal';
  if (!toleration.key) {
    return operator === 'Exists';
  }
  if (toleration.key !== taint.key) return false;
  if (operator === 'Exists') return true;
  return (toleration.value ?? '') === (taint.value ?? '');
}

export function tolerated(tolerations: readonly TolerationJson[], taint: TaintJson): boolean {
  return tolerations.some((toleration) => toleratesTaint(toleration, taint));
}

/**
 * Taints that keep a DaemonSet pod off a node: NoSchedule and NoExecute ones no toleration matches.
 * PreferNoSchedule never keeps a pod off.
 */
export function untoleratedTaints(tolerations: readonly TolerationJson[], taints: readonly TaintJson[]): TaintJson[] {
  return taints.filter((taint) => taint.effect !== 'PreferNoSchedule' && !tolerated(tolerations, taint));
}

/**
 * Tolerations the DaemonSet controller adds to every pod it creates
 * (pkg/controller/daemon/util/daemonset_util.go, AddOrUpdateDaemonPodTolerations).
 * network-unavailable is added only for hostNetwork pods.
 */
export function controllerAddedTolerations(hostNetwork: boolean): TolerationJson[] {
  const result: TolerationJson[] = [
    { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' },
    { key: 'node.kubernetes.io/disk-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/memory-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/pid-pressure', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (hostNetwork) {
    result.push({ key: 'node.kubernetes.io/network-unavailable', operator: 'Exists', effect: 'NoSchedule' });
  }
  return result;
}
