/**
 * `plan`'s findings on a readiness taint part way through a rollout (src/cli/coverage/readiness-taint-gaps.ts): in the
 * after-tree, an agent some of whose DaemonSets remove its readiness taint while others do not.
 * - never-starts (readiness-taint-held): the held groups keep a previous release without the taint (a rollout that
 *   enables it). A node of theirs that joins with it (its node pool lists it) gets no pod of the agent (the
 *   DaemonSet controller's predicates: the taint is not tolerated) or one without the remover, keeps the taint, and
 *   takes no workload (the scheduler's TaintToleration filter) until its group is promoted.
 * - never-starts (readiness-taint-dropped): the promoted groups run a release without it (a rollout that drops or
 *   renames it) while the held groups still remove it: the promoted groups' new nodes keep it.
 * - never-starts (readiness-taint-uncovered): nodes carrying the taint that no DaemonSet of the agent selects (a new
 *   agent installed wave by wave has no DaemonSet for the groups not promoted yet; a node pool lists the taint of an
 *   agent that does not run on its nodes): an error naming the nodes.
 * Held and dropped are an error when nodes of those groups carry the taint now, or when Karpenter NodePools of the after-tree list it;
 * a warning when the trees do not show the node pools (the model cannot tell whether new nodes get the taint); no
 * finding when the after-tree's NodePools show that none lists it. A finding the before-tree has with the same
 * DaemonSets, nodes and NodePools or more is a warning marked standing: the change does not cause it.
 */
import type { Finding } from './finding';
import { ManifestSet } from '../coverage/manifests';
import { NodeFacts } from '../coverage/nodes';
import { ReadinessTaintGap, readinessTaintGaps, uncoveredReadinessTaints } from '../coverage/readiness-taint-gaps';

/** A Karpenter NodePool of a tree with the taint keys it gives its nodes. */
export interface TreeNodePool {
  readonly name: string;
  readonly keys: readonly string[];
}

/** What one gap's finding rests on: the nodes that carry the taint now, and the NodePools that list it. */
interface Evidence {
  readonly finding: Finding;
  readonly taint: string;
  /** the DaemonSets that do not remove it (none for nodes no DaemonSet selects) */
  readonly without: readonly string[];
  readonly pools: readonly string[];
}

export function readinessTaintGapFindings(before: ManifestSet, after: ManifestSet, nodes: readonly NodeFacts[],
  pools: (set: ManifestSet) => TreeNodePool[]): Finding[] {
  const found = gapEvidence(after, nodes, pools(after));
  if (found.length === 0) return [];
  const earlier = gapEvidence(before, nodes, pools(before));
  return found.map(({ finding, taint, without, pools: listing }) => {
    const was = earlier.find((e) => e.finding.cause === finding.cause && e.finding.agent === finding.agent && e.taint === taint
      && e.finding.severity === 'error' && subset(without, e.without) && subset(finding.nodes, e.finding.nodes) && subset(listing, e.pools));
    return was === undefined || finding.severity === 'warning' ? finding
      : { ...finding, severity: 'warning' as const, standing: true, message: `${finding.message} (already so before the change)` };
  });
}

function subset(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(b);
  return a.every((x) => set.has(x));
}

function gapEvidence(set: ManifestSet, nodes: readonly NodeFacts[], pools: readonly TreeNodePool[]): Evidence[] {
  const evidence: Evidence[] = uncoveredReadinessTaints(set, nodes).map((u) => {
    const taint = `${u.taint.key}:${u.taint.effect}`;
    return {
      taint: u.taint.key,
      without: [],
      pools: [],
      finding: {
        kind: 'never-starts',
        severity: 'error',
        cause: 'readiness-taint-uncovered',
        agent: u.agent,
        daemonSets: u.daemonSets,
        nodes: u.nodes,
        message: `${nodesText(u.nodes)} carr${u.nodes.length === 1 ? 'ies' : 'y'} ${u.agent}'s readiness taint ${taint}, and no DaemonSet of ${u.agent} `
          + 'selects them: no pod of the agent is created there, so nothing removes the taint and no pod that does not tolerate it lands there '
          + '(a new agent installed wave by wave has no DaemonSet for the groups not promoted yet; or their node pool gives the taint to nodes '
          + 'the agent does not run on)',
        fix: `keep ${taint} out of the node pools whose nodes ${u.agent} does not run on, and, for a new agent, out of every pool until its last `
          + `group is promoted; off the nodes that carry it: kubectl taint nodes NODE ${taint}-`,
      },
    };
  });
  for (const gap of readinessTaintGaps(set, nodes)) {
    const listing = pools.filter((p) => p.keys.includes(gap.taint.key)).map((p) => p.name).sort();
    // the tree holds the NodePools and none lists the taint, and no node of the groups carries it: nothing keeps it
    if (pools.length > 0 && listing.length === 0 && gap.nodes.length === 0) continue;
    evidence.push({ finding: gapFinding(gap, listing, pools.length > 0), taint: gap.taint.key, without: gap.gaps.map((d) => d.id), pools: listing });
  }
  return evidence;
}

