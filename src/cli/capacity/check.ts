import { describeShortfall, fits, FitResult, fitsRequest, InsufficientResource, portHolders, selectVictims, sumRequestsOf } from './fit';
import { displayName } from './names';
import { PodIndex, PodRecord } from './pods';
import { formatAmount, ResourceList } from './resources';
import { AgentPodTemplate, allocatableReader } from './template';
import { paceOf } from '../../rollout/pace';
import { compare, DaemonSetInfo } from '../coverage/manifests';
import { NodeFacts } from '../coverage/nodes';

/** A finding of the capacity check, in the shape of `plan`'s findings. */
export interface CapacityFinding {
  /** never-starts: the new pod stays Pending; preemption: it starts by evicting pods */
  readonly kind: 'never-starts' | 'preemption';
  readonly severity: 'error' | 'warning';
  /** insufficient-resources, host-port (never-starts); evicts, unknown-priority, no-allocatable (preemption / warnings) */
  readonly cause: string;
  readonly agent: string;
  readonly daemonSets: readonly string[];
  readonly nodes: readonly string[];
  readonly message: string;
  readonly fix: string;
}

export interface CapacityInput {
  /** the nodes of the coverage report the DaemonSets' positions point into */
  readonly nodes: readonly NodeFacts[];
  /** the DaemonSets applied (the after-tree), each with the nodes it targets there (positions in `nodes`) */
  readonly daemonSets: readonly { readonly info: DaemonSetInfo; readonly positions: readonly number[] }[];
  readonly templates: ReadonlyMap<string, AgentPodTemplate>;
  readonly pods: PodIndex;
  /** ids of each agent's DaemonSets in any tree: pods they own are the agent's old pods */
  readonly agentDaemonSets: ReadonlyMap<string, ReadonlySet<string>>;
  /** whether the DaemonSet's running pods are replaced (its pod template changes) */
  readonly replaces: (id: string) => boolean;
}

/** The most nodes a finding's message names; the `nodes` list holds them all. */
const SHOWN = 8;

/**
 * Will each DaemonSet's new pod fit on every node it targets, as the pods run now? For each targeted node:
 * the node's allocatable minus the requests of the non-terminal pods bound there, against the new pod's requests,
 * as kube-scheduler's NodeResourcesFit and NodePorts filters compute it (see fit.ts), with the agent's old pod
 * counted as the DaemonSet controller's rolling update leaves it:
 * - maxUnavailable (the default): the old pod is deleted before the new one is created: not counted;
 * - maxSurge: the new pod is created while the old one runs: both count;
 * - a pod of another DaemonSet of the agent (a move between waves) is deleted by its controller: not counted;
 * - a pod of the same DaemonSet whose template does not change stays: nothing to place.
 * A node it does not fit on is an error (never-starts); where evicting lower-priority pods makes room, a warning
 * naming them (the default scheduler preempts for DaemonSet pods; victims chosen as in selectVictims).
 * Every targeted node is checked, not only those the agent runs on today.
 */
