/**
 * Generates the fluent-bit classic-mode configuration of the log collector.
 *
 * Every key below was checked against the fluent-bit documentation (administration/monitoring,
 * inputs/tail, inputs/systemd, filters/kubernetes, outputs/*) and is one the 5.1.1 sources
 * declare, as 4.2.3's do (the [SERVICE] keys src/flb_config.c service_configs reads; the input
 * and filter keys in input-filter-keys.ts), which the tests check every section against.
 *
 * Pure module: no cdk8s imports, no clock, no randomness.
 */
import { ClassicEntry, ClassicSection, onOff, ParsedClassicConfig, ParsedClassicSection, parseClassicConfig, renderClassicConfig } from './classic-format';
import { extraSectionKeyProblems } from './extra-config-keys';
import { FluentBitFilter } from './filters';
import { FluentBitInput } from './inputs';
import { FluentBitOutput } from './outputs';
import { BUILTIN_MULTILINE_PARSERS, ParserCatalog, parserCatalog, parserReferences, STOCK_PARSERS } from './parser-checks';
import { FluentBitMultilineParser, FluentBitParser } from './parsers';
import { SecretEnvVar } from './rendered-output';
import { routingProblems } from './tag-routing';
import { RefusedBy, ValidationError } from '../validation/errors';
import { isPort } from '../validation/values';

/** The pinned image. Probe paths and config keys below are those of this version. */
export const FLUENT_BIT_IMAGE = 'cr.fluentbit.io/fluent/fluent-bit:5.1.1';

/**
 * Readiness: `/api/v1/health` answers 200 `ok`, or 500 `error` once the outputs
 * exceed HC_Errors_Count errors or HC_Retry_Failure_Count failed retries within
 * HC_Period seconds (fluent-bit 5.1.1 src/http_server/api/v1/health.c, cb_health and
 * flb_hs_health_state_get; is_healthy in 4.2.3, the same rule). It only reflects output
 * health when `Health_Check On`; without it the endpoint always says ok.
 *
 * What it does not count: retries. A destination that is down, unreachable or
 * answering 5xx makes out_loki, out_http, out_es and the others return FLB_RETRY, which
 * raises fluentbit_output_retries_total only; so does a bad credential: out_loki retries
 * every status but 400 and 2xx (plugins/out_loki/loki.c, cb_loki_flush), a 401 or 403
 * included (measured: health 200 throughout while Loki answered 401). So readiness means
 * "the outputs are not refusing what this collector sends" (an error: Loki's 400, a
 * malformed record), a fault of this pod's config or version that should pause a rollout;
 * an outage of the destination, which every collector sees at once, leaves them ready and
 * shows in the LogCollectorOutputStalled alert instead, and a wave that cannot deliver
 * (a bad credential as well as an outage) fails its gate's delivery checks.
 */
export const HEALTH_PATH = '/api/v1/health';
/**
 * Liveness: `/api/v1/uptime` answers as long as the HTTP server runs. Deliberately
 * not the health endpoint: restarting the collector because Loki is down fixes
 * nothing and throws away in-memory state.
 */
export const LIVENESS_PATH = '/api/v1/uptime';
/** Prometheus text exposition of the v2 (cmetrics) metrics, including storage metrics. */
export const METRICS_PATH = '/api/v2/metrics/prometheus';

/**
 * `scheduler.cap`: the longest a chunk waits before its next retry. fluent-bit waits
 * uniform(base, min(cap, base × 2^retry)) + 1 seconds (src/flb_scheduler.c, backoff_full_jitter and
 * flb_sched_request_create); its default cap, 2,000 s, leaves a backlog waiting up to 33 minutes
 * after the destination is back (measured: after a 60 s outage the last buffered line arrived 145 s
 * after recovery; after 17 minutes, 10.8% of the lines still waited 641 s after).
 *
 * Why 60 and not less: every waiting chunk retries on its own, on average every (base + cap) / 2 s
 * once at the cap, and the collector starts one chunk per flush and log file while the destination
 * is down (measured with three files: 540 after 3 minutes, 2,381 after 17). Thousands of nodes do so
 * at once, and that is the load a destination meets while it recovers: 5,000 nodes × 2,000 chunks
 * / 33 s is about 300,000 requests a second at cap 60, twice that at cap 30. Full jitter spreads
 * them evenly over the cap, a refused or 503 request is cheap, and Loki's ingestion limits answer
 * 429, which out_loki retries. A minute keeps the wait after recovery near a minute (measured:
 * everything in 53.3 s after a 61 s outage, 137.3 s after 17 minutes, where the destination's
 * intake set the pace) at half the retry load of a 30 s cap; raise it for a fleet whose
 * destination cannot take that, lower it where logs must arrive sooner.
 */
export const SCHEDULER_CAP_SECONDS = 60;
/** `scheduler.base`: fluent-bit's own default; the first retry comes 6 to 11 s after a failed flush. */
export const SCHEDULER_BASE_SECONDS = 5;
/** fluent-bit's default cap (include/fluent-bit/flb_scheduler.h FLB_SCHED_CAP), the most allowed here. */
export const MAX_SCHEDULER_CAP_SECONDS = 2000;

/** Output errors within HC_PERIOD_SECONDS beyond which the collector is unready. */
export const HC_ERRORS_COUNT = 5;
/** Failed retries beyond which it is unready: never (health.c compares with `>` to an int). */
export const HC_RETRY_FAILURE_COUNT = 2147483647;
/** The health check's window. */
export const HC_PERIOD_SECONDS = 60;

/**
 * The kubernetes filter resolves the API server's name before the engine starts: up to
 * DNS_Retries lookups, DNS_Wait_Time seconds apart (plugins/filter_kubernetes/kube_meta.c,
 * wait_for_dns), and fluent-bit's HTTP server listens only after every filter is initialized
 * (src/flb_engine.c, flb_engine_start). fluent-bit's 6 × 30 s would leave the probes silent for
 * 3 minutes on a node that boots before CoreDNS answers. Checking every 5 s finds DNS as soon as it
 * answers; after 2 minutes the filter starts without it (the init ignores the failure) and looks
 * metadata up record by record. The collector's startup probe covers this wait.
 */
export const KUBERNETES_DNS_RETRIES = 24;
export const KUBERNETES_DNS_WAIT_SECONDS = 5;

/**
 * The volatile journal's directory, mounted read-only for the systemd inputs (the persistent one,
 * /var/log/journal, is under the /var/log mount). They give no Path, so sd_journal_open
 * (SD_JOURNAL_LOCAL_ONLY) searches both and skips a missing one.
 */
export const VOLATILE_JOURNAL_DIR = '/run/log/journal';

