/**
 * The alerting rules of each agent kind, as plain data. Pure module (no cdk8s): the AgentAlerts
 * construct renders them into a PrometheusRule.
 *
 * DaemonSet alerts come from kube-state-metrics and are summed over every DaemonSet of the agent
 * (`<agent>` for the fleet, `<agent>-<wave>` for each wave), so one agent raises one alert whatever
 * its waves, and a wave's DaemonSet is never outside the selector.
 */
import {
  AgentAlertsOptions, AlertRule, AlertRuleGroup, AlertSeverity, GpuDriverAlertsOptions, LogCollectorAlertsOptions,
  NodeExporterAlertsOptions, NodeMixinAlertsOptions,
} from './options';
import {
  checkDuration, checkNumber, daemonSetNameRegex, eq, kubeStateMetricsLabel, matchers, podNameRegex, promString, re, regexLiteral,
} from './promql';
import { checkSelector } from './promql-parse';
import { NodeSelectorRequirementJson } from '../scheduling/types';
import { RefusedBy, ValidationError } from '../validation/errors';

/** The agent the rules watch. */
export interface AlertTarget {
  /** The agent's name: the fleet DaemonSet's name. */
  readonly agent: string;
  /** The agent's namespace. */
  readonly namespace: string;
  /** The names of its rollout waves (each a `<agent>-<wave>` DaemonSet). */
  readonly waves: readonly string[];
  /** The names of its resource profiles (`<agent>-<profile>` and `<agent>-<profile>-<wave>` DaemonSets). */
  readonly profiles?: readonly string[];
  /** The construct that refuses a bad option (see ValidationError). */
  readonly by: RefusedBy;
  /**
   * The expected rollout time of each DaemonSet that rolls by itself, as PromQL of its desired count (estimate's
   * model, estimate.ts expectedSecondsPromQL), for NodeAgentRolloutOverdue. @default - no overdue alert
   */
  readonly expectedSeconds?: ReadonlyArray<{ readonly daemonSet: string; readonly expr: (desired: string) => string }>;
}

export const DEFAULT_KUBE_STATE_METRICS_SELECTOR = 'job="kube-state-metrics"';
/**
 * Collectors that have data on every Linux node. node_exporter reports
 * `node_scrape_collector_success 0` also for a collector with nothing to read (no bonding, NFS,
 * InfiniBand or RAID on the node), so only these are watched by default.
 */
export const ALWAYS_PRESENT_COLLECTORS = ['cpu', 'diskstats', 'filesystem', 'loadavg', 'meminfo', 'netdev', 'stat', 'time', 'uname', 'vmstat'];

export const DEFAULT_RUNBOOK_URL = 'https://github.com/maintainers/cdk8s-node-agents/blob/main/README.md#alerts-and-wave-gates';

/** Selectors every rule of an agent uses. */
export interface TargetSelectors {
  /** kube-state-metrics series of the agent's DaemonSets. */
  readonly daemonSets: string;
  /** kube-state-metrics series of the agent's pods. */
  readonly pods: string;
  /** The agent's own metrics (its pods' scrapes). */
  readonly metrics: string;
  /** The DaemonSet names, for descriptions. */
  readonly daemonSetNames: string;
}

export function targetSelectors(target: AlertTarget, options: AgentAlertsOptions): TargetSelectors {
  checkSelector(options.kubeStateMetricsSelector, 'alerts.kubeStateMetricsSelector', target.by);
  checkSelector(options.metricsSelector, 'alerts.metricsSelector', target.by);
  const ksm = options.kubeStateMetricsSelector ?? DEFAULT_KUBE_STATE_METRICS_SELECTOR;
  const dsRegex = daemonSetNameRegex(target.agent, target.waves, target.profiles);
  const podRegex = podNameRegex(dsRegex);
  const prefixes = [target.agent, ...(target.profiles ?? []).map((p) => `${target.agent}-${p}`)];
  const names = prefixes.flatMap((prefix) => [prefix, ...target.waves.map((w) => `${prefix}-${w}`)]);
  return {
    daemonSets: matchers(ksm, eq('namespace', target.namespace), re('daemonset', dsRegex)),
    pods: matchers(ksm, eq('namespace', target.namespace), re('pod', podRegex)),
    metrics: options.metricsSelector ?? matchers(eq('namespace', target.namespace), re('pod', podRegex)),
    daemonSetNames: names.join(', '),
  };
}

