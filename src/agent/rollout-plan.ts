/**
 * The rollout plan of an agent: which DaemonSet each rollout group gets, with which version, node
 * affinity and pace. Internal: the construct renders it.
 */
import { AgentRelease, AgentRollout, ARGOCD_SYNC_WAVE } from './rollout';
import { UpdateStrategy, UpdateStrategyType } from './update-strategy';
import { NodeSelectorTermJson } from '../scheduling/types';
import { argoSyncWave, DEFAULT_WAVE_LABEL_KEY, FLEET_GROUP, groupResourceName, partitionTerms } from '../waves/partition';

/** One DaemonSet the rollout renders. */
export interface RolloutGroupPlan {
  readonly name: string;
  readonly id: string;
  readonly dsName: string;
  readonly release: AgentRelease;
  readonly promoted: boolean;
  readonly terms: NodeSelectorTermJson[];
  readonly strategy: UpdateStrategy;
  readonly annotations: { [key: string]: string };
}

export interface RolloutPlan {
  readonly groups: RolloutGroupPlan[];
  readonly problems: string[];
}

/** Which group renders which version, with which node affinity and pace. Pure: no constructs. */
export function planRollout(
  rollout: AgentRollout, current: AgentRelease, baseTerms: NodeSelectorTermJson[], agentPace: UpdateStrategy, agentName: string,
): RolloutPlan {
  const problems: string[] = [];
  const labelKey = rollout.labelKey ?? DEFAULT_WAVE_LABEL_KEY;
  let partition;
  let promotedCount;
  try {
    const specs = rollout.waves.map((w) => w._toSpec(labelKey));
    partition = partitionTerms(specs, baseTerms);
    promotedCount = rollout.promoted._resolve(specs);
  } catch (e) {
    return { groups: [], problems: [`rollout.${(e as Error).message}`] };
  }
  const previous: AgentRelease | undefined = rollout.previous ? { ...current, ...definedOnly(rollout.previous) } : undefined;
  if (previous && promotedCount < partition.length && JSON.stringify(previous) === JSON.stringify(current)) {
    problems.push('rollout.previous is identical to the current settings while some waves are held, so there is nothing to roll out; change the version, or drop `previous` once every group is promoted');
  }
  // A Map: a wave named like an Object.prototype member ("constructor") must find nothing.
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
    const strategy = paces.get(group.name)
      ?? (group.name === firstWave ? rollout.canaryPace ?? canaryDefault(agentPace) : agentPace);
    problems.push(...strategy.problems().map((m) => `rollout pace of "${group.name}": ${m}`));
    if (rollout.argoCdSyncWaves && strategy.type === UpdateStrategyType.ON_DELETE) {
      problems.push(`rollout.argoCdSyncWaves with an OnDelete update strategy on "${group.name}": Argo CD counts an OnDelete DaemonSet Healthy at once, so the sync waves would gate nothing; use a RollingUpdate pace or turn argoCdSyncWaves off`);
    }
    groups.push({
      name: group.name,
      id: group.name === FLEET_GROUP ? 'DaemonSet' : `DaemonSet-${group.name}`,
      dsName: groupResourceName(agentName, group.name),
      release: promoted ? current : previous!,
      promoted,
      terms: group.terms,
      strategy,
      annotations: rollout.argoCdSyncWaves ? { [ARGOCD_SYNC_WAVE]: `${argoSyncWave(group.index)}` } : {},
    });
  }
  return { groups, problems };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The canary goes one node at a time, unless the agent is replaced only by hand (OnDelete). */
function canaryDefault(agentPace: UpdateStrategy): UpdateStrategy {
  return agentPace.type === UpdateStrategyType.ON_DELETE ? agentPace : UpdateStrategy.oneAtATime();
}
