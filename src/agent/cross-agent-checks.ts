/**
 * Checks between the agents of one cluster (host ports, created namespaces), computed once per
 * scope and reused by every agent's late validation until another agent joins the scope.
 *
 * The scope is the nearest ancestor construct marked as one cluster (a property keyed
 * `CLUSTER_SCOPE` set to true, as the fleet's per-cluster construct does), else the whole app:
 * without a fleet an app is taken as one cluster, since charts of one cluster are often split per
 * agent. Agents register when constructed, so no check walks the construct tree; cdk8s validates
 * the whole app once per chart it synthesizes, and these checks stay linear in the agents.
 */
import { IConstruct } from 'constructs';
import { AgentHostPort } from './options';
import { NodeSelectorRequirementJson } from '../scheduling/types';
import { entryOf } from '../util/maps';

/** Marks a construct whose agents run on one cluster of their own. */
export const CLUSTER_SCOPE = Symbol.for('cdk8s-node-agents.cluster-scope');

/** What the cross-agent checks know of one agent (all of its releases). */
export interface CrossAgentMember {
  /** E.g. "NodeAgentDaemonSet chart/npd". */
  readonly describe: string;
  readonly path: string;
  /** Host ports of every release. */
  readonly hostPorts: AgentHostPort[];
  /** Host ports the rendered objects bind beyond `hostPorts` (a JSON patch turning hostNetwork on), read when the checks run. */
  readonly renderedHostPorts?: () => AgentHostPort[];
  /** The node requirements of each release (nodeSelector as In requirements, plus the base terms). */
  readonly requirementSets: NodeSelectorRequirementJson[][];
  readonly createsNamespace?: string;
}

interface Registry {
  readonly members: CrossAgentMember[];
  problems?: Map<string, string[]>;
}

const registries = new WeakMap<IConstruct, Registry>();

/** The construct whose agents are checked against each other. */
export function clusterScopeOf(construct: IConstruct): IConstruct {
  for (let c: IConstruct | undefined = construct.node.scope; c; c = c.node.scope) {
    if ((c as unknown as { [CLUSTER_SCOPE]?: boolean })[CLUSTER_SCOPE] === true) return c;
  }
  return construct.node.root;
}

/** Adds an agent to its scope; returns the scope's late check for that agent. */
export function registerAgent(construct: IConstruct, member: CrossAgentMember): () => string[] {
  const scope = clusterScopeOf(construct);
  let registry = registries.get(scope);
  if (!registry) {
    registry = { members: [] };
    registries.set(scope, registry);
  }
  registry.members.push(member);
  registry.problems = undefined;
  const r = registry;
  return () => {
    if (!r.problems) r.problems = computeProblems(r.members);
    return r.problems.get(member.path) ?? [];
  };
}

function computeProblems(members: CrossAgentMember[]): Map<string, string[]> {
  const problems = new Map<string, string[]>();
  const add = (m: CrossAgentMember, message: string) => entryOf(problems, m.path, () => []).push(message);

  const byPort = new Map<string, CrossAgentMember[]>();
  const portsOf = new Map(members.map((m) => [m, [...m.hostPorts, ...(m.renderedHostPorts?.() ?? [])]]));
  for (const m of members) {
    for (const key of new Set(portsOf.get(m)!.map((p) => `${p.port}/${p.protocol}`))) entryOf(byPort, key, () => []).push(m);
  }
  for (const m of members) {
    for (const mine of uniquePorts(portsOf.get(m)!)) {
      for (const other of byPort.get(`${mine.port}/${mine.protocol}`) ?? []) {
        if (other === m || disjoint(m, other)) continue;
        add(m, `${m.describe} and ${other.describe} both bind host port ${mine.port}/${mine.protocol} on nodes they may share; change one port, or give them node requirements that exclude each other`);
      }
    }
  }

  const byNamespace = new Map<string, CrossAgentMember[]>();
  for (const m of members) {
    if (m.createsNamespace !== undefined) entryOf(byNamespace, m.createsNamespace, () => []).push(m);
  }
  for (const [namespace, creators] of byNamespace) {
    const sorted = [...creators].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const m of sorted.slice(1)) {
      add(m, `${m.describe} and ${sorted[0].describe} both create namespace "${namespace}"; set createNamespace on one of them only`);
    }
  }
  return problems;
}

function uniquePorts(ports: AgentHostPort[]): AgentHostPort[] {
  const seen = new Set<string>();
  return ports.filter((p) => {
    const key = `${p.port}/${p.protocol}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** True when no node can match both agents, in any of their releases. */
function disjoint(a: CrossAgentMember, b: CrossAgentMember): boolean {
  return a.requirementSets.every((mine) => b.requirementSets.every((theirs) => mine.some((x) => theirs.some((y) => requirementsExclude(x, y)))));
}

/** Whether no label set can satisfy both requirements. */
function requirementsExclude(a: NodeSelectorRequirementJson, b: NodeSelectorRequirementJson): boolean {
  if (a.key !== b.key) return false;
  const av = a.values ?? [];
  const bv = b.values ?? [];
  const pair = (x: string, y: string) => (a.operator === x && b.operator === y) || (a.operator === y && b.operator === x);
  if (a.operator === 'In' && b.operator === 'In') return !av.some((v) => bv.includes(v));
  if (pair('In', 'NotIn')) {
    const [inValues, notInValues] = a.operator === 'In' ? [av, bv] : [bv, av];
    return inValues.every((v) => notInValues.includes(v));
  }
  return pair('Exists', 'DoesNotExist') || pair('In', 'DoesNotExist');
}