/** The DaemonSet alerts every agent gets (kube-state-metrics). */
export function daemonSetAlertGroup(target: AlertTarget, options: AgentAlertsOptions, defaults: { rolloutStuckFor?: string } = {}): AlertRuleGroup {
  const w = target.by;
  const s = targetSelectors(target, options);
  const ds = s.daemonSets;
  const of = `agent ${target.namespace}/${target.agent} (DaemonSets ${s.daemonSetNames})`;
  const sum = (metric: string) => `sum by (namespace) (${metric}{${ds}})`;
  const rules: AlertRule[] = [
    {
      alert: 'NodeAgentMissing',
      expr: `absent(kube_daemonset_metadata_generation{${ds}})`,
      forDuration: duration(options.missingFor, '15m', 'alerts.missingFor', w),
      severity: AlertSeverity.CRITICAL,
      summary: `No DaemonSet of node agent ${target.agent} exists.`,
      description: `kube-state-metrics reports none of the DaemonSets of ${of}: no node runs the agent (or kube-state-metrics is not scraped).`,
    },
    {
      alert: 'NodeAgentNotScheduled',
      expr: `${sum('kube_daemonset_status_desired_number_scheduled')} - ${sum('kube_daemonset_status_current_number_scheduled')} > 0`,
      forDuration: duration(options.notScheduledFor, '10m', 'alerts.notScheduledFor', w),
      severity: AlertSeverity.WARNING,
      summary: `Nodes that should run node agent ${target.agent} have no pod of it.`,
      description: `{{ $value }} node(s) that ${of} should cover run no pod of it.`,
    },
    {
      alert: 'NodeAgentMisscheduled',
      expr: `${sum('kube_daemonset_status_number_misscheduled')} > 0`,
      forDuration: duration(options.misscheduledFor, '15m', 'alerts.misscheduledFor', w),
      severity: AlertSeverity.WARNING,
      summary: `Node agent ${target.agent} runs pods on nodes it should not cover.`,
      description: `{{ $value }} pod(s) of ${of} run on nodes outside their DaemonSet's node selection.`,
    },
    ...stuckRules(target, options, s, defaults),
    {
      alert: 'NodeAgentGenerationMismatch',
      expr: `count by (namespace) (kube_daemonset_status_observed_generation{${ds}} != kube_daemonset_metadata_generation{${ds}}) > 0`,
      forDuration: duration(options.generationMismatchFor, '15m', 'alerts.generationMismatchFor', w),
      severity: AlertSeverity.WARNING,
      summary: `The DaemonSet controller has not acted on a change of node agent ${target.agent}.`,
      description: `{{ $value }} DaemonSet(s) of ${of} have a spec generation their controller has not observed.`,
    },
  ];
  return { name: `${target.agent}.daemonsets`, rules };
}

/**
 * The stuck signal, in three parts, so that a healthy rollout pages nobody (kubernetes-mixin added a progress term to
 * KubeDaemonSetRolloutStuck for the same reason): no progress (a DaemonSet's updated count unchanged over a window
 * while its rollout is incomplete), overdue (a DaemonSet still incomplete longer after its last spec change than
 * `rolloutOverdueFactor` × the time estimate gives its pace), and pods unavailable, split between Ready nodes (a
 * warning, outside a rollout: during one the budget allows them) and NotReady nodes (info: the node is the problem).
 * Per DaemonSet (`namespace`, `daemonset` labels, as kube-state-metrics' and kubernetes-mixin's KubeDaemonSet* alerts
 * carry them, so an Alertmanager inhibition can match them).
 */
