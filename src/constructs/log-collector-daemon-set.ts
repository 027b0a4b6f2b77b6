import { ApiObject, Duration } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct, IConstruct } from 'constructs';
import { AgentAlerts } from './agent-alerts';
import { finishAgentConstruct, startAgentConstruct } from './agent-construct';
import { collectorProfiles } from './log-collector-profiles';
import { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { agentRollout, constructRelease } from './previous-release';
import { AgentAdoption } from '../adoption/adoption';
import { resolveIdentity } from '../agent/agent-spec';
import { AgentEnvFieldPath, AgentEnvValue, AgentProbe } from '../agent/container-inputs';
import { NodeRequirement } from '../agent/node-requirement';
import { AgentPolicyRule, AgentResources, AgentToleration, HostPathType, HostPathVolume, TaintEffect, TolerationOperator } from '../agent/options';
import { AgentPodOptions, podOptionsOf } from '../agent/pod-options';
import { AgentRelease } from '../agent/release';
import { AgentRollout } from '../agent/rollout';
import { UpdateStrategy } from '../agent/update-strategy';
import { logCollectorGateChecks } from '../alerts/gate';
import { LogCollectorAlertsOptions } from '../alerts/options';
import { logCollectorAlertGroup } from '../alerts/rules';
import { parseClassicConfig, ParsedClassicSection } from '../fluent-bit/classic-format';
import { collectorImageProblems } from '../fluent-bit/collector-image';
import {
  CONFIG_DIR, CONFIG_FILE_NAME, CUSTOM_PARSERS_FILE_NAME, DEFAULT_STORAGE_MAX_CHUNKS_UP, envReferences, FLUENT_BIT_IMAGE,
  RETRY_PUT_DOWN_LIMIT, sizeBytes, FluentBitConfig, generateFluentBitConfig,
  HEALTH_PATH, KUBERNETES_DNS_RETRIES, KUBERNETES_DNS_WAIT_SECONDS, LIVENESS_PATH, METRICS_PATH, RUNTIME_ENV_VARS, VOLATILE_JOURNAL_DIR,
} from '../fluent-bit/config';
import { extraTailPathProblems } from '../fluent-bit/extra-config-paths';
import { FluentBitFilter } from '../fluent-bit/filters';
import { INPUT_PLUGINS_ADDED_SINCE_4_2_3, isKeyAddedSince423 } from '../fluent-bit/input-filter-keys';
import { FluentBitInput } from '../fluent-bit/inputs';
import { isOutputKeyAddedSince423, OUTPUT_PLUGINS_ADDED_SINCE_4_2_3 } from '../fluent-bit/output-plugins';
import { FluentBitOutput } from '../fluent-bit/outputs';
import { FluentBitMultilineParser, FluentBitParser } from '../fluent-bit/parsers';
import { addObjectSizeValidation } from '../render/late-checks';
import { KARPENTER_DISRUPTED_TAINT, toleratesKarpenterDisrupted } from '../scheduling/karpenter-drain';
import { brand } from '../validation/brand';
import { throwIfProblems, ValidationError } from '../validation/errors';
import { checkObjectSize } from '../validation/object-size';
import {
  checkDnsLabel, checkDnsSubdomain, checkImage, checkInt32, checkInt64, checkLabels, checkPrometheusDuration, checkResources, checkServiceName,
  checkTolerations,
} from '../validation/values';
import { addWarning } from '../validation/warnings';

/** The container runtime of the nodes: decides which host paths hold container logs. */
export enum NodeContainerRuntime {
  /** containerd: logs live under /var/log/pods, which /var/log covers. */
  CONTAINERD = 'containerd',
  /** CRI-O: logs live under /var/log/pods, which /var/log covers. */
  CRI_O = 'cri-o',
  /**
   * Docker (dockershim or cri-dockerd): /var/log/containers links into
   * /var/lib/docker/containers, which is mounted read-only as well.
   */
  DOCKER = 'docker',
}

/** Log level of fluent-bit itself. */
export enum FluentBitLogLevel {
  /** Nothing. */
  OFF = 'off',
  /** Errors only. */
  ERROR = 'error',
  /** Errors and warnings. */
  WARN = 'warn',
  /** Errors, warnings and informational messages. */
  INFO = 'info',
  /** Debugging output (verbose). */
  DEBUG = 'debug',
  /** Everything (very verbose; needs a trace-enabled build). */
  TRACE = 'trace',
}

/** Which prometheus-operator object scrapes the collector. */
export enum LogCollectorMonitorKind {
  /** A ServiceMonitor, plus a headless Service selecting the collector pods. */
  SERVICE_MONITOR = 'ServiceMonitor',
  /** A PodMonitor (no Service needed). */
  POD_MONITOR = 'PodMonitor',
}

/** Prometheus scraping of fluent-bit's metrics endpoint (`/api/v2/metrics/prometheus`). */
export interface LogCollectorMetricsOptions {
  /**
   * ServiceMonitor or PodMonitor.
   * @default LogCollectorMonitorKind.SERVICE_MONITOR
   */
  readonly kind?: LogCollectorMonitorKind;
  /**
   * Scrape interval (a Prometheus duration).
   * @default "30s"
   */
  readonly interval?: string;
  /**
   * Labels of the monitor object, to match the `serviceMonitorSelector` / `podMonitorSelector` of the
   * Prometheus that should scrape it (kube-prometheus-stack selects `release: <helm release>` by
   * default). A monitor no Prometheus selects is silently ignored.
   * @default - only the collector's own labels
   */
  readonly labels?: { [key: string]: string };
}

/** Where the kubernetes filter (pod metadata enrichment) runs relative to the user `filters`. */
export enum KubernetesFilterPosition {
  /** First: user filters can match on `$kubernetes['namespace_name']`, labels and annotations. */
  BEFORE_USER_FILTERS = 'before-user-filters',
  /** Last: user filters see the raw record; records they drop are never looked up (less API/kubelet load). */
  AFTER_USER_FILTERS = 'after-user-filters',
}

/** Options of the kubernetes filter that adds pod metadata to container logs. */
export interface LogCollectorKubernetesFilterOptions {
  /**
   * Order relative to the user `filters`.
   * @default KubernetesFilterPosition.BEFORE_USER_FILTERS
   */
  readonly position?: KubernetesFilterPosition;
  /**
   * Parse a JSON `log` line into the record (`Merge_Log`).
   * @default true
   */
  readonly mergeLog?: boolean;
  /**
   * Keep the original `log` text after merging it (`Keep_Log`).
   * @default false
   */
  readonly keepLog?: boolean;
  /**
   * Let pods choose their parser with the annotation `fluentbit.io/parser` (`K8S-Logging.Parser`).
   * @default true
   */
  readonly allowParserAnnotation?: boolean;
  /**
   * Let pods opt out with the annotation `fluentbit.io/exclude: "true"` (`K8S-Logging.Exclude`).
   * @default true
   */
  readonly allowExcludeAnnotation?: boolean;
  /**
   * Buffer of the metadata HTTP client (`Buffer_Size`, a fluent-bit size; "0" = unlimited).
   * @default - fluent-bit's 32k from the API server; "0" with useKubelet (the kubelet answers with every pod of the node)
   */
  readonly bufferSize?: string;
  /**
   * Add pod labels (`Labels`).
   * @default true
   */
  readonly labels?: boolean;
  /**
   * Add pod annotations (`Annotations`).
   * @default true
   */
  readonly annotations?: boolean;
}

/** Pods whose container logs the collector does not read. */
export interface LogCollectorPodExclusion {
  /** Namespace of the pods. */
  readonly namespace: string;
  /** Start of the pod names, e.g. `istio-ingressgateway-`. */
  readonly podNamePrefix: string;
}

/** Props of a fluent-bit log collector. */
export interface LogCollectorDaemonSetProps extends AgentPodOptions {
  /**
   * Where logs go: one or more outputs, e.g. `[FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })]`.
   * An empty list is an error.
   */
  readonly outputs: FluentBitOutput[];

  /**
   * Name of the DaemonSet, ServiceAccount, ClusterRole and the default state directory.
   * @default "log-collector"
   */
  readonly name?: string;

  /**
   * Namespace of the collector.
   * @default - the chart's namespace, else "observability"
   */
  readonly namespace?: string;

  /**
   * Create the namespace (labelled with the Pod Security level the collector needs: privileged,
   * because of hostPath volumes).
   * @default false
   */
  readonly createNamespace?: boolean;

  /**
   * fluent-bit image. The config keys and probe paths are those of the default's version
   * (5.1.1); with a 4.x tag, output plugins and input, filter and output keys 4.2.3 lacks are
   * refused, in `extraConfig` too.
   * @default "cr.fluentbit.io/fluent/fluent-bit:5.1.1"
   */
  readonly image?: string;

  /**
   * The nodes' container runtime. With Docker, `/var/lib/docker/containers` is mounted
   * read-only too (container log files live there).
   * @default NodeContainerRuntime.CONTAINERD
   */
  readonly containerRuntime?: NodeContainerRuntime;

  /**
   * Host directory holding the tail database and the filesystem buffer (hostPath
   * DirectoryOrCreate, mounted at the same path, the only writable mount). A restarted or
   * upgraded pod resumes where the old one stopped.
   * @default "/var/lib/<name>"
   */
  readonly stateDir?: string;

  /**
   * Port of fluent-bit's HTTP server (health endpoint, metrics).
   * @default 2020
   */
  readonly httpPort?: number;

  /**
   * Seconds between flushes to the outputs (fluent-bit `Flush`, may be fractional).
   * @default 1
   */
  readonly flushSeconds?: number;

  /**
   * Seconds the kubelet waits after SIGTERM before it kills the pod. fluent-bit's `Grace` is set
   * 5 s below it; it must leave room for one flush plus 5 s, else synthesis fails.
   * @default 60
   */
  readonly terminationGracePeriodSeconds?: number;

  /**
   * fluent-bit `Grace`: seconds it keeps flushing after SIGTERM. Must be at least one flush plus
   * 5 s and at most terminationGracePeriodSeconds minus 5 s.
   * @default - terminationGracePeriodSeconds - 5
   */
  readonly graceSeconds?: number;

  /**
   * The longest wait, in seconds, before a chunk that failed to flush is retried (fluent-bit
   * `scheduler.cap`): what bounds how late the buffered logs arrive once a destination is back.
   * Every waiting chunk of every node retries on its own, so a lower cap sends more retries to a
   * destination that is recovering; a higher one leaves the backlog waiting longer. fluent-bit's own
   * default is 2,000 s (the most allowed).
   * @default 60
   */
  readonly schedulerCapSeconds?: number;

  /**
   * The shortest wait, in seconds, before a retry (fluent-bit `scheduler.base`); each retry draws its
   * wait between it and base × 2^retry, at most `schedulerCapSeconds`. From 1 to the cap.
   * @default 5
   */
  readonly schedulerBaseSeconds?: number;

  /**
   * fluent-bit's own log level.
   * @default FluentBitLogLevel.INFO
   */
  readonly logLevel?: FluentBitLogLevel;

  /**
   * `Mem_Buf_Limit` on every input.
   * @deprecated Every input buffers on the filesystem (`storage.type filesystem`), where
   *   Mem_Buf_Limit never pauses an input; memory is bounded by `storageMaxChunksUp` instead.
   *   Still written when set: it then decides when a chunk another output still retries goes to
   *   disk, and a value above the default lets a destination that is down starve the others
   *   (a synthesis warning says so).
   * @default - with one output, not written; with two or more, "8K" on the tail and systemd inputs
   *   (a chunk one output retries goes to disk, so it cannot hold the memory the others need)
   */
  readonly memBufLimit?: string;

  /**
   * Chunks (about 2 MB each) kept in memory at once, all inputs together (`storage.max_chunks_up`):
   * what bounds fluent-bit's buffer memory with filesystem buffering. Beyond it new chunks are
   * written to disk only (or the input pauses, see `storagePauseOnChunksOverlimit`). Keep
   * chunks × 2 MB plus the backlog limit well below the container's memory limit.
   * @default 64 (about 128 MB; fluent-bit's own default is 128)
   */
  readonly storageMaxChunksUp?: number;

  /**
   * Pause an input once `storageMaxChunksUp` is reached (`storage.pause_on_chunks_overlimit`)
   * instead of writing its new chunks straight to the filesystem buffer. Pausing tail risks missing
   * a log file the kubelet rotates away meanwhile, hence off.
   * @default false
   */
  readonly storagePauseOnChunksOverlimit?: boolean;

  /**
   * Custom parsers (`[PARSER]`), e.g. `FluentBitParser.regex({ name: 'app', regex: '^(?<level>[A-Z]+) (?<message>.*)$' })`,
   * written to a parsers file in the ConfigMap that the config loads with `Parsers_File` after the
   * image's stock parsers (which stay usable; a custom parser must not reuse a stock name). Use
   * them from a parser filter (`filters: [FluentBitFilter.parser({ keyName: 'log', parsers: ['app'] })]`),
   * a tail input's `parser` or the pod annotation `fluentbit.io/parser`; every name is checked at synthesis.
   * @default - none
   */
  readonly parsers?: FluentBitParser[];

  /**
   * Custom multiline parsers (`[MULTILINE_PARSER]`), written to the same parsers file. Use them from
   * a multiline filter (`filters: [FluentBitFilter.multiline({ parsers: ['<name>'] })]`) or a tail
   * input's `multilineParsers`.
   * @default - none
   */
  readonly multilineParsers?: FluentBitMultilineParser[];

  /**
   * Memory used to replay the filesystem backlog after a restart (`storage.backlog.mem_limit`).
   * @default "5M"
   */
  readonly storageBacklogMemLimit?: string;

  /**
   * Seconds between scans for new log files (`Refresh_Interval`).
   * @default 10
   */
  readonly refreshIntervalSeconds?: number;

  /**
   * Read log files that have no offset in the tail database from their beginning (`Read_from_Head`):
   * on a new node, logs written before the collector started are shipped too. Files with an
   * offset always resume from it.
   * @default true
   */
  readonly readFromHead?: boolean;

  /**
   * Also read the kubelet's and the container runtime's systemd units from the node's journal,
   * persistent (`/var/log/journal`) or volatile (`/run/log/journal`, mounted read-only with
   * `/etc/machine-id`).
   * @default false
   */
  readonly systemdInput?: boolean;

  /**
   * Units the systemd input reads.
   * @default - kubelet.service plus the runtime's unit (containerd.service, crio.service or docker.service)
   */
  readonly systemdUnits?: string[];

  /**
   * Get pod metadata from the node's kubelet (`Use_Kubelet`) instead of the API server: less load
   * on large clusters. Adds exactly one RBAC rule (`get` on `nodes/proxy`); the kubelet is reached
   * on the node IP (downward API), so no hostNetwork is needed.
   * @default false
   */
  readonly useKubelet?: boolean;

  /**
   * The kubelet's port (only with `useKubelet`).
   * @default 10250
   */
  readonly kubeletPort?: number;

  /**
   * Verify the certificates of the API server and (with `useKubelet`) of the kubelet: fluent-bit
   * has one setting for both. With `useKubelet` it must be set explicitly: true where kubelet
   * serving certificates are signed by the cluster CA (EKS, GKE, AKS, kubeadm with
   * `serverTLSBootstrap`), false where they are self-signed (kubeadm's default).
   * @default true (without useKubelet)
   */
  readonly kubernetesTlsVerify?: boolean;

  /**
   * Also accept logs over the forward protocol on this port (applications that push). Must differ
   * from `httpPort`. No Service or hostPort is created for it.
   * @default - no forward input
   */
  readonly forwardInputPort?: number;

  /**
   * More inputs: host log files (`FluentBitInput.tail`) or more systemd units under their own tag
   * (`FluentBitInput.systemd`). Directories outside /var/log are mounted read-only.
   * @default - none
   */
  readonly inputs?: FluentBitInput[];

  /**
   * Filters of the pipeline, in order, e.g. `FluentBitFilter.grep({ exclude: [{ key: 'log', regex: 'healthz' }] })`.
   * They run after the kubernetes filter unless `kubernetesFilter.position` says otherwise.
   * @default - none
   */
  readonly filters?: FluentBitFilter[];

  /**
   * Options of the kubernetes filter (pod metadata) and its place relative to `filters`.
   * @default - metadata first, Merge_Log on, Keep_Log off, pod parser/exclude annotations honoured
   */
  readonly kubernetesFilter?: LogCollectorKubernetesFilterOptions;

  /**
   * Namespaces whose container logs are not read at all (tail `Exclude_Path`, so before any
   * filter and before the metadata lookup), e.g. `['kube-system']`.
   * @default - none (only the collector's own logs are skipped)
   */
  readonly excludeNamespaces?: string[];

  /**
   * Pods whose container logs are not read (tail `Exclude_Path`), by namespace and name prefix.
   * @default - none
   */
  readonly excludePods?: LogCollectorPodExclusion[];

  /**
   * More `Exclude_Path` globs of the container-log input, under /var/log/containers/ (file names
   * are `<pod>_<namespace>_<container>-<id>.log`).
   * @default - none
   */
  readonly excludeContainerLogPaths?: string[];

  /**
   * Raw classic-mode sections appended verbatim to the generated config (escape hatch for what
   * the typed props do not cover). Validated by the parser; no `[SERVICE]`, no `@INCLUDE`, no `[PARSER]` or
   * `[MULTILINE_PARSER]` (use `parsers` / `multilineParsers`), and every parser a section names
   * must be stock, built in or defined there. A plugin name or key fluent-bit 5.1 does not know is
   * refused, with its line and the nearest name, as fluent-bit would refuse it at start ("tried to
   * instance a plugin name that doesn't exist", "unknown configuration property"), for every input,
   * filter and output plugin of the 5.1.1 image. With a 4.x `image`, a key or plugin 4.2.3 lacks is refused too.
   * Never put credentials here: it goes into the ConfigMap as is.
   * @default - none
   */
  readonly extraConfig?: string;

  /**
   * User id of fluent-bit. 0 (root) by default because container log files and the journal are
   * root-owned on most nodes. A non-root uid needs the nodes prepared: the state directory owned by
   * that uid and the log files readable by `runAsGroup` (e.g. by the node image).
   * @default 0
   */
  readonly runAsUser?: number;

  /**
   * Group id of fluent-bit (only with a non-root `runAsUser`).
   * @default - the same as runAsUser
   */
  readonly runAsGroup?: number;

  /**
   * Tolerate every taint (`operator: Exists`): a log collector missing from a tainted node is
   * silent. false gives the base's explicit list (control-plane), `karpenter.sh/disrupted:NoSchedule`
   * (Karpenter then leaves the collector running through a node's drain instead of evicting it while
   * workloads may still write) and `tolerations`.
   * @default true
   */
  readonly tolerateAllTaints?: boolean;

  /**
   * More tolerations (useful with `tolerateAllTaints: false`).
   * @default - none
   */
  readonly tolerations?: AgentToleration[];

  /**
   * Pace of upgrades. Surge is an error: the surge pod would run beside the old one on the same
   * tail database and buffer.
   * @default UpdateStrategy.steady() (maxUnavailable 25%, maxSurge 0)
   */
  readonly updateStrategy?: UpdateStrategy;

  /**
   * Resources of the fluent-bit container.
   * @default - requests 100m CPU / 128Mi memory, memory limit 512Mi, no CPU limit
   */
  readonly resources?: AgentResources;

  /**
   * PriorityClass of the pods.
   * @default "system-node-critical"
   */
  readonly priorityClassName?: string;

  /**
   * Node labels a node must carry (exact values).
   * @default - { "kubernetes.io/os": "linux" }
   */
  readonly nodeSelector?: { [key: string]: string };

  /**
   * Required node-affinity requirements.
   * @default - none
   */
  readonly nodeRequirements?: NodeRequirement[];

  /**
   * More labels on every object (never in selectors).
   * @default - none
   */
  readonly labels?: { [key: string]: string };

  /**
   * Emit a prometheus-operator ServiceMonitor or PodMonitor for fluent-bit's metrics.
   * @default - none
   */
  readonly metrics?: LogCollectorMetricsOptions;

  /**
   * Roll new versions out over canary waves of nodes (see NodeAgentDaemonSet). The previous
   * version is `previous: LogCollectorDaemonSet.release(previousProps)`, the props that version had:
   * held waves keep its image, config, outputs' Secret references and everything else.
   * @default - one DaemonSet for all nodes
   */
  readonly rollout?: AgentRollout;

  /**
   * Take over a running DaemonSet in place, e.g. `AgentAdoption.fluentBitChart({ namespace: 'logging' })`: the
   * DaemonSet keeps its name, namespace and selector, so the switch is a rolling update of that object at this
   * agent's pace (each node's pod replaced once, never two on a node). Name and namespace default to the adopted
   * DaemonSet's. Until the adoption is marked `completed`, the container-log input starts at the end of the
   * files on the node at its first start (`readFromHead` defaults to false): the chart's collector kept no offsets
   * (no tail DB), so reading from the head would ship every log on disk a second time.
   * @default - a new DaemonSet
   */
  readonly adopt?: AgentAdoption;

  /**
   * Render a PrometheusRule with the collector's alerts: its DaemonSets (kube-state-metrics) and
   * fluent-bit's output and input metrics (lost chunks and records, output errors, buffer nearly
   * full, a stalled input). The fluent-bit alerts need the collector scraped, e.g. with `metrics`.
   * @default - no alerts
   */
  readonly alerts?: LogCollectorAlertsOptions;
}

const CONTAINER_NAME = 'fluent-bit';

/**
 * A fluent-bit log collector on every node that loses no logs across restarts and rollouts:
 * tail database and filesystem buffer on the host, fluent-bit's Grace paired with the pod's grace
 * period, every taint tolerated, no surge, health-based readiness, credentials from Secrets only.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/log-collector.md
 */
export class LogCollectorDaemonSet extends Construct {
  /**
   * A release of a collector with these props: give the previous version's props as
   * `rollout.previous` while its waves are held (their `rollout` is ignored).
   */
  public static release(props: LogCollectorDaemonSetProps): AgentRelease {
    return constructRelease('LogCollectorDaemonSet', (scope, id) => new LogCollectorDaemonSet(scope, id, { ...props, rollout: undefined }));
  }

  /** The underlying node agent (DaemonSet, ServiceAccount, RBAC, ConfigMap). */
  public readonly agent: NodeAgentDaemonSet;
  /** The generated fluent-bit.conf. */
  public readonly configText: string;
  /** The ConfigMap data (file name → content) of this release. */
  public readonly configData: { [file: string]: string };
  /** fluent-bit's Grace, in seconds. */
  public readonly graceSeconds: number;
  /** The pod's terminationGracePeriodSeconds. */
  public readonly terminationGracePeriodSeconds: number;
  /** The host directory with the tail database and the filesystem buffer. */
  public readonly stateDir: string;
  /** Port of fluent-bit's HTTP server (health, metrics). */
  public readonly httpPort: number;
  /** The headless Service behind the ServiceMonitor, if any. */
  public readonly metricsService?: ApiObject;
  /** The ServiceMonitor or PodMonitor, if any. */
  public readonly monitor?: ApiObject;
  /** The collector's alerts, if `alerts` is set. */
  public readonly alerts?: AgentAlerts;
  /** The gate Jobs of `rollout.gates`. */
  public readonly gates: ApiObject[];

  public constructor(scope: Construct, id: string, props: LogCollectorDaemonSetProps) {
    super(scope, id);
    startAgentConstruct(this, 'LogCollectorDaemonSet', 'LogCollectorDaemonSetProps', props);
    // Then the values the base does not see.
    throwIfProblems(this, valueProblems(props));
    const { name, namespace } = resolveIdentity(this, props, { name: 'log-collector', namespace: 'observability' });
    const runtime = props.containerRuntime ?? NodeContainerRuntime.CONTAINERD;
    const strategy = props.updateStrategy ?? UpdateStrategy.steady();
    const runAsUser = collectorUser(this, props, strategy);

    this.stateDir = props.stateDir ?? `/var/lib/${name}`;
    this.terminationGracePeriodSeconds = props.terminationGracePeriodSeconds ?? 60;
    const config = this.renderConfig(props, name, namespace, runtime);
    this.configText = config.text;
    this.configData = configDataOf(config);
    // The ConfigMap's size is known now: refuse it here, with the path, rather than at apply time.
    throwIfProblems(this, checkObjectSize({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `${name}-config`, namespace }, data: this.configData })
      .problems.map((p) => `configuration: ${p} (the rendered fluent-bit.conf plus the parsers file; extraConfig is the usual cause)`));
    this.graceSeconds = config.graceSeconds;
    this.httpPort = config.httpPort;
    if (runAsUser !== 0) {
      const low = config.containerPorts.find((p) => p.port < 1024);
      if (low) {
        throw new ValidationError(this, `port ${low.port} (${low.name}) is below 1024, which a non-root fluent-bit cannot bind `
          + '(all capabilities are dropped); choose a port >= 1024.');
      }
    }

    // profiles that size the buffers get a config of their own (see log-collector-profiles.ts)
    const resourceProfiles = collectorProfiles(this, props.resourceProfiles, props, props.resources?.memoryLimit,
      (buffers) => configDataOf(this.renderConfig({ ...props, ...buffers }, name, namespace, runtime)));
    const hostPaths = this.hostPaths(config, runtime);
    const mountPaths = [...hostPaths.map((h) => h.mountPath ?? h.hostPath), ...(props.mounts ?? []).map((m) => m.mountPath), CONFIG_DIR];
    throwIfProblems(this, extraTailPathProblems(props.extraConfig, mountPaths));
    const { env, fieldEnv } = this.containerEnv(config);
    this.agent = new NodeAgentDaemonSet(this, 'Agent', {
      ...podOptionsOf(props),
      resourceProfiles,
      name,
      namespace,
      createNamespace: props.createNamespace,
      component: 'log-collector',
      ...collectorContainer(props, config, runAsUser),
      env: Object.keys(env).length > 0 ? env : undefined,
      fieldEnv: Object.keys(fieldEnv).length > 0 ? fieldEnv : undefined,
      hostPaths,
      configData: this.configData,
      configMountPath: CONFIG_DIR,
      updateStrategy: strategy,
      terminationGracePeriodSeconds: this.terminationGracePeriodSeconds,
      tolerateAllTaints: props.tolerateAllTaints ?? true,
      tolerations: collectorTolerations(props),
      priorityClassName: props.priorityClassName,
      nodeSelector: props.nodeSelector,
      nodeRequirements: props.nodeRequirements,
      rbacRules: collectorRbacRules(props),
      automountServiceAccountToken: true,
      labels: props.labels,
      rollout: agentRollout(this, props.rollout),
      adopt: props.adopt,
    });

    addObjectSizeValidation(this, { rules: { noSurge: COLLECTOR_SURGE } });
    if (props.metrics) {
      const rendered = this.renderMonitor(props.metrics);
      this.metricsService = rendered.service;
      this.monitor = rendered.monitor;
    }
    const finished = finishAgentConstruct(this, {
      agent: this.agent,
      rollout: props.rollout,
      alerts: props.alerts,
      gateChecks: logCollectorGateChecks,
      alertGroups: (target, alerts) => [logCollectorAlertGroup(target, alerts, {
        outputs: props.outputs.length,
        // a profile without its own storageMaxChunksUp inherits the collector's
        maxChunksUp: Math.min(...[props, ...props.resourceProfiles ?? []]
          .map((p) => p.storageMaxChunksUp ?? props.storageMaxChunksUp ?? DEFAULT_STORAGE_MAX_CHUNKS_UP)),
      })],
    });
    this.alerts = finished.alerts;
    this.gates = finished.gates;
  }

  /** The fluent-bit configuration of these props, checked against the image and the env it reads. */
  private renderConfig(
    props: LogCollectorDaemonSetProps, name: string, namespace: string, runtime: NodeContainerRuntime,
  ): FluentBitConfig {
    const systemdUnits = props.systemdInput ? (props.systemdUnits ?? ['kubelet.service', RUNTIME_UNIT[runtime]]) : [];
    if (props.systemdUnits !== undefined && !props.systemdInput) {
      throw new ValidationError(this, 'systemdUnits is set but systemdInput is off; set systemdInput: true or remove systemdUnits.');
    }
    const config: FluentBitConfig = generateFluentBitConfig({
      by: this,
      stateDir: this.stateDir,
      collectorName: name,
      collectorNamespace: namespace,
      terminationGracePeriodSeconds: this.terminationGracePeriodSeconds,
      systemdUnits,
      outputs: props.outputs,
      httpPort: props.httpPort,
      flushSeconds: props.flushSeconds,
      graceSeconds: props.graceSeconds,
      schedulerCapSeconds: props.schedulerCapSeconds,
      schedulerBaseSeconds: props.schedulerBaseSeconds,
      logLevel: props.logLevel,
      memBufLimit: props.memBufLimit,
      storageMaxChunksUp: props.storageMaxChunksUp,
      storagePauseOnChunksOverlimit: props.storagePauseOnChunksOverlimit,
      parsers: props.parsers,
      multilineParsers: props.multilineParsers,
      storageBacklogMemLimit: props.storageBacklogMemLimit,
      refreshIntervalSeconds: props.refreshIntervalSeconds,
      // Adopting a collector that kept no offsets: no second copy of the logs on disk (see `adopt`).
      readFromHead: props.readFromHead ?? (props.adopt !== undefined && !props.adopt.completed ? false : undefined),
      useKubelet: props.useKubelet,
      kubeletPort: props.kubeletPort,
      kubernetesTlsVerify: props.kubernetesTlsVerify,
      forwardInputPort: props.forwardInputPort,
      inputs: props.inputs,
      filters: props.filters,
      kubernetesFilterPosition: props.kubernetesFilter?.position,
      kubernetesFilter: props.kubernetesFilter,
      excludeNamespaces: props.excludeNamespaces,
      excludePods: props.excludePods,
      excludeContainerLogPaths: props.excludeContainerLogPaths,
      extraConfig: props.extraConfig,
    });
    throwIfProblems(this, unsetEnvProblems(config, props));
    throwIfProblems(this, olderImageProblems(config, props.image, props.extraConfig));
    if (props.memBufLimit !== undefined && props.outputs.length >= 2 && sizeBytes(props.memBufLimit) > sizeBytes(RETRY_PUT_DOWN_LIMIT)) {
      addWarning(this, `memBufLimit "${props.memBufLimit}" with ${props.outputs.length} outputs: a chunk one output retries stays in memory `
        + 'until the input holds that much, so a destination that is down or refusing can fill storage.max_chunks_up and starve the others. '
        + `Remove memBufLimit (the collector then writes Mem_Buf_Limit ${RETRY_PUT_DOWN_LIMIT} on its tail and systemd inputs).`);
    }
    return config;
  }

  /** The host paths the collector reads (the logs, the journal, what extra inputs read) and its writable state directory. */
  private hostPaths(config: FluentBitConfig, runtime: NodeContainerRuntime): HostPathVolume[] {
    return [
      { name: 'varlog', hostPath: '/var/log', type: HostPathType.DIRECTORY, readOnly: true },
      ...(runtime === NodeContainerRuntime.DOCKER
        ? [{ name: 'docker-containers', hostPath: '/var/lib/docker/containers', type: HostPathType.DIRECTORY, readOnly: true }]
        : []),
      ...(config.readsJournal
        ? [
          { name: 'machine-id', hostPath: '/etc/machine-id', type: HostPathType.FILE, readOnly: true },
          // A volatile journal (nodes without /var/log/journal); created empty where journald keeps
          // a persistent one, which harms nothing in /run.
          { name: 'run-log-journal', hostPath: VOLATILE_JOURNAL_DIR, type: HostPathType.DIRECTORY_OR_CREATE, readOnly: true },
        ]
        : []),
      ...this.inputDirVolumes(config.readDirs, runtime),
      // The only writable mount: tail/systemd databases and the filesystem buffer.
      { name: 'state', hostPath: this.stateDir, type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false },
    ];
  }

  /** The outputs' credentials from Secrets and the downward-API variables the config reads. */
  private containerEnv(config: FluentBitConfig): { env: { [name: string]: AgentEnvValue }; fieldEnv: { [name: string]: AgentEnvFieldPath } } {
    const env: { [name: string]: AgentEnvValue } = {};
    for (const s of config.secretEnv) {
      env[s.envName] = AgentEnvValue.fromSecret(s.secretName, s.key);
    }
    const fieldEnv: { [name: string]: AgentEnvFieldPath } = {};
    for (const f of config.fieldEnv) {
      fieldEnv[f.envName] = FIELD_PATHS[f.fieldPath];
    }
    return { env, fieldEnv };
  }

  /** Read-only mounts for what the extra inputs read outside the directories mounted already. */
  private inputDirVolumes(dirs: readonly string[], runtime: NodeContainerRuntime): HostPathVolume[] {
    const covered = ['/var/log', ...(runtime === NodeContainerRuntime.DOCKER ? ['/var/lib/docker/containers'] : [])];
    const volumes: HostPathVolume[] = [];
    for (const dir of dirs) {
      if (covered.some((c) => dir === c || dir.startsWith(c + '/'))) continue;
      if (dir === '/' || dir === this.stateDir || this.stateDir.startsWith(dir + '/') || dir.startsWith(this.stateDir + '/')) {
        throw new ValidationError(this, `inputs read ${dir}, which would mount ${dir === '/' ? 'the host root' : 'over the state directory'}; `
          + 'give the tail input paths in a dedicated directory, e.g. /var/log/myapp/*.log.');
      }
      covered.push(dir);
      volumes.push({
        name: `input-${dir.replace(/^\//, '').replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`.slice(0, 63).replace(/-+$/, ''),
        hostPath: dir,
        type: HostPathType.DIRECTORY,
        readOnly: true,
      });
    }
    return volumes;
  }

  /** The DaemonSet covering the fleet. */
  public get daemonSet(): kplus.DaemonSet {
    return this.agent.daemonSet;
  }

  /** The ConfigMap holding fluent-bit.conf. */
  public get configMap(): kplus.ConfigMap {
    return this.agent.configMap!;
  }

  /** The collector's ServiceAccount. */
  public get serviceAccount(): kplus.IServiceAccount {
    return this.agent.serviceAccount;
  }

  /** The collector's name. */
  public get name(): string {
    return this.agent.name;
  }

  /** The collector's namespace. */
  public get namespace(): string {
    return this.agent.namespace;
  }

  private renderMonitor(options: LogCollectorMetricsOptions): { service?: ApiObject; monitor: ApiObject } {
    const interval = options.interval ?? '30s';
    if (!/^([0-9]+(ms|s|m|h))+$/.test(interval)) {
      throw new ValidationError(this, `metrics.interval "${interval}" is not a Prometheus duration such as "30s" or "1m".`);
    }
    const podSelector = { ...this.agent.identityLabels };
    const labels = sorted({ ...podSelector, 'app.kubernetes.io/component': 'log-collector', ...options.labels });
    // Scraped per pod: the node name is what tells collectors apart on a dashboard.
    const relabelings = [{ sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node', action: 'replace' }];
    const endpoint = { port: 'http', path: METRICS_PATH, interval, relabelings };
    const kind = options.kind ?? LogCollectorMonitorKind.SERVICE_MONITOR;
    if (kind === LogCollectorMonitorKind.POD_MONITOR) {
      return {
        monitor: new ApiObject(this, 'PodMonitor', {
          apiVersion: 'monitoring.coreos.com/v1',
          kind: 'PodMonitor',
          metadata: { name: this.agent.name, namespace: this.agent.namespace, labels },
          spec: {
            jobLabel: 'app.kubernetes.io/name',
            selector: { matchLabels: podSelector },
            namespaceSelector: { matchNames: [this.agent.namespace] },
            podMetricsEndpoints: [endpoint],
          },
        }),
      };
    }
    const serviceName = `${this.agent.name}-metrics`;
    const service = new ApiObject(this, 'MetricsService', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: serviceName, namespace: this.agent.namespace, labels: sorted({ ...podSelector, 'app.kubernetes.io/component': 'log-collector', ...options.labels }) },
      spec: {
        // Headless: Prometheus scrapes each pod through the Endpoints, never a load-balanced VIP.
        clusterIP: 'None',
        selector: podSelector,
        ports: [{ name: 'http', port: this.httpPort, targetPort: 'http', protocol: 'TCP' }],
      },
    });
    const monitor = new ApiObject(this, 'ServiceMonitor', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: this.agent.name, namespace: this.agent.namespace, labels },
      spec: {
        jobLabel: 'app.kubernetes.io/name',
        selector: { matchLabels: podSelector },
        namespaceSelector: { matchNames: [this.agent.namespace] },
        endpoints: [endpoint],
      },
    });
    return { service, monitor };
  }
}
brand(LogCollectorDaemonSet, 'LogCollectorDaemonSet');