/** Where the ConfigMap is mounted. Not /fluent-bit/etc itself: that would hide the image's parsers.conf. */
export const CONFIG_DIR = '/fluent-bit/etc/conf';
export const CONFIG_FILE_NAME = 'fluent-bit.conf';
/** The image's stock parsers (docker, cri, json, apache, ...), used by pod `fluentbit.io/parser` annotations. */
export const STOCK_PARSERS_FILE = '/fluent-bit/etc/parsers.conf';
/** ConfigMap key (and file under CONFIG_DIR) of the custom parsers, when there are any. */
export const CUSTOM_PARSERS_FILE_NAME = 'parsers.conf';

/**
 * Seconds kept free between fluent-bit's own shutdown deadline (Grace) and the
 * kubelet's SIGKILL (terminationGracePeriodSeconds), and the minimum time a
 * last flush is given to reach its destination.
 */
export const GRACE_MARGIN_SECONDS = 5;

/** An environment variable the pod takes from its own status/spec (downward API). */
export interface FieldEnvVar {
  readonly envName: string;
  readonly fieldPath: string;
}

export interface FluentBitConfigOptions {
  /** Directory (same path on host and in the container) holding tail/systemd databases and the filesystem buffer. */
  readonly stateDir: string;
  /** DaemonSet name: its pods are `<name>-xxxxx`, used to exclude the collector's own logs. */
  readonly collectorName: string;
  /** Namespace of the collector, used to exclude its own logs. */
  readonly collectorNamespace: string;
  /** Destinations; at least one. */
  readonly outputs: readonly FluentBitOutput[];
  /** HTTP server port (health, metrics). Default 2020. */
  readonly httpPort?: number;
  /** Flush interval in seconds (may be fractional). Default 1. */
  readonly flushSeconds?: number;
  /** The pod's terminationGracePeriodSeconds. Default 60. */
  readonly terminationGracePeriodSeconds?: number;
  /** fluent-bit Grace; default terminationGracePeriodSeconds - GRACE_MARGIN_SECONDS. */
  readonly graceSeconds?: number;
  /** `scheduler.cap`: the longest wait (seconds) before a chunk's next retry. Default SCHEDULER_CAP_SECONDS. */
  readonly schedulerCapSeconds?: number;
  /** `scheduler.base`: the shortest wait (seconds) before a retry, doubled each retry up to the cap. Default SCHEDULER_BASE_SECONDS. */
  readonly schedulerBaseSeconds?: number;
  /** Log level of fluent-bit itself. Default 'info'. */
  readonly logLevel?: 'off' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
  /**
   * Mem_Buf_Limit of every input. Unset by default: with `storage.type filesystem` it never
   * pauses an input (flb_input_chunk.c returns before the memory check); it only decides whether a
   * retried chunk is put down. storageMaxChunksUp bounds memory instead.
   */
  readonly memBufLimit?: string;
  /** Chunks (about 2 MB each) held in memory at once, all inputs together (`storage.max_chunks_up`). Default 64. */
  readonly storageMaxChunksUp?: number;
  /** Pause an input instead of writing new chunks straight to disk once max_chunks_up is reached. Default false. */
  readonly storagePauseOnChunksOverlimit?: boolean;
  /** Custom `[PARSER]`s, rendered into the parsers file. */
  readonly parsers?: readonly FluentBitParser[];
  /** Custom `[MULTILINE_PARSER]`s, rendered into the parsers file. */
  readonly multilineParsers?: readonly FluentBitMultilineParser[];
  /** Memory used to load backlog chunks from the filesystem buffer after a restart. Default '5M'. */
  readonly storageBacklogMemLimit?: string;
  /** Seconds between scans for new log files. Default 10. */
  readonly refreshIntervalSeconds?: number;
  /** Read files that have no offset in the DB from their start (a new node's existing logs). Default true. */
  readonly readFromHead?: boolean;
  /** systemd units to read from the journal; undefined or empty = no systemd input. */
  readonly systemdUnits?: readonly string[];
  /** Get pod metadata from the local kubelet instead of the API server. Default false. */
  readonly useKubelet?: boolean;
  /** Kubelet port. Default 10250. */
  readonly kubeletPort?: number;
  /** Verify TLS certificates of the API server and kubelet. Default true. */
  readonly kubernetesTlsVerify?: boolean;
  /** Port of an optional forward input (applications push logs to the collector). */
  readonly forwardInputPort?: number;
  /** Extra inputs (more files, more systemd units). */
  readonly inputs?: readonly FluentBitInput[];
  /** User filters, in order. */
  readonly filters?: readonly FluentBitFilter[];
  /** Whether the kubernetes filter runs before (default) or after the user filters. */
  readonly kubernetesFilterPosition?: 'before-user-filters' | 'after-user-filters';
  /** The kubernetes filter's options. */
  readonly kubernetesFilter?: KubernetesFilterSettings;
  /** Namespaces whose container logs are not read (tail Exclude_Path). */
  readonly excludeNamespaces?: readonly string[];
  /** Pods (namespace + name prefix) whose container logs are not read. */
  readonly excludePods?: readonly { readonly namespace: string; readonly podNamePrefix: string }[];
  /** More Exclude_Path globs of the container-log tail input. */
  readonly excludeContainerLogPaths?: readonly string[];
  /** Raw classic-mode text appended after the generated sections (escape hatch). */
  readonly extraConfig?: string;
  /** Who refuses inconsistent options (the collector construct). @default "LogCollector" */
  readonly by?: RefusedBy;
}

/** Options of the kubernetes filter (keys of plugins/filter_kubernetes in 5.1.1, all in 4.2.3 too). */
export interface KubernetesFilterSettings {
  /** Merge_Log: parse a JSON `log` into the record. Default true. */
  readonly mergeLog?: boolean;
  /** Keep_Log: keep the original `log` after merging. Default false. */
  readonly keepLog?: boolean;
  /** K8S-Logging.Parser: honour the pod annotation fluentbit.io/parser. Default true. */
  readonly allowParserAnnotation?: boolean;
  /** K8S-Logging.Exclude: honour the pod annotation fluentbit.io/exclude. Default true. */
  readonly allowExcludeAnnotation?: boolean;
  /** Buffer_Size of the metadata HTTP client. Default: fluent-bit's (32k) from the API server, '0' (unlimited) from the kubelet. */
  readonly bufferSize?: string;
  /** Labels: add pod labels. Default true. */
  readonly labels?: boolean;
  /** Annotations: add pod annotations. Default true. */
  readonly annotations?: boolean;
}

