/**
 * node_exporter collectors on Linux, for the version this library pins.
 *
 * Source: the v1.12.1 tree, every `registerCollector(name, defaultEnabled|defaultDisabled, ...)` in
 * collector/*.go whose file builds on linux (file suffix and `//go:build` line); the same extraction
 * from v1.9.1 gives exactly the 1.9.1 lists this file had. ntp, runit and supervisord are
 * deprecated but still registered. Debian patches the systemd collector to enabled-by-default;
 * upstream (and so the image) keeps it disabled, as listed here.
 *
 * Pure data: no cdk8s import.
 */

/** The image tag these collector names and defaults belong to. */
export const NODE_EXPORTER_VERSION = '1.12.1';

/** Default image: upstream's quay.io build, pinned. */
export const NODE_EXPORTER_IMAGE = `quay.io/prometheus/node-exporter:v${NODE_EXPORTER_VERSION}`;

/** Collectors that run unless `--no-collector.<name>` is given. */
export const DEFAULT_ENABLED_COLLECTORS = [
  'arp', 'bcache', 'bcachefs', 'bonding', 'btrfs', 'conntrack', 'cpu', 'cpufreq', 'diskstats', 'dmi',
  'dmmultipath', 'edac', 'entropy', 'fibrechannel', 'filefd', 'filesystem', 'hwmon', 'infiniband',
  'ipvs', 'kernel_hung', 'loadavg', 'mdadm', 'meminfo', 'netclass', 'netdev', 'netstat', 'nfs',
  'nfsd', 'nvme', 'os', 'powersupplyclass', 'pressure', 'rapl', 'schedstat', 'selinux', 'sockstat',
  'softnet', 'stat', 'tapestats', 'textfile', 'thermal_zone', 'time', 'timex', 'udp_queues', 'uname',
  'vmstat', 'watchdog', 'xfs', 'zfs',
] as const;

/** Collectors that run only with `--collector.<name>`. */
export const DEFAULT_DISABLED_COLLECTORS = [
  'buddyinfo', 'cgroups', 'cpu_vulnerabilities', 'drbd', 'drm', 'ethtool', 'interrupts', 'ksmd',
  'lnstat', 'logind', 'meminfo_numa', 'mountstats', 'network_route', 'ntp', 'nvmesubsystem',
  'pcidevice', 'perf', 'processes', 'qdisc', 'runit', 'slabinfo', 'softirqs', 'supervisord', 'swap',
  'sysctl', 'systemd', 'tcpstat', 'wifi', 'xfrm', 'zoneinfo',
] as const;

export type CollectorName =
  | typeof DEFAULT_ENABLED_COLLECTORS[number]
  | typeof DEFAULT_DISABLED_COLLECTORS[number];

/**
 * Collectors 1.9.1 does not have (added in 1.10–1.12): an image that old exits on their flags
 * ("unknown long flag"), so they are refused with such an image.
 */
export const COLLECTORS_ADDED_AFTER_1_9_1: readonly string[] = ['bcachefs', 'dmmultipath', 'kernel_hung', 'nvmesubsystem', 'pcidevice', 'swap'];

/** Every known collector name, sorted. */
export const KNOWN_COLLECTORS: readonly CollectorName[] = [
  ...DEFAULT_ENABLED_COLLECTORS,
  ...DEFAULT_DISABLED_COLLECTORS,
].sort();

/**
 * What kube-prometheus turns off: hwmon and btrfs are slow or noisy on some hardware, wifi is
 * meaningless on servers (already off by default; kept so the args match kube-prometheus).
 */
export const KUBE_PROMETHEUS_DISABLED_COLLECTORS: readonly CollectorName[] = ['btrfs', 'hwmon', 'wifi'];

export function isKnownCollector(name: string): name is CollectorName {
  return (KNOWN_COLLECTORS as readonly string[]).includes(name);
}

export function isEnabledByDefault(name: CollectorName): boolean {
  return (DEFAULT_ENABLED_COLLECTORS as readonly string[]).includes(name);
}

/** The known name closest to `name` (edit distance ≤ 3), for "did you mean" hints. */
export function closestCollector(name: string): CollectorName | undefined {
  let best: CollectorName | undefined;
  let bestDistance = 4;
  for (const known of KNOWN_COLLECTORS) {
    const d = editDistance(name.toLowerCase(), known);
    if (d < bestDistance) {
      best = known;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j] + 1,
        current[j - 1] + 1,
        previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length];
}
