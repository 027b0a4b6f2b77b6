import { AgentEnvValue, AgentHandler, AgentProbe, AgentProtocol } from './container-inputs';
import { brand } from '../validation/brand';
import { checkArgs } from '../validation/struct-check';

/** Taint effects a toleration can match. */
export enum TaintEffect {
  /** New pods are not scheduled; running ones stay. */
  NO_SCHEDULE = 'NoSchedule',
  /** The scheduler avoids the node but may still use it. */
  PREFER_NO_SCHEDULE = 'PreferNoSchedule',
  /** Running pods are evicted (after tolerationSeconds when tolerated for a while). */
  NO_EXECUTE = 'NoExecute',
}

/** How a toleration compares the taint's value. */
export enum TolerationOperator {
  /** Key (and effect) must match; the value is ignored. */
  EXISTS = 'Exists',
  /** Key, value (and effect) must match. */
  EQUAL = 'Equal',
}

/** A toleration for a node taint. */
export interface AgentToleration {
  /**
   * The taint key. Empty with operator Exists tolerates every taint.
   * @default - every key (only with operator EXISTS)
   */
  readonly key?: string;

  /**
   * How the value is compared.
   * @default TolerationOperator.EQUAL
   */
  readonly operator?: TolerationOperator;

  /**
   * The taint value, for operator EQUAL only.
   * @default - empty
   */
  readonly value?: string;

  /**
   * The taint effect to tolerate.
   * @default - every effect
   */
  readonly effect?: TaintEffect;

  /**
   * For NoExecute only: how long the pod stays after the taint appears.
   * @default - forever
   */
  readonly tolerationSeconds?: number;
}

/**
 * The pod of a rollout hook Job (a wave gate, a rollout watcher). A hook runs for the bake or the whole rollout
 * (minutes to hours) and holds the sync: by default its pod asks Karpenter and the cluster autoscaler not to
 * disrupt its node (`karpenter.sh/do-not-disrupt: "true"`, `cluster-autoscaler.kubernetes.io/safe-to-evict:
 * "false"`) and runs on a Linux node (`kubernetes.io/os: linux`: the image is a Linux one).
 */
export interface HookPodOptions {
  /**
   * Tolerations of the hook's pod, e.g. for a cluster whose every pool is tainted, or a dedicated system pool.
   * @default - none
   */
  readonly tolerations?: AgentToleration[];

  /**
   * Node labels the hook's node must carry, added to `kubernetes.io/os: linux`.
   * @default - { "kubernetes.io/os": "linux" }
   */
  readonly nodeSelector?: { [key: string]: string };

  /**
   * Annotations of the hook's pod, added to (and able to replace) the defaults.
   * @default - { "karpenter.sh/do-not-disrupt": "true", "cluster-autoscaler.kubernetes.io/safe-to-evict": "false" }
   */
  readonly podAnnotations?: { [key: string]: string };

  /**
   * PriorityClass of the hook's pod (a pod of higher priority is not preempted for it).
   * @default - none: the cluster's default priority
   */
  readonly priorityClassName?: string;
}

/** Container resources. Quantities are written as Kubernetes quantities ("100m", "128Mi"). */
export interface AgentResources {
  /**
   * CPU request.
   * @default "100m"
   */
  readonly cpuRequest?: string;

  /**
   * CPU limit. Node agents rarely want one: CPU throttling delays flushes and probes.
   * @default - no CPU limit
   */
  readonly cpuLimit?: string;

  /**
   * Memory request.
   * @default "128Mi"
   */
  readonly memoryRequest?: string;

  /**
   * Memory limit. Always set: an agent that leaks must not take the node with it.
   * @default "512Mi"
   */
  readonly memoryLimit?: string;
}

/** hostPath types: the kubelet checks the path before starting the pod. */
export enum HostPathType {
  /** A directory that must already exist. */
  DIRECTORY = 'Directory',
  /** A directory created (0755, kubelet's owner) when missing. */
  DIRECTORY_OR_CREATE = 'DirectoryOrCreate',
  /** A file that must already exist. */
  FILE = 'File',
  /** A file created empty when missing. */
  FILE_OR_CREATE = 'FileOrCreate',
  /** A UNIX socket that must exist. */
  SOCKET = 'Socket',
  /** A character device that must exist. */
  CHAR_DEVICE = 'CharDevice',
  /** A block device that must exist. */
  BLOCK_DEVICE = 'BlockDevice',
}

/** How mounts propagate between host and container. */
export enum MountPropagation {
  /** No propagation (the default). */
  NONE = 'None',
  /** Mounts the host makes later under the path become visible in the container. */
  HOST_TO_CONTAINER = 'HostToContainer',
  /** Both ways: needs a privileged container. */
  BIDIRECTIONAL = 'Bidirectional',
}