export interface FluentBitConfig {
  /** The complete fluent-bit.conf text. */
  readonly text: string;
  /** The custom parsers file (CUSTOM_PARSERS_FILE_NAME), undefined when there are no custom parsers. */
  readonly parsersText?: string;
  /** Its sections. */
  readonly parserSections: readonly ClassicSection[];
  /** The generated sections (without extraConfig). */
  readonly sections: readonly ClassicSection[];
  /** fluent-bit Grace (seconds). */
  readonly graceSeconds: number;
  readonly flushSeconds: number;
  readonly httpPort: number;
  /** Ports fluent-bit listens on, by name. */
  readonly containerPorts: readonly { readonly name: string; readonly port: number }[];
  /** Env vars the pod takes from Secrets (credentials); the config only holds `${NAME}`. */
  readonly secretEnv: readonly SecretEnvVar[];
  /** Env vars the pod takes from the downward API. */
  readonly fieldEnv: readonly FieldEnvVar[];
  /** Every path fluent-bit writes to (all under stateDir). */
  readonly writePaths: readonly string[];
  /** More ConfigMap files (Lua scripts), file name → content. */
  readonly extraFiles: { readonly [name: string]: string };
  /** Host directories the extra inputs read (to mount read-only). */
  readonly readDirs: readonly string[];
  /** Whether any input reads the systemd journal (needs /etc/machine-id). */
  readonly readsJournal: boolean;
}

/**
 * fluent-bit's Grace for a pod grace period: the pod grace minus a margin, and
 * never shorter than one flush plus a margin (else the last buffered records
 * cannot be sent before fluent-bit gives up).
 */
export function graceSecondsFor(terminationGracePeriodSeconds: number, flushSeconds: number, explicitGrace?: number, by: RefusedBy = 'LogCollector'): number {
  if (!Number.isInteger(terminationGracePeriodSeconds) || terminationGracePeriodSeconds < 0) {
    throw new ValidationError(by, `terminationGracePeriodSeconds ${terminationGracePeriodSeconds} must be a whole number of seconds >= 0.`);
  }
  const grace = explicitGrace ?? terminationGracePeriodSeconds - GRACE_MARGIN_SECONDS;
  if (!Number.isInteger(grace)) {
    throw new ValidationError(by, `graceSeconds ${grace} must be a whole number of seconds.`);
  }
  const minGrace = Math.ceil(flushSeconds) + GRACE_MARGIN_SECONDS;
  if (grace < minGrace) {
    throw new ValidationError(by, `fluent-bit Grace would be ${grace}s, below one flush (${flushSeconds}s) plus a ${GRACE_MARGIN_SECONDS}s margin; `
      + `raise terminationGracePeriodSeconds to at least ${minGrace + GRACE_MARGIN_SECONDS} (now ${terminationGracePeriodSeconds}) or lower flushSeconds.`);
  }
  if (grace + GRACE_MARGIN_SECONDS > terminationGracePeriodSeconds) {
    throw new ValidationError(by, `graceSeconds ${grace} plus a ${GRACE_MARGIN_SECONDS}s margin exceeds terminationGracePeriodSeconds `
      + `${terminationGracePeriodSeconds}: the kubelet would SIGKILL fluent-bit mid-flush. Lower graceSeconds to at most `
      + `${terminationGracePeriodSeconds - GRACE_MARGIN_SECONDS} or raise terminationGracePeriodSeconds.`);
  }
  return grace;
}

const SIZE_PATTERN = /^[0-9]+(\.[0-9]+)?([KMG]B?)?$/i;
const UNIT_PATTERN = /^[A-Za-z0-9@._:\\-]+$/;

/** Throws a ValidationError under the collector's context. */
type Fail = (msg: string) => never;

/** The checked [SERVICE] and buffering settings the sections are rendered from. */
interface CheckedSettings {
  /** stateDir without trailing slashes. */
  readonly stateDir: string;
  readonly httpPort: number;
  readonly flushSeconds: number;
  /** fluent-bit Grace (seconds). */
  readonly grace: number;
  /** scheduler.cap and scheduler.base (seconds). */
  readonly schedulerCap: number;
  readonly schedulerBase: number;
  readonly maxChunksUp: number;
  /** storage.backlog.mem_limit. */
  readonly backlog: string;
  /** Refresh_Interval of the container-log input. */
  readonly refresh: number;
  /** The filesystem-buffering entries every input carries. */
  readonly inputStorage: readonly (readonly [string, string])[];
  /** The same for the inputs that read files or the journal (tail, systemd): with two outputs or more, the retry put-down. */
  readonly fileInputStorage: readonly (readonly [string, string])[];
}

/** Files and directories under stateDir that fluent-bit writes. */
interface StatePaths {
  readonly storage: string;
  readonly containersDb: string;
  readonly systemdDb: string;
}

/** Claims a plugin alias for `what`, failing when it is taken. */
type ClaimAlias = (alias: string, what: string) => void;

/** A parser name a plugin refers to, and where (for the error message). */
interface ParserRef {
  readonly what: string;
  readonly name: string;
  readonly multiline: boolean;
}

/** The env var the kubernetes filter reaches the node's kubelet by. */
const KUBELET_NODE_IP_ENV: FieldEnvVar = { envName: 'NODE_IP', fieldPath: 'status.hostIP' };

/** The kubelet's port when kubeletPort is unset. */
const DEFAULT_KUBELET_PORT = 10250;

/**
 * `Mem_Buf_Limit` of the inputs that read files or the journal when the collector has two outputs or
 * more: a destination that is down or refusing must not stop the others.
 *
 * A chunk routed to two outputs stays in memory ("up") while either of them retries it: fluent-bit
 * puts a retried chunk down to the filesystem only when its task has one route, or when the input is
 * over Mem_Buf_Limit and the task has one user left (5.1.1 src/flb_task.c, flb_task_retry_create;
 * src/flb_input_chunk.c, flb_input_chunk_set_up_down), and task routes are never removed. With
 * Mem_Buf_Limit unset, the chunks one output retries fill storage.max_chunks_up, no new chunk can
 * be brought up, and every output starves: measured with Loki answering 204 and a second output
 * answering 401 (or not listening), Loki received nothing more from 25 s into the fault to its end,
 * and the same in the other direction. With a small limit the input is "over" it whenever it holds
 * 8 KB in memory, so a chunk goes down at its next retry once the other outputs have it (one it
 * failed before they had it stays up until its second attempt); in filesystem mode the limit never pauses
 * an input (flb_input_chunk_protect returns first) and a new chunk goes down only when it is full.
 * Not on the forward input: there Mem_Buf_Limit also caps the ingress queue (src/flb_input_ingest.c).
 */
export const RETRY_PUT_DOWN_LIMIT = '8K';

/** `storage.max_chunks_up` unless `storageMaxChunksUp` says otherwise (fluent-bit's own default is 128). */
export const DEFAULT_STORAGE_MAX_CHUNKS_UP = 64;