/**
 * In kubelet mode the kubernetes filter verifies the kubelet's serving certificate against the
 * cluster CA with the same `tls.verify` as the API server's (plugins/filter_kubernetes/kube_meta.c,
 * flb_kube_network_init: one ctx->tls_verify for both). Whether that works depends on the
 * cluster, which synthesis cannot see: kubeadm's kubelets serve a self-signed certificate unless
 * serverTLSBootstrap is on, and then every record loses its metadata. So the choice is the user's.
 */
function kubeletTlsProblems(props: LogCollectorDaemonSetProps): string[] {
  if (props.useKubelet !== true || props.kubernetesTlsVerify !== undefined) return [];
  return ['useKubelet is on but kubernetesTlsVerify is not set: fluent-bit verifies the kubelet\'s serving certificate against the '
    + 'cluster CA, which fails where kubelets serve a self-signed certificate (kubeadm\'s default, without serverTLSBootstrap), '
    + 'and every record would lose its Kubernetes metadata. Set kubernetesTlsVerify: true where kubelet serving certificates are '
    + 'signed by the cluster CA (EKS, GKE, AKS, kubeadm with serverTLSBootstrap), false otherwise (it then applies to the API server too).'];
}

/**
 * A 4.x image (a release's props may name one while waves are held): no section, generated or in
 * extraConfig, may use an output plugin or a key added after 4.2.3, which that fluent-bit would
 * refuse at start ("unknown configuration property"). Inputs and filters are checked for the keys
 * every input or filter takes and for the plugins the collector writes itself.
 */
