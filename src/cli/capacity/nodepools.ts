/**
 * The agents on nodes that do not exist yet: for every Karpenter NodePool and every instance type it may launch, which
 * DaemonSets of a tree would run on such a node, what they request, and whether that fits and leaves room. Karpenter
 * sizes a node for pending pods plus "daemonset overhead" (kubernetes-sigs/karpenter
 * pkg/controllers/provisioning/scheduling/scheduler.go, buildDaemonOverheadGroups / isDaemonPodCompatible): the
 * DaemonSets whose node affinity the NodeClaim template's requirements and the instance type's satisfy and that
 * tolerate the template's `taints` (not its `startupTaints`), each counted with its pod's requests (an existing pod
 * of the DaemonSet, else its template with limits merged into requests: pkg/utils/daemonset PodForDaemonSet).
 * A pool's future node is a set of requirements, as Karpenter has it (karpenter-requirements.ts): the template's
 * requirements and labels, and the instance type's (computeRequirements), where a key left open (the zone) allows
 * every value. A DaemonSet is counted when its pod's requirements are Compatible with them (well-known labels may be
 * undefined) and it tolerates the pool's taints (the DaemonSet controller's tolerations added, as coverage does). Pure.
 */
import { CapacityFinding } from './check';
import { Allocatable, formulaAllocatable, InstanceTypeInfo, instanceTypeLabels } from './instance-types';
import { addRequirement, compatible, intersects, KarpenterRequirements, requirementOf, requirementsOf } from './karpenter-requirements';
import { admittedPodSpec, limitRangeDefaults } from './limit-range';
import { NodePoolSpec } from './nodepool-spec';
import { formatAmount, podRequests, ResourceList } from './resources';
import { allocatableOf } from './template';
import { requirementMatches } from '../../scheduling/node-affinity';
import { controllerAddedTolerations, tolerationCheck } from '../../scheduling/tolerations';
import { NodeJson } from '../../scheduling/types';
import { entryOf } from '../../util/maps';
import { CoverageReport } from '../coverage/analysis';
import { compare, DaemonSetInfo, isObject, ManifestSet } from '../coverage/manifests';
import { profileOf } from '../coverage/profiles';

/** Karpenter's labels for a node before it joins, which a DaemonSet may select (NodeClaimTemplate: registered, initialized). */
const KARPENTER_LIFECYCLE_LABELS = { 'karpenter.sh/registered': 'true', 'karpenter.sh/initialized': 'true' };
/** The default of `--max-overhead`: the agents may take at most this share of the smallest node's cpu or memory. */
export const DEFAULT_MAX_OVERHEAD_PERCENT = 25;

/** One agent's pod on a pool's node. */
export interface PoolAgent {
  readonly daemonSet: string;
  readonly profile: string;
  /** what its pods request once admitted (the namespace's LimitRange defaults applied) */
  readonly requests: ResourceList;
  /** what Karpenter counts before the DaemonSet has a pod: its template, limits merged into requests */
  readonly karpenterRequests: ResourceList;
  /** the LimitRanges that change its requests */
  readonly limitRanges: readonly string[];
}

export interface PoolInstanceType {
  readonly name: string;
  readonly vcpu: number;
  readonly memoryMiB: number;
  readonly allocatable: ResourceList;
  readonly source: string;
  readonly agents: readonly PoolAgent[];
  /** the agents' requests summed (cpu in millicores, memory in bytes, pods: one per agent) */
  readonly requests: ResourceList;
  readonly karpenterRequests: ResourceList;
  readonly cpuShare: number;
  readonly memoryShare: number;
  /** what does not fit: `cpu: needs 2, 1930m allocatable`, empty when the agents fit */
  readonly shortfall: readonly string[];
  /** DaemonSets that wait for a startup taint to go before their pod starts (the pool's taints they tolerate) */
  readonly startupWaits: readonly string[];
}

