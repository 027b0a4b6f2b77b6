import { NodeIdentity, NodeSelectorRequirementJson, NodeSelectorTermJson } from './types';

/**
 * Kubernetes node-affinity semantics (k8s.io/component-helpers/scheduling/corev1/nodeaffinity):
 * - a requirement on a missing key: `NotIn` and `DoesNotExist` match, every other operator does not;
 * - `Gt`/`Lt` compare the label value and the single requirement value as integers; a non-integer never matches;
 * - expressions of one term are ANDed, terms are ORed;
 * - a term with no expressions and no fields matches no node, and so does an empty term list.
 */
export function requirementMatches(req: NodeSelectorRequirementJson, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, req.key);
  const value = has ? labels[req.key] : undefined;
  const values = req.values ?? [];
  switch (req.operator) {
    case 'In':
      return has && values.includes(value!);
    case 'NotIn':
      return !has || !values.includes(value!);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    case 'Gt':
    case 'Lt': {
      if (!has || values.length !== 1) return false;
      const left = parseInteger(value!);
      const right = parseInteger(values[0]);
      if (left === undefined || right === undefined) return false;
      return req.operator === 'Gt' ? left > right : left < right;
    }
    default:
      return false;
  }
}

/**
 * matchFields supports only `metadata.name` with In / NotIn and exactly one value (the API server
 * rejects the rest, and the scheduler's selector then matches no node).
 */
export function fieldRequirementMatches(req: NodeSelectorRequirementJson, nodeName: string): boolean {
  if (req.key !== 'metadata.name' || (req.operator !== 'In' && req.operator !== 'NotIn') || (req.values ?? []).length !== 1) return false;
  return requirementMatches(req, { 'metadata.name': nodeName });
}

export function termMatches(term: NodeSelectorTermJson, node: NodeIdentity): boolean {
  const expressions = term.matchExpressions ?? [];
  const fields = term.matchFields ?? [];
  if (expressions.length === 0 && fields.length === 0) return false;
  return expressions.every((req) => requirementMatches(req, node.labels))
    && fields.every((req) => fieldRequirementMatches(req, node.name));
}

export function termsMatch(terms: readonly NodeSelectorTermJson[], node: NodeIdentity): boolean {
  return terms.some((term) => termMatches(term, node));
}

/** nodeSelector: every entry must equal the node's label exactly. */
export function nodeSelectorMatches(selector: Readonly<Record<string, string>> | undefined, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector ?? {}).every(([key, value]) => labels[key] === value);
}

function parseInteger(text: string): number | undefined {
  return /^[+-]?\d+$/.test(text.trim()) ? Number.parseInt(text, 10) : undefined;
}