function olderImageProblems(config: FluentBitConfig, image: string | undefined, extraConfig: string | undefined): string[] {
  const major = /:v?([0-9]+)\.[0-9]+\.[0-9]+(@.*)?$/.exec(image ?? '')?.[1];
  if (major === undefined || Number(major) >= 5) return [];
  // extraConfig parsed without errors already (generateFluentBitConfig).
  const extra: readonly ParsedClassicSection[] = extraConfig !== undefined && extraConfig.trim() !== '' ? parseClassicConfig(extraConfig).sections : [];
  const sections = [...config.sections.map((s) => ({ s, where: '' })), ...extra.map((s) => ({ s, where: ` (extraConfig line ${s.line})` }))];
  return sections.flatMap(({ s, where }) => {
    const plugin = (s.entries.find((e) => e.key.toLowerCase() === 'name')?.value ?? '').toLowerCase();
    if (s.name === 'OUTPUT' && OUTPUT_PLUGINS_ADDED_SINCE_4_2_3.includes(plugin)) {
      return [`image ${image}: fluent-bit 4.x has no output plugin ${plugin}${where} (added in 5.x); use a 5.x image or another output.`];
    }
    if (s.name === 'INPUT' && INPUT_PLUGINS_ADDED_SINCE_4_2_3.includes(plugin)) {
      return [`image ${image}: fluent-bit 4.x has no input plugin ${plugin}${where} (added in 5.x); use a 5.x image or another input.`];
    }
    const added = (key: string) => (s.name === 'OUTPUT' ? isOutputKeyAddedSince423(plugin, key)
      : (s.name === 'INPUT' || s.name === 'FILTER') && isKeyAddedSince423(s.name, plugin, key));
    return s.entries.filter((e) => added(e.key))
      .map((e) => `image ${image}: the ${plugin} ${s.name.toLowerCase()}'s key ${e.key}${where} is not in fluent-bit 4.2.3 (added in 5.x), which would refuse it at start; `
        + 'use a 5.x image or remove the key.');
  });
}

