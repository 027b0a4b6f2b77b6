import { NodeSelectorRequirementJson, NodeSelectorTermJson } from '../scheduling/types';
import { checkDnsSubdomain, checkLabelKey, checkLabelValue, describeValue } from '../validation/values';

/**
 * Rollout waves as a static partition of an agent's nodes.
 *
 * Wave k's DaemonSet requires "matches wave k and none of waves 0..k-1"; the fleet requires
 * "matches no wave". Because `NotIn` and `DoesNotExist` match nodes lacking the key, unlabelled
 * and brand-new nodes fall to the fleet, and every node of the base eligibility is owned by
 * exactly one group whatever its labels. Selectors never change between stages: widening means
 * promoting groups to the new version, one at a time.
 *
 * Pure module (no cdk8s): the constructs render these terms into node affinity.
 */

/** The node label that assigns nodes to waves when waves are label values (see labelling.ts). */
export const DEFAULT_WAVE_LABEL_KEY = 'node-agents.cdk8s.io/rollout-wave';

/** The pod label naming the rollout group of an agent's pod: a wave name, or `fleet`. Part of every selector. */
export const ROLLOUT_GROUP_LABEL = 'node-agents.cdk8s.io/rollout-group';

/**
 * The DaemonSet annotation giving its group's place in the rollout order (`"0"` the first wave, the fleet last), so
 * that `plan` reads the order from the manifests: a change of it moves no pod (metadata only).
 */
export const WAVE_INDEX_ANNOTATION = 'node-agents.cdk8s.io/rollout-wave-index';

/** Name of the last group: every node that matches no wave. Reserved as a wave name. */
export const FLEET_GROUP = 'fleet';

/** The `matchFields` key that names a node (the only key the API server accepts there). */
export const NODE_NAME_FIELD = 'metadata.name';

export interface WaveSpec {
  /** Becomes the DaemonSet name suffix (`<agent>-<name>`): a DNS-1123 label, not `fleet`. */
  readonly name: string;
  /**
   * The one requirement that selects the wave's nodes: `In` on a label value (the wave label,
   * a zone, a node pool) or `Exists` on a label. With `field: true`: `metadata.name In [hostnames]`.
   */
  readonly requirement: NodeSelectorRequirementJson;
  /** The requirement is a `matchFields` requirement on the node name (a list of hostnames). */
  readonly field?: boolean;
}

export interface PartitionGroup {
  /** The wave's name, or `fleet` for the last group. */
  readonly name: string;
  /** 0..n-1 for the waves in order, n for the fleet. */
  readonly index: number;
  /** Required node-affinity terms (ORed) of this group's DaemonSet. */
  readonly terms: NodeSelectorTermJson[];
}

/**
 * The requirement that matches exactly the nodes `req` does not match, missing keys included.
 * Gt/Lt have no such single requirement: their complement also holds nodes without the key or
 * with a non-integer value, and one node-selector term cannot OR requirements.
 */
export function negateRequirement(req: NodeSelectorRequirementJson): NodeSelectorRequirementJson {
  switch (req.operator) {
    case 'In':
      return { key: req.key, operator: 'NotIn', values: [...(req.values ?? [])] };
    case 'NotIn':
      return { key: req.key, operator: 'In', values: [...(req.values ?? [])] };
    case 'Exists':
      return { key: req.key, operator: 'DoesNotExist' };
    case 'DoesNotExist':
      return { key: req.key, operator: 'Exists' };
    default:
      throw new Error(`cannot negate the node requirement "${describe(req)}" in one requirement: `
        + `its complement also contains nodes without the label "${req.key}" (and nodes whose value is not an integer), `
        + 'and a node-selector term cannot OR two requirements. Use "In" with the explicit list of values, '
        + `or label the nodes with a wave label (${DEFAULT_WAVE_LABEL_KEY}) instead.`);
  }
}

/**
 * Required node-affinity terms of every group: waves in order, then the fleet.
 *
 * Wave k = each base term AND wave k AND NOT waves 0..k-1; fleet = each base term AND NOT every
 * wave. Requirements keep a fixed order: the base term's first, then wave k's, then the
 * negations in wave order. An empty `baseTerms` means "no base restriction".
 */