/** A directory or file of the node mounted into the agent. */
export interface HostPathVolume {
  /** Volume name (a DNS-1123 label), also used by `AgentContainer.mounts`. */
  readonly name: string;

  /** The path on the node. */
  readonly hostPath: string;

  /**
   * What the kubelet expects at the path; a wrong one fails with a clear pod event.
   * @default HostPathType.DIRECTORY
   */
  readonly type?: HostPathType;

  /**
   * Where the main container sees it. Set `mountInMainContainer: false` to mount it only in other containers.
   * @default - the same path as on the host
   */
  readonly mountPath?: string;

  /**
   * Mount read-only. A writable hostPath must be asked for.
   * @default true
   */
  readonly readOnly?: boolean;

  /**
   * Mount propagation. Bidirectional needs `privileged`.
   * @default - none
   */
  readonly propagation?: MountPropagation;

  /**
   * Mount it in the main container.
   * @default true
   */
  readonly mountInMainContainer?: boolean;
}

/** A container port. */
export interface AgentPort {
  /** Port name (IANA service name: at most 15 characters, lower case). */
  readonly name: string;

  /** Port number in the container. */
  readonly containerPort: number;

  /**
   * Port bound on the node. With hostNetwork it always equals containerPort.
   * @default - none; containerPort when the pod uses hostNetwork
   */
  readonly hostPort?: number;

  /**
   * Protocol.
   * @default AgentProtocol.TCP
   */
  readonly protocol?: AgentProtocol;
}

/** A mount of one of the agent's volumes (a hostPath volume or an `AgentVolume` by name, or "config"). */
export interface AgentVolumeMount {
  /** The volume name: a `HostPathVolume.name`, an `AgentVolume.name`, or `config` for the agent's ConfigMap. */
  readonly volume: string;

  /** Where the container sees it. */
  readonly mountPath: string;

  /**
   * Read-only.
   * @default true
   */
  readonly readOnly?: boolean;

  /**
   * Mount propagation. Bidirectional needs `privileged`.
   * @default - none
   */
  readonly propagation?: MountPropagation;

  /**
   * Mount one file or directory of the volume.
   * @default - the whole volume
   */
  readonly subPath?: string;
}

/** Settings shared by every container of the agent (main, sidecars, init containers). */
export interface AgentContainerSettings {
  /** Image with an explicit tag or digest (`:latest` and untagged images are rejected). */
  readonly image: string;

  /**
   * Entrypoint.
   * @default - the image's entrypoint
   */
  readonly command?: string[];

  /**
   * Arguments.
   * @default - the image's arguments
   */
  readonly args?: string[];

  /**
   * Environment variables, by name.
   * @default - none
   */
  readonly env?: { [name: string]: AgentEnvValue };

  /**
   * Ports.
   * @default - none
   */
  readonly ports?: AgentPort[];

  /**
   * Resources.
   * @default - requests 100m CPU / 128Mi, memory limit 512Mi, no CPU limit
   */
  readonly resources?: AgentResources;

  /**
   * Run privileged (full host access). Emits allowPrivilegeEscalation: true, which the API requires.
   * @default false
   */
  readonly privileged?: boolean;

  /**
   * Linux capabilities to add; everything else is dropped.
   * @default - none (drop ALL)
   */
  readonly capabilities?: string[];

  /**
   * Run as root (uid 0). Without it the container must run as a non-root user.
   * @default false
   */
  readonly runAsRoot?: boolean;

  /**
   * User id to run as.
   * @default - the image's user (0 when runAsRoot)
   */
  readonly runAsUser?: number;

  /**
   * Group id to run as.
   * @default - the image's group
   */
  readonly runAsGroup?: number;

  /**
   * Read-only root filesystem: all writes go to mounted volumes.
   * @default true
   */
  readonly readOnlyRootFilesystem?: boolean;

  /**
   * Readiness probe. Rollouts wait for Ready.
   * @default - none
   */
  readonly readiness?: AgentProbe;

  /**
   * Liveness probe.
   * @default - none
   */
  readonly liveness?: AgentProbe;

  /**
   * Startup probe.
   * @default - none (no probe is added that you did not ask for)
   */
  readonly startup?: AgentProbe;

  /**
   * Lifecycle hook run before the container is stopped.
   * @default - none
   */
  readonly preStop?: AgentHandler;

  /**
   * Extended resources (e.g. `{ "example.com/device": "1" }`) as quantity strings; each is both
   * requested and limited, as the API requires for extended resources.
   * @default - none
   */
  readonly extendedResources?: { [resource: string]: string };

  /**
   * SELinux level of the container (`securityContext.seLinuxOptions.level`, e.g. "s0").
   * @default - the runtime's
   */
  readonly seLinuxLevel?: string;
}

/** An extra container of the agent's pod: a sidecar, or an init container. */
export interface AgentContainer extends AgentContainerSettings {
  /** Container name (a DNS-1123 label), unique in the pod. */
  readonly name: string;

