/**
 * The node_exporter command line the DaemonSet runs. Pure: no cdk8s import, so it is unit-tested
 * and run against the real exporter binary without synthesis.
 */
import {
  closestCollector,
  CollectorName,
  isKnownCollector,
  COLLECTORS_ADDED_AFTER_1_9_1,
  KNOWN_COLLECTORS,
  KUBE_PROMETHEUS_DISABLED_COLLECTORS,
  NODE_EXPORTER_VERSION,
} from './collectors';
import { BOOL_FLAGS, EXCLUSIVE_WITH_WRITTEN, EXITING_FLAGS, VALUE_FLAGS } from './flags';
import { nearestName } from '../util/nearest';
import { RefusedBy, ValidationError } from '../validation/errors';
import { checkPort, describeValue } from '../validation/values';

/** Where the host's filesystems are mounted inside the container (as in kube-prometheus). */
export const HOST_PROC = '/host/proc';
export const HOST_SYS = '/host/sys';
export const HOST_ROOT = '/host/root';
/** udev's database lives under the host root; diskstats reads device properties from it. */
export const HOST_UDEV_DATA = `${HOST_ROOT}/run/udev/data`;

/** The env var the downward API fills with `status.hostIP`. */
export const HOST_IP_ENV = 'HOST_IP';

/**
 * Mount points to skip, matched against paths relative to --path.rootfs. kube-prometheus's list
 * (dev, proc, sys, k3s' containerd, docker, kubelet pod volumes) joined with the two entries of
 * upstream's own default that kube-prometheus drops: giving the flag REPLACES upstream's default,
 * so without them systemd credential mounts and podman/CRI-O storage would come back.
 */
export const MOUNT_POINTS_EXCLUDE =
  '^/(dev|proc|sys|run/credentials/.+|run/k3s/containerd/.+|var/lib/containers/storage/.+|var/lib/docker/.+|var/lib/kubelet/pods/.+)($|/)';

/**
 * Filesystem types to skip: upstream node_exporter 1.9's default, written out so the behaviour
 * does not change with the image and so the real-binary test checks it. overlay is what floods
 * series with one filesystem per container.
 */
export const FS_TYPES_EXCLUDE =
  '^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|erofs|sysfs|tracefs)$';

/**
 * Network devices to skip in netclass and netdev (kube-prometheus): the host end of every pod's
 * veth pair, and the 15-hex-digit names OVN gives them.
 */
export const NET_DEVICES_EXCLUDE = '^(veth.*|[a-f0-9]{15})$';

/**
 * - `node-ip`: the node's IP from the downward API (`[$(HOST_IP)]:port`; brackets make it valid
 *   for IPv6 and IPv4 alike). With hostNetwork, 0.0.0.0 would also expose the exporter on every
 *   other interface of the node.
 * - `all-interfaces`: `:port`, every address (IPv4 and IPv6).
 * - `localhost`: `127.0.0.1:port`, only reachable through a proxy in the same pod (kube-rbac-proxy).
 */
export type ListenMode = 'node-ip' | 'all-interfaces' | 'localhost';

export interface ExporterArgsOptions {
  readonly port: number;
  readonly listen: ListenMode;
  /** Collectors to turn on (besides those on by default). */
  readonly enableCollectors?: readonly string[];
  /** Collectors to turn off. Default: kube-prometheus's (btrfs, hwmon, wifi), minus any enabled. */
  readonly disableCollectors?: readonly string[];
  readonly mountPointsExclude?: string;
  readonly fsTypesExclude?: string;
  readonly netDevicesExclude?: string;
  /** Directory of the textfile collector's `*.prom` files (in the container). */
  readonly textfileDirectory?: string;
  /** Appended verbatim; flags the args above already set, and repeats, are refused. */
  readonly extraArgs?: readonly string[];
  /** The image's node_exporter version (x.y.z), for what it accepts twice. Default: the pinned one. */
  readonly imageVersion?: string;
  /** Who refuses bad options (the exporter construct); without it a plain Error (tests of the arguments alone). */
  readonly by?: RefusedBy;
}

export function listenAddress(listen: ListenMode, port: number): string {
  switch (listen) {
    case 'node-ip': return `[$(${HOST_IP_ENV})]:${port}`;
    case 'all-interfaces': return `:${port}`;
    case 'localhost': return `127.0.0.1:${port}`;
  }
}

