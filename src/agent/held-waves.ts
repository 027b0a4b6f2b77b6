/**
 * How held rollout waves are rendered.
 *
 * A rollout has two releases: the current props, and `rollout.previous`, the previous version's own
 * props (an `AgentRelease`). Both are resolved to an `AgentSpec` by the same code and checked by
 * the same checks. Every DaemonSet of a promoted group renders the current spec; every DaemonSet of
 * a held group renders the previous spec, and only it: its image, config (its own content-addressed
 * ConfigMap), env and Secret references, volumes, mounts, sidecars, init containers, probes,
 * resources, args, security settings and node requirements. A held wave is therefore byte-identical
 * to the same wave in the stage where the previous version ran everywhere, whatever changed.
 *
 * What every group shares cannot be held per wave. It is either rendered as the union both releases
 * need (the ClusterRole's rules, the ServiceAccount token, the namespace's Pod Security level, the
 * priority quota) or refused with the reason (the agent's name and namespace, the namespace and
 * PriorityClass objects it creates). This file decides which; the construct renders.
 *
 * Pure: no constructs.
 */
import { AgentSpec, widerPodSecurityLevel } from './agent-spec';
import { AgentPolicyRule, PodSecurityLevel } from './options';
import { sortedRecord } from '../validation/values';

/** The spec a rollout group renders. */
export function groupSpec(promoted: boolean, current: AgentSpec, previous: AgentSpec | undefined): AgentSpec {
  return promoted || !previous ? current : previous;
}

/** Changes between the releases that no per-wave rendering can hold: each refused with why and what to do. */
export function sharedObjectProblems(current: AgentSpec, previous: AgentSpec | undefined): string[] {
  if (!previous) return [];
  const problems: string[] = [];
  const c = current.props;
  const p = previous.props;
  if (previous.name !== current.name) {
    problems.push(`rollout.previous names the agent "${previous.name}" but the current props name it "${current.name}": every DaemonSet, `
      + 'the ServiceAccount and the RBAC objects are named after the agent, so a rename is a new agent, not a release. '
      + 'Give both releases the same name; to rename, deploy the new name as its own agent and remove the old one');
  }
  if (previous.namespace !== current.namespace) {
    problems.push(`rollout.previous runs in namespace "${previous.namespace}" but the current props in "${current.namespace}": `
      + 'all waves share one ServiceAccount and one namespace. Give both releases the same namespace; to move, deploy the agent anew in the other namespace');
  }
  if ((p.createNamespace ?? false) !== (c.createNamespace ?? false)) {
    problems.push('rollout.previous and the current props differ in createNamespace: the Namespace object is shared by every wave. '
      + 'Give both releases the same createNamespace; change it once every group is promoted and `previous` is dropped');
  }
  if (p.serviceAccountName !== c.serviceAccountName
    || JSON.stringify(sortedRecord(p.serviceAccountAnnotations)) !== JSON.stringify(sortedRecord(c.serviceAccountAnnotations))) {
    problems.push('rollout.previous and the current props differ in serviceAccountName or serviceAccountAnnotations: every wave runs as one '
      + 'ServiceAccount, so its identity (e.g. a workload-identity role) cannot differ per wave. Give both releases the same ServiceAccount '
      + 'settings; change them in a release of their own without waves held');
  }
  if (JSON.stringify(p.priorityClass ?? null) !== JSON.stringify(c.priorityClass ?? null)) {
    problems.push('rollout.previous and the current props differ in priorityClass: the PriorityClass object is shared by every wave '
      + '(and its value cannot be changed on a live object). Give both releases the same priorityClass; change it in a release of its own without waves held');
  }
  return problems;
}

/** The ClusterRole's rules: those of the current release, then those only the previous one has. */
export function sharedRbacRules(current: AgentSpec, previous: AgentSpec | undefined): AgentPolicyRule[] {
  const rules = [...current.rbacRules];
  const seen = new Set(rules.map(ruleKey));
  for (const rule of previous?.rbacRules ?? []) {
    if (!seen.has(ruleKey(rule))) {
      rules.push(rule);
      seen.add(ruleKey(rule));
    }
  }
  return rules;
}

/**
 * The ServiceAccount's own automount setting: mounted when either release needs the token. Each
 * pod template still says for itself whether it mounts it, so held pods keep their setting.
 */
export function sharedAutomount(current: AgentSpec, previous: AgentSpec | undefined): boolean {
  return current.automountServiceAccountToken || (previous?.automountServiceAccountToken ?? false);
}

/** The level a created namespace must allow while both releases run. */
export function sharedPodSecurityLevel(current: AgentSpec, previous: AgentSpec | undefined): PodSecurityLevel {
  return previous ? widerPodSecurityLevel(current.podSecurityLevel, previous.podSecurityLevel) : current.podSecurityLevel;
}

/** The priority classes the pods of either release use. */
export function sharedPriorityClassNames(current: AgentSpec, previous: AgentSpec | undefined): string[] {
  return [...new Set([current.priorityClassName, ...(previous ? [previous.priorityClassName] : [])])];
}

/**
 * Whether the two releases render the same pods: then holding waves rolls nothing out. Compares
 * the props as data (constructs they reference by their name), the rollout itself left out.
 */
export function releasesIdentical(current: AgentSpec, previous: AgentSpec): boolean {
  return fingerprint({ ...current.props, rollout: undefined }) === fingerprint({ ...previous.props, rollout: undefined });
}

function fingerprint(value: unknown): string {
  return JSON.stringify(value, (_key, v) => {
    // A construct (e.g. an imported Secret inside an EnvValue) is compared by its path, never walked.
    if (v !== null && typeof v === 'object' && 'node' in v && typeof (v as { node?: { path?: unknown } }).node?.path === 'string') {
      const named = v as { name?: unknown; node: { path: string } };
      return `construct:${typeof named.name === 'string' ? named.name : named.node.path}`;
    }
    return v;
  });
}

function ruleKey(rule: AgentPolicyRule): string {
  return JSON.stringify([rule.apiGroups ?? [''], rule.resources, rule.verbs, rule.resourceNames ?? null]);
}
