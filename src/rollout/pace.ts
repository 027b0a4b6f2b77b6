/**
 * The DaemonSet controller's pace arithmetic, which both the constructs (the rollout expectations they
 * write into alerts) and the tools (plan, estimate, doctor) use: how many pods one step replaces, and
 * how long a rollout is expected to take. Pure: no cdk8s, no tool or construct imports.
 */

/** `spec.updateStrategy` as written in a manifest (defaults are applied by paceOf, like the API server would). */
export interface UpdateStrategyJson {
  readonly type: 'RollingUpdate' | 'OnDelete';
  readonly maxUnavailable?: number | string;
  readonly maxSurge?: number | string;
}

/** image pull + container start + readiness + termination of the old pod, per pod, when nothing else is known */
export const DEFAULT_POD_SECONDS = 30;

/**
 * How many pods the DaemonSet controller replaces at once, as it computes it:
 * - defaults (apps/v1 defaults.go): RollingUpdate, maxUnavailable 1, maxSurge 0;
 * - percentages scale against desiredNumberScheduled ROUNDED UP (GetScaledValueFromIntOrPercent(..., true));
 * - both scaled to 0 with pods to run: the controller falls back to maxUnavailable 1;
 * - validation: exactly one of maxUnavailable / maxSurge non-zero, percentages at most 100%.
 */
export type Pace =
  | { readonly type: 'OnDelete' }
  | {
    readonly type: 'RollingUpdate';
    /** 'surge': a new pod starts before the old one goes; 'unavailable': the old pod goes first */
    readonly mode: 'surge' | 'unavailable';
    readonly maxUnavailable: number | string;
    readonly maxSurge: number | string;
    /** pods replaced at once (never more than the desired count, at least 1 when there are pods) */
    readonly batch: number;
    /** why the API server would reject the strategy, when it would */
    readonly invalid?: string;
  };

export function paceOf(strategy: UpdateStrategyJson, desired: number): Pace {
  if (strategy.type === 'OnDelete') return { type: 'OnDelete' };
  const maxUnavailable = strategy.maxUnavailable ?? 1;
  const maxSurge = strategy.maxSurge ?? 0;
  const unavailable = scaledValue(maxUnavailable, desired, 'maxUnavailable');
  const surge = scaledValue(maxSurge, desired, 'maxSurge');
  const rawUnavailable = rawValue(maxUnavailable);
  const rawSurge = rawValue(maxSurge);
  let invalid: string | undefined;
  if (rawUnavailable === 0 && rawSurge === 0) {
    invalid = 'maxUnavailable may not be 0 when maxSurge is 0';
  } else if (rawUnavailable !== 0 && rawSurge !== 0) {
    invalid = strategy.maxUnavailable === undefined
      ? 'maxSurge is set but maxUnavailable defaults to 1: set maxUnavailable: 0 next to maxSurge'
      : 'maxSurge may not be set when maxUnavailable is non-zero';
  } else if ([maxUnavailable, maxSurge].some((v) => typeof v === 'string' && rawValue(v) > 100)) {
    invalid = 'a percentage above 100%';
  }
  const mode = surge > 0 ? 'surge' : 'unavailable';
  let batch = mode === 'surge' ? surge : unavailable;
  if (desired > 0 && batch === 0) batch = 1; // the controller's fallback for an impossible configuration
  return { type: 'RollingUpdate', mode, maxUnavailable, maxSurge, batch: Math.min(batch, desired), invalid };
}

/** An int, or a percentage of `total` rounded up like the DaemonSet controller does. */
export function scaledValue(value: number | string, total: number, field: string): number {
  if (typeof value === 'number') return value;
  const match = /^(\d+)%$/.exec(value.trim());
  if (match === null) {
    throw new Error(`${field} "${value}" is neither an integer nor a percentage like "25%"`);
  }
  return Math.ceil((Number.parseInt(match[1], 10) * total) / 100);
}

function rawValue(value: number | string): number {
  return typeof value === 'number' ? value : Number.parseInt(value, 10);
}


/** `value` when it is a finite number of seconds, 0 or more. */
export function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new Error(`${name} is ${value}; it must be a number of seconds, 0 or more`);
  }
  return value;
}

/** `4 h 10 min`, `12 min 30 s`, `45 s`. */
export function formatDuration(seconds: number): string {
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const parts: string[] = [];
  if (h > 0) parts.push(`${h} h`);
  if (m > 0) parts.push(`${m} min`);
  if (s > 0 || parts.length === 0) parts.push(`${s} s`);
  return parts.join(' ');
}

/**
 * waveEstimate's seconds as PromQL, for a DaemonSet whose desired count is the vector `desired` (kube-state-metrics'
 * kube_daemonset_status_desired_number_scheduled): ceil(desired / batch) × (podSeconds + minReadySeconds), the batch
 * scaled as paceOf scales it (maxSurge when it is not 0, else maxUnavailable; a percentage of desired rounded up;
 * at least 1, the controller's fallback). Undefined for OnDelete: no automatic rollout, so no expected duration.
 */
export function expectedSecondsPromQL(strategy: UpdateStrategyJson, minReadySeconds: number, desired: string,
  podSeconds: number = DEFAULT_POD_SECONDS): string | undefined {
  if (strategy.type === 'OnDelete') return undefined;
  const surge = strategy.maxSurge ?? 0;
  const value = rawValue(surge) !== 0 ? surge : strategy.maxUnavailable ?? 1;
  const cycle = nonNegative(podSeconds, 'podSeconds') + minReadySeconds;
  if (typeof value === 'number') return `ceil(${desired} / ${Math.max(value, 1)}) * ${cycle}`;
  const percent = rawValue(value);
  return `ceil(${desired} / clamp_min(ceil(${desired} * ${percent} / 100), 1)) * ${cycle}`;
}
