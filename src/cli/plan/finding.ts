/** What `plan` finds a change does on the nodes: shared by plan.ts and the findings it gathers from other modules. */

export type FindingKind = 'two-pods-per-node' | 'never-starts' | 'stall' | 'loses-agent' | 'held-wave-restart' | 'missing-reference' | 'preemption'
  | 'shutdown-order';
export const FINDING_KINDS: readonly FindingKind[] = [
  'two-pods-per-node', 'never-starts', 'stall', 'loses-agent', 'held-wave-restart', 'missing-reference', 'preemption', 'shutdown-order',
];

export interface Finding {
  readonly kind: FindingKind;
  /** errors make the plan unsafe (exit 1); warnings are printed only */
  readonly severity: 'error' | 'warning';
  /**
   * the finer reason: move, duplicate, same-program (two-pods-per-node); host-port, anti-affinity, toleration, readiness-taint,
   * readiness-taint-orphaned, readiness-taint-held, readiness-taint-dropped, readiness-taint-uncovered (never-starts); not-ready,
   * assumption, surge-resource, empty-wave, on-delete, strategy, immutable-selector, sync-wave-order (stall); deleted, narrowed, node-condition (loses-agent);
   * template (held-wave-restart); ConfigMap, Secret (missing-reference)
   */
  readonly cause: string;
  readonly agent?: string;
  readonly daemonSets: readonly string[];
  /** the nodes it happens on, sorted */
  readonly nodes: readonly string[];
  readonly message: string;
  readonly fix: string;
  /** the before-tree has the same finding: the change does not cause it (then a warning) */
  readonly standing?: boolean;
}
