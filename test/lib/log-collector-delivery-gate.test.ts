/**
 * The log collector's gate judged on what fluent-bit 5.1.1 really reports: the series of
 * test/fixtures/fluent-bit-delivery/*.json were scraped from its /api/v2/metrics/prometheus every
 * 5 s (with /api/v1/health), running the collector config of examples/log-collector against a Loki
 * stand-in on loopback that answered 401 (a bad credential), 503, nothing (an outage: nothing
 * listening), or 204 (healthy). Each default check of the rendered gate Job is run by the real
 * promtool as a rule over those series, at the end of the bake.
 *
 * What the series show (plugins/out_loki/loki.c cb_loki_flush retries every status but 400 and 2xx;
 * src/flb_engine.c handle_output_event counts proc_records on FLB_OK only, errors and dropped
 * records on FLB_ERROR, failed retries when Retry_Limit runs out, which `no_limits` never does):
 * with a 401, a 503 or an outage only retries_total climbs, and health stays 200, so the loss
 * checks (records-dropped, retries-failed) pass a wave that ships nothing; the delivery checks fail it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { FluentBitOutput, LogCollectorDaemonSet, Promotion, RolloutWave } from '../../src';
import { Manifest, synthManifests } from '../util/manifests';
import { FIXTURES as FIXTURE_ROOT } from '../util/paths';
import { describeWithBinaries, promtool, PROMTOOL } from '../util/prometheus-tools';

const NS = 'observability';
const POD = 'logs-canary-x7k2p';
/** A pod of the next wave, whose series never reach the canary's gate. */
const OTHER_POD = 'logs-wave-1-q8w2e';
const FIXTURES = path.join(FIXTURE_ROOT, 'fluent-bit-delivery');

interface Recorded {
  readonly recorded: string;
  readonly case: string;
  readonly intervalSeconds: number;
  readonly healthEndpoint: Array<number | null>;
  /** `metric{name="alias"}` → one value per scrape (null: not exposed at that scrape). */
  readonly series: Record<string, Array<number | null>>;
}

function load(name: string): Recorded {
  return JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8'));
}

/** The gate's checks as rendered for the canary, with a bake of `bakeMinutes`. */
function gateChecks(bakeMinutes: number): Array<{ name: string; expr: string }> {
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'logs',
    namespace: NS,
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', alias: 'loki' })],
    rollout: {
      waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')],
      promoted: Promotion.all(),
      argoCdSyncWaves: true,
      gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090', bakeMinutes }],
    },
  });
  const job = synthManifests(chart).find((m) => m.kind === 'Job')!;
  const env: Record<string, string> = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: Manifest) => [e.name, e.value]));
  return Array.from({ length: Number(env.CHECK_COUNT) }, (_, i) => ({ name: env[`CHECK_${i + 1}_NAME`], expr: env[`CHECK_${i + 1}_EXPR`] }));
}

/** The recorded series as promtool input, for the canary pod (and a copy under a pod of another wave). */
function inputSeries(rec: Recorded): Array<{ series: string; values: string }> {
  return [POD, OTHER_POD].flatMap((pod) => Object.entries(rec.series).map(([metric, values]) => {
    const [, name, alias] = /^([a-z_]+)\{name="([^"]+)"\}$/.exec(metric)!;
    return {
      series: `${name}{namespace="${NS}",pod="${pod}",name="${alias}"}`,
      values: values.map((v) => (v === null ? '_' : String(v))).join(' '),
    };
  }));
}

/** Which checks return series at the end of the recording, as promtool evaluates them. */
function failingChecks(rec: Recorded, checks: Array<{ name: string; expr: string }>, expected: Record<string, Array<Record<string, string>>>): void {
  for (const name of Object.keys(expected)) expect(checks.map((c) => c.name)).toContain(name);
  const seconds = (rec.healthEndpoint.length - 1) * rec.intervalSeconds;
  const rules = { groups: [{ name: 'gate', rules: checks.map((c) => ({ alert: c.name, expr: c.expr })) }] };
  const tests = {
    rule_files: ['rules.yaml'],
    evaluation_interval: `${rec.intervalSeconds}s`,
    tests: [{
      interval: `${rec.intervalSeconds}s`,
      input_series: inputSeries(rec),
      alert_rule_test: checks.map((c) => ({
        alertname: c.name,
        eval_time: `${seconds}s`,
        exp_alerts: (expected[c.name] ?? []).map((labels) => ({ exp_labels: labels })),
      })),
    }],
  };
  const run = promtool(['test', 'rules', 'tests.yaml'], { 'rules.yaml': rules, 'tests.yaml': tests });
  if (run.status !== 0) throw new Error(`promtool test rules (${rec.case}):\n${run.output}`);
}

