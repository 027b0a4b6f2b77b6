/**
 * The tree as it would be with the recommendation applied, for `size --nodepools`: each of the agent's DaemonSets
 * becomes one DaemonSet per profile (named `<name>-<profile>` like the constructs name them, its required node
 * affinity ANDed with the profile's terms from profileTerms, the code the constructs use) plus the default one,
 * each with the recommended requests and memory limit. Only an agent whose DaemonSets carry no profile yet is
 * rewritten (the terms of existing profiles cannot be taken apart here): others are left as they are, and said so.
 */
import { AgentSizing, Sizing } from './groups';
import { NodeSelectorTermJson } from '../../scheduling/types';
import { DEFAULT_PROFILE, PROFILE_ANNOTATION, profileTerms } from '../../waves/profiles';
import { isObject, ManifestDocument, manifestSet, ManifestSet } from '../coverage/manifests';

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function containerOf(object: Record<string, any>, name: string): Record<string, any> | undefined {
  const containers = object.spec?.template?.spec?.containers;
  return Array.isArray(containers) ? containers.find((c: unknown) => isObject(c) && c.name === name) : undefined;
}

function isAgents(doc: ManifestDocument, namespace: string, container: string): boolean {
  const o = doc.object as Record<string, any>;
  return o.kind === 'DaemonSet' && (o.metadata?.namespace ?? 'default') === namespace && containerOf(o, container) !== undefined;
}

function withSizing(object: Record<string, any>, container: string, s: Sizing): void {
  const c = containerOf(object, container)!;
  c.resources = {
    ...(isObject(c.resources) ? c.resources : {}),
    requests: { ...(isObject(c.resources?.requests) ? c.resources.requests : {}), cpu: `${s.cpuMilli}m`, memory: `${s.memoryMiB}Mi` },
    limits: { ...(isObject(c.resources?.limits) ? c.resources.limits : {}), memory: `${s.memoryLimitMiB}Mi` },
  };
}

function requiredTerms(object: Record<string, any>): NodeSelectorTermJson[] {
  const terms = object.spec?.template?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
  return Array.isArray(terms) ? terms : [];
}

function setTerms(object: Record<string, any>, terms: NodeSelectorTermJson[]): void {
  const spec = object.spec.template.spec;
  spec.affinity = isObject(spec.affinity) ? spec.affinity : {};
  spec.affinity.nodeAffinity = isObject(spec.affinity.nodeAffinity) ? spec.affinity.nodeAffinity : {};
  spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution = { nodeSelectorTerms: terms };
}

/** One DaemonSet of the agent as the recommendation would render it: a DaemonSet per profile, then the default's. */
function rewrite(doc: ManifestDocument, a: AgentSizing, container: string): ManifestDocument[] {
  const object = doc.object as Record<string, any>;
  if (a.profiles.length === 0) {
    const copy = clone(object);
    withSizing(copy, container, a.defaultSizing);
    return [{ source: doc.source, object: copy }];
  }
  const groups = profileTerms(a.profiles.map((p) => p.spec), requiredTerms(object));
  return groups.map((g) => {
    const copy = clone(object);
    const profile = a.profiles.find((p) => p.spec.name === g.name);
    if (g.name !== DEFAULT_PROFILE) copy.metadata.name = `${object.metadata.name}-${g.name}`;
    copy.metadata.annotations = { ...(copy.metadata.annotations ?? {}), [PROFILE_ANNOTATION]: g.name };
    setTerms(copy, g.terms);
    withSizing(copy, container, profile?.sizing ?? a.defaultSizing);
    return { source: doc.source, object: copy };
  });
}

/** The after-tree, and the agents left as they are (their DaemonSets already have profiles). */
export function afterTree(tree: ManifestSet, agents: readonly AgentSizing[]): { tree: ManifestSet; skipped: string[] } {
  let documents: ManifestDocument[] = [...tree.documents];
  const skipped: string[] = [];
  for (const a of agents) {
    const [namespace, container] = a.agent.split('/');
    const own = documents.filter((d) => isAgents(d, namespace, container));
    if (own.some((d) => d.object.metadata?.annotations?.[PROFILE_ANNOTATION] !== undefined)) {
      skipped.push(a.agent);
      continue;
    }
    documents = documents.flatMap((d) => (own.includes(d) ? rewrite(d, a, container) : [d]));
  }
  return { tree: manifestSet(documents), skipped };
}