function stuckRules(target: AlertTarget, options: AgentAlertsOptions, s: TargetSelectors, defaults: { rolloutStuckFor?: string }): AlertRule[] {
  const w = target.by;
  const ds = s.daemonSets;
  const ksm = options.kubeStateMetricsSelector ?? DEFAULT_KUBE_STATE_METRICS_SELECTOR;
  const of = `agent ${target.namespace}/${target.agent}`;
  const perDs = (metric: string) => `max by (namespace, daemonset) (${metric}{${ds}})`;
  const incomplete = `${perDs('kube_daemonset_status_desired_number_scheduled')} - ${perDs('kube_daemonset_status_updated_number_scheduled')} > 0`;
  const window = duration(options.rolloutStuckFor, defaults.rolloutStuckFor ?? '30m', 'alerts.rolloutStuckFor', w);
  const maxUnavailable = checkNumber(options.maxUnavailablePods ?? 0, 'alerts.maxUnavailablePods', w);
  if (!Number.isInteger(maxUnavailable)) throw new ValidationError(w, `alerts.maxUnavailablePods ${maxUnavailable} must be a whole number`);
  const factor = checkNumber(options.rolloutOverdueFactor ?? 1.5, 'alerts.rolloutOverdueFactor', w);
  if (factor < 1) throw new ValidationError(w, `alerts.rolloutOverdueFactor ${factor} must be at least 1 (a multiple of the expected rollout time)`);
  // a node of the agent that is NotReady: its pods are unavailable because of the node
  const notReadyNodes = `max by (node) (kube_node_status_condition{${matchers(ksm, 'condition="Ready"', 'status="true"')}}) == 0`;
  const podNode = `max by (namespace, pod, node) (kube_pod_info{${s.pods}})`;
  const unreadyPods = `(max by (namespace, pod) (kube_pod_status_ready{${matchers(s.pods, 'condition="true"')}}) == 0) * on (namespace, pod) group_left (node) ${podNode}`;
  const onNotReady = `count by (namespace) (${podNode} * on (node) group_left () (${notReadyNodes}))`;
  const sum = (metric: string) => `sum by (namespace) (${metric}{${ds}})`;
  const rules: AlertRule[] = [
    {
      alert: 'NodeAgentPodsUnavailable',
      expr: `${sum('kube_daemonset_status_number_unavailable')} - (${onNotReady} or ${sum('kube_daemonset_status_number_unavailable')} * 0) > ${maxUnavailable}`
        + ` unless on (namespace) (${sum('kube_daemonset_status_desired_number_scheduled')} - ${sum('kube_daemonset_status_updated_number_scheduled')} > 0)`,
      forDuration: duration(options.unavailableFor, '15m', 'alerts.unavailableFor', w),
      severity: AlertSeverity.WARNING,
      summary: `Pods of node agent ${target.agent} are unavailable on Ready nodes.`,
      description: `{{ $value }} pod(s) of ${of} (DaemonSets ${s.daemonSetNames}) are unavailable on nodes that are Ready, with no rollout in progress (a rollout's own unavailable pods are its budget; NodeAgentRolloutNoProgress and NodeAgentRolloutOverdue cover it).`,
    },
    {
      alert: 'NodeAgentPodsUnavailableOnNotReadyNodes',
      expr: `count by (namespace, node) (${unreadyPods} * on (node) group_left () (${notReadyNodes})) > 0`,
      forDuration: duration(options.unavailableFor, '15m', 'alerts.unavailableFor', w),
      severity: AlertSeverity.INFO,
      summary: `Node agent ${target.agent} is unavailable on a NotReady node.`,
      description: `The pod of ${of} on node {{ $labels.node }} is not ready, and the node is NotReady: bring the node back or remove it; the agent is not the cause.`,
    },
    {
      alert: 'NodeAgentRolloutNoProgress',
      expr: `(${incomplete}) and on (namespace, daemonset) (max by (namespace, daemonset) (changes(kube_daemonset_status_updated_number_scheduled{${ds}}[${window}])) == 0)`,
      // for the window too: a series younger than the window (a new Prometheus) shows no change without being stuck
      forDuration: window,
      severity: AlertSeverity.WARNING,
      summary: `The rollout of node agent ${target.agent} makes no progress.`,
      description: `DaemonSet {{ $labels.namespace }}/{{ $labels.daemonset }} of ${of} has {{ $value }} pod(s) on an outdated template, and no pod was updated for ${window}: the rollout is stuck (\`node-agents doctor\` tells why).`,
    },
  ];
  const expected = target.expectedSeconds ?? [];
  if (expected.length > 0) {
    const desired = (name: string) => `max by (namespace, daemonset) (kube_daemonset_status_desired_number_scheduled{${matchers(ksm, eq('namespace', target.namespace), eq('daemonset', name))}})`;
    const expectation = expected.map((e) => `(${e.expr(desired(e.daemonSet))})`).join(' or ');
    const changedAt = `max by (namespace, daemonset) (max_over_time(timestamp(changes(kube_daemonset_metadata_generation{${ds}}[5m]) > 0)[1d:1m]))`;
    rules.push({
      alert: 'NodeAgentRolloutOverdue',
      expr: `(time() - ${changedAt} > ${factor} * (${expectation})) and on (namespace, daemonset) (${incomplete})`,
      forDuration: '5m',
      severity: AlertSeverity.WARNING,
      summary: `The rollout of node agent ${target.agent} takes longer than its pace allows.`,
      description: `DaemonSet {{ $labels.namespace }}/{{ $labels.daemonset }} of ${of} is still rolling longer after its spec changed than ${factor} × the time its update pace gives (\`node-agents estimate\`'s model): pods are slow to start, or stuck (\`node-agents doctor\`).`,
    });
  }
  return rules;
}

/** Sums per collector pod and plugin instance (`name`, the alias). */
const PER_PLUGIN = 'sum by (namespace, pod, node, name)';

/** What the collector's config says that its alerts depend on. */
export interface LogCollectorAlertFacts {
  /** How many outputs the collector has. */
  readonly outputs: number;
  /** The lowest `storage.max_chunks_up` of the collector and its resource profiles. */
  readonly maxChunksUp: number;
}

/**
 * fluent-bit's output and input metrics, per collector pod and plugin instance (`name` is the
 * alias), with the names fluent-bit 5.1.1 (as 4.x) registers in src/flb_input.c and src/flb_output.c
 * and serves on /api/v2/metrics/prometheus (the
 * v1 endpoint has no `chunk_available_capacity_percent`). That gauge is
 * 100 × (1 − filesystem chunks / `storage.total_limit_size`) and stays 100 for an output without a
 * limit; every output here has one (`storageTotalLimitSize`, default 1G).
 */