export interface PoolReport {
  readonly name: string;
  readonly instanceTypes: readonly PoolInstanceType[];
  /** nodes of the inventory launched by the pool (label karpenter.sh/nodepool) */
  readonly existingNodes: number;
}

/** A finding of `plan --nodepools`, in the shape of plan's findings. */
export interface NodePoolFinding {
  readonly kind: 'node-pool';
  readonly severity: 'error' | 'warning';
  /** agents-do-not-fit, overhead-share, limit-range, exists-toleration, existing-nodes, no-instance-type, catalog-in-nodepools */
  readonly cause: string;
  readonly pool: string;
  readonly daemonSets: readonly string[];
  readonly instanceTypes: readonly string[];
  readonly nodes: readonly string[];
  readonly message: string;
  readonly fix: string;
}

export interface NodePoolInput {
  readonly pools: readonly NodePoolSpec[];
  readonly catalog: readonly InstanceTypeInfo[];
  /** the tree applied (plan's after-tree) and the one running now, to tell new DaemonSets */
  readonly tree: ManifestSet;
  readonly before?: ManifestSet;
  /** the nodes that exist: their allocatable by instance type, and the pools' nodes today */
  readonly inventory: readonly NodeJson[];
  /** the tree's coverage of the inventory (which agents run on the pools' nodes today) */
  readonly coverage?: CoverageReport;
  /** plan's --pods findings, when given: an agent that never fits on a pool's existing node */
  readonly capacity?: readonly CapacityFinding[];
  readonly maxOverheadPercent?: number;
  /** the scheduler counts pod-level resources (PodLevelResources) */
  readonly podLevel?: boolean;
  /** the Karpenter whose daemonset overhead is modelled (DEFAULT_KARPENTER_VERSION) */
  readonly karpenterVersion?: KarpenterVersion;
}

/** Per pool and instance type: the agents, their overhead, and the findings. */
export function nodePoolReport(input: NodePoolInput): { pools: PoolReport[]; findings: NodePoolFinding[] } {
  const requests = agentRequests(input.tree, input.podLevel ?? true);
  const measured = measuredAllocatable(input.inventory);
  const pools: PoolReport[] = [];
  const findings: NodePoolFinding[] = [];
  for (const pool of input.pools) {
    const types = input.catalog.filter((t) => mayLaunch(pool, t))
      .sort((a, b) => a.vcpu - b.vcpu || a.memoryMiB - b.memoryMiB || compare(a.name, b.name));
    const version = input.karpenterVersion ?? DEFAULT_KARPENTER_VERSION;
    const instanceTypes = types.length === 0 ? [] : simulate(pool, types, input.tree, requests, measured, version);
    const existing = input.inventory.filter((n) => n.metadata.labels?.['karpenter.sh/nodepool'] === pool.name).map((n) => n.metadata.name);
    pools.push({ name: pool.name, instanceTypes, existingNodes: existing.length });
    findings.push(...poolFindings(pool, instanceTypes, input, existing));
  }
  return { pools, findings };
}

/** The requirements on labels an instance type defines must hold; those on other keys (zone, capacity type) cannot be told here. */
function mayLaunch(pool: NodePoolSpec, type: InstanceTypeInfo): boolean {
  const labels = instanceTypeLabels(type);
  return pool.requirements.every((r) => labels[r.key] === undefined && r.operator !== 'DoesNotExist' ? true : requirementMatches(r, labels));
}

/** Each DaemonSet's requests as admitted and as Karpenter counts them from the template. */
interface AgentRequests {
  readonly requests: ResourceList;
  readonly karpenter: ResourceList;
  readonly limitRanges: string[];
}