export function validatePort(port: number, prop: string, by?: RefusedBy): void {
  if (typeof port !== 'number') throw refusal(by, `${checkPort(prop, port)[0]}`);
  if (checkPort(prop, port).length > 0) {
    throw refusal(by, `${prop} must be an integer between 1 and 65535, got ${port}. ` +
      'Pick a free host port (node-exporter uses 9100).');
  }
}

/** Checks the names and returns the collectors to turn on and off, each sorted. */
export function resolveCollectors(
  enable: readonly string[] = [],
  disable: readonly string[] | undefined,
  by?: RefusedBy,
): { enable: CollectorName[]; disable: CollectorName[] } {
  const on = checkNames(enable, 'enableCollectors', by);
  const off = disable === undefined
    ? KUBE_PROMETHEUS_DISABLED_COLLECTORS.filter((name) => !on.includes(name))
    : checkNames(disable, 'disableCollectors', by);
  const both = on.filter((name) => off.includes(name));
  if (both.length > 0) {
    throw refusal(by, `collector(s) ${both.map((n) => `'${n}'`).join(', ')} are in both ` +
      'enableCollectors and disableCollectors. Keep each name in one list.');
  }
  return { enable: [...on].sort(), disable: [...off].sort() };
}

function checkNames(names: readonly string[], prop: string, by?: RefusedBy): CollectorName[] {
  const result: CollectorName[] = [];
  if (!Array.isArray(names)) throw refusal(by, `${prop} must be an array of collector names, got ${describeValue(names)}`);
  for (const name of names) {
    if (typeof name !== 'string') {
      throw refusal(by, `${prop} must list collector names such as "systemd", got ${describeValue(name)}`);
    }
    if (!isKnownCollector(name)) {
      const guess = closestCollector(name);
      throw refusal(by, `${prop}: '${name}' is not a node_exporter ${NODE_EXPORTER_VERSION} ` +
        `Linux collector.${guess ? ` Did you mean '${guess}'?` : ''} Known collectors: ${KNOWN_COLLECTORS.join(', ')}. ` +
        'For a newer image, pass the flag through extraArgs instead.');
    }
    if (!result.includes(name)) result.push(name);
  }
  return result;
}

/** The full argument list, in a stable order. */
export function exporterArgs(options: ExporterArgsOptions): string[] {
  validatePort(options.port, 'port', options.by);
  checkFlagValues(options);
  checkKnownFlags(options);
  const collectors = resolveCollectors(options.enableCollectors, options.disableCollectors, options.by);
  const version = options.imageVersion ?? NODE_EXPORTER_VERSION;
  const tooNew = [...collectors.enable, ...collectors.disable].filter((c) => COLLECTORS_ADDED_AFTER_1_9_1.includes(c));
  if (tooNew.length > 0 && !atLeast(version, '1.10.0')) {
    throw refusal(options.by, `collector(s) ${tooNew.join(', ')} came with node_exporter 1.10+; the image's ${version} `
      + 'would exit on their flags ("unknown long flag"). Use a newer image or leave them out.');
  }
  if (options.textfileDirectory !== undefined && collectors.disable.includes('textfile')) {
    throw refusal(options.by, 'textfileCollector is set but disableCollectors turns the textfile collector off; '
      + 'remove textfile from disableCollectors or drop textfileCollector.');
  }
  const own = [
    `--path.procfs=${HOST_PROC}`,
    `--path.sysfs=${HOST_SYS}`,
    `--path.rootfs=${HOST_ROOT}`,
    `--path.udev.data=${HOST_UDEV_DATA}`,
    `--web.listen-address=${listenAddress(options.listen, options.port)}`,
    `--collector.filesystem.mount-points-exclude=${options.mountPointsExclude ?? MOUNT_POINTS_EXCLUDE}`,
    `--collector.filesystem.fs-types-exclude=${options.fsTypesExclude ?? FS_TYPES_EXCLUDE}`,
    `--collector.netclass.ignored-devices=${options.netDevicesExclude ?? NET_DEVICES_EXCLUDE}`,
    `--collector.netdev.device-exclude=${options.netDevicesExclude ?? NET_DEVICES_EXCLUDE}`,
    ...(options.textfileDirectory !== undefined ? [`--collector.textfile.directory=${options.textfileDirectory}`] : []),
    ...collectors.enable.map((name) => `--collector.${name}`),
    ...collectors.disable.map((name) => `--no-collector.${name}`),
  ];
  checkRepeatedFlags(own, options);
  return [...own, ...(options.extraArgs ?? [])];
}

