import { ResourceList } from './resources';
import { AgentPodTemplate, allocatableOf } from './template';
import { INSTANCE_TYPE_LABEL, NodeJson } from '../../scheduling/types';
import { compare } from '../coverage/manifests';

const BETA_INSTANCE_TYPE_LABEL = 'beta.kubernetes.io/instance-type';
/** Nodes without an instance-type label are grouped under this name. */
export const NO_INSTANCE_TYPE = '(no instance type)';

/** The agents' share of one instance type's nodes: the "DaemonSet tax" node pools are sized with. */
export interface InstanceTypeCost {
  readonly instanceType: string;
  readonly nodes: number;
  /** summed over the type's nodes (cpu in millicores, memory in bytes) */
  readonly allocatable: { readonly cpu: number; readonly memory: number };
  /** the agents' pods on those nodes, summed: requests, and limits */
  readonly requests: { readonly cpu: number; readonly memory: number };
  readonly limits: { readonly cpu: number; readonly memory: number };
  /** pods of the agents on those nodes, and how many of them leave cpu or memory without a limit */
  readonly agentPods: number;
  readonly unlimitedPods: number;
  /** requests / allocatable, in percent (0 when nothing is allocatable) */
  readonly cpuShare: number;
  readonly memoryShare: number;
}

/**
 * Per instance type (`node.kubernetes.io/instance-type`, else the beta label): the allocatable of its nodes and
 * what the agents' pods on them request and are limited to. `covered` is which nodes each DaemonSet has a pod on
 * (coverage's answer), so the tax follows the same placement as every other report.
 */
export function agentCost(nodes: readonly NodeJson[], covered: readonly { readonly id: string; readonly covered: readonly string[] }[],
  templates: ReadonlyMap<string, AgentPodTemplate>): InstanceTypeCost[] {
  const typeOf = new Map<string, string>();
  const groups = new Map<string, { nodes: number; alloc: ResourceList; req: ResourceList; lim: ResourceList; pods: number; unlimited: number }>();
  const group = (type: string) => {
    let g = groups.get(type);
    if (g === undefined) {
      g = { nodes: 0, alloc: { cpu: 0, memory: 0 }, req: { cpu: 0, memory: 0 }, lim: { cpu: 0, memory: 0 }, pods: 0, unlimited: 0 };
      groups.set(type, g);
    }
    return g;
  };
  for (const node of nodes) {
    const labels = node.metadata.labels ?? {};
    const type = labels[INSTANCE_TYPE_LABEL] ?? labels[BETA_INSTANCE_TYPE_LABEL] ?? NO_INSTANCE_TYPE;
    typeOf.set(node.metadata.name, type);
    const g = group(type);
    g.nodes++;
    const alloc = allocatableOf(node) ?? {};
    g.alloc.cpu += alloc.cpu ?? 0;
    g.alloc.memory += alloc.memory ?? 0;
  }
  for (const { id, covered: names } of covered) {
    const template = templates.get(id);
    if (template === undefined) continue;
    for (const name of names) {
      const type = typeOf.get(name);
      if (type === undefined) continue;
      const g = group(type);
      g.pods++;
      g.req.cpu += template.requests.cpu ?? 0;
      g.req.memory += template.requests.memory ?? 0;
      g.lim.cpu += template.limits.cpu ?? 0;
      g.lim.memory += template.limits.memory ?? 0;
      if (template.limits.cpu === undefined || template.limits.memory === undefined) g.unlimited++;
    }
  }
  const share = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 1000) / 10 : 0);
  return [...groups.entries()].sort(([a], [b]) => compare(a, b)).map(([instanceType, g]) => ({
    instanceType,
    nodes: g.nodes,
    allocatable: { cpu: g.alloc.cpu, memory: g.alloc.memory },
    requests: { cpu: g.req.cpu, memory: g.req.memory },
    limits: { cpu: g.lim.cpu, memory: g.lim.memory },
    agentPods: g.pods,
    unlimitedPods: g.unlimited,
    cpuShare: share(g.req.cpu, g.alloc.cpu),
    memoryShare: share(g.req.memory, g.alloc.memory),
  }));
}
