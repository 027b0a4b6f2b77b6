import { ApiObject, Duration } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct, IConstruct } from 'constructs';
import { AgentAlerts } from './agent-alerts';
import { finishAgentConstruct, startAgentConstruct } from './agent-construct';
import { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { agentRollout, constructRelease } from './previous-release';
import { AgentAdoption } from '../adoption/adoption';
import { resolveIdentity } from '../agent/agent-spec';
import { AgentEnvFieldPath, AgentEnvValue, AgentProbe, AgentProtocol } from '../agent/container-inputs';
import { NodeRequirement } from '../agent/node-requirement';
import {
  AgentContainer, AgentContainerSettings, AgentPort, AgentResources, AgentToleration, AgentVolume, HostPathType, HostPathVolume,
  MountPropagation,
} from '../agent/options';
import { AgentPodOptions, podOptionsOf } from '../agent/pod-options';
import { AgentRelease } from '../agent/release';
import { AgentRollout } from '../agent/rollout';
import { RolloutBudget, UpdateStrategy } from '../agent/update-strategy';
import { nodeExporterGateChecks } from '../alerts/gate';
import { NodeExporterAlertsOptions } from '../alerts/options';
import { nodeExporterAlertGroups } from '../alerts/rules';
import {
  exporterArgs, HOST_IP_ENV, HOST_PROC, HOST_ROOT, HOST_SYS, ListenMode, listenAddress, validatePort,
} from '../node-exporter/args';
import { CollectorName, DEFAULT_ENABLED_COLLECTORS, isKnownCollector, NODE_EXPORTER_IMAGE } from '../node-exporter/collectors';
import { collectorHostPaths, TEXTFILE_DIR, textfileDirectoryProblems } from '../node-exporter/host-mounts';
import { addObjectSizeValidation } from '../render/late-checks';
import { brand } from '../validation/brand';
import { throwIfProblems, ValidationError } from '../validation/errors';
import {
  checkDnsLabel, checkDnsSubdomain, checkImage, checkLabels, checkPrometheusDuration, checkResources, checkServiceName, checkTolerations,
} from '../validation/values';

/** Default kube-rbac-proxy image (pinned). */
const KUBE_RBAC_PROXY_IMAGE = 'quay.io/brancz/kube-rbac-proxy:v0.21.0';
const PROXY_CONTAINER = 'kube-rbac-proxy';
const PROXY_TLS_DIR = '/etc/kube-rbac-proxy/tls';
const PROXY_TLS_VOLUME = 'proxy-tls';
/** nobody: node_exporter needs no privilege to read /proc and /sys. */
const NOBODY = 65534;
/** kube-rbac-proxy's distroless nonroot user. */
const NONROOT = 65532;

/**
 * node_exporter collectors on Linux, as of node_exporter 1.12.1 (the pinned image). Those on by
 * default can be disabled, the others enabled; a name the pinned version does not know is an error.
 */
export enum NodeExporterCollector {
  /** ARP table statistics from /proc/net/arp. On by default. */
  ARP = 'arp',
  /** bcache statistics from /sys/fs/bcache. On by default. */
  BCACHE = 'bcache',
  /** bcachefs statistics from /sys/fs/bcachefs (node_exporter 1.10+). On by default. */
  BCACHEFS = 'bcachefs',
  /** Configured and active members of bonding interfaces. On by default. */
  BONDING = 'bonding',
  /** btrfs statistics. On by default; in this library's default disable list (as kube-prometheus). */
  BTRFS = 'btrfs',
  /** Memory fragmentation from /proc/buddyinfo. Off by default. */
  BUDDYINFO = 'buddyinfo',
  /** Number of active and enabled cgroups. Off by default. */
  CGROUPS = 'cgroups',
  /** Connection-tracking table use. On by default. */
  CONNTRACK = 'conntrack',
  /** CPU time per mode. On by default. */
  CPU = 'cpu',
  /** CPU vulnerability status from sysfs (node_exporter 1.7+). Off by default. */
  CPU_VULNERABILITIES = 'cpu_vulnerabilities',
  /** CPU frequency and governor. On by default. */
  CPUFREQ = 'cpufreq',
  /** Disk I/O. On by default. */
  DISKSTATS = 'diskstats',
  /** DMI (hardware vendor, model) from /sys/class/dmi/id. On by default. */
  DMI = 'dmi',
  /** Device-mapper multipath devices from /sys/block (node_exporter 1.10+). On by default. */
  DMMULTIPATH = 'dmmultipath',
  /** DRBD statistics. Off by default. */
  DRBD = 'drbd',
  /** GPU metrics through DRM (amdgpu). Off by default. */
  DRM = 'drm',
  /** Memory error detection and correction. On by default. */
  EDAC = 'edac',
  /** Available entropy. On by default. */
  ENTROPY = 'entropy',
  /** NIC driver statistics, as `ethtool -S`. Off by default. */
  ETHTOOL = 'ethtool',
  /** Fibre Channel hosts from /sys/class/fc_host. On by default. */
  FIBRECHANNEL = 'fibrechannel',
  /** Open file descriptors from /proc/sys/fs/file-nr. On by default. */
  FILEFD = 'filefd',
  /** Filesystem space and inodes. On by default. */
  FILESYSTEM = 'filesystem',
  /** Hardware sensors from /sys/class/hwmon. On by default; in this library's default disable list (as kube-prometheus). */
  HWMON = 'hwmon',
  /** InfiniBand and Omni-Path counters. On by default. */
  INFINIBAND = 'infiniband',
  /** Interrupts per CPU and device. Off by default. */
  INTERRUPTS = 'interrupts',
  /** IPVS virtual servers and statistics. On by default. */
  IPVS = 'ipvs',
  /** Kernel samepage merging. Off by default. */
  KSMD = 'ksmd',
  /** Hung-task counts of the kernel from /proc/sys/kernel (node_exporter 1.10+). On by default. */
  KERNEL_HUNG = 'kernel_hung',
  /** /proc/net/stat counters. Off by default. */
  LNSTAT = 'lnstat',
  /** Load average. On by default. */
  LOADAVG = 'loadavg',
  /** Session counts from logind (needs the D-Bus socket). Off by default. */
  LOGIND = 'logind',
  /** Software RAID from /proc/mdstat. On by default. */
  MDADM = 'mdadm',
  /** Memory use. On by default. */
  MEMINFO = 'meminfo',
  /** Memory per NUMA node. Off by default. */
  MEMINFO_NUMA = 'meminfo_numa',
  /** /proc/self/mountstats: detailed NFS client statistics. Off by default. */
  MOUNTSTATS = 'mountstats',
  /** Network interface properties from /sys/class/net. On by default. */
  NETCLASS = 'netclass',
  /** Network interface traffic. On by default. */
  NETDEV = 'netdev',
  /** Network statistics from /proc/net/netstat. On by default. */
  NETSTAT = 'netstat',
  /** The routing table. Off by default. */
  NETWORK_ROUTE = 'network_route',
  /** NFS client statistics. On by default. */
  NFS = 'nfs',
  /** NFS server statistics. On by default. */
  NFSD = 'nfsd',
  /** Local NTP daemon health (deprecated upstream). Off by default. */
  NTP = 'ntp',
  /** NVMe device information. On by default. */
  NVME = 'nvme',
  /** NVMe subsystems and their paths from /sys/class/nvme-subsystem (node_exporter 1.10+). Off by default. */
  NVMESUBSYSTEM = 'nvmesubsystem',
  /** OS release from /etc/os-release. On by default. */
  OS = 'os',
  /** PCI devices from /sys/bus/pci (node_exporter 1.10+). Off by default. */
  PCIDEVICE = 'pcidevice',
  /** perf hardware and software counters. Off by default. */
  PERF = 'perf',
  /** Power supplies from /sys/class/power_supply. On by default. */
  POWERSUPPLYCLASS = 'powersupplyclass',
  /** Pressure stall information (CPU, memory, I/O). On by default. */
  PRESSURE = 'pressure',
  /** Process and thread counts by state. Off by default. */
  PROCESSES = 'processes',
  /** Queuing discipline statistics. Off by default. */
  QDISC = 'qdisc',
  /** RAPL energy counters. On by default. */
  RAPL = 'rapl',
  /** runit services (deprecated upstream). Off by default. */
  RUNIT = 'runit',
  /** Scheduler statistics from /proc/schedstat. On by default. */
  SCHEDSTAT = 'schedstat',
  /** SELinux status. On by default. */
  SELINUX = 'selinux',
  /** Kernel slab allocator from /proc/slabinfo (readable by root only). Off by default. */
  SLABINFO = 'slabinfo',
  /** Socket use from /proc/net/sockstat. On by default. */
  SOCKSTAT = 'sockstat',
  /** Soft interrupts per CPU from /proc/softirqs (node_exporter 1.6+). Off by default. */
  SOFTIRQS = 'softirqs',
  /** Per-CPU network backlog from /proc/net/softnet_stat. On by default. */
  SOFTNET = 'softnet',
  /** /proc/stat: boot time, forks, context switches, interrupts. On by default. */
  STAT = 'stat',
  /** supervisord processes (deprecated upstream). Off by default. */
  SUPERVISORD = 'supervisord',
  /** Swap devices from /proc/swaps (node_exporter 1.10+). Off by default. */
  SWAP = 'swap',
  /** Chosen sysctl values (with --collector.sysctl.include). Off by default. */
  SYSCTL = 'sysctl',
  /** systemd unit states (needs the D-Bus system socket mounted). Off by default. */
  SYSTEMD = 'systemd',
  /** SCSI tape drives. On by default. */
  TAPESTATS = 'tapestats',
  /** TCP connections by state. Off by default. */
  TCPSTAT = 'tcpstat',
  /** Metrics from *.prom files in --collector.textfile.directory. On by default. */
  TEXTFILE = 'textfile',
  /** Thermal zones and cooling devices. On by default. */
  THERMAL_ZONE = 'thermal_zone',
  /** System time and clock source. On by default. */
  TIME = 'time',
  /** Clock synchronisation state (adjtimex). On by default. */
  TIMEX = 'timex',
  /** UDP receive and send queue lengths. On by default. */
  UDP_QUEUES = 'udp_queues',
  /** Kernel and host name (uname). On by default. */
  UNAME = 'uname',
  /** Virtual memory statistics from /proc/vmstat. On by default. */
  VMSTAT = 'vmstat',
  /** Hardware watchdogs from /sys/class/watchdog (node_exporter 1.8+). On by default. */
  WATCHDOG = 'watchdog',
  /** WiFi devices and stations. Off by default; also in this library's default disable list. */
  WIFI = 'wifi',
  /** IPsec transformation statistics from /proc/net/xfrm_stat (node_exporter 1.8+). Off by default. */
  XFRM = 'xfrm',
  /** XFS statistics. On by default. */
  XFS = 'xfs',
  /** ZFS statistics. On by default. */
  ZFS = 'zfs',
  /** Memory zone statistics per NUMA node. Off by default. */
  ZONEINFO = 'zoneinfo',
}

/** Where the exporter (or, with kube-rbac-proxy, the proxy) listens on the node. */
export enum NodeExporterListenAddress {
  /**
   * The node's IP from the downward API (`[$(HOST_IP)]:port`). With hostNetwork, binding every
   * interface would also expose the metrics on interfaces that were never meant to serve them.
   */
  NODE_IP = 'node-ip',
  /** Every address of the node (`:port`, IPv4 and IPv6). */
  ALL_INTERFACES = 'all-interfaces',
}

/** kube-rbac-proxy in front of the exporter: only callers allowed by RBAC read the metrics, over TLS. */
export interface NodeExporterKubeRbacProxyOptions {
  /**
   * kube-rbac-proxy image, pinned.
   * @default "quay.io/brancz/kube-rbac-proxy:v0.21.0"
   */
  readonly image?: string;

  /**
   * Port the exporter listens on, on 127.0.0.1 only; it must differ from `port`, the proxy's. As
   * kube-prometheus does (exporter on 127.0.0.1:9101, proxy on 9100), which moved the exporter
   * off the proxy's port after the two raced for it on host-network pods.
   * @default - port + 1 (9101 with the default port)
   */
  readonly upstreamPort?: number;

  /**
   * Secret (type kubernetes.io/tls, in the agent's namespace) with `tls.crt` and `tls.key` for the
   * proxy, and `ca.crt` for the ServiceMonitor to verify it.
   * @default - the proxy generates a self-signed certificate at start (the ServiceMonitor then skips verification)
   */
  readonly tlsSecretName?: string;

  /**
   * Refuse to synthesize without `tlsSecretName`, for clusters whose policy forbids self-signed certificates.
   * @default false
   */
  readonly requireTlsSecret?: boolean;

  /**
   * Resources of the proxy container.
   * @default - requests 10m / 20Mi, memory limit 40Mi (kube-prometheus)
   */
  readonly resources?: AgentResources;
}

/** A prometheus-operator ServiceMonitor for the exporter. */
export interface NodeExporterServiceMonitorOptions {
  /**
   * Scrape interval (a Prometheus duration such as "30s" or "1m").
   * @default "30s"
   */
  readonly interval?: string;

  /**
   * Scrape timeout; must not exceed the interval.
   * @default - Prometheus' global scrape timeout
   */
  readonly scrapeTimeout?: string;

  /**
   * Labels of the ServiceMonitor, to match the `serviceMonitorSelector` of the Prometheus that
   * should scrape it (kube-prometheus-stack selects `release: <helm release>` by default). A
   * ServiceMonitor no Prometheus selects is silently ignored.
   * @default - only the agent's own labels
   */
  readonly labels?: { [key: string]: string };

  /**
   * Skip verification of the proxy's certificate.
   * @default - true with the proxy's self-signed certificate, false with `tlsSecretName`
   */
  readonly tlsInsecureSkipVerify?: boolean;

  /**
   * More relabelings of the target, applied after the one that sets `instance` to the node name.
   * @default - none
   */
  readonly relabelings?: PrometheusRelabelConfig[];

  /**
   * Relabelings of the scraped series (`metricRelabelings`), e.g. dropping unneeded metrics.
   * @default - none
   */
  readonly metricRelabelings?: PrometheusRelabelConfig[];
}

/** What a Prometheus relabeling rule does (prometheus-operator RelabelConfig `action`). */
export enum RelabelAction {
  /** Replace targetLabel with replacement (regex groups expanded). */
  REPLACE = 'replace',
  /** Keep targets/series whose sourceLabels match regex. */
  KEEP = 'keep',
  /** Drop targets/series whose sourceLabels match regex. */
  DROP = 'drop',
  /** Set targetLabel to a hash of sourceLabels modulo `modulus`. */
  HASHMOD = 'hashmod',
  /** Copy labels whose names match regex to the names given by replacement. */
  LABELMAP = 'labelmap',
  /** Remove labels whose names match regex. */
  LABELDROP = 'labeldrop',
  /** Remove labels whose names do not match regex. */
  LABELKEEP = 'labelkeep',
  /** Lower-case the joined sourceLabels into targetLabel. */
  LOWERCASE = 'lowercase',
  /** Upper-case the joined sourceLabels into targetLabel. */
  UPPERCASE = 'uppercase',
  /** Keep when the joined sourceLabels equal targetLabel. */
  KEEP_EQUAL = 'keepequal',
  /** Drop when the joined sourceLabels equal targetLabel. */
  DROP_EQUAL = 'dropequal',
}

/** A Prometheus relabeling rule (prometheus-operator RelabelConfig). */
export interface PrometheusRelabelConfig {
  /**
   * Action.
   * @default RelabelAction.REPLACE
   */
  readonly action?: RelabelAction;
  /**
   * Labels whose values are joined (with separator) and matched against regex.
   * @default - none
   */
  readonly sourceLabels?: string[];
  /**
   * Separator of the joined sourceLabels.
   * @default ";"
   */
  readonly separator?: string;
  /**
   * Label written by replace, hashmod, lowercase, uppercase (and compared by keepequal/dropequal).
   * @default - none
   */
  readonly targetLabel?: string;
  /**
   * Regular expression (RE2, anchored).
   * @default "(.*)"
   */
  readonly regex?: string;
  /**
   * Modulus of hashmod.
   * @default - none
   */
  readonly modulus?: number;
  /**
   * Replacement of replace and labelmap (`$1` for the first group).
   * @default "$1"
   */
  readonly replacement?: string;
}

/** A sidecar that writes `*.prom` files for the textfile collector. */
export interface NodeExporterTextfileWriter extends AgentContainerSettings {
  /** Container name, unique in the pod. */
  readonly name: string;
  /**
   * Where the writer sees the textfile directory (writable). Write to a temporary file there and
   * rename it to `*.prom`, so the exporter never reads half a file.
   * @default "/host/textfile"
   */
  readonly mountPath?: string;
}

/** The textfile collector's directory, and optionally a sidecar writing it. */
export interface NodeExporterTextfileCollectorOptions {
  /**
   * Host directory with the `*.prom` files (hostPath DirectoryOrCreate, so nodes without it
   * still start the exporter), mounted read-only in the exporter at /host/textfile and passed
   * as `--collector.textfile.directory`. With a writer it must be a dedicated directory: the host
   * root and system directories (/etc, /var, /usr, …) are refused.
   * @default "/var/lib/node-exporter/textfile"
   */
  readonly hostDirectory?: string;

  /**
   * A sidecar that gets the directory writable (the exporter keeps it read-only), e.g. a script
   * that exports package-update or certificate-expiry metrics.
   * @default - none: something on the node writes the files
   */
  readonly writer?: NodeExporterTextfileWriter;
}

/** Props of a NodeExporterDaemonSet. */
export interface NodeExporterDaemonSetProps extends AgentPodOptions {
  /**
   * Name of the DaemonSet, ServiceAccount and Service.
   * @default "node-exporter"
   */
  readonly name?: string;

  /**
   * Namespace.
   * @default - the chart's namespace, else "monitoring"
   */
  readonly namespace?: string;

  /**
   * Create the namespace, labelled for Pod Security Admission (privileged: hostNetwork, hostPID, hostPath).
   * Creating `monitoring` also needs `ownMonitoringNamespace`.
   * @default false
   */
  readonly createNamespace?: boolean;

  /**
   * Confirms that this construct may create the `monitoring` namespace (with `createNamespace`) and
   * label it privileged. kube-prometheus-stack and most monitoring installs run there and usually
   * own that Namespace object: two owners of one object fight over it (Argo CD reports it shared,
   * a prune by either deletes everything in it), and the privileged label applies to their pods too.
   * Without this, `createNamespace` with the namespace `monitoring` is refused; give the exporter a
   * namespace of its own, or leave the Namespace to the install that owns it.
   * @default false
   */
  readonly ownMonitoringNamespace?: boolean;

  /**
   * node_exporter image, pinned. The collector names are checked against 1.12.1 (collectors added after 1.9.1 are refused with an older tag).
   * @default "quay.io/prometheus/node-exporter:v1.12.1"
   */
  readonly image?: string;

  /**
   * Port Prometheus scrapes, declared as hostPort = containerPort (hostNetwork).
   * @default 9100
   */
  readonly port?: number;

  /**
   * Where the exporter (or the proxy) listens on the node.
   * @default NodeExporterListenAddress.NODE_IP
   */
  readonly listenAddress?: NodeExporterListenAddress;

  /**
   * Collectors to turn on besides the default ones.
   * @default - none
   */
  readonly enableCollectors?: NodeExporterCollector[];

  /**
   * Collectors to turn off. Replaces the default list.
   * @default - btrfs, hwmon and wifi (as kube-prometheus), minus any in enableCollectors
   */
  readonly disableCollectors?: NodeExporterCollector[];

  /**
   * `--collector.filesystem.mount-points-exclude`, matched against paths relative to the host root.
   * @default - kube-prometheus' list plus upstream's run/credentials and containers/storage
   */
  readonly mountPointsExclude?: string;

  /**
   * `--collector.filesystem.fs-types-exclude`.
   * @default - upstream's default (overlay, tmpfs-like pseudo filesystems...)
   */
  readonly fsTypesExclude?: string;

  /**
   * `--collector.netclass.ignored-devices` and `--collector.netdev.device-exclude`.
   * @default "^(veth.*|[a-f0-9]{15})$" (kube-prometheus: pod veths and OVN's renamed ones)
   */
  readonly netDevicesExclude?: string;

  /**
   * More exporter arguments, appended verbatim. A flag the construct writes (listen address, host
   * paths, excludes, textfile directory, a collector it turns on or off) is refused, as is a flag
   * given twice: node_exporter exits with "flag ... cannot be repeated". Each flag is checked
   * against node_exporter 1.12.1's (an image with a newer tag lifts the unknown-flag check): an
   * unknown one, a bool given `=value` or a value flag without one make it exit at start.
   * @default - none
   */
  readonly extraArgs?: string[];

  /**
   * Resources of the exporter. The memory limit defaults to the request: node_exporter's use is
   * steady, and a pod whose limit equals its request is evicted last under memory pressure.
   * @default - requests 100m / 180Mi, memory limit 180Mi, no CPU limit
   */
  readonly resources?: AgentResources;

  /**
   * Pace of upgrades. Surge is refused: the host port would keep the surge pod Pending.
   * @default - maxUnavailable 10%, maxSurge 0 (kube-prometheus)
   */
  readonly updateStrategy?: UpdateStrategy;

  /**
   * Tolerate every taint, so every node (control plane and tainted pools included) reports metrics.
   * @default true
   */
  readonly tolerateAllTaints?: boolean;

  /**
   * More tolerations (only meaningful with tolerateAllTaints false).
   * @default - none
   */
  readonly tolerations?: AgentToleration[];

  /**
   * Node labels the node must carry.
   * @default - { "kubernetes.io/os": "linux" }
   */
  readonly nodeSelector?: { [key: string]: string };

  /**
   * Required node-affinity requirements.
   * @default - none (virtual nodes are always excluded)
   */
  readonly nodeRequirements?: NodeRequirement[];

  /**
   * PriorityClass of the pods.
   * @default - the base's: "system-node-critical"
   */
  readonly priorityClassName?: string;

  /**
   * Put kube-rbac-proxy in front: the exporter listens on 127.0.0.1 and the proxy serves TLS on
   * the host port, authorizing callers with SubjectAccessReviews (the ServiceAccount gets a token
   * and a ClusterRole for TokenReviews and SubjectAccessReviews). The scraping Prometheus then
   * needs `get` on the non-resource URL `/metrics` in its own ClusterRole (kube-prometheus-stack
   * grants it); the ServiceMonitor sends its ServiceAccount token.
   * @default - no proxy: plain HTTP on the node IP
   */
  readonly kubeRbacProxy?: NodeExporterKubeRbacProxyOptions;

  /**
   * Emit a ServiceMonitor (monitoring.coreos.com/v1).
   * @default - none
   */
  readonly serviceMonitor?: NodeExporterServiceMonitorOptions;

  /**
   * Emit a PodMonitor (monitoring.coreos.com/v1) instead of a ServiceMonitor: the same options,
   * for Prometheus setups that select PodMonitors only. Not together with `serviceMonitor`
   * (every node would be scraped twice).
   * @default - none
   */
  readonly podMonitor?: NodeExporterServiceMonitorOptions;

  /**
   * The textfile collector's host directory (read-only in the exporter) and an optional writer
   * sidecar that gets it writable.
   * @default - the collector runs but reads no directory (node_exporter's default is none)
   */
  readonly textfileCollector?: NodeExporterTextfileCollectorOptions;

  /**
   * More labels on every object.
   * @default - none
   */
  readonly labels?: { [key: string]: string };

  /**
   * Roll new versions out over canary waves of nodes (one DaemonSet per wave plus the fleet).
   * @default - one DaemonSet for all nodes
   */
  readonly rollout?: AgentRollout;

  /**
   * Take over a running DaemonSet in place, e.g. `AgentAdoption.nodeExporterChart({ namespace: 'monitoring' })`: the
   * DaemonSet keeps its name, namespace and selector, so the switch is a rolling update of that object at this
   * agent's pace (each node's pod replaced once, never two on a node). Name and namespace default to the adopted
   * DaemonSet's.
   * @default - a new DaemonSet
   */
  readonly adopt?: AgentAdoption;

  /**
   * Render a PrometheusRule with the exporter's alerts: its DaemonSets (kube-state-metrics), a
   * node's exporter down, textfile and collector errors, and optionally node-mixin's node alerts.
   * The exporter alerts need the exporter scraped, e.g. with `serviceMonitor`.
   * @default - no alerts
   */
  readonly alerts?: NodeExporterAlertsOptions;
}

/**
 * Prometheus node_exporter on every node, hardened like kube-prometheus: hostNetwork and hostPID,
 * the host's /proc, /sys and / mounted read-only (/ and /sys with HostToContainer propagation, so
 * later mounts show up and the "not a shared or slave mount" warning goes away), non-root with
 * every capability dropped, a read-only root filesystem, the node's IP as listen address,
 * container mounts and veth devices excluded, probes on the exporter, memory limit = request,
 * 10% at a time upgrades. Optionally kube-rbac-proxy and a ServiceMonitor.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/node-exporter.md
 */
export class NodeExporterDaemonSet extends Construct {
  /**
   * A release of an exporter with these props: give the previous version's props as
   * `rollout.previous` while its waves are held (their `rollout` is ignored).
   */
  public static release(props: NodeExporterDaemonSetProps = {}): AgentRelease {
    return constructRelease('NodeExporterDaemonSet', (scope, id) => new NodeExporterDaemonSet(scope, id, { ...props, rollout: undefined }));
  }

  /** The underlying node agent (DaemonSet, ServiceAccount, RBAC). */
  public readonly agent: NodeAgentDaemonSet;
  /** The headless Service Prometheus discovers the pods through. */
  public readonly service: ApiObject;
  /** The ServiceMonitor, if asked for. */
  public readonly serviceMonitor?: ApiObject;
  /** The PodMonitor, if asked for. */
  public readonly podMonitor?: ApiObject;
  /** The port Prometheus scrapes on every node. */
  public readonly port: number;
  /** The exporter's arguments. */
  public readonly exporterArgs: string[];
  /** The exporter's alerts, if `alerts` is set. */
  public readonly alerts?: AgentAlerts;
  /** The gate Jobs of `rollout.gates`. */
  public readonly gates: ApiObject[];

  public constructor(scope: Construct, id: string, props: NodeExporterDaemonSetProps = {}) {
    super(scope, id);
    startAgentConstruct(this, 'NodeExporterDaemonSet', 'NodeExporterDaemonSetProps', props);
    // Then the values the base does not see.
    throwIfProblems(this, valueProblems(props));
    const port = props.port ?? 9100;
    validatePort(port, 'port', this);
    this.port = port;
    const listen = listenMode(this, props);
    const proxy = props.kubeRbacProxy;
    const upstreamPort = proxy?.upstreamPort ?? port + 1;
    if (proxy) checkProxy(this, proxy, port, upstreamPort, listen);
    // Surge is refused by the base: the host port keeps the surge pod Pending.
    const strategy = props.updateStrategy ?? UpdateStrategy.rollingUpdate({
      maxUnavailable: RolloutBudget.percent(10), maxSurge: RolloutBudget.count(0),
    });
    this.exporterArgs = exporterArgsOf(this, props, proxy ? upstreamPort : port, proxy ? 'localhost' : listen);
    checkMonitorsAndEnv(this, props);
    const textfile = this.textfileMounts(props.textfileCollector);
    checkSidecarMounts(this, props.sidecars ?? []);

    // The exporter declares its port, the loopback one behind the proxy too (so the scheduler and
    // the host-port checks know it is taken).
    const exporterPorts: AgentPort[] = !proxy
      ? [{ name: 'metrics', containerPort: port, protocol: AgentProtocol.TCP }]
      : [{ name: 'upstream', containerPort: upstreamPort, protocol: AgentProtocol.TCP }];
    const sidecars: AgentContainer[] = [
      ...(proxy ? [this.proxyContainer(proxy, port, upstreamPort, listen)] : []),
      ...textfile.sidecars,
      ...(props.sidecars ?? []),
    ];
    checkPortsUnique(this, 'node-exporter', exporterPorts, sidecars);

    const hostPaths = this.hostPaths(textfile.volumes);
    const resources = props.resources ?? {};
    const { name, namespace } = resolveIdentity(this, props, { name: 'node-exporter', namespace: 'monitoring' });
    checkNamespace(this, props, namespace);
    const probe = exporterProbe(proxy ? upstreamPort : port, proxy !== undefined);
    const job = keptJob(props.adopt);
    this.agent = new NodeAgentDaemonSet(this, 'Agent', {
      ...podOptionsOf(props),
      podLabels: job ? { ...props.podLabels, [job.key]: job.value } : props.podLabels,
      rollout: agentRollout(this, props.rollout),
      adopt: props.adopt,
      name,
      namespace,
      createNamespace: props.createNamespace,
      image: props.image ?? NODE_EXPORTER_IMAGE,
      containerName: 'node-exporter',
      args: this.exporterArgs,
      // kubelet expands $(HOST_IP) in the listen address from this downward-API variable.
      fieldEnv: !proxy && listen === 'node-ip' ? { [HOST_IP_ENV]: AgentEnvFieldPath.NODE_IP } : undefined,
      ports: exporterPorts,
      resources: {
        cpuRequest: resources.cpuRequest ?? '100m',
        cpuLimit: resources.cpuLimit,
        memoryRequest: resources.memoryRequest ?? '180Mi',
        memoryLimit: resources.memoryLimit ?? resources.memoryRequest ?? '180Mi',
      },
      runAsUser: NOBODY,
      runAsGroup: NOBODY,
      readOnlyRootFilesystem: true,
      readiness: probe,
      liveness: probe,
      hostPaths,
      // The proxy's serving certificate, mounted by the proxy container only.
      volumes: [...(proxy?.tlsSecretName ? [AgentVolume.secret(PROXY_TLS_VOLUME, proxy.tlsSecretName)] : []), ...(props.volumes ?? [])],
      hostNetwork: true,
      hostPid: true,
      sidecars,
      updateStrategy: strategy,
      tolerateAllTaints: props.tolerateAllTaints ?? true,
      tolerations: props.tolerations,
      nodeSelector: props.nodeSelector,
      nodeRequirements: props.nodeRequirements,
      priorityClassName: props.priorityClassName,
      rbacRules: proxy ? [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ] : undefined,
      // kube-rbac-proxy needs the token to call the API; the exporter alone never does.
      automountServiceAccountToken: proxy !== undefined,
      component: 'exporter',
      labels: props.labels,
      podAnnotations: { 'kubectl.kubernetes.io/default-container': 'node-exporter', ...props.podAnnotations },
    });

    const { service, labels, serviceSelector, portName } = this.renderService(props, port, proxy !== undefined);
    this.service = service;
    addObjectSizeValidation(this);
    if (props.serviceMonitor) {
      this.serviceMonitor = this.renderServiceMonitor(props.serviceMonitor, labels, serviceSelector, portName, proxy);
    }
    if (props.podMonitor) {
      this.podMonitor = this.renderServiceMonitor(props.podMonitor, labels, serviceSelector, portName, proxy, true);
    }
    const finished = finishAgentConstruct(this, {
      agent: this.agent,
      rollout: props.rollout,
      alerts: props.alerts,
      gateChecks: nodeExporterGateChecks,
      alertGroups: (target, alerts) => nodeExporterAlertGroups(target, alerts),
    });
    this.alerts = finished.alerts;
    this.gates = finished.gates;
  }

  /** The host's /proc, /sys and root, the sockets of the collectors that talk to the host, and the textfile directory. */
  private hostPaths(textfileVolumes: HostPathVolume[]): HostPathVolume[] {
    return [
      { name: 'proc', hostPath: '/proc', mountPath: HOST_PROC, readOnly: true },
      { name: 'sys', hostPath: '/sys', mountPath: HOST_SYS, readOnly: true, propagation: MountPropagation.HOST_TO_CONTAINER },
      { name: 'root', hostPath: '/', mountPath: HOST_ROOT, readOnly: true, propagation: MountPropagation.HOST_TO_CONTAINER },
      // Collectors that talk to the host beyond /proc and /sys (systemd, logind: the D-Bus socket).
      ...collectorHostPaths(this.enabledCollectors()).map((h): HostPathVolume => ({
        name: h.name, hostPath: h.hostPath, mountPath: h.mountPath, readOnly: true, type: h.socket ? HostPathType.SOCKET : HostPathType.DIRECTORY,
      })),
      ...textfileVolumes,
    ];
  }

  /** The headless Service Prometheus discovers the exporters through, with the labels the monitors select. */
  private renderService(props: NodeExporterDaemonSetProps, port: number, proxied: boolean) {
    const portName = proxied ? 'https' : 'metrics';
    const serviceSelector = { ...this.agent.identityLabels };
    const job = keptJob(props.adopt);
    const labels = { ...props.labels, ...(job ? { [job.key]: job.value } : {}), ...serviceSelector, 'app.kubernetes.io/component': 'exporter' };
    const service = new kplus.k8s.KubeService(this, 'Service', {
      metadata: { name: this.agent.name, namespace: this.agent.namespace, labels: sorted(labels) },
      spec: {
        // Headless: Prometheus scrapes every pod (every node), never a load-balanced one. An adopted chart's Service
        // (same name) keeps its cluster IP: spec.clusterIP is immutable, so `None` would be rejected; leaving the
        // field out keeps the allocated one, and Prometheus discovers the pods through the endpoints either way.
        clusterIp: props.adopt ? undefined : 'None',
        selector: serviceSelector,
        ports: [{ name: portName, port, targetPort: kplus.k8s.IntOrString.fromString(portName), protocol: 'TCP' }],
      },
    });

    return { service, labels, serviceSelector, portName };
  }

  /** Collectors that will run: on by default or enabled, minus disabled (read back from the args). */
  private enabledCollectors(): CollectorName[] {
    const on = new Set<string>(DEFAULT_ENABLED_COLLECTORS);
    for (const arg of this.exporterArgs) {
      const m = /^--(no-)?collector\.([a-z_]+)$/.exec(arg);
      if (m) {
        if (m[1]) on.delete(m[2]);
        else on.add(m[2]);
      }
    }
    return [...on].filter(isKnownCollector).sort();
  }

  private textfileMounts(
    options: NodeExporterTextfileCollectorOptions | undefined,
  ): { volumes: HostPathVolume[]; sidecars: AgentContainer[] } {
    if (!options) return { volumes: [], sidecars: [] };
    const dir = options.hostDirectory ?? '/var/lib/node-exporter/textfile';
    const problems = textfileDirectoryProblems(dir, options.writer !== undefined);
    if (problems.length > 0) throw new ValidationError(this, `textfileCollector.${problems[0]}.`);
    // DirectoryOrCreate: a node without the directory still runs the exporter (empty textfile metrics).
    const volumes: HostPathVolume[] = [{ name: 'textfile', hostPath: dir, mountPath: TEXTFILE_DIR, readOnly: true, type: HostPathType.DIRECTORY_OR_CREATE }];
    const sidecars: AgentContainer[] = [];
    if (options.writer) {
      const { mountPath, ...writer } = options.writer;
      // A second volume on the same host directory: writable, and mounted in the writer only.
      volumes.push({ name: 'textfile-writer', hostPath: dir, type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false, mountInMainContainer: false });
      sidecars.push({ ...writer, mounts: [{ volume: 'textfile-writer', mountPath: mountPath ?? TEXTFILE_DIR, readOnly: false }] });
    }
    return { volumes, sidecars };
  }

  private proxyContainer(proxy: NodeExporterKubeRbacProxyOptions, port: number, upstreamPort: number, listen: ListenMode): AgentContainer {
    const r = proxy.resources ?? {};
    return {
      name: PROXY_CONTAINER,
      image: proxy.image ?? KUBE_RBAC_PROXY_IMAGE,
      args: [
        `--secure-listen-address=${listenAddress(listen, port)}`,
        `--upstream=http://127.0.0.1:${upstreamPort}/`,
        ...(proxy.tlsSecretName ? [`--tls-cert-file=${PROXY_TLS_DIR}/tls.crt`, `--tls-private-key-file=${PROXY_TLS_DIR}/tls.key`] : []),
      ],
      env: listen === 'node-ip' ? { [HOST_IP_ENV]: AgentEnvValue.fromField(AgentEnvFieldPath.NODE_IP) } : undefined,
      ports: [{ name: 'https', containerPort: port, protocol: AgentProtocol.TCP }],
      resources: {
        cpuRequest: r.cpuRequest ?? '10m',
        cpuLimit: r.cpuLimit,
        memoryRequest: r.memoryRequest ?? '20Mi',
        memoryLimit: r.memoryLimit ?? '40Mi',
      },
      runAsUser: NONROOT,
      runAsGroup: NONROOT,
      readOnlyRootFilesystem: true,
      readiness: AgentProbe.fromTcpSocket({ port, periodSeconds: Duration.seconds(10) }),
      mounts: proxy.tlsSecretName ? [{ volume: PROXY_TLS_VOLUME, mountPath: PROXY_TLS_DIR, readOnly: true }] : undefined,
    };
  }

  private renderServiceMonitor(
    options: NodeExporterServiceMonitorOptions, labels: { [key: string]: string }, selector: { [key: string]: string },
    portName: string, proxy: NodeExporterKubeRbacProxyOptions | undefined, podMonitor = false,
  ): ApiObject {
    const prop = podMonitor ? 'podMonitor' : 'serviceMonitor';
    const interval = options.interval ?? '30s';
    for (const [field, value] of [[`${prop}.interval`, interval], [`${prop}.scrapeTimeout`, options.scrapeTimeout]] as const) {
      if (value !== undefined && !/^(\d+(ms|s|m|h|d|w|y))+$/.test(value)) {
        throw new ValidationError(this, `${field} "${value}" is not a Prometheus duration; write e.g. "30s" or "1m"`);
      }
    }
    if (options.scrapeTimeout !== undefined && durationMs(options.scrapeTimeout) > durationMs(interval)) {
      throw new ValidationError(this, `${prop}.scrapeTimeout ${options.scrapeTimeout} exceeds the interval ${interval}; Prometheus rejects the target. Lower the timeout.`);
    }
    const endpoint: { [key: string]: unknown } = {
      port: portName,
      interval,
      scrapeTimeout: options.scrapeTimeout,
      // Metrics are about the node: label them with the node's name, not the pod's IP:port.
      relabelings: [{
        action: 'replace',
        sourceLabels: ['__meta_kubernetes_pod_node_name'],
        targetLabel: 'instance',
        regex: '(.*)',
        replacement: '$1',
      }, ...renderRelabelings(this, `${prop}.relabelings`, options.relabelings)],
    };
    const metricRelabelings = renderRelabelings(this, `${prop}.metricRelabelings`, options.metricRelabelings);
    if (metricRelabelings.length > 0) endpoint.metricRelabelings = metricRelabelings;
    if (proxy) {
      const skip = options.tlsInsecureSkipVerify ?? !proxy.tlsSecretName;
      endpoint.scheme = 'https';
      // Prometheus presents its own ServiceAccount token; kube-rbac-proxy checks it with a SubjectAccessReview.
      endpoint.bearerTokenFile = '/var/run/secrets/kubernetes.io/serviceaccount/token';
      endpoint.tlsConfig = skip ? { insecureSkipVerify: true } : {
        ca: { secret: { name: proxy.tlsSecretName, key: 'ca.crt' } },
        serverName: `${this.agent.name}.${this.agent.namespace}.svc`,
      };
    } else {
      endpoint.scheme = 'http';
    }
    if (podMonitor) {
      return new ApiObject(this, 'PodMonitor', {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'PodMonitor',
        metadata: { name: this.agent.name, namespace: this.agent.namespace, labels: sorted({ ...labels, ...options.labels }) },
        spec: {
          jobLabel: keptJob(this.agent.adopt)?.key ?? 'app.kubernetes.io/name',
          selector: { matchLabels: selector },
          namespaceSelector: { matchNames: [this.agent.namespace] },
          podMetricsEndpoints: [endpoint],
        },
      });
    }
    return new ApiObject(this, 'ServiceMonitor', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: { name: this.agent.name, namespace: this.agent.namespace, labels: sorted({ ...labels, ...options.labels }) },
      spec: {
        jobLabel: keptJob(this.agent.adopt)?.key ?? 'app.kubernetes.io/name',
        selector: { matchLabels: selector },
        namespaceSelector: { matchNames: [this.agent.namespace] },
        endpoints: [endpoint],
      },
    });
  }
}
brand(NodeExporterDaemonSet, 'NodeExporterDaemonSet');

