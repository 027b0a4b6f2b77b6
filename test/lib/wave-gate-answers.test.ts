/**
 * The gate Job's script, run as is with the Job's environment, against a stand-in Prometheus on 127.0.0.1 that answers
 * what a test gives it (well-formed answers spaced and ordered otherwise, an HTML page, a cut answer, hostile bytes),
 * and the fake API server for its record. Each run goes through the host's sh (dash) and, where installed, through
 * busybox's sh, awk, sed and tr, which the Job's image runs. What a real Prometheus answers is
 * test/wave-gate-prometheus.test.ts's.
 */
import { spawn, spawnSync } from 'child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { NodeExporterDaemonSet, Promotion, RolloutWave } from '../../src';
import { REMOVER_SCRIPT } from '../../src/agent/readiness-remover';
import { GATE_SCRIPT } from '../../src/alerts/gate';
import { WATCHER_SCRIPT } from '../../src/rollout/watch-script';
import { FakeWatchApi, TOKEN } from '../util/fake-watch-api';
import { Loopback, serveLoopback } from '../util/loopback';
import { Manifest, synthManifests } from '../util/manifests';

/** The node exporter's gate after its canary, with one check of our own. */
function gateObjects(): { job: Manifest; role: Manifest } {
  const chart = Testing.chart();
  new NodeExporterDaemonSet(chart, 'metrics', {
    rollout: {
      waves: [RolloutWave.labelled('canary')],
      promoted: Promotion.all(),
      argoCdSyncWaves: true,
      gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090', checks: [{ name: 'exporter-down', expr: 'up == 0' }] }],
    },
  });
  const manifests = synthManifests(chart);
  const job = manifests.find((m) => m.kind === 'Job');
  const binding = manifests.find((m) => m.kind === 'RoleBinding' && m.subjects[0].name === job.spec.template.spec.serviceAccountName);
  return { job, role: manifests.find((m) => m.kind === 'Role' && m.metadata.name === binding.roleRef.name) };
}

const { job, role } = gateObjects();
const BUSYBOX = spawnSync('busybox', ['true']).status === 0;
const SHELLS: Array<'sh' | 'busybox'> = BUSYBOX ? ['sh', 'busybox'] : ['sh'];
const api = new FakeWatchApi('monitoring');
const dir = mkdtempSync(path.join(tmpdir(), 'gate-answers-'));
const serviceAccountDir = path.join(dir, 'serviceaccount');
const busyboxBin = path.join(dir, 'busybox-bin');

/** What the stand-in Prometheus answers, and the requests it had (method and URL as sent). */
let answer: { code: number; body: Buffer } = { code: 200, body: Buffer.from('') };
const queries: string[] = [];
let prometheus: Loopback;

beforeAll(async () => {
  mkdirSync(serviceAccountDir);
  writeFileSync(path.join(serviceAccountDir, 'token'), TOKEN);
  writeFileSync(path.join(serviceAccountDir, 'ca.crt'), '');
  if (BUSYBOX) {
    mkdirSync(busyboxBin);
    const busybox = spawnSync('sh', ['-c', 'command -v busybox'], { encoding: 'utf8' }).stdout.trim();
    for (const applet of ['sh', 'awk', 'grep', 'sed', 'tr', 'cut', 'head', 'tail', 'date', 'cat', 'sleep']) symlinkSync(busybox, path.join(busyboxBin, applet));
    symlinkSync(spawnSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).stdout.trim(), path.join(busyboxBin, 'curl'));
  }
  api.rules = role.rules;
  await api.start();
  prometheus = await serveLoopback((req, _body, res) => {
    queries.push(`${req.method} ${req.url}`);
    res.writeHead(answer.code, { 'Content-Type': 'application/json' });
    res.end(answer.body);
  });
});

beforeEach(() => {
  queries.length = 0;
});