export function logCollectorAlertGroup(target: AlertTarget, options: LogCollectorAlertsOptions, facts: LogCollectorAlertFacts): AlertRuleGroup {
  const w = target.by;
  const m = targetSelectors(target, options).metrics;
  const by = PER_PLUGIN;
  const lossWindow = duration(options.lossWindow, '5m', 'alerts.lossWindow', w);
  const errorsPerSecond = checkNumber(options.outputErrorsPerSecond ?? 0, 'alerts.outputErrorsPerSecond', w);
  const bufferPercent = checkNumber(options.bufferAvailablePercent ?? 20, 'alerts.bufferAvailablePercent', w, 0, 100);
  const stalledFor = duration(options.inputStalledFor, '30m', 'alerts.inputStalledFor', w);
  const outputStalledFor = duration(options.outputStalledFor, '10m', 'alerts.outputStalledFor', w);
  const inputs = options.stalledInputs ?? ['tail_containers'];
  const where = `${target.namespace}/{{ $labels.pod }} on node {{ $labels.node }}`;
  const rules: AlertRule[] = [
    {
      alert: 'LogCollectorOutputRetriesFailed',
      expr: `${by} (increase(fluentbit_output_retries_failed_total{${m}}[${lossWindow}])) > 0`,
      severity: AlertSeverity.CRITICAL,
      summary: 'A log collector gave up flushes after their last retry: logs were lost.',
      // fluentbit_output_retries_failed_total: flushes (a chunk to one output) whose retries ran out
      // (Retry_Limit) or that could not be dispatched; their records are dropped (src/flb_engine.c
      // handle_output_event, src/flb_engine_dispatch.c).
      description: `Output {{ $labels.name }} of log collector ${where} gave up {{ $value }} flush(es) in ${lossWindow} after their last retry (Retry_Limit reached); their records were dropped.`,
    },
    {
      alert: 'LogCollectorRecordsDropped',
      expr: `${by} (increase(fluentbit_output_dropped_records_total{${m}}[${lossWindow}])) > 0`,
      severity: AlertSeverity.CRITICAL,
      summary: 'A log collector dropped records: logs were lost.',
      // fluentbit_output_dropped_records_total: records of flushes the output refused (FLB_ERROR),
      // gave up after their last retry or was not to retry, and of chunks evicted to stay under
      // storage.total_limit_size (src/flb_engine.c, src/flb_input_chunk.c).
      description: `Output {{ $labels.name }} of log collector ${where} dropped {{ $value }} record(s) in ${lossWindow}: `
        + 'refused by the destination, out of retries, or evicted from a full filesystem buffer.',
    },
    {
      alert: 'LogCollectorOutputErrors',
      expr: `${by} (rate(fluentbit_output_errors_total{${m}}[5m])) > ${errorsPerSecond}`,
      forDuration: duration(options.outputErrorsFor, '15m', 'alerts.outputErrorsFor', w),
      severity: AlertSeverity.WARNING,
      summary: 'A log collector output keeps refusing flushes: their records are dropped.',
      // fluentbit_output_errors_total: flushes the output plugin ended with FLB_ERROR (e.g. out_loki
      // on a 400), which are not retried: their records are dropped and counted in
      // fluentbit_output_dropped_records_total (src/flb_engine.c, handle_output_event). Measured with
      // Loki answering 400: errors 180, dropped records 9,002, retries 0.
      description: `Output {{ $labels.name }} of log collector ${where} has {{ $value }} flush(es) per second refused by the destination; `
        + 'their records are dropped, not retried.',
    },
    {
      // An outage of the destination: out_loki, out_http, out_es and the others answer a refused
      // connection or a 5xx with FLB_RETRY, and out_loki every status but 400 and 2xx, a bad
      // credential's 401 or 403 included, so only fluentbit_output_retries_total (retries
      // scheduled, one per failed flush) rises while fluentbit_output_proc_records_total (records
      // of flushes that returned FLB_OK) stands still. An idle output (nothing to send) has neither
      // and stays silent; a destination that accepts some records between retries is not stalled;
      // once it delivers again this clears, and LogCollectorBacklog stays on while chunks wait.
      alert: 'LogCollectorOutputStalled',
      expr: `${by} (increase(fluentbit_output_retries_total{${m}}[5m])) > 0`
        + ` unless on (namespace, pod, name) ${by} (increase(fluentbit_output_proc_records_total{${m}}[5m])) > 0`,
      forDuration: outputStalledFor,
      severity: AlertSeverity.WARNING,
      summary: 'A log collector output keeps retrying and delivers nothing: logs wait in the buffer.',
      description: `Output {{ $labels.name }} of log collector ${where} retried {{ $value }} flush(es) in 5m and delivered no record `
        + '(the destination down, answering 5xx, or refusing the credential); chunks wait in the filesystem buffer until it takes them, '
        + 'the oldest dropped once storage.total_limit_size is reached.',
    },
    ...(facts.outputs < 2 ? [] : [outputStarvedRule(m, facts.maxChunksUp, duration(options.outputStarvedFor, '10m', 'alerts.outputStarvedFor', w), where)]),
    {
      // Chunks waiting for delivery: a chunk is busy from its flush until every output has it
      // (src/flb_storage.c counts ic->busy per input), including while it waits for a retry. A
      // healthy collector's chunk is busy for one flush (milliseconds), so busy at every scrape for
      // 5 minutes is a backlog. Unlike LogCollectorOutputStalled it stays on after the destination
      // is back while the backlog waits for its retries (up to schedulerCapSeconds each).
      alert: 'LogCollectorBacklog',
      expr: `min by (namespace, pod, node, name) (min_over_time(fluentbit_input_storage_chunks_busy{${m}}[5m])) > 0`,
      forDuration: duration(options.backlogFor, '10m', 'alerts.backlogFor', w),
      severity: AlertSeverity.WARNING,
      summary: 'A log collector has logs waiting for delivery.',
      description: `Input {{ $labels.name }} of log collector ${where} has had at least {{ $value }} chunk(s) waiting for delivery at every scrape for 5m; `
        + 'they go out once the destination takes them and their next retry comes (at most schedulerCapSeconds later).',
    },
    {
      alert: 'LogCollectorBufferNearFull',
      expr: `min by (namespace, pod, node, name) (fluentbit_output_chunk_available_capacity_percent{${m}}) < ${bufferPercent}`,
      forDuration: duration(options.bufferFor, '10m', 'alerts.bufferFor', w),
      severity: AlertSeverity.WARNING,
      summary: 'A log collector\'s filesystem buffer is nearly full.',
      description: `Output {{ $labels.name }} of log collector ${where} has {{ $value }}% of its storage.total_limit_size left; when it is full the oldest chunks are dropped.`,
    },
    {
      alert: 'LogCollectorInputStalled',
      expr: `${by} (rate(fluentbit_input_records_total{${matchers(m, re('name', inputs.map(regexLiteral).join('|')))}}[${stalledFor}])) == 0`
        + ` and on (namespace, pod) (up{${m}} == 1)`,
      forDuration: '5m',
      severity: AlertSeverity.WARNING,
      summary: 'A log collector input stopped reading while the collector runs.',
      description: `Input {{ $labels.name }} of log collector ${where} read no record for ${stalledFor} although the collector is up.`,
    },
  ];
  if (inputs.length === 0) rules.pop();
  return { name: `${target.agent}.fluent-bit`, rules };
}

