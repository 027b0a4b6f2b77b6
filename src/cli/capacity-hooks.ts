/**
 * The `--pods FILE` and `--cost` flags of coverage, estimate and plan: small hooks the commands call, the logic
 * being in src/capacity (pure, no cdk8s).
 */
import { UsageError } from './args';
import { capacityFindings, CapacityFinding } from './capacity/check';
import { agentCost, InstanceTypeCost } from './capacity/cost';
import { readJsonFile } from './capacity/input';
import { PodLevelResourcesGate, podLevelResourcesGate } from './capacity/pod-level';
import { parsePodList, PodIndex } from './capacity/pods';
import { formatAmount } from './capacity/resources';
import { podTemplates } from './capacity/template';
import { analyzeCoverage, CoverageReport } from './coverage/analysis';
import { ManifestSet } from './coverage/manifests';
import { NodeFacts } from './coverage/nodes';
import { plural, table } from './format';
import { NodeJson } from '../scheduling/types';
import { markdownEscape, terminalSafe } from '../util/output-escape';

export const PODS_FLAG_HELP = `  --pods FILE         the pods running now: \`kubectl get pods -A -o json\` output; checks that each
                      agent's pod fits on every node it targets (allocatable minus the requests of
                      the pods bound there: cpu, memory, ephemeral-storage, pod count, extended
                      resources; host ports of other pods), as kube-scheduler's Fit filter does.
                      never-starts insufficient-resources / host-port: an error naming node and
                      shortfall; preemption: a warning naming the pods the scheduler would evict.
                      A DaemonSet pod whose Ready condition is not True is not available: the
                      rolling update replaces it at once, outside its budget (the first batch)
  --kubernetes-version MAJOR.MINOR
                      the control plane's version, which decides whether pod-level resources
                      (spec.resources) count: from 1.34 on, as PodLevelResources is on by default.
                      Without it, the newest kubelet of --nodes is taken; with older kubelets the
                      pod-level requests are counted and a warning says so. From 1.31 on, the
                      DaemonSet controller counts the old pods it replaces outside the budget in
                      that same sync (plan's batches note what an older one does otherwise)
`;
export const COST_FLAG_HELP = `  --cost              the agents' cost per instance type (node.kubernetes.io/instance-type):
                      allocatable, the agents' requests and limits, and their share of the nodes
`;

/** The `--kubernetes-version` flag's spec, beside `--pods` in each command that takes it. */
export const KUBERNETES_VERSION_OPTION = { 'kubernetes-version': { type: 'string' } } as const;

/** The scheduler's PodLevelResources gate from `--kubernetes-version` or the inventory (podLevelResourcesGate). */
export function capacityGate(inventory: readonly NodeJson[], kubernetesVersion: string | undefined, command: string): PodLevelResourcesGate {
  try {
    return podLevelResourcesGate(inventory, kubernetesVersion);
  } catch (error) {
    throw new UsageError((error as Error).message, command);
  }
}

export function loadPods(file: string, cwd: string, gate?: PodLevelResourcesGate): PodIndex {
  return parsePodList(readJsonFile(file, cwd, 'the output of `kubectl get pods -A -o json`'), file, new PodIndex(gate));
}

/**
 * The capacity findings of applying `tree` over the pods running now. With `before` (plan), only agents the
 * change touches are checked, and a DaemonSet's running pods are replaced when its pod template changes; without
 * (coverage, estimate) every DaemonSet is checked, its running pods staying as they are.
 */
export function treeCapacity(tree: ManifestSet, coverage: CoverageReport, pods: PodIndex,
  before?: ManifestSet): CapacityFinding[] {
  const beforeById = new Map((before?.daemonSets ?? []).map((d) => [d.id, d]));
  const afterIds = new Set(tree.daemonSets.map((d) => d.id));
  const touched = before === undefined ? undefined : new Set([
    ...tree.daemonSets.filter((d) => beforeById.get(d.id)?.objectHash !== d.objectHash).map((d) => d.agent),
    ...before.daemonSets.filter((d) => !afterIds.has(d.id)).map((d) => d.agent),
  ]);
  const agentDaemonSets = new Map<string, Set<string>>();
  for (const d of [...tree.daemonSets, ...(before?.daemonSets ?? [])]) {
    const ids = agentDaemonSets.get(d.agent) ?? new Set<string>();
    ids.add(d.id);
    agentDaemonSets.set(d.agent, ids);
  }
  return capacityFindings({
    nodes: coverage.nodes,
    daemonSets: coverage.daemonSets.filter((d) => touched === undefined || touched.has(d.info.agent)),
    templates: podTemplates(tree, pods.podLevel),
    pods,
    agentDaemonSets,
    replaces: (id) => {
      const was = beforeById.get(id);
      const will = tree.daemonSets.find((d) => d.id === id);
      return was !== undefined && will !== undefined && was.templateHash !== will.templateHash;
    },
  });
}

