/**
 * Every alert the agents synthesize, run by the real promtool: each rule file passes
 * `promtool check rules`, and `promtool test rules` shows each alert firing on input series that
 * should fire it (with the exact labels and expanded annotations) and silent on healthy ones.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import {
  AgentAlerts, AlertSeverity, FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeExporterDaemonSet,
  Promotion, RolloutWave,
} from '../../src';
import { Manifest, synthManifests } from '../util/manifests';
import { FIXTURES, REPO } from '../util/paths';
import { describeWithBinaries, promtool, PROMTOOL, ruleFile } from '../util/prometheus-tools';

const KSM = { job: 'kube-state-metrics' };

/** A series in promtool's notation. */
function series(name: string, labels: Record<string, string>, values: string): { series: string; values: string } {
  const body = Object.entries(labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',');
  return { series: `${name}{${body}}`, values };
}

interface AlertCase {
  /** Alert name, plus a label to tell apart two rules of one name (e.g. by severity). */
  readonly alert: string;
  /** Series and time at which the alert fires, with the series' labels and the value `$value` shows. */
  readonly fire: { input: Array<{ series: string; values: string }>; at: string; alerts: Array<{ labels: Record<string, string>; value: string }> };
  /** Series and time at which it stays silent. */
  readonly healthy: { input: Array<{ series: string; values: string }>; at: string };
}

function rulesOf(manifests: Manifest[]): Manifest[] {
  return ruleFile(manifests).groups.flatMap((g: Manifest) => g.rules);
}

/** Alertmanager-style template expansion of what our annotations use: $labels.x, $value, printf "%.2f". */
function expand(template: string, labels: Record<string, string>, value: string): string {
  return template.replace(/\{\{\s*(.*?)\s*\}\}/g, (_, inner: string) => {
    const label = /^\$labels\.([a-zA-Z_][a-zA-Z0-9_]*)$/.exec(inner);
    if (label) {
      if (!(label[1] in labels)) throw new Error(`annotation names label "${label[1]}", which the alert does not carry: ${template}`);
      return labels[label[1]];
    }
    if (inner === '$value') return value;
    if (inner === 'printf "%.2f" $value') return Number(value).toFixed(2);
    throw new Error(`unexpected template {{ ${inner} }} in ${template}`);
  });
}

/** promtool's unit tests for the cases: one test (own input series) for the firing and one for the healthy case. */
function unitTests(manifests: Manifest[], cases: AlertCase[]): Manifest {
  const rules = rulesOf(manifests);
  const tests = cases.flatMap((c) => {
    const sameName = rules.filter((r) => r.alert === c.alert);
    if (sameName.length === 0) throw new Error(`no rule for alert ${c.alert}`);
    const expAlerts = c.fire.alerts.map((a) => {
      // Two rules of one name differ by severity (node-mixin's warning and critical).
      const rule = sameName.find((r) => a.labels.severity === undefined || r.labels.severity === a.labels.severity);
      if (!rule) throw new Error(`no ${a.labels.severity} rule for alert ${c.alert}`);
      const labels = { ...a.labels, ...rule.labels };
      const annotations = Object.fromEntries(Object.entries(rule.annotations as Record<string, string>)
        .map(([k, v]) => [k, expand(v, labels, a.value)]));
      return { exp_labels: labels, exp_annotations: annotations };
    });
    return [
      { name: `${c.alert} fires`, interval: '1m', input_series: c.fire.input, alert_rule_test: [{ alertname: c.alert, eval_time: c.fire.at, exp_alerts: expAlerts }] },
      {
        name: `${c.alert} is silent when healthy`,
        interval: '1m',
        input_series: c.healthy.input,
        alert_rule_test: [{ alertname: c.alert, eval_time: c.healthy.at, exp_alerts: [] }],
      },
    ];
  });
  return { rule_files: ['rules.yaml'], evaluation_interval: '1m', tests };
}

function runUnitTests(manifests: Manifest[], cases: AlertCase[]): void {
  const run = promtool(['test', 'rules', 'tests.yaml'], { 'rules.yaml': ruleFile(manifests), 'tests.yaml': unitTests(manifests, cases) });
  if (run.status !== 0) throw new Error(`promtool test rules failed:\n${run.output}`);
  expect(run.output).toMatch(/SUCCESS/);
}

function expectEveryAlertCovered(manifests: Manifest[], cases: AlertCase[]): void {
  const alerts = [...new Set(rulesOf(manifests).map((r) => r.alert))].sort();
  expect([...new Set(cases.map((c) => c.alert))].sort()).toEqual(alerts);
}

// --- the DaemonSet alerts (every agent), on the log collector "logs" with waves canary and wave-1 ---

const NS = 'observability';
const ds = (name: string) => ({ ...KSM, namespace: NS, daemonset: name });
/** A DaemonSet of another agent whose name starts like ours: never part of our sums. */
const OTHER = ds('logs-metrics');
const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];

