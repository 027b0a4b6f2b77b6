/**
 * A pod's priority as the Priority admission plugin resolves it on create (plugin/pkg/admission/priority/admission.go,
 * admitPod and establishPriority), from the PriorityClasses of a manifest set and the two built-in classes.
 */
import { isObject, ManifestSet } from './manifests';

type PreemptionPolicy = 'Never' | 'PreemptLowerPriority';

/** A PriorityClass: its value and preemptionPolicy (defaulted to PreemptLowerPriority, as the API server does). */
export interface PriorityClassInfo {
  readonly value: number;
  readonly preemptionPolicy: PreemptionPolicy;
}

/**
 * The built-in classes (pkg/apis/scheduling/types.go: SystemCriticalPriority = 2000000000, system-node-critical =
 * SystemCriticalPriority + 1000), both PreemptLowerPriority.
 */
export const BUILT_IN_PRIORITY_CLASSES: ReadonlyMap<string, PriorityClassInfo> = new Map([
  ['system-cluster-critical', { value: 2_000_000_000, preemptionPolicy: 'PreemptLowerPriority' }],
  ['system-node-critical', { value: 2_000_001_000, preemptionPolicy: 'PreemptLowerPriority' }],
]);

/** The PriorityClasses a manifest set defines, and its globalDefault one (the lowest value when several, as getDefaultPriorityClass picks). */
export interface PriorityClasses {
  readonly byName: ReadonlyMap<string, PriorityClassInfo>;
  readonly globalDefault?: { readonly name: string } & PriorityClassInfo;
}

export function priorityClassesOf(set: ManifestSet): PriorityClasses {
  const byName = new Map<string, PriorityClassInfo>();
  let globalDefault: ({ name: string } & PriorityClassInfo) | undefined;
  for (const { object } of set.documents) {
    if (object.kind !== 'PriorityClass' || typeof object.metadata?.name !== 'string' || typeof object.value !== 'number') continue;
    const info: PriorityClassInfo = { value: object.value, preemptionPolicy: object.preemptionPolicy === 'Never' ? 'Never' : 'PreemptLowerPriority' };
    byName.set(object.metadata.name, info);
    if (object.globalDefault === true && (globalDefault === undefined || info.value < globalDefault.value)) {
      globalDefault = { name: object.metadata.name, ...info };
    }
  }
  return { byName, globalDefault };
}

/** What admission makes of a pod spec's priority fields. */
export interface PriorityResolution {
  /** spec.priority after admission; undefined when the named class is neither built in nor in the manifests */
  readonly priority?: number;
  /** the class named, or the globalDefault one admission writes in */
  readonly className?: string;
  /** the pod's preemptionPolicy after admission is Never: the scheduler never evicts for it */
  readonly preemptNever: boolean;
  /** why admission refuses every pod of the template (Forbidden), in the API server's words */
  readonly refusal?: string;
}

/**
 * establishPriority, then admitPod's two checks: with no priorityClassName the globalDefault class (else priority 0,
 * PreemptLowerPriority); with one, its class (NotFound: refused, unless the cluster has a class the manifests do
 * not hold: priority undefined). A spec.priority or spec.preemptionPolicy that differs from the class's is refused
 * ("must not be provided in pod spec"); one equal to it passes.
 */
export function resolvePriority(spec: unknown, classes: PriorityClasses): PriorityResolution {
  const podSpec = isObject(spec) ? spec : {};
  const named = typeof podSpec.priorityClassName === 'string' && podSpec.priorityClassName !== '' ? podSpec.priorityClassName : undefined;
  const found = named === undefined ? classes.globalDefault ?? { value: 0, preemptionPolicy: 'PreemptLowerPriority' as const }
    : BUILT_IN_PRIORITY_CLASSES.get(named) ?? classes.byName.get(named);
  const className = named ?? classes.globalDefault?.name;
  if (found === undefined) return { className, preemptNever: podSpec.preemptionPolicy === 'Never' };
  const base = { priority: found.value, className, preemptNever: found.preemptionPolicy === 'Never' };
  if (typeof podSpec.priority === 'number' && podSpec.priority !== found.value) {
    return { ...base, refusal: `the integer value of priority (${podSpec.priority}) must not be provided in pod spec; priority admission controller computed ${found.value} from the given PriorityClass name` };
  }
  if (typeof podSpec.preemptionPolicy === 'string' && podSpec.preemptionPolicy !== found.preemptionPolicy) {
    return {
      ...base,
      refusal: `the string value of PreemptionPolicy (${podSpec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${found.preemptionPolicy} from the given PriorityClass name`,
    };
  }
  return base;
}