/**
 * `${NAME}` in the rendered files (a record value, a label, extraConfig) that no environment
 * variable of the pod sets: fluent-bit would expand each to an empty string on every node. Set by
 * the pod: the outputs' Secret variables, the downward-API ones, `extraEnv`, what `envFrom` may
 * hold (any name, or those with its prefix) and what the runtime sets (HOSTNAME).
 */
function unsetEnvProblems(config: FluentBitConfig, props: LogCollectorDaemonSetProps): string[] {
  const set = new Set<string>([
    ...config.secretEnv.map((e) => e.envName), ...config.fieldEnv.map((e) => e.envName), ...Object.keys(props.extraEnv ?? {}), ...RUNTIME_ENV_VARS,
  ]);
  const fromSources = (n: string) => (props.envFrom ?? []).some((s) => s.prefix === undefined || n.startsWith(s.prefix));
  const unset = (r: { name: string; hasDefault: boolean }) => !r.hasDefault && !set.has(r.name) && !fromSources(r.name);
  // An output's option is reported by the output and the option; the rest by the file and line.
  const fromOutputs = (props.outputs ?? []).flatMap((o, i) => o._stringOptions().flatMap(([prop, value]) => envReferences(value).filter(unset)
    .map((r) => ({ name: r.name, message: `outputs[${i}] (FluentBitOutput ${o.kind}): ${prop} ${JSON.stringify(value)} ${unsetEnvFix(r.name)}` }))));
  const reported = new Set(fromOutputs.map((r) => r.name));
  const files: [string, string | undefined][] = [[CONFIG_FILE_NAME, config.text], [CUSTOM_PARSERS_FILE_NAME, config.parsersText]];
  return [...fromOutputs.map((r) => r.message), ...files.flatMap(([file, text]) => envReferences(text ?? '')
    .filter((r) => unset(r) && !reported.has(r.name))
    .map((r) => `\${${r.name}} in ${file} line ${r.line} ("${r.text}") ${unsetEnvFix(r.name)}`))];
}

