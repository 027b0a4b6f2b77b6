import { ManifestSet } from '../coverage/manifests';

/**
 * Limits that keep the node tools' work and output bounded by their input. Past one, the command
 * stops with a clear error (exit 2) rather than running for minutes or printing megabytes.
 */

/**
 * DaemonSets of one agent: checks compare them in pairs (two pods on a node, anti-affinity, host
 * ports), so 1,000 of them meant 500,000 pairs. A rollout split into waves has a handful.
 */
export const MAX_DAEMONSETS_PER_AGENT = 100;

/**
 * Node selector requirements evaluated, summed over DaemonSets: (requirements of the DaemonSet) x
 * (nodes). 100,000 nodeSelectorTerms on 20,000 nodes would be 2e9 evaluations.
 */
export const MAX_SELECTOR_EVALUATIONS = 50_000_000;

/** Findings (or problems) printed per kind in text and markdown; the rest are counted. JSON lists them all. */
export const MAX_PRINTED_PER_KIND = 20;

/** Throws when a tree holds more than the tools check. */
export function checkWorkLimits(trees: readonly { readonly name: string; readonly set: ManifestSet }[], nodes: number): void {
  for (const { name, set } of trees) {
    const perAgent = new Map<string, number>();
    let evaluations = 0;
    for (const ds of set.daemonSets) {
      perAgent.set(ds.agent, (perAgent.get(ds.agent) ?? 0) + 1);
      const requirements = Object.keys(ds.nodeSelector).length
        + (ds.requiredTerms ?? []).reduce((sum, term) => sum + 1 + (term.matchExpressions?.length ?? 0) + (term.matchFields?.length ?? 0), 0);
      evaluations += requirements * nodes;
    }
    for (const [agent, count] of perAgent) {
      if (count > MAX_DAEMONSETS_PER_AGENT) {
        throw new Error(`${name}: agent ${JSON.stringify(agent)} has ${count} DaemonSets, more than the ${MAX_DAEMONSETS_PER_AGENT} the node tools check `
          + '(they compare an agent\'s DaemonSets in pairs); an agent split into rollout waves has a handful: check the manifests');
      }
    }
    if (evaluations > MAX_SELECTOR_EVALUATIONS) {
      throw new Error(`${name}: the DaemonSets' node selectors and affinity terms on ${nodes} nodes make ${evaluations.toExponential(1)} requirement checks, `
        + `more than the ${MAX_SELECTOR_EVALUATIONS.toExponential(0)} the node tools run; check for repeated nodeSelectorTerms`);
    }
  }
}

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
