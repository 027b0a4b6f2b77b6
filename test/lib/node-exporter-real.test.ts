/**
 * Runs the real node_exporter (Debian's prometheus-node-exporter) with the exact arguments the
 * construct synthesizes, host paths pointed at this machine's /proc, /sys and /, listening on
 * 127.0.0.1 and a free port.
 *
 * Install: `apt-get install -y --no-install-recommends prometheus-node-exporter` (the package's
 * systemd unit is not started; only /usr/bin/prometheus-node-exporter is used). Without the binary
 * the suite is skipped, except under CI=true, where a missing binary fails.
 */
import { ChildProcess, execFileSync, spawn, spawnSync } from 'child_process';
import { existsSync } from 'fs';
import * as http from 'http';
import { Testing } from 'cdk8s';
import { NodeExporterCollector, NodeExporterDaemonSet, NodeExporterDaemonSetProps } from '../../src/constructs/node-exporter-daemon-set';
import { flagName, FS_TYPES_EXCLUDE, HOST_PROC, HOST_ROOT, HOST_SYS, MOUNT_POINTS_EXCLUDE, NET_DEVICES_EXCLUDE, isRepeatable } from '../../src/node-exporter/args';
import { KNOWN_COLLECTORS } from '../../src/node-exporter/collectors';
import { freePort } from '../util/loopback';
import { synthManifests } from '../util/manifests';

const BINARY = process.env.NODE_EXPORTER_BIN ?? '/usr/bin/prometheus-node-exporter';
const INSTALL_HINT = 'apt-get update && apt-get install -y --no-install-recommends prometheus-node-exporter';
const present = existsSync(BINARY);

/** The exporter container exactly as the construct synthesizes it (through the shared manifest checks). */
function synthesizedExporter(props?: NodeExporterDaemonSetProps): { args: string[]; env: Array<{ name: string; valueFrom?: unknown }> } {
  const chart = Testing.chart();
  new NodeExporterDaemonSet(chart, 'metrics', props);
  const ds = synthManifests(chart).find((m) => m.kind === 'DaemonSet');
  const c = ds.spec.template.spec.containers.find((x: { name: string }) => x.name === 'node-exporter');
  return { args: c.args, env: c.env ?? [] };
}

/**
 * The args as this machine needs them: $(VAR) expanded as kubelet does (the node IP becomes
 * 127.0.0.1), the listen port replaced by a free one, /host/{proc,sys,root} by /proc, /sys and /.
 */
function localArgs(args: readonly string[], port: number): string[] {
  return args.map((arg) => {
    let a = arg.replace(/\$\(HOST_IP\)/g, '127.0.0.1');
    if (a.startsWith('--web.listen-address=')) a = a.replace(/:\d+$/, `:${port}`);
    return a
      .replace(`=${HOST_PROC}`, '=/proc')
      .replace(`=${HOST_SYS}`, '=/sys')
      .replace(new RegExp(`=${HOST_ROOT}(/|$)`), '=/');
  });
}

interface BinaryInfo {
  readonly version: string;
  readonly debianVersion: string;
  readonly flags: ReadonlySet<string>;
  readonly collectors: readonly string[];
}