const OUTPUT = { namespace: NS, pod: POD, name: 'loki' };
const PODS = { namespace: NS, pod: POD };

describeWithBinaries(`the log collector's gate on recorded fluent-bit 5.1.1 series (${PROMTOOL})`, [PROMTOOL], () => {
  // Each recording is four minutes; a three-minute bake ends at its last scrape. The DaemonSet
  // checks read kube-state-metrics, which the recordings do not have: the collector's own checks.
  const all = gateChecks(3);
  const checks = all.filter((c) => c.expr.includes('fluentbit_'));

  test('the gate has the loss checks and the delivery checks', () => {
    expect(checks.map((c) => c.name)).toEqual(['records-dropped', 'retries-failed', 'retries-without-delivery', 'read-not-delivered']);
    expect(all.length - checks.length).toBe(5);
    expect(checks.find((c) => c.name === 'retries-without-delivery')!.expr)
      .toBe(`sum by (namespace, pod, name) (increase(fluentbit_output_retries_total{namespace="${NS}",pod=~"(logs-canary)-[a-z0-9]{5}"}[2m] offset 1m)) > 0`
        + ` unless on (namespace, pod, name) sum by (namespace, pod, name) (increase(fluentbit_output_proc_records_total{namespace="${NS}",pod=~"(logs-canary)-[a-z0-9]{5}"}[3m])) > 0`);
  });

  test.each([
    ['loki-401', 'a bad credential (Loki answers 401)'],
    ['loki-503', 'Loki answering 503'],
    ['outage', 'an outage (nothing listening)'],
  ])('%s, %s: the loss checks pass, health stays 200, and the delivery checks fail the gate', (name) => {
    const rec = load(name);
    // What readiness and the old gate saw: 200 at every scrape, no error, no failed retry, nothing dropped, while retries climbed.
    expect(new Set(rec.healthEndpoint)).toEqual(new Set([200]));
    const last = (metric: string) => rec.series[metric][rec.series[metric].length - 1]!;
    expect(last('fluentbit_output_errors_total{name="loki"}')).toBe(0);
    expect(last('fluentbit_output_retries_failed_total{name="loki"}')).toBe(0);
    expect(last('fluentbit_output_dropped_records_total{name="loki"}')).toBe(0);
    expect(last('fluentbit_output_proc_records_total{name="loki"}')).toBe(0);
    expect(last('fluentbit_output_retries_total{name="loki"}')).toBeGreaterThan(100);
    expect(last('fluentbit_input_records_total{name="tail_containers"}')).toBeGreaterThan(10_000);
    failingChecks(rec, checks, { 'retries-without-delivery': [OUTPUT], 'read-not-delivered': [PODS] });
  });

  test('healthy (Loki answers 204): every check passes', () => {
    const rec = load('healthy');
    expect(new Set(rec.healthEndpoint)).toEqual(new Set([200]));
    const series = rec.series['fluentbit_output_proc_records_total{name="loki"}'];
    expect(series[series.length - 1]).toBeGreaterThan(10_000);
    failingChecks(rec, checks, {});
  });

  test('the checks are real: the old gate (loss checks only) passes the 401 recording', () => {
    const old = checks.filter((c) => c.name === 'records-dropped' || c.name === 'retries-failed');
    failingChecks(load('loki-401'), old, {});
    // and a check that is always true fails it, so promtool does evaluate the series
    expect(() => failingChecks(load('loki-401'), [{ name: 'always', expr: 'vector(1)' }], {})).toThrow(/always/);
  });
});
