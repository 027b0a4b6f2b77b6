/**
 * What applying the recommendation would do, against the manifests running now (`--tree`) on the inventory
 * (`--nodes`): per node, today's requests (the agent's DaemonSet whose nodeSelector and required node affinity
 * select the node: taints are not looked at) and the recommended ones (the profile its label value falls in);
 * then the nodes whose pod is replaced and the memory reserved across the fleet and per NodePool and instance
 * type, before and after. Work: nodes × the agent's DaemonSets.
 */
import { AgentSizing, GroupBy, owner, Sizing } from './size/groups';
import { ABSENT } from './size/ingest';
import { memoryText } from './size-render';
import { INSTANCE_TYPE_LABEL, NODE_POOL_LABEL, NodeJson } from '../scheduling/types';
import { isObject, ManifestSet } from './coverage/manifests';
import { plural } from './format';
import { MAX_PRINTED_PER_KIND } from './limits';
import { termsMatch } from '../scheduling/node-affinity';
import { parseQuantity } from '../util/quantity';
import { DEFAULT_PROFILE } from '../waves/profiles';

const MIB = 1024 * 1024;

/** A container's requests and memory limit as the manifest sets them (NaN when unset). */
interface Today {
  readonly daemonSet: string;
  readonly cpu: number;
  readonly memory: number;
  readonly memoryLimit: number;
}

interface Selector {
  readonly today: Today;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly terms?: readonly import('../scheduling/types').NodeSelectorTermJson[];
}

function quantity(value: unknown): number {
  return typeof value === 'string' || typeof value === 'number' ? parseQuantity(String(value)) : Number.NaN;
}

/** The agent's DaemonSets in the tree (namespace and container name), with the container's resources. */
function selectors(tree: ManifestSet, agent: string): Selector[] {
  const [namespace, container] = agent.split('/');
  const found: Selector[] = [];
  for (const ds of tree.daemonSets) {
    if (ds.namespace !== namespace) continue;
    const doc = tree.documents.find((d) => d.object.kind === 'DaemonSet' && d.object.metadata?.name === ds.name
      && (d.object.metadata?.namespace ?? 'default') === ds.namespace);
    const containers = (doc?.object as any)?.spec?.template?.spec?.containers;
    const c = Array.isArray(containers) ? containers.find((x: unknown) => isObject(x) && x.name === container) : undefined;
    if (!isObject(c)) continue;
    const resources = isObject(c.resources) ? c.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    const limits = isObject(resources.limits) ? resources.limits : {};
    found.push({
      today: { daemonSet: ds.id, cpu: quantity(requests.cpu), memory: quantity(requests.memory), memoryLimit: quantity(limits.memory) },
      nodeSelector: ds.nodeSelector,
      terms: ds.requiredTerms,
    });
  }
  return found;
}

function todayOn(node: NodeJson, sel: readonly Selector[]): Today | undefined {
  const identity = { name: node.metadata.name, labels: node.metadata.labels ?? {} };
  for (const s of sel) {
    const selected = Object.entries(s.nodeSelector).every(([k, v]) => identity.labels[k] === v);
    if (selected && (s.terms === undefined || termsMatch(s.terms, identity))) return s.today;
  }
  return undefined;
}

function differs(t: Today, s: Sizing): boolean {
  return Math.round(t.cpu * 1000) !== s.cpuMilli || Math.round(t.memory / MIB) !== s.memoryMiB
    || Math.round(t.memoryLimit / MIB) !== s.memoryLimitMiB;
}

interface Tally { nodes: number; before: number; after: number; allocatable: number }

function add(map: Map<string, Tally>, key: string, before: number, after: number, allocatable: number): void {
  const t = map.get(key) ?? map.set(key, { nodes: 0, before: 0, after: 0, allocatable: 0 }).get(key)!;
  t.nodes++;
  t.before += before;
  t.after += after;
  t.allocatable += allocatable;
}

function share(part: number, whole: number): string {
  return whole > 0 ? ` (${(100 * part / whole).toFixed(1)}% of allocatable)` : '';
}

/** The lines of one agent's impact. */
function agentImpact(tree: ManifestSet, nodes: readonly NodeJson[], a: AgentSizing, by: GroupBy): string[] {
  const sel = selectors(tree, a.agent);
  if (sel.length === 0) return ['today (--tree): no DaemonSet of the tree runs this agent: nothing to compare'];
  let running = 0; let replaced = 0; let before = 0; let after = 0;
  const perPool = new Map<string, Tally>();
  const changed = new Map<string, { today: Today; sizing: Sizing; profile: string }>();
  for (const node of nodes) {
    const today = todayOn(node, sel);
    if (today === undefined) continue;
    const labels = node.metadata.labels ?? {};
    const profile = owner(labels[by.key] ?? ABSENT, a.profiles);
    const sizing = profile === DEFAULT_PROFILE ? a.defaultSizing : a.profiles.find((p) => p.spec.name === profile)!.sizing;
    const mem = Number.isFinite(today.memory) ? today.memory : 0;
    running++;
    before += mem;
    after += sizing.memoryMiB * MIB;
    if (differs(today, sizing)) {
      replaced++;
      if (!changed.has(today.daemonSet + profile)) changed.set(today.daemonSet + profile, { today, sizing, profile });
    }
    const allocatable = parseQuantity(node.status?.allocatable?.memory ?? '0') || 0;
    add(perPool, `${labels[NODE_POOL_LABEL] ?? '(no NodePool)'} / ${labels[INSTANCE_TYPE_LABEL] ?? '(no instance type)'}`, mem, sizing.memoryMiB * MIB, allocatable);
  }
  const lines = [`today (--tree): ${running} nodes run it; the change replaces ${replaced} pods (requests or limit differ); `
    + `memory requested across the fleet ${memoryText(before)} → ${memoryText(after)}`];
  for (const c of [...changed.values()].slice(0, MAX_PRINTED_PER_KIND)) {
    const t = c.today;
    const fmt = (cpu: number, mem: number, lim: number) => `${Number.isFinite(cpu) ? Math.round(cpu * 1000) + 'm' : 'unset'}/${Number.isFinite(mem) ? memoryText(mem) : 'unset'} limit ${Number.isFinite(lim) ? memoryText(lim) : 'unset'}`;
    lines.push(`${t.daemonSet} → profile ${c.profile}: ${fmt(t.cpu, t.memory, t.memoryLimit)} becomes ${c.sizing.cpuMilli}m/${c.sizing.memoryMiB}Mi limit ${c.sizing.memoryLimitMiB}Mi`);
  }
  const pools = [...perPool.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
  for (const [key, t] of pools.slice(0, MAX_PRINTED_PER_KIND)) {
    lines.push(`${key}: ${plural(t.nodes, 'node')}, memory requested per node ${memoryText(t.before / t.nodes)}${share(t.before, t.allocatable)} → ${memoryText(t.after / t.nodes)}${share(t.after, t.allocatable)}`);
  }
  if (pools.length > MAX_PRINTED_PER_KIND) lines.push(`… ${pools.length - MAX_PRINTED_PER_KIND} more NodePool / instance type pairs`);
  return lines;
}

export function sizeImpact(tree: ManifestSet, nodes: readonly NodeJson[], agents: readonly AgentSizing[], by: GroupBy): Map<string, string[]> {
  return new Map(agents.map((a) => [a.agent, agentImpact(tree, nodes, a, by)]));
}
