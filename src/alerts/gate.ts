/**
 * Metric gates between rollout waves: the checks a gate Job evaluates and the POSIX sh script it
 * runs. Pure module (no cdk8s): a test runs `GATE_SCRIPT` with `sh` exactly as the Job does.
 */
import { WaveGate, WaveGateCheck } from './options';
import { eq, matchers, podNameRegex, re, regexLiteral } from './promql';
import { checkPromQL, GATE_FAILS } from './promql-parse';
import { ALWAYS_PRESENT_COLLECTORS, DEFAULT_KUBE_STATE_METRICS_SELECTOR } from './rules';
import { recordFunctions, recordGuard, recordVerdict, RecordWords } from '../rollout/hook-shell';
import { JSON_READER_AWK } from '../util/json-awk';
import { SHELL_FUNCTIONS } from '../util/shell';
import { RefusedBy, ValidationError } from '../validation/errors';

/** What the default checks of a wave are about. */
export interface GateTarget {
  readonly namespace: string;
  /** The wave's DaemonSet. */
  readonly daemonSet: string;
  /**
   * With resource profiles, the wave's DaemonSets of every profile (`<agent>-<wave>`, `<agent>-<profile>-<wave>`): the
   * checks match them all.
   * @default - the wave's one DaemonSet
   */
  readonly profileDaemonSets?: readonly string[];
  /** The bake window as a PromQL duration, e.g. "10m". */
  readonly window: string;
  readonly kubeStateMetricsSelector?: string;
}

/** The checks every agent's gate makes, on the wave's DaemonSet and pods only. */
export function daemonSetGateChecks(t: GateTarget): WaveGateCheck[] {
  const ksm = t.kubeStateMetricsSelector ?? DEFAULT_KUBE_STATE_METRICS_SELECTOR;
  const ds = matchers(ksm, eq('namespace', t.namespace), daemonSetMatcher(t));
  const pods = matchers(ksm, eq('namespace', t.namespace), re('pod', podNameRegex(waveDaemonSetRegex(t))));
  return [
    // Without it, a Prometheus that does not scrape kube-state-metrics would pass every check.
    { name: 'daemonset-known', expr: `absent(kube_daemonset_status_desired_number_scheduled{${ds}})` },
    { name: 'pods-unavailable', expr: `kube_daemonset_status_number_unavailable{${ds}} > 0` },
    { name: 'rollout-incomplete', expr: `kube_daemonset_status_desired_number_scheduled{${ds}} - kube_daemonset_status_updated_number_scheduled{${ds}} > 0` },
    { name: 'generation-not-observed', expr: `kube_daemonset_status_observed_generation{${ds}} != kube_daemonset_metadata_generation{${ds}}` },
    { name: 'container-restarts', expr: `sum by (namespace, pod) (increase(kube_pod_container_status_restarts_total{${pods}}[${t.window}])) > 0` },
  ];
}

/** The wave's pods' own metrics, as prometheus-operator labels them. */
export function wavePodsSelector(t: GateTarget): string {
  return matchers(eq('namespace', t.namespace), re('pod', podNameRegex(waveDaemonSetRegex(t))));
}

/** The wave's DaemonSet names as a regex: the one DaemonSet, or each profile's. */
function waveDaemonSetRegex(t: GateTarget): string {
  const names = t.profileDaemonSets ?? [t.daemonSet];
  return names.length === 1 ? regexLiteral(names[0]) : names.map(regexLiteral).join('|');
}

/** `daemonset="<wave's DaemonSet>"`, or a regex over each profile's DaemonSet of the wave. */
function daemonSetMatcher(t: GateTarget): string {
  return t.profileDaemonSets !== undefined && t.profileDaemonSets.length > 1 ? re('daemonset', waveDaemonSetRegex(t)) : eq('daemonset', t.daemonSet);
}

