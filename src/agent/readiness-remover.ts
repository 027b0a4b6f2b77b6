/**
 * The readiness taint's remover: a small container beside the agent that removes the agent's taint from its node
 * once its pod is Ready there, and again whenever the taint comes back; and the ValidatingAdmissionPolicy that lets
 * it remove only that taint, only from its own node. Pure module (no cdk8s): a test runs `REMOVER_SCRIPT` with `sh`
 * against an API server as the pod does, and evaluates `removerPolicyValidations` with a CEL evaluator.
 *
 * Why a remover of our own rather than kubernetes-sigs/node-readiness-controller: that controller removes a taint
 * when node *conditions* are True, so each agent would still need something that writes a condition on its node
 * (a `nodes/status` grant, which no admission policy can narrow to one condition as tightly as this one narrows a
 * taint), a cluster-wide controller to run, and keys under `readiness.k8s.io/`, which the managed
 * cluster-autoscalers of GKE and AKS do not take as startup taints. The remover reads the pod's own Ready condition
 * (what the kubelet reports, probes included), works with every autoscaler and key, and needs no other component.
 */
import { GATE_GID, GATE_IMAGE, GATE_UID } from '../rollout/hook-shell';
import { READINESS_TAINT_EFFECT } from '../scheduling/readiness-taint';
import { JSON_READER_AWK } from '../util/json-awk';
import { SHELL_FUNCTIONS } from '../util/shell';

/** The remover's image: the pinned curl image the gate Jobs use (busybox sh, awk, sed; curl; no jq, no kubectl). */
export const REMOVER_IMAGE = GATE_IMAGE;
export const REMOVER_UID = GATE_UID;
export const REMOVER_GID = GATE_GID;
/** Where the remover's own token and the cluster CA are mounted (a projected volume only it mounts). */
export const REMOVER_TOKEN_DIR = '/var/run/secrets/node-agents.cdk8s.io/readiness-taint';
/** Seconds between two reads while the taint is there and the pod is not Ready yet. */
export const REMOVER_WAIT_SECONDS = 2;

/** The user name the API server gives the agent's ServiceAccount. */
export function serviceAccountUser(namespace: string, serviceAccount: string): string {
  return `system:serviceaccount:${namespace}:${serviceAccount}`;
}

/**
 * The remover's environment besides the downward-API ones (NODE_NAME, POD_NAME, POD_NAMESPACE). Sorted. No API
 * server URL: the script takes the kubelet's KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, as in-cluster
 * clients do (client-go rest.InClusterConfig), so it needs no cluster DNS: a host-network agent with dnsPolicy
 * Default, or one that starts before the node's pod network, still reaches the API server.
 */
export function removerEnvironment(taintKey: string, recheckSeconds: number): { [name: string]: string } {
  return {
    RECHECK_SECONDS: String(recheckSeconds),
    TAINT_KEY: taintKey,
    TOKEN_DIR: REMOVER_TOKEN_DIR,
    WAIT_SECONDS: String(REMOVER_WAIT_SECONDS),
  };
}

/**
 * The remover's JSON reader (util/json-awk.ts: strict, linear in the node object), for the two facts it needs without
 * jq: `mode=taint` prints the index in `.spec.taints` of the first taint whose key is `key` and effect NoSchedule;
 * `mode=ready` prints "yes" when `.status.conditions` has type Ready with status True. It reads the whole document
 * (strings with their escapes, nesting), so a key or a condition named inside a label, an annotation or a message is
 * never taken for the real one. An answer that is not JSON prints "invalid: not JSON: <why>" instead. Its input ends with a
 * newline (printf '%s\n').
 */
export const JSON_AWK = JSON_READER_AWK + String.raw`function opened(t) {}
function take(v, s) {
  if (jd != 4 || jt[1] != "o" || jt[2] != "o" || jt[3] != "a" || jt[4] != "o" || !s) return
  if (mode == "taint" && jk[1] == "spec" && jk[2] == "taints") {
    if (jk[4] == "key" && v == key) tk[ji[3]] = 1
    if (jk[4] == "effect" && v == "NoSchedule") te[ji[3]] = 1
  }
  if (mode == "ready" && jk[1] == "status" && jk[2] == "conditions") {
    if (jk[4] == "type" && v == "Ready") rt[ji[3]] = 1
    if (jk[4] == "status" && v == "True") rs[ji[3]] = 1
  }
}
function finish(   best, x) {
  if (err != "") { print "invalid: not JSON: " err; return }
  if (mode == "taint") { best = -1; for (x in tk) if ((x in te) && (best < 0 || x + 0 < best)) best = x + 0; if (best >= 0) print best }
  if (mode == "ready") { for (x in rt) if (x in rs) { print "yes"; return } }
}`;

/**
 * Sets `api`, the API server's base URL: KUBERNETES_API when set, else https:// and the kubelet's
 * KUBERNETES_SERVICE_HOST (in brackets when an IPv6 address) and KUBERNETES_SERVICE_PORT.
 */
