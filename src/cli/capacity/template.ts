import { hasPodLevelResources, podLimits, podRequests, ResourceList, resourceList } from './resources';
import { NodeJson } from '../../scheduling/types';
import { entryOf } from '../../util/maps';
import { DaemonSetInfo, isObject, ManifestSet } from '../coverage/manifests';
import { NO_ALLOCATABLE, NodeFacts } from '../coverage/nodes';
import { priorityClassesOf, resolvePriority } from '../coverage/priority';

/** What a capacity check needs of a DaemonSet's pod template. */
export interface AgentPodTemplate {
  readonly id: string;
  readonly requests: ResourceList;
  readonly limits: ResourceList;
  /**
   * The pod's priority as the Priority admission plugin resolves it (coverage/priority.ts resolvePriority): the
   * named class (built-in, or a PriorityClass of the manifests), else a globalDefault PriorityClass of the
   * manifests, else 0. Undefined when the class is named but not found: preemption cannot be judged.
   */
  readonly priority?: number;
  /** the class named, or the globalDefault class admission gives a pod that names none */
  readonly priorityClassName?: string;
  /** preemptionPolicy Never (of its class; a pod's own differing value is refused by admission): the scheduler never evicts for it */
  readonly preemptNever: boolean;
  /** the template sets pod-level spec.resources (counted in requests and limits when `podLevel` was on) */
  readonly podLevelResources: boolean;
}

/**
 * The pod templates of a manifest set's DaemonSets, by id; `podLevel`: the scheduler's PodLevelResources gate
 * (pod-level spec.resources counted, see podRequests).
 */
export function podTemplates(set: ManifestSet, podLevel = true): Map<string, AgentPodTemplate> {
  const classes = priorityClassesOf(set);
  const byId = new Map<string, AgentPodTemplate>();
  const ids = new Set(set.daemonSets.map((d: DaemonSetInfo) => d.id));
  for (const { object } of set.documents) {
    if (object.kind !== 'DaemonSet') continue;
    const id = `${object.metadata?.namespace ?? 'default'}/${object.metadata?.name}`;
    if (!ids.has(id)) continue;
    const spec = isObject(object.spec) && isObject(object.spec.template) && isObject(object.spec.template.spec) ? object.spec.template.spec : {};
    const resolved = resolvePriority(spec, classes);
    byId.set(id, {
      id,
      requests: podRequests(spec, podLevel),
      limits: podLimits(spec, podLevel),
      priority: resolved.priority,
      priorityClassName: resolved.className,
      preemptNever: resolved.preemptNever,
      podLevelResources: hasPodLevelResources(spec),
    });
  }
  return byId;
}

/**
 * A reader of nodes' allocatable (allocatableOf from node facts) that parses each distinct listing once: a fleet
 * has a few instance types, so 130k nodes share a few lists instead of holding one each. Lists returned are shared:
 * never written to.
 */
export function allocatableReader(): (node: NodeFacts) => ResourceList | undefined {
  const seen = new Map<string, ResourceList>();
  return (node) => {
    const listed = node.allocatable;
    if (listed === NO_ALLOCATABLE) return undefined;
    // the type is in the key: 8 and '8' read alike, ['8'] (not a quantity) does not
    let key = '';
    for (const name in listed) key += `${name}\u0000${typeof listed[name]}\u0000${listed[name]}\u0000`;
    return entryOf(seen, key, () => resourceList(listed));
  };
}

/** status.allocatable of a node as `kubectl get nodes -o json` prints it; undefined when the inventory has none. */
export function allocatableOf(node: NodeJson): ResourceList | undefined {
  const status = (node as { status?: { allocatable?: unknown } }).status;
  return isObject(status?.allocatable) ? resourceList(status!.allocatable) : undefined;
}
