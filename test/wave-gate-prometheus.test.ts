/**
 * The gate Job's script, run as is with `sh` and the Job's own environment, against a real
 * Prometheus started on 127.0.0.1 that scrapes the real node_exporter and a kube-state-metrics
 * stand-in (a static exposition of the series the default checks read). Only the Prometheus URL
 * and the bake time are changed. Everything the suite starts is stopped in afterAll.
 */
import { ChildProcess, spawn } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import * as http from 'http';
import * as net from 'net';
import { tmpdir } from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { NodeExporterDaemonSet, Promotion, RolloutWave, WaveGateCheck } from '../src';
import { Manifest, synthManifests } from './util/manifests';
import { describeWithBinaries, PROMETHEUS } from './util/prometheus-tools';

const NODE_EXPORTER = process.env.NODE_EXPORTER_BIN ?? '/usr/bin/prometheus-node-exporter';
const CANARY_POD = 'node-exporter-canary-ab12c';

/** The gate Job the node exporter renders after its canary (through the shared manifest checks). */
function gateJob(extraChecks?: WaveGateCheck[]): Manifest {
  const chart = Testing.chart();
  new NodeExporterDaemonSet(chart, 'metrics', {
    rollout: {
      waves: [RolloutWave.labelled('canary')],
      promoted: Promotion.all(),
      argoCdSyncWaves: true,
      gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090', extraChecks }],
    },
  });
  return synthManifests(chart).find((m) => m.kind === 'Job');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
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

describeWithBinaries(`wave gate script against a real Prometheus (${PROMETHEUS}) scraping the real node_exporter`, [PROMETHEUS, NODE_EXPORTER], () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gate-prometheus-'));
  let exporter: Started | undefined;
  let prometheus: Started | undefined;
  let ksm: http.Server | undefined;
  let ksmUnavailable = 0;
  let prometheusUrl = '';

  beforeAll(async () => {
    const [exporterPort, ksmPort, prometheusPort] = [await freePort(), await freePort(), await freePort()];
    exporter = start(NODE_EXPORTER, [`--web.listen-address=127.0.0.1:${exporterPort}`]);
    ksm = http.createServer((_, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' });
      res.end(kubeStateMetrics(ksmUnavailable));
    });
    await new Promise<void>((resolve) => ksm!.listen(ksmPort, '127.0.0.1', resolve));
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s' },
      scrape_configs: [
        {
          // The labels prometheus-operator gives a ServiceMonitor target of the canary pod.
          job_name: 'node-exporter',
          static_configs: [{ targets: [`127.0.0.1:${exporterPort}`], labels: { namespace: 'monitoring', pod: CANARY_POD } }],
        },
        { job_name: 'kube-state-metrics', honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${ksmPort}`] }] },
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

  afterAll(async () => {
    await prometheus?.stop();
    await exporter?.stop();
    await new Promise((resolve) => (ksm ? ksm.close(resolve) : resolve(undefined)));
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
    const run = await runGate(gateJob([{ name: 'typo', expr: 'sum(up' }]), { PROMETHEUS_URL: prometheusUrl, BAKE_SECONDS: '0' });
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
});