/** Build the configuration. Throws on inconsistent options, naming the option and the fix. */
export function generateFluentBitConfig(options: FluentBitConfigOptions): FluentBitConfig {
  const by = options.by ?? 'LogCollector';
  const fail = (msg: string): never => {
    throw new ValidationError(by, msg);
  };

  checkOutputs(fail, options.outputs);
  const settings = checkSettings(fail, options, by);
  const parsers = checkCustomParsers(fail, options.parsers ?? [], options.multilineParsers ?? []);
  const containerPorts = containerPortsFor(fail, settings.httpPort, options.forwardInputPort);
  const paths = statePaths(settings.stateDir);
  const writePaths = [paths.storage, paths.containersDb];
  const sections: ClassicSection[] = [
    renderService(options, settings, paths.storage, parsers.sections.length > 0),
    renderContainerLogInput(options, settings, paths.containersDb, containerLogExcludes(fail, options)),
  ];
  const units = options.systemdUnits ?? [];
  checkSystemdUnits(fail, units);
  if (units.length > 0) {
    writePaths.push(paths.systemdDb);
    sections.push(renderSystemdInput(units, paths.systemdDb, settings));
  }
  if (options.forwardInputPort !== undefined) {
    sections.push(renderForwardInput(options.forwardInputPort, settings));
  }

  const claimAlias = aliasClaimer(fail, sections);
  const inputs = renderExtraInputs(options.inputs ?? [], claimAlias, settings);
  sections.push(...inputs.sections);
  writePaths.push(...inputs.writePaths);
  const useKubelet = checkKubelet(fail, options);
  const kubernetesFilter = renderKubernetesFilter(fail, options, useKubelet);
  const filters = renderUserFilters(fail, options.filters ?? [], claimAlias);
  // User filters, in the order given; the kubernetes filter before them (they can use
  // $kubernetes['...']) or after them (they see the raw record, and records they drop are never looked up).
  if ((options.kubernetesFilterPosition ?? 'before-user-filters') === 'before-user-filters') {
    sections.push(kubernetesFilter, ...filters.sections);
  } else {
    sections.push(...filters.sections, kubernetesFilter);
  }
  checkParserRefs(fail, [...inputs.parserRefs, ...filters.parserRefs], parsers.catalog);
  const outputs = renderOutputs(fail, options.outputs, claimAlias, settings.stateDir);
  sections.push(...outputs.sections);
  writePaths.push(...outputs.writePaths);

  const text = renderMainConfig(sections, settings.stateDir) + extraConfigText(fail, options.extraConfig, parsers.catalog);
  const routed = options.outputs.map((o, i) => ({ what: `outputs[${i}] (FluentBitOutput ${o.kind})`, prop: 'match', match: o.match }));
  for (const problem of routingProblems(sections, options.extraConfig, routed)) fail(problem);
  const parsersText = parsers.sections.length > 0
    ? renderClassicConfig(parsers.sections, ['Custom parsers generated by cdk8s-node-agents (LogCollectorDaemonSet), named by Parsers_File.'])
    : undefined;

  return {
    text,
    parsersText,
    parserSections: parsers.sections,
    sections,
    graceSeconds: settings.grace,
    flushSeconds: settings.flushSeconds,
    httpPort: settings.httpPort,
    containerPorts,
    secretEnv: outputs.secretEnv,
    fieldEnv: useKubelet ? [KUBELET_NODE_IP_ENV] : [],
    writePaths,
    extraFiles: filters.extraFiles,
    readDirs: [...new Set(inputs.readDirs)].sort(),
    readsJournal: units.length > 0 || inputs.readsJournal,
  };
}

/** At least one output, and none with problems of its own. */
function checkOutputs(fail: Fail, outputs: readonly FluentBitOutput[]): void {
  if (outputs.length === 0) {
    fail('outputs is empty: the collector would read every log on the node and drop it. '
      + 'Add at least one output, e.g. FluentBitOutput.loki({ host: "loki-gateway.monitoring.svc" }).');
  }
  // The outputs' own problems, named by the option as written in the factory call.
  const outputProblems = outputs.flatMap((o, i) => o._problems().map((m) => `outputs[${i}] (FluentBitOutput ${o.kind}): ${m}`));
  if (outputProblems.length === 1) fail(outputProblems[0]);
  if (outputProblems.length > 1) fail(`${outputProblems.length} problems:\n  - ${outputProblems.join('\n  - ')}`);
}

/** The state directory, the HTTP port, flush, Grace, buffering and refresh settings, checked and defaulted. */
function checkSettings(fail: Fail, options: FluentBitConfigOptions, by: RefusedBy): CheckedSettings {
  if (!/^\/[^\s]*$/.test(options.stateDir) || options.stateDir === '/' || /\/\.\.?(\/|$)/.test(options.stateDir)) {
    fail(`stateDir ${JSON.stringify(options.stateDir)} must be an absolute path below / without spaces or '..'.`);
  }
  const stateDir = options.stateDir.replace(/\/+$/, '');
  const httpPort = options.httpPort ?? 2020;
  const flushSeconds = options.flushSeconds ?? 1;
  checkPort(fail, 'httpPort', httpPort);
  if (!(flushSeconds > 0) || !Number.isFinite(flushSeconds)) {
    fail(`flushSeconds ${flushSeconds} must be a positive number of seconds.`);
  }
  const grace = graceSecondsFor(options.terminationGracePeriodSeconds ?? 60, flushSeconds, options.graceSeconds, by);
  const { schedulerCap, schedulerBase } = checkScheduler(fail, options);
  const memBufLimit = options.memBufLimit === undefined ? undefined : checkSize(fail, 'memBufLimit', options.memBufLimit);
  const maxChunksUp = options.storageMaxChunksUp ?? DEFAULT_STORAGE_MAX_CHUNKS_UP;
  if (!Number.isInteger(maxChunksUp) || maxChunksUp < 1) {
    fail(`storageMaxChunksUp ${maxChunksUp} must be a whole number >= 1 (chunks of about 2 MB each).`);
  }
  const pauseOnOverlimit = onOff(options.storagePauseOnChunksOverlimit ?? false);
  // The settings that bound an input's memory with filesystem buffering (storage.type must come
  // first: setting it to anything but filesystem resets pause_on_chunks_overlimit).
  const inputStorage: [string, string][] = [
    ['storage.type', 'filesystem'],
    ['storage.pause_on_chunks_overlimit', pauseOnOverlimit],
    ...(memBufLimit === undefined ? [] : [['Mem_Buf_Limit', memBufLimit] as [string, string]]),
  ];
  const putDown = memBufLimit === undefined && options.outputs.length >= 2;
  const fileInputStorage = putDown ? [...inputStorage, ['Mem_Buf_Limit', RETRY_PUT_DOWN_LIMIT] as [string, string]] : inputStorage;
  const backlog = checkSize(fail, 'storageBacklogMemLimit', options.storageBacklogMemLimit ?? '5M');
  const refresh = options.refreshIntervalSeconds ?? 10;
  if (!Number.isInteger(refresh) || refresh < 1) {
    fail(`refreshIntervalSeconds ${refresh} must be a whole number >= 1.`);
  }
  return { stateDir, httpPort, flushSeconds, grace, schedulerCap, schedulerBase, maxChunksUp, backlog, refresh, inputStorage, fileInputStorage };
}

