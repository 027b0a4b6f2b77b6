/**
 * `node-agents doctor --live / --context / --kubeconfig`: the same objects as a dump, read through kubectl (the
 * API server's list calls, page by page, with the read-only `kubectl get --raw`). No cluster here: a fake kubectl on
 * PATH logs its arguments and answers each list path from files; and the real kubectl against a minimal API server.
 * The diagnosis must equal the file mode's on the same objects, and kubectl's failures end in exit 2 with its
 * words, escaped.
 */
import { spawn, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { LIVE_KINDS, PAGE_SIZE } from '../../src/cli/doctor/live';
import { runCli } from '../../src/cli/run';
import { agentDaemonSet, agentPod, event, list, node, revision } from '../util/cluster';
import { Manifest } from '../util/manifests';

let dir: string;
let savedPath: string | undefined;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-live-'));
  savedPath = process.env.PATH;
  process.env.PATH = `${path.join(dir, 'bin')}${path.delimiter}${savedPath}`;
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.mkdirSync(path.join(dir, 'answers'));
});
afterEach(() => {
  process.env.PATH = savedPath;
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * A fake kubectl: logs its arguments (one per line, a blank line after each call); answers `get --raw=PATH?…` from
 * answers/RESOURCE.json (the path's last segment), or answers/RESOURCE-2.json when the call carries a continue token.
 */
function fakeKubectl(body = ''): void {
  const script = [
    '#!/bin/sh',
    `log="${path.join(dir, 'calls.log')}"`,
    'for a in "$@"; do printf \'%s\\n\' "$a" >> "$log"; done; echo >> "$log"',
    body,
    'raw=""; for a in "$@"; do case "$a" in --raw=*) raw="${a#--raw=}";; esac; done',
    'resource="${raw%%\\?*}"; resource="${resource##*/}"',
    'case "$raw" in *continue=*) resource="$resource-2";; esac',
    `cat "${path.join(dir, 'answers')}/$resource.json"`,
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'bin', 'kubectl'), script, { mode: 0o755 });
}

/** The objects of a small cluster: n2's agent pod crash-looping, the scheduler's words on a Pending pod of n3. */
function objects(): Manifest[] {
  const ds = agentDaemonSet('logs');
  const pending = agentPod(ds, 'n3', { bound: false });
  return [node('n1'), node('n2'), node('n3'), ds, revision(ds, 'v1', 1), revision(ds, 'v2', 2),
    agentPod(ds, 'n1'), agentPod(ds, 'n2', { waiting: { reason: 'CrashLoopBackOff' }, lastTerminated: { reason: 'Error', exitCode: 3 }, restartCount: 7 }),
    pending, event(pending, 'FailedScheduling', '0/3 nodes are available: 1 Insufficient memory.')];
}

/** The last segment of a list path: the answer file's name. */
const resourceOf = (listPath: string) => listPath.split('/').pop()!;

/** The API server's answer per list path, one page: a list of that kind's objects, without kind (as the server sends them). */
function answer(items: Manifest[]): void {
  for (const { kind, path: listPath } of LIVE_KINDS) {
    const page = items.filter((i) => i.kind === kind).map(({ kind: _kind, apiVersion: _version, ...rest }) => rest);
    fs.writeFileSync(path.join(dir, 'answers', `${resourceOf(listPath)}.json`), JSON.stringify({ kind: `${kind}List`, metadata: {}, items: page }));
  }
}

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
  return { code, stdout, stderr };
}

function calls(): string[][] {
  return fs.readFileSync(path.join(dir, 'calls.log'), 'utf-8').split('\n\n').filter((c) => c.trim() !== '').map((c) => c.trim().split('\n'));
}

test('--context: the diagnosis of the objects the lists hold equals the dump\'s, each kind read with a read-only get', () => {
  fakeKubectl();
  answer(objects());
  fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(list(objects())));
  const fromFile = run('doctor', '--state', 'state.json', '--json');
  const live = run('doctor', '--context', 'prod', '--json');
  expect(live.stderr).toBe('');
  expect(live.code).toBe(1);
  expect(JSON.parse(live.stdout)).toEqual(JSON.parse(fromFile.stdout));
  expect(JSON.parse(live.stdout).findings.map((f: any) => [f.cause, f.node])).toEqual([['crash-loop', 'n2'], ['pending-resources', 'n3']]);
  expect(calls()).toEqual(LIVE_KINDS.map(({ path: listPath }) => ['--context=prod', '--request-timeout=60s', 'get', `--raw=${listPath}?limit=${PAGE_SIZE}`]));
});