function agentRequests(tree: ManifestSet, podLevel: boolean): Map<string, AgentRequests> {
  const defaults = limitRangeDefaults(tree);
  const result = new Map<string, AgentRequests>();
  for (const { object } of tree.documents) {
    if (object.kind !== 'DaemonSet') continue;
    const namespace = object.metadata?.namespace ?? 'default';
    const template = isObject(object.spec) && isObject(object.spec.template) ? object.spec.template : {};
    const spec = isObject(template.spec) ? template.spec : {};
    const karpenter = podRequests(spec, podLevel);
    const requests = podRequests(admittedPodSpec(spec, defaults.get(namespace)), podLevel);
    const changed = ['cpu', 'memory'].some((r) => (requests[r] ?? 0) !== (karpenter[r] ?? 0));
    result.set(`${namespace}/${object.metadata?.name}`, { requests, karpenter, limitRanges: changed ? [...defaults.get(namespace)!.from] : [] });
  }
  return result;
}

/** status.allocatable of an inventory node per instance type (the smallest listed), with the node's name. */
function measuredAllocatable(inventory: readonly NodeJson[]): Map<string, Allocatable> {
  const result = new Map<string, Allocatable>();
  for (const node of inventory) {
    const type = node.metadata.labels?.['node.kubernetes.io/instance-type'];
    const allocatable = allocatableOf(node);
    if (type === undefined || allocatable?.cpu === undefined || allocatable.memory === undefined) continue;
    const known = result.get(type);
    if (known === undefined || allocatable.memory < (known.resources.memory ?? 0)) result.set(type, { resources: allocatable, source: `node ${node.metadata.name}` });
  }
  return result;
}

/**
 * The DaemonSets covering each node, in the report's order: one pass over the coverage (a search of every
 * DaemonSet's covered list per node was quadratic in the catalog's instance types: 10,000 types took 20 s).
 */
function coveringByNode(report: CoverageReport): Map<string, DaemonSetInfo[]> {
  const result = new Map<string, DaemonSetInfo[]>();
  for (const d of report.daemonSets) for (const node of d.covered) entryOf(result, node, () => []).push(d.info);
  return result;
}

/** The Karpenter versions whose daemonset overhead differs (kubernetes-sigs/karpenter#2975, released in v1.14). */
export type KarpenterVersion = '1.13' | '1.14';
export const KARPENTER_VERSIONS: readonly KarpenterVersion[] = ['1.13', '1.14'];
export const DEFAULT_KARPENTER_VERSION: KarpenterVersion = '1.14';

/** Keys every offering defines (computeRequirements: zone, region, capacity type from the offerings): any value. */
const OFFERING_KEYS = ['topology.kubernetes.io/zone', 'topology.kubernetes.io/region', 'karpenter.sh/capacity-type'];
/** Keys computeRequirements sets DoesNotExist on a type without the device. */
const DEVICE_KEYS = ['karpenter.k8s.aws/instance-gpu-name', 'karpenter.k8s.aws/instance-gpu-manufacturer', 'karpenter.k8s.aws/instance-gpu-count',
  'karpenter.k8s.aws/instance-gpu-memory', 'karpenter.k8s.aws/instance-accelerator-name', 'karpenter.k8s.aws/instance-accelerator-manufacturer',
  'karpenter.k8s.aws/instance-accelerator-count'];

/** The NodeClaim template's requirements: the pool's requirements and its template's labels (NewNodeClaimTemplate). */
function templateRequirements(pool: NodePoolSpec): KarpenterRequirements {
  const result = requirementsOf(pool.requirements);
  for (const [key, value] of Object.entries({ ...KARPENTER_LIFECYCLE_LABELS, ...pool.labels })) addRequirement(result, key, requirementOf({ key, operator: 'In', values: [value] }));
  return result;
}

/** The instance type's requirements (computeRequirements): its labels, any zone, region and capacity type, no absent device. */
function instanceTypeRequirements(type: InstanceTypeInfo): KarpenterRequirements {
  const labels = instanceTypeLabels(type);
  const result = requirementsOf([...OFFERING_KEYS.map((key) => ({ key, operator: 'Exists' as const })),
    ...DEVICE_KEYS.filter((key) => labels[key] === undefined).map((key) => ({ key, operator: 'DoesNotExist' as const }))]);
  for (const [key, value] of Object.entries(labels)) addRequirement(result, key, requirementOf({ key, operator: 'In', values: [value] }));
  return result;
}