/** What an unset `${name}` does, and the fix. */
function unsetEnvFix(name: string): string {
  return 'names no environment variable of the pod: fluent-bit would write an empty string in its place. Set it with extraEnv '
    + `(e.g. extraEnv: { ${name}: AgentEnvValue.fromValue('...') }), give a default (\${${name}:-value}) or write the value itself.`;
}

/**
 * The state directory is a writable hostPath mounted at its own path: it cannot be a path the
 * collector already mounts (the API server refuses two mounts at one path, and the base would
 * report it without naming stateDir).
 */
function stateDirProblems(props: LogCollectorDaemonSetProps): string[] {
  const dir = props.stateDir;
  if (typeof dir !== 'string') return [];
  const taken = new Map<string, string>([
    ['/var/log', 'the read-only container log directory'],
    [CONFIG_DIR, 'the config directory'],
    ['/var/lib/docker/containers', 'the Docker container log directory'],
    ['/etc/machine-id', 'the machine id the systemd input reads'],
    [VOLATILE_JOURNAL_DIR, 'the volatile journal the systemd input reads'],
  ]);
  const what = taken.get(dir.replace(/\/+$/, ''));
  return what ? [`stateDir "${dir}" is ${what}, which the collector already mounts; choose a directory of its own, e.g. "/var/lib/${props.name ?? 'log-collector'}"`] : [];
}