test('--kubeconfig and --live: kubectl\'s flags as given, relative paths from the working directory; values that look like flags stay values', () => {
  // kubectl runs in the working directory: the relative kubeconfig is found there
  fakeKubectl('[ -f kube/config ] || { echo "error: kube/config: no such file" >&2; exit 1; }');
  answer(objects());
  fs.mkdirSync(path.join(dir, 'kube'));
  fs.writeFileSync(path.join(dir, 'kube', 'config'), '');
  expect(run('doctor', '--kubeconfig', 'kube/config', '--context=--all').code).toBe(1);
  expect(calls()[0].slice(0, 2)).toEqual(['--kubeconfig=kube/config', '--context=--all']);
  fs.rmSync(path.join(dir, 'calls.log'));
  expect(run('doctor', '--live').code).toBe(1);
  expect(calls()[0]).toEqual(['--request-timeout=60s', 'get', `--raw=/api/v1/nodes?limit=${PAGE_SIZE}`]);
  // only `get`: doctor never changes the cluster
  expect(calls().every((c) => c.filter((a) => !a.startsWith('-'))[0] === 'get')).toBe(true);
});

test('kubectl failing: exit 2 with its first words, terminal escapes removed; no kubectl on PATH: exit 2 saying so', () => {
  fakeKubectl('echo "E1204 18:01:37.607734   15495 memcache.go:265] couldn\'t get current server API group list" >&2; '
    + 'echo "error: You must be logged in to the server (Unauthorized)\x1b]0;owned\x07" >&2; exit 1');
  const r = run('doctor', '--context', 'prod');
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain('kubectl get --raw /api/v1/nodes failed (exit 1): error: You must be logged in to the server (Unauthorized)');
  expect(r.stderr).not.toContain('\x1b');
  expect(r.stderr).toContain('--state');

  fs.rmSync(path.join(dir, 'bin', 'kubectl'));
  process.env.PATH = path.join(dir, 'bin');
  const missing = run('doctor', '--live');
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain('kubectl get --raw /api/v1/nodes: kubectl is not on PATH');
});

test('kubectl answering what is not a List of the kind, or no DaemonSet: exit 2 naming the call', () => {
  fakeKubectl();
  answer(objects());
  fs.writeFileSync(path.join(dir, 'answers', 'pods.json'), 'Unable to connect to the server');
  expect(run('doctor', '--live').stderr).toContain('kubectl get --raw /api/v1/pods: kubectl printed no JSON');
  answer(objects().filter((o) => o.kind !== 'DaemonSet'));
  const r = run('doctor', '--live');
  expect(r.code).toBe(2);
  expect(r.stderr).toContain('the cluster: no DaemonSet');
});

test('pages: the continue token goes back URL-encoded, every page is read; a server that pages without end is cut off', () => {
  fakeKubectl();
  const all = objects();
  answer(all);
  // pods in two pages: the first with a continue token holding characters a URL must encode
  const pods = all.filter((o) => o.kind === 'Pod');
  fs.writeFileSync(path.join(dir, 'answers', 'pods.json'), JSON.stringify({ kind: 'PodList', metadata: { continue: 'a+b/c=' }, items: pods.slice(0, 2) }));
  fs.writeFileSync(path.join(dir, 'answers', 'pods-2.json'), JSON.stringify({ kind: 'PodList', metadata: { continue: '' }, items: pods.slice(2) }));
  fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(list(all)));
  const live = run('doctor', '--live', '--json');
  expect(live.stderr).toBe('');
  expect(JSON.parse(live.stdout)).toEqual(JSON.parse(run('doctor', '--state', 'state.json', '--json').stdout));
  expect(calls().map((c) => c[c.length - 1])).toContain(`--raw=/api/v1/pods?limit=${PAGE_SIZE}&continue=a%2Bb%2Fc%3D`);

  // the second page hands back the same token: an error, not a loop
  fs.writeFileSync(path.join(dir, 'answers', 'pods-2.json'), JSON.stringify({ kind: 'PodList', metadata: { continue: 'a+b/c=' }, items: pods.slice(2) }));
  const endless = run('doctor', '--live');
  expect(endless.code).toBe(2);
  expect(endless.stderr).toContain('kubectl get --raw /api/v1/pods (page 2): the server pages without end');
});

test('--state with --context is a usage error; neither is one too', () => {
  const both = run('doctor', '--state', 'x.json', '--context', 'prod');
  expect(both.code).toBe(2);
  expect(both.stderr).toContain('read a dump or the cluster, not both');
  const neither = run('doctor');
  expect(neither.code).toBe(2);
  expect(neither.stderr).toContain('give --state DUMP');
});

