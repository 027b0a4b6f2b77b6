/**
 * The PromQL `size` runs and how it asks Prometheus for them (GET /api/v1/query_range). The query text is built
 * here and nowhere else; `--save` writes the answers keyed by query name, the file `--series` reads back.
 */
import { spawnSync } from 'child_process';
import { QueryName } from './series';

/** Prometheus refuses a range query of more than 11,000 points per series. */
export const MAX_POINTS_PER_SERIES = 11_000;
/** The most bytes one answer may hold: past it the read stops (exit 2). */
export const MAX_ANSWER_BYTES = 512 * 2 ** 20;
/** The most seconds one query may take. */
export const QUERY_TIMEOUT_SECONDS = 300;

export interface QueryWindow {
  /** Unix seconds */
  readonly end: number;
  readonly windowSeconds: number;
  readonly stepSeconds: number;
}

/**
 * The step of the identity queries (pods, nodes): at least an hour, each point the hour's (max_over_time), so a pod
 * alive for a minute is still seen while a week of a large fleet's identities stays small.
 */
export function identityStep(stepSeconds: number): number {
  return Math.max(stepSeconds, 3600);
}

/** A label matcher value as PromQL reads it in double quotes. */
function quoted(value: string): string {
  return JSON.stringify(value);
}

/** The namespace matcher (`,namespace=~"a|b"`), or nothing for every namespace. */
function namespaceMatcher(namespaces: readonly string[]): string {
  if (namespaces.length === 0) return '';
  return `,namespace=~${quoted(namespaces.map((n) => n.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&')).join('|'))}`;
}

/**
 * The queries, by name. Usage is per container of DaemonSet pods (cAdvisor, kube-state-metrics); memory is each
 * step's peak (max_over_time) so a spike between two steps is not missed; CPU is the rate over the step (at least 5m).
 */
export function queries(namespaces: readonly string[], stepSeconds: number): Record<QueryName, string> {
  const ns = namespaceMatcher(namespaces);
  const step = `${stepSeconds}s`;
  const rateWindow = `${Math.max(stepSeconds, 300)}s`;
  const by = 'max by (namespace, pod, container)';
  // only DaemonSet pods' containers: the join happens in Prometheus, so other pods' series are never sent
  const daemonSetPods = ` * on (namespace, pod) group_left () max by (namespace, pod) (kube_pod_info{created_by_kind="DaemonSet"${ns}})`;
  return {
    pods: `max by (namespace, pod, node) (max_over_time(kube_pod_info{created_by_kind="DaemonSet"${ns}}[${identityStep(stepSeconds)}s]))`,
    nodes: `max_over_time(kube_node_labels[${identityStep(stepSeconds)}s])`,
    memory: `${by} (max_over_time(container_memory_working_set_bytes{container!="",container!="POD"${ns}}[${step}]))${daemonSetPods}`,
    cpu: `sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{container!="",container!="POD"${ns}}[${rateWindow}]))${daemonSetPods}`,
    oom: `${by} (kube_pod_container_status_last_terminated_reason{reason="OOMKilled"${ns}})${daemonSetPods}`,
    restarts: `${by} (kube_pod_container_status_restarts_total{container!=""${ns}})${daemonSetPods}`,
  };
}

/** The query_range URL of one query. */
export function rangeUrl(base: string, query: string, w: QueryWindow): string {
  const url = new URL(`${base.replace(/\/+$/, '')}/api/v1/query_range`);
  url.searchParams.set('query', query);
  url.searchParams.set('start', String(w.end - w.windowSeconds));
  url.searchParams.set('end', String(w.end));
  url.searchParams.set('step', `${w.stepSeconds}s`);
  return url.toString();
}

/** The base URL, checked: http or https, no credentials in it (they would be printed in errors). */
export function checkBaseUrl(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an http:// or https:// URL';
  if (url.username !== '' || url.password !== '') return 'must not hold credentials';
  if (url.search !== '' || url.hash !== '') return 'must not have a query or fragment';
  return undefined;
}

/** A child node process fetches the URL and writes the body: the CLI stays synchronous, the read is bounded. */
const FETCH_SCRIPT = `
const url = process.argv[1];
fetch(url, { headers: { accept: 'application/json' } }).then(async (r) => {
  const body = await r.text();
  if (!r.ok) { process.stderr.write('HTTP ' + r.status); process.exit(3); }
  process.stdout.write(body);
}, (e) => { process.stderr.write(String(e && e.cause && e.cause.code || e && e.message || e)); process.exit(4); });
`;

/** GETs one query's answer: the body text, or an error naming the query (never the body). */
export function fetchQuery(name: string, url: string): string {
  const run = spawnSync(process.execPath, ['-e', FETCH_SCRIPT, url], {
    encoding: 'utf-8', maxBuffer: MAX_ANSWER_BYTES, timeout: QUERY_TIMEOUT_SECONDS * 1000, stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (run.error !== undefined) {
    const code = (run.error as NodeJS.ErrnoException).code;
    if (code === 'ENOBUFS') throw new Error(`query ${name}: the answer is more than ${MAX_ANSWER_BYTES} bytes; shorten --window, raise --step or narrow --namespace`);
    if (code === 'ETIMEDOUT') throw new Error(`query ${name}: no answer within ${QUERY_TIMEOUT_SECONDS} s`);
    throw new Error(`query ${name}: ${code ?? run.error.message}`);
  }
  if (run.status !== 0) throw new Error(`query ${name}: Prometheus did not answer (${String(run.stderr).slice(0, 80)})`);
  return run.stdout;
}