  /**
   * Volumes to mount.
   * @default - none
   */
  readonly mounts?: AgentVolumeMount[];
}

/** Options of a Secret volume. */
export interface AgentSecretVolumeOptions {
  /**
   * Start the pod even when the Secret is missing (the volume is then empty).
   * @default false
   */
  readonly optional?: boolean;

  /**
   * File mode of the files, e.g. 0o440.
   * @default 0o644 (the API's default)
   */
  readonly defaultMode?: number;
}

/** Options of an emptyDir volume. */
export interface AgentEmptyDirOptions {
  /**
   * Keep it in memory (tmpfs, counted against the container's memory limit).
   * @default false
   */
  readonly memory?: boolean;

  /**
   * Size limit, a quantity such as "64Mi".
   * @default - none
   */
  readonly sizeLimit?: string;
}

/** Which source an `AgentVolume` has. */
export enum AgentVolumeKind {
  /** A Secret of the agent's namespace. */
  SECRET = 'secret',
  /** A ConfigMap of the agent's namespace (one the agent does not create). */
  CONFIG_MAP = 'configMap',
  /** Scratch space that lives as long as the pod. */
  EMPTY_DIR = 'emptyDir',
}

/**
 * A volume of the agent's pod other than a hostPath or its own ConfigMap. Mounted only where a
 * container's `mounts` (or the agent's `mounts`) name it.
 */
export class AgentVolume {
  /** A Secret of the agent's namespace. */
  public static secret(name: string, secretName: string, options: AgentSecretVolumeOptions = {}): AgentVolume {
    checkArgs('AgentVolume.secret', [name, secretName, options]);
    return new AgentVolume(name, AgentVolumeKind.SECRET, secretName, options.optional, options.defaultMode, undefined, undefined);
  }

  /** A ConfigMap of the agent's namespace that the agent does not create itself. */
  public static configMap(name: string, configMapName: string, options: AgentSecretVolumeOptions = {}): AgentVolume {
    checkArgs('AgentVolume.configMap', [name, configMapName, options]);
    return new AgentVolume(name, AgentVolumeKind.CONFIG_MAP, configMapName, options.optional, options.defaultMode, undefined, undefined);
  }

  /** Scratch space shared by the pod's containers, gone with the pod. */
  public static emptyDir(name: string, options: AgentEmptyDirOptions = {}): AgentVolume {
    checkArgs('AgentVolume.emptyDir', [name, options]);
    return new AgentVolume(name, AgentVolumeKind.EMPTY_DIR, undefined, undefined, undefined, options.memory, options.sizeLimit);
  }

  private constructor(
    /** Volume name (a DNS-1123 label), used by mounts. */
    public readonly name: string,
    /** The kind of source. */
    public readonly kind: AgentVolumeKind,
    /** Name of the Secret or ConfigMap. */
    public readonly sourceName: string | undefined,
    /** Whether a missing Secret or ConfigMap is tolerated. */
    public readonly optional: boolean | undefined,
    /** File mode of a Secret's or ConfigMap's files. */
    public readonly defaultMode: number | undefined,
    /** emptyDir in memory. */
    public readonly memory: boolean | undefined,
    /** emptyDir size limit. */
    public readonly sizeLimit: string | undefined,
  ) {}
}
brand(AgentVolume, 'AgentVolume');

/** A host port the agent binds on every node it runs on. */
export interface AgentHostPort {
  /** Port number on the node. */
  readonly port: number;
  /** Protocol. */
  readonly protocol: string;
  /** Container that binds it. */
  readonly container: string;
}

/** An RBAC rule for the agent's ClusterRole. */
export interface AgentPolicyRule {
  /**
   * API groups ("" is the core group).
   * @default [""]
   */
  readonly apiGroups?: string[];

  /** Resources, e.g. ["pods", "namespaces"] or ["nodes/proxy"]. */
  readonly resources: string[];

  /** Verbs, e.g. ["get", "list", "watch"]. */
  readonly verbs: string[];

  /**
   * Limit the rule to these object names.
   * @default - all objects
   */
  readonly resourceNames?: string[];
}

/** A PriorityClass created for the agent. */
export interface AgentPriorityClass {
  /**
   * Name of the PriorityClass.
   * @default - "<agent name>-critical"
   */
  readonly name?: string;

  /** Priority value; user classes may go up to 1000000000. */
  readonly value: number;
}

/** Pod Security Admission levels. */
export enum PodSecurityLevel {
  /** Host access allowed. */
  PRIVILEGED = 'privileged',
  /** No host access, root allowed. */
  BASELINE = 'baseline',
  /** Hardened: non-root, no privilege escalation, seccomp, drop ALL. */
  RESTRICTED = 'restricted',
}