/**
 * The label an adopted install's job is read from and its value, when it is not `app.kubernetes.io/name`
 * (kube-prometheus-stack's `jobLabel: node-exporter`): the Service and the pods carry it, the monitors read the job from it.
 */
function keptJob(adopt: AgentAdoption | undefined): { key: string; value: string } | undefined {
  return adopt?.jobLabelKey && adopt.job ? { key: adopt.jobLabelKey, value: adopt.job } : undefined;
}

const RELABEL_LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The refusals of values the base agent does not see (names, labels, the monitors, the proxy). */
function valueProblems(props: NodeExporterDaemonSetProps): string[] {
  return [
    ...(props.name !== undefined ? checkDnsLabel('name', props.name) : []),
    ...(typeof props.name === 'string' ? checkServiceName('name', props.name, props.name) : []),
    ...checkLabels('labels', props.labels),
    ...checkLabels('serviceMonitor.labels', props.serviceMonitor?.labels),
    ...checkPrometheusDuration('serviceMonitor.interval', props.serviceMonitor?.interval),
    ...checkPrometheusDuration('serviceMonitor.scrapeTimeout', props.serviceMonitor?.scrapeTimeout),
    ...checkLabels('podMonitor.labels', props.podMonitor?.labels),
    ...checkPrometheusDuration('podMonitor.interval', props.podMonitor?.interval),
    ...checkPrometheusDuration('podMonitor.scrapeTimeout', props.podMonitor?.scrapeTimeout),
    ...(props.priorityClassName !== undefined ? checkDnsSubdomain('priorityClassName', props.priorityClassName) : []),
    ...checkTolerations('tolerations', props.tolerations),
    ...checkResources('resources', props.resources),
    ...checkResources('kubeRbacProxy.resources', props.kubeRbacProxy?.resources),
    ...(props.kubeRbacProxy?.image !== undefined ? checkImage('kubeRbacProxy.image', props.kubeRbacProxy.image) : []),
    ...(props.kubeRbacProxy?.tlsSecretName !== undefined ? checkDnsSubdomain('kubeRbacProxy.tlsSecretName', props.kubeRbacProxy.tlsSecretName) : []),
  ];
}

