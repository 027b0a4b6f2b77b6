/**
 * The log collector's alerts over a recorded 17-minute outage of fluent-bit 5.1.1's destination
 * (test/fixtures/fluent-bit-delivery/outage-17m.json: its /api/v2/metrics/prometheus every 5 s),
 * evaluated by the real promtool: LogCollectorBacklog fires during the outage and stays on after the
 * destination is back while the backlog waits for its retries (scheduler.cap 60: src/flb_scheduler.c
 * backoff_full_jitter), when LogCollectorOutputStalled has already cleared at the first delivered
 * record; it clears once no chunk is busy (src/flb_storage.c counts ic->busy). The loss alerts stay
 * silent throughout: nothing was dropped.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { FluentBitOutput, LogCollectorDaemonSet } from '../../src';
import { Manifest, synthManifests } from '../util/manifests';
import { FIXTURES } from '../util/paths';
import { describeWithBinaries, promtool, PROMTOOL, recordedInput, ruleFile } from '../util/prometheus-tools';

const NS = 'observability';
const POD = { job: 'logs', namespace: NS, pod: 'logs-x7k2p', node: 'node-1' };

interface Recorded {
  readonly intervalSeconds: number;
  readonly recoveredAfterSample: number;
  readonly healthEndpoint: Array<number | null>;
  readonly series: Record<string, Array<number | null>>;
}

const recorded: Recorded = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fluent-bit-delivery', 'outage-17m.json'), 'utf8'));

/** The collector's rule file, annotations left out (this test is about when each alert fires). */
function rules(): { groups: Manifest[] } {
  const chart = new Chart(Testing.app(), 'test', { namespace: NS });
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'logs',
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', alias: 'loki' })],
    alerts: {},
  });
  const file = ruleFile(synthManifests(chart));
  for (const group of file.groups) for (const rule of group.rules) delete rule.annotations;
  return file;
}

function input(): Array<{ series: string; values: string }> {
  const series = recordedInput(recorded.series, POD);
  series.push({ series: `up{job="logs",namespace="${NS}",pod="${POD.pod}",instance="10.0.0.1:2020"}`, values: `1x${recorded.healthEndpoint.length}` });
  return series;
}

const ALERTS = [
  'LogCollectorOutputRetriesFailed', 'LogCollectorRecordsDropped', 'LogCollectorOutputErrors', 'LogCollectorOutputStalled', 'LogCollectorBacklog',
  'LogCollectorBufferNearFull', 'LogCollectorInputStalled',
];

/** Expects exactly `firing` (each once, for the pod and its output or input) at `seconds`, every other log collector alert silent. */
function at(seconds: number, firing: Record<string, string>): Manifest[] {
  return ALERTS.map((alertname) => ({
    alertname,
    eval_time: `${seconds}s`,
    exp_alerts: alertname in firing
      ? [{ exp_labels: { namespace: NS, pod: POD.pod, node: POD.node, name: firing[alertname], node_agent: 'logs', severity: 'warning' } }]
      : [],
  }));
}

describeWithBinaries(`alerts over a recorded 17-minute outage (fluent-bit 5.1.1, ${PROMTOOL})`, [PROMTOOL], () => {
  const step = recorded.intervalSeconds;
  const recovered = recorded.recoveredAfterSample * step;
  const busy = recorded.series['fluentbit_input_storage_chunks_busy{name="tail_containers"}'] as number[];
  const empty = busy.findIndex((b, i) => i > recorded.recoveredAfterSample && b === 0) * step;

  test('the recording: the outage ends at the first delivery, the backlog empties after it, readiness stayed 200', () => {
    expect(recovered).toBe(1015);
    expect(busy[recorded.recoveredAfterSample]).toBe(2381);
    expect(empty).toBe(1155);
    expect(new Set(recorded.healthEndpoint)).toEqual(new Set([200]));
  });

  test('LogCollectorBacklog fires in the outage and stays on after the destination is back until the backlog is delivered; LogCollectorOutputStalled clears first', () => {
    const tests = {
      rule_files: ['rules.yaml'],
      evaluation_interval: `${step}s`,
      tests: [{
        interval: `${step}s`,
        input_series: input(),
        alert_rule_test: [
          // 17 minutes into the outage: both fire (the backlog after 5m busy plus backlogFor 10m)
          ...at(recovered, { LogCollectorOutputStalled: 'loki', LogCollectorBacklog: 'tail_containers' }),
          // 30 s after the first delivery: records go out again, so OutputStalled has cleared; 1,381 chunks still wait
          ...at(recovered + 30, { LogCollectorBacklog: 'tail_containers' }),
          // once a scrape finds no chunk busy, the backlog is delivered
          ...at(empty, {}),
        ],
      }],
    };
    const run = promtool(['test', 'rules', 'tests.yaml'], { 'rules.yaml': rules(), 'tests.yaml': tests });
    if (run.status !== 0) throw new Error(`promtool test rules failed:\n${run.output}`);
  });
});
