/**
 * `plan`'s readiness taint findings:
 * - never-starts (readiness-taint): in the after-tree, an agent that does not tolerate another agent's readiness
 *   taint (src/cli/coverage/readiness-taints.ts); a warning when the before-tree had the same wait;
 * - never-starts (readiness-taint-orphaned): a readiness taint the before-tree's agents remove and no agent of the
 *   after-tree does (the agent deleted, or its taint renamed or dropped) while node pools still give new nodes that
 *   taint: nothing removes it any more, so no pod that does not tolerate it lands on a new node. Node pools are
 *   usually not in the trees: the finding is an error unless the after-tree's Karpenter NodePools show that none
 *   lists the taint, or an object of the after-tree acknowledges it (RETIRED_READINESS_TAINTS_ANNOTATION);
 * - never-starts (readiness-taint-held, readiness-taint-dropped): a rollout part way through enabling or dropping a
 *   readiness taint, whose groups do not all remove it (src/cli/plan/readiness-taint-gaps.ts).
 */
import type { Finding } from './finding';
import { readinessTaintGapFindings } from './readiness-taint-gaps';
import { CoverageReport } from '../coverage/analysis';
import { compare, isObject, ManifestSet } from '../coverage/manifests';
import { NodeFacts } from '../coverage/nodes';
import { describeWait, readinessTaintsOf, readinessTaintWaits, waitCycles, waitFix } from '../coverage/readiness-taints';

/**
 * The annotation, on any object of the after-tree, that says the node pools no longer give new nodes these readiness
 * taints: a comma-separated list of taint keys. `plan` then reports a removed agent's taint as a warning.
 */
export const RETIRED_READINESS_TAINTS_ANNOTATION = 'node-agents.cdk8s.io/retired-readiness-taints';

/** Karpenter NodePools of a tree (karpenter.sh), with the taint keys each gives its nodes (startupTaints and taints). */
export function nodePools(set: ManifestSet): { name: string; keys: string[] }[] {
  return set.documents.map((d) => d.object)
    .filter((o) => o.kind === 'NodePool' && typeof o.apiVersion === 'string' && o.apiVersion.startsWith('karpenter.sh/'))
    .map((o) => {
      const spec = isObject(o.spec) && isObject(o.spec.template) && isObject(o.spec.template.spec) ? o.spec.template.spec : {};
      const keys = [...(Array.isArray(spec.startupTaints) ? spec.startupTaints : []), ...(Array.isArray(spec.taints) ? spec.taints : [])]
        .filter((t: unknown) => isObject(t) && typeof t.key === 'string').map((t: { key: string }) => t.key);
      return { name: isObject(o.metadata) && typeof o.metadata.name === 'string' ? o.metadata.name : '?', keys };
    });
}

function retiredKeys(set: ManifestSet): Set<string> {
  const keys = new Set<string>();
  for (const { object } of set.documents) {
    const annotations = isObject(object.metadata) && isObject(object.metadata.annotations) ? object.metadata.annotations : {};
    const value = annotations[RETIRED_READINESS_TAINTS_ANNOTATION];
    if (typeof value === 'string') for (const key of value.split(',')) if (key.trim() !== '') keys.add(key.trim());
  }
  return keys;
}

export function readinessTaintFindings(before: ManifestSet, after: ManifestSet, beforeReport: CoverageReport, afterReport: CoverageReport,
  nodes: readonly NodeFacts[]): Finding[] {
  return [...waitFindings(before, after, beforeReport, afterReport), ...orphanFindings(before, after, nodes),
    ...readinessTaintGapFindings(before, after, nodes, nodePools)];
}

function waitFindings(before: ManifestSet, after: ManifestSet, beforeReport: CoverageReport, afterReport: CoverageReport): Finding[] {
  const waits = readinessTaintWaits(after, afterReport);
  if (waits.length === 0) return [];
  const standing = new Set(readinessTaintWaits(before, beforeReport).map((w) => `${w.waiter}\0${w.on}\0${w.taint.key}`));
  const cycles = waitCycles(waits);
  return waits.map((w): Finding => {
    const old = standing.has(`${w.waiter}\0${w.on}\0${w.taint.key}`);
    return {
      kind: 'never-starts',
      severity: old ? 'warning' : 'error',
      cause: 'readiness-taint',
      agent: w.waiter,
      daemonSets: w.waiterDaemonSets,
      nodes: w.nodes,
      message: `${describeWait(w, cycles.get(w))} (${w.nodes.length} node${w.nodes.length === 1 ? '' : 's'} run both)${old ? ' (already so before the change)' : ''}`,
      fix: waitFix(w),
      ...(old ? { standing: true } : {}),
    };
  });
}

function orphanFindings(before: ManifestSet, after: ManifestSet, nodes: readonly NodeFacts[]): Finding[] {
  const kept = new Set(readinessTaintsOf(after).map((t) => t.taint.key));
  const pools = nodePools(after);
  const retired = retiredKeys(after);
  const findings: Finding[] = [];
  for (const { agent, taint, daemonSets } of readinessTaintsOf(before)) {
    if (kept.has(taint.key)) continue;
    const listing = pools.filter((p) => p.keys.includes(taint.key)).map((p) => p.name).sort(compare);
    // the trees hold the NodePools and none lists the taint: new nodes no longer get it
    if (pools.length > 0 && listing.length === 0) continue;
    const carrying = nodes.filter((n) => n.taints.some((t) => t.key === taint.key)).map((n) => n.name).sort(compare);
    const acknowledged = retired.has(taint.key) && listing.length === 0;
    const where = listing.length > 0 ? `the NodePools ${listing.join(', ')} still list it` : 'the node pools that give new nodes this taint (not in the trees) still do';
    const now = carrying.length > 0 ? `; ${carrying.length} node${carrying.length === 1 ? '' : 's'} carry it now and keep it` : '';
    findings.push({
      kind: 'never-starts',
      severity: acknowledged ? 'warning' : 'error',
      cause: 'readiness-taint-orphaned',
      agent,
      daemonSets,
      nodes: carrying,
      message: `after the change no agent removes the readiness taint ${taint.key}:${taint.effect} that ${agent} removed, and ${where}: `
        + `every new node keeps it, and no pod that does not tolerate it ever lands there${now}`
        + (acknowledged ? ` (acknowledged: ${RETIRED_READINESS_TAINTS_ANNOTATION} lists it)` : ''),
      fix: `take ${taint.key} out of the node pools' startup taints first (Karpenter NodePool spec.template.spec.startupTaints, the node groups' `
        + `taints) and remove it from the nodes that carry it (kubectl taint nodes NODE ${taint.key}:${taint.effect}-), then remove the agent or its `
        + `readiness taint; once the node pools no longer list it, say so with the annotation ${RETIRED_READINESS_TAINTS_ANNOTATION}: "${taint.key}" on any object of the change`,
    });
  }
  return findings;
}