/** Where the exporter listens: the node's IP unless told all interfaces. */
function listenMode(scope: IConstruct, props: NodeExporterDaemonSetProps): ListenMode {
  if (props.listenAddress !== undefined && !Object.values(NodeExporterListenAddress).includes(props.listenAddress)) {
    throw new ValidationError(scope, `listenAddress "${props.listenAddress}" is unknown; use NodeExporterListenAddress.NODE_IP or ALL_INTERFACES`);
  }
  return props.listenAddress === NodeExporterListenAddress.ALL_INTERFACES ? 'all-interfaces' : 'node-ip';
}

/** kube-rbac-proxy's port must differ from the exporter's, and a required TLS Secret must be named. */
function checkProxy(scope: IConstruct, proxy: NodeExporterKubeRbacProxyOptions, port: number, upstreamPort: number, listen: ListenMode): void {
  validatePort(upstreamPort, 'kubeRbacProxy.upstreamPort', scope);
  if (upstreamPort === port) {
    throw new ValidationError(scope, `kubeRbacProxy.upstreamPort ${upstreamPort} is the proxy's own port: the exporter (127.0.0.1:${port}) and the proxy `
      + `(${listen === 'all-interfaces' ? '' : 'node IP '}:${port}) would race for it on the host network. Leave upstreamPort unset `
      + `(${port + 1}, as kube-prometheus) or pick another free port.`);
  }
  if (proxy.requireTlsSecret && !proxy.tlsSecretName) {
    throw new ValidationError(scope, 'kubeRbacProxy.requireTlsSecret is true but kubeRbacProxy.tlsSecretName is not set; ' +
      'name a kubernetes.io/tls Secret (tls.crt, tls.key, ca.crt) in the agent\'s namespace, or drop requireTlsSecret ' +
      'to let the proxy use a self-signed certificate.');
  }
}

