/**
 * extraArgs flags are checked as node_exporter 1.12.1's kingpin parses them (alecthomas/kingpin
 * v2.4.0 flags.go `flagGroup.parse`, parser.go's lexer): an unknown flag, `--no-` before a value
 * flag, a value flag without a value and a bool flag with `=value` each make the exporter exit at
 * start. The list is read from the v1.12.1 sources (src/node-exporter/flags.ts); the real binary
 * (Debian's prometheus-node-exporter) confirms each refusal's message and that every flag it knows
 * is in the list.
 */
import { execFileSync, spawnSync } from 'child_process';
import { existsSync } from 'fs';
import { Chart, Testing } from 'cdk8s';
import { NodeExporterDaemonSet } from '../../src';
import { exporterArgs } from '../../src/node-exporter/args';
import { BOOL_FLAGS, EXITING_FLAGS, VALUE_FLAGS } from '../../src/node-exporter/flags';

const base = { port: 9100, listen: 'node-ip' as const, by: 'chart/metrics' };
const BINARY = process.env.NODE_EXPORTER_BIN ?? '/usr/bin/prometheus-node-exporter';
const present = existsSync(BINARY);

/** What kingpin prints for each refusal, as the construct's message quotes it. */
const REFUSED: Array<[string, RegExp, string]> = [
  ['--collector.bogus.flag=1', /extraArgs\[0\] "--collector.bogus.flag=1": --collector.bogus.flag is not a flag of node_exporter 1.12.1/, "unknown long flag '--collector.bogus.flag'"],
  ['--collector.systemd=true', /--collector.systemd is a bool flag, which takes no "=true".*write --collector.systemd to turn it on or --no-collector.systemd/, 'unexpected true'],
  ['--collector.systemd.unit-include', /--collector.systemd.unit-include takes a value/, "expected argument for flag '--collector.systemd.unit-include'"],
  ['--no-web.telemetry-path', /"--no-" negates only a bool flag and --web.telemetry-path takes a value/, "unknown long flag '--no-web.telemetry-path'"],
];

describe('extraArgs against node_exporter 1.12.1\'s flags', () => {
  test.each(REFUSED)('%s is refused, quoting what kingpin would print', (arg, message, kingpin) => {
    expect(() => exporterArgs({ ...base, extraArgs: [arg] })).toThrow(message);
    expect(() => exporterArgs({ ...base, extraArgs: [arg] })).toThrow(kingpin);
  });

  test('a typo gets the nearest flag', () => {
    expect(() => exporterArgs({ ...base, extraArgs: ['--collector.systemd.unit-includ=ssh.service'] })).toThrow(/Did you mean --collector.systemd.unit-include\?/);
    expect(() => exporterArgs({ ...base, extraArgs: ['--no-collector.arp.netlnk'] })).toThrow(/Did you mean --no-collector.arp.netlink\?/);
  });

  test('a flag that prints and exits (--version, --help) is refused: the pod would restart for ever', () => {
    for (const flag of EXITING_FLAGS) {
      expect(() => exporterArgs({ ...base, extraArgs: [`--${flag}`] })).toThrow(new RegExp(`--${flag} makes node_exporter print and exit at once`));
    }
  });

  test('a flag node_exporter refuses beside one the construct writes is refused, naming the prop (collector/filesystem_common.go, netdev_common.go)', () => {
    expect(() => exporterArgs({ ...base, extraArgs: ['--collector.filesystem.mount-points-include=^/data'] }))
      .toThrow(/--collector.filesystem.mount-points-include and --collector.filesystem.mount-points-exclude, which the construct writes, are mutually exclusive.*through mountPointsExclude/);
    expect(() => exporterArgs({ ...base, extraArgs: ['--collector.netdev.device-whitelist=^eth'] })).toThrow(/through netDevicesExclude/);
  });

  test('known flags pass: bools bare or negated, values with a value, mixed-case names', () => {
    const extra = ['--collector.systemd.unit-include=(ssh|kubelet).service', '--web.disable-exporter-metrics', '--no-collector.arp.netlink',
      '--collector.bcache.priorityStats', '--log.level=debug', '--collector.perf.tracepoint=sched:sched_switch'];
    expect(exporterArgs({ ...base, extraArgs: extra }).slice(-extra.length)).toEqual(extra);
  });

  test('an image newer than 1.12.1 may have flags the list lacks: they pass; an older one is checked against it', () => {
    expect(() => exporterArgs({ ...base, imageVersion: '1.13.0', extraArgs: ['--collector.future.flag=1'] })).not.toThrow();
    expect(() => exporterArgs({ ...base, imageVersion: '1.8.2', extraArgs: ['--collector.future.flag=1'] })).toThrow(/unknown long flag/);
    // The bool/value rules hold for every version.
    expect(() => exporterArgs({ ...base, imageVersion: '1.13.0', extraArgs: ['--collector.systemd=true'] })).toThrow(/unexpected true/);
  });

  test('the construct refuses it at synth, naming the construct and the prop', () => {
    const chart = new Chart(Testing.app(), 'chart');
    expect(() => new NodeExporterDaemonSet(chart, 'metrics', { extraArgs: ['--collector.bogus.flag=1'] }))
      .toThrow(/NodeExporterDaemonSet chart\/metrics: .*extraArgs\[0\] "--collector.bogus.flag=1": --collector.bogus.flag is not a flag of node_exporter 1.12.1/);
  });
});

(present ? describe : describe.skip)(`the real node_exporter (${BINARY})`, () => {
  const run = (arg: string) => spawnSync(BINARY, ['--web.listen-address=127.0.0.1:0', arg], { encoding: 'utf8', timeout: 10_000 });

  test.each(REFUSED)('%s: the binary exits with the message the construct quotes', (arg, _message, kingpin) => {
    const result = run(arg);
    expect(result.status).not.toBe(0);
    expect(`${result.stdout}${result.stderr}`).toContain(kingpin);
  });

  test('--version prints and exits at once', () => {
    const result = run('--version');
    expect(result.status).toBe(0);
    expect(`${result.stdout}${result.stderr}`).toMatch(/node_exporter, version/);
  });

  test('every flag the installed exporter lists in --help is in the 1.12.1 list (none was lost reading the sources)', () => {
    const help = execFileSync(BINARY, ['--help'], { encoding: 'utf8' });
    const listed = [...help.matchAll(/^\s+--(?:\[no-\])?([a-zA-Z0-9][a-zA-Z0-9._-]*)/gm)].map((m) => m[1]);
    const known = new Set([...BOOL_FLAGS, ...VALUE_FLAGS, ...EXITING_FLAGS]);
    const collectorFlags = listed.filter((f) => /^collector\.[a-z0-9_]+$/.test(f) && !known.has(f));
    // Collector switches (--collector.<name>) are checked against the collector list, which differs between versions.
    expect(listed.filter((f) => !known.has(f) && !collectorFlags.includes(f))).toEqual([]);
  });
});

if (!present && process.env.CI === 'true') {
  test('the real node_exporter binary is installed under CI', () => {
    throw new Error(`${BINARY} is missing: apt-get update && apt-get install -y --no-install-recommends prometheus-node-exporter`);
  });
}
