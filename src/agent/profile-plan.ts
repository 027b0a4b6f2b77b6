/**
 * Resource profiles crossed with the rollout groups: which DaemonSets an agent renders, each with its release, its
 * profile, node affinity, pace and names. Pure: no constructs.
 *
 * Without profiles the plan is the rollout plan (or the one fleet DaemonSet) unchanged, so existing output stays
 * byte-identical. With profiles, every group of the rollout is rendered once per profile, the default profile
 * (nodes matching no profile) keeping the names and labels the agent has without profiles.
 */
import { AgentSpec, baseTerms, resolveAgentSpec } from './agent-spec';
import { AgentResourceProfile } from './resource-profiles';
import { AgentRollout } from './rollout';
import { planRollout, RolloutGroupPlan } from './rollout-plan';
import { NodeSelectorTermJson } from '../scheduling/types';
import {
  DEFAULT_PROFILE, MAX_PROFILE_DAEMONSET_NAME, PROFILE_ANNOTATION, profileGroupLabel, profileProblems, profileResourceName, ProfileSpec, profileTerms,
} from '../waves/profiles';

/** One DaemonSet to render: a rollout group (`name`, the wave) of one profile. */
export interface ProfileGroupPlan extends RolloutGroupPlan {
  /** The profile (`default` for the nodes matching none, and for every DaemonSet of an agent without profiles). */
  readonly profile: string;
  /** The rollout-group label value of its pods: the wave, or `<wave>.<profile>`. */
  readonly groupLabel: string;
}

export interface ProfilePlan {
  readonly groups: ProfileGroupPlan[];
  readonly problems: string[];
}

/** The profiles' partition specs, in order. */
export function profileSpecs(profiles: readonly AgentResourceProfile[] | undefined): ProfileSpec[] {
  return (profiles ?? []).map((p) => p.nodes._toSpec(p.name));
}

/**
 * The release's spec on one profile's nodes: the profile's resources (main container, then other containers by
 * name) and config replace the release's; everything else is the release's own.
 */
export function profileSpec(release: AgentSpec, profile: AgentResourceProfile | undefined): AgentSpec {
  if (profile === undefined) return release;
  const props = release.props;
  const mainName = props.containerName ?? release.name;
  const containerResources = { ...props.containerResources, ...profile.containerResources };
  // the main container's resources come from `resources` unless containerResources names it
  if (profile.resources !== undefined) delete containerResources[mainName];
  return resolveAgentSpec({
    ...props,
    resources: profile.resources ?? props.resources,
    containerResources: Object.keys(containerResources).length > 0 ? containerResources : undefined,
    configData: profile.configData ?? props.configData,
  }, { name: release.name, namespace: release.namespace, identityLabels: release.identityLabels });
}

/**
 * The DaemonSets of an agent: each rollout group (or the one fleet group) of each profile. `current` and `previous`
 * give each release's base node-affinity terms and pace; the profiles are the current release's (a held group keeps
 * the previous release's resources on the same profile's nodes).
 */