/** node_exporter's arguments: the listen address, the collectors, the exclusions and the extra flags. */
function exporterArgsOf(scope: IConstruct, props: NodeExporterDaemonSetProps, port: number, listen: ListenMode): string[] {
  return exporterArgs({
    port,
    listen,
    enableCollectors: props.enableCollectors,
    disableCollectors: props.disableCollectors,
    mountPointsExclude: props.mountPointsExclude,
    fsTypesExclude: props.fsTypesExclude,
    netDevicesExclude: props.netDevicesExclude,
    textfileDirectory: props.textfileCollector ? TEXTFILE_DIR : undefined,
    extraArgs: props.extraArgs,
    // A tag vX.Y.Z names the version; anything else is taken for the pinned one.
    imageVersion: /:v?([0-9]+\.[0-9]+\.[0-9]+)(@.*)?$/.exec(props.image ?? '')?.[1],
    by: scope,
  });
}

/** One monitor at most, a PodMonitor never behind the proxy, and the listen address's variable kept for it. */
function checkMonitorsAndEnv(scope: IConstruct, props: NodeExporterDaemonSetProps): void {
  const proxy = props.kubeRbacProxy;
  if (props.serviceMonitor && props.podMonitor) {
    throw new ValidationError(scope, 'serviceMonitor and podMonitor are both set; every node would be scraped twice. Keep one.');
  }
  if (props.podMonitor && proxy) {
    // PodMetricsEndpoint has no bearerTokenFile: Prometheus could not present its own token to kube-rbac-proxy.
    throw new ValidationError(scope, 'podMonitor with kubeRbacProxy cannot authenticate: a PodMonitor endpoint cannot send Prometheus\' own '
      + 'ServiceAccount token (no bearerTokenFile). Use serviceMonitor with kubeRbacProxy, or drop kubeRbacProxy.');
  }
  if (props.extraEnv && HOST_IP_ENV in props.extraEnv) {
    throw new ValidationError(scope, `extraEnv.${HOST_IP_ENV} is set from the downward API for the listen address; choose another variable name.`);
  }
}

