import { NodeSelectorRequirementJson, NodeSelectorTermJson } from '../scheduling/types';
import { checkLabelKey, checkLabelValue, describeValue } from '../validation/values';

/**
 * Resource profiles as a static partition of an agent's nodes, crossed with the rollout waves.
 *
 * Each profile selects nodes by one label: its value is one of a list (`In`), or, read as an integer, lies
 * within bounds (`Gt` / `Lt`, e.g. Karpenter's `karpenter.k8s.aws/instance-cpu`). Profiles are ordered and the
 * first that matches a node owns it; the default profile owns every node that matches none. Profile k's
 * DaemonSets require "profile k and none of the earlier profiles"; the default's require "no profile". The
 * profiles on one label must be disjoint (values, or ranges), so among them nothing needs excluding, and the
 * complement of those on one label is one requirement (`NotIn`), or the label's absence plus the gaps between
 * the ranges (`DoesNotExist`, `Gt`/`Lt` terms): each node matches exactly one profile's terms. A node whose
 * value of a range label is not an integer is the one exception: the scheduler's integer parse fails and
 * neither `Gt` nor `Lt` matches it (k8s.io/apimachinery/pkg/labels/selector.go, Requirement.Matches), so no
 * profile's terms and not the default's either; labels set by Karpenter are always integers.
 *
 * Pure module (no cdk8s): the constructs render these terms into node affinity, crossed with the waves
 * (partitionTerms takes a profile's terms as its base terms).
 */

/** Name of the profile that owns every node matching no profile: its DaemonSets keep the names they have without profiles. */
export const DEFAULT_PROFILE = 'default';

/** The DaemonSet annotation naming the resource profile it renders (metadata only: no pod restarts for it). */
export const PROFILE_ANNOTATION = 'node-agents.cdk8s.io/resource-profile';

/** The most node-affinity terms one profile's DaemonSet may carry (gaps between ranges multiply terms). */
export const MAX_PROFILE_TERMS = 64;

/**
 * The longest DaemonSet name a profile gives: the DaemonSet controller names its pods `<name>-<5 characters>`
 * and cuts the prefix to 58 characters (k8s.io/apiserver names.SimpleNameGenerator, maxGeneratedNameLength
 * 63 - 5), so a name up to 57 characters keeps `<name>-` whole in every pod name (the alerts match pods by it).
 */
export const MAX_PROFILE_DAEMONSET_NAME = 57;

/** One profile: the nodes whose label `key` has one of `values`, or an integer value within [min, max]. */
export interface ProfileSpec {
  /** Becomes a DaemonSet name part and a label value part: a DNS-1123 label, not `default`. */
  readonly name: string;
  readonly key: string;
  /** `In`: the label's value is one of these. */
  readonly values?: readonly string[];
  /** Lowest integer value (inclusive), rendered `Gt min-1`. */
  readonly min?: number;
  /** Highest integer value (inclusive), rendered `Lt max+1`. */
  readonly max?: number;
}

export interface ProfileGroup {
  /** The profile's name, or `default`. */
  readonly name: string;
  /** Required node-affinity terms (ORed): the base terms ANDed with the profile's and the earlier profiles' exclusions. */
  readonly terms: NodeSelectorTermJson[];
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** Gt/Lt values as the API server parses them: int64; a bound stays well inside so that min-1 and max+1 do too. */
const BOUND_LIMIT = 10 ** 15;

/** Problems with the profiles as a partition, as sentences naming `resourceProfiles[i]`. */
export function profileProblems(profiles: readonly ProfileSpec[]): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  const kinds = new Map<string, 'values' | 'range'>();
  profiles.forEach((p, i) => {
    const prop = `resourceProfiles[${i}]`;
    if (typeof p.name !== 'string' || !DNS1123_LABEL.test(p.name) || p.name.length > 63) {
      problems.push(`${prop}.name ${describeValue(p.name)} is not a DNS-1123 label (lower-case letters, digits and "-"): it becomes part of the DaemonSet names`);
    } else if (p.name === DEFAULT_PROFILE) {
      problems.push(`${prop}.name "${DEFAULT_PROFILE}" is reserved for the nodes that match no profile; choose another name`);
    } else if (names.has(p.name)) {
      problems.push(`${prop}.name "${p.name}" is given twice: each profile becomes its own DaemonSets; give every profile a different name`);
    }
    names.add(p.name);
    problems.push(...checkLabelKey(`${prop}.nodes key`, p.key));
    const kind = p.values !== undefined ? 'values' : 'range';
    if (kind === 'values') {
      if (p.values!.length === 0) problems.push(`${prop}.nodes: list at least one label value`);
      p.values!.forEach((v, k) => problems.push(...checkLabelValue(`${prop}.nodes value ${k}`, v)));
    } else {
      problems.push(...boundProblems(p, prop));
    }
    const earlier = kinds.get(p.key);
    if (earlier !== undefined && earlier !== kind) {
      problems.push(`${prop}.nodes: label "${p.key}" is used both with values and with numeric bounds by the profiles; select one label either way`);
    }
    kinds.set(p.key, kind);
  });
  if (problems.length > 0) return problems;
  return overlapProblems(profiles);
}