/**
 * An output starved by another: it delivers nothing and retries nothing (it is given nothing to send)
 * while the collector holds storage.max_chunks_up chunks in memory. fluent-bit flushes a chunk only
 * once it is brought up, which fails at the limit (5.1.1 src/flb_input_chunk.c, flb_input_chunk_flush;
 * src/flb_engine_dispatch.c, flb_engine_dispatch), and a chunk routed to two outputs stays up while
 * either retries it (src/flb_task.c, flb_task_retry_create). Measured without the collector's retry
 * put-down: Loki answering 204 received nothing more once a second output answering 401 held the 64
 * chunks, and neither its retries nor its records moved. The limit is the lowest of the collector's
 * and its profiles' (a pod with a higher one is starved later than this says, never earlier).
 */
function outputStarvedRule(m: string, maxChunksUp: number, forDuration: string, collector: string): AlertRule {
  return {
    alert: 'LogCollectorOutputStarved',
    expr: `(${PER_PLUGIN} (increase(fluentbit_output_proc_records_total{${m}}[5m])) == 0`
      + ` unless on (namespace, pod, name) ${PER_PLUGIN} (increase(fluentbit_output_retries_total{${m}}[5m])) > 0)`
      + ` and on (namespace, pod) sum by (namespace, pod) (fluentbit_input_storage_chunks_up{${m}}) >= ${maxChunksUp}`,
    forDuration,
    severity: AlertSeverity.WARNING,
    summary: 'A log collector output gets nothing to send: another output\'s retries hold every chunk in memory.',
    description: `Output {{ $labels.name }} of log collector ${collector} delivered and retried nothing for 5m while the collector held `
      + `${maxChunksUp} chunks in memory (storage.max_chunks_up): no new chunk can be flushed to it. Another output keeps retrying `
      + '(see LogCollectorOutputStalled); its chunks must go to disk (Mem_Buf_Limit on the inputs, which the collector renders with two outputs or more).',
  };
}