/** scheduler.cap and scheduler.base: whole seconds, 1 <= base <= cap (fluent-bit draws uniform(base, min(cap, base × 2^n)), which needs base <= cap). */
function checkScheduler(fail: Fail, options: FluentBitConfigOptions): { schedulerCap: number; schedulerBase: number } {
  const schedulerCap = options.schedulerCapSeconds ?? SCHEDULER_CAP_SECONDS;
  const schedulerBase = options.schedulerBaseSeconds ?? SCHEDULER_BASE_SECONDS;
  if (!Number.isInteger(schedulerCap) || schedulerCap < 1 || schedulerCap > MAX_SCHEDULER_CAP_SECONDS) {
    fail(`schedulerCapSeconds ${schedulerCap} must be a whole number of seconds from 1 to ${MAX_SCHEDULER_CAP_SECONDS} (fluent-bit's own default).`);
  }
  if (!Number.isInteger(schedulerBase) || schedulerBase < 1 || schedulerBase > schedulerCap) {
    fail(`schedulerBaseSeconds ${schedulerBase} must be a whole number of seconds from 1 to schedulerCapSeconds (${schedulerCap}): `
      + 'fluent-bit draws each wait between the base and the cap, and a base above the cap has no such range.');
  }
  return { schedulerCap, schedulerBase };
}

/** The custom parsers, checked against the image's and the built-in ones: the names a config may use, and the parsers file's sections. */
function checkCustomParsers(fail: Fail, parsers: readonly FluentBitParser[], multilineParsers: readonly FluentBitMultilineParser[]): {
  catalog: ParserCatalog; sections: ClassicSection[];
} {
  checkParserNames(fail, parsers);
  checkMultilineParserNames(fail, multilineParsers, new Set(parsers.map((p) => p.name)));
  return {
    catalog: parserCatalog(parsers, multilineParsers),
    sections: [...parsers.map((p) => p._section()), ...multilineParsers.map((m) => m._section())],
  };
}

/** Custom [PARSER] names: none of the image's, none twice. */
function checkParserNames(fail: Fail, parsers: readonly FluentBitParser[]): void {
  const seenParsers = new Set<string>();
  for (const p of parsers) {
    // fluent-bit compares [PARSER] names case-sensitively and refuses a second one, which also
    // stops loading the rest of that file (flb_parser.c).
    if (STOCK_PARSERS.includes(p.name)) {
      fail(`parsers: '${p.name}' is already a parser of the image's ${STOCK_PARSERS_FILE}; fluent-bit would refuse the second definition `
        + 'and skip the rest of the custom parsers. Give it another name (e.g. \'' + p.name + '-custom\').');
    }
    if (seenParsers.has(p.name)) {
      fail(`parsers: '${p.name}' is defined twice; parser names must be unique.`);
    }
    seenParsers.add(p.name);
  }
}

/** Custom [MULTILINE_PARSER] names: none built in, none twice, and their `parser` a stock or custom one. */
function checkMultilineParserNames(fail: Fail, multilineParsers: readonly FluentBitMultilineParser[], customParsers: ReadonlySet<string>): void {
  const seenMultiline = new Set<string>();
  for (const m of multilineParsers) {
    const lower = m.name.toLowerCase();
    // Multiline names are looked up case-insensitively, first match wins: the built-in one.
    if (BUILTIN_MULTILINE_PARSERS.includes(lower)) {
      fail(`multilineParsers: '${m.name}' is a built-in multiline parser (${BUILTIN_MULTILINE_PARSERS.join(', ')}); fluent-bit would use the built-in one. Rename it.`);
    }
    if (seenMultiline.has(lower)) {
      fail(`multilineParsers: '${m.name}' is defined twice (names compare case-insensitively).`);
    }
    seenMultiline.add(lower);
    if (m.parser !== undefined && !STOCK_PARSERS.includes(m.parser) && !customParsers.has(m.parser)) {
      fail(`multilineParsers: '${m.name}' names parser '${m.parser}', which is neither in ${STOCK_PARSERS_FILE} nor in parsers; add it to parsers.`);
    }
  }
}

/** The ports fluent-bit listens on: the HTTP server, and the forward input when there is one. */
function containerPortsFor(fail: Fail, httpPort: number, forwardInputPort: number | undefined): { name: string; port: number }[] {
  const containerPorts = [{ name: 'http', port: httpPort }];
  if (forwardInputPort !== undefined) {
    checkPort(fail, 'forwardInputPort', forwardInputPort);
    if (forwardInputPort === httpPort) {
      fail(`forwardInputPort ${forwardInputPort} clashes with the HTTP server port ${httpPort} (health checks and metrics); `
        + 'choose different ports, e.g. 24224 for forward.');
    }
    containerPorts.push({ name: 'forward', port: forwardInputPort });
  }
  return containerPorts;
}

/** The filesystem buffer and the collector's own inputs' offset databases, under stateDir. */
function statePaths(stateDir: string): StatePaths {
  return {
    storage: `${stateDir}/flb-storage/`,
    containersDb: `${stateDir}/tail-containers.db`,
    systemdDb: `${stateDir}/systemd.db`,
  };
}

/** The [SERVICE] section: flush, Grace, parsers files, HTTP server with health check, filesystem storage. */
function renderService(options: FluentBitConfigOptions, settings: CheckedSettings, storagePath: string, hasCustomParsers: boolean): ClassicSection {
  return {
    name: 'SERVICE',
    entries: entries([
      ['Flush', String(settings.flushSeconds)],
      // Seconds fluent-bit keeps flushing after SIGTERM; kept below the pod's grace period.
      ['Grace', String(settings.grace)],
      // How long a chunk waits before its next retry (see SCHEDULER_CAP_SECONDS): the cap bounds
      // how late the backlog arrives once the destination is back.
      ['scheduler.cap', String(settings.schedulerCap)],
      ['scheduler.base', String(settings.schedulerBase)],
      ['Daemon', 'Off'],
      ['Log_Level', options.logLevel ?? 'info'],
      // Several Parsers_File lines are all loaded, in order (each [SERVICE] property is applied);
      // the stock file stays usable because the ConfigMap is mounted beside it, not over it.
      ['Parsers_File', STOCK_PARSERS_FILE],
      ...(hasCustomParsers ? [['Parsers_File', `${CONFIG_DIR}/${CUSTOM_PARSERS_FILE_NAME}`] as [string, string]] : []),
      ['HTTP_Server', 'On'],
      ['HTTP_Listen', '0.0.0.0'],
      ['HTTP_Port', String(settings.httpPort)],
      // Without Health_Check the health endpoint always answers ok. Unready after more than 5
      // output errors in 60 s. Failed retries are not counted (the highest int fluent-bit reads):
      // they are how an outage ends with a retryLimit, and would take every collector out of
      // ready at once; LogCollectorOutputRetriesFailed reports them.
      ['Health_Check', 'On'],
      ['HC_Errors_Count', String(HC_ERRORS_COUNT)],
      ['HC_Retry_Failure_Count', String(HC_RETRY_FAILURE_COUNT)],
      ['HC_Period', String(HC_PERIOD_SECONDS)],
      ['storage.path', storagePath],
      ['storage.sync', 'normal'],
      ['storage.checksum', 'off'],
      ['storage.backlog.mem_limit', settings.backlog],
      // With filesystem buffering this, not Mem_Buf_Limit, bounds the chunks in memory (fluent-bit's default is 128).
      ['storage.max_chunks_up', String(settings.maxChunksUp)],
      ['storage.metrics', 'on'],
    ]),
  };
}

