/**
 * Cluster waves: the order in which a change reaches the fleet's clusters, as Argo CD RollingSync
 * steps, and how it composes with the node waves inside each cluster. No cdk8s: pure data.
 */
import { nearestName } from '../util/nearest';

/** The Application label carrying the cluster's wave; the RollingSync steps match on it. */
export const CLUSTER_WAVE_LABEL = 'node-agents.cdk8s.io/cluster-wave';

/** One cluster wave as the fleet declares it, in order. */
export interface ClusterWaveSpec {
  readonly name: string;
  /** Argo CD `maxUpdate`: Applications of the step synced at once (a count or "N%"); undefined = all. */
  readonly maxUpdate?: number | string;
}

/** A cluster as the wave logic sees it. */
export interface WaveMember {
  readonly name: string;
  readonly wave: string;
}

/** One RollingSync step: the Applications of one cluster wave. */
export interface RollingSyncStepJson {
  readonly matchExpressions: Array<{ key: string; operator: 'In'; values: string[] }>;
  readonly maxUpdate?: number | string;
}

/**
 * The waves used when the fleet declares none: one canary cluster at a time, then a quarter of the
 * `early` clusters at a time, then the rest all at once. Waves no cluster is in are left out.
 */
export const DEFAULT_CLUSTER_WAVES: readonly ClusterWaveSpec[] = [
  { name: 'canary', maxUpdate: 1 },
  { name: 'early', maxUpdate: '25%' },
  { name: 'rest' },
];

/** The wave of a cluster that names none. */
export const DEFAULT_CLUSTER_WAVE = 'rest';

/** The waves the fleet rolls: the declared ones, or the defaults that have clusters. */
export function effectiveWaves(declared: readonly ClusterWaveSpec[] | undefined, clusters: readonly WaveMember[]): ClusterWaveSpec[] {
  if (declared) return [...declared];
  const used = new Set(clusters.map((c) => c.wave));
  return DEFAULT_CLUSTER_WAVES.filter((w) => used.has(w.name));
}

/** Problems with the waves against the clusters: every step matches a cluster, every cluster is in a step. */
export function waveProblems(
  waves: readonly ClusterWaveSpec[], clusters: readonly WaveMember[],
  /** The fleet's cluster waves, declared or the defaults, for the message naming the valid ones. */
  valid: { readonly names: readonly string[]; readonly defaults: boolean } = { names: waves.map((w) => w.name), defaults: false },
): string[] {
  const problems: string[] = [];
  const names = waves.map((w) => w.name);
  for (const name of new Set(names)) {
    if (names.filter((n) => n === name).length > 1) problems.push(`cluster wave "${name}" is declared twice`);
  }
  for (const wave of waves) {
    if (!clusters.some((c) => c.wave === wave.name)) {
      problems.push(`the RollingSync step of cluster wave "${wave.name}" matches no Application: no cluster is in that wave; remove it from clusterWaves or put a cluster in it`);
    }
    problems.push(...maxUpdateProblems(wave));
  }
  for (const cluster of clusters) {
    if (!names.includes(cluster.wave)) {
      const nearest = nearestName(cluster.wave, valid.names);
      problems.push(`cluster "${cluster.name}" is in wave "${cluster.wave}", which is not a cluster wave of the fleet: its Application would be in no RollingSync step `
        + `and never sync. The cluster waves are ${valid.names.map((n) => `"${n}"`).join(', ') || 'none'}${valid.defaults ? ' (the defaults, as clusterWaves is unset)' : ' (clusterWaves)'}`
        + `${nearest ? `; did you mean "${nearest}"?` : '; move the cluster to one of them, or declare the wave in clusterWaves'}`);
    }
  }
  return problems;
}

function maxUpdateProblems(wave: ClusterWaveSpec): string[] {
  const m = wave.maxUpdate;
  if (m === undefined) return [];
  if (typeof m === 'number') {
    return Number.isInteger(m) && m >= 0 ? [] : [`cluster wave "${wave.name}": maxUpdate ${m} must be a non-negative integer`];
  }
  const percent = /^(\d+)%$/.exec(m);
  return percent && Number(percent[1]) <= 100 ? [] : [`cluster wave "${wave.name}": maxUpdate "${m}" must be a percentage from 0% to 100%`];
}

/** The RollingSync steps, one per wave, in wave order. */
export function rollingSyncSteps(waves: readonly ClusterWaveSpec[]): RollingSyncStepJson[] {
  return waves.map((wave) => ({
    matchExpressions: [{ key: CLUSTER_WAVE_LABEL, operator: 'In' as const, values: [wave.name] }],
    ...(wave.maxUpdate === undefined ? {} : { maxUpdate: wave.maxUpdate }),
  }));
}

/** Clusters in rollout order: by wave, then by name (the generator's element order). */
export function clustersInWaveOrder<T extends WaveMember>(waves: readonly ClusterWaveSpec[], clusters: readonly T[]): T[] {
  const rank = (c: WaveMember) => {
    const index = waves.findIndex((w) => w.name === c.wave);
    return index < 0 ? waves.length : index;
  };
  return [...clusters].sort((a, b) => rank(a) - rank(b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * How far one cluster is promoted at a fleet stage: the new version has passed every cluster wave
 * before the stage's, is in the stage's cluster wave up to `nodeGroup`, and nowhere after.
 */
export type ClusterPromotion = { readonly kind: 'all' } | { readonly kind: 'none' } | { readonly kind: 'through'; readonly nodeGroup: string };

/** A fleet stage: `all`, `none`, or the new version through `nodeGroup` of the clusters in `clusterWave`. */
export type FleetStageSpec = { readonly kind: 'all' } | { readonly kind: 'none' } | { readonly kind: 'through'; readonly clusterWave: string; readonly nodeGroup: string };

/** What is wrong with a stage in a fleet of this wave order (FleetCluster.promotion raises it as its own). */
export function stageProblems(stage: FleetStageSpec, waveOrder: readonly string[]): string[] {
  if (stage.kind !== 'through' || waveOrder.includes(stage.clusterWave)) return [];
  return [`fleet stage: "${stage.clusterWave}" is not a cluster wave; valid names are ${waveOrder.map((w) => `"${w}"`).join(', ')}`];
}

/** The promotion of a cluster in `clusterWave` at `stage`, given the fleet's wave order; a stage with problems is thrown as its first. */
export function clusterPromotion(stage: FleetStageSpec, waveOrder: readonly string[], clusterWave: string): ClusterPromotion {
  const problems = stageProblems(stage, waveOrder);
  if (problems.length > 0) throw new Error(problems[0]);
  if (stage.kind !== 'through') return stage;
  const stageIndex = waveOrder.indexOf(stage.clusterWave);
  const index = waveOrder.indexOf(clusterWave);
  if (index < stageIndex) return { kind: 'all' };
  if (index > stageIndex) return { kind: 'none' };
  return { kind: 'through', nodeGroup: stage.nodeGroup };
}

/**
 * Every stage of a fleet-wide rollout in commit order: each cluster wave in turn, and inside it each
 * node group (node waves, then `fleet`). The last stage of one cluster wave (its `fleet` group) comes
 * before the first of the next, so a version passes every node wave of the canary clusters before it
 * reaches any node of a later cluster wave.
 */
export function fleetStages(waveOrder: readonly string[], nodeGroups: readonly string[]): Array<{ clusterWave: string; nodeGroup: string }> {
  return waveOrder.flatMap((clusterWave) => nodeGroups.map((nodeGroup) => ({ clusterWave, nodeGroup })));
}
