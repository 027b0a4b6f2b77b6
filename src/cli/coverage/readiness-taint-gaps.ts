/**
 * Readiness taints part way through a rollout: an agent some of whose DaemonSets remove a readiness taint
 * (READINESS_TAINT_ANNOTATION) while others of the same agent do not. `readinessTaint` belongs to a release, so a
 * rollout that enables it leaves the held groups on the previous release (no toleration of the taint, no remover),
 * and one that drops it (or renames it) leaves the promoted groups without them while the held groups still remove
 * it. A node of such a group that joins with the taint keeps it: the DaemonSet controller creates no pod that does
 * not tolerate a NoSchedule taint of the node (pkg/controller/daemon/daemon_controller.go, NodeShouldRunDaemonPod's
 * predicates), a pod that tolerates it runs no remover, and the scheduler places no workload that does not tolerate
 * it (pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go, TaintToleration.Filter). Pure: plain data.
 */
import { compare, DaemonSetInfo, ManifestSet } from './manifests';
import { NodeFacts } from './nodes';
import { readinessTaintsOf, selectsIgnoringTaints } from './readiness-taints';
import { controllerAddedTolerations, tolerated } from '../../scheduling/tolerations';
import { TaintJson } from '../../scheduling/types';

/** One DaemonSet of an agent that does not remove the agent's readiness taint. */
export interface ReadinessTaintGapDaemonSet {
  readonly id: string;
  /** its rollout group label (`wave-1`, `fleet`, `fleet.large`), when it is part of a rollout */
  readonly group?: string;
  /** its pods tolerate the taint (its tolerations and those the DaemonSet controller adds): they run there, without a remover */
  readonly tolerates: boolean;
}

/**
 * Which way the agent's DaemonSets differ, by their place in the wave order (WAVE_INDEX_ANNOTATION):
 * - held: the DaemonSets without the taint come after those with it: held groups keep a previous release without it
 *   (a rollout that enables the taint, or a new agent's first install);
 * - dropped: they come before them: the promoted release has no such taint (a rollout that drops or renames it);
 * - unordered: the DaemonSets carry no wave order that tells.
 */
export type ReadinessTaintGapDirection = 'held' | 'dropped' | 'unordered';

/** An agent's readiness taint that some of its DaemonSets remove and others do not. */
export interface ReadinessTaintGap {
  readonly agent: string;
  readonly namespace: string;
  readonly taint: TaintJson;
  readonly direction: ReadinessTaintGapDirection;
  /** the DaemonSets that remove it, in wave order, with their rollout groups */
  readonly removers: readonly { readonly id: string; readonly group?: string }[];
  /** the agent's DaemonSets that do not, in wave order */
  readonly gaps: readonly ReadinessTaintGapDaemonSet[];
  /** inventory nodes carrying the taint now that a gap DaemonSet selects (whatever their taints): they keep it. Sorted. */
  readonly nodes: readonly string[];
}

/**
 * Every readiness taint of the tree that its agent's DaemonSets (same agent, same namespace) do not all remove. A
 * DaemonSet's selection is read without its taints (nodeSelector, required node affinity, nodeName): a node it selects
 * that carries the taint either gets none of its pods (untolerated) or one without the remover.
 */
export function readinessTaintGaps(set: ManifestSet, nodes: readonly NodeFacts[]): ReadinessTaintGap[] {
  const taints = readinessTaintsOf(set);
  if (taints.length === 0) return [];
  const byId = new Map(set.daemonSets.map((d) => [d.id, d]));
  const gaps: ReadinessTaintGap[] = [];
  for (const { agent, taint, daemonSets } of taints) {
    const removerInfos = daemonSets.map((id) => byId.get(id)!);
    for (const namespace of [...new Set(removerInfos.map((d) => d.namespace))].sort(compare)) {
      const removers = removerInfos.filter((d) => d.namespace === namespace);
      const removing = new Set(removers.map((d) => d.id));
      const others = set.daemonSets.filter((d) => d.agent === agent && d.namespace === namespace && !removing.has(d.id)).sort(inWaveOrder);
      if (others.length === 0) continue;
      const carrying = nodes.filter((n) => n.taints.some((t) => t.key === taint.key));
      const held = carrying.filter((n) => others.some((d) => selectsIgnoringTaints(d, n))).map((n) => n.name).sort(compare);
      gaps.push({
        agent,
        namespace,
        taint,
        direction: directionOf(removers, others),
        removers: removers.sort(inWaveOrder).map((d) => ({ id: d.id, group: d.rolloutGroup })),
        gaps: others.map((d) => ({
          id: d.id, group: d.rolloutGroup, tolerates: tolerated([...d.tolerations, ...controllerAddedTolerations(d.hostNetwork)], taint),
        })),
        nodes: held,
      });
    }
  }
  return gaps;
}