/** A sidecar may read the exporter's host volumes, never write them. */
function checkSidecarMounts(scope: IConstruct, sidecars: readonly AgentContainer[]): void {
  for (const sidecar of sidecars) {
    for (const mount of sidecar.mounts ?? []) {
      if (['root', 'proc', 'sys', 'dbus', 'textfile'].includes(mount.volume) && mount.readOnly === false) {
        throw new ValidationError(scope, `sidecar "${sidecar.name}" mounts the exporter's volume "${mount.volume}" writable; it is the host's `
          + `${mount.volume === 'textfile' ? 'textfile directory, read-only by design: give the writer as textfileCollector.writer' : `${mount.volume === 'root' ? 'root filesystem' : mount.volume}, never writable`}.`);
      }
    }
  }
}

/** "monitoring" is usually another install's namespace: creating it needs ownMonitoringNamespace. */
function checkNamespace(scope: IConstruct, props: NodeExporterDaemonSetProps, namespace: string): void {
  if (props.createNamespace && namespace === 'monitoring' && !props.ownMonitoringNamespace) {
    throw new ValidationError(scope, 'createNamespace would create the namespace "monitoring", which kube-prometheus-stack and other monitoring installs '
      + 'usually own (two owners of one Namespace object fight over it, and its privileged Pod Security label would apply to their pods); '
      + 'set namespace to one of the exporter\'s own (e.g. "node-exporter"), drop createNamespace, or set ownMonitoringNamespace: true if this app owns "monitoring"');
  }
}

