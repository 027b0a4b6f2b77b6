/**
 * gitops-engine's sync loop, one call of syncContext.Sync() (pkg/sync/sync_context.go), over tasks reduced to what
 * decides the operation's phase: each task's sync phase and wave, whether it is a hook, its operation state, and
 * what the cluster says of it (a resource's health, a hook's completion). Argo CD's application controller calls
 * Sync() again on every reconciliation until the operation is no longer Running.
 */

export type OperationState = '' | 'Running' | 'Succeeded' | 'Failed';
export type Health = 'Healthy' | 'Progressing' | 'Degraded' | undefined;

export interface SimTask {
  readonly name: string;
  /** 0 PreSync, 1 Sync, 2 PostSync */
  readonly phase: number;
  readonly wave: number;
  readonly hook: boolean;
  state: OperationState;
  /** a resource's health as gitops-engine (or a health customization) computes it on the live object */
  health?: () => Health;
  /** a hook's result (the Job's completion: getOperationPhase) */
  hookResult?: () => 'Running' | 'Succeeded' | 'Failed';
}

export interface SyncResult {
  readonly phase: 'Running' | 'Succeeded' | 'Failed';
  readonly message: string;
  /** the tasks applied (resources) or created (hooks) by this call */
  readonly applied: string[];
}

const order = (a: SimTask, b: SimTask) => a.phase - b.phase || a.wave - b.wave;

/** One Sync() call: the steps of sync_context.go in their order, for tasks sorted by phase then wave. */
export function syncOnce(all: SimTask[]): SyncResult {
  const tasks = [...all].sort(order);
  // "update status of any tasks that are running": a hook's result; a resource's health (Healthy → Succeeded,
  // Degraded → Failed, no health → Succeeded, Progressing → still running)
  for (const t of tasks.filter((x) => x.state === 'Running')) {
    if (t.hook) {
      t.state = t.hookResult!();
    } else {
      const health = t.health?.();
      if (health === undefined || health === 'Healthy') t.state = 'Succeeded';
      else if (health === 'Degraded') t.state = 'Failed';
    }
  }
  // "if (a) we are multi-step and we have any running tasks, or (b) there are any running hooks, then wait..."
  const first = tasks[0];
  const last = tasks[tasks.length - 1];
  const multiStep = first !== undefined && (first.wave !== last.wave || first.phase !== last.phase);
  if (tasks.some((t) => (multiStep || t.hook) && t.state === 'Running')) return { phase: 'Running', message: 'one or more tasks are running', applied: [] };
  // "if there are any completed but unsuccessful tasks, sync is a failure."
  if (tasks.some((t) => t.state === 'Failed')) return { phase: 'Failed', message: 'one or more synchronization tasks completed unsuccessfully', applied: [] };
  const pending = tasks.filter((t) => t.state === '');
  if (pending.length === 0) return { phase: 'Succeeded', message: 'successfully synced (no more tasks)', applied: [] };
  const { phase, wave } = pending[0];
  // "if it is the last phase/wave and the only remaining tasks are non-hooks, then we are successful EVEN if those objects subsequently degraded"
  const remaining = pending.filter((t) => t.phase !== phase || t.wave !== wave || t.hook);
  const now = pending.filter((t) => t.phase === phase && t.wave === wave);
  // applied: a resource is Synced (operation state Running, operationPhases), a hook is created and Running
  for (const t of now) t.state = 'Running';
  return remaining.length === 0
    ? { phase: 'Succeeded', message: 'successfully synced (all tasks run)', applied: now.map((t) => t.name) }
    : { phase: 'Running', message: 'one or more tasks are running', applied: now.map((t) => t.name) };
}

/** Sync() called until the operation ends or `max` calls: the phases seen and every task applied, in order. */
export function syncUntilDone(tasks: SimTask[], max = 50, between?: (call: number) => void): { phase: SyncResult['phase']; applied: string[]; calls: number } {
  const applied: string[] = [];
  for (let call = 0; call < max; call++) {
    between?.(call);
    const result = syncOnce(tasks);
    applied.push(...result.applied);
    if (result.phase !== 'Running') return { phase: result.phase, applied, calls: call + 1 };
  }
  return { phase: 'Running', applied, calls: max };
}