/** The ConfigMap data of a rendered config: fluent-bit.conf, the custom parsers file, the Lua scripts. */
function configDataOf(config: FluentBitConfig): { [file: string]: string } {
  return {
    [CONFIG_FILE_NAME]: config.text,
    ...(config.parsersText !== undefined ? { [CUSTOM_PARSERS_FILE_NAME]: config.parsersText } : {}),
    ...config.extraFiles,
  };
}

/** The refusals of values the base agent does not see (names, labels, the monitor, the user, the state directory). */
function valueProblems(props: LogCollectorDaemonSetProps): string[] {
  return [
    ...(props.name !== undefined ? checkDnsLabel('name', props.name) : []),
    // Checked here as well as in the base: the namespace goes into the fluent-bit config, rendered first.
    ...(props.namespace !== undefined ? checkDnsLabel('namespace', props.namespace) : []),
    ...(typeof props.name === 'string' && props.metrics && props.metrics.kind !== LogCollectorMonitorKind.POD_MONITOR
      ? checkServiceName('name', props.name, `${props.name}-metrics`) : []),
    ...(props.image !== undefined ? checkImage('image', props.image) : []),
    ...(typeof props.image === 'string' ? collectorImageProblems('image', props.image) : []),
    ...checkLabels('labels', props.labels),
    ...checkLabels('metrics.labels', props.metrics?.labels),
    ...checkPrometheusDuration('metrics.interval', props.metrics?.interval),
    ...(props.priorityClassName !== undefined ? checkDnsSubdomain('priorityClassName', props.priorityClassName) : []),
    ...checkTolerations('tolerations', props.tolerations),
    ...checkResources('resources', props.resources),
    // The API server's IsValidUserID / IsValidGroupID: 0 to 2^31 - 1.
    ...checkInt32('runAsUser', props.runAsUser),
    ...checkInt32('runAsGroup', props.runAsGroup),
    ...checkInt64('terminationGracePeriodSeconds', props.terminationGracePeriodSeconds),
    ...stateDirProblems(props),
    ...kubeletTlsProblems(props),
  ];
}

