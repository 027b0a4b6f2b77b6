import { spawnSync } from 'child_process';
import { DEFAULT_MAX_KEPT, keptExceeded } from './kept';
import { checkedState, ClusterState, StateBuilder } from './state';
import { formatBytes } from '../../util/quantity';
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
  /** the bounds of the whole read @default DEFAULT_LIVE_BUDGET */
  readonly budget?: LiveBudget;
}

/**
 * The bounds of one live read, all pages of all kinds together. Past one, the read stops with an error naming the
 * limit and its flag (exit 2): a server that pages without end, or sends pages without end of any size, costs a
 * bounded time and memory.
 */
export interface LiveBudget {
  /** wall time of the whole read, seconds (`--live-timeout`) */
  readonly seconds: number;
  /** bytes kubectl prints, all pages together (`--live-max-bytes`) */
  readonly bytes: number;
  /** objects listed, all kinds together (`--live-max-objects`) */
  readonly objects: number;
  /** bytes doctor keeps of the objects, as HeapEstimate counts them (`--live-max-kept`; see DEFAULT_MAX_KEPT) */
  readonly kept: number;
}

/**
 * Defaults sized on a 130,000-node cluster running 30 pods a node (the shape `npm run bench` runs doctor on):
 * 130k nodes, 3.9M pods, some 10k ControllerRevisions and up to 1M events make about 5M objects and 2,300 pages
 * of PAGE_SIZE. As the API server sends them (managedFields included), a pod is some 4 to 12 KiB and a node 10 to
 * 25 KiB (its status lists the images it holds): about 35 GiB in all at the high end. At about a second a page
 * (kubectl's start, the API server's list, the parse) the read takes some 40 minutes. Each default leaves about
 * twice that room, or more. The memory doctor keeps is what it reads of each object (the nodes and DaemonSets, a record of each pod, a
 * few events per pod), not the pages: its own budget (kept, DEFAULT_MAX_KEPT) bounds it whatever a server sends.
 */
export const DEFAULT_LIVE_BUDGET: LiveBudget = { seconds: 2 * 3600, bytes: 64 * 2 ** 30, objects: 10_000_000, kept: DEFAULT_MAX_KEPT };

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
 * page is bounded like a file (MAX_INPUT_BYTES), the pages of a kind by MAX_PAGES, the whole read by its budget
 * (time, bytes, objects, and the bytes kept of them: the StateBuilder counts those as it keeps them); kubectl's errors are passed on, cut short (firstLines).
 */
export function loadLiveState(options: LiveOptions): ClusterState {
  const budget = options.budget ?? DEFAULT_LIVE_BUDGET;
  const spent = new BudgetSpent(budget, (options.timeoutSeconds ?? 300) * 1000);
  const builder = new StateBuilder({ bytes: budget.kept, exceeded: (where) => keptExceeded(where, budget.kept, 'the live read\'s limit') });
  for (const { kind, path } of LIVE_KINDS) {
    let token: string | undefined;
    const seen = new Set<string>();
    for (let page = 0; ; page++) {
      const source = `kubectl get --raw ${path}${page === 0 ? '' : ` (page ${page + 1})`}`;
      if (page >= MAX_PAGES) throw new Error(`${source}: more than ${MAX_PAGES} pages; ${HINT}`);
      const list = readPage(source, liveArgs(path, token, options), options, spent);
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

/** The flag of each bound and how its error names it. */
const BUDGET_FLAGS = {
  seconds: ['--live-timeout', (n: number) => `${n} s`, 'the live read took longer than'],
  bytes: ['--live-max-bytes', formatBytes, 'kubectl printed more than'],
  objects: ['--live-max-objects', String, 'the lists held more objects than'],
} as const;

/** What the live read has spent of its budget; each page's limits are what is left. */
class BudgetSpent {
  private readonly started = Date.now();
  private bytes = 0;
  private objects = 0;

  constructor(readonly budget: LiveBudget, private readonly pageTimeout: number) {}

  /** The most milliseconds the next page may take: its own timeout, or what is left of the read's. */
  timeLeft(source: string): { timeout: number; isDeadline: boolean } {
    const left = this.budget.seconds * 1000 - (Date.now() - this.started);
    if (left <= 0) throw this.exceeded(source, 'seconds');
    return left < this.pageTimeout ? { timeout: Math.ceil(left), isDeadline: true } : { timeout: this.pageTimeout, isDeadline: false };
  }

  /** The most bytes the next page may hold: one file's, or what is left of the read's. */
  bytesLeft(): { maxBuffer: number; isBudget: boolean } {
    const left = this.budget.bytes - this.bytes;
    return left < MAX_INPUT_BYTES ? { maxBuffer: Math.max(0, left), isBudget: true } : { maxBuffer: MAX_INPUT_BYTES, isBudget: false };
  }

  add(source: string, bytes: number, objects: number): void {
    this.bytes += bytes;
    this.objects += objects;
    if (this.bytes > this.budget.bytes) throw this.exceeded(source, 'bytes');
    if (this.objects > this.budget.objects) throw this.exceeded(source, 'objects');
  }

  exceeded(source: string, bound: keyof typeof BUDGET_FLAGS): Error {
    const [flag, format, what] = BUDGET_FLAGS[bound];
    const given = this.budget[bound];
    const fallback = DEFAULT_LIVE_BUDGET[bound];
    return new Error(`${source}: ${what} ${format(given)}, the live read's limit (${flag}${given === fallback ? ', the default' : ''}); `
      + `raise it with ${flag} (default ${format(fallback)}), or dump the objects with \`kubectl get nodes,pods,daemonsets,controllerrevisions,events -A -o json\` `
      + 'into files and pass --state');
  }
}

/** One page: kubectl run without a shell, its answer a list (`items`, and `metadata.continue` when more follow). */
function readPage(source: string, args: string[], options: LiveOptions, spent: BudgetSpent): { items: unknown[]; continueToken?: string } {
  const { timeout, isDeadline } = spent.timeLeft(source);
  const { maxBuffer, isBudget } = spent.bytesLeft();
  const run = spawnSync(options.kubectl ?? 'kubectl', args, {
    cwd: options.cwd,
    // this process's environment as it is now (PATH, KUBECONFIG), given explicitly
    env: process.env,
    encoding: 'utf-8',
    maxBuffer,
    timeout,
    // nothing to read from the terminal: an exec credential plugin that would prompt fails instead of waiting
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (run.error !== undefined) {
    const code = (run.error as NodeJS.ErrnoException).code;
    if (code === 'ETIMEDOUT' && isDeadline) throw spent.exceeded(source, 'seconds');
    if (code === 'ENOBUFS' && isBudget) throw spent.exceeded(source, 'bytes');
    throw new Error(spawnFailure(source, run.error as NodeJS.ErrnoException, timeout));
  }
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
  spent.add(source, Buffer.byteLength(run.stdout, 'utf-8'), value.items.length);
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