export const REMOVER_API_LINES = 'case "${KUBERNETES_SERVICE_HOST:-}" in *:*) api_host="[$KUBERNETES_SERVICE_HOST]" ;; '
  + '*) api_host="${KUBERNETES_SERVICE_HOST:-}" ;; esac\n'
  + 'api="${KUBERNETES_API:-https://$api_host:${KUBERNETES_SERVICE_PORT:-443}}"';

/**
 * The remover, as POSIX sh with curl (busybox's sh, awk, sed, tr, cut and sleep; no jq, no kubectl).
 *
 * Reads TAINT_KEY, NODE_NAME, POD_NAME, POD_NAMESPACE, TOKEN_DIR (token and ca.crt), WAIT_SECONDS and
 * RECHECK_SECONDS, and the API server from KUBERNETES_SERVICE_HOST / KUBERNETES_SERVICE_PORT (an IPv6 address in
 * brackets), or KUBERNETES_API when set. Forever:
 * - reads its node; without the taint (TAINT_KEY, NoSchedule) it reads it again after RECHECK_SECONDS: a taint
 *   added again later (a node pool re-applying it, a person) is removed again;
 * - with the taint, reads its own pod: not Ready (the kubelet's Ready condition: every container started and
 *   passing its readiness probe) leaves the taint, and it reads again after WAIT_SECONDS;
 * - Ready: sends a JSON patch that removes that one entry of `spec.taints`, guarded by `test` operations on the
 *   entry's key and effect. The API server applies a JSON patch to the node as stored when the patch arrives, so
 *   the other taints are never rewritten from a stale read; if they moved meanwhile (another taint added or
 *   removed before it) the test fails (422), nothing changes, and it reads again. A strategic merge patch cannot
 *   do this: `spec.taints` has no patch merge key (k8s.io/api core/v1 NodeSpec), so such a patch replaces the
 *   whole list.
 * Logs one line each time its state changes, never the token.
 */
export const REMOVER_SCRIPT = String.raw`set -u
trap 'exit 0' TERM INT
json_awk='${JSON_AWK}'
${SHELL_FUNCTIONS}# say MESSAGE: one log line, with nothing a terminal takes for a control (the API server's answers are in it)
say() { printf '%s\n' "$(printable "readiness taint $TAINT_KEY on node $NODE_NAME: $*")"; }
last=""
# say_once STATE MESSAGE: logs a state when it is entered, not on every read
say_once() { if [ "$1" != "$last" ]; then last="$1"; shift; say "$*"; fi; }
pause() { sleep "$1" & wait $!; }
oneline() { printf '%s' "$1" | tr '\n' ' ' | cut -c1-500; }
# kube METHOD URL [BODY CONTENT-TYPE]: sets kube_code (HTTP status, 000 when unreachable) and kube_body
kube() {
  token=$(cat "$TOKEN_DIR/token" 2>/dev/null)
  if [ "$#" -ge 3 ]; then
    kube_out=$(curl --globoff --silent --show-error --connect-timeout 5 --max-time 20 --cacert "$TOKEN_DIR/ca.crt" --oauth2-bearer "$token" \
      -X "$1" -H "Content-Type: $4" --data-binary "$3" --write-out '\n%{http_code}' "$2" 2>&1)
  else
    kube_out=$(curl --globoff --silent --show-error --connect-timeout 5 --max-time 20 --cacert "$TOKEN_DIR/ca.crt" --oauth2-bearer "$token" \
      -X "$1" --write-out '\n%{http_code}' "$2" 2>&1)
  fi
  kube_code=$(printf '%s' "$kube_out" | tail -n 1)
  kube_body=$(printf '%s' "$kube_out" | sed '$d')
  case "$kube_code" in [0-9][0-9][0-9]) ;; *) kube_code=000 ;; esac
}
${REMOVER_API_LINES}
node_url="$api/api/v1/nodes/$NODE_NAME"
pod_url="$api/api/v1/namespaces/$POD_NAMESPACE/pods/$POD_NAME"
say "watching: removed once pod $POD_NAMESPACE/$POD_NAME is Ready, and again whenever it comes back"
while :; do
  # from the API server's watch cache (resourceVersion=0), not etcd: a read slightly behind only makes the guarded
  # patch below fail its test (422) and read again
  kube GET "$node_url?resourceVersion=0"
  if [ "$kube_code" != 200 ]; then
    say_once "node-$kube_code" "cannot read the node (HTTP $kube_code): $(oneline "$kube_body")"
    pause "$WAIT_SECONDS"; continue
  fi
  index=$(printf '%s\n' "$kube_body" | awk -v mode=taint -v key="$TAINT_KEY" "$json_awk")
  case "$index" in
    '') say_once absent "not on the node"; pause "$RECHECK_SECONDS"; continue ;;
    *[!0-9]*) say_once node-unreadable "cannot read the node's answer, the taint stays: $index"; pause "$WAIT_SECONDS"; continue ;;
  esac
  kube GET "$pod_url"
  if [ "$kube_code" != 200 ]; then
    say_once "pod-$kube_code" "cannot read pod $POD_NAMESPACE/$POD_NAME (HTTP $kube_code), the taint stays: $(oneline "$kube_body")"
    pause "$WAIT_SECONDS"; continue
  fi
  ready=$(printf '%s\n' "$kube_body" | awk -v mode=ready -v key= "$json_awk")
  case "$ready" in
    yes) ;;
    invalid*) say_once pod-unreadable "cannot read pod $POD_NAMESPACE/$POD_NAME's answer, the taint stays: $ready"; pause "$WAIT_SECONDS"; continue ;;
    *) say_once waiting "on the node, and pod $POD_NAMESPACE/$POD_NAME is not Ready: the taint stays"; pause "$WAIT_SECONDS"; continue ;;
  esac
  kube PATCH "$node_url" "[{\"op\":\"test\",\"path\":\"/spec/taints/$index/key\",\"value\":\"$TAINT_KEY\"},{\"op\":\"test\",\"path\":\"/spec/taints/$index/effect\",\"value\":\"${READINESS_TAINT_EFFECT}\"},{\"op\":\"remove\",\"path\":\"/spec/taints/$index\"}]" application/json-patch+json
  case "$kube_code" in
    200) last=removed; say "removed: pod $POD_NAMESPACE/$POD_NAME is Ready" ;;
    409|422) say_once moved "the node's taints changed while removing it (HTTP $kube_code): reading the node again"; pause 1 ;;
    *) say_once "patch-$kube_code" "cannot remove it (HTTP $kube_code): $(oneline "$kube_body")"; pause "$WAIT_SECONDS" ;;
  esac
done
`;

