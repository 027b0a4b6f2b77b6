/**
 * PromQL building blocks shared by the alert rules and the wave gates. Pure module (no cdk8s).
 */
import { RefusedBy, ValidationError } from '../validation/errors';

/** A PromQL double-quoted string literal: backslashes and quotes escaped. */
export function promString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** `value` as a literal inside a (fully anchored) RE2 regex. */
export function regexLiteral(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The regex (PromQL regexes are fully anchored) matching the names of every DaemonSet of an agent:
 * `<agent>` for the fleet and `<agent>-<wave>` for each wave, so waves neither hide an alert (a wave
 * DaemonSet outside the selector) nor add another agent's DaemonSet (a `<agent>-.*` prefix would
 * also match `<agent>-metrics-proxy`).
 */
export function daemonSetNameRegex(agent: string, waves: readonly string[], profiles: readonly string[] = []): string {
  const names = [...new Set(waves)].map((w) => `-${regexLiteral(w)}`);
  // resource profiles: `<agent>-<profile>` and `<agent>-<profile>-<wave>` (profile and wave names hold no regex characters but "-")
  const profileNames = [...new Set(profiles)].map((p) => `-${regexLiteral(p)}`);
  const prefix = profileNames.length === 0 ? regexLiteral(agent) : `${regexLiteral(agent)}(${profileNames.join('|')})?`;
  return names.length === 0 ? prefix : `${prefix}(${names.join('|')})?`;
}

/**
 * The regex of the pod names of the DaemonSets `daemonSetRegex` matches. The DaemonSet controller
 * names its pods `<daemonset>-<5 random characters>` (generateName), so the suffix is exactly five
 * lower-case alphanumerics and `logs-[a-z0-9]{5}` never matches a pod of `logs-canary`. Pod names
 * are used instead of the pods' `app.kubernetes.io/instance` label because kube-state-metrics only
 * exports pod labels that are allow-listed, while every series carries `pod`.
 */
export function podNameRegex(daemonSetRegex: string): string {
  return `(${daemonSetRegex})-[a-z0-9]{5}`;
}

/** Matchers joined into one selector body (without braces), empty parts dropped. */
export function matchers(...parts: (string | undefined)[]): string {
  return parts.filter((p): p is string => p !== undefined && p.trim() !== '').join(',');
}

/** `key="value"`. */
export function eq(label: string, value: string): string {
  return `${label}=${promString(value)}`;
}

/** `key=~"regex"`. */
export function re(label: string, regex: string): string {
  return `${label}=~${promString(regex)}`;
}

const DURATION = /^([0-9]+(ms|s|m|h|d|w|y))+$/;

/** Throws unless `value` is a Prometheus duration such as "10m" or "1h30m". */
export function checkDuration(value: string, prop: string, by: RefusedBy): string {
  if (!DURATION.test(value)) {
    throw new ValidationError(by, `${prop} "${value}" is not a Prometheus duration; write e.g. "10m", "1h" or "1h30m"`);
  }
  return value;
}

/** Throws unless `value` is a finite number >= min. */
export function checkNumber(value: number, prop: string, by: RefusedBy, min = 0, max = Number.POSITIVE_INFINITY): number {
  if (!Number.isFinite(value) || value < min || value > max) {
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `from ${min} to ${max}`;
    throw new ValidationError(by, `${prop} ${value} must be a number ${range}`);
  }
  return value;
}

/** Seconds of a Prometheus duration (checked by checkDuration first). */
export function durationSeconds(value: string): number {
  const unit: { [u: string]: number } = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };
  let total = 0;
  for (const m of value.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * unit[m[2]];
  return total;
}

/**
 * The kube-state-metrics label of a Kubernetes label key: `label_` plus the key with every
 * character outside [a-zA-Z0-9_] replaced by `_` (kube-state-metrics' sanitizing).
 */
export function kubeStateMetricsLabel(key: string): string {
  return `label_${key.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}
