/**
 * How the node tools read resource profiles: an agent's DaemonSets of one profile carry the rollout-group label
 * `<wave>.<profile>` (the default profile: the wave alone), so a profile's DaemonSet belongs to its wave exactly as
 * the default's does, and all of them are one agent (`app.kubernetes.io/name`). Pure.
 */
import { DaemonSetInfo } from './manifests';
import { DEFAULT_PROFILE, splitGroupLabel } from '../waves/profiles';

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
