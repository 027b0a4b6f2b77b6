/**
 * Karpenter's requirement sets (kubernetes-sigs/karpenter pkg/scheduling/requirement.go, requirements.go): a key's
 * allowed values as a set or the complement of one, with Gt/Lt bounds. A NodePool's future node is such a set (the
 * NodeClaim template's requirements and labels; the instance type's, computeRequirements in
 * aws/karpenter-provider-aws pkg/providers/instancetype/types.go), not one labelled node: a key it leaves open, such
 * as the zone, allows every value. Pure.
 */
import { NodeSelectorRequirementJson } from '../../scheduling/types';

/** The allowed values of one key: `values`, or every value but them when `complement`; integers within (gt, lt). */
export interface KarpenterRequirement {
  readonly complement: boolean;
  readonly values: ReadonlySet<string>;
  readonly gt?: number;
  readonly lt?: number;
}

/** Requirements by key (Karpenter's `Requirements`): each key's requirements intersected. */
export type KarpenterRequirements = ReadonlyMap<string, KarpenterRequirement>;

/**
 * Labels Karpenter allows a pod to require though the node's requirements leave them undefined
 * (pkg/apis/v1/labels.go WellKnownLabels, and the AWS provider's `karpenter.k8s.aws/instance-*` and zone-id).
 */
const WELL_KNOWN = new Set(['karpenter.sh/nodepool', 'topology.kubernetes.io/zone', 'topology.kubernetes.io/region',
  'node.kubernetes.io/instance-type', 'kubernetes.io/arch', 'kubernetes.io/os', 'karpenter.sh/capacity-type',
  'node.kubernetes.io/windows-build', 'topology.k8s.aws/zone-id', 'karpenter.k8s.aws/capacity-reservation-id']);

export function isWellKnownLabel(key: string): boolean {
  return WELL_KNOWN.has(key) || key.startsWith('karpenter.k8s.aws/instance-');
}

const EMPTY = new Set<string>();

/** NewRequirement: one NodeSelectorRequirement as a set. */
export function requirementOf(r: NodeSelectorRequirementJson): KarpenterRequirement {
  const values = new Set(r.values ?? []);
  switch (r.operator) {
    case 'In': return { complement: false, values };
    case 'NotIn': return { complement: true, values };
    case 'DoesNotExist': return { complement: false, values: EMPTY };
    case 'Gt': return { complement: true, values: EMPTY, gt: Number(r.values?.[0]) };
    case 'Lt': return { complement: true, values: EMPTY, lt: Number(r.values?.[0]) };
    default: return { complement: true, values: EMPTY };
  }
}

const within = (value: string, gt?: number, lt?: number): boolean => {
  if (gt === undefined && lt === undefined) return true;
  if (!/^-?\d+$/.test(value)) return false;
  const n = Number(value);
  return (gt === undefined || n > gt) && (lt === undefined || n < lt);
};

const bound = (a: number | undefined, b: number | undefined, pick: (x: number, y: number) => number): number | undefined =>
  (a === undefined ? b : b === undefined ? a : pick(a, b));

/** Requirement.Intersection. */
export function intersection(a: KarpenterRequirement, b: KarpenterRequirement): KarpenterRequirement {
  const gt = bound(a.gt, b.gt, Math.max);
  const lt = bound(a.lt, b.lt, Math.min);
  if (gt !== undefined && lt !== undefined && gt >= lt - 1) return { complement: false, values: EMPTY };
  if (a.complement && b.complement) return { complement: true, values: new Set([...a.values, ...b.values]), gt, lt };
  const [set, other] = a.complement ? [b, a] : [a, b];
  const keep = [...set.values].filter((v) => (other.complement ? !other.values.has(v) : other.values.has(v)) && within(v, gt, lt));
  return { complement: false, values: new Set(keep) };
}

/** Requirement.Len: none left; a complement always leaves some. */
const isEmpty = (r: KarpenterRequirement): boolean => !r.complement && r.values.size === 0;

/** Requirement.Operator, as Intersects reads it: NotIn and DoesNotExist tolerate an empty intersection. */
const negative = (r: KarpenterRequirement): boolean => (r.complement ? r.values.size > 0 : r.values.size === 0);

/** Requirements.Add: the requirements of a list, each key's intersected. */
export function requirementsOf(list: readonly NodeSelectorRequirementJson[]): Map<string, KarpenterRequirement> {
  const result = new Map<string, KarpenterRequirement>();
  for (const r of list) addRequirement(result, r.key, requirementOf(r));
  return result;
}

export function addRequirement(into: Map<string, KarpenterRequirement>, key: string, r: KarpenterRequirement): void {
  const existing = into.get(key);
  into.set(key, existing === undefined ? r : intersection(r, existing));
}

/** Requirements.Intersects: every key both define keeps a value (or both sides exclude: NotIn, DoesNotExist). */
export function intersects(node: KarpenterRequirements, pod: KarpenterRequirements): boolean {
  for (const [key, incoming] of pod) {
    const existing = node.get(key);
    if (existing === undefined || !isEmpty(intersection(existing, incoming))) continue;
    if (!(negative(incoming) && negative(existing))) return false;
  }
  return true;
}

/**
 * Requirements.Compatible with AllowUndefinedWellKnownLabels: a custom key the pod requires must be defined on the
 * node (unless the pod's requirement is NotIn or DoesNotExist); a well-known one may be undefined. Then Intersects.
 */
export function compatible(node: KarpenterRequirements, pod: KarpenterRequirements): boolean {
  for (const [key, r] of pod) {
    if (!node.has(key) && !isWellKnownLabel(key) && !negative(r)) return false;
  }
  return intersects(node, pod);
}
