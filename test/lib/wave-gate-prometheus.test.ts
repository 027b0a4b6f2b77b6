/**
 * The gate Job's script, run as is with `sh` and the Job's own environment, against a real
 * Prometheus started on 127.0.0.1 that scrapes the real node_exporter and a kube-state-metrics
 * stand-in (a static exposition of the series the default checks read). Only the Prometheus URL
 * and the bake time are changed. Everything the suite starts is stopped in afterAll.
 */
import { ChildProcess, spawn } from 'child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'fs';
import * as http from 'http';
import { tmpdir } from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { NodeExporterDaemonSet, Promotion, RolloutWave, WaveGateCheck } from '../../src';
import { UNFINISHED_ATTEMPTS } from '../../src/rollout/hook-shell';
import { FakeWatchApi, TOKEN } from '../util/fake-watch-api';
import { freePort, Loopback, serveLoopback } from '../util/loopback';
import { Manifest, synthManifests } from '../util/manifests';
import { describeWithBinaries, PROMETHEUS } from '../util/prometheus-tools';

const NODE_EXPORTER = process.env.NODE_EXPORTER_BIN ?? '/usr/bin/prometheus-node-exporter';
const CANARY_POD = 'node-exporter-canary-ab12c';

/** The gate Job the node exporter renders after its canary (through the shared manifest checks). */
function gateJob(extraChecks?: WaveGateCheck[], image?: string): Manifest {
  return gateObjects(extraChecks, image).job;
}

/** The gate Job and the Role its ServiceAccount is bound to. */
function gateObjects(extraChecks?: WaveGateCheck[], image?: string): { job: Manifest; role: Manifest } {
  const chart = Testing.chart();
  new NodeExporterDaemonSet(chart, 'metrics', {
    image,
    rollout: {
      waves: [RolloutWave.labelled('canary')],
      promoted: Promotion.all(),
      argoCdSyncWaves: true,
      gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090', extraChecks }],
    },
  });
  const manifests = synthManifests(chart);
  const job = manifests.find((m) => m.kind === 'Job');
  const binding = manifests.find((m) => m.kind === 'RoleBinding' && m.subjects[0].name === job.spec.template.spec.serviceAccountName);
  return { job, role: manifests.find((m) => m.kind === 'Role' && m.metadata.name === binding.roleRef.name) };
}

function getJson(url: string): Promise<Manifest> {
  return new Promise((resolve, reject) => {
    http.get(url, { timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (body += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body));
        } catch (e) {
          reject(e);
        }
      });
    }).on('error', reject);
  });
}

interface Started {
  readonly child: ChildProcess;
  readonly log: () => string;
  readonly stop: () => Promise<void>;
}

