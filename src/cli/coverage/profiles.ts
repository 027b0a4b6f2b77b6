/**
 * How the node tools read resource profiles: an agent's DaemonSets of one profile carry the rollout-group label
 * `<wave>.<profile>` (the default profile: the wave alone), so a profile's DaemonSet belongs to its wave exactly as
 * the default's does, and all of them are one agent (`app.kubernetes.io/name`). Pure.
 */
import { DaemonSetInfo } from './manifests';
import { DEFAULT_PROFILE, splitGroupLabel } from '../../waves/profiles';

/** The wave a DaemonSet's rollout group names (`fleet` for the remainder), whatever its profile; undefined without a group. */
export function waveOfGroup(group: string | undefined): string | undefined {
  return group === undefined ? undefined : splitGroupLabel(group).wave;
}

/** The resource profile of a DaemonSet (`default` for the nodes matching no profile, and for agents without profiles). */
export function profileOf(info: DaemonSetInfo): string {
  return info.rolloutGroup === undefined ? DEFAULT_PROFILE : splitGroupLabel(info.rolloutGroup).profile;
}

/**
 * A profile's wave DaemonSet covering zero nodes gates nothing (Argo CD counts it Healthy at once) only when its
 * profile has nodes elsewhere: then those nodes take the new version without a canary of their own. A profile with
 * no node at all (a node pool not scaled up yet) is no problem. `covered(id)` is how many nodes a DaemonSet covers.
 */
export function emptyProfileIsUnused(info: DaemonSetInfo, members: readonly DaemonSetInfo[], covered: (id: string) => number): boolean {
  const profile = profileOf(info);
  if (profile === DEFAULT_PROFILE) return false;
  return members.filter((m) => m.agent === info.agent && m.namespace === info.namespace && profileOf(m) === profile)
    .every((m) => covered(m.id) === 0);
}

/** The resource profile a rollout-group label value names (`default` for a wave alone). */
export function profileOfGroup(group: string): string {
  return splitGroupLabel(group).profile;
}

/**
 * Nodes no resource profile of an agent can own: the value of a label its profiles compare as an integer (Gt/Lt) is
 * not one, so the scheduler's parse fails and neither that profile nor the default (whose terms use Gt/Lt for the
 * gaps, or DoesNotExist) matches (k8s.io/apimachinery labels/selector.go, Requirement.Matches). Without this the node
 * would read as not selected: a silent gap. One entry per agent, the nodes it misses and the labels at fault.
 */
export function unprofiledNodes(members: readonly DaemonSetInfo[], nodes: readonly { name: string; labels: Readonly<Record<string, string>> }[],
  covered: (node: string) => boolean): { agent: string; daemonSets: string[]; nodes: string[]; labels: string[] }[] {
  const byAgent = new Map<string, DaemonSetInfo[]>();
  for (const m of members) if (m.rolloutGroup?.includes('.')) (byAgent.get(m.agent) ?? byAgent.set(m.agent, []).get(m.agent)!).push(m);
  const result: { agent: string; daemonSets: string[]; nodes: string[]; labels: string[] }[] = [];
  for (const [agent, profiled] of byAgent) {
    const keys = new Set(profiled.flatMap((d) => (d.requiredTerms ?? []).flatMap((t) => (t.matchExpressions ?? [])
      .filter((r) => r.operator === 'Gt' || r.operator === 'Lt').map((r) => r.key))));
    if (keys.size === 0) continue;
    const missed: string[] = [];
    const labels = new Set<string>();
    for (const node of nodes) {
      const bad = [...keys].filter((k) => node.labels[k] !== undefined && !/^-?\d+$/.test(node.labels[k]));
      if (bad.length === 0 || covered(node.name)) continue;
      missed.push(node.name);
      bad.forEach((k) => labels.add(`${k}=${node.labels[k]}`));
    }
    if (missed.length > 0) result.push({ agent, daemonSets: profiled.map((d) => d.id), nodes: missed, labels: [...labels].sort() });
  }
  return result;
}