/** The exporter's HTTP probe (readiness and liveness), on loopback behind the proxy. */
function exporterProbe(port: number, proxied: boolean): AgentProbe {
  return AgentProbe.fromHttpGet('/', {
    port,
    // Behind the proxy the exporter is only on loopback; with hostNetwork kubelet reaches it there.
    host: proxied ? '127.0.0.1' : undefined,
    initialDelaySeconds: Duration.seconds(0),
    periodSeconds: Duration.seconds(10),
    timeoutSeconds: Duration.seconds(5),
    failureThreshold: 3,
  });
}

/** prometheus-operator RelabelConfig objects, checked where Prometheus would reject them at load. */
function renderRelabelings(scope: IConstruct, prop: string, configs: PrometheusRelabelConfig[] | undefined): { [key: string]: unknown }[] {
  return (configs ?? []).map((c, i) => {
    const at = `${prop}[${i}]`;
    const action = c.action ?? RelabelAction.REPLACE;
    if (!Object.values(RelabelAction).includes(action)) {
      throw new ValidationError(scope, `${at}: action "${action}" is not a relabel action; use RelabelAction.REPLACE, KEEP, DROP, …`);
    }
    for (const label of c.sourceLabels ?? []) {
      if (!RELABEL_LABEL.test(label)) throw new ValidationError(scope, `${at}: sourceLabels "${label}" is not a label name`);
    }
    const needsTarget = [RelabelAction.REPLACE, RelabelAction.HASHMOD, RelabelAction.LOWERCASE, RelabelAction.UPPERCASE,
      RelabelAction.KEEP_EQUAL, RelabelAction.DROP_EQUAL].includes(action);
    if (needsTarget && c.targetLabel === undefined) throw new ValidationError(scope, `${at}: action ${action} needs targetLabel`);
    if (c.targetLabel !== undefined && !(action === RelabelAction.REPLACE ? /^[a-zA-Z_$][a-zA-Z0-9_${}]*$/ : RELABEL_LABEL).test(c.targetLabel)) {
      throw new ValidationError(scope, `${at}: targetLabel "${c.targetLabel}" is not a label name`);
    }
    if (action === RelabelAction.HASHMOD && !(c.modulus !== undefined && Number.isInteger(c.modulus) && c.modulus > 0)) {
      throw new ValidationError(scope, `${at}: hashmod needs a whole modulus >= 1`);
    }
    if (c.regex !== undefined) {
      try {
        new RegExp(c.regex);
      } catch (e) {
        throw new ValidationError(scope, `${at}: regex ${JSON.stringify(c.regex)} does not compile: ${(e as Error).message}`);
      }
    }
    const out: { [key: string]: unknown } = { action };
    if (c.sourceLabels) out.sourceLabels = c.sourceLabels;
    if (c.separator !== undefined) out.separator = c.separator;
    if (c.targetLabel !== undefined) out.targetLabel = c.targetLabel;
    if (c.regex !== undefined) out.regex = c.regex;
    if (c.modulus !== undefined) out.modulus = c.modulus;
    if (c.replacement !== undefined) out.replacement = c.replacement;
    return out;
  });
}