/** The container-log files not read: the collector's own, then the excluded namespaces, pods and globs, checked. */
function containerLogExcludes(fail: Fail, options: FluentBitConfigOptions): string[] {
  const excludePaths = [`/var/log/containers/${options.collectorName}-*_${options.collectorNamespace}_*.log`];
  for (const ns of options.excludeNamespaces ?? []) {
    checkDnsLabel(fail, 'excludeNamespaces', ns);
    excludePaths.push(`/var/log/containers/*_${ns}_*.log`);
  }
  for (const pod of options.excludePods ?? []) {
    checkDnsLabel(fail, 'excludePods.namespace', pod.namespace);
    if (!/^[a-z0-9]([-a-z0-9.]*)?$/.test(pod.podNamePrefix)) {
      fail(`excludePods.podNamePrefix ${JSON.stringify(pod.podNamePrefix)} must be the start of a pod name (lower-case letters, digits, '-', '.').`);
    }
    excludePaths.push(`/var/log/containers/${pod.podNamePrefix}*_${pod.namespace}_*.log`);
  }
  for (const glob of options.excludeContainerLogPaths ?? []) {
    if (!/^\/var\/log\/containers\/[^\s,]+$/.test(glob)) {
      fail(`excludeContainerLogPaths ${JSON.stringify(glob)} must be a glob under /var/log/containers/ without spaces or commas `
        + '(file names are <pod>_<namespace>_<container>-<id>.log), e.g. /var/log/containers/*_kube-system_*.log.');
    }
    excludePaths.push(glob);
  }
  return excludePaths;
}

/** The tail [INPUT] of the node's container logs (tail_containers). */
function renderContainerLogInput(
  options: FluentBitConfigOptions, settings: CheckedSettings, containersDb: string, excludePaths: readonly string[],
): ClassicSection {
  return {
    name: 'INPUT',
    entries: entries([
      ['Name', 'tail'],
      ['Alias', 'tail_containers'],
      ['Tag', 'kube.*'],
      ['Path', '/var/log/containers/*.log'],
      // The collector's own logs (shipping them would loop with a stdout output, or amplify errors),
      // then the excluded namespaces and pods: skipped at the source, before any filter or enrichment.
      // File names are <pod>_<namespace>_<container>-<container id>.log; Exclude_Path is one comma list.
      ['Exclude_Path', excludePaths.join(',')],
      ['multiline.parser', 'docker, cri'],
      // Offsets survive restarts and upgrades: the DB is on the host, not in the container.
      ['DB', containersDb],
      ['DB.locking', 'true'],
      ['Read_from_Head', onOff(options.readFromHead ?? true)],
      ...settings.fileInputStorage,
      ['Skip_Long_Lines', 'On'],
      ['Refresh_Interval', String(settings.refresh)],
    ]),
  };
}

/** The systemd units to read from the journal, checked. */
function checkSystemdUnits(fail: Fail, units: readonly string[]): void {
  for (const unit of units) {
    if (!UNIT_PATTERN.test(unit)) {
      fail(`systemd unit ${JSON.stringify(unit)} is not a unit name (e.g. 'kubelet.service').`);
    }
  }
}

/** The systemd [INPUT] of the given units (systemd_journal). */
function renderSystemdInput(units: readonly string[], systemdDb: string, settings: CheckedSettings): ClassicSection {
  return {
    name: 'INPUT',
    entries: entries([
      ['Name', 'systemd'],
      ['Alias', 'systemd_journal'],
      // `*` expands to the unit name: host.kubelet.service
      ['Tag', 'host.*'],
      // No Path: sd_journal_open (plugins/in_systemd/systemd_config.c) then reads the local
      // journal wherever it is, /var/log/journal (persistent) or /run/log/journal (volatile),
      // while Path /var/log/journal fails to open on a volatile-journal node, and an input that
      // fails to initialize stops the whole engine, container logs included.
      ...[...units].sort().map((u): [string, string] => ['Systemd_Filter', `_SYSTEMD_UNIT=${u}`]),
      ['DB', systemdDb],
      ['DB.Sync', 'Normal'],
      ['Read_From_Tail', 'On'],
      ['Strip_Underscores', 'On'],
      ...settings.fileInputStorage,
    ]),
  };
}

/** The forward [INPUT] applications push logs to (forward_input). */
function renderForwardInput(port: number, settings: CheckedSettings): ClassicSection {
  return {
    name: 'INPUT',
    entries: entries([
      ['Name', 'forward'],
      ['Alias', 'forward_input'],
      ['Listen', '0.0.0.0'],
      ['Port', String(port)],
      ...settings.inputStorage,
    ]),
  };
}

/**
 * Claims aliases against those of `sections` (the collector's own inputs), the kubernetes filter's
 * and every earlier claim: aliases name metrics and must be unique across every plugin instance.
 */
function aliasClaimer(fail: Fail, sections: readonly ClassicSection[]): ClaimAlias {
  const aliases = new Set<string>(sections.map((s) => s.entries.find((e) => e.key === 'Alias')?.value).filter((a): a is string => a !== undefined));
  aliases.add('kubernetes_metadata');
  return (alias, what) => {
    if (aliases.has(alias)) {
      fail(`${what}: alias '${alias}' is used twice (inputs use tail_containers, systemd_journal, forward_input; the filter kubernetes_metadata); give each plugin a distinct alias.`);
    }
    aliases.add(alias);
  };
}

/** Aliases of plugin instances: given, else the plugin name, numbered (<plugin>_<n>) when a plugin repeats. */
function pluginAliases(plugins: readonly { readonly pluginName: string; readonly alias?: string }[]): string[] {
  const perKind = new Map<string, number>();
  for (const p of plugins) {
    perKind.set(p.pluginName, (perKind.get(p.pluginName) ?? 0) + 1);
  }
  const seenKind = new Map<string, number>();
  return plugins.map((p) => {
    const n = seenKind.get(p.pluginName) ?? 0;
    seenKind.set(p.pluginName, n + 1);
    return p.alias ?? ((perKind.get(p.pluginName) ?? 0) > 1 ? `${p.pluginName}_${n}` : p.pluginName);
  });
}

