import {
  exporterArgs,
  flagName,
  FS_TYPES_EXCLUDE,
  listenAddress,
  MOUNT_POINTS_EXCLUDE,
  NET_DEVICES_EXCLUDE,
  resolveCollectors,
  validatePort,
} from '../../src/node-exporter/args';
import {
  closestCollector,
  DEFAULT_DISABLED_COLLECTORS,
  DEFAULT_ENABLED_COLLECTORS,
  isEnabledByDefault,
  isKnownCollector,
  KNOWN_COLLECTORS,
  NODE_EXPORTER_IMAGE,
} from '../../src/node-exporter/collectors';

describe('collectors', () => {
  test('the known list is sorted, unique, and the union of the default-on and default-off lists', () => {
    expect([...KNOWN_COLLECTORS]).toEqual([...KNOWN_COLLECTORS].sort());
    expect(new Set(KNOWN_COLLECTORS).size).toBe(KNOWN_COLLECTORS.length);
    expect(KNOWN_COLLECTORS.length).toBe(DEFAULT_ENABLED_COLLECTORS.length + DEFAULT_DISABLED_COLLECTORS.length);
    const overlap = DEFAULT_ENABLED_COLLECTORS.filter((c) => (DEFAULT_DISABLED_COLLECTORS as readonly string[]).includes(c));
    expect(overlap).toEqual([]);
  });

  test('collectors added after Debian 1.5.0 are known; upstream keeps systemd off', () => {
    for (const name of ['softirqs', 'cpu_vulnerabilities', 'xfrm', 'watchdog']) expect(isKnownCollector(name)).toBe(true);
    expect(isEnabledByDefault('watchdog')).toBe(true);
    expect(isEnabledByDefault('systemd')).toBe(false);
    expect(isEnabledByDefault('cpu')).toBe(true);
    expect(isKnownCollector('gpu')).toBe(false);
  });

  test('closestCollector suggests near misses only', () => {
    expect(closestCollector('filesytem')).toBe('filesystem');
    expect(closestCollector('Systemd')).toBe('systemd');
    expect(closestCollector('completely-unrelated')).toBeUndefined();
  });

  test('the image is pinned to a version tag', () => {
    expect(NODE_EXPORTER_IMAGE).toMatch(/^quay\.io\/prometheus\/node-exporter:v\d+\.\d+\.\d+$/);
  });
});

