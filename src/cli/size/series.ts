/**
 * The input of `node-agents size`: Prometheus range-query results (GET /api/v1/query_range), as the HTTP API
 * returns them, one per query name. A saved file (`--series FILE`) is a JSON object keyed by query name:
 *
 *   { "memory": {"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[t,"v"],...]}]}},
 *     "cpu": ..., "oom": ..., "restarts": ..., "pods": ..., "nodes": ... }
 *
 * Every field is checked before it is used: the results come from outside (a file in CI, a server).
 */
import { isObject } from '../coverage/manifests';

/** The queries `size` reads, in the order it reads them (the identities first, then the usage). */
export const QUERY_NAMES = ['pods', 'nodes', 'memory', 'cpu', 'oom', 'restarts'] as const;
export type QueryName = typeof QUERY_NAMES[number];

/** The usage queries: without them there is nothing to size. */
export const REQUIRED_QUERIES: readonly QueryName[] = ['pods', 'memory', 'cpu'];

/** One series of a range-query result: its labels, and its samples as parallel arrays (seconds, values). */
export interface Series {
  readonly metric: Readonly<Record<string, string>>;
  readonly times: Float64Array;
  readonly values: Float64Array;
}

/** The longest label value read (a Kubernetes label value is at most 63 characters, a name 253). */
const MAX_LABEL_VALUE = 1024;

/** The result of one query, checked: throws naming `where` and what is wrong, never echoing the content. */
export function parseQueryResult(value: unknown, where: string): Series[] {
  if (!isObject(value)) throw new Error(`${where}: not a query result object (expected {"status":"success","data":{...}})`);
  if (value.status !== 'success') {
    const type = typeof value.errorType === 'string' ? ` (${value.errorType.slice(0, 40)})` : '';
    throw new Error(`${where}: the query did not succeed: status is not "success"${type}`);
  }
  const data = value.data;
  if (!isObject(data) || data.resultType !== 'matrix' || !Array.isArray(data.result)) {
    throw new Error(`${where}: data.resultType must be "matrix" with a result list (the result of /api/v1/query_range)`);
  }
  const series: Series[] = [];
  data.result.forEach((item: unknown, i: number) => series.push(parseSeries(item, `${where}: data.result[${i}]`)));
  return series;
}

function parseSeries(item: unknown, where: string): Series {
  if (!isObject(item) || !isObject(item.metric) || !Array.isArray(item.values)) {
    throw new Error(`${where}: a series must have a metric object and a values list`);
  }
  const metric: Record<string, string> = {};
  for (const [k, v] of Object.entries(item.metric)) {
    if (typeof v !== 'string' || v.length > MAX_LABEL_VALUE || k.length > MAX_LABEL_VALUE) {
      throw new Error(`${where}: metric labels must be strings of at most ${MAX_LABEL_VALUE} characters`);
    }
    metric[k] = v;
  }
  const raw = item.values as unknown[];
  const times = new Float64Array(raw.length);
  const values = new Float64Array(raw.length);
  let kept = 0;
  for (let i = 0; i < raw.length; i++) {
    const pair = raw[i];
    if (!Array.isArray(pair) || pair.length !== 2 || typeof pair[0] !== 'number' || !Number.isFinite(pair[0]) || typeof pair[1] !== 'string') {
      throw new Error(`${where}: values[${i}] must be [unix seconds, "value"]`);
    }
    const v = Number(pair[1]);
    if (!Number.isFinite(v) || v < 0) continue; // NaN, ±Inf (a counter reset mid-rate) and negatives say nothing of usage
    if (kept > 0 && pair[0] <= times[kept - 1]) throw new Error(`${where}: values[${i}]: the timestamps must increase`);
    times[kept] = pair[0];
    values[kept] = v;
    kept++;
  }
  return { metric, times: times.subarray(0, kept), values: values.subarray(0, kept) };
}

/** A saved file's queries (the keys it has of QUERY_NAMES), each checked; unknown keys are refused. */
export function parseSavedFile(value: unknown, where: string): Partial<Record<QueryName, Series[]>> {
  if (!isObject(value)) throw new Error(`${where}: expected a JSON object keyed by query name (${QUERY_NAMES.join(', ')})`);
  const result: Partial<Record<QueryName, Series[]>> = {};
  for (const [key, entry] of Object.entries(value)) {
    if (!(QUERY_NAMES as readonly string[]).includes(key)) {
      throw new Error(`${where}: unknown key ${JSON.stringify(key.slice(0, 40))}; the keys are the query names ${QUERY_NAMES.join(', ')}`);
    }
    result[key as QueryName] = parseQueryResult(entry, `${where}: ${key}`);
  }
  return result;
}

/** The step of the samples in seconds: the least gap between two samples of one series (60 when none has two). */
export function inferStep(series: readonly Series[]): number {
  let step = Number.POSITIVE_INFINITY;
  for (const s of series) for (let i = 1; i < s.times.length; i++) step = Math.min(step, s.times[i] - s.times[i - 1]);
  return Number.isFinite(step) && step > 0 ? step : 60;
}
