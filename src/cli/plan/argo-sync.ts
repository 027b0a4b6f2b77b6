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

/** Helm's hook annotations, which Argo CD reads when a document has no argocd.argoproj.io/hook (charts rendered as they are). */
const HELM_HOOK_ANNOTATION = 'helm.sh/hook';
const HELM_HOOK_WEIGHT_ANNOTATION = 'helm.sh/hook-weight';
/** The Helm hooks Argo CD runs in a sync, by phase (gitops-engine pkg/sync/hook/helm/type.go); the others have no phase. */
const HELM_HOOK_PHASES: Readonly<Record<string, string>> = {
  'pre-install': 'PreSync', 'pre-upgrade': 'PreSync', 'post-install': 'PostSync', 'post-upgrade': 'PostSync',
};
/** Argo CD's hook types (gitops-engine pkg/sync/common HookType). */
const ARGO_HOOK_TYPES = ['PreSync', 'Sync', 'PostSync', 'SyncFail', 'PostDelete', 'Skip'];

function parseWave(text: string | undefined): number | undefined {
  const trimmed = text?.trim();
  return trimmed !== undefined && /^-?\d+$/.test(trimmed) ? Number.parseInt(trimmed, 10) : undefined;
}

/**
 * The steps a document takes part in (gitops-engine pkg/sync/sync_phase.go syncPhases, pkg/sync/hook/hook.go): a
 * resource syncs in the Sync phase; a hook in each phase its `argocd.argoproj.io/hook` annotation names, or, when that
 * names no hook type, its `helm.sh/hook` (pre-install / pre-upgrade: PreSync, post-install / post-upgrade: PostSync;
 * `crd-install` is no hook). SyncFail, PostDelete and Skip are outside a successful sync. The wave is
 * `argocd.argoproj.io/sync-wave`, else `helm.sh/hook-weight`, else 0 (pkg/sync/syncwaves Wave).
 */
function stepsOf(annotations: Readonly<Record<string, string>>): SyncStep[] {
  const wave = parseWave(annotations[ARGO_SYNC_WAVE_ANNOTATION]) ?? parseWave(annotations[HELM_HOOK_WEIGHT_ANNOTATION]) ?? 0;
  const argo = annotations[ARGOCD_HOOK_ANNOTATION];
  const helm = annotations[HELM_HOOK_ANNOTATION];
  if (argo === undefined && (helm === undefined || helm === 'crd-install')) return [{ phase: PHASES.indexOf('Sync'), wave }];
  const csv = (text: string | undefined) => (text ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
  let types = csv(argo).filter((t) => ARGO_HOOK_TYPES.includes(t));
  if (types.length === 0) types = csv(helm).map((t) => HELM_HOOK_PHASES[t]).filter((t) => t !== undefined);
  return [...new Set(types)].map((t) => PHASES.indexOf(t)).filter((p) => p >= 0).map((phase) => ({ phase, wave }));
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
