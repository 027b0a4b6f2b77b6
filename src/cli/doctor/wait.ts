import { spawnSync } from 'child_process';
import { keptExceeded } from './kept';
import { DEFAULT_LIVE_BUDGET, LiveOptions } from './live';
import { podStartupBudgetSeconds } from '../../rollout/startup-budget';
import { fixFor } from '../../rollout/stuck-causes';
import { defaultWatchBudgets, judgePods, WatchBudgets, WatchCause, WatchFailure } from '../../rollout/watch-script';
import { HeapEstimate } from '../../util/heap-estimate';
import { MAX_INPUT_BYTES } from '../capacity/input';
import { isObject } from '../coverage/manifests';

/**
 * `doctor --live --wait NAMESPACE/DAEMONSET`: what a wave's watcher Job does, for a rollout applied without Argo CD
 * (kubectl apply in a CI promotion step): read the DaemonSet and the pods of its current template generation until a
 * pod fails (judgePods: the watcher's conditions) or every desired pod is updated and available. Read-only, through
 * kubectl (`kubectl get --raw`), with the user's credentials: get on the DaemonSet, list on pods and events.
 */
export interface WaitOptions extends LiveOptions {
  readonly namespace: string;
  readonly daemonSet: string;
  /** budgets given on the command line; the rest from the DaemonSet's pod template, as the watcher Job's */
  readonly budgets: Partial<WatchBudgets>;
  /** one line of progress or verdict */
  readonly log: (line: string) => void;
  /** waits `seconds` @default a blocking sleep */
  readonly sleep?: (seconds: number) => void;
  /** the time, in epoch seconds @default the clock */
  readonly now?: () => number;
}

export interface WaitResult {
  readonly passed: boolean;
  readonly failure?: WatchFailure & { readonly cause: WatchCause; readonly fix: string; readonly event?: string };
  /** why it stopped without a pod to blame (timeout, unreadable) */
  readonly reason?: string;
}

/* eslint-disable @typescript-eslint/no-explicit-any */

function blockingSleep(seconds: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
}

/**
 * `kubectl get --raw PATH`: the answer as JSON, or the error kubectl gave. An answer doctor would keep more of than
 * the budget's `kept` bytes (HeapEstimate; it is held while judged) is an error naming the limit and its flag (exit 2).
 * The read takes at most `seconds` (what is left of --timeout, and never more than one read's own bound): kubectl is
 * given that as its request timeout and killed past it, so a slow API server cannot hold --wait past its --timeout.
 */
