/**
 * The stuck signal against the series of whole rollouts, with the real promtool: a healthy 1,000-node rollout at one
 * node every 40 s (maxUnavailable 1: eleven hours, one pod unavailable all along) pages nobody, where
 * NodeAgentPodsUnavailable and NodeAgentRolloutStuck fired within the hour; a stalled one fires
 * NodeAgentRolloutNoProgress; a slow one fires NodeAgentRolloutOverdue past 1.5 × the time estimate gives its pace;
 * a NotReady node's unavailable pod is an info alert, not NodeAgentPodsUnavailable. The overdue expectation is
 * estimate's model: expectedSecondsPromQL evaluated by promtool equals paceOf's batches × cycle.
 */
import { Testing } from 'cdk8s';
import { LogCollectorDaemonSet, FluentBitOutput, NodeExporterDaemonSet, UpdateStrategy } from '../../src';
import { expectedSecondsPromQL, paceOf } from '../../src/rollout/pace';
import { Manifest, synthManifests } from '../util/manifests';
import { describeWithBinaries, promtool, PROMTOOL, ruleFile } from '../util/prometheus-tools';

const KSM = { job: 'kube-state-metrics' };
const NS = 'observability';
const DS = { ...KSM, namespace: NS, daemonset: 'logs' };

function series(name: string, labels: Record<string, string>, values: string): { series: string; values: string } {
  const body = Object.entries(labels).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',');
  return { series: `${name}{${body}}`, values };
}

/** The log collector on every node, one pod at a time (maxUnavailable 1), with its alerts. */
function rules(): Manifest[] {
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'logs',
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })],
    updateStrategy: UpdateStrategy.oneAtATime(),
    alerts: {},
  });
  return synthManifests(chart);
}

/**
 * A rollout of `nodes` nodes starting at minute 1 (the generation changes from 4 to 5), `perMinute` nodes updated
 * each minute until `stallAt` (minutes), one pod unavailable while it rolls; `minutes` of series at 1m.
 */
function rollout(opts: { nodes: number; perMinute: number; minutes: number; stallAt?: number }): Array<{ series: string; values: string }> {
  const updated: number[] = [];
  const unavailable: number[] = [];
  for (let m = 0; m <= opts.minutes; m++) {
    const moving = Math.max(0, m - 1);
    const u = m === 0 ? opts.nodes : Math.min(opts.nodes, Math.floor(Math.min(moving, opts.stallAt ?? Infinity) * opts.perMinute));
    updated.push(u);
    unavailable.push(m > 0 && u < opts.nodes ? 1 : 0);
  }
  return [
    series('kube_daemonset_status_desired_number_scheduled', DS, `${opts.nodes}x${opts.minutes}`),
    series('kube_daemonset_status_current_number_scheduled', DS, `${opts.nodes}x${opts.minutes}`),
    series('kube_daemonset_status_number_misscheduled', DS, `0x${opts.minutes}`),
    series('kube_daemonset_status_updated_number_scheduled', DS, updated.join(' ')),
    series('kube_daemonset_status_number_unavailable', DS, unavailable.join(' ')),
    series('kube_daemonset_metadata_generation', DS, `4 5x${opts.minutes - 1}`),
    series('kube_daemonset_status_observed_generation', DS, `4 5x${opts.minutes - 1}`),
  ];
}

const STUCK = ['NodeAgentRolloutNoProgress', 'NodeAgentRolloutOverdue', 'NodeAgentPodsUnavailable', 'NodeAgentPodsUnavailableOnNotReadyNodes',
  'NodeAgentNotScheduled', 'NodeAgentMisscheduled', 'NodeAgentGenerationMismatch'];

function run(manifests: Manifest[], tests: unknown[]): string {
  const result = promtool(['test', 'rules', 'tests.yaml'], { 'rules.yaml': ruleFile(manifests), 'tests.yaml': { rule_files: ['rules.yaml'], evaluation_interval: '1m', tests } });
  if (result.status !== 0) throw new Error(`promtool test rules failed:\n${result.output}`);
  return result.output;
}

