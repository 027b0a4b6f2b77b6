/**
 * From usage per node group to resource profiles: each group's distribution and VPA recommendation, which groups
 * hold too little data to say (MIN_PODS, MIN_HISTORY_DAYS), and the profiles that cover the groups the data
 * supports (groups within MERGE_TOLERANCE of each other share one profile; at most MAX_PROFILES). The profiles are
 * ProfileSpecs (src/waves/profiles.ts), so they partition the nodes exactly as the constructs render them.
 */
import { ABSENT } from './ingest';
import { oomBump, recommend, Recommendation, UsageState } from './recommender';
import { INSTANCE_CPU_LABEL, INSTANCE_TYPE_LABEL, NODE_POOL_LABEL } from '../../scheduling/types';
import { DEFAULT_PROFILE, profileProblems, ProfileSpec } from '../../waves/profiles';

/** A group with fewer pods than this is too thin to size on its own. */
export const MIN_PODS = 3;
/** ... or with less history than this, in days (VPA's confidence: the lesser of the time span and the samples read as one a minute). */
export const MIN_HISTORY_DAYS = 1;
/** Groups whose CPU and memory requests are within this fraction of each other share a profile. */
export const MERGE_TOLERANCE = 0.1;
/** The most profiles one agent gets (each is a DaemonSet per rollout wave): past it, the closest neighbours merge. */
export const MAX_PROFILES = 8;
/** The most distinct group values read per agent: past it, the command stops (exit 2). */
export const MAX_GROUPS = 10_000;

const MIB = 1024 * 1024;

export interface GroupBy {
  /** range: the label's value read as an integer (instance size); values: a list of values */
  readonly kind: 'range' | 'values';
  readonly key: string;
  /** how the CLI names it, and the ResourceProfileNodes factory the props use */
  readonly name: string;
}

/** The `--group-by` choices; `label=KEY` groups by any label's values. */
export function groupByOf(text: string): GroupBy | undefined {
  if (text === 'instance-size') return { kind: 'range', key: INSTANCE_CPU_LABEL, name: 'instance-size' };
  if (text === 'nodepool') return { kind: 'values', key: NODE_POOL_LABEL, name: 'nodepool' };
  if (text === 'instance-type') return { kind: 'values', key: INSTANCE_TYPE_LABEL, name: 'instance-type' };
  const label = /^label=(.+)$/.exec(text)?.[1];
  return label === undefined ? undefined : { kind: 'values', key: label, name: 'label' };
}

/** Requests and the memory limit to set, rounded up: millicores and MiB. */
export interface Sizing {
  readonly cpuMilli: number;
  readonly memoryMiB: number;
  readonly memoryLimitMiB: number;
}

export interface Distribution {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
}

export interface GroupReport {
  /** the label value ('' for nodes without the label) */
  readonly value: string;
  readonly pods: number;
  readonly cpuSamples: number;
  readonly memoryPeaks: number;
  readonly historyDays: number;
  readonly ooms: number;
  /** the most memory an OOM-killed container used before it was killed (its day's peak), bytes */
  readonly oomMemory: number;
  readonly restarts: number;
  readonly cpu: Distribution;
  readonly memory: Distribution;
  readonly recommendation: Recommendation;
  readonly sizing: Sizing;
  /** why the data is too thin to size this group on its own */
  readonly thin?: string;
  /** the profile that sizes its nodes (DEFAULT_PROFILE: the agent's own resources) */
  profile: string;
}

export interface ProfilePlan {
  readonly spec: ProfileSpec;
  sizing: Sizing;
  /** the group values it covers */
  readonly groups: readonly string[];
  /** thin groups whose own sizing raised it: a node of theirs never gets less than its own data asks */
  readonly raisedBy: string[];
}

export interface AgentSizing {
  readonly agent: string;
  readonly groups: readonly GroupReport[];
  readonly profiles: readonly ProfilePlan[];
  /** the agent's own resources: the nodes no profile selects */
  readonly defaultSizing: Sizing;
  /** how the default was found */
  readonly defaultFrom: 'data' | 'largest-group';
  /** groups with enough data */
  readonly supported: number;
}

function distribution(state: UsageState, plain: 'cpuPlain' | 'memoryPlain', max: number): Distribution {
  const h = state[plain];
  return { p50: h.percentile(0.5), p90: h.percentile(0.9), p99: h.percentile(0.99), max };
}

/** The recommendation as requests and a limit: the limit is VPA's upper bound, and above what OOM kills needed. */
export function sizingOf(state: UsageState, rec: Recommendation): Sizing {
  const cpuMilli = Math.max(1, Math.ceil(rec.target.cpu * 1000 - 1e-9));
  const memoryMiB = Math.ceil(rec.target.memory / MIB - 1e-9);
  const upper = Number.isFinite(rec.upperBound.memory) ? Math.ceil(rec.upperBound.memory / MIB - 1e-9) : 2 * memoryMiB;
  const oom = state.ooms > 0 ? Math.ceil(oomBump(state.oomMemory) / MIB) : 0;
  return { cpuMilli, memoryMiB, memoryLimitMiB: Math.max(upper, oom, memoryMiB) };
}