function binaryInfo(): BinaryInfo {
  const versionText = execFileSync(BINARY, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const version = /version (\S+)/.exec(versionText)?.[1] ?? 'unknown';
  let debianVersion = 'not a Debian package';
  try {
    debianVersion = execFileSync('dpkg-query', ['-W', '-f=${Version}', 'prometheus-node-exporter'], { encoding: 'utf8' });
  } catch { /* not installed through dpkg */ }
  // kingpin prints usage to stdout (node_exporter >= 1.2); `--[no-]x` is how newer kingpin shows booleans.
  const help = execFileSync(BINARY, ['--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const flags = new Set<string>();
  for (const m of help.matchAll(/^\s+--(?:\[no-\])?([a-z0-9][a-z0-9._-]*)/gm)) flags.add(`--${m[1]}`);
  const collectors = [...flags]
    .map((f) => /^--collector\.([a-z0-9_]+)$/.exec(f)?.[1])
    .filter((c): c is string => c !== undefined);
  return { version, debianVersion, flags, collectors };
}

/** Every flag the args set that the binary does not have, as a message naming each one. */
function missingFlags(args: readonly string[], info: BinaryInfo): string | undefined {
  const missing = args.filter((arg) => !info.flags.has(flagName(arg)));
  if (missing.length === 0) return undefined;
  return `node_exporter ${info.version} (Debian package ${info.debianVersion}) at ${BINARY} lacks ` +
    missing.map((arg) => `${flagName(arg)} (synthesized as '${arg}')`).join(', ');
}

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

interface Run {
  readonly args: string[];
  readonly port: number;
  readonly metrics: string;
  readonly landingStatus: number;
  /** The exporter's log so far (logfmt on stderr). */
  readonly log: () => string;
  readonly stop: () => Promise<void>;
}

/** Starts the binary with `synthesizedArgs` made local, waits for /metrics, and leaves it running. */
async function runExporter(synthesizedArgs: readonly string[]): Promise<Run> {
  const port = await freePort();
  const args = localArgs(synthesizedArgs, port);
  const child: ChildProcess = spawn(BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let exited: { code: number | null; signal: string | null } | undefined;
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  child.once('exit', (code, signal) => (exited = { code, signal }));
  const stop = async () => {
    if (exited) return;
    const done = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await done;
  };

  let metrics: { status: number; body: string } | undefined;
  const deadline = Date.now() + 15_000;
  while (!metrics && !exited && Date.now() < deadline) {
    metrics = await get(port, '/metrics').catch(() => undefined);
    if (!metrics) await new Promise((r) => setTimeout(r, 200));
  }
  if (!metrics) {
    await stop();
    const why = exited ? `exited (${JSON.stringify(exited)})` : `did not answer on 127.0.0.1:${port} within 15 s`;
    throw new Error(`node_exporter ${why} with args ${JSON.stringify(args)}:\n${stderr}`);
  }
  const landing = await get(port, '/');
  if (exited) throw new Error(`node_exporter exited after serving (${JSON.stringify(exited)}):\n${stderr}`);
  return { args, port, metrics: metrics.status === 200 ? metrics.body : `HTTP ${metrics.status}`, landingStatus: landing.status, log: () => stderr, stop };
}

const metricNames = (body: string) => new Set(body.split('\n').filter((l) => l.startsWith('node_')).map((l) => l.split(/[{ ]/)[0]));
const parsedFlag = (log: string, flag: string) => new RegExp(`msg="Parsed flag ${flag.replace(/\./g, '\\.')}" flag=(\\S+)`).exec(log)?.[1];
/** Collectors that ran, from the exporter's own per-collector metric (independent of the log format). */
const enabledCollectors = (metrics: string) => [...metrics.matchAll(/^node_scrape_collector_success\{collector="([a-z0-9_]+)"\}/gm)].map((m) => m[1]);

const suiteName = present
  ? `real node_exporter at ${BINARY}`
  : `real node_exporter (SKIPPED: ${BINARY} not found; install with: ${INSTALL_HINT})`;

if (!present) {
  // A skipped describe prints nothing by default; say why, and how to run it.
  console.warn(suiteName);
}
if (!present && process.env.CI === 'true') {
  test('the real node_exporter binary is installed under CI', () => {
    throw new Error(`${BINARY} not found. .ci/run must install it: ${INSTALL_HINT}`);
  });
}

(present ? describe : describe.skip)(suiteName, () => {
  let info: BinaryInfo;
  beforeAll(() => {
    info = binaryInfo();
  });

  test('every collector this binary has is in the known list (catches typos in the list)', () => {
    expect(info.collectors.length).toBeGreaterThan(40);
    expect(info.collectors.filter((c) => !(KNOWN_COLLECTORS as readonly string[]).includes(c))).toEqual([]);
    if (info.version === '1.5.0') {
      // Collectors added upstream in 1.6–1.12; their flags are reported by name when synthesized.
      expect(KNOWN_COLLECTORS.filter((c) => !info.collectors.includes(c))).toEqual(['bcachefs', 'cpu_vulnerabilities', 'dmmultipath', 'kernel_hung', 'nvmesubsystem', 'pcidevice', 'softirqs', 'swap', 'watchdog', 'xfrm']);
    }
  });

  test('a synthesized flag this binary lacks is reported with the flag, the argument and the version', () => {
    const missing = KNOWN_COLLECTORS.filter((c) => !info.collectors.includes(c));
    if (missing.length === 0) return; // a binary as new as the pinned image has them all
    const { args } = synthesizedExporter({ enableCollectors: [missing[0] as NodeExporterCollector] });
    expect(missingFlags(args, info)).toBe(`node_exporter ${info.version} (Debian package ${info.debianVersion}) at ${BINARY} lacks ` +
      `--collector.${missing[0]} (synthesized as '--collector.${missing[0]}')`);
  });

  test('kingpin exits for a repeated flag exactly where extraArgs is refused: every flag the construct writes, but for the repeatable ones', () => {
    // Every synthesized flag given twice, the args local and the port invalid (99999): the exporter
    // either refuses the repetition while parsing or exits at once when it cannot listen.
    const { args } = synthesizedExporter({ textfileCollector: {}, enableCollectors: [NodeExporterCollector.PROCESSES] });
    const local = localArgs(args, 99999).filter((a) => info.flags.has(flagName(a)));
    for (const arg of local) {
      const flag = flagName(arg);
      const run = spawnSync(BINARY, [...local, arg], { encoding: 'utf8', timeout: 10_000 });
      expect(run.status).not.toBe(0);
      const output = `${run.stdout}${run.stderr}`;
      expect([flag, output.includes(`flag '${flag.slice(2)}' cannot be repeated`)]).toEqual([flag, !isRepeatable(flag, info.version)]);
      // And the construct refuses it in extraArgs, repeatable or not.
      expect(() => synthesizedExporter({ textfileCollector: {}, enableCollectors: [NodeExporterCollector.PROCESSES], extraArgs: [arg] }))
        .toThrow(new RegExp(`extraArgs\\[0\\] .* sets ${flag.replace(/\./g, '\\.')}, which the construct already writes`));
    }
  });

  describe('defaults', () => {
    const synthesized = synthesizedExporter();
    let run: Run;
    beforeAll(async () => {
      const report = missingFlags(synthesized.args, info);
      if (report) throw new Error(report);
      run = await runExporter(synthesized.args);
    }, 30_000);
    afterAll(async () => run?.stop());

    test('the pod gets the node IP the args expand, and the local run listens on loopback', () => {
      expect(synthesized.env).toContainEqual({ name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } });
      expect(run.args).toContain(`--web.listen-address=[127.0.0.1]:${run.port}`);
      expect(run.args).toContain('--path.procfs=/proc');
      expect(run.args).toContain('--path.rootfs=/');
      expect(run.args).toContain('--path.udev.data=/run/udev/data');
      expect(run.args.filter((a) => a.includes('/host/'))).toEqual([]);
    });

    test('serves node_ metrics and the probe path', () => {
      const names = metricNames(run.metrics);
      for (const name of ['node_cpu_seconds_total', 'node_load1', 'node_memory_MemTotal_bytes', 'node_network_receive_bytes_total', 'node_uname_info']) {
        expect(names).toContain(name);
      }
      expect(run.metrics).toMatch(/node_scrape_collector_success\{collector="filesystem"\} 1/);
      expect(run.landingStatus).toBe(200);
    });

    test('the collectors the args turn off are off', () => {
      const off = synthesized.args.filter((a) => a.startsWith('--no-collector.')).map((a) => a.slice('--no-collector.'.length));
      expect(off).toEqual(['btrfs', 'hwmon', 'wifi']);
      const enabled = enabledCollectors(run.metrics);
      expect(enabled).toContain('cpu');
      for (const c of off) {
        expect(enabled).not.toContain(c);
        expect(run.metrics).not.toContain(`node_scrape_collector_success{collector="${c}"}`);
      }
    });

    test('the exclude regexes arrived intact (as the exporter logs them)', () => {
      expect(parsedFlag(run.log(), '--collector.filesystem.mount-points-exclude')).toBe(MOUNT_POINTS_EXCLUDE);
      expect(parsedFlag(run.log(), '--collector.filesystem.fs-types-exclude')).toBe(FS_TYPES_EXCLUDE);
      expect(parsedFlag(run.log(), '--collector.netdev.device-exclude')).toBe(NET_DEVICES_EXCLUDE);
      expect(run.log()).not.toMatch(/level=(error|fatal).*(flag|pars)/i);
    });
  });

  describe('behind kube-rbac-proxy, with collectors chosen', () => {
    const synthesized = synthesizedExporter({
      kubeRbacProxy: {},
      enableCollectors: [NodeExporterCollector.PROCESSES],
      disableCollectors: [NodeExporterCollector.ZFS, NodeExporterCollector.WIFI],
    });
    let run: Run;
    beforeAll(async () => {
      const report = missingFlags(synthesized.args, info);
      if (report) throw new Error(report);
      run = await runExporter(synthesized.args);
    }, 30_000);
    afterAll(async () => run?.stop());

    test('listens on 127.0.0.1 as synthesized and serves node_ metrics', () => {
      expect(synthesized.args).toContain('--web.listen-address=127.0.0.1:9101');
      expect(run.args).toContain(`--web.listen-address=127.0.0.1:${run.port}`);
      expect(metricNames(run.metrics)).toContain('node_cpu_seconds_total');
      expect(run.landingStatus).toBe(200);
    });

    test('the enabled collector runs, the disabled ones do not', () => {
      const enabled = enabledCollectors(run.metrics);
      expect(enabled).toContain('processes');
      expect(enabled).not.toContain('zfs');
      expect(enabled).toContain('hwmon'); // an explicit disable list replaces the default one
      expect(run.metrics).toMatch(/node_scrape_collector_success\{collector="processes"\} 1/);
      expect(metricNames(run.metrics)).toContain('node_processes_state');
    });
  });
});