/**
 * In wave order (WAVE_INDEX_ANNOTATION; DaemonSets without one last), then by rollout group (a wave's default profile,
 * `wave-1`, before its resource profiles, `wave-1.large`: src/waves/profiles.ts profileGroupLabel), then by id.
 */
function inWaveOrder(a: DaemonSetInfo, b: DaemonSetInfo): number {
  return (a.waveIndex ?? Infinity) - (b.waveIndex ?? Infinity) || compare(a.rolloutGroup ?? '', b.rolloutGroup ?? '') || compare(a.id, b.id);
}

function directionOf(removers: readonly DaemonSetInfo[], others: readonly DaemonSetInfo[]): ReadinessTaintGapDirection {
  const r = removers.map((d) => d.waveIndex);
  const o = others.map((d) => d.waveIndex);
  if ([...r, ...o].some((i) => i === undefined)) return 'unordered';
  const [rMin, rMax] = [Math.min(...(r as number[])), Math.max(...(r as number[]))];
  const [oMin, oMax] = [Math.min(...(o as number[])), Math.max(...(o as number[]))];
  if (oMin > rMax) return 'held';
  if (oMax < rMin) return 'dropped';
  return 'unordered';
}

/**
 * For each DaemonSet, the readiness taints of its agent that other DaemonSets of the agent remove and it does not:
 * its not tolerating them is the rollout's state (held groups on a release without the taint), which
 * readinessTaintGaps explains, not a toleration to add.
 */
export function gapTaintKeys(set: ManifestSet): Map<string, Set<string>> {
  const keys = new Map<string, Set<string>>();
  for (const gap of readinessTaintGaps(set, [])) {
    for (const d of gap.gaps) (keys.get(d.id) ?? keys.set(d.id, new Set()).get(d.id)!).add(gap.taint.key);
  }
  return keys;
}

/** Nodes carrying an agent's readiness taint that no DaemonSet of the agent selects. */
export interface UncoveredReadinessTaint {
  readonly agent: string;
  readonly taint: TaintJson;
  /** the DaemonSets that remove it, in wave order */
  readonly daemonSets: readonly string[];
  /** the nodes, sorted */
  readonly nodes: readonly string[];
}

/**
 * The inventory nodes carrying an agent's readiness taint that none of the agent's DaemonSets (in the namespaces of
 * those that remove it) selects, whatever the nodes' taints: no pod of the agent is ever created there, so nothing
 * removes the taint. A rollout that installs a new agent wave by wave renders no DaemonSet for the groups not
 * promoted yet; a node pool may give the taint to nodes the agent does not cover (the GPU driver's on a CPU pool).
 */
export function uncoveredReadinessTaints(set: ManifestSet, nodes: readonly NodeFacts[]): UncoveredReadinessTaint[] {
  const result: UncoveredReadinessTaint[] = [];
  const byId = new Map(set.daemonSets.map((d) => [d.id, d]));
  for (const { agent, taint, daemonSets } of readinessTaintsOf(set)) {
    const carrying = nodes.filter((n) => n.taints.some((t) => t.key === taint.key));
    if (carrying.length === 0) continue;
    const namespaces = new Set(daemonSets.map((id) => byId.get(id)!.namespace));
    const own = set.daemonSets.filter((d) => d.agent === agent && namespaces.has(d.namespace));
    const uncovered = carrying.filter((n) => !own.some((d) => selectsIgnoringTaints(d, n))).map((n) => n.name).sort(compare);
    if (uncovered.length === 0) continue;
    result.push({ agent, taint, daemonSets: daemonSets.map((id) => byId.get(id)!).sort(inWaveOrder).map((d) => d.id), nodes: uncovered });
  }
  return result;
}