export function capacityFindings(input: CapacityInput): CapacityFinding[] {
  const findings: CapacityFinding[] = [];
  const allocatableOf = allocatableReader();
  for (const { info, positions } of input.daemonSets) {
    const template = input.templates.get(info.id);
    if (template === undefined || positions.length === 0) continue;
    const agentIds = input.agentDaemonSets.get(info.agent) ?? new Set([info.id]);
    const pace = paceOf(info.updateStrategy, positions.length);
    const surge = pace.type === 'RollingUpdate' && pace.mode === 'surge';
    const replaces = input.replaces(info.id);
    const short: { node: string; text: string }[] = [];
    const ports: { node: string; text: string }[] = [];
    const evicts: { node: string; victims: PodRecord[] }[] = [];
    const unknownPriority: string[] = [];
    const noAllocatable: string[] = [];
    for (const at of positions) {
      const facts = input.nodes[at];
      const node = facts.name;
      const all = input.pods.on(node);
      const own = all.find((p) => p.owner === info.id);
      if (own !== undefined && !replaces) continue; // its pod runs and stays
      const allocatable = allocatableOf(facts);
      if (allocatable === undefined) {
        noAllocatable.push(node);
        continue;
      }
      // the others: pods of no DaemonSet of the agent; with maxSurge the old pod of this DaemonSet is counted too, as
      // it stays while the new one starts
      const other = (p: PodRecord) => p.owner === undefined || !agentIds.has(p.owner);
      const used = sumRequestsOf(all, (p) => other(p) || (surge && p === own));
      // checkFit's two halves, without an array of pods per node: resources against the pods counted, host ports
      // against the others
      const result: FitResult = {
        insufficient: fitsRequest(template.requests, allocatable, used.requests, used.count),
        portConflicts: info.hostPorts.length === 0 ? [] : portHolders(info.hostPorts, all.filter(other)),
      };
      if (fits(result)) continue;
      const others = all.filter(other);
      const counted = surge && own !== undefined ? [...others, own] : others;
      // the same DaemonSet's old pod holding the port is the plan's host-port finding (surge deadlock), not ours
      const victims = template.priority === undefined || template.preemptNever ? undefined
        : selectVictims(template.requests, surge && own !== undefined ? [] : info.hostPorts, template.priority, allocatable, counted);
      if (victims !== undefined && (result.portConflicts.length === 0 || !surge || own === undefined)) {
        evicts.push({ node, victims });
        continue;
      }
      if (template.priority === undefined) unknownPriority.push(node);
      if (result.insufficient.length > 0) short.push({ node, text: result.insufficient.map(describeShortfall).join(', ') });
      for (const { pod, port } of result.portConflicts) ports.push({ node, text: `${port.protocol}/${port.port} held by ${displayName(pod.namespace)}/${displayName(pod.name)}` });
    }
    const base = { agent: info.agent, daemonSets: [info.id] };
    if (short.length > 0) {
      findings.push({
        ...base,
        kind: 'never-starts',
        severity: 'error',
        cause: 'insufficient-resources',
        nodes: short.map((s) => s.node).sort(compare),
        message: `${info.id}: the new pod does not fit on ${count(short.length)}${surge ? ' next to the old pod (maxSurge: both run at once)' : ''} and stays Pending (FailedScheduling: Insufficient ...): ${listed(short)}`,
        fix: `lower the pod's requests (${requestText(template.requests)}), make room on those nodes (move workloads off, a larger instance type)${surge ? ', or roll out with maxUnavailable so the old pod goes first' : ''}${template.priority === undefined || template.priority < 2_000_000_000 ? ', or give the agent a priority class that may preempt (system-node-critical)' : ''}`,
      });
    }
    if (ports.length > 0) {
      findings.push({
        ...base,
        kind: 'never-starts',
        severity: 'error',
        cause: 'host-port',
        nodes: [...new Set(ports.map((p) => p.node))].sort(compare),
        message: `${info.id}: a host port the new pod binds is held by another pod (NodePorts): ${listed(ports)}`,
        fix: 'move the other pod off the port, or change the agent\'s host port',
      });
    }
    if (evicts.length > 0) {
      const victims = evicts.map((e) => ({ node: e.node, text: `evicts ${e.victims.map((v) => `${displayName(v.namespace)}/${displayName(v.name)} (priority ${v.priority})`).join(', ')}` }));
      findings.push({
        ...base,
        kind: 'preemption',
        severity: 'warning',
        cause: 'evicts',
        nodes: evicts.map((e) => e.node).sort(compare),
        message: `${info.id}: the new pod fits only by preemption (priority ${template.priority}${template.priorityClassName ? `, class ${template.priorityClassName}` : ''}): the default scheduler evicts lower-priority pods on ${count(evicts.length)}: ${listed(victims)} (victims chosen as defaultpreemption does, PodDisruptionBudgets not read)`,
        fix: 'check the evicted workloads can move elsewhere, or lower the agent\'s requests, or make room first',
      });
    }
    if (unknownPriority.length > 0) {
      findings.push({
        ...base,
        kind: 'preemption',
        severity: 'warning',
        cause: 'unknown-priority',
        nodes: unknownPriority.sort(compare),
        message: `${info.id}: priorityClassName ${template.priorityClassName} is neither built in nor in the manifests: whether the scheduler would preempt for the pod on ${count(unknownPriority.length)} cannot be told; counted as not preempting`,
        fix: `include the PriorityClass ${template.priorityClassName} in the manifests checked`,
      });
    }
    if (noAllocatable.length > 0) {
      findings.push({
        ...base,
        kind: 'never-starts',
        severity: 'warning',
        cause: 'no-allocatable',
        nodes: noAllocatable.sort(compare),
        message: `${info.id}: capacity not checked on ${count(noAllocatable.length)}: the inventory has no status.allocatable for ${listed(noAllocatable.map((n) => ({ node: n, text: '' })))}`,
        fix: 'pass the node inventory as `kubectl get nodes -o json` prints it',
      });
    }
  }
  findings.push(...podLevelAssumption(input));
  return findings;
}

/**
 * A warning when pods or agents set pod-level spec.resources and whether the scheduler counts them is an assumption
 * (PodLevelResources: beta and on by default since Kubernetes 1.34, alpha and off in 1.32 and 1.33).
 */
function podLevelAssumption(input: CapacityInput): CapacityFinding[] {
  const gate = input.pods.gate;
  const agents = input.daemonSets.filter((d) => input.templates.get(d.info.id)?.podLevelResources === true);
  if (gate.certain || (input.pods.withPodLevelResources === 0 && agents.length === 0)) return [];
  const who = [
    ...(input.pods.withPodLevelResources > 0 ? [`${input.pods.withPodLevelResources} running pod${input.pods.withPodLevelResources === 1 ? '' : 's'}`] : []),
    ...agents.map((d) => d.info.id),
  ].join(', ');
  return [{
    kind: 'never-starts',
    severity: 'warning',
    cause: 'pod-level-resources',
    agent: agents[0]?.info.agent ?? '',
    daemonSets: agents.map((d) => d.info.id),
    nodes: [],
    message: `pod-level resources (spec.resources) set by ${who} are counted ${gate.enabled ? 'over' : 'as'} the containers' requests, `
      + `assuming the scheduler's PodLevelResources feature is ${gate.enabled ? 'on' : 'off'} (${gate.basis}); `
      + 'it is on by default from Kubernetes 1.34, off before',
    fix: 'pass --kubernetes-version with the control plane\'s version (kubectl version), or list nodes whose status.nodeInfo.kubeletVersion shows it',
  }];
}

function count(n: number): string {
  return `${n} node${n === 1 ? '' : 's'}`;
}

function listed(items: readonly { node: string; text: string }[]): string {
  const sorted = [...items].sort((a, b) => compare(a.node, b.node));
  const shown = sorted.slice(0, SHOWN).map((i) => (i.text === '' ? i.node : `${i.node} (${i.text})`)).join('; ');
  return sorted.length > SHOWN ? `${shown}; … ${sorted.length - SHOWN} more` : shown;
}

function requestText(requests: ResourceList): string {
  const parts = Object.entries(requests).sort(([a], [b]) => compare(a, b)).map(([n, v]) => `${n} ${formatAmount(n, v)}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

export type { InsufficientResource };
