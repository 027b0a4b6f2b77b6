/**
 * Public shapes of the agents' alerts: the options users set and the rules they may add.
 * Pure module (no cdk8s).
 */

/** The `severity` label of an alert (the values Alertmanager routes of kube-prometheus expect). */
export enum AlertSeverity {
  /** Someone must act now: data is being lost or nodes run without the agent. */
  CRITICAL = 'critical',
  /** Needs attention during working hours. */
  WARNING = 'warning',
  /** For dashboards and inhibition only. */
  INFO = 'info',
}

/** One alerting rule. */
export interface AlertRule {
  /** The alert's name (`alert:`), CamelCase. */
  readonly alert: string;
  /** The PromQL expression; the alert fires for every series it returns. */
  readonly expr: string;
  /**
   * How long the expression must hold before the alert fires (`for:`).
   * @default - fires at once
   */
  readonly forDuration?: string;
  /** The `severity` label. */
  readonly severity: AlertSeverity;
  /** The `summary` annotation: one line. */
  readonly summary: string;
  /** The `description` annotation, naming the node or DaemonSet (alert templates such as `{{ $labels.node }}` allowed). */
  readonly description: string;
  /**
   * More labels of this alert.
   * @default - none
   */
  readonly labels?: { [key: string]: string };
}

/** A named group of alerting rules (evaluated together). */
export interface AlertRuleGroup {
  /** The group's name, unique within the PrometheusRule. */
  readonly name: string;
  /** The rules. */
  readonly rules: AlertRule[];
}

/** Options every agent's alerts share: routing, runbooks, selectors, the DaemonSet thresholds. */
export interface AgentAlertsOptions {
  /**
   * `runbook_url` annotation of every alert.
   * @default "https://github.com/maintainers/cdk8s-node-agents/blob/main/README.md#alerts-and-wave-gates"
   */
  readonly runbookUrl?: string;

  /**
   * `runbook_url` per alert name, overriding `runbookUrl`.
   * @default - none
   */
  readonly runbookUrls?: { [alert: string]: string };

  /**
   * Labels added to every alert, for Alertmanager routing (e.g. `{ team: "platform" }`).
   * @default - none (every alert carries `severity` and `node_agent`)
   */
  readonly labels?: { [key: string]: string };

  /**
   * Severity per alert name, overriding the default severity.
   * @default - each alert's documented severity
   */
  readonly severities?: { [alert: string]: AlertSeverity };

  /**
   * Labels of the PrometheusRule object, to match the Prometheus' `ruleSelector`
   * (kube-prometheus-stack selects `release: <helm release>` by default). A rule no Prometheus
   * selects is silently ignored.
   * @default - only the agent's own labels
   */
  readonly ruleLabels?: { [key: string]: string };

  /**
   * Label matchers selecting kube-state-metrics' series (PromQL, without braces).
   * @default 'job="kube-state-metrics"'
   */
  readonly kubeStateMetricsSelector?: string;

  /**
   * Label matchers selecting the agent's own metrics (PromQL, without braces).
   * @default - `namespace` and `pod` of the agent's pods: the labels prometheus-operator puts on
   *   every series it scrapes through a ServiceMonitor or PodMonitor
   */
  readonly metricsSelector?: string;

  /**
   * `NodeAgentNotScheduled`: how long nodes that should run the agent may lack its pod.
   * @default "10m"
   */
  readonly notScheduledFor?: string;

  /**
   * `NodeAgentMisscheduled`: how long pods may run on nodes the agent should not cover.
   * @default "15m"
   */
  readonly misscheduledFor?: string;

  /**
   * `NodeAgentPodsUnavailable`: how long pods may be unavailable.
   * @default "15m"
   */
  readonly unavailableFor?: string;

  /**
   * `NodeAgentPodsUnavailable`: unavailable pods (all DaemonSets of the agent together) tolerated.
   * @default 0
   */
  readonly maxUnavailablePods?: number;

  /**
   * `NodeAgentRolloutNoProgress`: how long a DaemonSet's updated count may stay unchanged while its rollout is
   * incomplete (one batch of its pace must fit in it: image pull, start, readiness).
   * @default "30m" ("24h" for the GPU driver, whose OnDelete pods are replaced by the runbook)
   */
  readonly rolloutStuckFor?: string;

  /**
   * `NodeAgentRolloutOverdue`: a DaemonSet still rolling this many times the time its update pace gives after its
   * spec changed (estimate's model: ceil(desired / batch) × (rolloutPodSeconds + minReadySeconds)).
   * @default 1.5
   */
  readonly rolloutOverdueFactor?: number;

  /**
   * `NodeAgentRolloutOverdue`: seconds one pod's replacement takes (image pull, start, readiness, the old pod's
   * termination), `node-agents estimate --pod-seconds`.
   * @default 30
   */
  readonly rolloutPodSeconds?: number;

