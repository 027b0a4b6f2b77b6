/**
 * The readiness taint prop resolved (every default applied) and checked. Pure: no constructs.
 */
import { REMOVER_IMAGE } from './readiness-remover';
import { AgentReadinessTaint, ReadinessTaintConsumer } from './readiness-taint';
import {
  consumerProblems, karpenterStartupTaint, READINESS_TAINT_EFFECT, ReadinessTaintConsumerName, taintKeyProblem,
} from '../scheduling/readiness-taint';
import { checkImage } from '../validation/values';

/** The readiness taint with every default applied. */
export interface ResolvedReadinessTaint {
  readonly key: string;
  readonly consumers: ReadinessTaintConsumerName[];
  readonly recheckSeconds: number;
  readonly admissionPolicy: boolean;
  readonly image: string;
}

/**
 * Seconds between two reads of a node the taint is gone from. A taint comes back rarely (a person, a node pool
 * reconciling its taints); every node's remover reads its node once a period, so the period sets the load: 5,000
 * nodes at 60 s are about 83 reads a second per agent, each served from the API server's watch cache.
 */
export const DEFAULT_RECHECK_SECONDS = 60;

export function resolveReadinessTaint(taint: AgentReadinessTaint | undefined): ResolvedReadinessTaint | undefined {
  if (taint === undefined) return undefined;
  return {
    key: taint.key,
    consumers: [...new Set(taint.consumers ?? [ReadinessTaintConsumer.KARPENTER])] as ReadinessTaintConsumerName[],
    recheckSeconds: taint.recheckSeconds ?? DEFAULT_RECHECK_SECONDS,
    admissionPolicy: taint.admissionPolicy ?? true,
    image: taint.removerImage ?? REMOVER_IMAGE,
  };
}

/** The prop's problems, each naming `readinessTaint.<field>`. */
export function readinessTaintProblems(taint: ResolvedReadinessTaint | undefined): string[] {
  if (taint === undefined) return [];
  const problems: string[] = [];
  const keyProblem = taintKeyProblem(taint.key);
  if (keyProblem !== undefined) {
    problems.push(`readinessTaint.key "${taint.key}" is not a valid taint key: ${keyProblem}`);
  } else {
    problems.push(...consumerProblems(taint.key, taint.consumers).map((m) => `readinessTaint.key "${taint.key}": ${m}`));
  }
  const recheck = taint.recheckSeconds;
  if (!Number.isInteger(recheck) || recheck < 5 || recheck > 3600) {
    problems.push(`readinessTaint.recheckSeconds ${recheck} must be a whole number from 5 to 3600: how soon a taint added again is removed, `
      + 'against one read of the node per node per period');
  }
  problems.push(...checkImage('readinessTaint.removerImage', taint.image));
  return problems;
}

/** The NodePool `startupTaints` entry, as YAML lines (two-space indented list item). */
export function karpenterStartupTaintYaml(key: string): string {
  const entry = karpenterStartupTaint(key);
  return `- key: ${entry.key}\n  effect: ${READINESS_TAINT_EFFECT}\n`;
}