/**
 * The log collector's: nothing lost on the wave during the bake, and the wave delivers.
 *
 * A wave that cannot deliver loses nothing while it bakes: with a bad credential (Loki answers
 * 401) or a destination down or answering 5xx, out_loki returns FLB_RETRY (plugins/out_loki/loki.c,
 * cb_loki_flush), and with `Retry_Limit no_limits` fluent-bit retries forever
 * (src/flb_engine.c, handle_output_event): only `fluentbit_output_retries_total` climbs, while errors,
 * failed retries and dropped records stay 0 and the health endpoint answers 200. So delivery is
 * judged itself: an output that retried and delivered no record (`proc_records`, counted on
 * FLB_OK only), and a pod that read records and delivered none. The cause side looks at the bake
 * window but its last minute, so a retry or a record read just before the end (delivered after the
 * last scrape) does not fail an idle node.
 */
export function logCollectorGateChecks(t: GateTarget): WaveGateCheck[] {
  const m = wavePodsSelector(t);
  const settled = settledWindow(t.window);
  const delivered = (by: string) => `sum by (${by}) (increase(fluentbit_output_proc_records_total{${m}}[${t.window}])) > 0`;
  return [
    { name: 'records-dropped', expr: `sum by (namespace, pod, name) (increase(fluentbit_output_dropped_records_total{${m}}[${t.window}])) > 0` },
    { name: 'retries-failed', expr: `sum by (namespace, pod, name) (increase(fluentbit_output_retries_failed_total{${m}}[${t.window}])) > 0` },
    {
      name: 'retries-without-delivery',
      expr: `sum by (namespace, pod, name) (increase(fluentbit_output_retries_total{${m}}${settled})) > 0 unless on (namespace, pod, name) ${delivered('namespace, pod, name')}`,
    },
    {
      name: 'read-not-delivered',
      expr: `sum by (namespace, pod) (increase(fluentbit_input_records_total{${m}}${settled})) > 0 unless on (namespace, pod) ${delivered('namespace, pod')}`,
    },
  ];
}

/** The bake window as a range selector without its last minute (`[9m] offset 1m` for 10m); a 1m window stays whole. */
export function settledWindow(window: string): string {
  const minutes = /^([0-9]+)m$/.exec(window);
  if (!minutes || Number(minutes[1]) < 2) return `[${window}]`;
  return `[${Number(minutes[1]) - 1}m] offset 1m`;
}

/** node_exporter's: every pod of the wave scraped, the collectors every node has data for and the textfile collector working. */
export function nodeExporterGateChecks(t: GateTarget): WaveGateCheck[] {
  const m = wavePodsSelector(t);
  return [
    { name: 'exporter-down', expr: `up{${m}} == 0` },
    { name: 'collector-failed', expr: `node_scrape_collector_success{${matchers(m, re('collector', ALWAYS_PRESENT_COLLECTORS.join('|')))}} == 0` },
    { name: 'textfile-error', expr: `node_textfile_scrape_error{${m}} == 1` },
  ];
}

/** The GPU driver's: every driver pod of the wave ready. */
export function gpuDriverGateChecks(t: GateTarget): WaveGateCheck[] {
  const ksm = t.kubeStateMetricsSelector ?? DEFAULT_KUBE_STATE_METRICS_SELECTOR;
  const pods = matchers(ksm, eq('namespace', t.namespace), re('pod', podNameRegex(waveDaemonSetRegex(t))), 'condition="true"');
  return [{ name: 'driver-not-ready', expr: `kube_pod_status_ready{${pods}} == 0` }];
}

const CHECK_NAME = /^[A-Za-z0-9_-]{1,63}$/;