/**
 * NewStrictPodRequirements, one per required node affinity term (isDaemonPodCompatible drops the first term and tries
 * the next until one is compatible): the nodeSelector and the term's matchExpressions.
 */
function podRequirements(info: DaemonSetInfo): KarpenterRequirements[] {
  const selector = Object.entries(info.nodeSelector).map(([key, value]) => ({ key, operator: 'In' as const, values: [value] }));
  const terms = info.requiredTerms === undefined || info.requiredTerms.length === 0 ? [{}] : info.requiredTerms;
  return terms.map((term) => requirementsOf([...selector, ...(term.matchExpressions ?? [])]));
}

/**
 * isDaemonPodCompatible: the pod's requirements Compatible with the template's (well-known labels may be undefined);
 * from v1.14 (kubernetes-sigs/karpenter#2975) also Intersecting the instance type's, so each type counts its own.
 */
function daemonPodCompatible(version: KarpenterVersion, template: KarpenterRequirements, type: KarpenterRequirements | undefined,
  pod: readonly KarpenterRequirements[]): boolean {
  return pod.some((term) => compatible(template, term) && (version === '1.13' || type === undefined || intersects(type, term)));
}

/** Per instance type, the DaemonSets Karpenter counts (tolerating the pool's taints) and those a startup taint delays. */
function placement(pool: NodePoolSpec, tree: ManifestSet, version: KarpenterVersion) {
  const template = templateRequirements(pool);
  const hard = pool.taints.filter((t) => t.effect !== 'PreferNoSchedule');
  const prepared = tree.daemonSets.map((info) => {
    const tolerates = tolerationCheck([...info.tolerations, ...controllerAddedTolerations(info.hostNetwork)]);
    return { info, pod: podRequirements(info), tolerated: hard.every(tolerates), waits: pool.startupTaints.some((t) => t.effect !== 'PreferNoSchedule' && !tolerates(t)) };
  }).filter((d) => d.tolerated && daemonPodCompatible(version, template, undefined, d.pod)).sort((a, b) => compare(a.info.id, b.info.id));
  return (type: InstanceTypeInfo): { infos: DaemonSetInfo[]; waits: Set<string> } => {
    const own = instanceTypeRequirements(type);
    const on = prepared.filter((d) => daemonPodCompatible(version, template, own, d.pod));
    return { infos: on.map((d) => d.info), waits: new Set(on.filter((d) => d.waits).map((d) => d.info.id)) };
  };
}

function simulate(pool: NodePoolSpec, types: readonly InstanceTypeInfo[], tree: ManifestSet,
  requests: ReadonlyMap<string, AgentRequests>, measured: ReadonlyMap<string, Allocatable>, version: KarpenterVersion): PoolInstanceType[] {
  const placed = placement(pool, tree, version);
  return types.map((type) => {
    const { infos, waits } = placed(type);
    const agents = infos.map((info): PoolAgent => {
      const r = requests.get(info.id) ?? { requests: {}, karpenter: {}, limitRanges: [] };
      return { daemonSet: info.id, profile: profileOf(info), requests: r.requests, karpenterRequests: r.karpenter, limitRanges: r.limitRanges };
    });
    const allocatable: Allocatable = type.allocatable !== undefined ? { resources: type.allocatable, source: 'catalog' }
      : measured.get(type.name) ?? { resources: formulaAllocatable(type, pool.kubelet), source: 'formula' };
    const sum = (pick: (a: PoolAgent) => ResourceList): ResourceList => ({
      cpu: agents.reduce((s, a) => s + (pick(a).cpu ?? 0), 0),
      memory: agents.reduce((s, a) => s + (pick(a).memory ?? 0), 0),
      pods: agents.length,
    });
    const total = sum((a) => a.requests);
    const share = (r: string) => ((allocatable.resources[r] ?? 0) > 0 ? Math.round((total[r] / allocatable.resources[r]) * 1000) / 10 : 0);
    return {
      name: type.name,
      vcpu: type.vcpu,
      memoryMiB: type.memoryMiB,
      allocatable: allocatable.resources,
      source: allocatable.source,
      agents,
      requests: total,
      karpenterRequests: sum((a) => a.karpenterRequests),
      cpuShare: share('cpu'),
      memoryShare: share('memory'),
      shortfall: ['cpu', 'memory', 'pods'].filter((r) => allocatable.resources[r] !== undefined && total[r] > allocatable.resources[r])
        .map((r) => `${r}: the agents request ${formatAmount(r, total[r])} of ${formatAmount(r, allocatable.resources[r])} allocatable`),
      startupWaits: infos.filter((i) => waits.has(i.id)).map((i) => i.id),
    };
  });
}

