/**
 * The checks of `resourceProfiles`: each profile's pods are checked like the release's own (resources against
 * limits, container names, config), and the profiles must be the same partition in both releases of a rollout.
 * Pure: no constructs.
 */
import { AgentSpec } from './agent-spec';
import { profileSpec, profileSpecs } from './profile-plan';
import { checkAgentSpec } from './release-checks';
import { AgentResourceProfile } from './resource-profiles';
import { checkResources } from '../validation/values';

/** The release's own profile of that name; undefined for the default profile (the release's own resources). */
export function profileFor(release: AgentSpec, name: string): AgentResourceProfile | undefined {
  return (release.props.resourceProfiles ?? []).find((p) => p.name === name);
}

/** Problems with the profiles of both releases, each naming `resourceProfiles[i]` (and `rollout.previous`). */
export function profileCheckProblems(current: AgentSpec, previous: AgentSpec | undefined): string[] {
  const problems = releaseProblems(current, '');
  if (previous === undefined) return problems;
  problems.push(...releaseProblems(previous, 'rollout.previous: '));
  const given = previous.props.resourceProfiles;
  if (given !== undefined && given.length > 0) {
    const layout = (spec: AgentSpec) => JSON.stringify(profileSpecs(spec.props.resourceProfiles));
    if (layout(previous) !== layout(current)) {
      problems.push('rollout.previous has resourceProfiles whose names or nodes differ from the current ones: the profiles\' DaemonSets are '
        + 'shared by both releases, so a held wave cannot keep another partition. Give both releases the same profile names and nodes (their '
        + 'resources may differ); change a profile\'s nodes in a release of its own, without waves held');
    }
  }
  return problems;
}

function releaseProblems(release: AgentSpec, prefix: string): string[] {
  const problems: string[] = [];
  (release.props.resourceProfiles ?? []).forEach((profile, i) => {
    const prop = `resourceProfiles[${i}]`;
    const where = `${prefix}${prop} ("${profile.name}")`;
    problems.push(...checkResources(`${prefix}${prop}.resources`, profile.resources));
    for (const [container, resources] of Object.entries(profile.containerResources ?? {})) {
      problems.push(...checkResources(`${prefix}${prop}.containerResources["${container}"]`, resources));
    }
    if (profile.storageMaxChunksUp !== undefined || profile.storageBacklogMemLimit !== undefined) {
      problems.push(`${where}: storageMaxChunksUp and storageBacklogMemLimit size fluent-bit's buffers: only LogCollectorDaemonSet reads them. `
        + 'Give this agent\'s per-profile settings in the profile\'s configData');
    }
    if (problems.length > 0) return;
    // the release's own checks passed: what fails now is the profile's (its resources, containers, config)
    problems.push(...checkAgentSpec(profileSpec(release, profile)).map((m) => `${where}: ${m}`));
  });
  return problems;
}