export function partitionTerms(waves: readonly WaveSpec[], baseTerms: readonly NodeSelectorTermJson[]): PartitionGroup[] {
  validateWaves(waves);
  baseTerms.forEach((term, i) => {
    if ((term.matchExpressions ?? []).length === 0 && (term.matchFields ?? []).length === 0) {
      throw new Error(`base node-affinity term ${i} is empty: Kubernetes matches no node with an empty term, `
        + 'but adding the wave requirements to it would make it match nodes. Remove the empty term.');
    }
  });
  const bases: readonly NodeSelectorTermJson[] = baseTerms.length > 0 ? baseTerms : [{}];

  const groups: PartitionGroup[] = waves.map((wave, k) => {
    const exclusions = waves.slice(0, k).map(exclusionOf);
    const terms: NodeSelectorTermJson[] = [];
    for (const base of bases) {
      for (const alternative of alternativesOf(wave)) {
        terms.push(combine(base, [alternative, ...exclusions]));
      }
    }
    return { name: wave.name, index: k, terms };
  });
  const fleetExclusions = waves.map(exclusionOf);
  groups.push({
    name: FLEET_GROUP,
    index: waves.length,
    terms: bases.map((base) => combine(base, fleetExclusions)),
  });
  return groups;
}

/** Errors for wave definitions that cannot form a partition. Called by partitionTerms. */
export function validateWaves(waves: readonly WaveSpec[]): void {
  if (waves.length === 0) {
    throw new Error('waves: at least one wave is required (without waves, deploy the agent as one DaemonSet)');
  }
  const names = new Set<string>();
  waves.forEach((wave, k) => {
    checkWaveName(wave.name, `waves[${k}].name`);
    if (names.has(wave.name)) {
      throw new Error(`waves[${k}].name: duplicate wave name "${wave.name}": each wave becomes its own DaemonSet; give every wave a different name`);
    }
    names.add(wave.name);
    checkRequirement(wave, k);
    for (let j = 0; j < k; j++) {
      const earlier = waves[j];
      if (sameRequirement(earlier, wave)) {
        throw new Error(`waves[${k}] ("${wave.name}"): its requirement "${describeWave(wave)}" duplicates wave "${earlier.name}"; `
          + 'a later wave with the same requirement would never own a node. Remove one of them.');
      }
      if (shadows(earlier, wave)) {
        throw new Error(`waves[${k}] ("${wave.name}"): every node "${describeWave(wave)}" selects is already owned by the earlier `
          + `wave "${earlier.name}" ("${describeWave(earlier)}"), so this wave would never own a node. Reorder or narrow the waves.`);
      }
    }
  });
}

/**
 * How many groups are promoted to the new version, 0..n+1 for n waves (the fleet is group n):
 * - a wave name: that wave and every earlier one (`fleet` means everything);
 * - a count k: the first k groups (0 = nothing promoted yet, n+1 = every wave and the fleet);
 * - `all`: every wave and the fleet (n+1).
 * Group i runs the new version exactly when i < the returned number.
 */
export function resolvePromotion(waves: readonly { readonly name: string }[], promoted: string | number): number {
  const all = waves.length + 1;
  if (typeof promoted === 'number') {
    if (!Number.isInteger(promoted) || promoted < 0 || promoted > all) {
      throw new Error(`promoted: ${promoted} is not a valid count of promoted groups: use an integer from 0 (nothing promoted) `
        + `to ${all} (the ${waves.length} wave(s) and the fleet), a wave name, or "all"`);
    }
    return promoted;
  }
  if (promoted === 'all' || promoted === FLEET_GROUP) return all;
  const index = waves.findIndex((wave) => wave.name === promoted);
  if (index < 0) {
    const valid = [...waves.map((wave) => wave.name), FLEET_GROUP, 'all'].map((name) => `"${name}"`).join(', ');
    throw new Error(`promoted: "${promoted}" is not a wave; valid names are ${valid} (or a count)`);
  }
  return index + 1;
}

