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

/**
 * The tolerations of a list, indexed so that checking a taint costs O(1) instead of one pass over
 * the list (taints x tolerations was quadratic). Each entry holds the effects a toleration covers,
 * '' standing for every effect; the answer is exactly `toleratesTaint` over the list.
 */
interface TolerationIndex {
  /** keyless Exists tolerations: every taint */
  readonly any: Set<string>;
  /** Exists tolerations by key */
  readonly exists: Map<string, Set<string>>;
  /** Equal tolerations by key and value */
  readonly equal: Map<string, Set<string>>;
}

const indexes = new WeakMap<readonly TolerationJson[], TolerationIndex>();

function indexOf(tolerations: readonly TolerationJson[]): TolerationIndex {
  const cached = indexes.get(tolerations);
  if (cached !== undefined) return cached;
  const index: TolerationIndex = { any: new Set(), exists: new Map(), equal: new Map() };
  const add = (map: Map<string, Set<string>>, key: string, effect: string) => (map.get(key) ?? map.set(key, new Set()).get(key)!).add(effect);
  for (const toleration of tolerations) {
    const effect = toleration.effect ?? '';
    const operator = toleration.operator ?? 'Equal';
    if (!toleration.key) {
      if (operator === 'Exists') index.any.add(effect);
    } else if (operator === 'Exists') {
      add(index.exists, toleration.key, effect);
    } else {
      add(index.equal, `${toleration.key}\u0000${toleration.value ?? ''}`, effect);
    }
  }
  indexes.set(tolerations, index);
  return index;
}

export function tolerated(tolerations: readonly TolerationJson[], taint: TaintJson): boolean {
  const index = indexOf(tolerations);
  const covers = (effects: Set<string> | undefined) => effects !== undefined && (effects.has('') || effects.has(taint.effect));
  return covers(index.any) || covers(index.exists.get(taint.key)) || covers(index.equal.get(`${taint.key}\u0000${taint.value ?? ''}`));
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