/** The extra inputs' sections, in the order given (aliases default to <plugin>_<n>), and what they read, write and parse with. */
function renderExtraInputs(inputs: readonly FluentBitInput[], claimAlias: ClaimAlias, settings: CheckedSettings): {
  sections: ClassicSection[]; writePaths: string[]; readDirs: string[]; readsJournal: boolean; parserRefs: ParserRef[];
} {
  const sections: ClassicSection[] = [];
  const writePaths: string[] = [];
  const readDirs: string[] = [];
  let readsJournal = false;
  const parserRefs: ParserRef[] = [];
  const inputCount = new Map<string, number>();
  for (const input of inputs) {
    const n = inputCount.get(input.pluginName) ?? 0;
    inputCount.set(input.pluginName, n + 1);
    const alias = input.alias ?? `${input.pluginName}_${n}`;
    claimAlias(alias, `inputs (${input.pluginName})`);
    const rendered = input._render(alias, { stateDir: settings.stateDir, storage: entries(settings.fileInputStorage) });
    writePaths.push(...rendered.writePaths);
    readDirs.push(...rendered.readDirs);
    readsJournal = readsJournal || rendered.journal;
    rendered.parsers.forEach((name) => parserRefs.push({ what: `inputs '${alias}' parser`, name, multiline: false }));
    rendered.multilineParsers.forEach((name) => parserRefs.push({ what: `inputs '${alias}' multilineParsers`, name, multiline: true }));
    sections.push({ name: 'INPUT', entries: rendered.entries });
  }
  return { sections, writePaths, readDirs, readsJournal, parserRefs };
}

/** Whether the kubernetes filter asks the kubelet, with kubeletPort only set alongside useKubelet. */
function checkKubelet(fail: Fail, options: FluentBitConfigOptions): boolean {
  const useKubelet = options.useKubelet ?? false;
  if (options.kubeletPort !== undefined && !useKubelet) {
    fail('kubeletPort is set but useKubelet is off; set useKubelet: true or remove kubeletPort.');
  }
  if (useKubelet) {
    checkPort(fail, 'kubeletPort', options.kubeletPort ?? DEFAULT_KUBELET_PORT);
  }
  return useKubelet;
}

/** The kubernetes [FILTER] (kubernetes_metadata): pod metadata from the API server or the kubelet. */
function renderKubernetesFilter(fail: Fail, options: FluentBitConfigOptions, useKubelet: boolean): ClassicSection {
  const k8s = options.kubernetesFilter ?? {};
  const bufferSize = k8s.bufferSize === undefined ? undefined : checkSize(fail, 'kubernetesFilter.bufferSize', k8s.bufferSize);
  return {
    name: 'FILTER',
    entries: entries([
      ['Name', 'kubernetes'],
      ['Alias', 'kubernetes_metadata'],
      ['Match', 'kube.*'],
      ['Kube_URL', 'https://kubernetes.default.svc:443'],
      ['Kube_CA_File', '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt'],
      ['Kube_Token_File', '/var/run/secrets/kubernetes.io/serviceaccount/token'],
      ['Kube_Tag_Prefix', 'kube.var.log.containers.'],
      // At most 2 minutes waiting for DNS at start (see KUBERNETES_DNS_RETRIES), within the startup probe.
      ['DNS_Retries', String(KUBERNETES_DNS_RETRIES)],
      ['DNS_Wait_Time', String(KUBERNETES_DNS_WAIT_SECONDS)],
      ['Merge_Log', onOff(k8s.mergeLog ?? true)],
      ['Keep_Log', onOff(k8s.keepLog ?? false)],
      ['K8S-Logging.Parser', onOff(k8s.allowParserAnnotation ?? true)],
      ['K8S-Logging.Exclude', onOff(k8s.allowExcludeAnnotation ?? true)],
      ...(k8s.labels === false ? [['Labels', 'Off'] as [string, string]] : []),
      ...(k8s.annotations === false ? [['Annotations', 'Off'] as [string, string]] : []),
      ...(options.kubernetesTlsVerify === false ? [['tls.verify', 'Off'] as [string, string]] : []),
      ...(useKubelet ? [
        ['Use_Kubelet', 'On'],
        // The node's own kubelet, reached on the node IP: no hostNetwork needed.
        ['Kubelet_Host', '${' + KUBELET_NODE_IP_ENV.envName + '}'],
        ['Kubelet_Port', String(options.kubeletPort ?? DEFAULT_KUBELET_PORT)],
      ] as [string, string][] : []),
      // Kubelet's /pods returns every pod of the node in one response; 32k is far too small.
      ...(bufferSize !== undefined || useKubelet ? [['Buffer_Size', bufferSize ?? '0'] as [string, string]] : []),
    ]),
  };
}

/** The user filters' sections, in the order given, the files they add to the ConfigMap and the parsers they name. */
function renderUserFilters(fail: Fail, filters: readonly FluentBitFilter[], claimAlias: ClaimAlias): {
  sections: ClassicSection[]; extraFiles: { [name: string]: string }; parserRefs: ParserRef[];
} {
  const sections: ClassicSection[] = [];
  const extraFiles: { [name: string]: string } = {};
  const parserRefs: ParserRef[] = [];
  const aliases = pluginAliases(filters);
  filters.forEach((filter, i) => {
    const alias = aliases[i];
    claimAlias(alias, `filters (${filter.pluginName})`);
    const rendered = filter._render(alias, { configDir: CONFIG_DIR });
    rendered.extraAliases.forEach((a) => claimAlias(a, `filters (${filter.pluginName} emitter)`));
    rendered.multilineParsers.forEach((name) => parserRefs.push({ what: `filters '${alias}' parsers`, name, multiline: true }));
    rendered.parsers.forEach((name) => parserRefs.push({ what: `filters '${alias}' parsers`, name, multiline: false }));
    for (const [file, content] of Object.entries(rendered.files)) {
      if (file === CONFIG_FILE_NAME || file === CUSTOM_PARSERS_FILE_NAME) {
        fail(`filters: alias '${alias}' would write ${file}, a file of the ConfigMap already; choose another alias.`);
      }
      extraFiles[file] = content;
    }
    sections.push({ name: 'FILTER', entries: rendered.entries });
  });
  return { sections, extraFiles, parserRefs };
}

/** Every parser the inputs and filters name is one fluent-bit knows. */
function checkParserRefs(fail: Fail, refs: readonly ParserRef[], catalog: ParserCatalog): void {
  for (const ref of refs) {
    if (!knowsParser(catalog, ref.name, ref.multiline)) {
      fail(`${ref.what}: ${unknownParser(ref.name, ref.multiline)}`);
    }
  }
}

/** Whether fluent-bit knows a parser name (multiline parser names compare case-insensitively). */
function knowsParser(catalog: ParserCatalog, name: string, multiline: boolean): boolean {
  return multiline ? catalog.multilineParsers.has(name.toLowerCase()) : catalog.parsers.has(name);
}

/** The error text for a parser name fluent-bit does not know: where it looked, and the fix. */
function unknownParser(name: string, multiline: boolean): string {
  return `'${name}' is no ${multiline ? 'multiline ' : ''}parser fluent-bit knows `
    + `(${multiline ? `built-in: ${BUILTIN_MULTILINE_PARSERS.join(', ')}` : `stock: ${STOCK_PARSERS_FILE}`}); `
    + `define it with the ${multiline ? 'multilineParsers' : 'parsers'} prop or fix the name.`;
}