function capped(names: readonly string[]): string {
  return `${names.slice(0, 6).join(', ')}${names.length > 6 ? `, … ${names.length - 6} more` : ''}`;
}

/** The rollout groups (`wave-1`, `fleet.large`) of DaemonSets, or their ids outside a rollout. */
function groupsOf(entries: readonly { id: string; group?: string }[]): string {
  return capped(entries.map((e) => e.group ?? e.id));
}

function nodesText(names: readonly string[]): string {
  return `${names.length} node${names.length === 1 ? '' : 's'} (${names.slice(0, 5).join(', ')}${names.length > 5 ? `, … ${names.length - 5} more` : ''})`;
}

function gapFinding(gap: ReadinessTaintGap, listing: readonly string[], poolsKnown: boolean): Finding {
  const taint = `${gap.taint.key}:${gap.taint.effect}`;
  const held = gap.direction !== 'dropped';
  const ids = gap.gaps.map((d) => d.id);
  const untolerating = gap.gaps.filter((d) => !d.tolerates);
  const groups = `${groupsOf(gap.gaps)} (${capped(ids)})`;
  const who = gap.direction === 'held'
    ? `${gap.agent}'s held rollout groups ${groups} keep the previous release, which does not remove its readiness taint ${taint}`
    : gap.direction === 'dropped'
      ? `${gap.agent}'s promoted rollout groups ${groups} run a release that does not remove the readiness taint ${taint}, which its held `
        + `groups ${groupsOf(gap.removers)} still remove`
      : `${gap.agent}'s DaemonSets ${capped(ids)} do not remove its readiness taint ${taint}, which ${groupsOf(gap.removers)} remove`;
  // `who` ends with the release that does not remove the taint (held), or with the DaemonSets that remove it (the others)
  const first = gap.direction === 'held';
  const pods = untolerating.length === gap.gaps.length
    ? `${first ? ' nor tolerate it' : '; nor do they tolerate it'}: the DaemonSet controller creates no pod of theirs on a node with the taint`
    : untolerating.length === 0 ? `${first ? ': their' : '; these groups\''} pods tolerate it and run there, without the remover`
      : `; ${groupsOf(untolerating)} do not tolerate it either (no pod of theirs is created on a node with the taint)`;
  const evidence = [
    ...gap.nodes.length > 0 ? [`${nodesText(gap.nodes)} of these groups carr${gap.nodes.length === 1 ? 'ies' : 'y'} it now`] : [],
    ...listing.length > 0 ? [`the NodePools ${listing.join(', ')} list it: their new nodes in these groups keep it`] : [],
  ];
  const unknown = poolsKnown ? '' : '; whether the node pools give new nodes this taint the trees do not show: they must not until '
    + (held ? 'every group removes it' : 'no group runs without its remover');
  const until = gap.direction === 'held' ? 'until its group is promoted'
    : gap.direction === 'dropped' ? 'for good: no release of these groups removes it' : 'while these DaemonSets stay as they are';
  const message = `${who}${pods}. A node of these groups that joins with the taint keeps it, and no pod that does `
    + `not tolerate it lands there ${until}${evidence.length > 0 ? `; ${evidence.join('; ')}` : unknown}`;
  const fix = held
    ? `add ${taint} to the node pools only after the last group is promoted (Karpenter NodePool spec.template.spec.startupTaints: `
      + 'the agent\'s karpenterStartupTaint() gives the entry once every group removes it), or promote the held groups now; '
      + `off the nodes that carry it: kubectl taint nodes NODE ${taint}-`
    : `take ${taint} out of the node pools' startup taints before a release without it reaches any group (or give the release its readinessTaint `
      + `back until they no longer list it); off the nodes that carry it: kubectl taint nodes NODE ${taint}-`;
  return {
    kind: 'never-starts',
    severity: evidence.length > 0 ? 'error' : 'warning',
    cause: held ? 'readiness-taint-held' : 'readiness-taint-dropped',
    agent: gap.agent,
    daemonSets: ids,
    nodes: gap.nodes,
    message,
    fix,
  };
}