function poolFindings(pool: NodePoolSpec, types: readonly PoolInstanceType[], input: NodePoolInput, existing: readonly string[]): NodePoolFinding[] {
  const finding = (severity: NodePoolFinding['severity'], cause: string, f: Partial<NodePoolFinding> & { message: string; fix: string }): NodePoolFinding => ({
    kind: 'node-pool', severity, cause, pool: pool.name, daemonSets: [], instanceTypes: [], nodes: [], ...f,
  });
  if (types.length === 0) {
    return [finding('warning', 'no-instance-type', {
      message: `NodePool ${pool.name}: the instance type catalog holds no type its requirements allow, so nothing about its nodes is checked`,
      fix: 'list the instance types the pool may launch in the --instance-types catalog',
    })];
  }
  const findings: NodePoolFinding[] = [];
  const tooSmall = types.filter((t) => t.shortfall.length > 0);
  if (tooSmall.length > 0) {
    findings.push(finding('error', 'agents-do-not-fit', {
      instanceTypes: tooSmall.map((t) => t.name),
      daemonSets: tooSmall[0].agents.map((a) => a.daemonSet),
      message: `NodePool ${pool.name} may launch ${list(tooSmall.map((t) => t.name))}, where the agents alone do not fit (${tooSmall[0].name}: `
        + `${tooSmall[0].shortfall.join('; ')}, allocatable from ${tooSmall[0].source}): such a node runs no workload, and where Karpenter `
        + 'undercounts the agents it launches one anyway and its agents stay Pending',
      fix: `keep the pool from those types (a requirement such as karpenter.k8s.aws/instance-cpu Gt ${tooSmall[tooSmall.length - 1].vcpu}), or give the agents `
        + 'smaller requests on small nodes (resourceProfiles)',
    }));
  }
  const smallest = types.find((t) => t.shortfall.length === 0);
  const max = input.maxOverheadPercent ?? DEFAULT_MAX_OVERHEAD_PERCENT;
  if (smallest !== undefined && Math.max(smallest.cpuShare, smallest.memoryShare) > max) {
    findings.push(finding('error', 'overhead-share', {
      instanceTypes: [smallest.name],
      daemonSets: smallest.agents.map((a) => a.daemonSet),
      message: `NodePool ${pool.name}: on ${smallest.name}, the smallest type it may launch where the agents fit, they request `
        + `${formatAmount('cpu', smallest.requests.cpu)} cpu (${smallest.cpuShare}%) and ${formatAmount('memory', smallest.requests.memory)} memory `
        + `(${smallest.memoryShare}%) of its allocatable, more than ${max}% (--max-overhead)`,
      fix: 'raise the pool\'s smallest instance type, give the agents smaller requests there (resourceProfiles by instance size), or raise --max-overhead',
    }));
  }
  findings.push(...limitRangeFindings(pool, types, input, finding));
  findings.push(...existsTolerationFindings(pool, types, input.tree, finding));
  findings.push(...existingNodeFindings(pool, input, existing, finding));
  return findings;
}