/** Why a log collector never surges: the props refuse it, and so does the late check on a patched DaemonSet. */
const COLLECTOR_SURGE = 'the new pod would start beside the old one on each node, two fluent-bit processes on one tail database and one filesystem buffer '
  + '(duplicated logs, corrupted offsets)';

/**
 * The user fluent-bit runs as (root unless given), refusing a surging update strategy and a group
 * without a non-root user.
 */
function collectorUser(scope: IConstruct, props: LogCollectorDaemonSetProps, strategy: UpdateStrategy): number {
  if (strategy.surges) {
    throw new ValidationError(scope, `updateStrategy ${strategy.toString()} surges: ${COLLECTOR_SURGE}. `
      + 'Use a maxUnavailable pace instead, e.g. UpdateStrategy.steady(), fast() or oneAtATime().');
  }
  const runAsUser = props.runAsUser ?? 0;
  if (!Number.isInteger(runAsUser) || runAsUser < 0) {
    throw new ValidationError(scope, `runAsUser ${runAsUser} must be a whole number >= 0.`);
  }
  if (props.runAsGroup !== undefined && runAsUser === 0) {
    throw new ValidationError(scope, 'runAsGroup is only used with a non-root runAsUser; set runAsUser or remove runAsGroup.');
  }
  return runAsUser;
}