function thinReason(state: UsageState, pods: number, value: string, kind: GroupBy['kind']): string | undefined {
  if (value === ABSENT) return 'the nodes lack the label: no profile can select them';
  if (kind === 'range' && !/^-?\d{1,15}$/.test(value)) return 'the value is not an integer: a range cannot select it';
  if (pods < MIN_PODS) return `${pods} pod${pods === 1 ? '' : 's'} (fewer than ${MIN_PODS})`;
  const days = recommend(state).confidenceDays;
  if (days < MIN_HISTORY_DAYS) return `${days.toFixed(2)} days of history (less than ${MIN_HISTORY_DAYS})`;
  return undefined;
}

/** One report per group value, sorted: by integer value for a range, else by value. */
export function groupReports(states: ReadonlyMap<string, UsageState>, pods: ReadonlyMap<string, ReadonlySet<string>>, by: GroupBy): GroupReport[] {
  if (states.size > MAX_GROUPS) throw new Error(`${states.size} distinct values of ${by.key}, more than the ${MAX_GROUPS} read; group by another label`);
  const reports: GroupReport[] = [];
  for (const [value, state] of states) {
    const podCount = pods.get(value)?.size ?? 0;
    const rec = recommend(state);
    reports.push({
      value,
      pods: podCount,
      cpuSamples: state.cpuSamples,
      memoryPeaks: state.memoryPeakCount,
      historyDays: rec.confidenceDays,
      ooms: state.ooms,
      oomMemory: state.oomMemory,
      restarts: state.restarts,
      cpu: distribution(state, 'cpuPlain', state.cpuMax),
      memory: distribution(state, 'memoryPlain', state.memoryMax),
      recommendation: rec,
      sizing: sizingOf(state, rec),
      thin: thinReason(state, podCount, value, by.kind),
      profile: DEFAULT_PROFILE,
    });
  }
  const numeric = (v: string) => (/^-?\d{1,15}$/.test(v) ? Number(v) : Number.POSITIVE_INFINITY);
  return reports.sort((a, b) => (by.kind === 'range' ? numeric(a.value) - numeric(b.value) : 0) || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}

function close(a: number, b: number): boolean {
  return Math.abs(a - b) <= MERGE_TOLERANCE * Math.max(a, b);
}

function maxSizing(a: Sizing, b: Sizing): Sizing {
  return {
    cpuMilli: Math.max(a.cpuMilli, b.cpuMilli),
    memoryMiB: Math.max(a.memoryMiB, b.memoryMiB),
    memoryLimitMiB: Math.max(a.memoryLimitMiB, b.memoryLimitMiB),
  };
}

interface Segment {
  members: GroupReport[];
  sizing: Sizing;
}

/** Consecutive groups within MERGE_TOLERANCE share a segment; then the closest neighbours merge down to MAX_PROFILES. */
export function segments(supported: readonly GroupReport[]): Segment[] {
  const result: Segment[] = [];
  for (const g of supported) {
    const last = result[result.length - 1];
    if (last !== undefined && close(last.sizing.cpuMilli, g.sizing.cpuMilli) && close(last.sizing.memoryMiB, g.sizing.memoryMiB)) {
      last.members.push(g);
      last.sizing = maxSizing(last.sizing, g.sizing);
    } else {
      result.push({ members: [g], sizing: g.sizing });
    }
  }
  while (result.length > MAX_PROFILES) {
    let best = 0;
    for (let i = 1; i < result.length - 1; i++) {
      if (gap(result[i], result[i + 1]) < gap(result[best], result[best + 1])) best = i;
    }
    const [a, b] = [result[best], result[best + 1]];
    result.splice(best, 2, { members: [...a.members, ...b.members], sizing: maxSizing(a.sizing, b.sizing) });
  }
  return result;
}

function gap(a: Segment, b: Segment): number {
  return Math.abs(a.sizing.memoryMiB - b.sizing.memoryMiB) / Math.max(a.sizing.memoryMiB, b.sizing.memoryMiB, 1)
    + Math.abs(a.sizing.cpuMilli - b.sizing.cpuMilli) / Math.max(a.sizing.cpuMilli, b.sizing.cpuMilli, 1);
}

/** A DNS-1123 label from a label value, unique among `taken`, never `default`. */
export function profileName(base: string, taken: Set<string>): string {
  let name = base.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-+/g, '-').replace(/^-|-$/g, '').slice(0, 40).replace(/-$/, '');
  if (name === '' || name === DEFAULT_PROFILE) name = `group-${name || 'x'}`;
  let unique = name;
  for (let i = 2; taken.has(unique); i++) unique = `${name}-${i}`;
  taken.add(unique);
  return unique;
}