type MakeFinding = (severity: NodePoolFinding['severity'], cause: string, f: Partial<NodePoolFinding> & { message: string; fix: string }) => NodePoolFinding;

/**
 * aws/karpenter-provider-aws#3199: a container without requests gets the namespace's LimitRange default at admission,
 * which the DaemonSet's template does not show. Until the DaemonSet has a pod Karpenter can read (a new agent),
 * Karpenter sizes nodes with the template's requests: a pod needing more than the node holds beside the real
 * agents but not more than beside the counted ones makes it launch a node where the pod never fits, retire it and
 * launch another. An error for a DaemonSet the change creates, a warning for one that has pods already.
 */
function limitRangeFindings(pool: NodePoolSpec, types: readonly PoolInstanceType[], input: NodePoolInput, finding: MakeFinding): NodePoolFinding[] {
  const type = types.find((t) => t.shortfall.length === 0) ?? types[0];
  const changed = type.agents.filter((a) => a.limitRanges.length > 0);
  if (changed.length === 0) return [];
  const beforeIds = new Set((input.before?.daemonSets ?? []).map((d) => d.id));
  const created = changed.filter((a) => input.before !== undefined && !beforeIds.has(a.daemonSet));
  const counted = type.karpenterRequests.cpu;
  const real = type.requests.cpu;
  const alloc = type.allocatable.cpu ?? 0;
  const loop = real > counted && alloc > 0
    ? `; on ${type.name} (${formatAmount('cpu', alloc)} cpu allocatable, from ${type.source}) a pod requesting more than ${formatAmount('cpu', alloc - real)} `
      + `and at most ${formatAmount('cpu', alloc - counted)} cpu makes Karpenter launch a node it never fits on, retire it and launch another (aws/karpenter-provider-aws#3199)`
    : '';
  return [finding(created.length > 0 ? 'error' : 'warning', 'limit-range', {
    instanceTypes: [type.name],
    daemonSets: changed.map((a) => a.daemonSet),
    message: `NodePool ${pool.name}: ${list(changed.map((a) => a.daemonSet))} leave${changed.length === 1 ? 's' : ''} requests unset, which the LimitRange `
      + `${list([...new Set(changed.flatMap((a) => a.limitRanges))])} fills in at admission: the agents request ${formatAmount('cpu', real)} cpu and `
      + `${formatAmount('memory', type.requests.memory)} memory on a node, while Karpenter counts ${formatAmount('cpu', counted)} and `
      + `${formatAmount('memory', type.karpenterRequests.memory)} from the templates until ${created.length > 0 ? 'the new DaemonSet has' : 'each has'} a pod${loop}`,
    fix: 'give every container of the agents explicit requests (resources.requests), so the template says what the pods request',
  })];
}

/**
 * kubernetes-sigs/karpenter#1749: DaemonSets tolerating every taint (`operator: Exists` without a key) run on a tainted
 * pool's nodes, and Karpenter versions that left them out of the pool's overhead launched nodes too small for them.
 * Counted here; a warning naming them, so the overhead Karpenter logs for the pool can be compared.
 */
function existsTolerationFindings(pool: NodePoolSpec, types: readonly PoolInstanceType[], tree: ManifestSet,
  finding: MakeFinding): NodePoolFinding[] {
  const hard = pool.taints.filter((t) => t.effect !== 'PreferNoSchedule');
  if (hard.length === 0) return [];
  const byId = new Map(tree.daemonSets.map((d) => [d.id, d]));
  const wildcard = (info: DaemonSetInfo | undefined) => info !== undefined && info.tolerations.some((t) => t.operator === 'Exists' && (t.key ?? '') === '');
  const ids = [...new Set(types.flatMap((t) => t.agents.map((a) => a.daemonSet)))].filter((id) => wildcard(byId.get(id))).sort(compare);
  if (ids.length === 0) return [];
  const smallest = types.find((t) => t.shortfall.length === 0) ?? types[0];
  return [finding('warning', 'exists-toleration', {
    daemonSets: ids,
    instanceTypes: [smallest.name],
    message: `NodePool ${pool.name} is tainted (${hard.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', ')}) and ${list(ids)} `
      + `tolerate${ids.length === 1 ? 's' : ''} every taint (operator Exists): ${ids.length === 1 ? 'it runs' : 'they run'} on its nodes and count in its overhead `
      + `(${formatAmount('cpu', smallest.requests.cpu)} cpu, ${formatAmount('memory', smallest.requests.memory)} memory, ${smallest.requests.pods} pods on ${smallest.name}); `
      + 'Karpenter versions that left such DaemonSets out launched nodes too small for them (kubernetes-sigs/karpenter#1749)',
    fix: 'check that the "daemonset overhead" Karpenter logs for this pool matches; if it is lower, upgrade Karpenter or keep these agents off the pool',
  })];
}

