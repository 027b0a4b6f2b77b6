/**
 * Limits that keep the node tools' work and output bounded by their input. Past one, the command
 * stops with a clear error (exit 2) rather than running for minutes or printing megabytes. The
 * checks between DaemonSets go node by node (the DaemonSets covering each node), so an agent may
 * have any number of them.
 */

/**
 * Node selector requirements the coverage of one tree may check once its nodeSelectorTerms are indexed
 * (terms with an In requirement are checked only on the nodes carrying one of its values): past it, the
 * command stops with a clear error naming the DaemonSet.
 */
export { MAX_AFFINITY_EVALUATIONS } from '../scheduling/affinity-index';

/** Instance types an `--instance-types` catalog may list unless `--max-instance-types` raises it. */
export { MAX_INSTANCE_TYPES } from './capacity/instance-types';

/** Findings (or problems) printed per kind in text and markdown; the rest are counted. JSON lists them all. */
export const MAX_PRINTED_PER_KIND = 20;

/**
 * At most `max` items of each kind, in their order, and per kind the count left out: what text and
 * markdown print (a change with 100,000 findings is one line per kind past the first ones).
 */
export function capPerKind<T>(items: readonly T[], kindOf: (item: T) => string,
  max = MAX_PRINTED_PER_KIND): { shown: T[]; hidden: [string, number][] } {
  const seen = new Map<string, number>();
  const shown: T[] = [];
  for (const item of items) {
    const kind = kindOf(item);
    const count = (seen.get(kind) ?? 0) + 1;
    seen.set(kind, count);
    if (count <= max) shown.push(item);
  }
  const hidden = [...seen.entries()].filter(([, count]) => count > max).map(([kind, count]): [string, number] => [kind, count - max]);
  return { shown, hidden };
}