function rangeSpecs(segs: readonly Segment[], key: string, taken: Set<string>): ProfileSpec[] {
  const prefix = key === INSTANCE_CPU_LABEL ? 'cpu' : 'size';
  return segs.map((s, i) => {
    const min = i === 0 ? undefined : Number(s.members[0].value);
    const max = i === segs.length - 1 ? undefined : Number(segs[i + 1].members[0].value) - 1;
    const base = min === undefined ? `${prefix}-upto-${max}` : max === undefined ? `${prefix}-${min}-up` : min === max ? `${prefix}-${min}` : `${prefix}-${min}-${max}`;
    return { name: profileName(base, taken), key, min, max };
  });
}

function valueSpecs(segs: readonly Segment[], key: string, taken: Set<string>): ProfileSpec[] {
  return segs.map((s) => {
    const values = s.members.map((m) => m.value);
    const base = values.length === 1 ? values[0] : `${values[0]}-and-${values.length - 1}`;
    return { name: profileName(base, taken), key, values };
  });
}

/** Which profile sizes a group's nodes: the first whose range or values hold its value. */
export function owner(value: string, profiles: readonly ProfilePlan[]): string {
  for (const p of profiles) {
    if (p.spec.values !== undefined ? p.spec.values.includes(value)
      : /^-?\d{1,15}$/.test(value) && Number(value) >= (p.spec.min ?? -Infinity) && Number(value) <= (p.spec.max ?? Infinity)) return p.spec.name;
  }
  return DEFAULT_PROFILE;
}

/** A thin group a profile selects raises that profile to its own sizing where it asks more (never sized below its data). */
function raiseForThin(groups: readonly GroupReport[], profiles: ProfilePlan[]): void {
  for (const g of groups) {
    const p = profiles.find((x) => x.spec.name === g.profile);
    if (g.thin === undefined || p === undefined) continue;
    const raised = maxSizing(p.sizing, g.sizing);
    if (raised.cpuMilli !== p.sizing.cpuMilli || raised.memoryMiB !== p.sizing.memoryMiB || raised.memoryLimitMiB !== p.sizing.memoryLimitMiB) {
      p.sizing = raised;
      p.raisedBy.push(g.value);
    }
  }
}

/** The profiles of one agent, its default resources, and which profile sizes each group. */
export function planProfiles(agent: string, groups: GroupReport[], by: GroupBy, states: ReadonlyMap<string, UsageState>): AgentSizing {
  const supported = groups.filter((g) => g.thin === undefined);
  const ordered = by.kind === 'range' ? supported : [...supported].sort((a, b) => a.sizing.memoryMiB - b.sizing.memoryMiB || a.sizing.cpuMilli - b.sizing.cpuMilli);
  let segs = segments(ordered);
  const taken = new Set<string>();
  let specs = by.kind === 'range' ? rangeSpecs(segs, by.key, taken) : valueSpecs(segs, by.key, taken);
  if (profileProblems(specs).length > 0) { segs = []; specs = []; } // label values no profile can carry: one size for all
  let profiles: ProfilePlan[] = specs.map((spec, i) => ({ spec, sizing: segs[i].sizing, groups: segs[i].members.map((m) => m.value), raisedBy: [] }));
  for (const g of groups) g.profile = owner(g.value, profiles);
  raiseForThin(groups, profiles);
  const rest = new UsageState();
  let restPods = 0;
  for (const g of groups) if (g.profile === DEFAULT_PROFILE) { rest.mergeFrom(states.get(g.value)!); restPods += g.pods; }
  const restThin = restPods < MIN_PODS || recommend(rest).confidenceDays < MIN_HISTORY_DAYS;
  let defaultSizing = restThin ? undefined : sizingOf(rest, recommend(rest));
  if (profiles.length === 1 && defaultSizing === undefined) {
    // one size fits every node with data: the agent's own resources, no profile
    defaultSizing = profiles[0].sizing;
    profiles = [];
    for (const g of groups) g.profile = DEFAULT_PROFILE;
  }
  const largest = groups.reduce<Sizing | undefined>((m, g) => (m === undefined ? g.sizing : maxSizing(m, g.sizing)), undefined);
  return {
    agent,
    groups,
    profiles,
    supported: supported.length,
    defaultSizing: defaultSizing ?? largest ?? { cpuMilli: 25, memoryMiB: 250, memoryLimitMiB: 500 },
    defaultFrom: defaultSizing === undefined ? 'largest-group' : 'data',
  };
}