afterAll(async () => {
  await api.stop();
  await prometheus.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the Job's container command with the Job's env, changing only what is given, without a record; with busybox's tools when `shell` is 'busybox'. */
function runGate(shell: 'sh' | 'busybox', overrides: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  // a new revision each run, as far as the record goes
  api.configMaps.clear();
  const container = job.spec.template.spec.containers[0];
  const jobEnv = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
  const env = { ...jobEnv, KUBERNETES_API: api.url, SERVICE_ACCOUNT_DIR: serviceAccountDir, PROMETHEUS_URL: prometheus.url, BAKE_SECONDS: '0', QUERY_RETRIES: '0', ...overrides };
  const [command, ...args] = container.command as string[];
  return new Promise((resolve) => {
    const child = spawn(shell === 'busybox' ? path.join(busyboxBin, command) : command, args, {
      env: { PATH: shell === 'busybox' ? busyboxBin : process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    child.once('exit', (code) => resolve({ code, output: Buffer.concat(chunks).toString('latin1') }));
  });
}

const answers = (code: number, text: string | Buffer) => (answer = { code, body: Buffer.isBuffer(text) ? text : Buffer.from(text, 'utf8') });
/** Any byte a terminal may take for a control, but the newline ending each log line (the output read as latin1: one char a byte). */
const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;

describe.each(SHELLS)('the gate (%s) parses what Prometheus answers', (shell) => {
  test('an empty vector passes, however the answer is spaced and its keys ordered', async () => {
    answers(200, '{ "data" : {\n  "result" : [ ],\r\n  "resultType" : "vector" },\t"status" : "success" }');
    const run = await runGate(shell);
    expect(run.output).toContain('gate canary: check exporter-down: ok');
    expect(run.code).toBe(0);
    answers(200, '{"status":"success","data":{"resultType":"vector","result":[]},"warnings":["a \\"quoted\\" warning"]}');
    expect((await runGate(shell)).code).toBe(0);
  }, 30_000);

  test('an HTML page or any answer quoting an empty result is no answer: the gate fails closed, saying why', async () => {
    const empty = '{"status":"success","data":{"resultType":"vector","result":[]}}';
    for (const [body, why] of [
      [`<html><body><pre>${empty}</pre></body></html>`, 'not JSON: a stray <html><body><pre>'],
      [`${empty}${empty}`, 'not JSON: more after the end'],
      [empty.slice(0, -1), 'not JSON: cut short'],
      ['{"status":"error","errorType":"timeout","data":{"resultType":"vector","result":[]}}', 'status "error"'],
      ['{"data":{"resultType":"vector","result":[]}}', 'status missing'],
      ['{"status":"success","data":{"resultType":"vector","result":{}}}', 'data.result not an array'],
      ['{"status":"success","data":{"resultType":"vector"}}', 'data.result missing'],
      ['[{"status":"success","data":{"resultType":"vector","result":[]}}]', 'not a JSON object'],
    ]) {
      answers(200, body);
      const run = await runGate(shell);
      expect(run.output).toContain(`gate canary: check exporter-down: FAILED, not a Prometheus query answer (${why}), the gate fails closed`);
      expect(run.code).toBe(1);
    }
    answers(200, '{"status":"success","data":{"resultType":"matrix","result":[]}}');
    expect((await runGate(shell)).output).toContain('check exporter-down: FAILED, not an instant vector result (resultType matrix)');
  }, 60_000);

  test('series fail the gate, printed without a byte a terminal takes for a control', async () => {
    // a label value with a raw UTF-8 C1 control (U+009B, CSI) and an escaped ESC (JSON's \u001b stays as written)
    const series = { metric: { __name__: 'up', job: 'node-exporter', pod: 'x\u009b2J\u001b[31m' }, value: [1733500000, '0'] };
    answers(200, JSON.stringify({ status: 'success', data: { resultType: 'vector', result: [series, series] } }));
    const run = await runGate(shell);
    expect(run.output).toMatch(/gate canary: check exporter-down: FAILED, the expression returned series: .*"job":"node-exporter","pod":"x\?2J\\u001b\[31m"/);
    expect(run.output).not.toMatch(CONTROL);
    expect(run.code).toBe(1);
  }, 30_000);

  test('an error answer with raw terminal controls: logged with none of them', async () => {
    answers(400, Buffer.concat([Buffer.from('{"status":"error","error":"bad \x1b]0;title\x07 \x1b[2J', 'latin1'), Buffer.from('\u0085\u009b', 'utf8'), Buffer.from('\x9b\x9bq"}', 'latin1')]));
    const run = await runGate(shell);
    // curl's own error, then the body
    expect(run.output).toContain('check exporter-down: FAILED, Prometheus rejected the query: curl: (22) The requested URL returned error: 400 {"status":"error","error":"bad ?]0;title? ?[2J???q"}');
    expect(run.output).not.toMatch(CONTROL);
    expect(run.code).toBe(1);
  }, 30_000);

  test('the URL is never a curl glob: one query, whatever brackets or braces it holds', async () => {
    answers(200, '{"status":"success","data":{"resultType":"vector","result":[]}}');
    const run = await runGate(shell, { PROMETHEUS_URL: `${prometheus.url}/p[1-3]` });
    expect(queries).toEqual(['POST /p[1-3]/api/v1/query']);
    expect(run.code).toBe(0);
    queries.length = 0;
    await runGate(shell, { PROMETHEUS_URL: `${prometheus.url}/{a,b}` });
    expect(queries).toEqual(['POST /{a,b}/api/v1/query']);
  }, 30_000);

  test('credentials in the URL are used, never logged', async () => {
    answers(200, '{"status":"success","data":{"resultType":"vector","result":[]}}');
    const url = prometheus.url.replace('http://', 'http://gate:s3cret@');
    const run = await runGate(shell, { PROMETHEUS_URL: url });
    expect(run.output).toContain(`gate canary: baking 0s, then 1 checks against ${prometheus.url.replace('http://', 'http://***@')}`);
    expect(run.output).not.toContain('s3cret');
    expect(run.code).toBe(0);
    const closed = await runGate(shell, { PROMETHEUS_URL: 'http://gate:s3cret@127.0.0.1:1' });
    expect(closed.output).toContain('cannot query Prometheus at http://***@127.0.0.1:1 (the gate fails closed)');
    expect(closed.output).not.toContain('s3cret');
  }, 30_000);
});

test('every curl of every rendered script (gate, watcher, readiness taint remover) runs with --globoff', () => {
  for (const script of [GATE_SCRIPT, WATCHER_SCRIPT, REMOVER_SCRIPT]) {
    const calls = script.split('\n').filter((line) => /(^|[\s($])curl\s/.test(line) && !/^\s*#/.test(line));
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) expect(call).toMatch(/(^|[\s($])curl --globoff /);
  }
});