function healthyDaemonSets(): Array<{ series: string; values: string }> {
  return ['logs', 'logs-canary', 'logs-wave-1'].flatMap((name) => [
    series('kube_daemonset_status_desired_number_scheduled', ds(name), '3x60'),
    series('kube_daemonset_status_current_number_scheduled', ds(name), '3x60'),
    series('kube_daemonset_status_updated_number_scheduled', ds(name), '3x60'),
    series('kube_daemonset_status_number_misscheduled', ds(name), '0x60'),
    series('kube_daemonset_status_number_unavailable', ds(name), '0x60'),
    series('kube_daemonset_metadata_generation', ds(name), '2x60'),
    series('kube_daemonset_status_observed_generation', ds(name), '2x60'),
  ]);
}

/** The healthy DaemonSets with one series replaced (the canary's, say), and another agent's broken DaemonSet. */
function withDaemonSet(metric: string, name: string, values: string): Array<{ series: string; values: string }> {
  const replaced = series(metric, ds(name), values);
  return [
    ...healthyDaemonSets().filter((s) => s.series !== replaced.series),
    replaced,
    series(metric, OTHER, metric.includes('generation') ? '9x60' : '7x60'),
  ];
}

const DESCRIBED = { namespace: NS };

const DAEMONSET_CASES: AlertCase[] = [
  {
    alert: 'NodeAgentMissing',
    fire: {
      input: [series('kube_daemonset_metadata_generation', OTHER, '1x60')],
      at: '20m',
      alerts: [{ labels: { ...KSM, namespace: NS }, value: '1' }],
    },
    healthy: { input: healthyDaemonSets(), at: '20m' },
  },
  {
    alert: 'NodeAgentNotScheduled',
    fire: { input: withDaemonSet('kube_daemonset_status_current_number_scheduled', 'logs-canary', '2x60'), at: '15m', alerts: [{ labels: DESCRIBED, value: '1' }] },
    healthy: { input: healthyDaemonSets(), at: '15m' },
  },
  {
    alert: 'NodeAgentMisscheduled',
    fire: { input: withDaemonSet('kube_daemonset_status_number_misscheduled', 'logs-wave-1', '1x60'), at: '20m', alerts: [{ labels: DESCRIBED, value: '1' }] },
    healthy: { input: healthyDaemonSets(), at: '20m' },
  },
  {
    alert: 'NodeAgentPodsUnavailable',
    // Two waves unavailable at once: still one alert for the agent, with the sum.
    fire: {
      input: [
        ...withDaemonSet('kube_daemonset_status_number_unavailable', 'logs-canary', '1x60').filter((s) => !s.series.includes('"logs"') || !s.series.startsWith('kube_daemonset_status_number_unavailable')),
        series('kube_daemonset_status_number_unavailable', ds('logs'), '2x60'),
      ],
      at: '20m',
      alerts: [{ labels: DESCRIBED, value: '3' }],
    },
    healthy: { input: withDaemonSet('kube_daemonset_status_number_unavailable', 'logs-canary', '1x10 0x50'), at: '30m' },
  },
  {
    alert: 'NodeAgentRolloutNoProgress',
    // per DaemonSet: the fleet's updated count stuck at 1 of 3 for the window (30m), and that long
    fire: { input: withDaemonSet('kube_daemonset_status_updated_number_scheduled', 'logs', '1x60'), at: '55m', alerts: [{ labels: { namespace: NS, daemonset: 'logs' }, value: '2' }] },
    // Behind for 20 minutes, then done.
    healthy: { input: withDaemonSet('kube_daemonset_status_updated_number_scheduled', 'logs', '1x20 3x40'), at: '40m' },
  },
  {
    alert: 'NodeAgentRolloutOverdue',
    // the canary's spec changes at 5m and one of its 3 pods is updated: its pace (one at a time, 30 s + minReadySeconds 10
    // a pod) gives 120 s, 1.5 × = 180 s
    fire: {
      input: [
        ...withDaemonSet('kube_daemonset_metadata_generation', 'logs-canary', '2x5 3x55').filter((x) => !x.series.startsWith('kube_daemonset_status_updated_number_scheduled{job="kube-state-metrics",namespace="observability",daemonset="logs-canary"')),
        series('kube_daemonset_status_updated_number_scheduled', ds('logs-canary'), '3x5 1+0x55'),
      ],
      at: '20m',
      alerts: [{ labels: { namespace: NS, daemonset: 'logs-canary' }, value: '1' }],
    },
    // the same change, rolled in two minutes
    healthy: {
      input: [
        ...withDaemonSet('kube_daemonset_metadata_generation', 'logs-canary', '2x5 3x55').filter((x) => !x.series.startsWith('kube_daemonset_status_updated_number_scheduled{job="kube-state-metrics",namespace="observability",daemonset="logs-canary"')),
        series('kube_daemonset_status_updated_number_scheduled', ds('logs-canary'), '3x5 1 2 3x53'),
      ],
      at: '20m',
    },
  },
  {
    alert: 'NodeAgentPodsUnavailableOnNotReadyNodes',
    fire: {
      input: [
        ...healthyDaemonSets(),
        series('kube_pod_info', { ...KSM, namespace: NS, pod: 'logs-canary-x7k2p', node: 'node-7' }, '1x60'),
        series('kube_pod_status_ready', { ...KSM, namespace: NS, pod: 'logs-canary-x7k2p', condition: 'true' }, '0x60'),
        series('kube_node_status_condition', { ...KSM, node: 'node-7', condition: 'Ready', status: 'true' }, '0x60'),
      ],
      at: '20m',
      alerts: [{ labels: { namespace: NS, node: 'node-7' }, value: '1' }],
    },
    healthy: {
      input: [
        ...healthyDaemonSets(),
        series('kube_pod_info', { ...KSM, namespace: NS, pod: 'logs-canary-x7k2p', node: 'node-7' }, '1x60'),
        series('kube_pod_status_ready', { ...KSM, namespace: NS, pod: 'logs-canary-x7k2p', condition: 'true' }, '0x60'),
        series('kube_node_status_condition', { ...KSM, node: 'node-7', condition: 'Ready', status: 'true' }, '1x60'),
      ],
      at: '20m',
    },
  },
  {
    alert: 'NodeAgentGenerationMismatch',
    fire: { input: withDaemonSet('kube_daemonset_status_observed_generation', 'logs-canary', '1x60'), at: '20m', alerts: [{ labels: DESCRIBED, value: '1' }] },
    healthy: { input: healthyDaemonSets(), at: '20m' },
  },
];

