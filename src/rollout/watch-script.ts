/**
 * The rollout watcher: what a wave's watcher Job runs while the wave's DaemonSet rolls, as POSIX sh with curl, grep
 * and awk (the gate's image has nothing more: no jq, no kubectl). Pure module (no cdk8s): a test runs
 * `WATCHER_SCRIPT` with `sh` exactly as the Job does, against a local fake of the API server.
 *
 * It reads the API server, not Prometheus: the pods of the DaemonSet's new revision are known only by their labels
 * (`pod-template-generation`, which kube-state-metrics does not export unless pod labels are allow-listed), a crash
 * or an OOM kill shows in the pod's status at once rather than a scrape later, and it works where no Prometheus
 * scrapes kube-state-metrics. It reads what `doctor` reads, with the same words: the fix for each cause is doctor's
 * (diagnose.ts fixFor), passed to the Job in its environment.
 */
import { KUBE_AUTH, recordFunctions, recordGuard, recordVerdict, RecordWords } from './hook-shell';
import { fixFor } from './stuck-causes';
import { JSON_READER_AWK } from '../util/json-awk';
import { SHELL_FUNCTIONS } from '../util/shell';

/** What makes a watcher fail the sync; every field has a default derived from the agent's startup budget. */
export interface WatchBudgets {
  /** restarts of one container of a new pod beyond which it is crash-looping */
  readonly restartBudget: number;
  /** seconds a new pod may stay Pending (unscheduled, or its containers not created) */
  readonly pendingDeadlineSeconds: number;
  /** seconds a container may stay in an image pull error or a container config error (a Secret created late) */
  readonly failureGraceSeconds: number;
  /** seconds between two reads */
  readonly pollSeconds: number;
  /** seconds the watcher waits for the rollout to complete before it fails */
  readonly timeoutSeconds: number;
}

/** What the watcher adds to the startup budget before a Pending pod is a failure: scheduling, the image pull, init containers. */
export const PENDING_SLACK_SECONDS = 5 * 60;
export const DEFAULT_RESTART_BUDGET = 3;
export const DEFAULT_FAILURE_GRACE_SECONDS = 120;
export const DEFAULT_POLL_SECONDS = 10;
/** A day at most: the watcher holds the Argo CD sync while it runs. */
export const MAX_WATCH_SECONDS = 86400;
export const DEFAULT_WATCH_TIMEOUT_SECONDS = 6 * 3600;

/**
 * The default budgets for an agent whose pod template gives its containers `startupBudgetSeconds` to start (the
 * largest startupProbe's initialDelaySeconds + periodSeconds × failureThreshold; 0 without a startup probe): a pod
 * may stay Pending for that plus PENDING_SLACK_SECONDS, and a container restarted by its own startup probe within
 * the budget is not crash-looping before DEFAULT_RESTART_BUDGET restarts.
 */
export function defaultWatchBudgets(startupBudgetSeconds: number | undefined): WatchBudgets {
  return {
    restartBudget: DEFAULT_RESTART_BUDGET,
    pendingDeadlineSeconds: (startupBudgetSeconds ?? 0) + PENDING_SLACK_SECONDS,
    failureGraceSeconds: DEFAULT_FAILURE_GRACE_SECONDS,
    pollSeconds: DEFAULT_POLL_SECONDS,
    timeoutSeconds: DEFAULT_WATCH_TIMEOUT_SECONDS,
  };
}

/** The container waiting reasons a watcher fails on once they last `failureGraceSeconds`, by doctor's cause. */
export const IMAGE_PULL_REASONS = ['ImagePullBackOff', 'ErrImagePull', 'InvalidImageName', 'ErrImageNeverPull'];
export const CONFIG_ERROR_REASONS = ['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError'];

/** The doctor causes a watcher reports, each with doctor's fix in the Job's environment (FIX_<CAUSE>). */
export const WATCH_CAUSES = [
  'crash-loop', 'image-pull', 'config-error', 'pending-resources', 'pending-taint', 'pending-host-port', 'pending-affinity', 'not-ready',
] as const;
export type WatchCause = (typeof WATCH_CAUSES)[number];

/** The environment variable holding a cause's fix. */
export function fixVariable(cause: WatchCause): string {
  return `FIX_${cause.toUpperCase().replace(/-/g, '_')}`;
}

/** What the watcher's environment is made of (its Job adds the record's: WATCH_REVISION, RECORD_NAME, …). */
export interface WatchTarget {
  /** the wave (rollout group) watched */
  readonly group: string;
  readonly namespace: string;
  readonly daemonSet: string;
  /** the DaemonSet's spec.selector.matchLabels */
  readonly selector: { readonly [key: string]: string };
  readonly budgets: WatchBudgets;
}

