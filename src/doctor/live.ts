import { spawnSync } from 'child_process';
import { checkedState, ClusterState, StateBuilder } from './state';
import { MAX_INPUT_BYTES } from '../capacity/input';
import { isObject } from '../coverage/manifests';

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
 * The kinds doctor reads and the list path of each (every namespace): the API server's list calls, read a page at
 * a time with `kubectl get --raw`, so a cluster of any size is read in bounded pieces (one `kubectl get -A -o json`
 * of a large cluster's pods is more than one JavaScript string holds).
 */
export const LIVE_KINDS: readonly { readonly kind: string; readonly path: string }[] = [
  { kind: 'Node', path: '/api/v1/nodes' },
  { kind: 'DaemonSet', path: '/apis/apps/v1/daemonsets' },
  { kind: 'ControllerRevision', path: '/apis/apps/v1/controllerrevisions' },
  { kind: 'Pod', path: '/api/v1/pods' },
  { kind: 'Event', path: '/api/v1/events' },
];

/** Objects asked for per page (the API server's `limit`; it may return fewer, with a continue token). */
export const PAGE_SIZE = 2000;
/** The most pages read of one kind (20 million objects at PAGE_SIZE): a server that never stops paging is cut off. */
export const MAX_PAGES = 10_000;

const HINT = 'or dump the objects with `kubectl get nodes,pods,daemonsets,controllerrevisions,events -A -o json > state.json` and pass --state';

/**
 * kubectl's arguments for one page of a list. Values go in `--flag=value` form, so a context or kubeconfig name that
 * starts with `-` stays a value; the continue token (the server's) is URL-encoded into the path; no shell runs them.
 */
export function liveArgs(path: string, continueToken: string | undefined, options: Pick<LiveOptions, 'kubeconfig' | 'context'>): string[] {
  return [
    ...(options.kubeconfig === undefined ? [] : [`--kubeconfig=${options.kubeconfig}`]),
    ...(options.context === undefined ? [] : [`--context=${options.context}`]),
    '--request-timeout=60s',
    'get', `--raw=${path}?limit=${PAGE_SIZE}${continueToken === undefined ? '' : `&continue=${encodeURIComponent(continueToken)}`}`,
  ];
}

/**
 * Reads what `doctor` needs from a live cluster: nodes, DaemonSets, ControllerRevisions, pods and events, each listed
 * page by page with `kubectl get --raw` (the user's kubectl, credentials and RBAC: only list rights are used). Each
 * page is bounded like a file (MAX_INPUT_BYTES), the pages of a kind by MAX_PAGES; kubectl's errors are passed on,
 * cut short (firstLines).
 */
export function loadLiveState(options: LiveOptions): ClusterState {
  const builder = new StateBuilder();
  const timeout = (options.timeoutSeconds ?? 300) * 1000;
  for (const { kind, path } of LIVE_KINDS) {
    let token: string | undefined;
    const seen = new Set<string>();
    for (let page = 0; ; page++) {
      const source = `kubectl get --raw ${path}${page === 0 ? '' : ` (page ${page + 1})`}`;
      if (page >= MAX_PAGES) throw new Error(`${source}: more than ${MAX_PAGES} pages; ${HINT}`);
      const list = readPage(source, liveArgs(path, token, options), options, timeout);
      // the API server's list items carry no kind (kubectl get -o json adds it): set it, as the dump has it
      list.items.forEach((item, i) => {
        if (isObject(item) && item.kind === undefined) item.kind = kind;
        builder.add(item, `${source}: items[${i}]`);
      });
      token = list.continueToken;
      if (token === undefined) break;
      if (seen.has(token) || list.items.length === 0) throw new Error(`${source}: the server pages without end (a repeated or empty page); ${HINT}`);
      seen.add(token);
    }
  }
  return checkedState(builder.finish('the cluster'), `the cluster${options.context === undefined ? '' : ` (context ${options.context})`}`, HINT);
}

/** One page: kubectl run without a shell, its answer a list (`items`, and `metadata.continue` when more follow). */
function readPage(source: string, args: string[], options: LiveOptions, timeout: number): { items: unknown[]; continueToken?: string } {
  const run = spawnSync(options.kubectl ?? 'kubectl', args, {
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
  if (!isObject(value) || !Array.isArray(value.items)) throw new Error(`${source}: the answer is not a list (no items); ${HINT}`);
  const token = isObject(value.metadata) && typeof value.metadata.continue === 'string' && value.metadata.continue !== '' ? value.metadata.continue : undefined;
  return { items: value.items, continueToken: token };
}

function spawnFailure(source: string, error: NodeJS.ErrnoException, timeout: number): string {
  if (error.code === 'ENOENT') return `${source}: kubectl is not on PATH; install it, ${HINT}`;
  if (error.code === 'ENOBUFS') return `${source}: one page is more than ${MAX_INPUT_BYTES} bytes; ${HINT}`;
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
