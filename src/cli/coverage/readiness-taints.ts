/**
 * Readiness taints in a tree of manifests: which agent removes which taint (READINESS_TAINT_ANNOTATION on its
 * DaemonSets), and which agents wait for another's. A new node joins with every readiness taint its node pool
 * lists; the DaemonSet controller creates no pod that does not tolerate a NoSchedule taint of the node
 * (pkg/controller/daemon/daemon_controller.go, NodeShouldRunDaemonPod with the TaintToleration predicate), so an
 * agent that does not tolerate another agent's readiness taint starts only after that agent is Ready there, and
 * never when that agent needs it first or when the two wait for each other. Pure: plain data.
 */
import { CoverageReport, idList, Problem } from './analysis';
import { compare, DaemonSetInfo, isObject, ManifestSet } from './manifests';
import { NodeFacts } from './nodes';
import { termsMatch, nodeSelectorMatches } from '../../scheduling/node-affinity';
import { readinessTaintOf } from '../../scheduling/readiness-taint';
import { controllerAddedTolerations, tolerated } from '../../scheduling/tolerations';
import { TaintJson } from '../../scheduling/types';

/** An agent's readiness taint, as its DaemonSets declare it. */
export interface TreeReadinessTaint {
  readonly agent: string;
  readonly taint: TaintJson;
  /** the DaemonSets that declare it (sorted ids) */
  readonly daemonSets: readonly string[];
}

/** One agent's DaemonSets not tolerating another agent's readiness taint, on the nodes both run on. */
export interface ReadinessTaintWait {
  readonly waiter: string;
  readonly waiterDaemonSets: readonly string[];
  /** the agent whose taint it waits for (the waiter itself: an agent that does not tolerate its own taint) */
  readonly on: string;
  readonly taint: TaintJson;
  /** nodes both agents target, sorted */
  readonly nodes: readonly string[];
}