export function planProfiles(input: {
  readonly rollout?: AgentRollout;
  readonly profiles: readonly AgentResourceProfile[];
  readonly current: AgentSpec;
  readonly previous?: AgentSpec;
  readonly identical: boolean;
  readonly name: string;
}): ProfilePlan {
  const { rollout, current, previous, name } = input;
  const specs = profileSpecs(input.profiles);
  const problems = profileProblems(specs);
  if (problems.length > 0) return { groups: [], problems };
  const profileNames = [...specs.map((s) => s.name), DEFAULT_PROFILE];
  let currentTerms: NodeSelectorTermJson[][];
  let previousTerms: NodeSelectorTermJson[][] | undefined;
  try {
    // without profiles: the release's own terms, as the agent renders them without profiles
    currentTerms = specs.length === 0 ? [baseTerms(current)] : profileTerms(specs, baseTerms(current)).map((g) => g.terms);
    previousTerms = previous === undefined ? undefined
      : specs.length === 0 ? [baseTerms(previous)] : profileTerms(specs, baseTerms(previous)).map((g) => g.terms);
  } catch (e) {
    return { groups: [], problems: [(e as Error).message] };
  }
  const perProfile = (specs.length === 0 ? [DEFAULT_PROFILE] : profileNames).map((profile, i) => {
    if (!rollout) {
      const group: RolloutGroupPlan = { name: 'fleet', id: 'DaemonSet', dsName: name, promoted: true, terms: currentTerms[i], strategy: current.updateStrategy, annotations: {} };
      return { profile, plan: { groups: [group], problems: [] } };
    }
    const plan = planRollout(
      rollout,
      { baseTerms: currentTerms[i], pace: current.updateStrategy },
      previous ? { baseTerms: previousTerms![i], pace: previous.updateStrategy } : undefined,
      input.identical,
      name,
    );
    return { profile, plan };
  });
  const seen = new Set<string>();
  for (const { plan } of perProfile) {
    for (const p of plan.problems) {
      if (!seen.has(p)) problems.push(p);
      seen.add(p);
    }
  }
  // wave by wave, the default profile first: the order of `daemonSets`, and the default keeps the last (fleet) place
  const groups: ProfileGroupPlan[] = [];
  const waveNames = perProfile[perProfile.length - 1].plan.groups.map((g) => g.name);
  for (const wave of waveNames) {
    const ordered = [perProfile[perProfile.length - 1], ...perProfile.slice(0, -1)];
    for (const { profile, plan } of ordered) {
      const group = plan.groups.find((g) => g.name === wave);
      if (group !== undefined) groups.push(withProfile(group, profile, name, specs.length > 0));
    }
  }
  problems.push(...nameProblems(groups, specs.length > 0));
  return { groups, problems };
}

function withProfile(group: RolloutGroupPlan, profile: string, name: string, profiled: boolean): ProfileGroupPlan {
  if (!profiled) return { ...group, profile, groupLabel: group.name };
  const own = profile !== DEFAULT_PROFILE;
  return {
    ...group,
    id: own ? `${group.id}-profile-${profile}` : group.id,
    dsName: profileResourceName(name, group.dsName, profile),
    annotations: { ...group.annotations, [PROFILE_ANNOTATION]: profile },
    profile,
    groupLabel: profileGroupLabel(group.name, profile),
  };
}

/** Names the API server or the pod names would cut: a DaemonSet name past 57 characters, a group label past 63. */
function nameProblems(groups: readonly ProfileGroupPlan[], profiled: boolean): string[] {
  if (!profiled) return [];
  const problems: string[] = [];
  const names = new Map<string, ProfileGroupPlan>();
  for (const g of groups) {
    const clash = names.get(g.dsName);
    if (clash !== undefined) {
      problems.push(`resourceProfiles: profile "${g.profile}" of group "${g.name}" and profile "${clash.profile}" of group "${clash.name}" `
        + `both name a DaemonSet "${g.dsName}"; rename the profile or the wave`);
    }
    names.set(g.dsName, g);
    if (g.profile !== DEFAULT_PROFILE && g.dsName.length > MAX_PROFILE_DAEMONSET_NAME) {
      problems.push(`resourceProfiles: the DaemonSet "${g.dsName}" (profile "${g.profile}", group "${g.name}") has ${g.dsName.length} characters; `
        + `at most ${MAX_PROFILE_DAEMONSET_NAME} keep its pods' names "<DaemonSet>-<5 characters>" (the DaemonSet controller cuts a longer prefix). Shorten the profile name`);
    }
    if (g.groupLabel.length > 63) {
      problems.push(`resourceProfiles: the rollout-group label "${g.groupLabel}" (profile "${g.profile}", group "${g.name}") is longer than 63 characters, `
        + 'the label value limit; shorten the profile or wave name');
    }
  }
  return problems;
}
