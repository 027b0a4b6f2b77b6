/**
 * Every PromQL expression the library writes or takes is parsed at synthesis with Prometheus's own
 * grammar (@prometheus-io/lezer-promql, generated from prometheus/web/ui/module/lezer-promql), plus
 * the checks Prometheus's parser makes after the grammar (promql/parser/parse.go and lex.go): string
 * escapes (lexEscape: "unknown escape sequence"), regex matchers compiled as RE2
 * (labels.NewFastRegexMatcher: "error parsing regexp"), and a selector without a metric name needing
 * one matcher that does not match the empty string (checkAST: "vector selector must contain at least
 * one non-empty matcher"). The verdicts are cross-checked with the real promtool.
 */
import { Testing } from 'cdk8s';
import {
  AgentAlerts, AlertSeverity, FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeExporterDaemonSet, Promotion,
  RolloutWave, UpdateStrategy,
} from '../../src';
import { promqlProblem, selectorProblem } from '../../src/alerts/promql-parse';
import { ValidationError } from '../../src/validation/errors';
import { describeWithBinaries, PROMTOOL, promtool } from '../util/prometheus-tools';

/** [expression, what Prometheus says: undefined when it parses, else a fragment of our message]. */
const CASES: Array<[string, string | undefined]> = [
  ['up{job="x"}', undefined],
  ['sum by (namespace) (rate(x{a=~"b"}[5m])) > 0', undefined],
  ['min_over_time(node_timex_sync_status{a="b"}[5m]) == 0\nand\nnode_timex_maxerror_seconds{a="b"} >= 16', undefined],
  ['up{job=~"(?i)abc"}', undefined],
  ['up{job=~"(?P<n>a)"}', undefined],
  ['up{job=~"\\\\d+"}', undefined],
  ['up{job=`a\\d`}', undefined],
  ['{a!=""}', undefined],
  ['label_replace(up, "a", "$1", "b", "(.*)")', undefined],
  ['up{job="x"', 'does not parse'],
  ['up{$(HOST_IP)}', 'does not parse'],
  ['up{a b}', 'does not parse'],
  ['rates(x[5m])', 'does not parse'],
  ['sum(up', 'does not parse'],
  ['up and', 'does not parse'],
  ['', 'is empty'],
  ['{}', 'needs a metric name or one matcher that does not match the empty string'],
  ['{a=""}', 'needs a metric name or one matcher that does not match the empty string'],
  ['{a=~".*"}', 'needs a metric name or one matcher that does not match the empty string'],
  ['up{job=~"("}', 'is not an RE2 regular expression'],
  ['up{job=~"a(?=b)"}', 'is not an RE2 regular expression'],
  ['up{job="\\d"}', 'unknown escape sequence \\d'],
];

describe('promqlProblem', () => {
  test.each(CASES)('%j: %p', (expr, problem) => {
    const found = promqlProblem(expr);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });

  test('names the line and column of a syntax error', () => {
    expect(promqlProblem('sum(rate(x[5m]))\n  > on(a) ')).toMatch(/does not parse at line 2, column \d+/);
  });
});

describe('selectorProblem: label matchers without braces, as the selector props take them', () => {
  test.each([
    ['job="kube-state-metrics"', undefined],
    ['job="kube-state-metrics",namespace=~"kube-.*"', undefined],
    ['', undefined],
    ['$(HOST_IP)', 'is not PromQL label matchers'],
    ['a b', 'is not PromQL label matchers'],
    // injection: it parses inside braces only by closing them
    ['job="x"} or vector(1) or up{a="b"', 'is not PromQL label matchers'],
    ['job="\\d"', 'unknown escape sequence'],
  ])('%j', (selector, problem) => {
    const found = selectorProblem(selector);
    if (problem === undefined) expect(found).toBeUndefined();
    else expect(found).toContain(problem);
  });
});

describeWithBinaries('promtool agrees (check rules on each expression)', [PROMTOOL], () => {
  test.each(CASES.filter(([expr]) => expr !== ''))('%j', (expr, problem) => {
    const run = promtool(['check', 'rules', 'rules.yaml'], { 'rules.yaml': { groups: [{ name: 'g', rules: [{ alert: 'A', expr }] }] } });
    expect([expr, run.status === 0]).toEqual([expr, problem === undefined]);
  });
});