/**
 * Flags node_exporter accepts more than once (kingpin `.Strings()`), with the release that made
 * each repeatable: collector/perf_linux.go (profilers 1.6.0), collector/sysctl_linux.go,
 * collector/textfile.go (1.9.0; a String before) and exporter-toolkit's web/kingpinflag
 * (`--web.listen-address`). Any other flag given twice makes kingpin's parser exit with
 * "flag '<name>' cannot be repeated" (a `--no-` form counts as its flag).
 */
export const REPEATABLE_FLAGS: { readonly [flag: string]: string } = {
  '--collector.perf.cache-profilers': '1.6.0',
  '--collector.perf.hardware-profilers': '1.6.0',
  '--collector.perf.software-profilers': '1.6.0',
  '--collector.perf.tracepoint': '1.0.0',
  '--collector.sysctl.include': '1.5.0',
  '--collector.sysctl.include-info': '1.5.0',
  '--collector.textfile.directory': '1.9.0',
  '--web.listen-address': '1.5.0',
};

/** Whether node_exporter `version` (x.y.z) accepts `flag` more than once. */
export function isRepeatable(flag: string, version: string): boolean {
  const since = REPEATABLE_FLAGS[flag];
  return since !== undefined && atLeast(version, since);
}

/** Whether version x.y.z is `min` or later. */
function atLeast(version: string, min: string): boolean {
  const [a, b] = [version, min].map((v) => v.split('.').map((n) => parseInt(n, 10) || 0));
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** The prop that sets a flag the construct writes. */
function propOf(flag: string): string {
  if (flag === '--web.listen-address') return 'port and listenAddress';
  if (flag.startsWith('--path.')) return 'nothing: the host paths are fixed';
  if (flag === '--collector.filesystem.mount-points-exclude') return 'mountPointsExclude';
  if (flag === '--collector.filesystem.fs-types-exclude') return 'fsTypesExclude';
  if (flag === '--collector.netclass.ignored-devices' || flag === '--collector.netdev.device-exclude') return 'netDevicesExclude';
  if (flag === '--collector.textfile.directory') return 'textfileCollector';
  return 'enableCollectors and disableCollectors';
}

/**
 * extraArgs must not set a flag the construct writes: node_exporter exits at start for a repeated
 * flag ("cannot be repeated"), and a repeatable one (a second listen address, a textfile
 * directory nothing mounts) would escape what the props decide. Nor may extraArgs repeat a flag.
 */
function checkRepeatedFlags(own: readonly string[], options: ExporterArgsOptions): void {
  const written = new Map(own.map((arg) => [flagName(arg), arg]));
  const version = options.imageVersion ?? NODE_EXPORTER_VERSION;
  const seen = new Map<string, number>();
  (options.extraArgs ?? []).forEach((arg, i) => {
    const flag = flagName(arg);
    const ours = written.get(flag);
    if (ours !== undefined) {
      throw refusal(options.by, `extraArgs[${i}] "${arg}" sets ${flag}, which the construct already writes ("${ours}"); `
        + `${isRepeatable(flag, version) ? 'a second one would escape the props' : `node_exporter would exit with "flag '${flag.slice(2)}' cannot be repeated"`}. `
        + `Set it through ${propOf(flag)} instead.`);
    }
    const before = seen.get(flag);
    if (before !== undefined && !isRepeatable(flag, version)) {
      throw refusal(options.by, `extraArgs[${i}] "${arg}" repeats ${flag} of extraArgs[${before}]: node_exporter ${version} would exit with `
        + `"flag '${flag.slice(2)}' cannot be repeated". Keep one.`);
    }
    seen.set(flag, i);
  });
}

/**
 * The exclude regexes and extra arguments become single container arguments: node_exporter
 * (kingpin) reads a flag as "--name" or "--name=value", and a line break or an empty value is
 * never what was meant.
 */
function checkFlagValues(options: ExporterArgsOptions): void {
  for (const prop of ['mountPointsExclude', 'fsTypesExclude', 'netDevicesExclude'] as const) {
    const value: unknown = options[prop];
    if (value === undefined) continue;
    if (typeof value !== 'string' || value === '' || /[\r\n]/.test(value)) {
      throw refusal(options.by, `${prop} must be a non-empty one-line regular expression such as "^(veth.*)$", got ${describeValue(value)}`);
    }
  }
  const extra: unknown = options.extraArgs;
  if (extra === undefined) return;
  if (!Array.isArray(extra)) throw refusal(options.by, `extraArgs must be an array of flags, got ${describeValue(extra)}`);
  extra.forEach((arg: unknown, i) => {
    if (typeof arg !== 'string' || !/^--[a-z][-a-zA-Z0-9._]*(=.*)?$/.test(arg) || /[\r\n]/.test(arg)) {
      throw refusal(options.by, `extraArgs[${i}] must be one node_exporter flag such as "--collector.textfile.directory=/x", `
        + `got ${describeValue(arg)}`);
    }
  });
}

/** What node_exporter 1.12.1 does with a flag name (without `--`): a bool, a value, print and exit, or unknown. */
function flagKind(name: string): 'bool' | 'value' | 'exits' | undefined {
  if (BOOL_FLAGS.includes(name) || (name.startsWith('collector.') && isKnownCollector(name.slice('collector.'.length)))) return 'bool';
  if (VALUE_FLAGS.includes(name)) return 'value';
  return EXITING_FLAGS.includes(name) ? 'exits' : undefined;
}

/**
 * Each extraArgs flag as kingpin parses it (see ./flags.ts): known to node_exporter 1.12.1, `--no-`
 * only before a bool, a value exactly for a value flag, and none that exits at once or that
 * node_exporter refuses beside a flag the construct writes. An image newer than 1.12.1 may have
 * flags the list lacks: for one, flags it does not know are let through.
 */
function checkKnownFlags(options: ExporterArgsOptions): void {
  const version = options.imageVersion ?? NODE_EXPORTER_VERSION;
  const newerImage = !atLeast(NODE_EXPORTER_VERSION, version);
  (options.extraArgs ?? []).forEach((arg, i) => {
    const [written, ...rest] = arg.slice(2).split('=');
    const value = rest.length > 0 ? rest.join('=') : undefined;
    const negated = written.startsWith('no-') && flagKind(written) === undefined;
    const name = negated ? written.slice('no-'.length) : written;
    const kind = flagKind(name);
    const at = `extraArgs[${i}] "${arg}"`;
    if (kind === 'exits') {
      throw refusal(options.by, `${at}: --${name} makes node_exporter print and exit at once, so the pod would restart for ever; remove it`);
    }
    if (kind === undefined) {
      if (newerImage) return;
      const guess = nearestName(name, [...BOOL_FLAGS, ...VALUE_FLAGS, ...KNOWN_COLLECTORS.map((c) => `collector.${c}`)]);
      throw refusal(options.by, `${at}: --${written} is not a flag of node_exporter ${NODE_EXPORTER_VERSION}, which would exit at start with "unknown long flag '--${written}'".`
        + `${guess ? ` Did you mean --${negated ? 'no-' : ''}${guess}?` : ''} For a newer image, give it as image (its tag's version lifts this check).`);
    }
    if (negated && kind !== 'bool') {
      throw refusal(options.by, `${at}: "--no-" negates only a bool flag and --${name} takes a value: node_exporter would exit with "unknown long flag '--${written}'"; `
        + `give --${name}=<value>`);
    }
    if (kind === 'bool' && value !== undefined) {
      throw refusal(options.by, `${at}: --${name} is a bool flag, which takes no "=${value}": node_exporter would exit with "unexpected ${value}"; `
        + `write --${name} to turn it on or --no-${name} to turn it off`);
    }
    if (kind === 'value' && value === undefined) {
      throw refusal(options.by, `${at}: --${name} takes a value: node_exporter would exit with "expected argument for flag '--${name}'"; write --${name}=<value>`);
    }
    const exclusive = EXCLUSIVE_WITH_WRITTEN[name];
    if (exclusive !== undefined) {
      throw refusal(options.by, `${at}: --${name} and --${exclusive}, which the construct writes, are mutually exclusive: node_exporter would exit at start; `
        + `set it through ${propOf(`--${exclusive}`)} instead`);
    }
  });
}

/**
 * The flag an argument sets, as `--help` lists it: `--no-collector.x` is the negation of
 * `--collector.x`; `--flag=value` is `--flag`.
 */
export function flagName(arg: string): string {
  const name = arg.split('=')[0];
  return name.startsWith('--no-') ? `--${name.slice('--no-'.length)}` : name;
}

/** A refusal: a ValidationError prefixed by the construct when the caller names it. */
function refusal(by: RefusedBy | undefined, message: string): Error {
  return by !== undefined ? new ValidationError(by, message) : new Error(message);
}