function start(binary: string, args: string[]): Started {
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited = false;
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (c) => (stderr += c));
  child.once('exit', () => (exited = true));
  return {
    child,
    log: () => stderr,
    stop: async () => {
      if (exited) return;
      const done = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await done;
    },
  };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, log: () => string, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${what} did not happen within ${ms / 1000} s:\n${log()}`);
}

interface GateRun {
  readonly code: number | null;
  readonly output: string;
}

/** Runs the Job's container command (sh -c <script>) with the Job's env, changing only what is given. */
function runGate(job: Manifest, overrides: Record<string, string>): Promise<GateRun> {
  overrides = { KUBERNETES_API: api.url, SERVICE_ACCOUNT_DIR: serviceAccountDir, ...overrides };
  const container = job.spec.template.spec.containers[0];
  const jobEnv = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
  const [shell, ...args] = container.command as string[];
  return new Promise((resolve) => {
    const child = spawn(shell, args, { env: { PATH: process.env.PATH, ...jobEnv, ...overrides }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

/** What kube-state-metrics would report for a healthy canary DaemonSet with one pod. */
function kubeStateMetrics(unavailable: number): string {
  const ds = 'namespace="monitoring",daemonset="node-exporter-canary"';
  return [
    `kube_daemonset_status_desired_number_scheduled{${ds}} 1`,
    `kube_daemonset_status_updated_number_scheduled{${ds}} 1`,
    `kube_daemonset_status_number_unavailable{${ds}} ${unavailable}`,
    `kube_daemonset_metadata_generation{${ds}} 3`,
    `kube_daemonset_status_observed_generation{${ds}} 3`,
    `kube_pod_container_status_restarts_total{namespace="monitoring",pod="${CANARY_POD}",container="node-exporter"} 0`,
    '',
  ].join('\n');
}

// the gate uses the ConfigMap endpoints only: GET, merge PATCH and POST of its record, authorized by its Role
const api = new FakeWatchApi('monitoring');
let serviceAccountDir = '';

describeWithBinaries(`wave gate script against a real Prometheus (${PROMETHEUS}) scraping the real node_exporter`, [PROMETHEUS, NODE_EXPORTER], () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gate-prometheus-'));
  let exporter: Started | undefined;
  let prometheus: Started | undefined;
  let ksm: Loopback | undefined;
  let ksmUnavailable = 0;
  let prometheusUrl = '';

  beforeAll(async () => {
    serviceAccountDir = path.join(dir, 'serviceaccount');
    mkdirSync(serviceAccountDir);
    writeFileSync(path.join(serviceAccountDir, 'token'), TOKEN);
    writeFileSync(path.join(serviceAccountDir, 'ca.crt'), '');
    api.rules = gateObjects().role.rules;
    await api.start();
    const [exporterPort, prometheusPort] = [await freePort(), await freePort()];
    exporter = start(NODE_EXPORTER, [`--web.listen-address=127.0.0.1:${exporterPort}`]);
    ksm = await serveLoopback((_, __, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end(kubeStateMetrics(ksmUnavailable));
    });
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [
        {
          // The labels prometheus-operator gives a ServiceMonitor target of the canary pod.
          job_name: 'node-exporter',
          static_configs: [{ targets: [`127.0.0.1:${exporterPort}`], labels: { namespace: 'monitoring', pod: CANARY_POD } }],
        },
        { job_name: 'kube-state-metrics', honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${ksm.port}`] }] },
      ],
    };
    writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config));
    prometheus = start(PROMETHEUS, [
      `--config.file=${path.join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${path.join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${prometheusPort}`,
    ]);
    prometheusUrl = `http://127.0.0.1:${prometheusPort}`;
    const log = () => `${prometheus!.log()}\n${exporter!.log()}`;
    // Both targets scraped, with the node_exporter's collector metrics in.
    await until('both targets up', async () => {
      const r = await getJson(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent('count(up == 1) == 2 and count(node_scrape_collector_success) > 0')}`);
      return r.data?.result?.length === 1 ? true : undefined;
    }, log);
  }, 60_000);

  beforeEach(() => {
    api.configMaps.clear();
    api.requests.length = 0;
  });

  afterAll(async () => {
    await api.stop();
    await prometheus?.stop();
    await exporter?.stop();
    await ksm?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('passes when the canary is healthy: every default check returns no series', async () => {
    const job = gateJob();
    const run = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '1' });
    expect(run.output).toContain(`gate canary: baking 1s, then 8 checks against ${prometheusUrl}`);
    for (const name of ['daemonset-known', 'pods-unavailable', 'container-restarts', 'exporter-down', 'collector-failed', 'textfile-error']) {
      expect(run.output).toContain(`gate canary: check ${name}: ok`);
    }
    expect(run.output).toContain('gate canary: 0 of 8 checks failed after 1s bake');
    expect(run.code).toBe(0);
  }, 60_000);

  test('fails when a check returns series, naming the check and showing the series', async () => {
    const job = gateJob([{ name: 'exporter-up', expr: 'up{job="node-exporter"} == 1' }]);
    const run = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
    expect(run.output).toMatch(/gate canary: check exporter-up: FAILED, the expression returned series: .*"job":"node-exporter"/);
    expect(run.output).toContain('gate canary: 1 of 9 checks failed after 0s bake: exporter-up; the sync stops here');
    expect(run.code).toBe(1);
  }, 60_000);

  test('fails when kube-state-metrics reports an unavailable canary pod (a default check)', async () => {
    ksmUnavailable = 1;
    try {
      await until('the unavailable pod scraped', async () => {
        const r = await getJson(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent('kube_daemonset_status_number_unavailable > 0')}`);
        return r.data?.result?.length === 1 ? true : undefined;
      }, () => prometheus!.log());
      const run = await runGate(gateJob(), { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(run.output).toContain('gate canary: check pods-unavailable: FAILED, the expression returned series');
      expect(run.output).toContain('gate canary: 1 of 8 checks failed after 0s bake: pods-unavailable; the sync stops here');
      expect(run.code).toBe(1);
    } finally {
      ksmUnavailable = 0;
      await until('the recovered pod scraped', async () => {
        const r = await getJson(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent('kube_daemonset_status_number_unavailable == 0')}`);
        return r.data?.result?.length === 1 ? true : undefined;
      }, () => prometheus!.log());
    }
  }, 60_000);

  test('fails when Prometheus rejects an expression, with Prometheus\' error', async () => {
    // One that parses (a syntax error is refused at synthesis) but that Prometheus refuses to evaluate:
    // rate() of an instant vector.
    const run = await runGate(gateJob([{ name: 'typo', expr: 'rate(up)' }]), { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
    expect(run.output).toMatch(/gate canary: check typo: FAILED, Prometheus rejected the query: .*"errorType":"bad_data"/);
    expect(run.output).toContain('gate canary: 1 of 9 checks failed after 0s bake: typo; the sync stops here');
    expect(run.code).toBe(1);
  }, 60_000);

  test('fails closed when Prometheus is unreachable, without waiting for every check', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const run = await runGate(gateJob(), { PROMETHEUS_URL: closed, BAKE_SECONDS: '0', QUERY_RETRIES: '0' });
    expect(run.output).toContain(`gate canary: check daemonset-known: FAILED, cannot query Prometheus at ${closed} (the gate fails closed)`);
    expect(run.output).toMatch(/Failed to connect|Connection refused|Couldn't connect/);
    expect(run.output).toContain('gate canary: check pods-unavailable: FAILED, not run: Prometheus is unreachable');
    expect(run.output).toContain('gate canary: 8 of 8 checks failed after 0s bake');
    expect(run.code).toBe(1);
  }, 60_000);

  /** Sets what kube-state-metrics reports and waits until Prometheus has scraped it. */
  async function setUnavailable(n: number): Promise<void> {
    ksmUnavailable = n;
    await until(`unavailable = ${n} scraped`, async () => {
      const r = await getJson(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(`kube_daemonset_status_number_unavailable == ${n}`)}`);
      return r.data?.result?.length === 1 ? true : undefined;
    }, () => prometheus!.log());
  }

  const envOf = (job: Manifest): Record<string, string> =>
    Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: Manifest) => [e.name, e.value]));
  const RECORD = 'node-exporter-gate-canary';

  describe('Argo CD retries a failed sync (argo-cd controller/appcontroller.go: automated operations retry 5 times by default; '
    + 'applicationset/progressivesync syncApplication: RollingSync too), and BeforeHookCreation (gitops-engine pkg/sync/sync_context.go) '
    + 'deletes the failed Job before each retry creates it again', () => {
    test('a failed gate stays failed on every retry, also once the wave looks healthy again, without baking again', async () => {
      const job = gateJob();
      const revision = envOf(job).GATE_REVISION;
      await setUnavailable(1);
      try {
        const first = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
        expect(first.code).toBe(1);
        expect(first.output).toContain('check pods-unavailable: FAILED');
        expect(api.configMaps.get(RECORD)?.data.state).toBe(`${revision} failed`);
      } finally {
        await setUnavailable(0);
      }
      // The pod recovered: a new bake's window no longer shows the failure. Every retry still fails.
      for (let retry = 1; retry <= 5; retry++) {
        const run = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
        expect(run.code).toBe(1);
        expect(run.output).toContain(`gate canary: FAILED before for revision ${revision} (configmap monitoring/${RECORD}); not checking again`);
        expect(run.output).not.toContain('baking');
        expect(run.output).toContain(`kubectl -n monitoring patch configmap ${RECORD} --type merge -p '{"data":{"override":"${revision}"}}'`);
      }
      // Without the record (a person deleting it to check again), the same gate passes now.
      api.configMaps.delete(RECORD);
      const again = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(again.output).toContain('0 of 8 checks failed');
      expect(again.code).toBe(0);
      expect(api.configMaps.get(RECORD)?.data.state).toBe(`${revision} passed`);
    }, 120_000);

    test('a person overrides the failed gate for this revision: it passes without checking; the next revision gates again', async () => {
      const job = gateJob([{ name: 'always', expr: 'vector(1)' }]);
      const revision = envOf(job).GATE_REVISION;
      expect((await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' })).code).toBe(1);
      // kubectl -n monitoring patch configmap <record> --type merge -p '{"data":{"override":"<revision>"}}'
      api.configMaps.get(RECORD)!.data.override = revision;
      const overridden = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(overridden.output).toContain(`gate canary: overridden: configmap monitoring/${RECORD} has override ${revision}, this revision passes without checks`);
      expect(overridden.code).toBe(0);
      // A new commit changing the wave's DaemonSet is a new revision: the override does not carry over.
      const next = gateJob([{ name: 'always', expr: 'vector(1)' }], 'quay.io/prometheus/node-exporter:v1.9.0');
      expect(envOf(next).GATE_REVISION).not.toBe(revision);
      const run = await runGate(next, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(run.output).toContain('check always: FAILED');
      expect(run.code).toBe(1);
    }, 120_000);

    test('a failed revision does not hold a new one: a fixing commit bakes and checks again', async () => {
      const failing = gateJob([{ name: 'always', expr: 'vector(1)' }]);
      expect((await runGate(failing, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' })).code).toBe(1);
      const fixed = gateJob();
      const run = await runGate(fixed, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(run.output).toContain('0 of 8 checks failed');
      expect(run.code).toBe(0);
    }, 120_000);

    test('an attempt that never finished (pod deleted or evicted) is no verdict: the gate runs again, at most UNFINISHED_ATTEMPTS times', async () => {
      const job = gateJob();
      const revision = envOf(job).GATE_REVISION;
      api.configMaps.set(RECORD, { data: { state: `${revision} running` } });
      const run = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(run.output).toContain(`an earlier attempt for revision ${revision} ended without a verdict (pod deleted or evicted, or the deadline passed): not a verdict, checking again (attempt 2 of ${UNFINISHED_ATTEMPTS})`);
      expect(run.output).toContain('0 of 8 checks failed');
      expect(run.code).toBe(0);
      expect(api.configMaps.get(RECORD)?.data.state).toBe(`${revision} passed`);
      // the second attempt evicted too: the third runs
      api.configMaps.set(RECORD, { data: { state: `${revision} running 2` } });
      const third = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(third.output).toContain(`(attempt 3 of ${UNFINISHED_ATTEMPTS})`);
      expect(third.code).toBe(0);
    }, 60_000);

    test('past UNFINISHED_ATTEMPTS unfinished attempts the gate records failed and says so; failed stays final', async () => {
      const job = gateJob();
      const revision = envOf(job).GATE_REVISION;
      api.configMaps.set(RECORD, { data: { state: `${revision} running ${UNFINISHED_ATTEMPTS}` } });
      const run = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(run.output).toContain(`FAILED: ${UNFINISHED_ATTEMPTS} attempts for revision ${revision} ended without a verdict`);
      expect(run.output).not.toContain('baking');
      expect(run.code).toBe(1);
      expect(api.configMaps.get(RECORD)?.data.state).toBe(`${revision} failed`);
      const again = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(again.output).toContain(`FAILED before for revision ${revision}`);
      expect(again.code).toBe(1);
    }, 60_000);

    test('the record is created, then patched, with only what the rendered Role allows', async () => {
      const job = gateJob();
      const revision = envOf(job).GATE_REVISION;
      const run = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
      expect(run.code).toBe(0);
      const path1 = `/api/v1/namespaces/monitoring/configmaps/${RECORD}`;
      expect(api.requests).toEqual([`GET ${path1}`, `PATCH ${path1}`, 'POST /api/v1/namespaces/monitoring/configmaps', `PATCH ${path1}`]);
      expect(api.configMaps.get(RECORD)?.data.state).toBe(`${revision} passed`);
    }, 60_000);

    test('fails closed, without baking, when the record cannot be read or written', async () => {
      const job = gateJob();
      const unreachable = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0', KUBERNETES_API: `http://127.0.0.1:${await freePort()}` });
      expect(unreachable.output).toContain(`gate canary: FAILED: cannot read the gate's record, configmap monitoring/${RECORD} (HTTP 000), the gate fails closed`);
      expect(unreachable.code).toBe(1);
      const rules = api.rules;
      try {
        api.rules = rules.filter((r: Manifest) => !r.verbs.includes('create'));
        const forbidden = await runGate(job, { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
        expect(forbidden.output).toMatch(/cannot record 'running' in configmap monitoring\/node-exporter-gate-canary \(HTTP 403\)/);
        expect(forbidden.output).not.toContain('baking');
        expect(forbidden.code).toBe(1);
      } finally {
        api.rules = rules;
      }
    }, 60_000);
  });
});