function checkPortsUnique(scope: IConstruct, mainName: string, mainPorts: AgentPort[], sidecars: AgentContainer[]): void {
  const owners = new Map<string, string>();
  const containers = [{ name: mainName, ports: mainPorts }, ...sidecars];
  for (const c of containers) {
    // cdk8s-plus refuses a port listed twice in one container without saying where: say it first.
    const own = new Set<string>();
    for (const p of c.ports ?? []) {
      const containerKey = `${p.containerPort}/${p.protocol ?? 'TCP'}`;
      if (own.has(containerKey)) {
        throw new ValidationError(scope, `port ${containerKey} is listed twice in container "${c.name}"; list each port once.`);
      }
      own.add(containerKey);
      for (const n of new Set([p.containerPort, p.hostPort ?? p.containerPort])) {
        const key = `${n}/${p.protocol ?? 'TCP'}`;
        const owner = owners.get(key);
        if (owner !== undefined && owner !== c.name) {
          throw new ValidationError(scope, `port ${key} is used by two containers, "${owner}" and "${c.name}"; with hostNetwork ` +
            'they share the node\'s ports. Give one of them another port.');
        }
        owners.set(key, c.name);
      }
    }
  }
}

function sorted(record: { [key: string]: string }): { [key: string]: string } {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function durationMs(value: string): number {
  const unit: { [u: string]: number } = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 };
  let total = 0;
  for (const m of value.matchAll(/(\d+)(ms|s|m|h|d|w|y)/g)) total += Number(m[1]) * unit[m[2]];
  return total;
}
