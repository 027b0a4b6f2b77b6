/**
 * The shell every hook Job the constructs render shares (the wave gates, the rollout watchers, the readiness
 * taint remover's image): the pinned curl image, the API server as a pod reaches it, and the record functions
 * that keep a Job's verdict in a ConfigMap. Pure: a test runs these functions with busybox sh as the Job does.
 */

import { JSON_READER_AWK } from '../util/json-awk';

/** Pinned curl image (Alpine based, runs as curl_user 100:101, has busybox sh). */
export const GATE_IMAGE = 'curlimages/curl:8.21.0';
/** User and group the curl image runs as. */
export const GATE_UID = 100;
export const GATE_GID = 101;

/** Where the gate's ServiceAccount token and CA are mounted (the kubelet's default). */
export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
/** The API server as the gate pod reaches it (the `kubernetes` Service in `default`). */
export const KUBERNETES_API = 'https://kubernetes.default.svc';

/** curl's arguments for the API server: its CA and the pod's ServiceAccount token (read at each call: the kubelet rotates it). */
export const KUBE_AUTH = '--cacert "\${SERVICE_ACCOUNT_DIR}/ca.crt" --oauth2-bearer "$(cat "\${SERVICE_ACCOUNT_DIR}/token" 2>/dev/null)"';

/**
 * The record ConfigMap as the API server answers it, read whole (util/json-awk.ts), for the revision `rev`: prints
 * `override` when data.override is `rev`, else `failed` or `running` when data.state is "`rev` failed" or
 * "`rev` running", else `none`; `invalid: not JSON: <why>` for an answer that is not one whole JSON document. Only
 * data's own keys count: a label or an annotation that quotes them is not the record.
 */
export const RECORD_STATE_AWK = JSON_READER_AWK + String.raw`function opened(t) {}
function take(v, s) {
  if (jd == 2 && jk[1] == "data" && s) { if (jk[2] == "override") override = v; else if (jk[2] == "state") state = v }
}
function finish() {
  if (err != "") print "invalid: not JSON: " err
  else if (override != "" && override == rev) print "override"
  else if (state == rev " failed") print "failed"
  else if (state == rev " running") print "running 1"
  else if (index(state, rev " running ") == 1 && substr(state, length(rev) + 10) ~ /^[0-9][0-9]?$/) print "running " substr(state, length(rev) + 10)
  else print "none"
}`;

// the scripts hold the program between single quotes
if (RECORD_STATE_AWK.includes('\'')) throw new Error('RECORD_STATE_AWK holds a single quote');

/**
 * The sh functions a Job that keeps a verdict in a record ConfigMap defines (the gates, the watchers): 'oneline',
 * 'kube METHOD URL [JSON TYPE]' (the API server with the pod's ServiceAccount token; sets kube_code and kube_body)
 * and 'record STATE' (writes "<revision> STATE" to the ConfigMap RECORD_NAME, patched or created with the label
 * app.kubernetes.io/component=<component>). ns and revision name the environment variables holding the
 * record's namespace and the revision; the script defines 'log' before them.
 */
export function recordFunctions(ns: string, revision: string, component: string): string {
  return `record_awk='${RECORD_STATE_AWK}'
# curl's own error (stderr) and the server's answer (stdout) on one log line, bounded
oneline() { printf '%s' "$1" | tr '\\n' ' ' | cut -c1-2000; }
record_url="\${KUBERNETES_API}/api/v1/namespaces/\${${ns}}/configmaps"
# kube METHOD URL [JSON]: sets kube_code (HTTP status, 000 when unreachable) and kube_body
kube() {
  if [ "$#" -ge 3 ]; then
    kube_out=$(curl --globoff --silent --show-error --connect-timeout 10 --max-time 30 --retry 3 --retry-delay 2 --retry-connrefused \\
      ${KUBE_AUTH} \\
      -X "$1" -H "Content-Type: $4" --data-binary "$3" --write-out '\\n%{http_code}' "$2" 2>&1)
  else
    kube_out=$(curl --globoff --silent --show-error --connect-timeout 10 --max-time 30 --retry 3 --retry-delay 2 --retry-connrefused \\
      ${KUBE_AUTH} \\
      -X "$1" --write-out '\\n%{http_code}' "$2" 2>&1)
  fi
  kube_code=$(printf '%s' "$kube_out" | tail -n 1)
  kube_body=$(printf '%s' "$kube_out" | sed '$d')
  case "$kube_code" in [0-9][0-9][0-9]) ;; *) kube_code=000 ;; esac
}
# record STATE: the verdict of this revision, in the record ConfigMap (patched, or created)
record() {
  at=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  kube PATCH "\${record_url}/\${RECORD_NAME}" "{\\"data\\":{\\"state\\":\\"\${${revision}} $1\\",\\"at\\":\\"\${at}\\"}}" application/merge-patch+json
  if [ "$kube_code" = 404 ]; then
    kube POST "\${record_url}" "{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"ConfigMap\\",\\"metadata\\":{\\"name\\":\\"\${RECORD_NAME}\\",\\"namespace\\":\\"\${${ns}}\\",\\"labels\\":{\\"app.kubernetes.io/component\\":\\"${component}\\"}},\\"data\\":{\\"state\\":\\"\${${revision}} $1\\",\\"at\\":\\"\${at}\\"}}" application/json
  fi
  case "$kube_code" in
    2??) return 0 ;;
    *) log "cannot record '$1' in configmap \${${ns}}/\${RECORD_NAME} (HTTP \${kube_code}): $(oneline "$kube_body")"; return 1 ;;
  esac
}
`;
}