/** The key under which the API server records the node of the pod a bound ServiceAccount token was issued for. */
export const NODE_NAME_EXTRA = 'authentication.kubernetes.io/node-name';

/** One validation of the ValidatingAdmissionPolicy: a CEL expression and the message of a refusal. */
export interface PolicyValidation {
  readonly expression: string;
  readonly message: string;
}

/** The CEL string literal of a value (single-quoted; the values here are taint keys and user names). */
function celString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The policy's match condition: requests by the agent's ServiceAccount only. */
export function removerPolicyMatch(namespace: string, serviceAccount: string): string {
  return `request.userInfo.username == ${celString(serviceAccountUser(namespace, serviceAccount))}`;
}

/**
 * What a node update by the agent's ServiceAccount must be (admissionregistration.k8s.io/v1, Kubernetes 1.30):
 * - on the node its pod runs on: the API server puts that node's name in the user's extra
 *   `authentication.kubernetes.io/node-name` for a token bound to a pod (feature ServiceAccountTokenPodNodeInfo:
 *   beta and on by default in 1.30, GA in 1.32); a token without it (the gate off) is refused;
 * - only taints removed, and only these keys with effect NoSchedule: every taint after is one before, and every
 *   taint before is still there or is one of ours;
 * - nothing else changed that a `nodes` patch can change: labels, annotations, finalizers, owner references,
 *   spec.unschedulable (status is not written through `nodes`; the other spec fields are immutable or unused).
 */
export function removerPolicyValidations(taintKeys: readonly string[]): PolicyValidation[] {
  const keys = `[${taintKeys.map(celString).join(', ')}]`;
  const list = (obj: string, field: string) => `(has(${obj}.${field}) ? ${obj}.${field} : [])`;
  const same = (field: string, empty: string) =>
    `(has(object.${field}) ? object.${field} : ${empty}) == (has(oldObject.${field}) ? oldObject.${field} : ${empty})`;
  return [
    {
      // has(): a token without extra at all (none of the bound-token claims) is refused, not an evaluation error
      expression: `has(request.userInfo.extra) && ${celString(NODE_NAME_EXTRA)} in request.userInfo.extra`
        + ` && request.userInfo.extra[${celString(NODE_NAME_EXTRA)}] == [object.metadata.name]`,
      message: 'the readiness taint remover may change only the node its own pod runs on (its token names that node: Kubernetes 1.30 or later)',
    },
    {
      expression: `${list('object', 'spec.taints')}.all(t, t in ${list('oldObject', 'spec.taints')})`
        + ` && ${list('oldObject', 'spec.taints')}.all(t, t in ${list('object', 'spec.taints')} || (t.key in ${keys} && t.effect == '${READINESS_TAINT_EFFECT}'))`,
      message: `the readiness taint remover may only remove its own taint (${taintKeys.join(', ')}:${READINESS_TAINT_EFFECT}) from the node`,
    },
    {
      expression: [
        same('metadata.labels', '{}'), same('metadata.annotations', '{}'), same('metadata.finalizers', '[]'),
        same('metadata.ownerReferences', '[]'),
        '(has(object.spec.unschedulable) && object.spec.unschedulable) == (has(oldObject.spec.unschedulable) && oldObject.spec.unschedulable)',
      ].join(' && '),
      message: 'the readiness taint remover may change nothing on the node but its own taint',
    },
  ];
}