// --- fluent-bit ---

const FB = { job: 'logs', namespace: NS, pod: 'logs-canary-x7k2p', node: 'node-1', name: 'loki' };
const FB_OUT = { namespace: NS, pod: FB.pod, node: FB.node, name: FB.name };
/** A pod of another DaemonSet in the namespace: never alerted on. */
const FB_OTHER = { ...FB, pod: 'logs-metrics-abcde' };

const LOG_COLLECTOR_CASES: AlertCase[] = [
  {
    alert: 'LogCollectorOutputRetriesFailed',
    fire: {
      input: [series('fluentbit_output_retries_failed_total', FB, '0+1x20'), series('fluentbit_output_retries_failed_total', FB_OTHER, '0+1x20')],
      at: '10m',
      alerts: [{ labels: FB_OUT, value: '5' }],
    },
    healthy: { input: [series('fluentbit_output_retries_failed_total', FB, '3x20')], at: '10m' },
  },
  {
    alert: 'LogCollectorRecordsDropped',
    fire: { input: [series('fluentbit_output_dropped_records_total', FB, '0+1x20')], at: '10m', alerts: [{ labels: FB_OUT, value: '5' }] },
    healthy: { input: [series('fluentbit_output_dropped_records_total', FB, '3x20')], at: '10m' },
  },
  {
    alert: 'LogCollectorOutputErrors',
    fire: { input: [series('fluentbit_output_errors_total', FB, '0+60x40')], at: '25m', alerts: [{ labels: FB_OUT, value: '1' }] },
    // Errors for 10 minutes, then none: below outputErrorsFor.
    healthy: { input: [series('fluentbit_output_errors_total', FB, '0+60x10 600x30')], at: '25m' },
  },
  {
    // A full outage (destination down, connection refused or 5xx): out_loki returns FLB_RETRY, so only
    // fluentbit_output_retries_total rises; errors, failed retries and drops stay 0 (as in the
    // recorded outage below); delivered records (proc_records) stand still.
    alert: 'LogCollectorOutputStalled',
    fire: {
      input: [
        series('fluentbit_output_retries_total', FB, '0x5 0+4x25'),
        series('fluentbit_output_proc_records_total', FB, '0+100x5 500x25'),
        series('fluentbit_output_errors_total', FB, '0x30'),
        series('fluentbit_output_retries_failed_total', FB, '0x30'),
      ],
      at: '25m',
      alerts: [{ labels: FB_OUT, value: '20' }],
    },
    // Retrying while records still go through (a flaky destination), which the other alerts watch.
    healthy: {
      input: [series('fluentbit_output_retries_total', FB, '0+4x30'), series('fluentbit_output_proc_records_total', FB, '0+100x30')],
      at: '25m',
    },
  },
  {
    // Starved by another output (test/lib/log-collector-two-destinations.test.ts has the recordings):
    // loki delivers nothing and retries nothing while es retries and the pod holds 64 chunks up.
    alert: 'LogCollectorOutputStarved',
    fire: {
      input: [
        series('fluentbit_output_proc_records_total', FB, '0+100x5 500x25'),
        series('fluentbit_output_retries_total', FB, '0x30'),
        series('fluentbit_output_retries_total', { ...FB, name: 'es' }, '0x5 0+4x25'),
        series('fluentbit_input_storage_chunks_up', { ...FB, name: 'tail_containers' }, '3x5 64x25'),
      ],
      at: '25m',
      alerts: [{ labels: FB_OUT, value: '0' }],
    },
    // 64 chunks up while loki still delivers (the put-down at work, or a burst): not starved.
    healthy: {
      input: [
        series('fluentbit_output_proc_records_total', FB, '0+100x30'),
        series('fluentbit_output_retries_total', FB, '0x30'),
        series('fluentbit_input_storage_chunks_up', { ...FB, name: 'tail_containers' }, '64x30'),
      ],
      at: '25m',
    },
  },
  {
    // Chunks busy at every scrape: a backlog waiting for its retries, also once retries stopped and
    // records go out again (LogCollectorOutputStalled has cleared by then).
    alert: 'LogCollectorBacklog',
    fire: {
      input: [
        series('fluentbit_input_storage_chunks_busy', { ...FB, name: 'tail_containers' }, '0x5 3x30'),
        series('fluentbit_output_proc_records_total', FB, '0+100x5 500x10 500+100x20'),
      ],
      at: '25m',
      alerts: [{ labels: { ...FB_OUT, name: 'tail_containers' }, value: '3' }],
    },
    // A healthy collector: a chunk busy at some scrapes (caught mid-flush), never at all of them.
    healthy: { input: [series('fluentbit_input_storage_chunks_busy', { ...FB, name: 'tail_containers' }, Array.from({ length: 31 }, (_, i) => (i % 3 === 0 ? 1 : 0)).join(' '))], at: '25m' },
  },
  {
    alert: 'LogCollectorBufferNearFull',
    fire: { input: [series('fluentbit_output_chunk_available_capacity_percent', FB, '10x20')], at: '15m', alerts: [{ labels: FB_OUT, value: '10' }] },
    healthy: { input: [series('fluentbit_output_chunk_available_capacity_percent', FB, '90x20')], at: '15m' },
  },
  {
    alert: 'LogCollectorInputStalled',
    fire: {
      input: [
        series('fluentbit_input_records_total', { ...FB, name: 'tail_containers' }, '100x60'),
        // An idle forward input is normal: not among stalledInputs.
        series('fluentbit_input_records_total', { ...FB, name: 'forward_input' }, '0x60'),
        series('up', { job: 'logs', namespace: NS, pod: FB.pod, instance: '10.0.0.1:2020' }, '1x60'),
      ],
      at: '40m',
      alerts: [{ labels: { ...FB_OUT, name: 'tail_containers' }, value: '0' }],
    },
    healthy: {
      input: [
        series('fluentbit_input_records_total', { ...FB, name: 'tail_containers' }, '0+10x60'),
        series('up', { job: 'logs', namespace: NS, pod: FB.pod, instance: '10.0.0.1:2020' }, '1x60'),
      ],
      at: '40m',
    },
  },
];

