import { ARGO_SYNC_WAVE_ANNOTATION, ManifestSet } from '../coverage/manifests';

/** Argo CD's hook annotation: which sync phase(s) a hook runs in. */
export const ARGOCD_HOOK_ANNOTATION = 'argocd.argoproj.io/hook';

/** The phases of one Argo CD sync, in order (gitops-engine pkg/sync/common: PreSync, Sync, PostSync). */
const PHASES = ['PreSync', 'Sync', 'PostSync'];

/** One step of an Argo CD sync: a phase (index in PreSync, Sync, PostSync) and a sync wave. */
export interface SyncStep {
  readonly phase: number;
  readonly wave: number;
}

function compareSteps(a: SyncStep, b: SyncStep): number {
  return a.phase - b.phase || a.wave - b.wave;
}

/**
 * The steps a document takes part in: a resource syncs in the Sync phase; a hook in each phase its
 * `argocd.argoproj.io/hook` annotation names (SyncFail, PostDelete and Skip are outside a successful sync).
 * The wave is `argocd.argoproj.io/sync-wave`, 0 when absent (gitops-engine pkg/sync/syncwaves).
 */
function stepsOf(annotations: Readonly<Record<string, string>>): SyncStep[] {
  const text = annotations[ARGO_SYNC_WAVE_ANNOTATION]?.trim();
  const wave = text !== undefined && /^-?\d+$/.test(text) ? Number.parseInt(text, 10) : 0;
  const hook = annotations[ARGOCD_HOOK_ANNOTATION];
  if (hook === undefined) return [{ phase: PHASES.indexOf('Sync'), wave }];
  return hook.split(',').map((h) => PHASES.indexOf(h.trim())).filter((p) => p >= 0).map((phase) => ({ phase, wave }));
}

/**
 * The last step of a sync of the tree (as one Argo CD Application), or undefined for an empty tree.
 * gitops-engine pkg/sync/sync_context.go (Sync): once the tasks of the last phase and wave that are not hooks
 * are applied, the operation succeeds "EVEN if those objects subsequently degrades": Argo CD waits for the health
 * of a wave only before it moves on to a later wave or phase. A DaemonSet in the last step is applied and left;
 * its health shows on the Application (Progressing) but holds nothing back.
 */
export function lastSyncStep(tree: ManifestSet): SyncStep | undefined {
  let last: SyncStep | undefined;
  for (const document of tree.documents) {
    for (const step of stepsOf(document.object.metadata?.annotations ?? {})) {
      if (last === undefined || compareSteps(step, last) > 0) last = step;
    }
  }
  return last;
}

/** Whether a DaemonSet (a Sync-phase resource) with this sync wave is in the last step of the tree's sync. */
export function inLastSyncStep(tree: ManifestSet, syncWave: number | undefined): boolean {
  const last = lastSyncStep(tree);
  return last !== undefined && compareSteps({ phase: PHASES.indexOf('Sync'), wave: syncWave ?? 0 }, last) === 0;
}