function boundProblems(p: ProfileSpec, prop: string): string[] {
  const problems: string[] = [];
  if (p.min === undefined && p.max === undefined) problems.push(`${prop}.nodes: give a lower bound, an upper bound or both`);
  for (const [what, bound] of [['min', p.min], ['max', p.max]] as const) {
    if (bound !== undefined && (!Number.isInteger(bound) || Math.abs(bound) > BOUND_LIMIT)) {
      problems.push(`${prop}.nodes ${what} ${describeValue(bound)} must be a whole number (Kubernetes compares label values as integers)`);
    }
  }
  if (problems.length === 0 && p.min !== undefined && p.max !== undefined && p.min > p.max) {
    problems.push(`${prop}.nodes: min ${p.min} is above max ${p.max}, so the profile selects no node`);
  }
  return problems;
}

/** Profiles on one label must be disjoint: else the later one would never own a node, or own fewer than it says. */
function overlapProblems(profiles: readonly ProfileSpec[]): string[] {
  const problems: string[] = [];
  profiles.forEach((p, i) => {
    for (let j = 0; j < i; j++) {
      const q = profiles[j];
      if (q.key !== p.key) continue;
      const overlap = p.values !== undefined
        ? p.values.filter((v) => q.values!.includes(v)).map((v) => `"${v}"`).join(', ')
        : rangesOverlap(p, q) ? `${describeRange(p)} and ${describeRange(q)} overlap` : '';
      if (overlap !== '') {
        problems.push(`resourceProfiles[${i}] ("${p.name}") and resourceProfiles[${j}] ("${q.name}") both select nodes by "${p.key}" (${overlap}): `
          + 'a node would match both. Make the profiles on one label disjoint');
      }
    }
  });
  return problems;
}

function low(p: ProfileSpec): number {
  return p.min ?? Number.NEGATIVE_INFINITY;
}

function high(p: ProfileSpec): number {
  return p.max ?? Number.POSITIVE_INFINITY;
}

function rangesOverlap(a: ProfileSpec, b: ProfileSpec): boolean {
  return low(a) <= high(b) && low(b) <= high(a);
}

function describeRange(p: ProfileSpec): string {
  return `[${p.min ?? '-∞'}, ${p.max ?? '∞'}]`;
}

/** The requirements that select a profile's nodes (ANDed). */
export function profileRequirements(p: ProfileSpec): NodeSelectorRequirementJson[] {
  if (p.values !== undefined) return [{ key: p.key, operator: 'In', values: [...p.values] }];
  return between(p.key, p.min ?? Number.NEGATIVE_INFINITY, p.max ?? Number.POSITIVE_INFINITY);
}

/**
 * The nodes matching none of `profiles` (all on one label, disjoint), as alternatives (ORed) of requirements
 * (ANDed): `NotIn` the values; or the label absent, or its value in a gap between the ranges.
 */
function complementOf(profiles: readonly ProfileSpec[]): NodeSelectorRequirementJson[][] {
  const key = profiles[0].key;
  if (profiles[0].values !== undefined) return [[{ key, operator: 'NotIn', values: profiles.flatMap((p) => [...p.values!]) }]];
  const alternatives: NodeSelectorRequirementJson[][] = [[{ key, operator: 'DoesNotExist' }]];
  const sorted = [...profiles].sort((a, b) => low(a) - low(b));
  let from = Number.NEGATIVE_INFINITY; // the lowest value not yet covered
  for (const p of sorted) {
    if (low(p) > from) alternatives.push(between(key, from, low(p) - 1));
    from = high(p) + 1;
  }
  if (from !== Number.POSITIVE_INFINITY) alternatives.push(between(key, from, Number.POSITIVE_INFINITY));
  return alternatives;
}