/**
 * kubernetes-sigs/karpenter#731: Karpenter provisions for pending pods that a new node would help, never for a
 * DaemonSet pod (bound to its node): an agent that does not fit on a pool's existing nodes stays Pending there until
 * they are replaced. With --pods, plan's own never-starts findings on the pool's nodes; without, the agents alone
 * against each node's allocatable (workloads not counted: a lower bound).
 */
function existingNodeFindings(pool: NodePoolSpec, input: NodePoolInput, existing: readonly string[], finding: MakeFinding): NodePoolFinding[] {
  if (existing.length === 0) return [];
  const own = new Set(existing);
  const hits: { daemonSets: string[]; nodes: string[]; why: string }[] = [];
  if (input.capacity !== undefined) {
    for (const f of input.capacity) {
      if (f.kind !== 'never-starts') continue;
      const nodes = f.nodes.filter((n) => own.has(n));
      if (nodes.length > 0) hits.push({ daemonSets: [...f.daemonSets], nodes, why: f.message });
    }
  } else if (input.coverage !== undefined) {
    const requests = agentRequests(input.tree, input.podLevel ?? true);
    const byName = new Map(input.inventory.map((n) => [n.metadata.name, n]));
    const covering = coveringByNode(input.coverage);
    for (const name of existing) {
      const allocatable = allocatableOf(byName.get(name)!);
      const on = (covering.get(name) ?? []).map((info) => info.id);
      const need = on.reduce((s, id) => s + (requests.get(id)?.requests.memory ?? 0), 0);
      const cpu = on.reduce((s, id) => s + (requests.get(id)?.requests.cpu ?? 0), 0);
      if (allocatable === undefined || (need <= (allocatable.memory ?? Infinity) && cpu <= (allocatable.cpu ?? Infinity))) continue;
      hits.push({ daemonSets: on, nodes: [name], why: `the agents alone request ${formatAmount('cpu', cpu)} cpu and ${formatAmount('memory', need)} memory of its allocatable` });
    }
  }
  const beforeIds = new Set((input.before?.daemonSets ?? []).map((d) => d.id));
  return hits.map((h) => finding('error', 'existing-nodes', {
    daemonSets: h.daemonSets,
    nodes: h.nodes,
    message: `NodePool ${pool.name}: ${h.daemonSets.filter((id) => !beforeIds.has(id)).length > 0 ? 'a new agent' : 'an agent'} never fits on `
      + `${list(h.nodes)}, nodes the pool launched before (${h.why}); Karpenter does not replace or resize a node for a DaemonSet pod `
      + '(kubernetes-sigs/karpenter#731), so the agent stays Pending there until the nodes are replaced',
    fix: 'make room (lower the agent\'s requests on those nodes with resourceProfiles, or give it a priority class that preempts workloads), '
      + 'or roll the pool\'s nodes (a change of the NodePool template drifts them)',
  }));
}

function list(items: readonly string[]): string {
  return items.length <= 5 ? items.join(', ') : `${items.slice(0, 5).join(', ')}, … ${items.length - 5} more`;
}