// --- node_exporter (namespace monitoring, one wave) ---

const NE = { job: 'node-exporter', namespace: 'monitoring', pod: 'node-exporter-canary-ab12c', instance: 'node-1' };
const FS = { ...NE, device: '/dev/sda1', fstype: 'ext4', mountpoint: '/' };

function filesystem(availPercent: string, files: string, readonly = '0x200'): Array<{ series: string; values: string }> {
  return [
    series('node_filesystem_size_bytes', FS, '100x200'),
    series('node_filesystem_avail_bytes', FS, availPercent),
    series('node_filesystem_files', FS, '100x200'),
    series('node_filesystem_files_free', FS, files),
    series('node_filesystem_readonly', FS, readonly),
  ];
}

const NODE_EXPORTER_CASES: AlertCase[] = [
  {
    alert: 'NodeExporterDown',
    fire: { input: [series('up', NE, '0x20')], at: '10m', alerts: [{ labels: NE, value: '0' }] },
    healthy: { input: [series('up', NE, '1x20')], at: '10m' },
  },
  {
    alert: 'NodeExporterTextfileScrapeError',
    fire: { input: [series('node_textfile_scrape_error', NE, '1x20')], at: '1m', alerts: [{ labels: NE, value: '1' }] },
    healthy: { input: [series('node_textfile_scrape_error', NE, '0x20')], at: '1m' },
  },
  {
    alert: 'NodeExporterCollectorFailed',
    fire: {
      input: [series('node_scrape_collector_success', { ...NE, collector: 'filesystem' }, '0x30')],
      at: '20m',
      alerts: [{ labels: { ...NE, collector: 'filesystem' }, value: '0' }],
    },
    // A collector with nothing to read on the node (no bonding interfaces) also reports 0: not watched.
    healthy: {
      input: [series('node_scrape_collector_success', { ...NE, collector: 'filesystem' }, '1x30'), series('node_scrape_collector_success', { ...NE, collector: 'bonding' }, '0x30')],
      at: '20m',
    },
  },
  {
    alert: 'NodeFilesystemSpaceFillingUp',
    // 39% free, losing 0.1 point a minute: full within 24 h (warning), not within 4 h (no critical).
    fire: { input: filesystem('39-0.1x200', '90x200'), at: '70m', alerts: [{ labels: { ...FS, severity: 'warning' }, value: '32' }] },
    healthy: { input: filesystem('39x200', '90x200'), at: '70m' },
  },
  {
    alert: 'NodeFilesystemAlmostOutOfSpace',
    fire: { input: filesystem('2x200', '90x200'), at: '40m', alerts: [{ labels: { ...FS, severity: 'warning' }, value: '2' }, { labels: { ...FS, severity: 'critical' }, value: '2' }] },
    // As full, but read-only: nothing will fill it.
    healthy: { input: filesystem('2x200', '90x200', '1x200'), at: '40m' },
  },
  {
    alert: 'NodeFilesystemFilesFillingUp',
    fire: { input: filesystem('90x200', '39-0.1x200'), at: '70m', alerts: [{ labels: { ...FS, severity: 'warning' }, value: '32' }] },
    healthy: { input: filesystem('90x200', '39x200'), at: '70m' },
  },
  {
    alert: 'NodeFilesystemAlmostOutOfFiles',
    fire: { input: filesystem('90x200', '2x200'), at: '70m', alerts: [{ labels: { ...FS, severity: 'warning' }, value: '2' }, { labels: { ...FS, severity: 'critical' }, value: '2' }] },
    healthy: { input: filesystem('90x200', '10x200'), at: '70m' },
  },
  {
    alert: 'NodeClockSkewDetected',
    fire: { input: [series('node_timex_offset_seconds', NE, '0.1x30')], at: '20m', alerts: [{ labels: NE, value: '0.1' }] },
    healthy: { input: [series('node_timex_offset_seconds', NE, '0.01x30')], at: '20m' },
  },
  {
    alert: 'NodeClockNotSynchronising',
    fire: {
      input: [series('node_timex_sync_status', NE, '0x30'), series('node_timex_maxerror_seconds', NE, '16x30')],
      at: '20m',
      alerts: [{ labels: NE, value: '0' }],
    },
    healthy: { input: [series('node_timex_sync_status', NE, '1x30'), series('node_timex_maxerror_seconds', NE, '0.1x30')], at: '20m' },
  },
];