/**
 * plan's hook: the after-tree's capacity findings, coverage on the same nodes as the plan (`coverage`: the
 * after-tree's, already computed by the caller on `nodes`).
 */
export function planCapacity(before: ManifestSet, after: ManifestSet, nodes: readonly NodeFacts[],
  pods: PodIndex, coverage: CoverageReport = analyzeCoverage(after.daemonSets, nodes)): CapacityFinding[] {
  return treeCapacity(after, coverage, pods, before);
}

/** The cost table of one tree. */
export function treeCost(tree: ManifestSet, coverage: CoverageReport, inventory: readonly NodeJson[], podLevel = true): InstanceTypeCost[] {
  return agentCost(inventory, coverage.daemonSets.map((d) => ({ id: d.info.id, covered: d.covered })), podTemplates(tree, podLevel));
}

/** The cost table of one tree of a plan (`coverage`: the tree's, already computed by the caller on `nodes`). */
export function planCost(tree: ManifestSet, nodes: readonly NodeFacts[], inventory: readonly NodeJson[],
  coverage: CoverageReport = analyzeCoverage(tree.daemonSets, nodes), podLevel = true): InstanceTypeCost[] {
  return treeCost(tree, coverage, inventory, podLevel);
}

function perNode(total: number, nodes: number, resource: string): string {
  return nodes === 0 ? '-' : formatAmount(resource, Math.round(total / nodes));
}

function costRows(rows: readonly InstanceTypeCost[]): string[][] {
  return rows.map((r) => [
    r.instanceType, String(r.nodes),
    perNode(r.allocatable.cpu, r.nodes, 'cpu'), `${perNode(r.requests.cpu, r.nodes, 'cpu')} (${r.cpuShare}%)`, perNode(r.limits.cpu, r.nodes, 'cpu'),
    perNode(r.allocatable.memory, r.nodes, 'memory'), `${perNode(r.requests.memory, r.nodes, 'memory')} (${r.memoryShare}%)`, perNode(r.limits.memory, r.nodes, 'memory'),
    r.unlimitedPods === 0 ? '-' : String(r.unlimitedPods),
  ]);
}

const COST_HEADERS = ['INSTANCE TYPE', 'NODES', 'CPU/NODE', 'AGENTS REQ', 'AGENTS LIM', 'MEMORY/NODE', 'AGENTS REQ', 'AGENTS LIM', 'NO LIMIT'];

/** The cost tables as text, one per labelled tree (`now`, or `before` and `after`); per node averages. */
export function costText(trees: readonly { label: string; rows: readonly InstanceTypeCost[] }[]): string {
  let out = '\nAGENTS\' COST PER INSTANCE TYPE (per node: allocatable, the agents\' requests (share) and limits; NO LIMIT: agent pods without a cpu or memory limit)\n';
  for (const { label, rows } of trees) {
    out += `${label}:\n` + table(COST_HEADERS, costRows(rows).map((r) => [terminalSafe(r[0]), ...r.slice(1)]), '  ');
  }
  return out;
}

export function costMarkdown(trees: readonly { label: string; rows: readonly InstanceTypeCost[] }[]): string {
  let out = '\n#### Agents\' cost per instance type (per node)\n';
  for (const { label, rows } of trees) {
    out += `\n${label}:\n\n| instance type | nodes | cpu | agents' cpu requests | cpu limits | memory | agents' memory requests | memory limits | pods without limit |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n`;
    for (const r of costRows(rows)) out += `| ${markdownEscape(r[0])} | ${r.slice(1).join(' | ')} |\n`;
  }
  return out;
}

/** The capacity findings as a text section (coverage and estimate; plan prints them among its findings). */
export function capacityText(findings: readonly CapacityFinding[]): string {
  const errors = findings.filter((f) => f.severity === 'error').length;
  if (findings.length === 0) return '\nCAPACITY (--pods): every agent\'s pod fits on every node it targets\n';
  let out = `\nCAPACITY (--pods): ${plural(errors, 'error')}, ${plural(findings.length - errors, 'warning')}\n`;
  for (const f of findings) {
    out += `${f.severity === 'error' ? '!' : '~'} [${f.kind} ${f.cause}] ${terminalSafe(f.message)}\n    fix: ${terminalSafe(f.fix)}\n`;
  }
  return out;
}
