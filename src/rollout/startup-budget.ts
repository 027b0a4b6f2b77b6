/**
 * Startup-probe budget math for driver containers.
 *
 * A driver container may compile the kernel module on first start (gpu-operator's driver image
 * builds against the node's kernel headers when no precompiled module matches). The kubelet kills a
 * container whose startupProbe fails `failureThreshold` times in a row, probing every `periodSeconds`
 * after `initialDelaySeconds`, so the time a build may take before the kill is about
 * `initialDelaySeconds + periodSeconds × failureThreshold`. A budget shorter than the build restarts
 * the container mid-build, forever.
 *
 * Pure module: no cdk8s imports.
 */

/** Default declared driver build time: gpu-operator's driver startupProbe allows 20+ minutes. */
export const DEFAULT_DRIVER_BUILD_SECONDS = 20 * 60;

/** Default startupProbe period for driver containers. */
export const DEFAULT_STARTUP_PERIOD_SECONDS = 10;

/**
 * What a script waiting for a new driver pod adds to its startup budget: the image pull, the init
 * containers (k8s-driver-manager pausing GPU components) and the last probe's own timeout.
 */
export const READY_WAIT_SLACK_SECONDS = 5 * 60;

/** The wait for a driver pod whose manifests give no startup budget (no startupProbe): a 20 minute build plus the slack. */
export const DEFAULT_READY_WAIT_SECONDS = DEFAULT_DRIVER_BUILD_SECONDS + READY_WAIT_SLACK_SECONDS;

/**
 * Seconds a generated script waits for a new driver pod to become Ready: the startup budget its
 * manifests give it plus the slack, so the script never gives up on a pod the kubelet still lets
 * build. Without a budget, DEFAULT_READY_WAIT_SECONDS.
 */
export function readyWaitSeconds(startupBudget: number | undefined): number {
  return startupBudget === undefined ? DEFAULT_READY_WAIT_SECONDS : startupBudget + READY_WAIT_SLACK_SECONDS;
}

/**
 * The startup budget a pod template gives its slowest container: the largest
 * `initialDelaySeconds + periodSeconds × failureThreshold` over the containers with a startupProbe,
 * with the kubelet's defaults for unset fields (period 10, failureThreshold 3, delay 0:
 * k8s.io/api core/v1 Probe). Undefined when no container has a startupProbe or a field is not a
 * usable number (the caller falls back to its default wait).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function podStartupBudgetSeconds(podSpec: any): number | undefined {
  const containers: unknown = podSpec?.containers;
  if (!Array.isArray(containers)) return undefined;
  let budget: number | undefined;
  for (const container of containers) {
    const probe = container?.startupProbe;
    if (probe === undefined || probe === null || typeof probe !== 'object') continue;
    const delay = probe.initialDelaySeconds ?? 0;
    const period = probe.periodSeconds ?? 10;
    const threshold = probe.failureThreshold ?? 3;
    if (![delay, period, threshold].every((v) => Number.isSafeInteger(v) && v >= 0) || period < 1 || threshold < 1) return undefined;
    budget = Math.max(budget ?? 0, startupBudgetSeconds({ periodSeconds: period, failureThreshold: threshold, initialDelaySeconds: delay }));
  }
  return budget;
}

export interface StartupProbeTiming {
  readonly periodSeconds: number;
  readonly failureThreshold: number;
  /** @default 0 */
  readonly initialDelaySeconds?: number;
}

/** Seconds the kubelet lets a container start before the startupProbe kills it. */
export function startupBudgetSeconds(timing: StartupProbeTiming): number {
  requireInteger('periodSeconds', timing.periodSeconds, 1);
  requireInteger('failureThreshold', timing.failureThreshold, 1);
  const initialDelay = timing.initialDelaySeconds ?? 0;
  requireInteger('initialDelaySeconds', initialDelay, 0);
  return initialDelay + timing.periodSeconds * timing.failureThreshold;
}

/**
 * The smallest failureThreshold whose budget covers `buildSeconds`:
 * ceil((buildSeconds - initialDelaySeconds) / periodSeconds), at least 1.
 */
export function failureThresholdFor(buildSeconds: number, periodSeconds: number, initialDelaySeconds: number = 0): number {
  requireInteger('buildSeconds', buildSeconds, 1);
  requireInteger('periodSeconds', periodSeconds, 1);
  requireInteger('initialDelaySeconds', initialDelaySeconds, 0);
  return Math.max(1, Math.ceil((buildSeconds - initialDelaySeconds) / periodSeconds));
}

/**
 * Explains why a startup budget is too short for the declared build time, or returns undefined when it
 * covers it.
 */
export function startupBudgetProblem(timing: StartupProbeTiming, buildSeconds: number): string | undefined {
  requireInteger('buildSeconds', buildSeconds, 1);
  const budget = startupBudgetSeconds(timing);
  if (budget >= buildSeconds) return undefined;
  const initialDelay = timing.initialDelaySeconds ?? 0;
  const needed = failureThresholdFor(buildSeconds, timing.periodSeconds, initialDelay);
  return `the startupProbe budget is ${shortDuration(budget)} `
    + `(initialDelaySeconds ${initialDelay} + periodSeconds ${timing.periodSeconds} × failureThreshold ${timing.failureThreshold}) `
    + `but the driver build may take ${shortDuration(buildSeconds)}: the kubelet would kill the container mid-build and restart it forever. `
    + `Set failureThreshold to at least ${needed} (or raise periodSeconds), or lower the declared build time if the image ships a precompiled module.`;
}

/** "20m", "1h 5m", "90s" -> human text for messages and runbooks. */
export function shortDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const parts: string[] = [];
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  if (s || parts.length === 0) parts.push(`${s}s`);
  return parts.join(' ');
}

function requireInteger(prop: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${prop} must be an integer >= ${min}, got ${value}`);
  }
}