/** node_exporter's own health, per node. */
export function nodeExporterAlertGroups(target: AlertTarget, options: NodeExporterAlertsOptions): AlertRuleGroup[] {
  const w = target.by;
  const m = targetSelectors(target, options).metrics;
  const collectors = options.watchedCollectors ?? ALWAYS_PRESENT_COLLECTORS;
  if (collectors.length === 0) throw new ValidationError(w, 'alerts.watchedCollectors is empty; leave it unset for the default list');
  const groups: AlertRuleGroup[] = [{
    name: `${target.agent}.node-exporter`,
    rules: [
      {
        alert: 'NodeExporterDown',
        expr: `up{${m}} == 0`,
        forDuration: duration(options.targetDownFor, '5m', 'alerts.targetDownFor', w),
        severity: AlertSeverity.WARNING,
        summary: 'Prometheus cannot scrape node_exporter on a node.',
        description: `node_exporter ${target.namespace}/{{ $labels.pod }} on node {{ $labels.instance }} fails its scrape: the node's metrics (and alerts on them) are missing.`,
      },
      {
        alert: 'NodeExporterTextfileScrapeError',
        expr: `node_textfile_scrape_error{${m}} == 1`,
        severity: AlertSeverity.WARNING,
        summary: 'node_exporter\'s textfile collector cannot read a metrics file.',
        description: 'The textfile collector of node_exporter on node {{ $labels.instance }} failed to read or parse a *.prom file.',
      },
      {
        alert: 'NodeExporterCollectorFailed',
        expr: `node_scrape_collector_success{${matchers(m, re('collector', collectors.map(regexLiteral).join('|')))}} == 0`,
        forDuration: duration(options.collectorFailedFor, '15m', 'alerts.collectorFailedFor', w),
        severity: AlertSeverity.WARNING,
        summary: 'A node_exporter collector fails.',
        description: 'Collector {{ $labels.collector }} of node_exporter on node {{ $labels.instance }} fails on every scrape; its metrics are missing.',
      },
    ],
  }];
  if (options.nodeMixin) groups.push(nodeMixinAlertGroup(target, m, options.nodeMixin));
  return groups;
}

/**
 * The filesystem and clock alerts of node-mixin (prometheus/node_exporter docs/node-mixin), with
 * the same expressions, `for` durations and severities; the selector is the agent's instead of
 * `job="node"`.
 */
export function nodeMixinAlertGroup(target: AlertTarget, exporterSelector: string, o: NodeMixinAlertsOptions): AlertRuleGroup {
  const w = target.by;
  checkSelector(o.filesystemSelector, 'alerts.nodeMixin.filesystemSelector', w);
  const fs = matchers(exporterSelector, o.filesystemSelector ?? 'fstype!="",mountpoint!=""');
  const pct = (v: number | undefined, d: number, prop: string) => checkNumber(v ?? d, `alerts.nodeMixin.${prop}`, w, 0, 100);
  const skew = checkNumber(o.clockSkewSeconds ?? 0.05, 'alerts.nodeMixin.clockSkewSeconds', w);
  const spaceWarn = pct(o.spaceFillingUpWarningPercent, 40, 'spaceFillingUpWarningPercent');
  const spaceCrit = pct(o.spaceFillingUpCriticalPercent, 20, 'spaceFillingUpCriticalPercent');
  const availWarn = pct(o.spaceAvailableWarningPercent, 5, 'spaceAvailableWarningPercent');
  const availCrit = pct(o.spaceAvailableCriticalPercent, 3, 'spaceAvailableCriticalPercent');
  const filesWarn = pct(o.filesFillingUpWarningPercent, 40, 'filesFillingUpWarningPercent');
  const filesCrit = pct(o.filesFillingUpCriticalPercent, 20, 'filesFillingUpCriticalPercent');
  const filesAvailWarn = pct(o.filesAvailableWarningPercent, 5, 'filesAvailableWarningPercent');
  const filesAvailCrit = pct(o.filesAvailableCriticalPercent, 3, 'filesAvailableCriticalPercent');
  const fsLevels: FilesystemLevels = { spaceWarn, spaceCrit, availWarn, availCrit, filesWarn, filesCrit, filesAvailWarn, filesAvailCrit };
  const rules: AlertRule[] = [...filesystemRules(fs, fsLevels), ...clockRules(exporterSelector, skew)];
  return { name: `${target.agent}.node-mixin`, rules };
}

/** The thresholds (percent) of node-mixin's filesystem alerts. */
interface FilesystemLevels {
  readonly spaceWarn: number;
  readonly spaceCrit: number;
  readonly availWarn: number;
  readonly availCrit: number;
  readonly filesWarn: number;
  readonly filesCrit: number;
  readonly filesAvailWarn: number;
  readonly filesAvailCrit: number;
}

