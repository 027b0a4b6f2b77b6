/**
 * Host paths some node_exporter collectors need besides /proc, /sys and the host root, and the
 * checks on the textfile collector's directory.
 *
 * Pure module: no cdk8s imports.
 */
import { CollectorName } from './collectors';

/** Where the textfile collector reads `*.prom` files in the exporter container. */
export const TEXTFILE_DIR = '/host/textfile';

/**
 * The D-Bus system bus socket. node_exporter's systemd and logind collectors talk to systemd and
 * logind over the system bus; godbus connects to the default address
 * `unix:path=/var/run/dbus/system_bus_socket` (DBUS_SYSTEM_BUS_ADDRESS is not set). Mounted at
 * the same path, read-only: connecting to a Unix socket needs no write access to the mount.
 */
export const DBUS_SYSTEM_SOCKET = '/var/run/dbus/system_bus_socket';

/** A host path one or more enabled collectors need. */
export interface CollectorHostPath {
  readonly name: string;
  readonly hostPath: string;
  readonly mountPath: string;
  readonly socket: boolean;
  /** The collectors that need it. */
  readonly collectors: readonly CollectorName[];
}

const NEEDS_DBUS: readonly CollectorName[] = ['logind', 'systemd'];

/** The host paths the enabled collectors need (deduplicated, sorted by name). */
export function collectorHostPaths(enabled: readonly CollectorName[]): CollectorHostPath[] {
  const dbus = NEEDS_DBUS.filter((c) => enabled.includes(c));
  return dbus.length > 0
    ? [{ name: 'dbus', hostPath: DBUS_SYSTEM_SOCKET, mountPath: DBUS_SYSTEM_SOCKET, socket: true, collectors: dbus }]
    : [];
}

/** Host directories a writer may never get writable: the root and the system trees. */
const SYSTEM_DIRS = ['/', '/bin', '/boot', '/dev', '/etc', '/lib', '/lib64', '/opt', '/proc', '/root', '/run', '/sbin', '/sys', '/usr', '/var', '/var/lib', '/var/log', '/var/run', '/home', '/tmp'];
const NEVER_BELOW = ['/proc', '/sys', '/dev'];

/**
 * Problems with the textfile directory on the host: it must be absolute and normal; when a
 * writer sidecar gets it writable, it must be a dedicated directory, never the host root or a
 * system directory (the pod would be able to rewrite the node).
 */
export function textfileDirectoryProblems(dir: string, writable: boolean): string[] {
  if (!/^\/[^\s]*$/.test(dir) || /\/\.\.?(\/|$)/.test(dir) || /\/\/|.\/$/.test(dir)) {
    return [`hostDirectory ${JSON.stringify(dir)} must be an absolute path without spaces, '..', '//' or a trailing '/'`];
  }
  if (NEVER_BELOW.some((p) => dir === p || dir.startsWith(p + '/'))) {
    return [`hostDirectory ${dir} is in ${dir.split('/').slice(0, 2).join('/')}, a kernel filesystem; use a directory such as /var/lib/node-exporter/textfile`];
  }
  if (writable && SYSTEM_DIRS.includes(dir)) {
    return [`hostDirectory ${dir} would be writable by the writer sidecar: ${dir === '/' ? 'the host root' : `the system directory ${dir}`} is never mounted writable. `
      + 'Give a dedicated directory such as /var/lib/node-exporter/textfile'];
  }
  return [];
}
