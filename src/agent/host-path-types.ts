/**
 * What kind of file well-known host paths are on every Linux node, for the hostPath `type` check.
 * The kubelet checks the type before the container starts (pkg/volume/hostpath/host_path.go
 * `checkType`: `File` and `FileOrCreate` need a regular file, `Directory` and `DirectoryOrCreate` a
 * directory, `Socket` a socket, `CharDevice` and `BlockDevice` devices); a path of another kind
 * fails the pod's start ("hostPath type check failed: /dev/kmsg is not a file") on every node.
 * Only paths whose kind does not vary between distributions are listed. Pure: no constructs.
 */
import { HostPathType } from './options';

type Kind = 'character device' | 'block device' | 'socket';

/** Device nodes the kernel (devtmpfs) creates with a fixed kind, and the sockets of well-known daemons. */
const KNOWN_KINDS: ReadonlyArray<[RegExp, Kind]> = [
  // drivers/char/mem.c devlist, the tty core, misc devices, NVIDIA's driver nodes
  [/^\/dev\/(kmsg|null|zero|full|random|urandom|mem|port|tty|console|ptmx|fuse|kvm|hwrng|vhost-net|vhost-vsock|mcelog|nvidiactl|nvidia-uvm|nvidia-uvm-tools|nvidia-modeset|nvidia[0-9]+|tty[0-9]+|ttyS[0-9]+|watchdog[0-9]*|rtc[0-9]*|ipmi[0-9]+|net\/tun|vfio\/vfio|infiniband\/uverbs[0-9]+|cpu\/[0-9]+\/(msr|cpuid))$/, 'character device'],
  // sd (SCSI/SATA), NVMe namespaces, virtio, Xen, loop and device-mapper devices
  [/^\/dev\/(sd[a-z]+[0-9]*|nvme[0-9]+n[0-9]+(p[0-9]+)?|vd[a-z]+[0-9]*|xvd[a-z]+[0-9]*|loop[0-9]+|dm-[0-9]+)$/, 'block device'],
  // journald's syslog socket, and the container runtimes' API sockets
  [/^\/dev\/log$|^\/(var\/)?run\/(containerd\/containerd|docker|crio\/crio|dockershim)\.sock$/, 'socket'],
];

/** The hostPath type each kind needs. */
const TYPE_OF: { readonly [kind in Kind]: HostPathType } = {
  'character device': HostPathType.CHAR_DEVICE,
  'block device': HostPathType.BLOCK_DEVICE,
  'socket': HostPathType.SOCKET,
};

/**
 * The problem of a hostPath `type` the kubelet's check would refuse for `hostPath` on every node, or
 * undefined. An unset type skips the kubelet's check and is left alone.
 */
export function hostPathTypeProblem(prop: string, hostPath: string, type: HostPathType | undefined): string | undefined {
  if (type === undefined) return undefined;
  const kind = KNOWN_KINDS.find(([pattern]) => pattern.test(hostPath))?.[1];
  if (kind === undefined || TYPE_OF[kind] === type) return undefined;
  return `${prop} "${type}" does not match ${hostPath}, which is a ${kind} on every node: the kubelet checks the type before the container starts `
    + `("hostPath type check failed") and the pod never runs; use HostPathType.${constName(TYPE_OF[kind])}`;
}

function constName(type: HostPathType): string {
  return type.replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}
