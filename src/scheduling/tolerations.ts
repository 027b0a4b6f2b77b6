import { TaintJson, TolerationJson } from './types';
import { entryOf } from '../util/maps';

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
 * the list (taints x tolerations was quadratic). Exists entries hold the effects a toleration covers,
 * '' standing for every effect: one effect as its string, several as a Set; Equal ones are filed under
 * their effect. The answer is exactly `toleratesTaint` over the list.
 */
type Effects = string | Set<string>;

interface TolerationIndex {
  /** keyless Exists tolerations: every taint */
  any?: Effects;
  /** Exists tolerations by key */
  readonly exists: Map<string, Effects>;
  /**
   * Equal tolerations by effect ('' for every effect), then key, then value: the one value of a key as the
   * string itself (the common case: nothing allocated per toleration), several as a Set
   */
  readonly equal: Map<string, Map<string, string | Set<string>>>;
}

const indexes = new WeakMap<readonly TolerationJson[], TolerationIndex>();

function withEffect(effects: Effects | undefined, effect: string): Effects {
  if (effects === undefined || effects === effect) return effect;
  if (typeof effects === 'string') return new Set([effects, effect]);
  return effects.add(effect);
}

function covers(effects: Effects | undefined, effect: string): boolean {
  if (effects === undefined) return false;
  if (typeof effects === 'string') return effects === '' || effects === effect;
  return effects.has('') || effects.has(effect);
}

function indexOf(tolerations: readonly TolerationJson[]): TolerationIndex {
  const cached = indexes.get(tolerations);
  if (cached !== undefined) return cached;
  const index: TolerationIndex = { exists: new Map(), equal: new Map() };
  for (const toleration of tolerations) {
    const effect = toleration.effect ?? '';
    const operator = toleration.operator ?? 'Equal';
    if (!toleration.key) {
      if (operator === 'Exists') index.any = withEffect(index.any, effect);
    } else if (operator === 'Exists') {
      index.exists.set(toleration.key, withEffect(index.exists.get(toleration.key), effect));
    } else {
      const value = toleration.value ?? '';
      const byKey = entryOf(index.equal, effect, () => new Map<string, string | Set<string>>());
      const values = byKey.get(toleration.key);
      if (values === undefined) byKey.set(toleration.key, value);
      else if (typeof values !== 'string') values.add(value);
      else if (values !== value) byKey.set(toleration.key, new Set([values, value]));
    }
  }
  indexes.set(tolerations, index);
  return index;
}

export function tolerated(tolerations: readonly TolerationJson[], taint: TaintJson): boolean {
  return toleratedBy(indexOf(tolerations), taint);
}

/** `tolerated` for one list, its index built once and held by the function (no lookup of the list per taint). */
export function tolerationCheck(tolerations: readonly TolerationJson[]): (taint: TaintJson) => boolean {
  const index = indexOf(tolerations);
  return (taint) => toleratedBy(index, taint);
}

function toleratedBy(index: TolerationIndex, taint: TaintJson): boolean {
  if (covers(index.any, taint.effect) || covers(index.exists.get(taint.key), taint.effect)) return true;
  const value = taint.value ?? '';
  const has = (byKey: Map<string, string | Set<string>> | undefined) => {
    const values = byKey?.get(taint.key);
    return values !== undefined && (typeof values === 'string' ? values === value : values.has(value));
  };
  return has(index.equal.get('')) || has(index.equal.get(taint.effect));
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