/** The fluent-bit container: image, command, ports, resources, user and probes. */
function collectorContainer(props: LogCollectorDaemonSetProps, config: FluentBitConfig, runAsUser: number) {
  return {
    containerName: CONTAINER_NAME,
    image: props.image ?? FLUENT_BIT_IMAGE,
    command: ['/fluent-bit/bin/fluent-bit'],
    args: ['-c', `${CONFIG_DIR}/${CONFIG_FILE_NAME}`],
    ports: config.containerPorts.map((p) => ({ name: p.name, containerPort: p.port })),
    resources: props.resources,
    runAsRoot: runAsUser === 0,
    runAsUser,
    runAsGroup: runAsUser === 0 ? 0 : (props.runAsGroup ?? runAsUser),
    readOnlyRootFilesystem: true,
    // Ready = the outputs do not refuse records (fluent-bit's health check counts output errors,
    // see HEALTH_PATH): a config the destination refuses (Loki's 400) shows as unready pods and
    // pauses a rollout. A destination outage, and a bad credential (401, 403), only make outputs
    // retry: pods stay ready (an outage must not take every collector out at once),
    // LogCollectorOutputStalled fires and a wave gate's delivery checks fail.
    readiness: AgentProbe.fromHttpGet(HEALTH_PATH, {
      port: config.httpPort, initialDelaySeconds: secs(5), periodSeconds: secs(10), timeoutSeconds: secs(5), failureThreshold: 3,
    }),
    // Lenient: only a hung process (HTTP server silent for a minute) is restarted.
    liveness: AgentProbe.fromHttpGet(LIVENESS_PATH, {
      port: config.httpPort, initialDelaySeconds: secs(10), periodSeconds: secs(10), timeoutSeconds: secs(5), failureThreshold: 6,
    }),
    // The HTTP server listens only once every plugin is initialized, and the kubernetes filter
    // first waits for DNS (up to KUBERNETES_DNS_RETRIES × KUBERNETES_DNS_WAIT_SECONDS): liveness
    // starts after this probe succeeds, so a node booting before CoreDNS answers does not
    // restart-loop its collector.
    startup: AgentProbe.fromHttpGet(LIVENESS_PATH, {
      port: config.httpPort,
      periodSeconds: secs(STARTUP_PERIOD_SECONDS),
      timeoutSeconds: secs(5),
      failureThreshold: Math.ceil((KUBERNETES_DNS_RETRIES * KUBERNETES_DNS_WAIT_SECONDS + STARTUP_MARGIN_SECONDS) / STARTUP_PERIOD_SECONDS),
    }),
  };
}

/** The kubernetes filter's metadata lookups, and the kubelet's pod list in kubelet mode. */
function collectorRbacRules(props: LogCollectorDaemonSetProps): AgentPolicyRule[] {
  return [
    // The kubernetes filter's metadata lookups.
    { apiGroups: [''], resources: ['namespaces', 'pods'], verbs: ['get', 'list', 'watch'] },
    // Kubelet mode: the kubelet authorizes GET /pods as `get` on nodes/proxy.
    ...(props.useKubelet ? [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] }] : []),
  ];
}

const RUNTIME_UNIT: Record<NodeContainerRuntime, string> = {
  [NodeContainerRuntime.CONTAINERD]: 'containerd.service',
  [NodeContainerRuntime.CRI_O]: 'crio.service',
  [NodeContainerRuntime.DOCKER]: 'docker.service',
};

const FIELD_PATHS: Record<string, AgentEnvFieldPath> = {
  'status.hostIP': AgentEnvFieldPath.NODE_IP,
};

/** Startup probe period, and the time it allows beyond the kubernetes filter's DNS wait (the API server check, the rest of the init). */
const STARTUP_PERIOD_SECONDS = 5;
const STARTUP_MARGIN_SECONDS = 60;

function secs(n: number): Duration {
  return Duration.seconds(n);
}

function sorted(record: { [key: string]: string }): { [key: string]: string } {
  const out: { [key: string]: string } = {};
  for (const key of Object.keys(record).sort()) out[key] = record[key];
  return out;
}

/**
 * The collector's tolerations with `tolerateAllTaints: false`: `karpenter.sh/disrupted:NoSchedule` first. Karpenter
 * neither evicts nor waits for a pod that tolerates it (kubernetes-sigs/karpenter pkg/utils/pod/scheduling.go,
 * IsDrainable and IsEvictable), so the collector keeps reading the workloads' logs until they are gone, and stops
 * with the instance (the kubelet's graceful node shutdown gives it its grace period then).
 */
function collectorTolerations(props: LogCollectorDaemonSetProps): AgentToleration[] {
  const own = props.tolerations ?? [];
  if (own.some((t) => toleratesKarpenterDisrupted([{ key: t.key, operator: t.operator, value: t.value, effect: t.effect }]))) return own;
  return [{ key: KARPENTER_DISRUPTED_TAINT.key, operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE }, ...own];
}