/**
 * The real kubectl (the one on PATH, as CI installs it) against a minimal API server in a child process: discovery
 * (/api, /apis, the group versions) and the list calls, lists served in pages of two whatever the limit asked (an
 * API server may return fewer) with a continue token, items without kind and apiVersion as the API server sends
 * them. doctor follows the pages through `kubectl get --raw` and reads them like the dump.
 */
describe('through the real kubectl', () => {
  const SERVER = `
const http = require('http');
const fs = require('fs');
const lists = JSON.parse(fs.readFileSync(process.argv[2], 'utf-8'));
const groups = { '/api/v1': { nodes: ['Node', false], pods: ['Pod', true], events: ['Event', true] },
  '/apis/apps/v1': { daemonsets: ['DaemonSet', true], controllerrevisions: ['ControllerRevision', true] } };
const resources = (g) => Object.entries(g).map(([name, [kind, namespaced]]) => ({ name, singularName: '', namespaced, kind, verbs: ['get', 'list'] }));
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://x');
  fs.appendFileSync(process.argv[3], req.method + ' ' + url.pathname + '\\n');
  const send = (code, body) => { res.writeHead(code, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
  const p = url.pathname;
  if (req.method !== 'GET') return send(405, { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 405 });
  if (p === '/api') return send(200, { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1' }] });
  if (p === '/apis') return send(200, { kind: 'APIGroupList', apiVersion: 'v1', groups: [{ name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } }] });
  if (groups[p]) return send(200, { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: p === '/api/v1' ? 'v1' : 'apps/v1', resources: resources(groups[p]) });
  const m = /^(\\/api\\/v1|\\/apis\\/apps\\/v1)\\/(\\w+)$/.exec(p);
  if (m && groups[m[1]][m[2]]) {
    const all = lists[m[2]];
    const from = Number(url.searchParams.get('continue') || 0);
    const page = all.slice(from, from + 2).map(({ kind, apiVersion, ...rest }) => rest);
    const more = from + 2 < all.length;
    return send(200, { kind: groups[m[1]][m[2]][0] + 'List', apiVersion: m[1] === '/api/v1' ? 'v1' : 'apps/v1',
      metadata: { resourceVersion: '7', ...(more ? { continue: String(from + 2) } : {}) }, items: page });
  }
  send(404, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404, message: p + ' not found' });
});
server.listen(0, '127.0.0.1', () => console.log('LISTENING ' + server.address().port));
`;
  const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf-8' }).status === 0;

  (hasKubectl || process.env.CI ? test : test.skip)('doctor --kubeconfig reads the paged lists kubectl prints and diagnoses them as the dump', async () => {
    const lists: Record<string, Manifest[]> = Object.fromEntries(LIVE_KINDS.map(({ kind, path: listPath }) =>
      [resourceOf(listPath), objects().filter((o) => o.kind === kind)]));
    fs.writeFileSync(path.join(dir, 'lists.json'), JSON.stringify(lists));
    fs.writeFileSync(path.join(dir, 'server.js'), SERVER);
    const server = spawn(process.execPath, [path.join(dir, 'server.js'), path.join(dir, 'lists.json'), path.join(dir, 'requests.log')],
      { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const port = await new Promise<string>((resolve, reject) => {
        server.stdout!.on('data', (chunk: Buffer) => {
          const match = /LISTENING (\d+)/.exec(chunk.toString());
          if (match) resolve(match[1]);
        });
        server.on('exit', (code) => reject(new Error(`the API server exited (${code})`)));
      });
      fs.writeFileSync(path.join(dir, 'kubeconfig'), [
        'apiVersion: v1', 'kind: Config', 'current-context: other',
        `clusters: [{ name: c, cluster: { server: "http://127.0.0.1:${port}" } }]`,
        'users: [{ name: u, user: {} }]',
        'contexts: [{ name: test, context: { cluster: c, user: u } }, { name: other, context: { cluster: none, user: u } }]',
      ].join('\n'));
      fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(list(objects())));
      const live = run('doctor', '--kubeconfig', 'kubeconfig', '--context', 'test', '--json');
      expect(live.stderr).toBe('');
      expect(live.code).toBe(1);
      expect(JSON.parse(live.stdout)).toEqual(JSON.parse(run('doctor', '--state', 'state.json', '--json').stdout));
      const requests = fs.readFileSync(path.join(dir, 'requests.log'), 'utf-8').split('\n');
      // every list was read to its last page (pods: 3 objects, two pages), and nothing but GET was sent
      expect(requests.filter((r) => r === 'GET /api/v1/pods')).toHaveLength(2);
      expect(requests.filter((r) => r !== '').every((r) => r.startsWith('GET '))).toBe(true);
    } finally {
      server.kill();
    }
  }, 60_000);
});