/** node-mixin's space and inode alerts on the filesystems `fs` selects. */
function filesystemRules(fs: string, l: FilesystemLevels): AlertRule[] {
  const { spaceWarn, spaceCrit, availWarn, availCrit, filesWarn, filesCrit, filesAvailWarn, filesAvailCrit } = l;
  const fillingUp = (free: string, total: string, percent: number, hours: number) => [
    '(',
    `  ${free}{${fs}} / ${total}{${fs}} * 100 < ${percent}`,
    'and',
    `  predict_linear(${free}{${fs}}[6h], ${hours}*60*60) < 0`,
    'and',
    `  node_filesystem_readonly{${fs}} == 0`,
    ')',
  ].join('\n');
  const almostOut = (free: string, total: string, percent: number) => [
    '(',
    `  ${free}{${fs}} / ${total}{${fs}} * 100 < ${percent}`,
    'and',
    `  node_filesystem_readonly{${fs}} == 0`,
    ')',
  ].join('\n');
  const on = 'on {{ $labels.device }} at {{ $labels.instance }}';
  const space = ['node_filesystem_avail_bytes', 'node_filesystem_size_bytes'] as const;
  const files = ['node_filesystem_files_free', 'node_filesystem_files'] as const;
  return [
    {
      alert: 'NodeFilesystemSpaceFillingUp',
      expr: fillingUp(space[0], space[1], spaceWarn, 24),
      forDuration: '1h',
      severity: AlertSeverity.WARNING,
      summary: 'Filesystem is predicted to run out of space within the next 24 hours.',
      description: `Filesystem ${on} has only {{ printf "%.2f" $value }}% available space left and is filling up.`,
    },
    {
      alert: 'NodeFilesystemSpaceFillingUp',
      expr: fillingUp(space[0], space[1], spaceCrit, 4),
      forDuration: '1h',
      severity: AlertSeverity.CRITICAL,
      summary: 'Filesystem is predicted to run out of space within the next 4 hours.',
      description: `Filesystem ${on} has only {{ printf "%.2f" $value }}% available space left and is filling up fast.`,
    },
    {
      alert: 'NodeFilesystemAlmostOutOfSpace',
      expr: almostOut(space[0], space[1], availWarn),
      forDuration: '30m',
      severity: AlertSeverity.WARNING,
      summary: `Filesystem has less than ${availWarn}% space left.`,
      description: `Filesystem ${on} has only {{ printf "%.2f" $value }}% available space left.`,
    },
    {
      alert: 'NodeFilesystemAlmostOutOfSpace',
      expr: almostOut(space[0], space[1], availCrit),
      forDuration: '30m',
      severity: AlertSeverity.CRITICAL,
      summary: `Filesystem has less than ${availCrit}% space left.`,
      description: `Filesystem ${on} has only {{ printf "%.2f" $value }}% available space left.`,
    },
    {
      alert: 'NodeFilesystemFilesFillingUp',
      expr: fillingUp(files[0], files[1], filesWarn, 24),
      forDuration: '1h',
      severity: AlertSeverity.WARNING,
      summary: 'Filesystem is predicted to run out of inodes within the next 24 hours.',
      description: `Filesystem ${on} has only {{ printf "%.2f" $value }}% available inodes left and is filling up.`,
    },
    {
      alert: 'NodeFilesystemFilesFillingUp',
      expr: fillingUp(files[0], files[1], filesCrit, 4),
      forDuration: '1h',
      severity: AlertSeverity.CRITICAL,
      summary: 'Filesystem is predicted to run out of inodes within the next 4 hours.',
      description: `Filesystem ${on} has only {{ printf "%.2f" $value }}% available inodes left and is filling up fast.`,
    },
    {
      alert: 'NodeFilesystemAlmostOutOfFiles',
      expr: almostOut(files[0], files[1], filesAvailWarn),
      forDuration: '1h',
      severity: AlertSeverity.WARNING,
      summary: `Filesystem has less than ${filesAvailWarn}% inodes left.`,
      description: `Filesystem ${on} has only {{ printf "%.2f" $value }}% available inodes left.`,
    },
    {
      alert: 'NodeFilesystemAlmostOutOfFiles',
      expr: almostOut(files[0], files[1], filesAvailCrit),
      forDuration: '1h',
      severity: AlertSeverity.CRITICAL,
      summary: `Filesystem has less than ${filesAvailCrit}% inodes left.`,
      description: `Filesystem ${on} has only {{ printf "%.2f" $value }}% available inodes left.`,
    },
  ];
}