function getRaw(path: string, options: WaitOptions, seconds: number): { value?: any; error?: string } {
  const bound = Math.max(1, Math.min(seconds, options.timeoutSeconds ?? 300));
  const run = spawnSync(options.kubectl ?? 'kubectl', [
    ...(options.kubeconfig === undefined ? [] : [`--kubeconfig=${options.kubeconfig}`]),
    ...(options.context === undefined ? [] : [`--context=${options.context}`]),
    `--request-timeout=${Math.min(60, Math.ceil(bound))}s`, 'get', `--raw=${path}`,
  ], {
    cwd: options.cwd,
    env: process.env,
    encoding: 'utf-8',
    maxBuffer: MAX_INPUT_BYTES,
    timeout: bound * 1000,
    killSignal: 'SIGKILL',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const code = (run.error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ETIMEDOUT') return { error: `kubectl did not answer within ${bound} s (stopped)` };
  if (run.error !== undefined) return { error: `cannot run kubectl (${code ?? run.error.message})` };
  if (run.status !== 0) return { error: (run.stderr || 'no message').split('\n').filter((l) => l.trim() !== '').slice(0, 2).join(' / ').slice(0, 500) };
  let value: unknown;
  try {
    value = JSON.parse(run.stdout);
  } catch {
    return { error: 'kubectl printed no JSON' };
  }
  const kept = (options.budget ?? DEFAULT_LIVE_BUDGET).kept;
  if (new HeapEstimate().of(value) > kept) throw keptExceeded(`kubectl get --raw ${path}`, kept, 'the limit of one read of --wait');
  return { value };
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/** Waits on one DaemonSet's rollout; every line it says goes to options.log. */
export function waitForRollout(options: WaitOptions): WaitResult {
  const sleep = options.sleep ?? blockingSleep;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const ns = encodeURIComponent(options.namespace);
  const name = encodeURIComponent(options.daemonSet);
  const started = now();
  const timeout = options.budgets.timeoutSeconds ?? defaultWatchBudgets(undefined).timeoutSeconds;
  /** seconds left of --timeout: each read and each sleep is bounded by it */
  const left = () => timeout - (now() - started);
  const nap = (seconds: number) => sleep(Math.max(0, Math.min(seconds, left())));
  let seen = new Map<string, number>();
  let failures = 0;
  let progress = '';
  let budgets: WatchBudgets | undefined;
  for (;;) {
    const t = now();
    if (left() <= 0) return { passed: false, reason: `the rollout is not complete after ${timeout} s (${progress || 'nothing read'})` };
    const ds = getRaw(`/apis/apps/v1/namespaces/${ns}/daemonsets/${name}`, options, left());
    const read = ds.value === undefined ? undefined : readDaemonSet(ds.value);
    if (read === undefined) {
      failures++;
      options.log(`cannot read daemonset ${options.namespace}/${options.daemonSet}: ${ds.error ?? 'not a DaemonSet'}`);
      if (failures >= 5) return { passed: false, reason: `${failures} reads in a row failed` };
      nap(budgets?.pollSeconds ?? options.budgets.pollSeconds ?? 10);
      continue;
    }
    budgets ??= { ...defaultWatchBudgets(podStartupBudgetSeconds(ds.value?.spec?.template?.spec)), ...options.budgets };
    const waiting = notYetCounted(read);
    if (waiting !== undefined) {
      if (waiting !== progress) options.log(waiting);
      progress = waiting;
      nap(budgets.pollSeconds);
      continue;
    }
    const selector = [read.selector, read.template === undefined ? '' : `pod-template-generation=${read.template}`].filter((s) => s !== '').join(',');
    if (left() <= 0) continue;
    const pods = getRaw(`/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`, options, left());
    if (!isObject(pods.value) || !Array.isArray(pods.value.items)) {
      failures++;
      options.log(`cannot read the pods of daemonset ${options.namespace}/${options.daemonSet}: ${pods.error ?? 'not a list'}`);
      if (failures >= 5) return { passed: false, reason: `${failures} reads in a row failed` };
      nap(budgets.pollSeconds);
      continue;
    }
    failures = 0;
    const next = new Map<string, number>();
    const judged = judgePods(pods.value.items, t, seen, budgets, next);
    seen = next;
    if (judged.failure !== undefined) return { passed: false, failure: told(judged.failure, options, left()) };
    const line = `${read.updated} of ${read.desired} updated, ${read.available} available; new revision (template generation ${read.template ?? '?'}): ${judged.pods} pods, ${judged.ready} ready`;
    if (line !== progress) options.log(line);
    progress = line;
    if (read.updated! >= read.desired! && read.available! >= read.desired!) return { passed: true };
    nap(budgets.pollSeconds);
  }
}

/**
 * Why the DaemonSet's status cannot be judged yet, or undefined when it can: the controller has not observed the
 * current generation, or a count of its status is missing or not a whole number (read as unknown, never as 0: a
 * `desiredNumberScheduled` of "3" would otherwise pass with nothing updated).
 */
function notYetCounted(read: DaemonSetRead): string | undefined {
  if (!read.observed) return `waiting for the DaemonSet controller to observe generation ${read.generation}`;
  const unknown = (['desired', 'updated', 'available'] as const).filter((k) => read[k] === undefined);
  if (unknown.length === 0) return undefined;
  const fields = { desired: 'desiredNumberScheduled', updated: 'updatedNumberScheduled', available: 'numberAvailable' };
  return `status.${unknown.map((k) => fields[k]).join(', status.')} ${unknown.length === 1 ? 'is' : 'are'} missing or not a whole number: `
    + 'the rollout is not counted as done; waiting for the DaemonSet controller to write it';
}

interface DaemonSetRead {
  readonly observed: boolean;
  readonly generation: number;
  readonly template?: string;
  readonly selector: string;
  /** the status counts; undefined when missing or not a whole number of 0 or more (unknown, never 0) */
  readonly desired?: number;
  readonly updated?: number;
  readonly available?: number;
}

/** A count of the DaemonSet's status: a whole number of 0 or more, else undefined (unknown). */
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

function readDaemonSet(ds: any): DaemonSetRead | undefined {
  if (!isObject(ds) || !isObject(ds.metadata)) return undefined;
  const generation = num(ds.metadata.generation) ?? 0;
  const observed = num(ds.status?.observedGeneration);
  const labels = isObject(ds.spec?.selector?.matchLabels) ? ds.spec.selector.matchLabels as Record<string, unknown> : {};
  const template = ds.metadata.annotations?.['deprecated.daemonset.template.generation'];
  return {
    observed: observed !== undefined && observed >= generation,
    generation,
    template: typeof template === 'string' ? template : undefined,
    selector: Object.keys(labels).sort().map((k) => `${k}=${String(labels[k])}`).join(','),
    desired: count(ds.status?.desiredNumberScheduled),
    // absent counts are 0 in the API's JSON (omitempty): only a desired count must be written to be judged
    updated: ds.status?.updatedNumberScheduled === undefined ? 0 : count(ds.status.updatedNumberScheduled),
    available: ds.status?.numberAvailable === undefined ? 0 : count(ds.status.numberAvailable),
  };
}

/** The failure with the pod's newest Warning event and doctor's fix, as the watcher tells it. */
function told(failure: WatchFailure, options: WaitOptions, seconds: number): NonNullable<WaitResult['failure']> {
  const path = `/api/v1/namespaces/${encodeURIComponent(options.namespace)}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${failure.pod}`)}`;
  // the verdict stands without the events when --timeout has no time left for their read
  const events = seconds > 0 ? getRaw(path, options, seconds) : {};
  const items: any[] = isObject(events.value) && Array.isArray(events.value.items) ? events.value.items : [];
  let newest: any;
  for (const e of items) {
    const at = String(e?.lastTimestamp ?? e?.eventTime ?? '');
    if (e?.type === 'Warning' && (newest === undefined || at >= String(newest.lastTimestamp ?? newest.eventTime ?? ''))) newest = e;
  }
  const event = newest === undefined ? undefined : `${String(newest.reason ?? '')} ${String(newest.message ?? '').replace(/[\n\r\t]/g, ' ').slice(0, 400)}`;
  const cause: WatchCause = failure.cause === 'pending-start' ? (newest?.reason === 'FailedMount' ? 'config-error' : 'not-ready') : failure.cause;
  return { ...failure, cause, fix: fixFor(cause), event };
}