// --- GPU driver (namespace gpu-operator, no waves) ---

const GPU_NS = 'gpu-operator';
const gpuPod = (pod: string) => ({ ...KSM, namespace: GPU_NS, pod });
const READY = { condition: 'true' };

function gpuNodes(): Array<{ series: string; values: string }> {
  return [
    series('kube_node_labels', { ...KSM, node: 'gpu-1', label_nvidia_com_gpu_present: 'true' }, '1x90'),
    series('kube_node_status_condition', { ...KSM, node: 'gpu-1', condition: 'Ready', status: 'true' }, '1x90'),
    // Not a GPU node: never needs the driver.
    series('kube_node_labels', { ...KSM, node: 'cpu-1' }, '1x90'),
    series('kube_node_status_condition', { ...KSM, node: 'cpu-1', condition: 'Ready', status: 'true' }, '1x90'),
    // A GPU node whose driver is managed by GKE: opted out.
    series('kube_node_labels', { ...KSM, node: 'gke-1', label_nvidia_com_gpu_present: 'true', label_cloud_google_com_gke_gpu_driver_version: 'latest' }, '1x90'),
    series('kube_node_status_condition', { ...KSM, node: 'gke-1', condition: 'Ready', status: 'true' }, '1x90'),
  ];
}

function driverPod(ready: string): Array<{ series: string; values: string }> {
  return [
    series('kube_pod_status_ready', { ...gpuPod('gpu-driver-k8s2x'), ...READY }, ready),
    series('kube_pod_info', { ...gpuPod('gpu-driver-k8s2x'), node: 'gpu-1' }, '1x90'),
  ];
}

const GPU_CASES: AlertCase[] = [
  {
    alert: 'GpuDriverPodNotReady',
    fire: { input: driverPod('0x90'), at: '35m', alerts: [{ labels: { ...gpuPod('gpu-driver-k8s2x'), ...READY, node: 'gpu-1' }, value: '0' }] },
    // Not ready for 20 minutes while the module builds, then ready.
    healthy: { input: driverPod('0x20 1x70'), at: '35m' },
  },
  {
    alert: 'GpuNodeWithoutReadyDriver',
    fire: { input: [...gpuNodes(), ...driverPod('0x90')], at: '65m', alerts: [{ labels: { node: 'gpu-1' }, value: '1' }] },
    healthy: { input: [...gpuNodes(), ...driverPod('1x90')], at: '65m' },
  },
];