export interface ArgoSyncWaveOptions {
  /**
   * Sync wave of the objects every group shares (Namespace, ServiceAccount, RBAC, ConfigMaps of
   * both versions). Group i's DaemonSet gets `base + 1 + 2i`, a gate after it `base + 2 + 2i`.
   * @default 0 (Argo CD's wave for unannotated objects, so those are applied with the shared ones)
   */
  readonly base?: number;
}

/** Sync wave of the objects all groups share: before any DaemonSet, so a wave never waits on its config. */
export function sharedSyncWave(options: ArgoSyncWaveOptions = {}): number {
  const base = options.base ?? 0;
  if (!Number.isInteger(base)) {
    throw new Error(`argo sync wave base: ${base} is not an integer; Argo CD sync waves are integers`);
  }
  return base;
}

/**
 * `argocd.argoproj.io/sync-wave` of group i's DaemonSet: base + 1 + 2i. Argo CD applies a sync wave
 * only once every earlier one is Healthy, so wave k+1 waits for wave k and the fleet comes last.
 * The numbers are two apart so that a gate after group i fits between (see gateSyncWave).
 */
export function argoSyncWave(groupIndex: number, options: ArgoSyncWaveOptions = {}): number {
  if (!Number.isInteger(groupIndex) || groupIndex < 0) {
    throw new Error(`argo sync wave: group index ${groupIndex} must be an integer >= 0 (waves 0..n-1, fleet n)`);
  }
  return sharedSyncWave(options) + 1 + 2 * groupIndex;
}

/**
 * Sync wave of the gate after wave i: base + 2 + 2i, after wave i's DaemonSet and before group
 * i+1's, so a failed gate stops the sync before the next group is applied.
 */
export function gateSyncWave(waveIndex: number, options: ArgoSyncWaveOptions = {}): number {
  return argoSyncWave(waveIndex, options) + 1;
}

/** Object name of a group's DaemonSet: `<name>-<wave>`, and the plain `<name>` for the fleet (so enabling waves keeps the existing DaemonSet). */
export function groupResourceName(baseName: string, groupName: string): string {
  return groupName === FLEET_GROUP ? baseName : `${baseName}-${groupName}`;
}

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Wave names become DaemonSet name suffixes and label values: DNS-1123 labels, and `fleet` is taken. */
export function checkWaveName(name: string, prop: string): void {
  if (typeof name !== 'string') {
    throw new Error(`${prop} must be a string such as "canary", got ${describeValue(name)}`);
  }
  if (name === FLEET_GROUP) {
    throw new Error(`${prop}: "${FLEET_GROUP}" is reserved for the nodes that match no wave; choose another wave name`);
  }
  if (name.length > 63 || !DNS1123_LABEL.test(name)) {
    throw new Error(`${prop}: "${name}" is not a DNS-1123 label (lower-case letters, digits and "-", `
      + 'starting and ending with a letter or digit, at most 63 characters); it becomes a DaemonSet name suffix and a label value');
  }
}

function checkRequirement(wave: WaveSpec, k: number): void {
  const req = wave.requirement;
  const prop = `waves[${k}].requirement ("${wave.name}")`;
  const values = req.values ?? [];
  if (!req.key) {
    throw new Error(`${prop}: the requirement needs a label key`);
  }
  if (wave.field) {
    if (req.key !== NODE_NAME_FIELD || req.operator !== 'In') {
      throw new Error(`${prop}: a field wave must be "${NODE_NAME_FIELD} In [hostnames]" (the only matchFields key Kubernetes accepts), got "${describe(req)}"`);
    }
  } else if (req.operator === 'Gt' || req.operator === 'Lt') {
    try {
      negateRequirement(req);
    } catch (e) {
      throw new Error(`${prop}: ${(e as Error).message}`);
    }
  } else if (req.operator !== 'In' && req.operator !== 'Exists') {
    throw new Error(`${prop}: "${describe(req)}" selects nodes by the absence of a label, so brand-new unlabelled nodes would join `
      + 'this wave instead of the fleet. A wave must be "In" on label values or "Exists" on a label.');
  }
  if (req.operator === 'In' && values.length === 0) {
    throw new Error(`${prop}: "In" needs at least one value; list the label values (or hostnames) of the wave's nodes`);
  }
  if (req.operator === 'Exists' && values.length > 0) {
    throw new Error(`${prop}: "Exists" takes no values (got ${JSON.stringify(values)}); use "In" to select label values`);
  }
  // What the API server refuses in a node selector (and a hostname no node can have).
  const syntax = wave.field
    ? values.flatMap((v, i) => checkDnsSubdomain(`hostname ${i}`, v))
    : [...checkLabelKey('key', req.key), ...values.flatMap((v, i) => checkLabelValue(`value ${i}`, v))];
  if (syntax.length > 0) throw new Error(`${prop}: ${syntax.join('; ')}`);
}

