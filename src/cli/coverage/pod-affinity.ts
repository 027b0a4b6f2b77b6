import { DaemonSetInfo, LabelSelectorJson, PodAffinityTermJson } from './manifests';

/** The topology key of a term that keeps two pods off one node. */
export const HOSTNAME_TOPOLOGY_KEY = 'kubernetes.io/hostname';

/**
 * metav1.LabelSelectorAsSelector semantics: a missing selector matches no pod, an empty one every pod;
 * matchLabels and matchExpressions are ANDed.
 */
export function selectorMatches(selector: LabelSelectorJson | undefined, labels: Readonly<Record<string, string>>): boolean {
  if (selector === undefined || selector === null) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const requirement of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, requirement.key);
    const values = requirement.values ?? [];
    switch (requirement.operator) {
      case 'In':
        if (!has || !values.includes(labels[requirement.key])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[requirement.key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

/**
 * Whether a term of a pod in `ownNamespace` selects a pod in `namespace`: the term's namespaces, else its
 * own namespace. A namespaceSelector is read as every namespace: namespace labels are not in the manifests,
 * so the plan assumes the term applies (which reports a Pending pod rather than miss one).
 */
function termNamespaceMatches(term: PodAffinityTermJson, ownNamespace: string, namespace: string): boolean {
  if (term.namespaces !== undefined && term.namespaces.length > 0) return term.namespaces.includes(namespace);
  if (term.namespaceSelector !== undefined && term.namespaceSelector !== null) return true;
  return namespace === ownNamespace;
}

/**
 * Whether a pod of `incoming` may not share a node with a pod of `existing` because of a required pod
 * anti-affinity term on kubernetes.io/hostname, in either direction: the scheduler checks the incoming pod's
 * terms against the pods on the node, and the terms of the pods on the node against the incoming pod
 * (InterPodAffinity filter). Terms with other topology keys (zone...) are not evaluated.
 */
export function antiAffinitySeparates(incoming: DaemonSetInfo, existing: DaemonSetInfo): boolean {
  return oneWay(incoming, existing) || oneWay(existing, incoming);
}

function oneWay(owner: DaemonSetInfo, other: DaemonSetInfo): boolean {
  return owner.podAntiAffinity.some((term) => term.topologyKey === HOSTNAME_TOPOLOGY_KEY
    && termNamespaceMatches(term, owner.namespace, other.namespace)
    && selectorMatches(term.labelSelector, other.podLabels));
}
