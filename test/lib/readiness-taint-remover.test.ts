/**
 * The readiness taint remover as the pod runs it: the rendered container's command and environment (the API server's
 * URL given as KUBERNETES_API instead of the kubelet's service variables, the token directory and the recheck
 * period changed), run by busybox's sh with busybox's awk, sed,
 * tr, cut, tail and sleep (the tools the curl image has) and curl, against a fake API server that authenticates,
 * authorizes with the rendered RBAC, applies JSON patches as stored and admits with the rendered
 * ValidatingAdmissionPolicy (test/util/fake-kube-api.ts). Nothing here needs a cluster.
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { FluentBitOutput, LogCollectorDaemonSet } from '../../src';
import { JSON_AWK, NODE_NAME_EXTRA, REMOVER_API_LINES } from '../../src/agent/readiness-remover';
import { REMOVER_CONTAINER } from '../../src/scheduling/readiness-taint';
import { untoleratedTaints } from '../../src/scheduling/tolerations';
import { admissionDenial, FakeKubeApi } from '../util/fake-kube-api';
import { Manifest, synthManifests } from '../util/manifests';

const KEY = 'node-agents.cdk8s.io/logs-not-ready';
const NS = 'observability';
const SA = 'log-collector';
const USER = `system:serviceaccount:${NS}:${SA}`;
const BUSYBOX = spawnSync('busybox', ['true']).status === 0;
const APPLETS = ['awk', 'sed', 'tr', 'cut', 'tail', 'cat', 'sleep'];

/** The collector with a readiness taint, synthesized through the shared manifest checks. */
function rendered(): Manifest[] {
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()], readinessTaint: { key: KEY } });
  return synthManifests(chart);
}

function removerContainer(manifests: Manifest[]): Manifest {
  const ds = manifests.find((m) => m.kind === 'DaemonSet');
  return ds.spec.template.spec.containers.find((c: Manifest) => c.name === REMOVER_CONTAINER);
}

function node(name: string, taints: Manifest[]): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name, 'karpenter.sh/nodepool': 'general' },
      // a value quoting a taint list: the reader must not take it for spec.taints
      annotations: { 'example.com/note': `{"taints":[{"key":"${KEY}","effect":"NoSchedule"}]}` },
    },
    spec: { providerID: `aws:///eu-west-1a/i-${name}`, taints },
    status: {
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }],
      images: [{ names: ['registry.example.com/app@sha256:0123', 'registry.example.com/app:1.2.3'], sizeBytes: 123456 }],
    },
  };
}

const STARTUP = { key: KEY, effect: 'NoSchedule' };
const OTHER = { key: 'example.com/dedicated', value: 'batch', effect: 'NoSchedule' };

function pod(name: string, nodeName: string, ready: boolean): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels: { 'app.kubernetes.io/name': 'log-collector' } },
    spec: { nodeName, containers: [{ name: 'fluent-bit', image: 'cr.fluentbit.io/fluent/fluent-bit:5.1.1' }] },
    status: {
      phase: 'Running',
      // observedGeneration sits between type and status since 1.33: the reader takes the fields in any order,
      // and a message quoting a Ready condition is no condition
      conditions: [
        { type: 'PodScheduled', observedGeneration: 1, status: 'True', message: '"type":"Ready","status":"True"' },
        { type: 'Ready', observedGeneration: 1, status: ready ? 'True' : 'False', reason: ready ? undefined : 'ContainersNotReady' },
      ],
    },
  };
}

interface Remover {
  readonly child: ChildProcess;
  readonly log: () => string;
  readonly stop: () => Promise<void>;
}

let dir: string;
let api: FakeKubeApi;
let manifests: Manifest[];
const removers: Remover[] = [];

beforeAll(() => {
  manifests = rendered();
});

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'readiness-taint-'));
  api = new FakeKubeApi();
  api.authorize(manifests);
  await api.start();
});