/** The watcher's environment: the script reads everything from it. Sorted by name. */
export function watcherEnvironment(t: WatchTarget): { [name: string]: string } {
  const selector = Object.keys(t.selector).sort().map((k) => `${k}=${t.selector[k]}`).join(',');
  const env: { [name: string]: string } = {
    WATCH_NAME: t.group,
    WATCH_NAMESPACE: t.namespace,
    WATCH_DAEMONSET: t.daemonSet,
    // URL-encoded once here: label keys and values are [A-Za-z0-9._/-], so only '=', ',' and '/' need it
    WATCH_SELECTOR: encodeURIComponent(selector),
    RESTART_BUDGET: String(t.budgets.restartBudget),
    PENDING_DEADLINE_SECONDS: String(t.budgets.pendingDeadlineSeconds),
    FAILURE_GRACE_SECONDS: String(t.budgets.failureGraceSeconds),
    POLL_SECONDS: String(t.budgets.pollSeconds),
    WATCH_TIMEOUT_SECONDS: String(t.budgets.timeoutSeconds),
  };
  for (const cause of WATCH_CAUSES) env[fixVariable(cause)] = fixFor(cause);
  return Object.fromEntries(Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * One JSON token a line (strings, numbers, literals, punctuation), as JSON.sh tokenizes: grep -o is linear in the
 * input, so a list of thousands of pods is walked once.
 */
const TOKENIZE = 'grep -o -E \'"([^"\\\\]|\\\\.)*"|-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?|true|false|null|[][{}:,]\'';

/**
 * The awk that walks the tokens: a stack of objects and arrays, the path of each scalar (`.items[3].status.phase`)
 * handed to take(path, value). Strings are unquoted; escapes other than \\" \\n \\r \\t stay as written, so no
 * control character reaches the log.
 */
const JSON_WALK = String.raw`
function unq(s) { s = substr(s, 2, length(s) - 2); gsub(/\\"/, "\"", s); gsub(/\\[nrt]/, " ", s); return s }
function open(t) { sp++; typ[sp] = t; key[sp] = ""; idx[sp] = 0; nk[sp] = (t == "o") }
function path(   i, p) { p = ""; for (i = 1; i <= sp; i++) p = p (typ[i] == "o" ? "." key[i] : "[" idx[i] "]"); return p }
{
  t = $0
  if (t == "{") { open("o"); next }
  if (t == "[") { open("a"); next }
  if (t == "}" || t == "]") { sp--; next }
  if (t == ":") next
  if (t == ",") { if (typ[sp] == "a") idx[sp]++; else nk[sp] = 1; next }
  if (typ[sp] == "o" && nk[sp]) { key[sp] = unq(t); nk[sp] = 0; next }
  take(path(), substr(t, 1, 1) == "\"" ? unq(t) : t)
}
`;

/** Prints nothing for one whole JSON document, else `not JSON (<why>): ` (util/json-awk.ts). */
const JSON_CHECK_AWK = JSON_READER_AWK + String.raw`function opened(t) {}
function take(v, s) {}
function finish() { if (err != "") printf "not JSON (%s): ", err }
`;

/**
 * The DaemonSet: `generation templateGeneration observedGeneration desired updated available`, separated by tabs ('-'
 * for a missing field; a tab in a value becomes a space). The values are as the API server wrote them: the script
 * takes only whole numbers.
 */
const DAEMONSET_AWK = String.raw`
function take(p, v) { f[p] = v }
function g(p,   v) { v = (p in f) && f[p] != "" ? f[p] : "-"; gsub(/\t/, " ", v); return v }
END {
  OFS = "\t"
  print g(".metadata.generation"), g(".metadata.annotations.deprecated.daemonset.template.generation"), g(".status.observedGeneration"),
    g(".status.desiredNumberScheduled"), g(".status.updatedNumberScheduled"), g(".status.numberAvailable")
}
`;

/** A pod's events: the newest Warning as `reason<TAB>message`. */
const EVENTS_AWK = String.raw`
function take(p, v,   i, m, r) {
  if (substr(p, 1, 7) != ".items[") return
  m = index(p, "]"); i = substr(p, 8, m - 8) + 0; r = substr(p, m + 1)
  if (r == ".type") ty[i] = v; else if (r == ".reason") re[i] = v; else if (r == ".message") ms[i] = v
  else if (r == ".lastTimestamp" || (r == ".eventTime" && !(i in at))) at[i] = v
  if (i > n) n = i
}
END {
  best = -1
  for (i = 0; i <= n; i++) if (ty[i] == "Warning" && (best < 0 || at[i] >= at[best])) best = i
  if (best >= 0) { s = ms[best]; gsub(/\t/, " ", s); printf "%s\t%s\n", re[best], substr(s, 1, 400) }
}
`;

/**
 * The verdict on the new revision's pods (a pods List): the first pod that fails, as
 * `FAIL<TAB>cause<TAB>pod<TAB>node<TAB>reason<TAB>detail`, then `PODS <count> <ready>`. In order, per container (init
 * containers first): OOMKilled (now or last time): crash-loop; more restarts than the budget: crash-loop; an image
 * pull error for `grace` seconds: image-pull; a container config error for `grace` seconds: config-error; then, unless
 * a container is in one of those errors still within its grace (a watcher started late, or a retry, must not call
 * a failed pull not-ready), a pod Pending for `deadline` seconds: pending-* by the scheduler's words (the PodScheduled condition), or pending-start
 * when it is bound (the script reads its events). How long a reason has lasted is kept between reads in the file
 * `seenfile` (`pod|class firstSeenEpoch` lines), written anew to `newseen`.
 */
const JUDGE_AWK = String.raw`
function epoch(ts,   y, m, d, era, yoe, mp, doe) {
  if (ts !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]/) return now
  y = substr(ts, 1, 4) + 0; m = substr(ts, 6, 2) + 0; d = substr(ts, 9, 2) + 0
  if (m <= 2) y--
  era = int(y / 400); yoe = y - era * 400; mp = (m + 9) % 12
  doe = yoe * 365 + int(yoe / 4) - int(yoe / 100) + int((153 * mp + 2) / 5) + d - 1
  return (era * 146097 + doe - 719468) * 86400 + substr(ts, 12, 2) * 3600 + substr(ts, 15, 2) * 60 + substr(ts, 18, 2)
}
function under(r, prefix,   rest, m) {
  if (index(r, prefix) != 1) return ""
  rest = substr(r, length(prefix) + 1); m = index(rest, "]")
  return substr(rest, 1, m - 1) SUBSEP substr(rest, m + 2)
}
function take(p, v,   i, m, r, s, kj) {
  if (substr(p, 1, 7) != ".items[") return
  m = index(p, "]"); i = substr(p, 8, m - 8) + 0; r = substr(p, m + 1)
  if (i > n) n = i
  if (r == ".metadata.name") name[i] = v
  else if (r == ".metadata.creationTimestamp") created[i] = v
  else if (r == ".metadata.deletionTimestamp") gone[i] = 1
  else if (r == ".spec.nodeName") node[i] = v
  else if (r == ".spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchFields[0].values[0]") target[i] = v
  else if (r == ".status.phase") phase[i] = v
  else if ((s = under(r, ".status.conditions[")) != "") { split(s, kj, SUBSEP); cond[i, kj[1], kj[2]] = v; if (kj[1] + 1 > nc[i]) nc[i] = kj[1] + 1 }
  else if ((s = under(r, ".status.initContainerStatuses[")) != "") { split(s, kj, SUBSEP); cs[i, "i", kj[1], kj[2]] = v; if (kj[1] + 1 > ncs[i, "i"]) ncs[i, "i"] = kj[1] + 1 }
  else if ((s = under(r, ".status.containerStatuses[")) != "") { split(s, kj, SUBSEP); cs[i, "c", kj[1], kj[2]] = v; if (kj[1] + 1 > ncs[i, "c"]) ncs[i, "c"] = kj[1] + 1 }
}
function lasted(pod, class,   k, first) {
  k = pod "|" class; first = (k in seen) ? seen[k] : now
  print k, first > newseen
  return now - first >= grace
}
function clean(s) { gsub(/\t/, " ", s); return substr(s, 1, 400) }
function fail(cause, i, nd, reason, detail) {
  printf "FAIL\t%s\t%s\t%s\t%s\t%s\n", cause, name[i], nd, reason, clean(detail); failed = 1
}
function condition(i, type, field,   c) {
  for (c = 0; c < nc[i]; c++) if (cond[i, c, "type"] == type) return cond[i, c, field]
  return ""
}
function judge(i,   nd, k, kind, j, what, rc, wr, wm, lr, le, tr, te, age, said, graced) {
  nd = node[i] != "" ? node[i] : (target[i] != "" ? target[i] : "-")
  for (k = 1; k <= 2; k++) {
    kind = k == 1 ? "i" : "c"
    for (j = 0; j < ncs[i, kind]; j++) {
      what = (kind == "i" ? "init container " : "container ") cs[i, kind, j, "name"]
      rc = cs[i, kind, j, "restartCount"] + 0
      wr = cs[i, kind, j, "state.waiting.reason"]; wm = cs[i, kind, j, "state.waiting.message"]
      lr = cs[i, kind, j, "lastState.terminated.reason"]; le = cs[i, kind, j, "lastState.terminated.exitCode"]
      tr = cs[i, kind, j, "state.terminated.reason"]; te = cs[i, kind, j, "state.terminated.exitCode"]
      if (tr == "OOMKilled" || lr == "OOMKilled") {
        fail("crash-loop", i, nd, "OOMKilled", what " was OOMKilled (exit code " (tr == "OOMKilled" ? te : le) ", " rc " restarts): it uses more memory than its limit; raise the limit or roll back")
        return
      }
      if (rc > budget) {
        fail("crash-loop", i, nd, wr != "" ? wr : "Restarted", what " restarted " rc " times (budget " budget "); last terminated: " (lr != "" ? lr : "unknown reason") ", exit code " (le != "" ? le : "?"))
        return
      }
      if (wr ~ /^(` + IMAGE_PULL_REASONS.join('|') + String.raw`)$/) {
        if (lasted(name[i], "image-pull")) { fail("image-pull", i, nd, wr, what " image " cs[i, kind, j, "image"] (wm != "" ? ": " wm : "")); return }
        graced = 1
      }
      if (wr ~ /^(` + CONFIG_ERROR_REASONS.join('|') + String.raw`)$/) {
        if (lasted(name[i], "config-error")) { fail("config-error", i, nd, wr, what (wm != "" ? ": " wm : "")); return }
        graced = 1
      }
    }
  }
  age = now - epoch(created[i])
  # a container in a pull or config error has its own clock (the grace): the Pending deadline would name the wrong cause
  if (phase[i] == "Pending" && age >= deadline && !graced) {
    said = condition(i, "PodScheduled", "message")
    if (node[i] == "") {
      cause = said ~ /Insufficient|Too many pods/ ? "pending-resources" : said ~ /free ports/ ? "pending-host-port" : said ~ /taint/ ? "pending-taint" : said ~ /affinity|selector/ ? "pending-affinity" : "pending-resources"
      fail(cause, i, nd, "Unschedulable", "pod Pending for " age " s (deadline " deadline " s)" (said != "" ? "; the scheduler: " said : ""))
    } else {
      fail("pending-start", i, nd, "Pending", "pod bound to the node but its containers not started after " age " s (deadline " deadline " s)")
    }
  }
}
BEGIN { while ((getline line < seenfile) > 0) { split(line, sf, " "); if (sf[1] != "") seen[sf[1]] = sf[2] } }
END {
  pods = 0; ready = 0
  for (i = 0; i <= n; i++) {
    if (!(i in name) || (i in gone)) continue
    pods++
    if (condition(i, "Ready", "status") == "True") ready++
    if (!failed) judge(i)
  }
  print "PODS", pods, ready
}
`;

for (const [what, program] of Object.entries({ JSON_WALK, JSON_CHECK_AWK, DAEMONSET_AWK, EVENTS_AWK, JUDGE_AWK })) {
  // each program goes between single quotes in the script
  if (program.includes('\'')) throw new Error(`${what} holds a single quote`);
}

const WATCH_RECORD: RecordWords = {
  ns: 'WATCH_NAMESPACE', revision: 'WATCH_REVISION', who: 'watcher', overridden: 'watching', again: 'watching',
};

/** The watcher's instructions to a person, after a failure. */
const HOW_TO_ACT = `how_to_act() {
  log "the sync stops here; a retry of this sync fails here again; a person decides:"
  log "  fix the agent in a new commit (a new revision is watched again), or revert the commit that promoted this wave;"
  log "  watch again (a problem fixed outside Git): kubectl -n \${WATCH_NAMESPACE} delete configmap \${RECORD_NAME}, then sync;"
  log "  override (pass without watching): kubectl -n \${WATCH_NAMESPACE} patch configmap \${RECORD_NAME} --type merge -p '{\\"data\\":{\\"override\\":\\"\${WATCH_REVISION}\\"}}', then sync"
}`;

/**
 * The watcher, as POSIX sh with curl, grep and awk.
 *
 * Reads WATCH_NAME, WATCH_NAMESPACE, WATCH_DAEMONSET, WATCH_SELECTOR (URL-encoded), the budgets RESTART_BUDGET,
 * PENDING_DEADLINE_SECONDS, FAILURE_GRACE_SECONDS, POLL_SECONDS, WATCH_TIMEOUT_SECONDS, doctor's fixes FIX_<CAUSE>,
 * WORK_DIR (a writable directory), and for its record WATCH_REVISION, RECORD_NAME, KUBERNETES_API,
 * SERVICE_ACCOUNT_DIR.
 *
 * The record is the gates' (the ConfigMap RECORD_NAME, key `state`: "<revision> running|passed|failed"), for the same
 * reason: Argo CD retries a failed sync by itself and deletes the failed hook Job before each retry, and a new
 * watcher would find a crash-looping pod restarted within its budget again, or the DaemonSet complete once the bad
 * pods were replaced by hand. WATCH_REVISION is a hash of the wave's DaemonSet and of the watcher's budgets.
 * - `override` equal to WATCH_REVISION (a person wrote it): passes without watching;
 * - "<revision> failed": fails at once; "<revision> running" or "running N" (an earlier attempt ended without a
 *   verdict: its pod deleted or evicted, its deadline passed): watches again, up to UNFINISHED_ATTEMPTS attempts,
 *   then records "failed" and fails (recordGuard);
 * - otherwise records "running" and reads, every POLL_SECONDS, the DaemonSet
 *   (/apis/apps/v1/namespaces/NS/daemonsets/NAME) and the pods of its current template generation (label
 *   pod-template-generation, which the DaemonSet controller gives each pod it creates: pkg/controller/daemon/util
 *   CreatePodTemplate, IsPodUpdated), until one of them fails (JUDGE_AWK: the pod, its node, the reason, then the
 *   newest Warning event of the pod and doctor's fix) or the DaemonSet's controller has observed its generation and
 *   every desired pod is updated and available (gitops-engine's DaemonSet health, kubectl rollout status): records
 *   "failed" or "passed". Past WATCH_TIMEOUT_SECONDS it fails.
 * The API server unreachable or refusing (no permission) five reads in a row, or the record unreadable: fails closed.
 */
export const WATCHER_SCRIPT = `set -u
${SHELL_FUNCTIONS}# log MESSAGE: one line, with nothing a terminal takes for a control (the API server's answers are in it)
log() { printf '%s\\n' "$(printable "watch \${WATCH_NAME}: $*")"; }
${recordFunctions(WATCH_RECORD.ns, WATCH_RECORD.revision, 'rollout-watch-record')}${HOW_TO_ACT}
tokens() { ${TOKENIZE} "$1"; }
# well_formed FILE: prints nothing when FILE holds one whole JSON document, else "not JSON (why): "
well_formed() { { cat "$1"; echo; } | awk '${JSON_CHECK_AWK}'; }
# get PATH FILE: the API server's answer to GET PATH in FILE; sets get_code (000 when unreachable) and get_error
get() {
  get_code=$(curl --globoff --silent --show-error --connect-timeout 10 --max-time 60 --retry 3 --retry-delay 2 --retry-connrefused \\
    ${KUBE_AUTH} \\
    --output "$2" --write-out '%{http_code}' "\${KUBERNETES_API}$1" 2>"\${WORK_DIR}/curl.err")
  case "$get_code" in [0-9][0-9][0-9]) get_error="" ;; *) get_code=000; get_error=$(oneline "$(cat "\${WORK_DIR}/curl.err")") ;; esac
}
failures=0
# unreadable WHAT: counts a failed read; the fifth in a row fails the watcher closed
unreadable() {
  failures=$((failures + 1))
  log "cannot read $1 (HTTP \${get_code}): \${get_error}$(oneline "$(head -c 500 "\${WORK_DIR}/answer.json" 2>/dev/null)")"
  if [ "$failures" -ge 5 ]; then
    log "FAILED: \${failures} reads in a row failed; the watcher fails closed"
    record failed
    how_to_act
    exit 1
  fi
}
# failed_pod LINE: the judge's FAIL line, told with the pod's newest Warning event and doctor's fix
failed_pod() {
  tab=$(printf '\\t')
  IFS="$tab" read -r _ cause pod node reason detail <<EOF
$1
EOF
  event=""
  # a pod name from the API server is a DNS subdomain, which a URL carries as is; anything else is not asked about
  if dns_subdomain "$pod"; then
    get "/api/v1/namespaces/\${WATCH_NAMESPACE}/events?fieldSelector=involvedObject.name%3D\${pod}" "\${WORK_DIR}/answer.json"
    if [ "$get_code" = 200 ]; then event=$(tokens "\${WORK_DIR}/answer.json" | awk '${JSON_WALK}${EVENTS_AWK}'); fi
  else
    log "the failing pod's name is not a DNS subdomain: its events are not read"
  fi
  if [ "$cause" = pending-start ]; then
    case "$event" in FailedMount*) cause=config-error ;; *) cause=not-ready ;; esac
  fi
  case "$cause" in ${WATCH_CAUSES.join(' | ')}) eval "fix=\\\${FIX_$(printf '%s' "$cause" | tr 'a-z-' 'A-Z_')}" ;; *) fix="none known" ;; esac
  log "FAILED: pod \${WATCH_NAMESPACE}/\${pod} on node \${node}: \${reason}: \${detail}"
  if [ -n "$event" ]; then log "  newest warning event: $(printf '%s' "$event" | tr '\\t' ' ')"; fi
  log "  cause \${cause}; fix: \${fix}"
  ns_word=$(shell_word "\${WATCH_NAMESPACE}"); pod_word=$(shell_word "$pod")
  log "  look: kubectl -n \${ns_word} describe pod \${pod_word}; kubectl -n \${ns_word} logs \${pod_word} --all-containers --previous"
  record failed
  how_to_act
  exit 1
}
tab=$(printf '\\t')
# whole_number FIELD VALUE: VALUE, read from the DaemonSet, is a whole number or '-' (missing), else the watcher fails closed
whole_number() {
  case "$2" in
    -) return 0 ;;
    '' | *[!0-9]* | ???????????????????*)
      log "FAILED: daemonset \${WATCH_NAMESPACE}/\${WATCH_DAEMONSET} has $1 $(shell_word "$2"), not a whole number; the watcher fails closed"
      record failed
      how_to_act
      exit 1 ;;
  esac
}
# dns_subdomain NAME: NAME is a DNS-1123 subdomain (what the API server takes as a pod name)
dns_subdomain() {
  case "$1" in '' | *[!a-z0-9.-]* | [.-]* | *[.-] | *..* | *.-* | *-.*) return 1 ;; esac
  [ "\${#1}" -le 253 ]
}
${recordGuard(WATCH_RECORD)}
log "watching daemonset \${WATCH_NAMESPACE}/\${WATCH_DAEMONSET}: fails when a pod of its new revision restarts more than \${RESTART_BUDGET} times, is OOMKilled, stays \${FAILURE_GRACE_SECONDS} s in an image pull or container config error, or Pending \${PENDING_DEADLINE_SECONDS} s; passes when every pod is updated and available"
: > "\${WORK_DIR}/seen"
started=$(date -u +%s)
progress=""
while :; do
  now=$(date -u +%s)
  if [ $((now - started)) -ge "\${WATCH_TIMEOUT_SECONDS}" ]; then
    log "FAILED: the rollout is not complete after \${WATCH_TIMEOUT_SECONDS} s (\${progress:-nothing read})"
    record failed
    how_to_act
    exit 1
  fi
  get "/apis/apps/v1/namespaces/\${WATCH_NAMESPACE}/daemonsets/\${WATCH_DAEMONSET}" "\${WORK_DIR}/answer.json"
  case "$get_code" in
    200) get_error=$(well_formed "\${WORK_DIR}/answer.json") ;;
    404) log "daemonset \${WATCH_NAMESPACE}/\${WATCH_DAEMONSET} does not exist yet"; sleep "\${POLL_SECONDS}"; continue ;;
    *) ;;
  esac
  # its numbers decide the verdict: an answer that is not one whole JSON document (a proxy's page quoting one) is no answer
  if [ "$get_code" != 200 ] || [ -n "$get_error" ]; then unreadable "daemonset \${WATCH_NAMESPACE}/\${WATCH_DAEMONSET}"; sleep "\${POLL_SECONDS}"; continue; fi
  IFS="$tab" read -r generation template observed desired updated available <<EOF
$(tokens "\${WORK_DIR}/answer.json" | awk '${JSON_WALK}${DAEMONSET_AWK}')
EOF
  whole_number generation "$generation"; whole_number "template generation (annotation deprecated.daemonset.template.generation)" "$template"
  whole_number observedGeneration "$observed"; whole_number desiredNumberScheduled "$desired"
  whole_number updatedNumberScheduled "$updated"; whole_number numberAvailable "$available"
  if [ "$observed" = - ] || [ "$generation" = - ] || [ "$observed" -lt "$generation" ]; then
    log "waiting for the DaemonSet controller to observe generation \${generation}"
    sleep "\${POLL_SECONDS}"
    continue
  fi
  [ "$desired" = - ] && desired=0; [ "$updated" = - ] && updated=0; [ "$available" = - ] && available=0
  selector="\${WATCH_SELECTOR}"
  if [ "$template" != - ]; then selector="\${selector}%2Cpod-template-generation%3D\${template}"; fi
  get "/api/v1/namespaces/\${WATCH_NAMESPACE}/pods?labelSelector=\${selector}" "\${WORK_DIR}/answer.json"
  if [ "$get_code" != 200 ]; then unreadable "the pods of daemonset \${WATCH_NAMESPACE}/\${WATCH_DAEMONSET}"; sleep "\${POLL_SECONDS}"; continue; fi
  failures=0
  : > "\${WORK_DIR}/seen.new"
  verdict=$(tokens "\${WORK_DIR}/answer.json" | awk -v now="$now" -v budget="\${RESTART_BUDGET}" -v deadline="\${PENDING_DEADLINE_SECONDS}" \\
    -v grace="\${FAILURE_GRACE_SECONDS}" -v seenfile="\${WORK_DIR}/seen" -v newseen="\${WORK_DIR}/seen.new" '${JSON_WALK}${JUDGE_AWK}')
  mv "\${WORK_DIR}/seen.new" "\${WORK_DIR}/seen"
  failed_line=$(printf '%s\\n' "$verdict" | grep '^FAIL' | head -n 1)
  if [ -n "$failed_line" ]; then failed_pod "$failed_line"; fi
  pods=$(printf '%s\\n' "$verdict" | grep '^PODS' | head -n 1)
  now_progress="\${updated} of \${desired} updated, \${available} available; new revision (template generation \${template}): \${pods#PODS }"
  now_progress=$(printf '%s' "$now_progress" | sed 's/: \\([0-9]*\\) \\([0-9]*\\)$/: \\1 pods, \\2 ready/')
  if [ "$now_progress" != "$progress" ]; then log "$now_progress"; progress="$now_progress"; fi
  if [ "$updated" -ge "$desired" ] && [ "$available" -ge "$desired" ]; then
    ${recordVerdict(WATCH_RECORD, 'passed')}
    log "rollout complete: every desired pod (\${desired}) updated and available: promoting past this wave"
    exit 0
  fi
  sleep "\${POLL_SECONDS}"
done
`;

/** The awk programs the script runs, and its tokenizer, for a test to run them alone. */
export const WATCH_PROGRAMS = {
  tokenize: TOKENIZE, judge: JSON_WALK + JUDGE_AWK, daemonSet: JSON_WALK + DAEMONSET_AWK, events: JSON_WALK + EVENTS_AWK,
};

/** A pod of the new revision that fails the rollout: the judge's FAIL line. */
export interface WatchFailure {
  /** a doctor cause; 'pending-start' for a bound pod whose containers never started (its events tell which) */
  readonly cause: WatchCause | 'pending-start';
  readonly pod: string;
  readonly node: string;
  readonly reason: string;
  readonly detail: string;
}

export interface WatchJudgement {
  readonly failure?: WatchFailure;
  /** the new revision's pods (not being deleted), and how many are Ready */
  readonly pods: number;
  readonly ready: number;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
const oneLine = (s: string): string => s.replace(/[\n\r\t]/g, ' ').slice(0, 400);

/** A container's failure, in JUDGE_AWK's order: OOMKilled, restarts past the budget, a pull error lasting the grace, a config error lasting it. */
function containerFailure(p: any, s: any, what: string, now: number, seen: ReadonlyMap<string, number>, next: Map<string, number>, b: WatchBudgets):
Omit<WatchFailure, 'pod' | 'node'> | undefined {
  const name = str(p?.metadata?.name);
  const rc = typeof s?.restartCount === 'number' ? s.restartCount : 0;
  const wr = str(s?.state?.waiting?.reason);
  const wm = str(s?.state?.waiting?.message);
  const lr = str(s?.lastState?.terminated?.reason);
  const le = str(s?.lastState?.terminated?.exitCode);
  const tr = str(s?.state?.terminated?.reason);
  const te = str(s?.state?.terminated?.exitCode);
  const lasted = (cls: string) => {
    const key = `${name}|${cls}`;
    const first = seen.get(key) ?? now;
    next.set(key, first);
    return now - first >= b.failureGraceSeconds;
  };
  if (tr === 'OOMKilled' || lr === 'OOMKilled') {
    return { cause: 'crash-loop', reason: 'OOMKilled', detail: `${what} was OOMKilled (exit code ${tr === 'OOMKilled' ? te : le}, ${rc} restarts): it uses more memory than its limit; raise the limit or roll back` };
  }
  if (rc > b.restartBudget) {
    return { cause: 'crash-loop', reason: wr || 'Restarted', detail: `${what} restarted ${rc} times (budget ${b.restartBudget}); last terminated: ${lr || 'unknown reason'}, exit code ${le || '?'}` };
  }
  if (IMAGE_PULL_REASONS.includes(wr) && lasted('image-pull')) return { cause: 'image-pull', reason: wr, detail: `${what} image ${str(s?.image)}${wm ? `: ${wm}` : ''}` };
  if (CONFIG_ERROR_REASONS.includes(wr) && lasted('config-error')) return { cause: 'config-error', reason: wr, detail: `${what}${wm ? `: ${wm}` : ''}` };
  return undefined;
}

/** A Pending pod past the deadline: the scheduler's words decide which pending cause (the same keywords as doctor's pending()). */
function pendingFailure(p: any, age: number, b: WatchBudgets): Omit<WatchFailure, 'pod' | 'node'> | undefined {
  if (str(p?.status?.phase) !== 'Pending' || age < b.pendingDeadlineSeconds) return undefined;
  const conditions: any[] = Array.isArray(p?.status?.conditions) ? p.status.conditions : [];
  const said = str(conditions.find((c) => c?.type === 'PodScheduled')?.message);
  if (str(p?.spec?.nodeName) !== '') {
    return { cause: 'pending-start', reason: 'Pending', detail: `pod bound to the node but its containers not started after ${age} s (deadline ${b.pendingDeadlineSeconds} s)` };
  }
  const cause: WatchCause = /Insufficient|Too many pods/.test(said) ? 'pending-resources' : /free ports/.test(said) ? 'pending-host-port'
    : /taint/.test(said) ? 'pending-taint' : /affinity|selector/.test(said) ? 'pending-affinity' : 'pending-resources';
  return { cause, reason: 'Unschedulable', detail: `pod Pending for ${age} s (deadline ${b.pendingDeadlineSeconds} s)${said ? `; the scheduler: ${said}` : ''}` };
}

/**
 * JUDGE_AWK's verdict, for `doctor --live --wait`: the same conditions in the same order on the same fields of the
 * new revision's pods (a test runs both on the same shapes). `seen` holds when each (pod, class) was first seen; the
 * entries still true this time are written to `next`.
 */
export function judgePods(pods: readonly any[], now: number, seen: ReadonlyMap<string, number>, b: WatchBudgets,
  next: Map<string, number>): WatchJudgement {
  let failure: WatchFailure | undefined;
  let count = 0;
  let ready = 0;
  for (const p of pods) {
    if (p?.metadata?.deletionTimestamp !== undefined) continue;
    count++;
    const conditions: any[] = Array.isArray(p?.status?.conditions) ? p.status.conditions : [];
    if (conditions.some((c) => c?.type === 'Ready' && c?.status === 'True')) ready++;
    if (failure !== undefined) continue;
    const terms = p?.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms;
    const target = str(terms?.[0]?.matchFields?.[0]?.values?.[0]);
    const node = str(p?.spec?.nodeName) || target || '-';
    const statuses: Array<[string, any]> = [
      ...(Array.isArray(p?.status?.initContainerStatuses) ? p.status.initContainerStatuses.map((s: any) => [`init container ${str(s?.name)}`, s]) : []),
      ...(Array.isArray(p?.status?.containerStatuses) ? p.status.containerStatuses.map((s: any) => [`container ${str(s?.name)}`, s]) : []),
    ];
    let found: Omit<WatchFailure, 'pod' | 'node'> | undefined;
    for (const [what, s] of statuses) {
      found = containerFailure(p, s, what, now, seen, next, b);
      if (found !== undefined) break;
    }
    const created = Date.parse(str(p?.metadata?.creationTimestamp));
    // a container in a pull or config error within its grace: the grace decides, not the Pending deadline
    const graced = statuses.some(([, st]) => [...IMAGE_PULL_REASONS, ...CONFIG_ERROR_REASONS].includes(str(st?.state?.waiting?.reason)));
    if (!graced) found ??= pendingFailure(p, Number.isNaN(created) ? 0 : now - Math.floor(created / 1000), b);
    if (found !== undefined) failure = { ...found, pod: str(p?.metadata?.name), node, detail: oneLine(found.detail) };
  }
  return { failure, pods: count, ready };
}
