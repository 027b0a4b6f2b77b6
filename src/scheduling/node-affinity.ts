import { NodeIdentity, NodeSelectorRequirementJson, NodeSelectorTermJson } from './types';
import { isLabelKey, isLabelValue } from '../validation/values';

/**
 * Kubernetes node-affinity semantics (k8s.io/component-helpers/scheduling/corev1/nodeaffinity):
 * - a requirement on a missing key: `NotIn` and `DoesNotExist` match, every other operator does not;
 * - `Gt`/`Lt` compare the label value and the single requirement value as integers; a non-integer never matches;
 * - expressions of one term are ANDed, terms are ORed;
 * - a term with no expressions and no fields matches no node, and so does an empty term list;
 * - a requirement labels.NewRequirement refuses (a key that is no label key, an In / NotIn value that is no label
 *   value) fails its term's parse: the scheduler's lazy selector (GetRequiredNodeAffinity) has that term match no
 *   node, whatever the operator. A `NotIn` of an invalid value is not "not equal" (requirementParses).
 */
export function requirementMatches(req: NodeSelectorRequirementJson, labels: Readonly<Record<string, string>>): boolean {
  if (!requirementParses(req)) return false;
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

/** requirementParses' answers, by requirement object: each is checked once, not once per node. */
const parses = new WeakMap<NodeSelectorRequirementJson, boolean>();

/**
 * Whether apimachinery's labels.NewRequirement accepts the requirement, as the scheduler builds it
 * (nodeSelectorRequirementsAsSelector): the key a label key, In / NotIn with at least one value, each a label
 * value (63 characters at most, alphanumerics with `-`, `_`, `.` inside). Gt / Lt values are parsed as integers
 * where they are compared. The API server refuses such an object (ValidateNodeSelectorRequirement checks every value
 * with IsValidLabelValue); one stored before that check is matched against no node.
 */
export function requirementParses(req: NodeSelectorRequirementJson): boolean {
  let ok = parses.get(req);
  if (ok === undefined) {
    const values = req.values ?? [];
    const listed = req.operator !== 'In' && req.operator !== 'NotIn' || (values.length > 0 && values.every((v) => typeof v === 'string' && isLabelValue(v)));
    ok = typeof req.key === 'string' && isLabelKey(req.key) && listed;
    parses.set(req, ok);
  }
  return ok;
}

/**
 * matchFields supports only `metadata.name` with In / NotIn and exactly one value (the API server
 * rejects the rest, and the scheduler's selector then matches no node).
 */
export function fieldRequirementMatches(req: NodeSelectorRequirementJson, nodeName: string): boolean {
  if (req.key !== 'metadata.name' || (req.operator !== 'In' && req.operator !== 'NotIn') || (req.values ?? []).length !== 1) return false;
  // a field selector: no label value rule on the node name (up to 253 characters)
  return (req.operator === 'In') === (req.values![0] === nodeName);
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
