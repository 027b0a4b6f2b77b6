/**
 * `node-agents size --prometheus` against a real Prometheus (Debian's package: prometheus and promtool), loaded with
 * recorded series (`promtool tsdb create-blocks-from openmetrics`) of a fleet whose collector memory grows with the
 * node's size, with an OOM-killing group, a group of one pod (too thin) and a NodePool mixing sizes. The answers
 * `--save` writes give the same report offline (`--series`).
 */
import { ChildProcess, spawn, spawnSync } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { runCli } from '../../src/cli/run';
import { freePort } from '../util/loopback';
import { describeWithBinaries, PROMETHEUS, PROMTOOL } from '../util/prometheus-tools';
import { FleetNode, MIB, openMetrics } from '../util/size-fleet';

const CPU = 'karpenter.k8s.aws/instance-cpu';
const POOL = 'karpenter.sh/nodepool';

function fleet(): FleetNode[] {
  const nodes: FleetNode[] = [];
  for (const [cpu, count, memory] of [[4, 3, 300], [16, 3, 700], [32, 3, 1400], [48, 3, 1500], [96, 1, 3000]]) {
    for (let i = 0; i < count; i++) {
      nodes.push({
        name: `node-${cpu}-${i}`,
        labels: { [CPU]: String(cpu), [POOL]: cpu <= 16 ? 'general' : 'large' },
        memory: memory * MIB,
        cpu: cpu / 200,
        oomAt: cpu === 48 && i === 0 ? [600, 1500] : undefined,
      });
    }
  }
  return nodes;
}

/** 36 hours of samples a minute apart, ending at END (a whole day, in the past) */
const SAMPLES = 36 * 60;
const END = Math.floor(Date.now() / 1000 / 86400) * 86400 - 86400;
const START = END - (SAMPLES - 1) * 60;

function cli(cwd: string, ...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => { stdout += t; } }, stderr: { write: (t: string) => { stderr += t; } }, cwd });
  return { code, stdout, stderr };
}

async function ready(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`prometheus exited: ${log()}`);
    try {
      const r = await fetch(`${url}/api/v1/query?query=count(kube_pod_info)&time=${END}`);
      const body = await r.json() as any;
      if (body.data?.result?.[0]?.value?.[1] === String(fleet().length)) return;
    } catch { /* not listening yet */ }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`prometheus not ready with the blocks loaded: ${log()}`);
}

describeWithBinaries('size against a real Prometheus loaded with recorded series', [PROMETHEUS, PROMTOOL], () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'size-prometheus-'));
  let prometheus: ChildProcess | undefined;
  let url = '';
  let output = '';

  beforeAll(async () => {
    writeFileSync(path.join(dir, 'fleet.om'), openMetrics({ nodes: fleet(), start: START, samples: SAMPLES, stepSeconds: 60 }));
    const blocks = spawnSync(PROMTOOL, ['tsdb', 'create-blocks-from', 'openmetrics', path.join(dir, 'fleet.om'), path.join(dir, 'data')], { encoding: 'utf8', timeout: 120_000 });
    if (blocks.status !== 0) throw new Error(`promtool: ${blocks.stdout}${blocks.stderr}`);
    writeFileSync(path.join(dir, 'prometheus.yml'), 'global:\n  scrape_interval: 1m\n');
    const port = await freePort();
    prometheus = spawn(PROMETHEUS, [
      `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
      '--storage.tsdb.retention.time=3650d', `--web.listen-address=127.0.0.1:${port}`,
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    prometheus.stdout!.on('data', (c) => (output += c));
    prometheus.stderr!.on('data', (c) => (output += c));
    url = `http://127.0.0.1:${port}`;
    await ready(url, prometheus, () => output.slice(-2000));
  }, 180_000);

  afterAll(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      const exited = new Promise((resolve) => prometheus!.once('exit', resolve));
      prometheus.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test('the groups, the thin one, the OOM kills; --save gives the same report offline', () => {
    const live = cli(dir, 'size', '--prometheus', url, '--end', String(END), '--window', '36h', '--step', '300', '--save', 'saved.json', '--json');
    expect(live.stderr).toBe('');
    expect(live.code).toBe(0);
    const report = JSON.parse(live.stdout);
    const a = report.agents[0];
    expect(a.agent).toBe('logging/fluent-bit');
    expect(a.groups.map((g: any) => [g.value, g.pods])).toEqual([['4', 3], ['16', 3], ['32', 3], ['48', 3], ['96', 1]]);
    expect(a.groups.find((g: any) => g.value === '96').thin).toBe('1 pod (fewer than 3)');
    expect(a.groups.find((g: any) => g.value === '48').ooms).toBe(2);
    const mem = (v: string) => a.groups.find((g: any) => g.value === v).sizing.memoryMiB;
    expect(mem('4')).toBeLessThan(mem('16'));
    expect(mem('16')).toBeLessThan(mem('32'));
    // the saved answers are the query_range answers keyed by name, and read back the same
    expect(Object.keys(JSON.parse(readFileSync(path.join(dir, 'saved.json'), 'utf8')))).toEqual(['pods', 'nodes', 'memory', 'cpu', 'oom', 'restarts']);
    const offline = cli(dir, 'size', '--series', 'saved.json', '--json');
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout).agents).toEqual(report.agents);
  });

  test('a NodePool mixing sizes is one group, sized by its distribution', () => {
    const r = cli(dir, 'size', '--series', 'saved.json', '--group-by', 'nodepool');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/general +6 /);
    expect(r.stdout).toContain("ResourceProfileNodes.nodePools(['general'])");
  });

  test('an unreachable Prometheus is an input error (exit 2) naming the query', () => {
    const r = cli(dir, 'size', '--prometheus', 'http://127.0.0.1:1', '--end', String(END));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('query pods: Prometheus did not answer');
  });
});