function refusal(build: () => unknown): string {
  try {
    build();
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error('did not throw');
}

describe('the props that take PromQL refuse what does not parse, naming the construct, the prop and the value', () => {
  const collector = (props: object) => () => new LogCollectorDaemonSet(Testing.chart(), 'logs', { outputs: [FluentBitOutput.stdout()], ...props });

  test('alerts.kubeStateMetricsSelector "$(HOST_IP)"', () => {
    expect(refusal(collector({ alerts: { kubeStateMetricsSelector: '$(HOST_IP)' } })))
      .toMatch(/^LogCollectorDaemonSet test\/logs: alerts.kubeStateMetricsSelector "\$\(HOST_IP\)" is not PromQL label matchers .*Prometheus does not expand environment variables/s);
  });
  test('alerts.metricsSelector "a b"', () => {
    expect(refusal(collector({ alerts: { metricsSelector: 'a b' } }))).toContain('alerts.metricsSelector "a b" is not PromQL label matchers');
  });
  test('alerts.nodeMixin.filesystemSelector', () => {
    expect(refusal(() => new NodeExporterDaemonSet(Testing.chart(), 'ne', { alerts: { nodeMixin: { filesystemSelector: 'fstype!=""}' } } })))
      .toContain('alerts.nodeMixin.filesystemSelector "fstype!=\\"\\"}" is not PromQL label matchers');
  });

  const gated = (gate: object) => collector({
    rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all(), argoCdSyncWaves: true, gates: [{ afterWave: 'canary', prometheusUrl: 'http://prom:9090', ...gate }] },
  });
  test('a gate check `up{job="x"` (it would always fail closed)', () => {
    expect(refusal(gated({ checks: [{ name: 'up', expr: 'up{job="x"' }] })))
      .toContain('rollout.gates ("canary") checks[0] ("up") expr "up{job=\\"x\\"" does not parse at line 1, column 11');
  });
  test('a gate extraCheck and the gate\'s kubeStateMetricsSelector', () => {
    expect(refusal(gated({ extraChecks: [{ name: 'x', expr: 'rate(x[5m)' }] }))).toContain('rollout.gates ("canary") extraChecks[0] ("x") expr');
    expect(refusal(gated({ kubeStateMetricsSelector: 'job=ksm' }))).toContain('rollout.gates ("canary") kubeStateMetricsSelector "job=ksm" is not PromQL label matchers');
  });
  test('additionalGroups of AgentAlerts', () => {
    const chart = Testing.chart();
    const agent = new NodeAgentDaemonSet(chart, 'agent', { image: 'registry.example.com/agent:1.2.3' });
    const rules = [{ alert: 'Broken', expr: 'up ==', severity: AlertSeverity.WARNING, summary: 's', description: 'd' }];
    expect(refusal(() => new AgentAlerts(chart, 'alerts', { agent, additionalGroups: [{ name: 'mine', rules }] })))
      .toContain('additionalGroups[0].rules[0].expr "up ==" does not parse');
  });
});

test('every expression the agents write parses (alerts of all three agents, node-mixin, gates of every kind)', () => {
  const chart = Testing.chart();
  const rollout = { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all(), argoCdSyncWaves: true, gates: [{ afterWave: 'canary', prometheusUrl: 'http://prom:9090' }] };
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()], alerts: {}, rollout });
  new NodeExporterDaemonSet(chart, 'ne', { alerts: { nodeMixin: {} }, rollout });
  new GpuDriverDaemonSet(chart, 'gpu', { image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', updateStrategy: UpdateStrategy.oneAtATime(), alerts: {}, rollout });
  const manifests = Testing.synth(chart);
  const exprs = [
    ...manifests.filter((m) => m.kind === 'PrometheusRule').flatMap((m) => m.spec.groups.flatMap((g: { rules: { expr: string }[] }) => g.rules.map((r) => r.expr))),
    ...manifests.filter((m) => m.kind === 'Job').flatMap((j) => j.spec.template.spec.containers[0].env.filter((e: { name: string }) => /^CHECK_\d+_EXPR$/.test(e.name)).map((e: { value: string }) => e.value)),
  ];
  expect(exprs.length).toBeGreaterThan(30);
  expect(exprs.filter((e) => promqlProblem(e) !== undefined)).toEqual([]);
});