/** The outputs' sections, in the order given, the Secrets they read credentials from and the paths they write. */
function renderOutputs(fail: Fail, outputs: readonly FluentBitOutput[], claimAlias: ClaimAlias, stateDir: string): {
  sections: ClassicSection[]; secretEnv: SecretEnvVar[]; writePaths: string[];
} {
  const sections: ClassicSection[] = [];
  const secretEnv: SecretEnvVar[] = [];
  const writePaths: string[] = [];
  const envNames = new Set<string>();
  const aliases = pluginAliases(outputs);
  outputs.forEach((output, i) => {
    const alias = aliases[i];
    claimAlias(alias, `outputs (${output.pluginName})`);
    const rendered = output._render(alias, { stateDir });
    writePaths.push(...rendered.writePaths);
    for (const env of rendered.secretEnv) {
      if (envNames.has(env.envName)) {
        fail(`outputs' aliases map to the same environment variable ${env.envName}; use aliases that differ by more than '-' vs '_'.`);
      }
      envNames.add(env.envName);
      secretEnv.push(env);
    }
    sections.push({ name: 'OUTPUT', entries: rendered.entries });
  });
  return { sections, secretEnv, writePaths };
}

/** The generated fluent-bit.conf text, with its header. */
function renderMainConfig(sections: readonly ClassicSection[], stateDir: string): string {
  return renderClassicConfig(sections, [
    'fluent-bit configuration generated by cdk8s-node-agents (LogCollectorDaemonSet).',
    // No image here: an image-only upgrade must leave the config (and its ConfigMap) unchanged.
    `State (tail DB, filesystem buffer): ${stateDir}.`,
  ]);
}

/** The text appended for extraConfig (empty when there is none), checked: classic mode, no [SERVICE], parsers or directives. */
function extraConfigText(fail: Fail, extraConfig: string | undefined, catalog: ParserCatalog): string {
  if (extraConfig === undefined || extraConfig.trim() === '') {
    return '';
  }
  let parsed: ParsedClassicConfig;
  try {
    parsed = parseClassicConfig(extraConfig);
  } catch (e) {
    return fail(`extraConfig is not valid classic-mode fluent-bit config: ${(e as Error).message}`);
  }
  checkExtraConfigSections(fail, parsed.sections, catalog);
  if (parsed.directives.length > 0) {
    fail(`extraConfig must not contain directives (${parsed.directives.join(', ')}): only the ConfigMap's one file is mounted.`);
  }
  return '\n# extraConfig (verbatim)\n' + extraConfig.trim() + '\n';
}

/** extraConfig's sections: no [SERVICE] or parser section, only keys fluent-bit knows, only parsers it knows. */
function checkExtraConfigSections(fail: Fail, sections: readonly ParsedClassicSection[], catalog: ParserCatalog): void {
  if (sections.some((s) => s.name === 'SERVICE')) {
    fail('extraConfig must not contain a [SERVICE] section: the generated one already exists; use the typed props instead.');
  }
  const parserSection = sections.find((s) => s.name === 'PARSER' || s.name === 'MULTILINE_PARSER');
  if (parserSection) {
    fail(`extraConfig must not contain a [${parserSection.name}] section (line ${parserSection.line}): fluent-bit refuses parser sections in the main `
      + `config file and would not start. Use the ${parserSection.name === 'PARSER' ? 'parsers prop (FluentBitParser.regex/json/logfmt/ltsv)' : 'multilineParsers prop (FluentBitMultilineParser.regex)'} `
      + 'instead: they go into the parsers file the config names with Parsers_File.');
  }
  for (const section of sections) {
    for (const problem of extraSectionKeyProblems(section)) fail(problem);
    for (const ref of parserReferences(section)) {
      if (!knowsParser(catalog, ref.name, ref.multiline)) {
        fail(`extraConfig [${section.name}] at line ${section.line}: ${ref.key} ${unknownParser(ref.name, ref.multiline)}`);
      }
    }
  }
}

function checkDnsLabel(fail: Fail, name: string, value: string): void {
  if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(value)) {
    fail(`${name} ${JSON.stringify(value)} is not a namespace name (a DNS label: lower-case letters, digits, '-').`);
  }
}

function entries(pairs: readonly (readonly [string, string])[]): ClassicEntry[] {
  return pairs.map(([key, value]) => ({ key, value }));
}

function checkPort(fail: Fail, name: string, port: number): void {
  if (!isPort(port)) {
    fail(`${name} ${port} must be an integer from 1 to 65535.`);
  }
}

/** The bytes of a fluent-bit size ('8K', '5M', '50MB': powers of 1000, 5.1.1 src/flb_utils.c flb_utils_size_to_bytes), NaN if it is none. */
export function sizeBytes(size: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*([KMG]?)B?$/i.exec(size.trim());
  if (!m) return NaN;
  return Number(m[1]) * 1000 ** ' KMG'.indexOf((m[2] || ' ').toUpperCase());
}

function checkSize(fail: Fail, name: string, size: string): string {
  if (!SIZE_PATTERN.test(size)) {
    fail(`${name} ${JSON.stringify(size)} must be a fluent-bit size such as '5M' or '50MB'.`);
  }
  return size;
}

/** A `${NAME}` reference in a config file, as fluent-bit's flb_env_var_translate (src/flb_env.c) reads it. */
export interface EnvReference {
  /** The variable's name (without a `:-default`). */
  readonly name: string;
  /** Whether it carries a `:-default`, used when the variable is unset or empty. */
  readonly hasDefault: boolean;
  /** 1-based line of the file. */
  readonly line: number;
  /** The line itself, trimmed. */
  readonly text: string;
}

/**
 * The `${NAME}` references of a classic-mode file. fluent-bit expands them in every value when it
 * loads the file (src/flb_env.c, flb_env_var_translate: from `${` to the next `}`, a `:-` starts a
 * default); an unset variable without a default becomes the empty string, silently.
 */
export function envReferences(text: string): EnvReference[] {
  const found: EnvReference[] = [];
  text.split('\n').forEach((line, i) => {
    if (line.trimStart().startsWith('#')) return;
    for (const m of line.matchAll(/\$\{([^}]*)\}/g)) {
      const sep = m[1].indexOf(':-');
      found.push({ name: sep >= 0 ? m[1].slice(0, sep) : m[1], hasDefault: sep >= 0, line: i + 1, text: line.trim() });
    }
  });
  return found;
}

/**
 * The variables every collector container has without being told: HOSTNAME, which the container
 * runtime sets to the pod's host name (fluent-bit's documentation uses `${HOSTNAME}` for the node).
 */
export const RUNTIME_ENV_VARS: readonly string[] = ['HOSTNAME'];