  /**
   * `NodeAgentGenerationMismatch`: how long the DaemonSet controller may lag behind a spec change.
   * @default "15m"
   */
  readonly generationMismatchFor?: string;

  /**
   * `NodeAgentMissing`: how long kube-state-metrics may report none of the agent's DaemonSets.
   * @default "15m"
   */
  readonly missingFor?: string;
}

/** Alerts of the fluent-bit log collector (fluent-bit's `/api/v2/metrics/prometheus` metrics). */
export interface LogCollectorAlertsOptions extends AgentAlertsOptions {
  /**
   * Window in which any abandoned chunk (`LogCollectorOutputRetriesFailed`) or dropped record
   * (`LogCollectorRecordsDropped`) fires.
   * @default "5m"
   */
  readonly lossWindow?: string;

  /**
   * `LogCollectorOutputErrors`: output errors per second tolerated.
   * @default 0
   */
  readonly outputErrorsPerSecond?: number;

  /**
   * `LogCollectorOutputErrors`: how long the error rate must stay above the threshold.
   * @default "15m"
   */
  readonly outputErrorsFor?: string;

  /**
   * `LogCollectorOutputStalled`: how long an output may keep retrying while it delivers no record
   * (a destination that is down, unreachable or answering 5xx: fluent-bit retries, which neither the
   * error counter, the failed-retries counter nor readiness show).
   * @default "10m"
   */
  readonly outputStalledFor?: string;

  /**
   * `LogCollectorOutputStarved` (a collector with two outputs or more): how long an output may deliver
   * nothing and retry nothing while the collector holds `storageMaxChunksUp` chunks in memory, so that
   * no new chunk can be flushed to any output (the chunks another output retries hold them).
   * @default "10m"
   */
  readonly outputStarvedFor?: string;

  /**
   * `LogCollectorBacklog`: how long chunks may wait for delivery (busy at every scrape for 5 minutes,
   * `fluentbit_input_storage_chunks_busy`) before it fires. It stays on until they are delivered,
   * also after the destination is back and the chunks still wait for their retry.
   * @default "10m"
   */
  readonly backlogFor?: string;

  /**
   * `LogCollectorBufferNearFull`: the share of an output's `storage.total_limit_size` (percent)
   * that must stay free (`fluentbit_output_chunk_available_capacity_percent`).
   * @default 20
   */
  readonly bufferAvailablePercent?: number;

  /**
   * `LogCollectorBufferNearFull`: how long the free share may stay below the threshold.
   * @default "10m"
   */
  readonly bufferFor?: string;

  /**
   * `LogCollectorInputStalled`: how long an input may read no record while its collector is scraped.
   * @default "30m"
   */
  readonly inputStalledFor?: string;

  /**
   * `LogCollectorInputStalled`: aliases of the inputs that always have something to read.
   * @default ["tail_containers"] (the journal and forward inputs may be idle for long)
   */
  readonly stalledInputs?: string[];
}

/** The node-mixin alerts (filesystem space, inodes, clock), as upstream's node-mixin defines them. */
export interface NodeMixinAlertsOptions {
  /**
   * Label matchers of the filesystems watched (PromQL, without braces).
   * @default 'fstype!="",mountpoint!=""' (node-mixin's fsSelector and fsMountpointSelector)
   */
  readonly filesystemSelector?: string;

  /**
   * `NodeFilesystemSpaceFillingUp` (warning): free space (percent) below which a filesystem
   * predicted to be full within 24 h fires.
   * @default 40
   */
  readonly spaceFillingUpWarningPercent?: number;

  /**
   * `NodeFilesystemSpaceFillingUp` (critical): free space (percent) below which a filesystem
   * predicted to be full within 4 h fires.
   * @default 20
   */
  readonly spaceFillingUpCriticalPercent?: number;

  /**
   * `NodeFilesystemAlmostOutOfSpace` (warning): free space (percent).
   * @default 5
   */
  readonly spaceAvailableWarningPercent?: number;

  /**
   * `NodeFilesystemAlmostOutOfSpace` (critical): free space (percent).
   * @default 3
   */
  readonly spaceAvailableCriticalPercent?: number;

  /**
   * `NodeFilesystemFilesFillingUp` (warning): free inodes (percent), with a 24 h prediction.
   * @default 40
   */
  readonly filesFillingUpWarningPercent?: number;

  /**
   * `NodeFilesystemFilesFillingUp` (critical): free inodes (percent), with a 4 h prediction.
   * @default 20
   */
  readonly filesFillingUpCriticalPercent?: number;

  /**
   * `NodeFilesystemAlmostOutOfFiles` (warning): free inodes (percent).
   * @default 5
   */
  readonly filesAvailableWarningPercent?: number;