/** The integer values in [from, to] of `key`, as Gt/Lt requirements (an unbounded side has none). */
function between(key: string, from: number, to: number): NodeSelectorRequirementJson[] {
  const result: NodeSelectorRequirementJson[] = [];
  if (from !== Number.NEGATIVE_INFINITY) result.push({ key, operator: 'Gt', values: [`${from - 1}`] });
  if (to !== Number.POSITIVE_INFINITY) result.push({ key, operator: 'Lt', values: [`${to + 1}`] });
  return result;
}

/**
 * Required node-affinity terms of every profile (in order), then the default profile's: each base term ANDed
 * with the profile's requirements and the complement of every earlier profile on another label (profiles on the
 * same label are disjoint: nothing to exclude). An empty `baseTerms` means no base restriction. Throws on
 * profiles that are no partition (profileProblems) and on more than MAX_PROFILE_TERMS terms for one profile.
 */
export function profileTerms(profiles: readonly ProfileSpec[], baseTerms: readonly NodeSelectorTermJson[]): ProfileGroup[] {
  const problems = profileProblems(profiles);
  if (problems.length > 0) throw new Error(problems.join('; '));
  const bases: readonly NodeSelectorTermJson[] = baseTerms.length > 0 ? baseTerms : [{}];
  const groups: ProfileGroup[] = [];
  const termsOf = (name: string, own: NodeSelectorRequirementJson[], earlier: readonly ProfileSpec[], ownKey?: string): ProfileGroup => {
    const byKey = new Map<string, ProfileSpec[]>();
    for (const q of earlier) if (q.key !== ownKey) (byKey.get(q.key) ?? byKey.set(q.key, []).get(q.key)!).push(q);
    // the product of the complements, one alternative per label
    let alternatives: NodeSelectorRequirementJson[][] = [[]];
    for (const group of byKey.values()) {
      alternatives = alternatives.flatMap((a) => complementOf(group).map((c) => [...a, ...c]));
    }
    const terms = bases.flatMap((base) => alternatives.map((a): NodeSelectorTermJson => {
      const expressions = [...(base.matchExpressions ?? []).map(copy), ...own.map(copy), ...a.map(copy)];
      return {
        ...(expressions.length > 0 ? { matchExpressions: expressions } : {}),
        ...(base.matchFields !== undefined && base.matchFields.length > 0 ? { matchFields: base.matchFields.map(copy) } : {}),
      };
    }));
    if (terms.length > MAX_PROFILE_TERMS) {
      throw new Error(`resourceProfiles: profile "${name}" needs ${terms.length} node-affinity terms (at most ${MAX_PROFILE_TERMS}): `
        + 'the gaps between numeric ranges on several labels multiply. Select the profiles by fewer labels, or make the ranges on a label contiguous');
    }
    return { name, terms };
  };
  profiles.forEach((p, i) => groups.push(termsOf(p.name, profileRequirements(p), profiles.slice(0, i), p.key)));
  if (profiles.length > 0) groups.push(termsOf(DEFAULT_PROFILE, [], profiles));
  return groups;
}

/**
 * The rollout-group label value of a profile's DaemonSet in a wave: `<wave>.<profile>`, and the wave alone for the
 * default profile (so an agent without profiles keeps its pods' labels). Unique per DaemonSet of the agent (wave and
 * profile names are DNS labels, without dots), so the anti-affinity against the agent's other groups keeps a node
 * that changes profile, wave or both from running two pods.
 */
export function profileGroupLabel(wave: string, profile: string): string {
  return profile === DEFAULT_PROFILE ? wave : `${wave}.${profile}`;
}

/** The wave and profile a rollout-group label value names (`<wave>.<profile>`, or a wave alone: the default profile). */
export function splitGroupLabel(group: string): { wave: string; profile: string } {
  const dot = group.indexOf('.');
  return dot < 0 ? { wave: group, profile: DEFAULT_PROFILE } : { wave: group.slice(0, dot), profile: group.slice(dot + 1) };
}

/** Object name of a profile's DaemonSet: the group's name with `-<profile>` after the agent's name (the default profile: unchanged). */
export function profileResourceName(baseName: string, groupResourceName: string, profile: string): string {
  if (profile === DEFAULT_PROFILE) return groupResourceName;
  return `${baseName}-${profile}${groupResourceName.slice(baseName.length)}`;
}

function copy(req: NodeSelectorRequirementJson): NodeSelectorRequirementJson {
  return req.values === undefined
    ? { key: req.key, operator: req.operator }
    : { key: req.key, operator: req.operator, values: [...req.values] };
}