describeWithBinaries(`the stuck signal over whole rollouts (${PROMTOOL})`, [PROMTOOL], () => {
  const manifests = rules();

  test('a healthy 1,000-node rollout at one node per 40 s: nothing fires, from the first hour to the end', () => {
    // 1.5 nodes a minute: 667 minutes; estimate: 1,000 batches of 1 × (30 s + minReadySeconds 10) = 667 minutes, overdue past 1,000
    const input = rollout({ nodes: 1000, perMinute: 1.5, minutes: 700 });
    const at = ['60m', '300m', '600m', '665m', '690m'];
    expect(run(manifests, [{
      interval: '1m',
      input_series: input,
      alert_rule_test: at.flatMap((t) => STUCK.map((alertname) => ({ alertname, eval_time: t, exp_alerts: [] }))),
    }])).toMatch(/SUCCESS/);
  });

  test('a stalled rollout: no progress fires once no pod was updated for the window (30m), for the window; overdue does not yet', () => {
    const input = rollout({ nodes: 1000, perMinute: 1.5, minutes: 300, stallAt: 200 });
    const labels = { alertname: 'NodeAgentRolloutNoProgress', namespace: NS, daemonset: 'logs', severity: 'warning', node_agent: 'logs' };
    const output = run(manifests, [{
      interval: '1m',
      input_series: input,
      alert_rule_test: [
        { alertname: 'NodeAgentRolloutNoProgress', eval_time: '250m', exp_alerts: [] },
        { alertname: 'NodeAgentRolloutNoProgress', eval_time: '270m', exp_alerts: [{ exp_labels: labels, value: '700' }] },
        { alertname: 'NodeAgentRolloutOverdue', eval_time: '270m', exp_alerts: [] },
        { alertname: 'NodeAgentPodsUnavailable', eval_time: '270m', exp_alerts: [] },
      ],
    }].map((t) => withAnnotations(manifests, t)));
    expect(output).toMatch(/SUCCESS/);
  });

  test('a slow rollout (200 nodes, one per 90 s): overdue fires past 1.5 × 200 × 40 s (fluent-bit\'s minReadySeconds 10 + 30 s a pod); no progress does not', () => {
    const input = rollout({ nodes: 200, perMinute: 2 / 3, minutes: 240 });
    const labels = { alertname: 'NodeAgentRolloutOverdue', namespace: NS, daemonset: 'logs', severity: 'warning', node_agent: 'logs' };
    const output = run(manifests, [{
      interval: '1m',
      input_series: input,
      alert_rule_test: [
        { alertname: 'NodeAgentRolloutOverdue', eval_time: '195m', exp_alerts: [] },
        { alertname: 'NodeAgentRolloutOverdue', eval_time: '215m', exp_alerts: [{ exp_labels: labels }] },
        { alertname: 'NodeAgentRolloutNoProgress', eval_time: '215m', exp_alerts: [] },
      ],
    }].map((t) => withAnnotations(manifests, t)));
    expect(output).toMatch(/SUCCESS/);
  });

  test('an unavailable pod on a NotReady node, no rollout: the info alert names the node; NodeAgentPodsUnavailable stays silent', () => {
    const pod = { ...KSM, namespace: NS, pod: 'logs-ab12c' };
    const input = [
      ...rollout({ nodes: 3, perMinute: 3, minutes: 40 }).filter((s) => !s.series.startsWith('kube_daemonset_status_number_unavailable')),
      series('kube_daemonset_status_number_unavailable', DS, '1x40'),
      series('kube_pod_info', { ...pod, node: 'worker-b-2', host_ip: '10.0.0.9' }, '1x40'),
      series('kube_pod_status_ready', { ...pod, condition: 'true' }, '0x40'),
      series('kube_node_status_condition', { ...KSM, node: 'worker-b-2', condition: 'Ready', status: 'true' }, '0x40'),
    ];
    const labels = { alertname: 'NodeAgentPodsUnavailableOnNotReadyNodes', namespace: NS, node: 'worker-b-2', severity: 'info', node_agent: 'logs' };
    const output = run(manifests, [{
      interval: '1m',
      input_series: input,
      alert_rule_test: [
        { alertname: 'NodeAgentPodsUnavailableOnNotReadyNodes', eval_time: '30m', exp_alerts: [{ exp_labels: labels }] },
        { alertname: 'NodeAgentPodsUnavailable', eval_time: '30m', exp_alerts: [] },
      ],
    }].map((t) => withAnnotations(manifests, t)));
    expect(output).toMatch(/SUCCESS/);
  });

  test('the overdue expectation is estimate\'s: ceil(desired / batch) × cycle, evaluated by promtool for several paces and sizes', () => {
    const cases: Array<[UpdateStrategyJson, number, number]> = [];
    const strategies: UpdateStrategyJson[] = [
      { type: 'RollingUpdate', maxUnavailable: 1, maxSurge: 0 },
      { type: 'RollingUpdate', maxUnavailable: '25%', maxSurge: 0 },
      { type: 'RollingUpdate', maxUnavailable: 0, maxSurge: '10%' },
      { type: 'RollingUpdate', maxUnavailable: 3 },
    ];
    for (const s of strategies) for (const n of [1, 7, 40, 1000]) cases.push([s, n, 5]);
    const tests = cases.map(([strategy, desired, minReady]) => {
      const pace = paceOf(strategy, desired);
      const seconds = pace.type === 'OnDelete' ? 0 : Math.ceil(desired / pace.batch) * (30 + minReady);
      return {
        interval: '1m',
        input_series: [series('desired', {}, `${desired}x5`)],
        promql_expr_test: [{ expr: expectedSecondsPromQL(strategy, minReady, 'desired')!, eval_time: '1m', exp_samples: [{ labels: '{}', value: seconds }] }],
      };
    });
    const result = promtool(['test', 'rules', 'tests.yaml'], { 'rules.yaml': { groups: [] }, 'tests.yaml': { rule_files: ['rules.yaml'], evaluation_interval: '1m', tests } });
    if (result.status !== 0) throw new Error(result.output);
    expect(expectedSecondsPromQL({ type: 'OnDelete' }, 0, 'desired')).toBeUndefined();
  });
});