afterEach(async () => {
  await Promise.all(removers.splice(0).map((r) => r.stop()));
  await api.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** Starts the rendered remover for the pod `podName` on `nodeName`, its token naming `tokenNode` (the pod's node by default). */
function startRemover(podName: string, nodeName: string, tokenNode: string | undefined = nodeName): Remover {
  const container = removerContainer(manifests);
  const tokenDir = path.join(dir, `token-${podName}`);
  fs.mkdirSync(tokenDir);
  const token = `token-${podName}`;
  fs.writeFileSync(path.join(tokenDir, 'token'), token);
  fs.writeFileSync(path.join(tokenDir, 'ca.crt'), '');
  api.tokens.set(token, { username: USER, extra: tokenNode === undefined ? {} : { [NODE_NAME_EXTRA]: [tokenNode], 'authentication.kubernetes.io/pod-name': [podName] } });
  const field: Record<string, string> = { 'spec.nodeName': nodeName, 'metadata.name': podName, 'metadata.namespace': NS };
  const env: Record<string, string> = {};
  for (const e of container.env) env[e.name] = e.value ?? field[e.valueFrom.fieldRef.fieldPath];
  Object.assign(env, { KUBERNETES_API: api.url, TOKEN_DIR: tokenDir, RECHECK_SECONDS: '1' });
  let bin = '/usr/bin:/bin';
  let shell = container.command[0];
  if (BUSYBOX) {
    const applets = path.join(dir, 'busybox-bin');
    if (!fs.existsSync(applets)) {
      fs.mkdirSync(applets);
      const busybox = spawnSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf-8' }).stdout.trim();
      for (const applet of APPLETS) fs.symlinkSync(busybox, path.join(applets, applet));
    }
    bin = `${applets}:${bin}`;
    shell = 'busybox';
  }
  const args = BUSYBOX ? ['sh', ...container.command.slice(1)] : container.command.slice(1);
  const child = spawn(shell, args, { env: { ...env, PATH: bin }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const remover: Remover = {
    child,
    log: () => out,
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.on('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
  removers.push(remover);
  return remover;
}

async function waitFor(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const patches = () => api.requests.filter((r) => r.method === 'PATCH');

describe('the JSON reader the remover runs (awk, no jq)', () => {
  const awks = [['awk'], ...(BUSYBOX ? [['busybox', 'awk']] : [])];
  // the script feeds it the answer and a newline (printf '%s\n')
  const readText = (awk: string[], mode: string, text: string) => spawnSync(awk[0], [...awk.slice(1), '-v', `mode=${mode}`, '-v', `key=${KEY}`, JSON_AWK],
    { input: text, encoding: 'utf-8', maxBuffer: 64 * 1024 * 1024 }).stdout.trim();
  const read = (awk: string[], mode: string, doc: unknown) => readText(awk, mode, `${JSON.stringify(doc)}\n`);

  test.each(awks)('%s: the index of our NoSchedule taint, never one quoted in an annotation; Ready only from status.conditions', (...awk) => {
    expect(read(awk, 'taint', node('n1', [OTHER, STARTUP]))).toBe('1');
    expect(read(awk, 'taint', node('n1', [OTHER]))).toBe('');
    expect(read(awk, 'taint', node('n1', []))).toBe('');
    // the same key with another effect is not ours
    expect(read(awk, 'taint', node('n1', [{ key: KEY, effect: 'NoExecute' }, OTHER, STARTUP]))).toBe('2');
    expect(read(awk, 'ready', pod('p', 'n1', true))).toBe('yes');
    expect(read(awk, 'ready', pod('p', 'n1', false))).toBe('');
  });

  test.each(awks)('%s: an answer that is not one whole JSON document is refused, whatever it quotes', (...awk) => {
    const doc = JSON.stringify(node('n1', [STARTUP]));
    expect(readText(awk, 'taint', `<html><body>${doc}</body></html>\n`)).toMatch(/^invalid: not JSON: a stray <html>/);
    expect(readText(awk, 'taint', `${doc.slice(0, -1)}\n`)).toBe('invalid: not JSON: cut short');
    expect(readText(awk, 'taint', `${doc.slice(0, doc.indexOf(KEY))}\n`)).toBe('invalid: not JSON: an unterminated string');
    expect(readText(awk, 'taint', `${doc}{}\n`)).toBe('invalid: not JSON: more after the end');
    expect(readText(awk, 'taint', '\n')).toBe('invalid: not JSON: empty');
    // whitespace anywhere, escapes in strings (\/ is /), keys in any order
    const spaced = JSON.stringify({ spec: { taints: [OTHER, { effect: 'NoSchedule', key: KEY }] }, metadata: { name: 'n1' } }, null, 2);
    expect(readText(awk, 'taint', `${spaced.replace(KEY, KEY.replace('/', '\\/'))}\n`)).toBe('1');
  });

  test('linear in the node object: a 1.4 MB node takes less than 20 times as long as a 140 KB one', () => {
    const awk = BUSYBOX ? ['busybox', 'awk'] : ['awk'];
    // a node of a busy host: many images, and a large annotation full of escaped quotes (a last-applied configuration)
    const big = (images: number) => {
      const n = node('n1', [OTHER, STARTUP]);
      n.status.images = Array.from({ length: images }, (_, i) => ({ names: [`registry.example.com/team-${i}/app@sha256:${'0123456789abcdef'.repeat(4)}`], sizeBytes: 123456789 + i }));
      n.metadata.annotations['example.com/last-applied'] = JSON.stringify({ items: n.status.images.slice(0, images / 4) });
      return `${JSON.stringify(n)}\n`;
    };
    const [small, large] = [big(1000), big(10_000)];
    expect(small.length).toBeGreaterThan(140_000);
    expect(large.length).toBeGreaterThan(1_400_000);
    const time = (text: string) => {
      const started = process.hrtime.bigint();
      expect(readText(awk, 'taint', text)).toBe('1');
      return Number(process.hrtime.bigint() - started) / 1e6;
    };
    const smallMs = Math.min(time(small), time(small), time(small));
    // the least of a few runs: another process on the machine only ever makes a run slower
    const largeMs = Math.min(time(large), time(large));
    expect(largeMs).toBeLessThan(20 * smallMs);
  }, 120_000);
});

test('the API server from the kubelet\'s service variables (no cluster DNS needed), an IPv6 address in brackets', () => {
  const url = (env: Record<string, string>) => spawnSync('sh', ['-c', `set -u\n${REMOVER_API_LINES}\nprintf '%s' "$api"`], { env, encoding: 'utf-8' }).stdout;
  expect(url({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' })).toBe('https://10.96.0.1:443');
  expect(url({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' })).toBe('https://[fd00::1]:6443');
  expect(url({ KUBERNETES_API: 'http://127.0.0.1:8080', KUBERNETES_SERVICE_HOST: '10.96.0.1' })).toBe('http://127.0.0.1:8080');
  // the rendered container names no URL: the kubelet's variables decide
  expect(removerContainer(manifests).env.map((e: Manifest) => e.name)).not.toContain('KUBERNETES_API');
});

describe('the remover against the API server', () => {
  test('not Ready: the taint stays and nothing is patched; Ready: only that taint goes, with a JSON patch tested on its entry', async () => {
    api.putNode(node('n1', [OTHER, STARTUP]));
    api.putPod(pod('logs-a', 'n1', false));
    const remover = startRemover('logs-a', 'n1');
    await waitFor('the remover says the pod is not Ready', () => remover.log().includes('is not Ready: the taint stays'));
    await sleep(2500);
    expect(api.taintKeys('n1')).toEqual([OTHER.key, KEY]);
    expect(patches()).toEqual([]);
    // its node reads come from the API server's watch cache, not etcd: one read per node per period at scale
    const nodeReads = api.requests.filter((r) => r.method === 'GET' && r.path === '/api/v1/nodes/n1');
    expect(nodeReads.length).toBeGreaterThan(0);
    expect(nodeReads.every((r) => r.query === 'resourceVersion=0')).toBe(true);

    api.putPod(pod('logs-a', 'n1', true));
    await waitFor('the taint is removed', () => !api.taintKeys('n1').includes(KEY));
    expect(api.nodes.get('n1')!.spec.taints).toEqual([OTHER]);
    // the patch names the one entry, checks it is still ours, and removes it: the other taints are not sent
    expect(patches()).toHaveLength(1);
    expect(patches()[0].contentType).toBe('application/json-patch+json');
    expect(JSON.parse(patches()[0].body)).toEqual([
      { op: 'test', path: '/spec/taints/1/key', value: KEY },
      { op: 'test', path: '/spec/taints/1/effect', value: 'NoSchedule' },
      { op: 'remove', path: '/spec/taints/1' },
    ]);
    await waitFor('the removal is logged', () => remover.log().includes('removed: pod observability/logs-a is Ready'));
    expect(remover.log()).not.toContain('token-logs-a');
  }, 30_000);

  test('a taint added again is removed again', async () => {
    api.putNode(node('n1', [STARTUP]));
    api.putPod(pod('logs-a', 'n1', true));
    startRemover('logs-a', 'n1');
    await waitFor('the taint is removed', () => api.taintKeys('n1').length === 0);
    const n = api.nodes.get('n1')!;
    api.putNode({ ...n, spec: { ...n.spec, taints: [OTHER, STARTUP] } });
    await waitFor('the re-added taint is removed', () => !api.taintKeys('n1').includes(KEY));
    expect(api.taintKeys('n1')).toEqual([OTHER.key]);
  }, 30_000);

  test('taints changed between the read and the patch: the test op fails, nothing is lost, and the next read removes ours', async () => {
    api.putNode(node('n1', [STARTUP]));
    api.putPod(pod('logs-a', 'n1', true));
    let raced = false;
    // another client adds a taint before ours once, after the remover read the node: index 0 is no longer ours
    api.beforePatch = (name) => {
      if (raced) return;
      raced = true;
      const n = api.nodes.get(name)!;
      api.putNode({ ...n, spec: { ...n.spec, taints: [OTHER, ...n.spec.taints] } });
    };
    startRemover('logs-a', 'n1');
    await waitFor('the taint is removed', () => !api.taintKeys('n1').includes(KEY));
    expect(api.taintKeys('n1')).toEqual([OTHER.key]);
    expect(patches().map((p) => p.code)).toEqual([422, 200]);
    expect(JSON.parse(patches()[1].body)[2]).toEqual({ op: 'remove', path: '/spec/taints/1' });
  }, 30_000);

  test('an answer with terminal controls (an error page, a proxy): the log shows none of them', async () => {
    api.putNode(node('n1', [STARTUP]));
    api.putPod(pod('logs-a', 'n1', true));
    // ESC sequences (a colour, a window title), BEL, a backspace, C1 controls as UTF-8 (U+009B) and as raw bytes
    const hostile = Buffer.concat([Buffer.from('proxy error \x1b[31mred\x1b]0;title\x07 \b\r\n', 'latin1'), Buffer.from('\u009b2J csi', 'utf8'), Buffer.from(' raw \x9b\x9d end', 'latin1')]);
    api.rawAnswer = (method, p) => (method === 'GET' && p === '/api/v1/nodes/n1' ? { code: 502, body: hostile } : undefined);
    const remover = startRemover('logs-a', 'n1');
    await waitFor('the refusal is logged', () => remover.log().includes('cannot read the node (HTTP 502)'));
    await sleep(200);
    expect(remover.log()).toContain('proxy error ?[31mred?]0;title? ?  ?2J csi raw ? end');
    expect(remover.log()).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\ufffd]/);
    expect(api.taintKeys('n1')).toEqual([KEY]);
  }, 30_000);

  test('an answer that is not JSON (a proxy\'s page quoting one): the taint stays, and the log says why', async () => {
    api.putNode(node('n1', [STARTUP]));
    api.putPod(pod('logs-a', 'n1', true));
    const page = (doc: Manifest) => ({ code: 200, body: Buffer.from(`<html><body>${JSON.stringify(doc)}</body></html>`) });
    api.rawAnswer = (method, p) => (method === 'GET' && p === '/api/v1/nodes/n1' ? page(api.nodes.get('n1')!) : undefined);
    const remover = startRemover('logs-a', 'n1');
    await waitFor('the node\'s answer is refused', () => remover.log().includes('cannot read the node\'s answer, the taint stays: invalid: not JSON: a stray <html><body>'));
    api.rawAnswer = (method, p) => (method === 'GET' && p === '/api/v1/namespaces/observability/pods/logs-a' ? page(api.pods.get('observability/logs-a')!) : undefined);
    await waitFor('the pod\'s answer is refused', () => remover.log().includes('cannot read pod observability/logs-a\'s answer, the taint stays: invalid: not JSON: a stray <html><body>'));
    expect(api.taintKeys('n1')).toEqual([KEY]);
    expect(patches()).toEqual([]);
  }, 30_000);

  test('the admission policy refuses a token of another node: the taint stays and the refusal is logged', async () => {
    api.putNode(node('n1', [STARTUP]));
    api.putPod(pod('logs-a', 'n1', true));
    // a token that names node n2 (a token copied from another node's pod) patching n1
    const remover = startRemover('logs-a', 'n1', 'n2');
    await waitFor('the refusal is logged', () => remover.log().includes('cannot remove it (HTTP 403)'));
    expect(remover.log()).toContain('may change only the node its own pod runs on');
    expect(api.taintKeys('n1')).toEqual([KEY]);
  }, 30_000);
});

describe('the rendered ValidatingAdmissionPolicy (its CEL, as the API server evaluates it)', () => {
  const policies = () => manifests.filter((m) => m.kind === 'ValidatingAdmissionPolicy');
  const request = (nodeName?: string, username = USER) => ({
    userInfo: { username, extra: (nodeName ? { [NODE_NAME_EXTRA]: [nodeName] } : {}) as Record<string, string[]> },
  });
  const before = node('n1', [OTHER, STARTUP]);
  const after = (change: (n: Manifest) => void) => {
    const copy = JSON.parse(JSON.stringify(before));
    change(copy);
    return copy;
  };

  test('allows removing its taint from its own node; nothing else, nowhere else', () => {
    const removed = after((n) => (n.spec.taints = [OTHER]));
    expect(admissionDenial(policies(), request('n1'), removed, before)).toBeUndefined();
    // another node's token, or none (before 1.30, or the gate off)
    expect(admissionDenial(policies(), request('n2'), removed, before)).toContain('only the node its own pod runs on');
    expect(admissionDenial(policies(), request(undefined), removed, before)).toContain('only the node its own pod runs on');
    expect(admissionDenial(policies(), { userInfo: { username: USER } }, removed, before)).toContain('only the node its own pod runs on');
    // another taint removed, one added, ours changed to NoExecute
    expect(admissionDenial(policies(), request('n1'), after((n) => (n.spec.taints = [STARTUP])), before)).toContain('may only remove its own taint');
    expect(admissionDenial(policies(), request('n1'), after((n) => n.spec.taints.push({ key: 'x', effect: 'NoSchedule' })), before)).toContain('may only remove its own taint');
    expect(admissionDenial(policies(), request('n1'), after((n) => (n.spec.taints[1].effect = 'NoExecute')), before)).toContain('may only remove its own taint');
    // a label, an annotation, a cordon
    expect(admissionDenial(policies(), request('n1'), after((n) => (n.metadata.labels.x = 'y')), before)).toContain('nothing on the node but its own taint');
    expect(admissionDenial(policies(), request('n1'), after((n) => delete n.metadata.annotations), before)).toContain('nothing on the node but its own taint');
    expect(admissionDenial(policies(), request('n1'), after((n) => (n.spec.unschedulable = true)), before)).toContain('nothing on the node but its own taint');
    // other users are not this policy's business
    expect(admissionDenial(policies(), request(undefined, 'system:serviceaccount:kube-system:karpenter'), after((n) => (n.spec.taints = [])), before)).toBeUndefined();
  });

  test('RBAC: nodes get and patch cluster-wide, pods get in the agent\'s namespace, nothing else', () => {
    const clusterRole = manifests.find((m) => m.kind === 'ClusterRole' && m.metadata.name === 'log-collector-readiness-taint');
    const role = manifests.find((m) => m.kind === 'Role' && m.metadata.name === 'log-collector-readiness-taint');
    expect(clusterRole.rules).toEqual([{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] }]);
    expect(role.metadata.namespace).toBe(NS);
    expect(role.rules).toEqual([{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }]);
  });
});

/**
 * A node's life with the collector's readiness taint: the scheduler places a workload on a node only when it
 * tolerates every NoSchedule taint there (k8s.io/api core/v1 Toleration.ToleratesTaint, as the TaintToleration
 * filter plugin applies it); the collector's pod tolerates its own taint.
 */
describe('node lifecycle', () => {
  const workloadFits = (name: string) => untoleratedTaints([], api.nodes.get(name)!.spec.taints ?? []).length === 0;

  test('joins tainted, agent Ready, workload lands; the collector breaks: the taint added again stays, nothing else lands, on that node or a new one', async () => {
    // 1. the node joins with the NodePool's startup taint; the collector's pod is scheduled there (it tolerates it) and starts
    api.putNode(node('n1', [STARTUP]));
    api.putPod(pod('logs-n1', 'n1', false));
    const r1 = startRemover('logs-n1', 'n1');
    await waitFor('the remover has read the node and its pod', () => r1.log().includes('is not Ready'));
    expect(workloadFits('n1')).toBe(false);
    // 2. the collector is Ready: the taint goes, a workload fits
    api.putPod(pod('logs-n1', 'n1', true));
    await waitFor('n1 loses the taint', () => api.taintKeys('n1').length === 0);
    expect(workloadFits('n1')).toBe(true);
    // 3. the collector breaks (a bad config: not Ready) and the node pool puts the taint back: it stays
    api.putPod(pod('logs-n1', 'n1', false));
    const n1 = api.nodes.get('n1')!;
    api.putNode({ ...n1, spec: { ...n1.spec, taints: [STARTUP] } });
    // 4. a new node joins while the collector is broken there too
    api.putNode(node('n2', [STARTUP]));
    api.putPod(pod('logs-n2', 'n2', false));
    startRemover('logs-n2', 'n2');
    await sleep(4000);
    expect(api.taintKeys('n1')).toEqual([KEY]);
    expect(api.taintKeys('n2')).toEqual([KEY]);
    expect(workloadFits('n1')).toBe(false);
    expect(workloadFits('n2')).toBe(false);
    expect(patches().filter((p) => p.code === 200)).toHaveLength(1);
    // 5. the collector recovers: both nodes open
    api.putPod(pod('logs-n1', 'n1', true));
    api.putPod(pod('logs-n2', 'n2', true));
    await waitFor('both nodes lose the taint', () => api.taintKeys('n1').length === 0 && api.taintKeys('n2').length === 0);
  }, 45_000);
});