describe('exporterArgs', () => {
  test('defaults: host paths, node-IP listen address, kube-prometheus excludes and disabled collectors', () => {
    expect(exporterArgs({ port: 9100, listen: 'node-ip' })).toEqual([
      '--path.procfs=/host/proc',
      '--path.sysfs=/host/sys',
      '--path.rootfs=/host/root',
      '--path.udev.data=/host/root/run/udev/data',
      '--web.listen-address=[$(HOST_IP)]:9100',
      `--collector.filesystem.mount-points-exclude=${MOUNT_POINTS_EXCLUDE}`,
      `--collector.filesystem.fs-types-exclude=${FS_TYPES_EXCLUDE}`,
      `--collector.netclass.ignored-devices=${NET_DEVICES_EXCLUDE}`,
      `--collector.netdev.device-exclude=${NET_DEVICES_EXCLUDE}`,
      '--no-collector.btrfs',
      '--no-collector.hwmon',
      '--no-collector.wifi',
    ]);
  });

  test('the mount-point exclude keeps every kube-prometheus and upstream-default alternative', () => {
    const kubePrometheus = ['dev', 'proc', 'sys', 'run/k3s/containerd/.+', 'var/lib/docker/.+', 'var/lib/kubelet/pods/.+'];
    const upstreamDefault = ['dev', 'proc', 'run/credentials/.+', 'sys', 'var/lib/docker/.+', 'var/lib/containers/storage/.+'];
    const alternatives = /^\^\/\((.*)\)\(\$\|\/\)$/.exec(MOUNT_POINTS_EXCLUDE)![1].split('|');
    for (const a of [...kubePrometheus, ...upstreamDefault]) expect(alternatives).toContain(a);
    const re = new RegExp(MOUNT_POINTS_EXCLUDE);
    expect(re.test('/var/lib/kubelet/pods/uid/volumes/x')).toBe(true);
    expect(re.test('/proc')).toBe(true);
    expect(re.test('/')).toBe(false);
    expect(re.test('/var/lib/kubelet')).toBe(false);
    expect(re.test('/data')).toBe(false);
  });

  test('fs-types and device excludes drop overlay and veth but keep real filesystems and NICs', () => {
    const fs = new RegExp(FS_TYPES_EXCLUDE);
    expect(fs.test('overlay')).toBe(true);
    expect(fs.test('cgroup2')).toBe(true);
    expect(fs.test('ext4')).toBe(false);
    expect(fs.test('xfs')).toBe(false);
    const dev = new RegExp(NET_DEVICES_EXCLUDE);
    expect(dev.test('veth1a2b3c')).toBe(true);
    expect(dev.test('0123456789abcde')).toBe(true);
    expect(dev.test('eth0')).toBe(false);
    expect(dev.test('ens5')).toBe(false);
  });

  test('listen modes', () => {
    expect(listenAddress('node-ip', 9100)).toBe('[$(HOST_IP)]:9100');
    expect(listenAddress('all-interfaces', 9101)).toBe(':9101');
    expect(listenAddress('localhost', 9102)).toBe('127.0.0.1:9102');
    expect(exporterArgs({ port: 9102, listen: 'localhost' })).toContain('--web.listen-address=127.0.0.1:9102');
  });

  test('enabled collectors come sorted before disabled ones; enabling one removes it from the default off list', () => {
    const args = exporterArgs({ port: 9100, listen: 'node-ip', enableCollectors: ['systemd', 'hwmon', 'processes'] });
    expect(args.filter((a) => a.includes('collector.') && !a.includes('='))).toEqual([
      '--collector.hwmon',
      '--collector.processes',
      '--collector.systemd',
      '--no-collector.btrfs',
      '--no-collector.wifi',
    ]);
  });

  test('an explicit disable list replaces the default one; duplicates collapse', () => {
    const r = resolveCollectors([], ['zfs', 'zfs', 'arp']);
    expect(r).toEqual({ enable: [], disable: ['arp', 'zfs'] });
    expect(resolveCollectors([], [])).toEqual({ enable: [], disable: [] });
  });

  test('extraArgs setting a flag the args already write is refused, naming the prop (kingpin: "flag \'x\' cannot be repeated")', () => {
    const base = { port: 9100, listen: 'node-ip' as const, textfileDirectory: '/host/textfile', enableCollectors: ['processes'], by: 'chart/metrics' };
    expect(() => exporterArgs({ ...base, extraArgs: ['--path.procfs=/proc'] }))
      .toThrow(/^chart\/metrics: extraArgs\[0\] "--path.procfs=\/proc" sets --path.procfs, which the construct already writes \("--path.procfs=\/host\/proc"\); node_exporter would exit with "flag 'path.procfs' cannot be repeated"/);
    expect(() => exporterArgs({ ...base, extraArgs: ['--no-collector.processes'] })).toThrow(/sets --collector.processes.*through enableCollectors and disableCollectors/);
    expect(() => exporterArgs({ ...base, extraArgs: ['--collector.btrfs'] })).toThrow(/sets --collector.btrfs, which the construct already writes \("--no-collector.btrfs"\)/);
    expect(() => exporterArgs({ ...base, extraArgs: ['--collector.textfile.directory=/x'] })).toThrow(/a second one would escape the props. Set it through textfileCollector/);
    expect(() => exporterArgs({ ...base, extraArgs: ['--web.listen-address=:9200'] })).toThrow(/through port and listenAddress/);
    expect(() => exporterArgs({ ...base, extraArgs: ['--collector.filesystem.mount-points-exclude=^/x$'] })).toThrow(/through mountPointsExclude/);
    // Twice within extraArgs: refused unless repeatable.
    expect(() => exporterArgs({ ...base, extraArgs: ['--collector.systemd.unit-include=a', '--collector.systemd.unit-include=b'] }))
      .toThrow(/extraArgs\[1\] "--collector.systemd.unit-include=b" repeats --collector.systemd.unit-include of extraArgs\[0\]/);
    expect(exporterArgs({ ...base, extraArgs: ['--collector.sysctl.include=a', '--collector.sysctl.include=b'] }).slice(-2))
      .toEqual(['--collector.sysctl.include=a', '--collector.sysctl.include=b']);
    // The textfile directory repeats since 1.9.0 (collector/textfile.go: .Strings()); an older image exits.
    const noTextfile = { port: 9100, listen: 'node-ip' as const };
    const twoDirs = ['--collector.textfile.directory=/a', '--collector.textfile.directory=/b'];
    expect(() => exporterArgs({ ...noTextfile, extraArgs: twoDirs })).not.toThrow();
    expect(() => exporterArgs({ ...noTextfile, extraArgs: twoDirs, imageVersion: '1.8.2' })).toThrow(/node_exporter 1.8.2 would exit with "flag 'collector.textfile.directory' cannot be repeated"/);
  });

  test('extraArgs are appended verbatim and last', () => {
    const args = exporterArgs({ port: 9100, listen: 'node-ip', extraArgs: ['--collector.textfile.directory=/x'] });
    expect(args[args.length - 1]).toBe('--collector.textfile.directory=/x');
  });

  test('custom excludes replace the defaults in both netclass and netdev', () => {
    const args = exporterArgs({ port: 9100, listen: 'node-ip', netDevicesExclude: '^cali.*$', mountPointsExclude: '^/x$', fsTypesExclude: '^tmpfs$' });
    expect(args).toContain('--collector.netclass.ignored-devices=^cali.*$');
    expect(args).toContain('--collector.netdev.device-exclude=^cali.*$');
    expect(args).toContain('--collector.filesystem.mount-points-exclude=^/x$');
    expect(args).toContain('--collector.filesystem.fs-types-exclude=^tmpfs$');
  });
});