type UpdateStrategyJson = Parameters<typeof paceOf>[0];

/** Fills each expected alert's annotations from its rule, with $labels and $value left to the rule's own text: promtool wants them exact. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function withAnnotations(manifests: Manifest[], test: any): any {
  const rulesByName = new Map(ruleFile(manifests).groups.flatMap((g: Manifest) => g.rules).map((r: Manifest) => [r.alert, r]));
  return {
    ...test,
    alert_rule_test: test.alert_rule_test.map((t: any) => ({
      ...t,
      exp_alerts: t.exp_alerts.map((a: any) => {
        const rule = rulesByName.get(t.alertname)!;
        const labels = a.exp_labels;
        return { exp_labels: labels, exp_annotations: annotationsFor(rule, labels, a.value) };
      }),
    })),
  };
}

/** The rule's annotations as Alertmanager expands them: {{ $labels.x }} and {{ $value }}. */
function annotationsFor(rule: Manifest, labels: Record<string, string>, value?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(rule.annotations as Record<string, string>)) {
    out[k] = v.replace(/\{\{\s*\$labels\.([a-z_]+)\s*\}\}/g, (_, l: string) => labels[l]).replace(/\{\{\s*\$value\s*\}\}/g, value ?? '?');
  }
  return out;
}

test('alerts.rolloutPodSeconds below a second is refused naming the construct and the prop (the fuzz found -1 reaching estimate\'s own check)', () => {
  const chart = Testing.chart();
  expect(() => new NodeExporterDaemonSet(chart, 'exporter', { alerts: { rolloutPodSeconds: -1 } }))
    .toThrow(/^NodeExporterDaemonSet test\/exporter: alerts\.rolloutPodSeconds -1 must be a number from 1 to 86400/);
});