/** Requirements ORed to select the wave. matchFields In takes exactly one value, hence one term per hostname. */
function alternativesOf(wave: WaveSpec): Requirement[] {
  if (!wave.field) return [{ field: false, req: copy(wave.requirement) }];
  return (wave.requirement.values ?? []).map((host) => ({ field: true, req: { key: NODE_NAME_FIELD, operator: 'In', values: [host] } }));
}

/** Requirements ANDed to exclude the wave. matchFields NotIn takes exactly one value, hence one per hostname. */
function exclusionOf(wave: WaveSpec): Requirement[] {
  if (!wave.field) return [{ field: false, req: negateRequirement(wave.requirement) }];
  return (wave.requirement.values ?? []).map((host) => ({ field: true, req: { key: NODE_NAME_FIELD, operator: 'NotIn', values: [host] } }));
}

interface Requirement {
  readonly field: boolean;
  readonly req: NodeSelectorRequirementJson;
}

function combine(base: NodeSelectorTermJson, added: readonly (Requirement | Requirement[])[]): NodeSelectorTermJson {
  const flat = added.flat();
  const expressions = [...(base.matchExpressions ?? []).map(copy), ...flat.filter((r) => !r.field).map((r) => r.req)];
  const fields = [...(base.matchFields ?? []).map(copy), ...flat.filter((r) => r.field).map((r) => r.req)];
  return {
    ...(expressions.length > 0 ? { matchExpressions: expressions } : {}),
    ...(fields.length > 0 ? { matchFields: fields } : {}),
  };
}

function copy(req: NodeSelectorRequirementJson): NodeSelectorRequirementJson {
  return req.values === undefined
    ? { key: req.key, operator: req.operator }
    : { key: req.key, operator: req.operator, values: [...req.values] };
}

function sameRequirement(a: WaveSpec, b: WaveSpec): boolean {
  return Boolean(a.field) === Boolean(b.field)
    && a.requirement.key === b.requirement.key
    && a.requirement.operator === b.requirement.operator
    && sortedValues(a).join('\n') === sortedValues(b).join('\n');
}

/** `earlier` owns every node `later` selects: same key, and `Exists`, or `In` with a superset of the values. */
function shadows(earlier: WaveSpec, later: WaveSpec): boolean {
  if (Boolean(earlier.field) !== Boolean(later.field) || earlier.requirement.key !== later.requirement.key) return false;
  if (earlier.requirement.operator === 'Exists') return true;
  const owned = new Set(earlier.requirement.values ?? []);
  return earlier.requirement.operator === 'In' && later.requirement.operator === 'In'
    && (later.requirement.values ?? []).every((value) => owned.has(value));
}

function sortedValues(wave: WaveSpec): string[] {
  return [...new Set(wave.requirement.values ?? [])].sort();
}

function describeWave(wave: WaveSpec): string {
  return `${wave.field ? 'field ' : ''}${describe(wave.requirement)}`;
}

function describe(req: NodeSelectorRequirementJson): string {
  const values = req.values && req.values.length > 0 ? ` [${req.values.join(', ')}]` : '';
  return `${req.key} ${req.operator}${values}`;
}