/** A URL as a log or a message shows it: its userinfo (`user:password@`) replaced by `***@`, as the gate script's `shown_url`. */
export function redactUrl(url: string): string {
  // a URL without a scheme too: what a message shows of a refused one
  return url.replace(/^((?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\/)?[^/?#]*@/, '$1***@');
}

/**
 * The gate's Prometheus URL: http(s), no whitespace (no request can carry it, so the gate could never pass) and none
 * of curl's glob characters `[ ] { }` but an IPv6 host's brackets (the script passes --globoff, yet a URL that reads
 * as a glob is a mistake: `[1-40]` meant 40 queries, `{a,b}` two Prometheus). Its userinfo is never shown.
 */
function checkPrometheusUrl(gate: WaveGate, by: RefusedBy): void {
  const url = gate.prometheusUrl;
  const of = `rollout.gates ("${gate.afterWave}") prometheusUrl "${redactUrl(url)}"`;
  if (/\s/.test(url)) {
    throw new ValidationError(by, `${of} holds whitespace, which no request can carry; remove it, or percent-encode it (%20)`);
  }
  if (!/^https?:\/\/[^\s/]+/.test(url)) {
    throw new ValidationError(by, `${of} is not an http(s) URL; give the Prometheus base URL, e.g. "http://prometheus-operated.monitoring.svc:9090"`);
  }
  if (/[[\]{}]/.test(url.replace(/^(https?:\/\/(?:[^/?#@]*@)?)\[[0-9A-Fa-f:.]+\]/, '$1'))) {
    throw new ValidationError(by, `${of} holds "[", "]", "{" or "}", which curl reads as a URL glob (several queries, their answers run together); `
      + 'percent-encode them (%5B %5D %7B %7D); brackets are for an IPv6 host only, e.g. "http://[fd00::1]:9090"');
  }
}

/** The Job's environment: the script reads everything from it. Sorted by name. */
export function gateEnvironment(gateName: string, gate: WaveGate, checks: readonly WaveGateCheck[], by: RefusedBy): { [name: string]: string } {
  checkPrometheusUrl(gate, by);
  if (checks.length === 0) throw new ValidationError(by, `rollout.gates ("${gate.afterWave}") has no checks; give checks or drop the gate`);
  const names = new Set<string>();
  const env: { [name: string]: string } = {
    GATE_NAME: gateName,
    PROMETHEUS_URL: gate.prometheusUrl.replace(/\/+$/, ''),
    BAKE_SECONDS: String(bakeSeconds(gate, by)),
    CHECK_COUNT: String(checks.length),
    QUERY_RETRIES: '3',
  };
  checks.forEach((check, i) => {
    if (!CHECK_NAME.test(check.name)) {
      throw new ValidationError(by, `rollout.gates ("${gate.afterWave}") check name "${check.name}" must be 1-63 letters, digits, "-" or "_"`);
    }
    if (names.has(check.name)) throw new ValidationError(by, `rollout.gates ("${gate.afterWave}") has two checks named "${check.name}"`);
    names.add(check.name);
    if (check.expr.trim() === '') throw new ValidationError(by, `rollout.gates ("${gate.afterWave}") check "${check.name}" has an empty expression`);
    checkPromQL(check.expr, `rollout.gates ("${gate.afterWave}") check "${check.name}" expr`, by, GATE_FAILS);
    env[`CHECK_${i + 1}_NAME`] = check.name;
    // One line: the script reads each expression from one variable; PromQL ignores the newlines.
    env[`CHECK_${i + 1}_EXPR`] = check.expr.replace(/\s*\n\s*/g, ' ');
  });
  return Object.fromEntries(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

export function bakeSeconds(gate: WaveGate, by: RefusedBy): number {
  const minutes = gate.bakeMinutes ?? 10;
  // A day at most: the gate holds the Argo CD sync while it bakes (and the Job's activeDeadlineSeconds must stay an int64).
  if (!Number.isInteger(minutes) || minutes < 0 || minutes > 1440) {
    throw new ValidationError(by, `rollout.gates ("${gate.afterWave}") bakeMinutes ${minutes} must be a whole number from 0 to 1440 (a day: the gate holds the Argo CD sync while it bakes)`);
  }
  return minutes * 60;
}

/**
 * Prometheus' answer to an instant query, read whole (util/json-awk.ts), never searched for a text: prints EMPTY for
 * status "success" with data.resultType "vector" and data.result an empty array; SERIES <n> for a vector of n series;
 * NOTVECTOR <type> for another result type; otherwise INVALID <why> (not JSON, an HTML page, a cut answer, another
 * status, data.result not an array). Keys in any order, whitespace anywhere; a repeated key: the last one.
 */
export const GATE_ANSWER_AWK = JSON_READER_AWK + String.raw`function opened(t) {
  if (jd == 0) root = t
  else if (jd == 1 && jk[1] == "data") { rtype = ""; rt = ""; series = 0 }
  else if (jd == 2 && jk[1] == "data" && jk[2] == "result") { rt = t; series = 0 }
  else if (jd == 3 && jk[1] == "data" && jk[2] == "result" && jt[3] == "a") series++
}
function take(v, s) {
  if (jd == 1 && jk[1] == "status") status = s ? v : "not a string"
  else if (jd == 2 && jk[1] == "data" && jk[2] == "resultType") rtype = s ? v : "not a string"
  else if (jd == 2 && jk[1] == "data" && jk[2] == "result") rt = "scalar"
  else if (jd == 3 && jk[1] == "data" && jk[2] == "result" && jt[3] == "a") series++
}
function finish() {
  if (err != "") print "INVALID not JSON: " err
  else if (root != "o") print "INVALID not a JSON object"
  else if (status != "success") print "INVALID status " (status == "" ? "missing" : "\"" substr(status, 1, 80) "\"")
  else if (rtype != "vector") print "NOTVECTOR " (rtype == "" ? "missing" : substr(rtype, 1, 80))
  else if (rt != "a") print "INVALID data.result " (rt == "" ? "missing" : "not an array")
  else if (series > 0) print "SERIES " series
  else print "EMPTY"
}`;

// the script holds the program between single quotes
if (GATE_ANSWER_AWK.includes('\'')) throw new Error('GATE_ANSWER_AWK holds a single quote');

const GATE_RECORD: RecordWords = {
  ns: 'GATE_NAMESPACE', revision: 'GATE_REVISION', who: 'gate', overridden: 'checks: promoting past this wave', again: 'checking',
};

/**
 * The gate, as POSIX sh with curl (no jq, no kubectl: the image has neither).
 *
 * Reads GATE_NAME, PROMETHEUS_URL, BAKE_SECONDS, CHECK_COUNT, CHECK_<i>_NAME / CHECK_<i>_EXPR,
 * QUERY_RETRIES, and for its record GATE_REVISION, GATE_NAMESPACE, RECORD_NAME, KUBERNETES_API and
 * SERVICE_ACCOUNT_DIR.
 *
 * Its verdict is recorded in the ConfigMap RECORD_NAME (key `state`: "<revision> running|passed|failed")
 * because Argo CD retries a failed sync by itself (automated sync and RollingSync: 5 times by
 * default) and `BeforeHookCreation` deletes the failed Job before each retry: a new gate that baked
 * again would no longer see, in its `increase(...[bake])` window, a restart from the first bake.
 * GATE_REVISION is a hash of the gated wave's DaemonSet and of the gate's checks, so the record
 * holds for this commit's wave only. Before anything else:
 * - `override` equal to GATE_REVISION (a person wrote it): passes without checking;
 * - state "<revision> failed": fails at once (a retry cannot pass a failed gate);
 * - state "<revision> running" (or "running N"): an earlier attempt ended without a verdict (its pod
 *   deleted or evicted, its deadline passed): no verdict, so it bakes and checks again, up to
 *   UNFINISHED_ATTEMPTS attempts, then records "failed" and fails (rollout/hook-shell.ts recordGuard);
 * - otherwise records "running", bakes, checks and records "passed" or "failed".
 * The record unreadable or unwritable (API unreachable, no permission): the gate fails closed.
 *
 * Checks: exit 0 only when every query succeeded with an empty vector (the answer parsed as JSON:
 * GATE_ANSWER_AWK); an unreachable Prometheus, an HTTP error, an answer that is not a query answer,
 * a non-vector result or any returned series fails the gate. Once Prometheus is unreachable the
 * remaining checks are not sent (each would wait for its own retries), and count as failed. curl
 * runs with --globoff (a URL is never a glob) and the log shows the URL without its userinfo.
 * What Prometheus answered is logged through `printable` (no terminal controls); every other value
 * it prints comes from the Job's environment: the revision is hex and the names DNS labels, so the
 * kubectl commands it prints are safe to paste.
 */
export const GATE_SCRIPT = `set -u
${SHELL_FUNCTIONS}# log MESSAGE: one line, with nothing a terminal takes for a control (Prometheus' answers are in it)
log() { printf '%s\\n' "$(printable "gate \${GATE_NAME}: $*")"; }
${recordFunctions(GATE_RECORD.ns, GATE_RECORD.revision, 'rollout-gate-record')}how_to_act() {
  log "a retry of this sync fails here again; a person decides:"
  log "  fix the wave or the checks in a new commit (a new revision gates again), or revert the commit;"
  log "  bake and check again: kubectl -n \${GATE_NAMESPACE} delete configmap \${RECORD_NAME}, then sync;"
  log "  override (pass without checking): kubectl -n \${GATE_NAMESPACE} patch configmap \${RECORD_NAME} --type merge -p '{\\"data\\":{\\"override\\":\\"\${GATE_REVISION}\\"}}', then sync"
}
${recordGuard(GATE_RECORD)}
# the URL as the log shows it: without its userinfo (user:password@)
shown_url=$(printf '%s' "\${PROMETHEUS_URL}" | sed 's,^\\([A-Za-z][A-Za-z0-9+.-]*://\\)[^/?#]*@,\\1***@,')
answer_awk='${GATE_ANSWER_AWK}'
if [ "\${BAKE_SECONDS}" -ge 60 ] && [ $((BAKE_SECONDS % 60)) -eq 0 ]; then bake="$((BAKE_SECONDS / 60))m"; else bake="\${BAKE_SECONDS}s"; fi
log "baking \${bake}, then \${CHECK_COUNT} checks against \${shown_url}"
sleep "\${BAKE_SECONDS}"
failed=0
failed_names=""
unreachable=0
i=1
while [ "$i" -le "\${CHECK_COUNT}" ]; do
  eval "name=\\\${CHECK_\${i}_NAME}; expr=\\\${CHECK_\${i}_EXPR}"
  i=$((i + 1))
  if [ "$unreachable" -eq 1 ]; then
    log "check \${name}: FAILED, not run: Prometheus is unreachable"
    failed=$((failed + 1)); failed_names="\${failed_names} \${name}"
    continue
  fi
  body=$(curl --globoff --silent --show-error --fail-with-body --connect-timeout 10 --max-time 30 \\
    --retry "\${QUERY_RETRIES}" --retry-delay 5 --retry-connrefused \\
    --data-urlencode "query=\${expr}" "\${PROMETHEUS_URL}/api/v1/query" 2>&1)
  rc=$?
  if [ "$rc" -eq 0 ]; then
    # the answer parsed (GATE_ANSWER_AWK), never searched: only an empty vector passes
    verdict=$(printf '%s\\n' "$body" | awk "$answer_awk")
    case "$verdict" in
      EMPTY)
        log "check \${name}: ok" ;;
      SERIES*)
        log "check \${name}: FAILED, the expression returned series: $(oneline "$body")"
        failed=$((failed + 1)); failed_names="\${failed_names} \${name}" ;;
      NOTVECTOR*)
        log "check \${name}: FAILED, not an instant vector result (resultType \${verdict#NOTVECTOR }): $(oneline "$body")"
        failed=$((failed + 1)); failed_names="\${failed_names} \${name}" ;;
      *)
        log "check \${name}: FAILED, not a Prometheus query answer (\${verdict#INVALID }), the gate fails closed: $(oneline "$body")"
        failed=$((failed + 1)); failed_names="\${failed_names} \${name}" ;;
    esac
  elif [ "$rc" -eq 22 ]; then
    # --fail-with-body: an HTTP error status, e.g. 400 for an expression Prometheus cannot parse
    log "check \${name}: FAILED, Prometheus rejected the query: $(oneline "$body")"
    failed=$((failed + 1)); failed_names="\${failed_names} \${name}"
  else
    log "check \${name}: FAILED, cannot query Prometheus at \${shown_url} (the gate fails closed): $(oneline "$body")"
    failed=$((failed + 1)); failed_names="\${failed_names} \${name}"
    unreachable=1
  fi
  log "  expr: \${expr}"
done
if [ "$failed" -eq 0 ]; then
  ${recordVerdict(GATE_RECORD, 'passed')}
  log "0 of \${CHECK_COUNT} checks failed after \${bake} bake: promoting past this wave"
  exit 0
fi
log "\${failed} of \${CHECK_COUNT} checks failed after \${bake} bake:\${failed_names}; the sync stops here"
record failed
how_to_act
exit 1
`;