function logCollectorManifests(): Manifest[] {
  const chart = new Chart(Testing.app(), 'test', { namespace: NS });
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'logs',
    outputs: [
      FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', alias: 'loki' }),
      FluentBitOutput.elasticsearch({ host: 'es-http.logging.svc', alias: 'es' }),
    ],
    rollout: { waves: WAVES, promoted: Promotion.all() },
    alerts: { labels: { team: 'platform' }, runbookUrls: { LogCollectorRecordsDropped: 'https://runbooks.example.com/dropped' } },
  });
  return synthManifests(chart);
}

function nodeExporterManifests(): Manifest[] {
  const chart = Testing.chart();
  new NodeExporterDaemonSet(chart, 'node-exporter', {
    rollout: { waves: WAVES, promoted: Promotion.all() },
    alerts: { nodeMixin: {}, severities: { NodeExporterDown: AlertSeverity.CRITICAL } },
  });
  return synthManifests(chart);
}

function gpuDriverManifests(): Manifest[] {
  const chart = Testing.chart();
  new GpuDriverDaemonSet(chart, 'gpu', {
    image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', namespace: GPU_NS, alerts: {}, rollout: { waves: WAVES, promoted: Promotion.all() },
  });
  return synthManifests(chart);
}

describe('alert rules (synthesized)', () => {
  test('every agent kind renders one PrometheusRule in its namespace, schema-checked, with labels and annotations on every alert', () => {
    for (const [manifests, ns] of [[logCollectorManifests(), NS], [nodeExporterManifests(), 'monitoring'], [gpuDriverManifests(), GPU_NS]] as const) {
      const rules = manifests.filter((m) => m.kind === 'PrometheusRule');
      expect(rules).toHaveLength(1);
      expect(rules[0].metadata.namespace).toBe(ns);
      for (const rule of rulesOf(manifests)) {
        expect(Object.keys(rule.annotations).sort()).toEqual(['description', 'runbook_url', 'summary']);
        expect(['critical', 'warning', 'info']).toContain(rule.labels.severity);
        expect(rule.labels.node_agent).toBe(rules[0].metadata.labels['app.kubernetes.io/instance']);
        // The description names where: the node, the pod or the DaemonSets.
        expect(rule.annotations.description).toMatch(/\{\{ \$labels\.(node|instance|pod|daemonset) \}\}|DaemonSets [a-z-]+(, [a-z0-9-]+)*/);
      }
    }
  });

  test('the DaemonSet selector names exactly the fleet and each wave DaemonSet', () => {
    const rule = rulesOf(logCollectorManifests()).find((r) => r.alert === 'NodeAgentMisscheduled');
    expect(rule.expr).toBe('sum by (namespace) (kube_daemonset_status_number_misscheduled{job="kube-state-metrics",namespace="observability",daemonset=~"logs(-canary|-wave-1)?"}) > 0');
    expect(rule.for).toBe('15m');
    expect(rule.labels).toEqual({ node_agent: 'logs', severity: 'warning', team: 'platform' });
  });

  test('user labels, severities and runbook URLs reach the rules', () => {
    const logRules = rulesOf(logCollectorManifests());
    expect(logRules.find((r) => r.alert === 'LogCollectorRecordsDropped').annotations.runbook_url).toBe('https://runbooks.example.com/dropped');
    expect(logRules.find((r) => r.alert === 'NodeAgentMissing').annotations.runbook_url).toMatch(/README\.md#alerts-and-wave-gates$/);
    expect(rulesOf(nodeExporterManifests()).find((r) => r.alert === 'NodeExporterDown').labels.severity).toBe('critical');
  });

  test('the GPU driver alerts watch the driver\'s node requirements and give OnDelete rollouts a day', () => {
    const rules = rulesOf(gpuDriverManifests());
    const node = rules.find((r) => r.alert === 'GpuNodeWithoutReadyDriver');
    expect(node.expr).toContain('kube_node_labels{job="kube-state-metrics",label_nvidia_com_gpu_present=~"true",label_cloud_google_com_gke_gpu_driver_version="",label_nvidia_com_gpu_deploy_driver!~"false|pre-installed"}');
    const stuck = rules.find((r) => r.alert === 'NodeAgentRolloutNoProgress');
    expect([stuck.for, stuck.expr]).toEqual(['24h', expect.stringContaining('[24h]')]);
    // OnDelete: no automatic rollout, so no expected duration and no overdue alert
    expect(rules.find((r) => r.alert === 'NodeAgentRolloutOverdue')).toBeUndefined();
  });

  test('bad alert options name the construct, the prop and the value', () => {
    const chart = Testing.chart();
    expect(() => new LogCollectorDaemonSet(chart, 'a', { outputs: [FluentBitOutput.stdout()], alerts: { unavailableFor: '15 minutes' } }))
      .toThrow('LogCollectorDaemonSet test/a: alerts.unavailableFor "15 minutes" is not a Prometheus duration; write e.g. "10m", "1h" or "1h30m"');
    expect(() => new LogCollectorDaemonSet(chart, 'b', { name: 'b', outputs: [FluentBitOutput.stdout()], alerts: { bufferAvailablePercent: 120 } }))
      .toThrow(/alerts\.bufferAvailablePercent 120 must be a number from 0 to 100/);
    expect(() => new NodeExporterDaemonSet(chart, 'c', { name: 'c', alerts: { severities: { NodeExporterGone: AlertSeverity.INFO } } }))
      .toThrow(/alerts\.severities names "NodeExporterGone", which is not an alert of this agent; valid names are .*NodeExporterDown/);
    expect(() => new NodeExporterDaemonSet(chart, 'd', { name: 'd', alerts: { labels: { severity: 'page' } } }))
      .toThrow(/alerts\.labels sets "severity", which every alert sets itself/);
  });

  test('a base agent gets the DaemonSet alerts through AgentAlerts directly', () => {
    const chart = Testing.chart();
    const agent = new NodeAgentDaemonSet(chart, 'cni', { name: 'cni-agent', namespace: 'kube-system', image: 'example.com/cni:1.0.0' });
    const alerts = new AgentAlerts(chart, 'cni-alerts', { agent, ruleLabels: { release: 'kube-prometheus-stack' } });
    const manifests = synthManifests(chart);
    const rule = manifests.find((m) => m.kind === 'PrometheusRule');
    expect(rule.metadata).toMatchObject({ name: 'cni-agent-alerts', namespace: 'kube-system', labels: { release: 'kube-prometheus-stack' } });
    expect(alerts.ruleGroups.map((g) => g.name)).toEqual(['cni-agent.daemonsets']);
    expect(rule.spec.groups[0].rules[0].expr).toContain('daemonset=~"cni-agent"');
  });
});

describeWithBinaries(`alert rules with the real promtool (${PROMTOOL})`, [PROMTOOL], () => {
  test.each([
    ['log collector', logCollectorManifests, 16],
    ['node exporter with node-mixin', nodeExporterManifests, 21],
    ['GPU driver', gpuDriverManifests, 9],
  ] as const)('the %s rule file passes promtool check rules', (_, manifests, count) => {
    const run = promtool(['check', 'rules', 'rules.yaml'], { 'rules.yaml': ruleFile(manifests()) });
    expect(run.output).toContain(`SUCCESS: ${count} rules found`);
    expect(run.status).toBe(0);
  });

  test('a recorded output outage (fluent-bit 5.1.1, loki pointed at a closed port): only LogCollectorOutputStalled fires', () => {
    // test/fixtures/fluent-bit-outage.json: the collector's own /api/v2/metrics/prometheus, scraped
    // once a minute for 16 minutes of a full outage. Readiness (/api/v1/health) answered 200 throughout.
    const recorded = JSON.parse(fs.readFileSync(path.join(FIXTURES, 'fluent-bit-outage.json'), 'utf8'));
    // What readiness saw meanwhile: 200 at every scrape (the outage counts no error, see HEALTH_PATH).
    expect(new Set(recorded.healthEndpoint)).toEqual(new Set(['200']));
    const input = Object.entries(recorded.series as Record<string, number[]>).map(([metric, values]) => {
      const [name, alias] = /^([a-z_]+)\{name="([^"]+)"\}$/.exec(metric)!.slice(1);
      return series(name, { ...FB, name: alias }, values.join(' '));
    });
    input.push(series('up', { job: 'logs', namespace: NS, pod: FB.pod, instance: '10.0.0.1:2020' }, '1x16'));
    const at = `${(recorded.series['fluentbit_output_retries_total{name="loki"}'] as number[]).length - 1}m`;
    const rules = rulesOf(logCollectorManifests());
    const stalled = rules.find((r) => r.alert === 'LogCollectorOutputStalled');
    const retries = recorded.series['fluentbit_output_retries_total{name="loki"}'] as number[];
    const value = String(retries[retries.length - 1] - retries[retries.length - 6]);
    const labels = { ...FB_OUT, ...stalled.labels };
    const silent = ['LogCollectorOutputRetriesFailed', 'LogCollectorRecordsDropped', 'LogCollectorOutputErrors', 'LogCollectorBufferNearFull', 'LogCollectorInputStalled'];
    const tests = {
      rule_files: ['rules.yaml'],
      evaluation_interval: '1m',
      tests: [{
        interval: '1m',
        input_series: input,
        alert_rule_test: [
          {
            alertname: 'LogCollectorOutputStalled',
            eval_time: at,
            exp_alerts: [{
              exp_labels: labels,
              exp_annotations: Object.fromEntries(Object.entries(stalled.annotations as Record<string, string>)
                .map(([k, v]) => [k, expand(v, labels, value)])),
            }],
          },
          ...silent.map((alertname) => ({ alertname, eval_time: at, exp_alerts: [] })),
        ],
      }],
    };
    const run = promtool(['test', 'rules', 'tests.yaml'], { 'rules.yaml': ruleFile(logCollectorManifests()), 'tests.yaml': tests });
    if (run.status !== 0) throw new Error(`promtool test rules failed:\n${run.output}`);
  });

  test('promtool check rules rejects a broken expression (the check is real)', () => {
    const file = ruleFile(logCollectorManifests());
    file.groups[0].rules[0].expr = 'sum by (namespace) (';
    const run = promtool(['check', 'rules', 'rules.yaml'], { 'rules.yaml': file });
    expect(run.status).not.toBe(0);
    expect(run.output).toMatch(/FAILED/);
  });

  test('the DaemonSet and fluent-bit alerts fire when they should and stay silent when healthy', () => {
    const manifests = logCollectorManifests();
    runUnitTests(manifests, [...DAEMONSET_CASES, ...LOG_COLLECTOR_CASES].map((c) => addLabels(c, { team: 'platform' })));
  });

  test('every log collector alert has a firing and a healthy case', () => {
    expectEveryAlertCovered(logCollectorManifests(), [...DAEMONSET_CASES, ...LOG_COLLECTOR_CASES]);
  });

  test('the node_exporter and node-mixin alerts fire when they should and stay silent when healthy', () => {
    const manifests = nodeExporterManifests();
    const cases = [...DAEMONSET_CASES.map(forNamespace('monitoring', 'node-exporter')), ...NODE_EXPORTER_CASES];
    expectEveryAlertCovered(manifests, cases);
    runUnitTests(manifests, cases);
  });

  test('the GPU driver alerts fire when they should and stay silent when healthy', () => {
    const manifests = gpuDriverManifests();
    const generic = DAEMONSET_CASES.map(forNamespace(GPU_NS, 'gpu-driver'));
    const stuck = generic.find((c) => c.alert === 'NodeAgentRolloutNoProgress')!;
    // OnDelete pods are replaced by the runbook: 40 minutes behind is normal, 25 hours is stuck.
    const onDeleteStuck: AlertCase = {
      alert: stuck.alert,
      fire: { ...stuck.fire, input: stuck.fire.input.map((x) => ({ ...x, values: x.values.replace(/x60$/, 'x3000') })), at: '2900m' },
      healthy: { input: stuck.fire.input, at: '40m' },
    };
    const cases = [...generic.filter((c) => c !== stuck && c.alert !== 'NodeAgentRolloutOverdue'), onDeleteStuck, ...GPU_CASES];
    expectEveryAlertCovered(manifests, cases);
    runUnitTests(manifests, cases);
  });
});

