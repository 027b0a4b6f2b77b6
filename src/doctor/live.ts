import { spawnSync } from 'child_process';
import { checkedState, ClusterState, StateBuilder } from './state';
import { MAX_INPUT_BYTES } from '../capacity/input';

/**
 * Where `doctor` reads a live cluster: through kubectl, read-only (`kubectl get` and nothing else). kubectl rather
 * than @kubernetes/client-node: the client's current major (2.x) ships as ES modules only and needs Node 22.19,
 * above the Node 20 this package supports; and kubectl is what the operator already runs, with the credential
 * plugins and proxies of their kubeconfig.
 */
export interface LiveOptions {
  /** kubectl's --kubeconfig, relative to `cwd` @default kubectl's own ($KUBECONFIG, else ~/.kube/config) */
  readonly kubeconfig?: string;
  /** kubectl's --context @default the kubeconfig's current context */
  readonly context?: string;
  /** the directory kubectl runs in */
  readonly cwd: string;
  /** the kubectl binary, found on PATH @default 'kubectl' */
  readonly kubectl?: string;
  /** the most seconds one `kubectl get` may take @default 300 */
  readonly timeoutSeconds?: number;
}

/**
 * The kinds doctor reads, one `kubectl get` each (kubectl's own List per kind, as the file mode reads them); the
 * cluster-scoped Nodes without --all-namespaces.
 */
export const LIVE_KINDS: readonly { readonly kind: string; readonly namespaced: boolean }[] = [
  { kind: 'nodes', namespaced: false },
  { kind: 'daemonsets', namespaced: true },
  { kind: 'controllerrevisions', namespaced: true },
  { kind: 'pods', namespaced: true },
  { kind: 'events', namespaced: true },
];

const HINT = 'or dump the objects with `kubectl get nodes,pods,daemonsets,controllerrevisions,events -A -o json > state.json` and pass --state';

/**
 * kubectl's arguments for one kind. Values go in `--flag=value` form, so a context or kubeconfig name that starts
 * with `-` stays a value; no shell runs them.
 */
export function liveArgs(kind: string, namespaced: boolean, options: Pick<LiveOptions, 'kubeconfig' | 'context'>): string[] {
  return [
    ...(options.kubeconfig === undefined ? [] : [`--kubeconfig=${options.kubeconfig}`]),
    ...(options.context === undefined ? [] : [`--context=${options.context}`]),
    '--request-timeout=60s',
    'get', kind,
    ...(namespaced ? ['--all-namespaces'] : []),
    '--output=json',
  ];
}

/**
 * Reads what `doctor` needs from a live cluster: nodes, DaemonSets, ControllerRevisions, pods and events, each with
 * `kubectl get -o json` (the user's kubectl, credentials and RBAC: only list rights are used). Each answer is bounded
 * like a file (MAX_INPUT_BYTES); kubectl's errors are passed on, cut short (firstLines).
 */
export function loadLiveState(options: LiveOptions): ClusterState {
  const builder = new StateBuilder();
  const timeout = (options.timeoutSeconds ?? 300) * 1000;
  for (const { kind, namespaced } of LIVE_KINDS) {
    const source = `kubectl get ${kind}`;
    const run = spawnSync(options.kubectl ?? 'kubectl', liveArgs(kind, namespaced, options), {
      cwd: options.cwd,
      // this process's environment as it is now (PATH, KUBECONFIG), given explicitly
      env: process.env,
      encoding: 'utf-8',
      maxBuffer: MAX_INPUT_BYTES,
      timeout,
      // nothing to read from the terminal: an exec credential plugin that would prompt fails instead of waiting
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (run.error !== undefined) throw new Error(spawnFailure(source, run.error as NodeJS.ErrnoException, timeout));
    if (run.status !== 0) {
      throw new Error(`${source} failed (${run.status === null ? `signal ${run.signal}` : `exit ${run.status}`}): ${firstLines(run.stderr)}; ${HINT}`);
    }
    let value: unknown;
    try {
      value = JSON.parse(run.stdout);
    } catch {
      throw new Error(`${source}: kubectl printed no JSON; ${HINT}`);
    }
    builder.addDocument(value, source);
  }
  return checkedState(builder.finish('the cluster'), `the cluster${options.context === undefined ? '' : ` (context ${options.context})`}`, HINT);
}

function spawnFailure(source: string, error: NodeJS.ErrnoException, timeout: number): string {
  if (error.code === 'ENOENT') return `${source}: kubectl is not on PATH; install it, ${HINT}`;
  if (error.code === 'ENOBUFS') {
    return `${source}: more than ${MAX_INPUT_BYTES} bytes of output; dump the objects into several files (for example pods per namespace) and pass --state DIR`;
  }
  if (error.code === 'ETIMEDOUT') return `${source}: no answer within ${timeout / 1000} s; ${HINT}`;
  return `${source}: cannot run kubectl (${error.code ?? error.message})`;
}

/**
 * What kubectl said, at most 500 characters: its own lines (`error: …`, `The connection to the server … was
 * refused`), not the klog lines (`E1204 18:01:37.607734 …`) it logs before them; those only when it said nothing else.
 */
function firstLines(text: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const own = lines.filter((l) => !/^[IWEF]\d{4} \d\d:\d\d:\d\d/.test(l));
  const said = (own.length > 0 ? own : lines).slice(0, 3).join(' / ');
  if (said === '') return 'no message';
  return said.length > 500 ? `${said.slice(0, 500)}…` : said;
}
