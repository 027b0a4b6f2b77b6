/**
 * Readiness taints: a NoSchedule taint new nodes join with, one per node agent, that the agent's own pod removes
 * from its node once it is Ready there. The facts every floor shares: the annotation that names an agent's taint on
 * its DaemonSets (what `coverage`, `plan` and `doctor` read), and the rules each consumer of a taint key imposes.
 * Pure data: no cdk8s.
 */
import { TaintJson } from './types';

/**
 * Annotation on every DaemonSet of an agent with a readiness taint: `<key>:NoSchedule`, the taint the agent's pod
 * removes from its node once Ready. Metadata only (no pod restarts for it).
 */
export const READINESS_TAINT_ANNOTATION = 'node-agents.cdk8s.io/readiness-taint';

/**
 * The only effect a readiness taint has. NoSchedule keeps new pods off until the agent is Ready and never evicts a
 * running one; PreferNoSchedule keeps nothing off, and NoExecute would evict the node's workloads each time the
 * taint is added again (a node pool re-applying it, a person).
 */
export const READINESS_TAINT_EFFECT = 'NoSchedule';

/** The name of the container that removes the readiness taint, in every agent pod that carries one (doctor reads its log). */
export const REMOVER_CONTAINER = 'readiness-taint-remover';

/**
 * cluster-autoscaler treats a taint under this prefix as a startup taint: it leaves it out of its node templates
 * and counts a node carrying it as not yet started (cluster-autoscaler utils/taints/taints.go, StartupTaintPrefix).
 * Managed cluster-autoscalers (GKE, AKS) recognise startup taints by this prefix only; a self-managed one also
 * takes `--startup-taint=KEY`.
 */
export const CLUSTER_AUTOSCALER_STARTUP_PREFIX = 'startup-taint.cluster-autoscaler.kubernetes.io/';

/** node-readiness-controller's NodeReadinessRule accepts only taint keys under this prefix. */
export const NODE_READINESS_CONTROLLER_PREFIX = 'readiness.k8s.io/';

/** Who reads a readiness taint key besides the agent that removes it (`ReadinessTaintConsumer` values). */
export type ReadinessTaintConsumerName = 'karpenter' | 'cluster-autoscaler' | 'node-readiness-controller';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;

/**
 * Why a taint key is no qualified name (apimachinery validation.IsQualifiedName, which the API server applies to
 * taint keys: ValidateTaintsInNodeAnnotations / validateNodeTaints), or undefined.
 */
export function taintKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return 'has more than one "/"';
  const name = parts[parts.length - 1];
  if (!QUALIFIED_NAME.test(name) || name.length > 63) {
    return 'its name (after the "/") must be 1-63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit';
  }
  if (parts.length === 2 && (!DNS1123_SUBDOMAIN.test(parts[0]) || parts[0].length > 253)) {
    return 'its prefix (before the "/") must be a DNS subdomain of lower-case letters, digits, "-" and "."';
  }
  return undefined;
}

/**
 * What each consumer requires of the key, as messages (empty: every consumer takes it). Karpenter's NodePool
 * `startupTaints` take any taint the API server takes; cluster-autoscaler and node-readiness-controller each need
 * their prefix, so no key serves both.
 */
export function consumerProblems(key: string, consumers: readonly ReadinessTaintConsumerName[]): string[] {
  const problems: string[] = [];
  const ca = consumers.includes('cluster-autoscaler');
  const nrc = consumers.includes('node-readiness-controller');
  if (ca && nrc) {
    problems.push(`cluster-autoscaler recognises startup taints by the prefix "${CLUSTER_AUTOSCALER_STARTUP_PREFIX}" and node-readiness-controller `
      + `accepts only keys under "${NODE_READINESS_CONTROLLER_PREFIX}": no key serves both. Name one of them; the agent removes its own taint either way`);
    return problems;
  }
  if (ca && !key.startsWith(CLUSTER_AUTOSCALER_STARTUP_PREFIX)) {
    problems.push('cluster-autoscaler (and the managed ones of GKE and AKS) treats a taint as a startup taint only under the prefix '
      + `"${CLUSTER_AUTOSCALER_STARTUP_PREFIX}": with "${key}" it would size new nodes as if the taint stayed, and keep adding nodes for `
      + `pods that do not tolerate it. Use e.g. "${CLUSTER_AUTOSCALER_STARTUP_PREFIX}${lastSegment(key)}" (a self-managed cluster-autoscaler `
      + 'also takes --startup-taint=KEY: then list only the consumers that need a prefix)');
  }
  if (nrc && !key.startsWith(NODE_READINESS_CONTROLLER_PREFIX)) {
    problems.push(`node-readiness-controller's NodeReadinessRule accepts only taint keys under "${NODE_READINESS_CONTROLLER_PREFIX}"; `
      + `use e.g. "${NODE_READINESS_CONTROLLER_PREFIX}${lastSegment(key)}"`);
  }
  return problems;
}

function lastSegment(key: string): string {
  return key.split('/').pop() || 'agent-ready';
}

/** The annotation value: `<key>:NoSchedule`. */
export function readinessTaintAnnotation(key: string): string {
  return `${key}:${READINESS_TAINT_EFFECT}`;
}

/** The taint an annotation value names, or undefined when it is not `<key>:<effect>` with a valid key and effect. */
export function parseReadinessTaint(value: unknown): TaintJson | undefined {
  if (typeof value !== 'string') return undefined;
  const at = value.lastIndexOf(':');
  const key = at < 0 ? value : value.slice(0, at);
  const effect = at < 0 ? READINESS_TAINT_EFFECT : value.slice(at + 1);
  if (key === '' || taintKeyProblem(key) !== undefined) return undefined;
  if (effect !== 'NoSchedule' && effect !== 'NoExecute' && effect !== 'PreferNoSchedule') return undefined;
  return { key, effect };
}

/** The readiness taint an object's annotations name (READINESS_TAINT_ANNOTATION), if any. */
export function readinessTaintOf(annotations: unknown): TaintJson | undefined {
  if (typeof annotations !== 'object' || annotations === null) return undefined;
  return parseReadinessTaint((annotations as Record<string, unknown>)[READINESS_TAINT_ANNOTATION]);
}

/**
 * The entry a Karpenter NodePool lists under `spec.template.spec.startupTaints` (karpenter.sh/v1): Karpenter puts
 * the taint on every node it launches from the pool, ignores it when it decides whether pending pods fit the new
 * node, and expects something else to remove it.
 */
export function karpenterStartupTaint(key: string): { key: string; effect: string } {
  return { key, effect: READINESS_TAINT_EFFECT };
}