describe('bad input', () => {
  test('unknown collector names the prop, the value, a suggestion and the fix', () => {
    expect(() => exporterArgs({ port: 9100, listen: 'node-ip', enableCollectors: ['filesytem'], by: 'chart/metrics' }))
      .toThrow(/^chart\/metrics: enableCollectors: 'filesytem' is not a node_exporter 1\.12\.1 Linux collector\. Did you mean 'filesystem'\?.*extraArgs/);
    expect(() => resolveCollectors([], ['gpu'])).toThrow(/disableCollectors: 'gpu' is not/);
  });

  test('a collector both enabled and disabled', () => {
    expect(() => resolveCollectors(['arp'], ['arp'])).toThrow(/'arp' are in both enableCollectors and disableCollectors/);
  });

  test.each([0, -1, 65536, 1.5, NaN])('port %p is rejected', (port) => {
    expect(() => validatePort(port, 'port', 'c/p')).toThrow(/^c\/p: port must be an integer between 1 and 65535/);
  });

  test.each([1, 9100, 65535])('port %p is accepted', (port) => {
    expect(() => validatePort(port, 'port')).not.toThrow();
  });
});

test('flagName maps arguments to the flag --help lists', () => {
  expect(flagName('--path.procfs=/host/proc')).toBe('--path.procfs');
  expect(flagName('--no-collector.wifi')).toBe('--collector.wifi');
  expect(flagName('--collector.systemd')).toBe('--collector.systemd');
  expect(flagName('--collector.netdev.device-exclude=^(a=b)$')).toBe('--collector.netdev.device-exclude');
});