  /**
   * `NodeFilesystemAlmostOutOfFiles` (critical): free inodes (percent).
   * @default 3
   */
  readonly filesAvailableCriticalPercent?: number;

  /**
   * `NodeClockSkewDetected`: clock offset (seconds) that fires while it is not shrinking.
   * @default 0.05
   */
  readonly clockSkewSeconds?: number;
}

/** Alerts of node_exporter. */
export interface NodeExporterAlertsOptions extends AgentAlertsOptions {
  /**
   * `NodeExporterDown`: how long a node's exporter may fail its scrape.
   * @default "5m"
   */
  readonly targetDownFor?: string;

  /**
   * `NodeExporterCollectorFailed`: how long a collector may fail.
   * @default "15m"
   */
  readonly collectorFailedFor?: string;

  /**
   * `NodeExporterCollectorFailed`: the collectors watched. node_exporter also reports a collector
   * with nothing to read on the node (no bonding, NFS, InfiniBand, RAID) as failed, so only
   * collectors with data on every node belong here.
   * @default ["cpu", "diskstats", "filesystem", "loadavg", "meminfo", "netdev", "stat", "time", "uname", "vmstat"]
   */
  readonly watchedCollectors?: string[];

  /**
   * Also the standard node alerts of node-mixin (filesystem space and inodes, clock skew and
   * synchronisation), in their own rule group. Leave them off where kube-prometheus already ships
   * them, or they fire twice.
   * @default - not rendered
   */
  readonly nodeMixin?: NodeMixinAlertsOptions;
}

/** Alerts of the GPU driver. */
export interface GpuDriverAlertsOptions extends AgentAlertsOptions {
  /**
   * `GpuDriverPodNotReady`: how long a driver pod may be unready (it compiles and loads the
   * kernel module first).
   * @default "30m"
   */
  readonly driverNotReadyFor?: string;

  /**
   * `GpuNodeWithoutReadyDriver`: how long a Ready GPU node may have no ready driver pod.
   * @default "1h"
   */
  readonly nodeWithoutDriverFor?: string;
}

/** One PromQL check of a gate: it fails when the expression returns any series. */
export interface WaveGateCheck {
  /** A short name for the log line (letters, digits, "-" and "_"). */
  readonly name: string;
  /** An instant-vector PromQL expression that returns series only when something is wrong. */
  readonly expr: string;
}

/**
 * A metric gate after a rollout wave (needs `argoCdSyncWaves`): an Argo CD Sync hook Job between the
 * wave's sync wave and the next group's. It waits `bakeMinutes`, then queries Prometheus; the
 * next group is applied only when every check returns an empty result. Its verdict is recorded in
 * the ConfigMap `<agent>-gate-<wave>` for the commit's revision of the wave and the checks, so a
 * failed gate fails again at once on every automatic Argo CD retry until a person acts (a new
 * commit, deleting the record to check again, or an override written into it).
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/gates-watchers-alerts.md#gates-between-waves
 */
export interface WaveGate {
  /** The wave whose DaemonSet the gate checks (not "fleet": nothing comes after it). */
  readonly afterWave: string;

  /**
   * Base URL of the Prometheus HTTP API, e.g. "http://prometheus-operated.monitoring.svc:9090". No whitespace, and no
   * "[", "]", "{" or "}" but an IPv6 host's brackets (percent-encode them). Credentials in it (`https://user:pass@host`)
   * are used but never logged; they are in the gate Job's environment, in the rendered YAML.
   */
  readonly prometheusUrl: string;

  /**
   * Minutes the new version runs on the wave before the checks.
   * @default 10
   */
  readonly bakeMinutes?: number;

  /**
   * The checks, replacing the agent's default ones for the wave.
   * @default - the agent's: its DaemonSet known, no pod unavailable, the rollout complete and
   *   observed, no container restarted during the bake, plus the agent kind's own (see docs/gates-watchers-alerts.md)
   */
  readonly checks?: WaveGateCheck[];

  /**
   * Checks added to `checks` (or to the defaults).
   * @default - none
   */
  readonly extraChecks?: WaveGateCheck[];

  /**
   * Seconds the Job may run after the bake (queries, retries) before Kubernetes stops it; the
   * Job's activeDeadlineSeconds is the bake plus this.
   * @default 300
   */
  readonly timeoutSeconds?: number;

  /**
   * Image with `sh` and `curl` the gate runs in.
   * @default "curlimages/curl:8.21.0"
   */
  readonly image?: string;

  /**
   * Label matchers selecting kube-state-metrics' series in the default checks.
   * @default 'job="kube-state-metrics"'
   */
  readonly kubeStateMetricsSelector?: string;
}