/** node-mixin's clock alerts. */
function clockRules(exporterSelector: string, skew: number): AlertRule[] {
  return [
    {
      alert: 'NodeClockSkewDetected',
      expr: [
        '(',
        `  node_timex_offset_seconds{${exporterSelector}} > ${skew}`,
        'and',
        `  deriv(node_timex_offset_seconds{${exporterSelector}}[5m]) >= 0`,
        ')',
        'or',
        '(',
        `  node_timex_offset_seconds{${exporterSelector}} < -${skew}`,
        'and',
        `  deriv(node_timex_offset_seconds{${exporterSelector}}[5m]) <= 0`,
        ')',
      ].join('\n'),
      forDuration: '10m',
      severity: AlertSeverity.WARNING,
      summary: 'Clock skew detected.',
      description: `Clock on {{ $labels.instance }} is out of sync by more than ${skew}s. Ensure NTP is configured correctly on this host.`,
    },
    {
      alert: 'NodeClockNotSynchronising',
      expr: `min_over_time(node_timex_sync_status{${exporterSelector}}[5m]) == 0\nand\nnode_timex_maxerror_seconds{${exporterSelector}} >= 16`,
      forDuration: '10m',
      severity: AlertSeverity.WARNING,
      summary: 'Clock not synchronising.',
      description: 'Clock on {{ $labels.instance }} is not synchronising. Ensure NTP is configured on this host.',
    },
  ];
}

/**
 * GPU driver readiness from kube-state-metrics: per driver pod, and per GPU node (a node meeting
 * the driver's node requirements, as kube-state-metrics' `kube_node_labels` reports them).
 */
export function gpuDriverAlertGroup(
  target: AlertTarget, options: GpuDriverAlertsOptions, gpuNodeTerms: readonly (readonly NodeSelectorRequirementJson[])[],
): AlertRuleGroup {
  const w = target.by;
  const s = targetSelectors(target, options);
  const ksm = options.kubeStateMetricsSelector ?? DEFAULT_KUBE_STATE_METRICS_SELECTOR;
  const podNode = `max by (namespace, pod, node) (kube_pod_info{${s.pods}})`;
  const readyPods = (value: 0 | 1) => `(kube_pod_status_ready{${matchers(s.pods, 'condition="true"')}} == ${value})\n* on (namespace, pod) group_left (node) ${podNode}`;
  // The GPU nodes: the driver's node-affinity terms, ORed as the scheduler does.
  const gpuNodes = gpuNodeTerms.map((term) => `max by (node) (kube_node_labels{${matchers(ksm, ...term.map((r) => nodeLabelMatcher(r, w)))}})`);
  return {
    name: `${target.agent}.gpu-driver`,
    rules: [
      {
        alert: 'GpuDriverPodNotReady',
        expr: readyPods(0),
        forDuration: duration(options.driverNotReadyFor, '30m', 'alerts.driverNotReadyFor', w),
        severity: AlertSeverity.WARNING,
        summary: 'A GPU driver pod is not ready.',
        description: `GPU driver pod ${target.namespace}/{{ $labels.pod }} on node {{ $labels.node }} is not ready: the driver is not (yet) loaded there.`,
      },
      {
        alert: 'GpuNodeWithoutReadyDriver',
        expr: [
          gpuNodes.length === 1 ? gpuNodes[0] : `(\n${gpuNodes.join('\nor\n')}\n)`,
          `and on (node) (kube_node_status_condition{${matchers(ksm, 'condition="Ready"', 'status="true"')}} == 1)`,
          'unless on (node)',
          `max by (node) (\n${readyPods(1)}\n)`,
        ].join('\n'),
        forDuration: duration(options.nodeWithoutDriverFor, '1h', 'alerts.nodeWithoutDriverFor', w),
        severity: AlertSeverity.CRITICAL,
        summary: 'A Ready GPU node has no ready GPU driver.',
        description: `Node {{ $labels.node }} is labelled for the GPU driver ${target.namespace}/${target.agent} and Ready, but no driver pod on it is ready: GPU workloads cannot start there.`,
      },
    ],
  };
}

/**
 * A node requirement as a matcher on kube-state-metrics' `kube_node_labels`, which carries only
 * the labels kube-state-metrics is allowed to export (`--metric-labels-allowlist=nodes=[...]`);
 * an absent label reads as "".
 */
export function nodeLabelMatcher(req: NodeSelectorRequirementJson, by: RefusedBy): string {
  const label = kubeStateMetricsLabel(req.key);
  const values = (req.values ?? []).map(regexLiteral).join('|');
  switch (req.operator) {
    case 'In': return `${label}=~${promString(values)}`;
    case 'NotIn': return `${label}!~${promString(values)}`;
    case 'Exists': return `${label}!=""`;
    case 'DoesNotExist': return `${label}=""`;
    default:
      throw new ValidationError(by, `the node requirement "${req.key} ${req.operator}" has no label matcher in PromQL (Gt/Lt compare numbers); `
        + 'use In with the values for the GPU nodes, or disable the GpuNodeWithoutReadyDriver alert by not enabling alerts');
  }
}

function duration(value: string | undefined, fallback: string, prop: string, by: RefusedBy): string {
  return checkDuration(value ?? fallback, prop, by);
}