/** What recordGuard and recordVerdict say of a Job keeping its verdict in a record ConfigMap. */
export interface RecordWords {
  /** the environment variables holding the record's namespace and the revision */
  readonly ns: string;
  readonly revision: string;
  /** the Job as its log names it: 'gate', 'watcher' */
  readonly who: string;
  /** what an override skips, after "this revision passes without": 'checks: promoting past this wave', 'watching' */
  readonly overridden: string;
  /** what a revision that failed before is not done again: 'checking', 'watching' */
  readonly again: string;
}

/**
 * Attempts of one revision that may end without a verdict (their pod deleted or evicted, or the Job's deadline passed)
 * before the next attempt records "failed" instead of running again.
 */
export const UNFINISHED_ATTEMPTS = 3;

/**
 * The start of a Job that keeps a verdict in a record (after recordFunctions and its 'how_to_act'): reads the
 * record, then exits 0 on an override of this revision and exits 1 on this revision's "failed" (a verdict: final).
 * Its "running" (or "running N": attempt N) is an earlier attempt that ended without a verdict, its pod deleted or
 * evicted: not a verdict, so it runs again and records "running N+1", up to UNFINISHED_ATTEMPTS attempts; past them
 * it records "failed" and exits 1. Otherwise it records "running". The record unreadable or unwritable: fails closed.
 */
export function recordGuard(w: RecordWords): string {
  const ns = `\${${w.ns}}`;
  const rev = `\${${w.revision}}`;
  return `kube GET "\${record_url}/\${RECORD_NAME}"
case "$kube_code" in
  200) record_state=$(printf '%s\\n' "$kube_body" | awk -v rev="${rev}" "$record_awk") ;;
  404) record_state=none ;;
  *)
    log "FAILED: cannot read the ${w.who}'s record, configmap ${ns}/\${RECORD_NAME} (HTTP \${kube_code}), the ${w.who} fails closed: $(oneline "$kube_body")"
    exit 1 ;;
esac
attempt=1
case "$record_state" in
  override)
    log "overridden: configmap ${ns}/\${RECORD_NAME} has override ${rev}, this revision passes without ${w.overridden}"
    exit 0 ;;
  failed)
    log "FAILED before for revision ${rev} (configmap ${ns}/\${RECORD_NAME}); not ${w.again} again"
    how_to_act
    exit 1 ;;
  "running "*)
    attempt=$(( \${record_state#running } + 1 ))
    if [ "$attempt" -gt ${UNFINISHED_ATTEMPTS} ]; then
      log "FAILED: ${UNFINISHED_ATTEMPTS} attempts for revision ${rev} ended without a verdict (pod deleted or evicted, or the deadline passed); counted as failed"
      record failed
      how_to_act
      exit 1
    fi
    log "an earlier attempt for revision ${rev} ended without a verdict (pod deleted or evicted, or the deadline passed): not a verdict, ${w.again} again (attempt \${attempt} of ${UNFINISHED_ATTEMPTS})" ;;
  none) ;;
  *)
    log "FAILED: cannot read the ${w.who}'s record, configmap ${ns}/\${RECORD_NAME} (\${record_state}), the ${w.who} fails closed: $(oneline "$kube_body")"
    exit 1 ;;
esac
if [ "$attempt" -gt 1 ]; then
  record "running \${attempt}" || { log "FAILED: the ${w.who} fails closed without its record"; exit 1; }
else
  ${recordVerdict(w, 'running')}
fi`;
}

/** `record STATE`, the Job failing closed when the record cannot be written. */
export function recordVerdict(w: RecordWords, state: 'running' | 'passed'): string {
  return `record ${state} || { log "FAILED: the ${w.who} fails closed without its record"; exit 1; }`;
}