/** Every readiness taint the tree's DaemonSets declare, by agent (an agent whose releases declare two has two). */
export function readinessTaintsOf(set: ManifestSet): TreeReadinessTaint[] {
  const byKey = new Map<string, { agent: string; taint: TaintJson; daemonSets: string[] }>();
  const agentOf = new Map(set.daemonSets.map((d) => [d.id, d.agent]));
  for (const doc of set.documents) {
    const o = doc.object;
    if (o.kind !== 'DaemonSet' || !isObject(o.metadata)) continue;
    const taint = readinessTaintOf(o.metadata.annotations);
    const id = `${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;
    const agent = agentOf.get(id);
    if (taint === undefined || agent === undefined) continue;
    const key = `${agent}\0${taint.key}`;
    const entry = byKey.get(key) ?? { agent, taint, daemonSets: [] };
    entry.daemonSets.push(id);
    byKey.set(key, entry);
  }
  return [...byKey.values()].map((e) => ({ ...e, daemonSets: e.daemonSets.sort(compare) }))
    .sort((a, b) => compare(a.agent, b.agent) || compare(a.taint.key, b.taint.key));
}

/** Whether the DaemonSet's nodeSelector and required node affinity select the node, whatever its taints. */
export function selectsIgnoringTaints(ds: DaemonSetInfo, node: NodeFacts): boolean {
  if (ds.nodeName !== undefined && ds.nodeName !== node.name) return false;
  return nodeSelectorMatches(ds.nodeSelector, node.labels) && (ds.requiredTerms === undefined || termsMatch(ds.requiredTerms, node.identity));
}

/**
 * The waits of the tree: for each readiness taint, each DaemonSet that does not tolerate it (its tolerations and
 * those the DaemonSet controller adds) on the nodes the taint's agent covers and it selects. The agent's own
 * DaemonSets are included: one that does not tolerate its own taint never starts on a new node, nor does anything
 * waiting for it.
 */
export function readinessTaintWaits(set: ManifestSet, report: CoverageReport): ReadinessTaintWait[] {
  const taints = readinessTaintsOf(set);
  if (taints.length === 0) return [];
  const coveredById = new Map(report.daemonSets.map((d) => [d.info.id, d.positions]));
  const waits: ReadinessTaintWait[] = [];
  for (const { agent, taint, daemonSets } of taints) {
    // the nodes the taint's agent runs on: where new nodes get the taint and its pod removes it
    const at = new Set(daemonSets.flatMap((id) => coveredById.get(id) ?? []));
    if (at.size === 0) continue;
    const byWaiter = new Map<string, { ids: Set<string>; nodes: Set<string> }>();
    for (const ds of set.daemonSets) {
      if (tolerated([...ds.tolerations, ...controllerAddedTolerations(ds.hostNetwork)], taint)) continue;
      for (const position of at) {
        const node = report.nodes[position];
        if (!selectsIgnoringTaints(ds, node)) continue;
        const entry = byWaiter.get(ds.agent) ?? { ids: new Set<string>(), nodes: new Set<string>() };
        entry.ids.add(ds.id);
        entry.nodes.add(node.name);
        byWaiter.set(ds.agent, entry);
      }
    }
    for (const [waiter, { ids, nodes }] of byWaiter) {
      waits.push({ waiter, waiterDaemonSets: [...ids].sort(compare), on: agent, taint, nodes: [...nodes].sort(compare) });
    }
  }
  return waits.sort((a, b) => compare(a.waiter, b.waiter) || compare(a.on, b.on));
}

/** What a wait means, one sentence; `cycle` names the taint of the waiter the other agent waits for in turn. */
export function describeWait(wait: ReadinessTaintWait, cycle?: TaintJson): string {
  const key = `${wait.taint.key}:${wait.taint.effect}`;
  if (wait.waiter === wait.on) {
    return `${idList(wait.waiterDaemonSets)} of ${wait.waiter} does not tolerate its own readiness taint ${key}: on a new node its pod is never created, `
      + 'so nothing removes the taint and no pod that does not tolerate it ever lands there';
  }
  const base = `${idList(wait.waiterDaemonSets)} (${wait.waiter}) does not tolerate ${wait.on}'s readiness taint ${key}: on a new node the DaemonSet `
    + `controller creates no ${wait.waiter} pod until ${wait.on} is Ready there and removes the taint`;
  return cycle
    ? `${base}, and ${wait.on} does not tolerate ${wait.waiter}'s readiness taint ${cycle.key}:${cycle.effect} either: neither ever starts on a new node`
    : `${base}; if ${wait.on} needs ${wait.waiter} to turn Ready (a CNI, a storage or network agent), neither ever starts`;
}

/** The toleration that ends a wait. */
export function waitFix(wait: ReadinessTaintWait): string {
  return `tolerate the taint in ${wait.waiter}: tolerations [{ key: "${wait.taint.key}", operator: Exists, effect: ${wait.taint.effect} }] `
    + `(or tolerateAllTaints), so it starts beside ${wait.on} on new nodes${wait.waiter === wait.on ? '' : '; agents never wait for each other\'s readiness taints'}`;
}

/** For each wait, the taint of the waiter that the awaited agent itself waits for (a cycle), if any. */
export function waitCycles(waits: readonly ReadinessTaintWait[]): Map<ReadinessTaintWait, TaintJson | undefined> {
  return new Map(waits.map((w) => [w, waits.find((o) => o.waiter === w.on && o.on === w.waiter && w.waiter !== w.on)?.taint]));
}

/** `coverage`'s problems: every wait is a never-starts problem. */
export function treeReadinessTaintProblems(set: ManifestSet, report: CoverageReport): Problem[] {
  const waits = readinessTaintWaits(set, report);
  const cycles = waitCycles(waits);
  return waits.map((w) => ({
    kind: 'never-starts' as const,
    agent: w.waiter,
    daemonSets: w.waiterDaemonSets,
    nodes: w.nodes,
    message: `${describeWait(w, cycles.get(w))} (${w.nodes.length} node${w.nodes.length === 1 ? '' : 's'} run both). Fix: ${waitFix(w)}.`,
    fix: waitFix(w),
  }));
}

/** The report with the tree's readiness taint problems added (in the report's order: kind, agent, message). */
export function withReadinessTaintProblems(set: ManifestSet, report: CoverageReport): CoverageReport {
  const extra = treeReadinessTaintProblems(set, report);
  if (extra.length === 0) return report;
  const problems = [...report.problems, ...extra]
    .sort((a, b) => compare(a.kind, b.kind) || compare(a.agent ?? '', b.agent ?? '') || compare(a.message, b.message));
  return { ...report, problems };
}