function addLabels(c: AlertCase, labels: Record<string, string>): AlertCase {
  return { ...c, fire: { ...c.fire, alerts: c.fire.alerts.map((a) => ({ ...a, labels: { ...a.labels, ...labels } })) } };
}

/** A DaemonSet case moved to another agent with the same waves: DaemonSet names and the namespace replaced. */
function forNamespace(namespace: string, agent: string): (c: AlertCase) => AlertCase {
  const fix = (s: { series: string; values: string }) => ({
    series: s.series.replace(/daemonset="logs/, `daemonset="${agent}`).replace(/pod="logs/, `pod="${agent}`).replace(`namespace="${NS}"`, `namespace="${namespace}"`),
    values: s.values,
  });
  const label = (labels: Record<string, string>) => ({
    ...labels, namespace, ...(labels.daemonset === undefined ? {} : { daemonset: labels.daemonset.replace(/^logs/, agent) }),
  });
  return (c) => ({
    ...c,
    fire: { ...c.fire, input: c.fire.input.map(fix), alerts: c.fire.alerts.map((a) => ({ ...a, labels: label(a.labels) })) },
    healthy: { ...c.healthy, input: c.healthy.input.map(fix) },
  });
}

test('the alerts guide lists every alert with its expression', () => {
  const readme = fs.readFileSync(path.join(REPO, 'docs', 'gates-watchers-alerts.md'), 'utf8');
  const section = readme;
  const all = [...logCollectorManifests(), ...nodeExporterManifests(), ...gpuDriverManifests()];
  for (const rule of rulesOf(all)) {
    expect(section).toContain(`| \`${rule.alert}\` |`);
    // The metric names of each expression are in its row of the guide.
    const row = section.split('\n').filter((l) => l.startsWith(`| \`${rule.alert}\` |`)).join('\n');
    for (const metric of new Set(rule.expr.match(/\b(kube|fluentbit|node)_[a-z_]+(?=\{)/g) ?? [])) expect(row).toContain(metric as string);
  }
});
