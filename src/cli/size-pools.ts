/**
 * `size --nodepools`: the agents' overhead per Karpenter NodePool and instance type before and after the
 * recommendation, computed by the same check `plan --nodepools` runs (src/capacity/nodepools.ts through
 * src/cli/nodepool-hooks.ts) on the tree running now and on the tree the recommendation would make (after-tree.ts).
 */
import { formatAmount } from './capacity/resources';
import { capacityGate } from './capacity-hooks';
import { analyzeCoverage } from './coverage/analysis';
import { ManifestSet } from './coverage/manifests';
import { nodeFacts } from './coverage/nodes';
import { MAX_PRINTED_PER_KIND } from './limits';
import { nodePoolCheck, nodePoolFlags } from './nodepool-hooks';
import { NodeJson } from '../scheduling/types';
import { afterTree } from './size/after-tree';
import { AgentSizing } from './size/groups';

export type PoolFlags = NonNullable<ReturnType<typeof nodePoolFlags>>;

/** One line per pool and instance type: the agents' requests and their share of the type, before → after. */
export function poolLines(flags: PoolFlags, cwd: string, tree: ManifestSet, inventory: readonly NodeJson[],
  agents: readonly AgentSizing[]): string[] {
  const podLevel = capacityGate(inventory, undefined, 'size').enabled;
  const coverage = analyzeCoverage(tree.daemonSets, nodeFacts(inventory));
  const after = afterTree(tree, agents);
  const before = nodePoolCheck(flags, cwd, { tree, inventory, coverage, podLevel });
  const changed = nodePoolCheck(flags, cwd, { tree: after.tree, before: tree, inventory, coverage, podLevel });
  const lines = after.skipped.map((a) => `${a}: its DaemonSets already have resource profiles; the NodePool figures keep them as they are`);
  const rows: string[] = [];
  for (const pool of changed.pools) {
    const was = before.pools.find((p) => p.name === pool.name);
    for (const t of pool.instanceTypes) {
      const b = was?.instanceTypes.find((x) => x.name === t.name);
      if (b === undefined) continue;
      rows.push(`NodePool ${pool.name} / ${t.name}: the agents request ${formatAmount('cpu', b.requests.cpu ?? 0)} (${b.cpuShare}%) → `
        + `${formatAmount('cpu', t.requests.cpu ?? 0)} (${t.cpuShare}%) cpu, ${formatAmount('memory', b.requests.memory ?? 0)} (${b.memoryShare}%) → `
        + `${formatAmount('memory', t.requests.memory ?? 0)} (${t.memoryShare}%) memory${t.shortfall.length > 0 ? `; does not fit: ${t.shortfall.join(', ')}` : ''}`);
    }
  }
  lines.push(...rows.slice(0, MAX_PRINTED_PER_KIND));
  if (rows.length > MAX_PRINTED_PER_KIND) lines.push(`… ${rows.length - MAX_PRINTED_PER_KIND} more NodePool / instance type pairs`);
  const errors = changed.findings.filter((f) => f.severity === 'error' && !before.findings.some((g) => g.message === f.message));
  for (const f of errors.slice(0, MAX_PRINTED_PER_KIND)) lines.push(`new node-pool finding (${f.cause}): ${f.message}`);
  return lines;
}
