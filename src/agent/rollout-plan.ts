/**
 * The rollout plan of an agent: which DaemonSet each rollout group gets, with which version, node
 * affinity and pace. Internal: the construct renders it.
 */
import { AgentRollout, ARGOCD_SYNC_WAVE } from './rollout';
import { UpdateStrategy, UpdateStrategyType } from './update-strategy';
import { NodeSelectorTermJson } from '../scheduling/types';
import { checkLabelKey } from '../validation/values';
import { argoSyncWave, DEFAULT_WAVE_LABEL_KEY, FLEET_GROUP, groupResourceName, partitionTerms, WAVE_INDEX_ANNOTATION } from '../waves/partition';

/** One DaemonSet the rollout renders. */
export interface RolloutGroupPlan {
  readonly name: string;
  readonly id: string;
  readonly dsName: string;
  /** Whether the group runs the current release (else the previous one). */
  readonly promoted: boolean;
  readonly terms: NodeSelectorTermJson[];
  readonly strategy: UpdateStrategy;
  readonly annotations: { [key: string]: string };
}

export interface RolloutPlan {
  readonly groups: RolloutGroupPlan[];
  readonly problems: string[];
}

/** The parts of one release the plan needs. */
export interface PlannedRelease {
  /** The release's own node-affinity term (virtual nodes, node requirements). */
  readonly baseTerms: NodeSelectorTermJson[];
  /** The release's updateStrategy: the pace of every group the rollout gives no pace of its own. */
  readonly pace: UpdateStrategy;
}

/**
 * Which group renders which release, with which node affinity and pace. Pure: no constructs.
 * `identical` says the previous release renders exactly like the current one.
 */
export function planRollout(
  rollout: AgentRollout, current: PlannedRelease, previous: PlannedRelease | undefined, identical: boolean, agentName: string,
): RolloutPlan {
  const problems: string[] = [];
  const labelKey = rollout.labelKey ?? DEFAULT_WAVE_LABEL_KEY;
  // Checked here, where the prop is named: each wave's requirement would otherwise report it as its own.
  const keyProblems = checkLabelKey('rollout.labelKey', labelKey);
  if (keyProblems.length > 0) return { groups: [], problems: keyProblems.map((m) => `${m}; it is the node label holding each node's wave name, e.g. "${DEFAULT_WAVE_LABEL_KEY}"`) };
  let partition;
  let previousPartition;
  let promotedCount;
  try {
    const specs = rollout.waves.map((w) => w._toSpec(labelKey));
    // Each release keeps its own node requirements: the groups stay disjoint (wave membership is), and
    // a held group covers exactly the nodes the previous release covered there.
    partition = partitionTerms(specs, current.baseTerms);
    previousPartition = previous ? partitionTerms(specs, previous.baseTerms) : undefined;
    promotedCount = rollout.promoted._resolve(specs);
  } catch (e) {
    return { groups: [], problems: [`rollout.${(e as Error).message}`] };
  }
  if (previous && promotedCount < partition.length && identical) {
    problems.push('rollout.previous renders exactly like the current release while some waves are held, so there is nothing to roll out; give the previous version\'s props to `previous`, or drop `previous` once every group is promoted');
  }
  // A Map: a wave named like an Object.prototype member ("constructor") must not find one.
  const paces = new Map<string, UpdateStrategy>(Object.entries(rollout.wavePace ?? {}));
  const firstWave = rollout.waves[0]?.name;
  for (const name of paces.keys()) {
    if (!rollout.waves.some((w) => w.name === name) && name !== FLEET_GROUP) {
      problems.push(`rollout.wavePace names "${name}", which is not a wave; valid names are ${rollout.waves.map((w) => `"${w.name}"`).join(', ')} or "fleet"`);
    }
  }
  const groups: RolloutGroupPlan[] = [];
  for (const group of partition) {
    const promoted = group.index < promotedCount;
    if (!promoted && !previous) continue;
    const release = promoted ? current : previous!;
    const strategy = paces.get(group.name)
      ?? (group.name === firstWave ? rollout.canaryPace ?? canaryDefault(release.pace) : release.pace);
    problems.push(...strategy.problems().map((m) => `rollout pace of "${group.name}": ${m}`));
    if (rollout.argoCdSyncWaves && strategy.type === UpdateStrategyType.ON_DELETE) {
      problems.push(`rollout.argoCdSyncWaves with an OnDelete update strategy on "${group.name}": Argo CD counts an OnDelete DaemonSet Healthy at once, so the sync waves would gate nothing; use a RollingUpdate pace or turn argoCdSyncWaves off`);
    }
    groups.push({
      name: group.name,
      id: group.name === FLEET_GROUP ? 'DaemonSet' : `DaemonSet-${group.name}`,
      dsName: groupResourceName(agentName, group.name),
      promoted,
      terms: promoted ? group.terms : previousPartition![group.index].terms,
      strategy,
      annotations: {
        ...(rollout.argoCdSyncWaves ? { [ARGOCD_SYNC_WAVE]: `${argoSyncWave(group.index)}` } : {}),
        [WAVE_INDEX_ANNOTATION]: String(group.index),
      },
    });
  }
  return { groups, problems };
}

/** The canary goes one node at a time, unless the agent is replaced only by hand (OnDelete). */
function canaryDefault(agentPace: UpdateStrategy): UpdateStrategy {
  return agentPace.type === UpdateStrategyType.ON_DELETE ? agentPace : UpdateStrategy.oneAtATime();
}
