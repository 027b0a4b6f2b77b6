import { ApiObject, Duration } from 'cdk8s';
import { Construct } from 'constructs';
import { AgentAlerts } from './agent-alerts';
import { finishAgentConstruct, startAgentConstruct } from './agent-construct';
import { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { agentRollout, constructRelease } from './previous-release';
import { AgentIdentity, resolveIdentity } from '../agent/agent-spec';
import { AgentEnvValue, AgentHandler, AgentProbe } from '../agent/container-inputs';
import { NodeOperator, NodeRequirement } from '../agent/node-requirement';
import {
  AgentContainer, AgentResources, AgentToleration, AgentVolumeMount, HostPathType, HostPathVolume, MountPropagation,
  TaintEffect, TolerationOperator,
} from '../agent/options';
import { AgentPodOptions, podOptionsOf } from '../agent/pod-options';
import { NodeAgentDaemonSetProps } from '../agent/props';
import { AgentRelease } from '../agent/release';
import { AgentRollout } from '../agent/rollout';
import { UpdateStrategy, UpdateStrategyType } from '../agent/update-strategy';
import { gpuDriverGateChecks } from '../alerts/gate';
import { GpuDriverAlertsOptions } from '../alerts/options';
import { gpuDriverAlertGroup } from '../alerts/rules';
import {
  DRIVER_BUILD_MEMORY, driverImageTagProblem, gpuRequestProblem, gpuResourceRequests, gpuSelectionProblem, isGpuResource,
  isPrecompiledDriverImage, visibleDevicesProblems,
} from '../gpu/driver-checks';
import { DEFAULT_DRIVER_MANAGER_IMAGE, DRIVER_MANAGER_RBAC, DRIVER_MANAGER_VOLUMES, driverConfigDigest, driverManagerContainer } from '../gpu/driver-manager';
import {
  DEFAULT_SKIP_NODE_LABEL, DriverValidation, RunbookInput, runbookInputProblems,
  renderRunbookMarkdown, renderRunbookScript, requirementsSelector,
} from '../gpu/runbook';
import { addObjectSizeValidation } from '../render/late-checks';
import {
  DEFAULT_DRIVER_BUILD_SECONDS, DEFAULT_STARTUP_PERIOD_SECONDS, failureThresholdFor, readyWaitSeconds, startupBudgetProblem, startupBudgetSeconds,
} from '../rollout/startup-budget';
import { NodeSelectorRequirementJson } from '../scheduling/types';
import { parseQuantity } from '../util/quantity';
import { brand } from '../validation/brand';
import { nameOf, throwIfProblems, ValidationError } from '../validation/errors';
import { checkLabelSelector } from '../validation/label-selector';
import { checkArgs, typeProblems } from '../validation/struct-check';
import {
  checkAbsolutePath, checkDnsSubdomain, checkInt64, checkLabelKey, checkLabels, checkLabelValue, checkQuantity, checkResources,
  checkTolerations, checkWholeNumber, sortedRecord,
} from '../validation/values';
import { addWarning } from '../validation/warnings';
import { ROLLOUT_GROUP_LABEL } from '../waves/partition';

/**
 * gpu-operator's label of a node with NVIDIA GPUs: its node-labelling controller writes `true` on a node
 * carrying one of NFD's NVIDIA PCI labels and `false` once none is left (controllers/nodelabeling_controller.go
 * `reconcileCommonGPULabel`). Neither NFD nor gpu-feature-discovery writes it; the device plugin's chart
 * honours it as a manual override.
 */
export const GPU_PRESENT_LABEL = 'nvidia.com/gpu.present';
/**
 * NFD's labels of a node with an NVIDIA (PCI vendor 10de) device, the ones gpu-operator reads
 * (controllers/state_manager.go `gpuNodeLabels`): `pci-10de.present` with `deviceLabelFields: [vendor]`
 * (gpu-operator's and the device plugin chart's NFD config), `pci-0300_10de` / `pci-0302_10de` (VGA /
 * 3D controller) with NFD's default `[class, vendor]`.
 */
export const NFD_GPU_LABELS = [
  'feature.node.kubernetes.io/pci-10de.present',
  'feature.node.kubernetes.io/pci-0300_10de.present',
  'feature.node.kubernetes.io/pci-0302_10de.present',
];
/** NFD's full kernel version label, for pinning precompiled driver images. */
export const KERNEL_VERSION_LABEL = 'feature.node.kubernetes.io/kernel-version.full';
/** gpu-operator's per-node switch of its driver DaemonSet (the one it selects `=true` on). */
export const DRIVER_DEPLOY_LABEL = 'nvidia.com/gpu.deploy.driver';
/**
 * Values of `nvidia.com/gpu.deploy.driver` under which no containerized driver belongs on the node.
 * `false`: an administrator opted the node out (gpu-operator leaves the value alone). `pre-installed`:
 * k8s-driver-manager found a driver on the host (`nvidia-smi` through /host), labelled the node so,
 * slept 60 s and exited 1 (NVIDIA/k8s-driver-manager cmd/driver-manager/main.go `uninstallDriver` →
 * `disableContainerizedDriver`, v0.12.0; the same in the v0.6.10 shell script). gpu-operator's own
 * driver DaemonSet selects `=true` only (assets/state-driver/0500_daemonset.yaml), so the pod goes;
 * ours must step aside too, or its init container fails there forever.
 */
export const DRIVER_OPT_OUT_VALUES = ['false', 'pre-installed'];
/**
 * Below this, a `buildTimeSeconds` is taken for minutes written as seconds and warned about: building
 * the module from source takes minutes on any node (gpu-operator's startupProbe allows 20), only a
 * precompiled driver loads in less.
 */
const MIN_PLAUSIBLE_BUILD_SECONDS = 5 * 60;
/** gpu-operator's marker: the driver container is ready; other GPU components wait for it. */
const DEFAULT_READY_MARKER = '/run/nvidia/validations/.driver-ctr-ready';
/** Where gpu-operator's driver image writes the status of the daemons it starts ("Ready" once they run). */
const DRIVER_DAEMONS_STATUS = '/run/nvidia/validations/.driver-daemons-status';
const DEFAULT_PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';
/** The pause image's own non-root user. */
const PAUSE_UID = 65535;

/** The two ways of running a driver on a node. */
export enum GpuDriverShapeKind {
  /** GKE-style: init containers install and load the driver, a `pause` container keeps the pod alive. */
  INSTALLER = 'installer',
  /** gpu-operator-style: a long-running driver container, ready once the driver is loaded. */
  DRIVER_CONTAINER = 'driver-container',
}

/** How the driver container tells that the driver works. */
export enum DriverReadinessCheck {
  /** `nvidia-smi` talks to every GPU through the loaded driver (the image must ship it). */
  NVIDIA_SMI = 'nvidia-smi',
  /** `/sys/module/nvidia/refcnt` exists: the kernel module is loaded (no user-space tools needed). */
  MODULE_LOADED = 'module-loaded',
}

/** Options of the installer shape (GKE-style). */
export interface GpuDriverInstallerOptions {
  /**
   * Command of the installer init container, which detects the GPU and kernel, installs and loads the driver, then exits.
   * @default - the image's entrypoint
   */
  readonly command?: string[];

  /**
   * Arguments of the installer init container.
   * @default - the image's arguments
   */
  readonly args?: string[];

  /**
   * Image of the main container, which only keeps the pod alive so the DaemonSet tracks coverage and
   * re-runs the installer when the pod is recreated.
   * @default "registry.k8s.io/pause:3.10"
   */
  readonly pauseImage?: string;

  /**
   * More init containers, run after the installer (e.g. GPU partitioning). They see the mounts they list.
   * @default - none
   */
  readonly extraInitContainers?: AgentContainer[];
}

/** Options of the driver-container shape (gpu-operator-style). */
export interface GpuDriverContainerOptions {
  /**
   * Command of the driver container.
   * @default - the image's entrypoint
   */
  readonly command?: string[];

  /**
   * Arguments of the driver container.
   * @default - the image's arguments
   */
  readonly args?: string[];

  /**
   * The longest the driver may take to build and load on a node, in seconds (a build from source
   * against the node's kernel headers is slow). The startupProbe budget must cover it.
   * @default 1200 (20 minutes)
   */
  readonly buildTimeSeconds?: number;

  /**
   * startupProbe period, in seconds.
   * @default 10
   */
  readonly startupPeriodSeconds?: number;

  /**
   * Seconds before the first startupProbe.
   * @default 60
   */
  readonly startupInitialDelaySeconds?: number;

  /**
   * startupProbe failureThreshold. Too small a budget (initialDelay + period × failureThreshold below
   * `buildTimeSeconds`) is an error: the kubelet would kill the container mid-build, forever.
   * @default - the smallest value whose budget covers `buildTimeSeconds`
   */
  readonly startupFailureThreshold?: number;

  /**
   * Timeout of each probe, in seconds (`nvidia-smi` can be slow on a busy node).
   * @default 60
   */
  readonly probeTimeoutSeconds?: number;

  /**
   * The check behind the startup and readiness probes.
   * @default DriverReadinessCheck.NVIDIA_SMI
   */
  readonly readinessCheck?: DriverReadinessCheck;

  /**
   * File the startupProbe creates once the driver works and the preStop hook removes, so components
   * waiting for the driver (toolkit, device plugin) stop trusting it as soon as it is going away.
   * @default "/run/nvidia/validations/.driver-ctr-ready" (gpu-operator's marker)
   */
  readonly readyMarker?: string;
}

/** Which shape runs the driver: `GpuDriverShape.installer()` or `GpuDriverShape.driverContainer()`. */
export class GpuDriverShape {
  /** GKE-style: privileged init containers install and load the driver, then a `pause` container keeps the pod alive. */
  public static installer(options: GpuDriverInstallerOptions = {}): GpuDriverShape {
    return new GpuDriverShape(GpuDriverShapeKind.INSTALLER, options, undefined);
  }

  /** gpu-operator-style: a long-running driver container with a startupProbe budget for the build. */
  public static driverContainer(options: GpuDriverContainerOptions = {}): GpuDriverShape {
    return new GpuDriverShape(GpuDriverShapeKind.DRIVER_CONTAINER, undefined, options);
  }

  private constructor(
    /** The shape. */
    public readonly kind: GpuDriverShapeKind,
    /** Options when the shape is INSTALLER. */
    public readonly installerOptions: GpuDriverInstallerOptions | undefined,
    /** Options when the shape is DRIVER_CONTAINER. */
    public readonly driverContainerOptions: GpuDriverContainerOptions | undefined,
  ) {}
}
brand(GpuDriverShape, 'GpuDriverShape');

/**
 * Which nodes are GPU nodes: positive node requirements, all of which a node must meet, and possibly
 * alternatives, one of which it must meet.
 */
export class GpuNodeSelection {
  /**
   * Nodes labelled as having NVIDIA GPUs by NFD (`feature.node.kubernetes.io/pci-10de.present`,
   * `pci-0300_10de.present` or `pci-0302_10de.present` = "true": clusters without gpu-operator) or by
   * gpu-operator (`nvidia.com/gpu.present=true`, which it derives from those NFD labels; also set by
   * hand to force a node in, as the device plugin's chart allows). The default.
   */
  public static featureDiscovery(): GpuNodeSelection {
    return new GpuNodeSelection([], [...NFD_GPU_LABELS, GPU_PRESENT_LABEL].map((key) => [NodeRequirement.in(key, ['true'])]));
  }

  /** Only nodes gpu-operator labelled `nvidia.com/gpu.present=true` (its node-labelling controller runs). */
  public static gpuOperatorLabel(): GpuNodeSelection {
    return new GpuNodeSelection([NodeRequirement.in(GPU_PRESENT_LABEL, ['true'])]);
  }

  /** Nodes carrying the label `key`, whatever its value, e.g. `node-role.kubernetes.io/gpu`. */
  public static labelExists(key: string): GpuNodeSelection {
    checkArgs('GpuNodeSelection.labelExists', [key]);
    return new GpuNodeSelection([NodeRequirement.exists(key)]);
  }

  /** Nodes whose `key` label is one of `values`, e.g. `gpu-type` in `["nvidia-a100"]`. */
  public static labelIn(key: string, values: string[]): GpuNodeSelection {
    checkArgs('GpuNodeSelection.labelIn', [key, values]);
    return new GpuNodeSelection([NodeRequirement.in(key, values)]);
  }

  /** Any requirements, ANDed. They must single out GPU nodes: NotIn / DoesNotExist alone match every node. */
  public static custom(requirements: NodeRequirement[]): GpuNodeSelection {
    checkArgs('GpuNodeSelection.custom', [requirements]);
    return new GpuNodeSelection([...requirements]);
  }

  private constructor(
    /** The node requirements, all of which a GPU node meets. */
    public readonly nodeRequirements: NodeRequirement[],
    /** Alternatives (one node-affinity term each), one of which a GPU node meets; empty: none. */
    public readonly nodeRequirementAlternatives: NodeRequirement[][] = [],
  ) {}
}
brand(GpuNodeSelection, 'GpuNodeSelection');

/** Props of `GpuDriverDaemonSet`. */
export interface GpuDriverDaemonSetProps extends AgentPodOptions {
  /**
   * The driver image (driver-container shape) or the installer image (installer shape), pinned by tag or digest.
   */
  readonly image: string;

  /**
   * Roll a new driver out over canary waves of GPU nodes: one DaemonSet per wave plus the fleet, each
   * still OnDelete, so the runbook is run wave by wave. The previous version is
   * `previous: GpuDriverDaemonSet.release(previousProps)`, the props that version had.
   * @default - one DaemonSet for all GPU nodes
   */
  readonly rollout?: AgentRollout;

  /**
   * Render a PrometheusRule with the driver's alerts: its DaemonSets (kube-state-metrics), a driver
   * pod not ready, and a Ready GPU node without a ready driver. The latter reads the node labels of
   * the driver's node requirements from `kube_node_labels`, so kube-state-metrics must export them
   * (`--metric-labels-allowlist=nodes=[<label>,...]`).
   * @default - no alerts
   */
  readonly alerts?: GpuDriverAlertsOptions;

  /**
   * Installer (GKE-style) or driver container (gpu-operator-style).
   * @default GpuDriverShape.driverContainer()
   */
  readonly shape?: GpuDriverShape;

  /**
   * Name of the DaemonSet and its ServiceAccount.
   * @default "gpu-driver"
   */
  readonly name?: string;

  /**
   * Namespace of the DaemonSet.
   * @default - the chart's namespace, else "kube-system"
   */
  readonly namespace?: string;

  /**
   * Create the namespace (labelled Pod Security `privileged`).
   * @default false
   */
  readonly createNamespace?: boolean;

  /**
   * The GPU nodes. The driver runs nowhere else: a selection that a node without GPUs meets is an error.
   * @default GpuNodeSelection.featureDiscovery(): NFD's NVIDIA PCI labels or gpu-operator's nvidia.com/gpu.present=true
   */
  readonly gpuNodes?: GpuNodeSelection;

  /**
   * Conditions under which the driver steps aside (its driver is managed elsewhere): a node that
   * meets any one of them gets no driver pod, e.g. `[NodeRequirement.in('gpu-owner', ['gpu-operator'])]`
   * keeps the driver off the nodes labelled `gpu-owner=gpu-operator`. `In` and `Exists` conditions
   * name the nodes that opt out; `NotIn` and `DoesNotExist` ones opt out every node lacking the label.
   * They add to the built-in opt-outs, which always apply: GKE-managed drivers
   * (`cloud.google.com/gke-gpu-driver-version` set) and nodes opted out of a containerized driver or
   * whose driver k8s-driver-manager found pre-installed on the host (`nvidia.com/gpu.deploy.driver`
   * `false` or `pre-installed`). `Gt` and `Lt` conditions are refused (stepping aside on them needs
   * a second node-affinity term).
   * @default - the built-in opt-outs only
   */
  readonly stepAsideWhen?: NodeRequirement[];

  /**
   * Replaced by `stepAsideWhen` and refused: despite its name, it listed requirements a node had to
   * meet for the driver to run, and replaced the built-in opt-outs. To migrate, give each requirement
   * negated to `stepAsideWhen` (`notIn(k, v)` becomes `in(k, v)`, `doesNotExist(k)` becomes
   * `exists(k)`, `in` becomes `notIn`, `exists` becomes `doesNotExist`) and drop the built-in ones.
   * @default - unset
   * @deprecated use `stepAsideWhen`, with each requirement negated
   */
  readonly optOutRequirements?: NodeRequirement[];

  /**
   * Run only on nodes with one of these exact kernels (`feature.node.kubernetes.io/kernel-version.full`),
   * for driver images precompiled for them.
   * @default - any kernel
   */
  readonly kernelVersions?: string[];

  /**
   * More tolerations, added to the `nvidia.com/gpu` one (see `tolerateGpuTaint`) and the base's control-plane ones:
   * e.g. the other agents' readiness taints, so the driver starts beside them. They never replace the GPU
   * toleration: a driver that lost it would never run on a GPU pool tainted `nvidia.com/gpu`.
   * @default - none
   */
  readonly tolerations?: AgentToleration[];

  /**
   * Tolerate `nvidia.com/gpu` (Exists, NoSchedule), the taint GPU pools usually carry. false for GPU pools that are
   * not tainted so, to tolerate only what `tolerations` lists.
   * @default true
   */
  readonly tolerateGpuTaint?: boolean;

  /**
   * Tolerate the control-plane taints.
   * @default true
   */
  readonly tolerateControlPlane?: boolean;

  /**
   * PriorityClass of the pods.
   * @default "system-node-critical"
   */
  readonly priorityClassName?: string;

  /**
   * SELinux level of the driver containers (e.g. "s0", as gpu-operator sets on SELinux hosts).
   * @default - the runtime's default
   */
  readonly seLinuxLevel?: string;

  /**
   * Resources of the driver (or installer) container: modest requests, a memory limit large enough to build the module.
   * @default - requests 100m CPU / 256Mi, memory limit 4Gi
   */
  readonly resources?: AgentResources;

  /**
   * Extended resources of the driver (or installer) container, name → quantity (requests = limits).
   * `nvidia.com/gpu` and MIG slices are refused: the device plugin needs the driver first, so asking for a
   * GPU deadlocks, and the driver never needs one.
   * @default - none
   */
  readonly extendedResources?: { [resource: string]: string };

  /**
   * Environment variables of the driver (or installer) container. `NVIDIA_VISIBLE_DEVICES` is always "void".
   * @default - none
   */
  readonly env?: { [name: string]: AgentEnvValue };

  /**
   * Driver-container shape: run gpu-operator's k8s-driver-manager as an init container before the
   * driver. It pauses the GPU components on the node (their `nvidia.com/gpu.deploy.*` labels become
   * `paused-for-driver-upgrade`), unloads a stale driver nothing holds, then restores the labels; the
   * DaemonSet gets a ClusterRole for that (nodes get/patch, pods get/list/watch, pods/eviction create,
   * daemonsets get) and mounts the ServiceAccount token.
   * Turn it off where none of those components run and no RBAC is wanted. Ignored by the installer shape.
   *
   * It never cordons, uncordons or evicts: cordon state belongs to the upgrade runbook (or whoever runs
   * it), which keeps a node that was cordoned before the upgrade cordoned after it. A driver still held
   * by GPU pods fails the init container until they are gone. From v0.10.0 on, a restarted driver pod
   * whose image, command, args and env are unchanged (`DRIVER_CONFIG_DIGEST`) keeps the loaded driver.
   * @default true
   */
  readonly driverManager?: boolean;

  /**
   * Image of the driver manager, pinned by tag or digest. Older managers (v0.6.4 on) behave the same
   * for cordons; before v0.10.0 they have no fast path, so every driver pod restart tries to reload the driver.
   * @default "nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0"
   */
  readonly driverManagerImage?: string;

  /**
   * More host directories or files for the driver (or installer) container.
   * @default - none
   */
  readonly extraHostPaths?: HostPathVolume[];

  /**
   * Update strategy. A driver cannot be swapped under running GPU workloads, hence OnDelete and the
   * node-by-node runbook. RollingUpdate is allowed when asked; surge never (two drivers on one node).
   * @default UpdateStrategy.onDelete()
   */
  readonly updateStrategy?: UpdateStrategy;

  /**
   * Seconds a stopping driver pod gets (unloading the modules, the preStop hook).
   * @default 120
   */
  readonly terminationGracePeriodSeconds?: number;

  /**
   * More labels on every object.
   * @default - none
   */
  readonly labels?: { [key: string]: string };

  /**
   * Node label (`key=value` or `key`) whose nodes the upgrade runbook leaves alone.
   * @default "nvidia.com/gpu-driver-upgrade.skip=true" (gpu-operator's)
   */
  readonly upgradeSkipNodeLabel?: string;

  /**
   * Label selector of pods the upgrade runbook waits for (jobs that must finish) rather than evicts.
   * @default - none: every GPU pod on the node is evicted
   */
  readonly upgradeWaitForPodSelector?: string;
}

/** Options of the rendered upgrade runbook. */
export interface GpuDriverRunbookOptions {
  /**
   * The manifest file the new version is applied from.
   * @default "<new manifest>"
   */
  readonly manifestFile?: string;

  /**
   * With rollout waves: the rollout group (a wave's name, or "fleet") whose DaemonSet the script
   * upgrades; it selects only that group's pods, so only that wave's nodes. `runbook()` ignores it
   * and has one section per promoted group.
   * @default - the only promoted group; with several promoted, the first one in wave order
   */
  readonly group?: string;

  /**
   * Seconds to wait for each new driver pod to become Ready.
   * @default - the startupProbe budget plus 5 minutes (driver container), 25 minutes (installer)
   */
  readonly readyTimeoutSeconds?: number;

  /**
   * Seconds an eviction may be refused (PodDisruptionBudget) before the runbook stops.
   * @default 300
   */
  readonly evictionTimeoutSeconds?: number;

  /**
   * Seconds to wait for pods matching `upgradeWaitForPodSelector` to finish.
   * @default 3600
   */
  readonly completionTimeoutSeconds?: number;
}

interface Volumes {
  readonly hostPaths: HostPathVolume[];
  /** Mounts of the container that holds the driver (main or installer init container). */
  readonly driverMounts: AgentVolumeMount[];
}

/**
 * NVIDIA driver initialisation on GPU nodes only, upgraded node by node.
 *
 * A privileged DaemonSet (hostPID, `/run/nvidia` with Bidirectional propagation and the other host
 * paths gpu-operator's driver DaemonSet mounts; the installer shape reads the host's kernel modules
 * and headers) with `system-node-critical` priority that tolerates the
 * `nvidia.com/gpu` taint, runs only on GPU nodes and steps aside where the driver is managed
 * elsewhere. It never requests `nvidia.com/gpu` and sets `NVIDIA_VISIBLE_DEVICES=void`: the device
 * plugin that advertises GPUs needs the driver first. In the driver-container shape gpu-operator's
 * k8s-driver-manager runs first as an init container (see `driverManager`). Updates are OnDelete by
 * default; `runbook()` renders the node-by-node upgrade procedure for this DaemonSet.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/gpu-driver.md
 */
export class GpuDriverDaemonSet extends Construct {
  /**
   * A release of a driver with these props: give the previous version's props as
   * `rollout.previous` while its waves are held (their `rollout` is ignored).
   */
  public static release(props: GpuDriverDaemonSetProps): AgentRelease {
    return constructRelease('GpuDriverDaemonSet', (scope, id) => new GpuDriverDaemonSet(scope, id, { ...props, rollout: undefined }));
  }

  /** The node agent that renders the DaemonSet. */
  public readonly agent: NodeAgentDaemonSet;
  /** The shape used. */
  public readonly shape: GpuDriverShapeKind;
  /** The startupProbe budget in seconds (driver-container shape only). */
  public readonly startupBudgetSeconds?: number;
  /** The node requirements of the driver that every node meets: GPU selection, opt-outs, kernel pinning. */
  public readonly nodeRequirements: NodeRequirement[];
  /** Alternatives of the GPU selection, one of which a node meets besides `nodeRequirements` (empty: none). */
  public readonly nodeRequirementAlternatives: NodeRequirement[][];
  /** The driver's alerts, if `alerts` is set. */
  public readonly alerts?: AgentAlerts;
  /** The gate Jobs of `rollout.gates`. */
  public readonly gates: ApiObject[];

  private readonly props: GpuDriverDaemonSetProps;
  private readonly validation?: DriverValidation;

  public constructor(scope: Construct, id: string, props: GpuDriverDaemonSetProps) {
    super(scope, id);
    startAgentConstruct(this, 'GpuDriverDaemonSet', 'GpuDriverDaemonSetProps', props);
    this.props = props;
    const shape = props.shape ?? GpuDriverShape.driverContainer();
    throwIfProblems(this, typeProblems('shape', shape.installerOptions ?? shape.driverContainerOptions ?? {},
      { ref: shape.kind === GpuDriverShapeKind.INSTALLER ? 'GpuDriverInstallerOptions' : 'GpuDriverContainerOptions' }));
    this.shape = shape.kind;
    const strategy = props.updateStrategy ?? UpdateStrategy.onDelete();

    const selection = props.gpuNodes ?? GpuNodeSelection.featureDiscovery();
    this.nodeRequirementAlternatives = selection.nodeRequirementAlternatives.map((alternative) => [...alternative]);
    const stepAside = (props.stepAsideWhen ?? []).map((r, i) => stepAsideRequirement(`stepAsideWhen[${i}]`, r));
    this.nodeRequirements = [
      ...selection.nodeRequirements,
      ...DEFAULT_OPT_OUTS,
      ...stepAside.filter((r): r is NodeRequirement => typeof r !== 'string'),
      ...(props.kernelVersions ? [NodeRequirement.in(KERNEL_VERSION_LABEL, [...props.kernelVersions])] : []),
    ];

    // Own checks first, so the driver-specific explanation wins over the base's generic one.
    const problems = [...stepAside.filter((r): r is string => typeof r === 'string'), ...this.checkProps(strategy)];
    const driverOptions = shape.driverContainerOptions ?? {};
    const startup = shape.kind === GpuDriverShapeKind.DRIVER_CONTAINER ? this.startupTiming(driverOptions, problems) : undefined;
    throwIfProblems(this, problems, { heading: 'invalid props' });
    const build = driverOptions.buildTimeSeconds;
    if (startup && build !== undefined && build < MIN_PLAUSIBLE_BUILD_SECONDS) {
      addWarning(this, `shape buildTimeSeconds ${build} is under ${MIN_PLAUSIBLE_BUILD_SECONDS / 60} minutes: a driver built from source against the node's `
        + 'kernel headers takes longer (gpu-operator allows 20 minutes), and the kubelet would kill the container mid-build, on every restart. '
        + `It is seconds: if you meant ${build} minutes, write ${build * 60}. Only a precompiled driver loads this fast`);
    }
    if (startup) this.warnBuildMemory(driverOptions);
    this.startupBudgetSeconds = startup
      ? startupBudgetSeconds({ periodSeconds: startup.period, failureThreshold: startup.threshold, initialDelaySeconds: startup.delay })
      : undefined;

    const manager = shape.kind === GpuDriverShapeKind.DRIVER_CONTAINER && (props.driverManager ?? true);
    const volumes = this.volumes(shape.kind === GpuDriverShapeKind.INSTALLER, manager);
    const common = this.commonAgentProps(strategy, volumes);
    if (shape.kind === GpuDriverShapeKind.INSTALLER) {
      this.agent = new NodeAgentDaemonSet(this, 'Agent', installerAgentProps(props, common, shape.installerOptions ?? {}, volumes));
    } else {
      this.agent = new NodeAgentDaemonSet(this, 'Agent', driverContainerAgentProps(props, common, driverOptions, startup!, manager));
      this.validation = driverOptions.readinessCheck === DriverReadinessCheck.MODULE_LOADED
        ? { containerName: 'nvidia-driver', command: ['cat', '/sys/module/nvidia/refcnt'] }
        : { containerName: 'nvidia-driver', command: ['nvidia-smi'] };
    }

    // The driver's own rules ride on the same render as the size and API checks: one render per synthesis.
    addObjectSizeValidation(this, { daemonSet: (manifest) => this.checkRenderedDaemonSet(manifest) });
    const finished = finishAgentConstruct(this, {
      agent: this.agent,
      rollout: props.rollout,
      // OnDelete pods are replaced by the runbook, node by node: an upgrade takes hours, not minutes.
      alerts: props.alerts ? { ...props.alerts, rolloutStuckFor: props.alerts.rolloutStuckFor ?? '24h' } : undefined,
      alertGroups: (target, options) => [gpuDriverAlertGroup(target, options, this.nodeTerms())],
      gateChecks: gpuDriverGateChecks,
    });
    this.alerts = finished.alerts;
    this.gates = finished.gates;
  }

  /** The props both shapes' NodeAgentDaemonSet share: its identity, placement, host paths and update strategy. */
  private commonAgentProps(strategy: UpdateStrategy, volumes: Volumes): CommonAgentProps {
    const props = this.props;
    return {
      ...podOptionsOf(props),
      rollout: agentRollout(this, props.rollout),
      ...nameAndNamespace(resolveIdentity(this, props, { name: 'gpu-driver', namespace: 'kube-system' })),
      createNamespace: props.createNamespace,
      component: DRIVER_COMPONENTS[0],
      labels: props.labels,
      hostPaths: volumes.hostPaths,
      hostPid: true,
      updateStrategy: strategy,
      nodeRequirements: this.nodeRequirements,
      nodeRequirementAlternatives: this.nodeRequirementAlternatives,
      tolerations: driverTolerations(props),
      tolerateControlPlane: props.tolerateControlPlane,
      priorityClassName: props.priorityClassName ?? 'system-node-critical',
      terminationGracePeriodSeconds: props.terminationGracePeriodSeconds ?? 120,
      // Two drivers on one node fight over the kernel module. As gpu-operator does for its
      // `app.kubernetes.io/component=nvidia-driver` pods (assets/state-driver/0500_daemonset.yaml), no
      // driver pod joins a node that still has one: its own DaemonSet's (a replaced pod waits for the old
      // one to terminate), another wave's, another GpuDriverDaemonSet's or gpu-operator's own, in any
      // namespace (the term has an empty namespaceSelector; gpu-operator's term sees only its own
      // namespace, but the scheduler also checks the existing pod's terms against the incoming pod, so
      // ours keeps gpu-operator's off a node where ours runs). With both installed, whichever driver pod
      // was bound to a node first keeps it; the other DaemonSet's pod for that node stays Pending
      // (the DaemonSet controller creates it, the scheduler never binds it).
      exclusiveComponents: [...DRIVER_COMPONENTS],
    };
  }

  /** The node-by-node upgrade runbook of this DaemonSet, as Markdown. */
  public runbook(options: GpuDriverRunbookOptions = {}): string {
    checkArgs('GpuDriverDaemonSet.runbook', [options], this);
    return this.runbookMarkdown(options);
  }

  /** The runbook as Markdown: a section per DaemonSet that runs the new version. */
  private runbookMarkdown(options: GpuDriverRunbookOptions): string {
    if (!this.props.rollout) {
      // one section per resource profile's DaemonSet (one without profiles)
      const labels = this.groupLabels('fleet');
      if (labels.length === 1) return renderRunbookMarkdown(this.runbookInput('runbook', options, 'fleet'));
      return labels.map((l) => renderRunbookMarkdown(this.runbookInput('runbook', options, l)).replace(/^# /, '# Profile `' + l + '`: ')).join('\n');
    }
    // One section per DaemonSet that runs the new version, in wave order; held waves keep theirs.
    const promoted = this.agent.promotedGroups;
    const held = this.agent.rolloutGroups.filter((g) => !promoted.includes(g));
    if (promoted.length === 0) {
      return `# Upgrade runbook over rollout waves: ${this.agent.namespace}/${this.agent.name}\n\nNo rollout group runs the new version yet `
        + '(rollout.promoted promotes no wave): there is nothing to upgrade. Promote the first wave to get its section.\n';
    }
    const intro = [
      `# Upgrade runbook over rollout waves: ${this.agent.namespace}/${this.agent.name}`,
      '',
      `The new version is promoted to ${promoted.map((g) => `\`${g}\``).join(', ')}; run the sections below in this order, `
        + 'one wave at a time, each selecting only its own DaemonSet\'s pods and so only that wave\'s nodes. '
        + 'Nodes already on the current revision are skipped.'
        + (held.length > 0 ? ` Held (nothing to do): ${held.map((g) => `\`${g}\``).join(', ')}.` : ''),
      '',
    ].join('\n');
    return [intro, ...promoted.flatMap((g) => this.groupLabels(g))
      .map((g) => renderRunbookMarkdown(this.runbookInput('runbook', options, g)).replace(/^# /, '# Wave `' + g + '`: '))].join('\n');
  }

  /** The same procedure as a bash script (needs kubectl and jq); with rollout waves, for one group's DaemonSet (`group`). */
  public runbookScript(options: GpuDriverRunbookOptions = {}): string {
    checkArgs('GpuDriverDaemonSet.runbookScript', [options], this);
    const promoted = this.agent.promotedGroups;
    if (promoted.length === 0) {
      throw new ValidationError(this, 'runbookScript: no rollout group runs the new version yet (rollout.promoted promotes '
        + 'no wave), so there is nothing to upgrade; promote the first wave, e.g. promoted: Promotion.through("'
        + `${this.agent.rolloutGroups[0]}"), and render the script for it`);
    }
    // with resource profiles a group has a DaemonSet per profile, named by its rollout-group label (`<wave>.<profile>`)
    const groups = promoted.flatMap((g) => this.groupLabels(g));
    const group = options.group ?? groups[0];
    if (!groups.includes(group)) {
      throw new ValidationError(this, `runbookScript group "${group}" is not a promoted rollout group; `
        + `choose one of ${groups.map((g) => `"${g}"`).join(', ')}`);
    }
    return renderRunbookScript(this.runbookInput('runbookScript', options, group));
  }

  /** The rollout-group labels of a group's DaemonSets: the group itself, then `<group>.<profile>` per resource profile. */
  private groupLabels(group: string): string[] {
    return this.agent.daemonSetsOfGroup(group).map((ds) => ds.podMetadata.getLabel(ROLLOUT_GROUP_LABEL) ?? group);
  }

  /** The runbook's input for one group's DaemonSet, refused by this construct (as `method`'s) if a value is wrong. */
  private runbookInput(method: 'runbook' | 'runbookScript', options: GpuDriverRunbookOptions, group: string): RunbookInput {
    const strategy = this.agent.updateStrategy;
    const ds = this.agent.daemonSets.find((d) => d.podMetadata.getLabel(ROLLOUT_GROUP_LABEL) === group)!;
    const input: RunbookInput = {
      namespace: this.agent.namespace,
      name: ds.name,
      podSelector: { ...this.agent.selectorLabels, [ROLLOUT_GROUP_LABEL]: group },
      gpuNodeSelectors: this.nodeTerms().map(requirementsSelector),
      skipNodeLabel: this.props.upgradeSkipNodeLabel ?? DEFAULT_SKIP_NODE_LABEL,
      waitForPodSelector: this.props.upgradeWaitForPodSelector,
      readyTimeoutSeconds: options.readyTimeoutSeconds ?? readyWaitSeconds(this.startupBudgetSeconds),
      evictionTimeoutSeconds: options.evictionTimeoutSeconds,
      completionTimeoutSeconds: options.completionTimeoutSeconds,
      validation: this.validation,
      updateStrategy: strategy.type === UpdateStrategyType.ROLLING_UPDATE ? 'RollingUpdate' : 'OnDelete',
      rollingUpdateMaxUnavailable: strategy.maxUnavailable
        ? (strategy.maxUnavailable.isPercent ? strategy.maxUnavailable.toString() : strategy.maxUnavailable.amount)
        : undefined,
      manifestFile: options.manifestFile,
    };
    throwIfProblems(this, runbookInputProblems(input), { at: method });
    return input;
  }

  /**
   * A memory limit under what a build from source needs: warned, not refused (the build's peak grows with the
   * node's cores, so a small node may build in less). A precompiled driver builds nothing: its image tag is
   * `<branch>-<kernel>-<os>`, or the driver is pinned to the kernels it was precompiled for (`kernelVersions`),
   * or its declared build time is under a few minutes.
   */
  private warnBuildMemory(o: GpuDriverContainerOptions): void {
    const p = this.props;
    const limit = p.resources?.memoryLimit;
    const precompiled = isPrecompiledDriverImage(p.image) || p.kernelVersions !== undefined
      || (o.buildTimeSeconds !== undefined && o.buildTimeSeconds < MIN_PLAUSIBLE_BUILD_SECONDS);
    if (limit === undefined || precompiled || !(parseQuantity(limit) < parseQuantity(DRIVER_BUILD_MEMORY))) return;
    addWarning(this, `resources.memoryLimit "${limit}" is below the ${DRIVER_BUILD_MEMORY} a driver built from source needs (the default): `
      + 'the module is compiled in parallel on the node, and a build over the limit is OOM-killed and restarts, on every node, until it fits. '
      + `Raise resources.memoryLimit to "${DRIVER_BUILD_MEMORY}" (more on large nodes), or use a precompiled driver image `
      + '("<branch>-<kernel>-<os>" tag, with kernelVersions)');
  }

  private checkProps(strategy: UpdateStrategy): string[] {
    const p = this.props;
    const problems: string[] = [];
    for (const resource of Object.keys(p.extendedResources ?? {}).sort()) {
      if (isGpuResource(resource)) problems.push(gpuRequestProblem('extendedResources', resource));
      // A resource name is a label key (domain-prefixed outside the kubernetes.io namespace); its value a quantity.
      problems.push(...checkLabelKey('extendedResources', resource));
      problems.push(...checkQuantity(`extendedResources["${resource}"]`, p.extendedResources![resource]));
    }
    problems.push(...checkResources('resources', p.resources));
    const tag = driverImageTagProblem('image', p.image);
    if (tag) problems.push(tag);
    // Checked before cdk8s-plus, whose own message ("Init containers must not have a ... probe") names no container.
    (p.shape?.installerOptions?.extraInitContainers ?? []).forEach((c, i) => {
      for (const probe of ['readiness', 'liveness', 'startup'] as const) {
        if (c[probe] !== undefined) {
          problems.push(`shape extraInitContainers[${i}] ("${c.name}"): an init container runs to completion and takes no ${probe} probe; remove it`);
        }
      }
    });
    problems.push(...checkTolerations('tolerations', p.tolerations));
    problems.push(...checkLabels('labels', p.labels));
    if (p.priorityClassName !== undefined) problems.push(...checkDnsSubdomain('priorityClassName', p.priorityClassName));
    problems.push(...checkInt64('terminationGracePeriodSeconds', p.terminationGracePeriodSeconds));
    if (p.optOutRequirements !== undefined) {
      problems.push('optOutRequirements is replaced by stepAsideWhen: despite its name it listed requirements a node had to meet for the driver to run '
        + '(and replaced the built-in opt-outs), so [in("gpu-owner", ["gpu-operator"])] ran the driver only there. stepAsideWhen lists the conditions '
        + 'under which the driver steps aside, besides the built-in ones; give it each requirement negated (notIn(k, v) becomes in(k, v), '
        + 'doesNotExist(k) becomes exists(k)) and drop the built-in ones');
    }
    if (p.upgradeSkipNodeLabel !== undefined) problems.push(...checkSkipNodeLabel(p.upgradeSkipNodeLabel));
    // Checked here, not first in runbook(): a bad selector fails the synthesis, not the upgrade day.
    if (p.upgradeWaitForPodSelector !== undefined) problems.push(...checkLabelSelector('upgradeWaitForPodSelector', p.upgradeWaitForPodSelector));
    for (const [i, volume] of (p.extraHostPaths ?? []).entries()) {
      problems.push(...checkAbsolutePath(`extraHostPaths[${i}].hostPath`, volume.hostPath));
      if (volume.mountPath !== undefined) problems.push(...checkAbsolutePath(`extraHostPaths[${i}].mountPath`, volume.mountPath));
    }
    if (p.env && Object.keys(p.env).includes('NVIDIA_VISIBLE_DEVICES')) {
      problems.push('env sets NVIDIA_VISIBLE_DEVICES; the driver keeps it "void" so the NVIDIA container runtime injects no GPU into it. Remove it.');
    }
    if (p.env && Object.keys(p.env).includes('DRIVER_CONFIG_DIGEST')) {
      problems.push('env sets DRIVER_CONFIG_DIGEST; the construct computes it from the image, command, args and env (the driver manager '
        + 'reloads the driver only when it changes). Remove it.');
    }
    if (strategy.type === UpdateStrategyType.ROLLING_UPDATE && strategy.surges) {
      problems.push(`updateStrategy: RollingUpdate with maxSurge ${strategy.maxSurge!.toString()} would start a second driver pod beside the `
        + 'running one: two drivers cannot load one kernel module, and the old one cannot unload under GPU workloads. '
        + 'Use UpdateStrategy.onDelete() with the runbook, or a rolling update with maxUnavailable only (e.g. UpdateStrategy.oneAtATime()).');
    }
    const terms = this.nodeTerms().map((matchExpressions) => ({ matchExpressions }));
    const selection = gpuSelectionProblem({ 'kubernetes.io/os': 'linux' }, terms);
    if (selection) problems.push(`gpuNodes: ${selection}`);
    if (p.kernelVersions !== undefined) {
      if (p.kernelVersions.length === 0) problems.push('kernelVersions is empty, which no node matches; list the kernels (e.g. ["5.15.0-1048-aws"]) or leave it unset');
      for (const version of p.kernelVersions) problems.push(...checkLabelValue('kernelVersions', version));
    }
    if (p.seLinuxLevel !== undefined && !/^s\d+(-s\d+)?(:c\d+([.,]c\d+)*)?$/.test(p.seLinuxLevel)) {
      problems.push(`seLinuxLevel "${p.seLinuxLevel}" is not an SELinux MLS level such as "s0" or "s0:c123,c456"`);
    }
    for (const volume of p.extraHostPaths ?? []) {
      if (RESERVED_VOLUMES.includes(volume.name)) problems.push(`extraHostPaths: the volume name "${volume.name}" is used by the driver's own mounts; choose another`);
    }
    return problems;
  }

  /** The driver's node requirements as ORed terms: one per GPU selection alternative, each with the common requirements. */
  private nodeTerms(): NodeSelectorRequirementJson[][] {
    const common = this.nodeRequirements.map((r) => r._toJson());
    if (this.nodeRequirementAlternatives.length === 0) return [common];
    return this.nodeRequirementAlternatives.map((alternative) => [...alternative.map((r) => r._toJson()), ...common]);
  }

  private startupTiming(o: GpuDriverContainerOptions, problems: string[]): { period: number; threshold: number; delay: number } {
    const build = o.buildTimeSeconds ?? DEFAULT_DRIVER_BUILD_SECONDS;
    const period = o.startupPeriodSeconds ?? DEFAULT_STARTUP_PERIOD_SECONDS;
    const delay = o.startupInitialDelaySeconds ?? 60;
    const before = problems.length;
    problems.push(...checkWholeNumber('shape buildTimeSeconds', build, 1));
    problems.push(...checkWholeNumber('shape startupPeriodSeconds', period, 1));
    problems.push(...checkWholeNumber('shape startupInitialDelaySeconds', delay, 0));
    problems.push(...checkWholeNumber('shape startupFailureThreshold', o.startupFailureThreshold, 1));
    problems.push(...checkWholeNumber('shape probeTimeoutSeconds', o.probeTimeoutSeconds, 1));
    if (o.readyMarker !== undefined) {
      problems.push(...checkAbsolutePath('shape readyMarker', o.readyMarker));
      if (!/^\/[A-Za-z0-9._/-]+$/.test(o.readyMarker)) problems.push(`shape readyMarker "${o.readyMarker}" may contain only letters, digits, ".", "_", "-" and "/" (it is used in a shell command)`);
    }
    if (problems.length > before) return { period: 1, threshold: 1, delay: 0 };
    const threshold = o.startupFailureThreshold ?? failureThresholdFor(build, period, delay);
    const budget = startupBudgetProblem({ periodSeconds: period, failureThreshold: threshold, initialDelaySeconds: delay }, build);
    if (budget) problems.push(`shape startupFailureThreshold: ${budget}`);
    return { period, threshold, delay };
  }

  private volumes(installer: boolean, manager: boolean): Volumes {
    const own = installer ? INSTALLER_VOLUMES : [...DRIVER_CONTAINER_VOLUMES, ...(manager ? DRIVER_MANAGER_VOLUMES : [])];
    const all = [...own, ...(this.props.extraHostPaths ?? [])];
    if (!installer) return { hostPaths: all, driverMounts: [] };
    // Installer shape: the mounts belong to the installer init container; `pause` needs none.
    return {
      hostPaths: all.map((v) => ({ ...v, mountInMainContainer: v.mountInMainContainer ?? false })),
      driverMounts: all.map((v) => ({
        volume: v.name, mountPath: v.mountPath ?? v.hostPath, readOnly: v.readOnly ?? true, propagation: v.propagation,
      })),
    };
  }

  /** Late net on the rendered DaemonSet: catches what escape hatches added after construction. */
  /** Driver rules on one rendered DaemonSet of this construct. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private checkRenderedDaemonSet(manifest: any): string[] {
    const spec = manifest.spec?.template?.spec ?? {};
    const problems: string[] = [
      ...gpuResourceRequests(spec).map((r) => gpuRequestProblem(`container "${r.container}"`, r.resource)),
      ...visibleDevicesProblems(spec),
    ];
    const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
    const selection = gpuSelectionProblem(spec.nodeSelector ?? {}, terms);
    if (selection) problems.push(selection);
    const strategy = manifest.spec?.updateStrategy;
    const surge = strategy?.rollingUpdate?.maxSurge;
    if (strategy?.type === 'RollingUpdate' && surge !== undefined && surge !== 0 && surge !== '0%') {
      problems.push(`updateStrategy: RollingUpdate with maxSurge ${surge} would start a second driver pod beside the running one`);
    }
    return problems.map((m) => `${nameOf(this)} (DaemonSet ${manifest.metadata?.name}): ${m}`);
  }
}
brand(GpuDriverDaemonSet, 'GpuDriverDaemonSet');

/** The toleration of the taint GPU pools usually carry. */
const GPU_TOLERATION: AgentToleration = { key: 'nvidia.com/gpu', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE };

/** The GPU toleration (unless turned off), then the user's, without repeating it. */
function driverTolerations(props: GpuDriverDaemonSetProps): AgentToleration[] {
  const same = (t: AgentToleration) => t.key === GPU_TOLERATION.key && t.operator === GPU_TOLERATION.operator && t.effect === GPU_TOLERATION.effect
    && t.value === undefined && t.tolerationSeconds === undefined;
  const own = props.tolerateGpuTaint ?? true ? [GPU_TOLERATION] : [];
  return [...own, ...(props.tolerations ?? []).filter((t) => !(own.length > 0 && same(t)))];
}

/**
 * Driver-container shape: exactly the host paths gpu-operator's driver DaemonSet gives `nvidia-driver-ctr`.
 * The image builds and installs the driver inside its own root (its own /lib/modules and /usr/src, which
 * it writes under `set -eu`) and exposes that root to the host through /run/nvidia/driver, so no host
 * module tree or headers are mounted. Upstream leaves some hostPath types unset; each gets the type its
 * path has on every supported node.
 */
const DRIVER_CONTAINER_VOLUMES: HostPathVolume[] = [
  // The driver root (/run/nvidia/driver) and the ready marker, shared with the host and the other GPU components.
  { name: 'run-nvidia', hostPath: '/run/nvidia', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false, propagation: MountPropagation.BIDIRECTIONAL },
  // The driver starts nv-fabricmanager on NVSwitch systems; its socket and state live here.
  { name: 'run-nvidia-fabricmanager', hostPath: '/run/nvidia-fabricmanager', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false },
  // vGPU guests: nvidia-topologyd, started by the driver, publishes the virtual GPU topology here for NCCL.
  { name: 'run-nvidia-topologyd', hostPath: '/run/nvidia-topologyd', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false },
  // nvidia-installer and the driver write their logs here, kept on the host for debugging.
  { name: 'var-log', hostPath: '/var/log', type: HostPathType.DIRECTORY, readOnly: false },
  // Not mounted: the host's /dev/log. gpu-operator mounts it untyped (assets/state-driver/0500_daemonset.yaml,
  // volume dev-log), so only for the driver's syslog messages; typed Socket, a node without syslog rejects
  // the pod, and untyped, a missing socket becomes a directory on the host. The driver's and
  // nvidia-installer's logs still reach the host through /var/log.
  // The host OS and version, to pick the kernel headers and packages matching the node.
  { name: 'os-release', hostPath: '/etc/os-release', mountPath: '/host-etc/os-release', type: HostPathType.FILE, readOnly: true },
  // MOFED sources, when the network operator's driver is on the node, to build nvidia-peermem against them.
  { name: 'mlnx-ofed-usr-src', hostPath: '/run/mellanox/drivers/usr/src', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false, propagation: MountPropagation.HOST_TO_CONTAINER },
  // The MOFED driver root, whose readiness the driver waits for before loading nvidia-peermem.
  { name: 'run-mellanox-drivers', hostPath: '/run/mellanox/drivers', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false, propagation: MountPropagation.HOST_TO_CONTAINER },
  // The driver sets the host's policy for onlining hot-plugged memory (coherent GPU memory) before loading,
  // under /sys/devices/system/memory. As upstream (volume host-sys-devices-system, Directory): the whole
  // /sys/devices/system, which every kernel has; auto_online_blocks exists only with memory hotplug, so a
  // File-typed mount of it fails the pod elsewhere.
  { name: 'host-sys-devices-system', hostPath: '/sys/devices/system', type: HostPathType.DIRECTORY, readOnly: false },
  // The driver points the kernel's firmware search path at its own /lib/firmware, so the host kernel finds the GSP firmware.
  { name: 'firmware-search-path', hostPath: '/sys/module/firmware_class/parameters/path', type: HostPathType.FILE, readOnly: false },
  // The driver installs its firmware here; it is the host path the kernel's search path names.
  { name: 'nv-firmware', hostPath: '/run/nvidia/driver/lib/firmware', mountPath: '/lib/firmware', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false },
];

/** Installer shape: the installer (a different image) loads the driver against the host's own kernel tree. */
const INSTALLER_VOLUMES: HostPathVolume[] = [
  // Shared with the host and the other GPU components: the driver root, its ready marker.
  { name: 'run-nvidia', hostPath: '/run/nvidia', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false, propagation: MountPropagation.BIDIRECTIONAL },
  // Device nodes the driver creates must appear on the host.
  { name: 'dev', hostPath: '/dev', type: HostPathType.DIRECTORY, readOnly: false },
  // The host's modules and headers, read by the installer, never written.
  { name: 'lib-modules', hostPath: '/lib/modules', type: HostPathType.DIRECTORY, readOnly: true },
  { name: 'usr-src', hostPath: '/usr/src', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: true },
  { name: 'os-release', hostPath: '/etc/os-release', mountPath: '/host-etc/os-release', type: HostPathType.FILE, readOnly: true },
  { name: 'var-log', hostPath: '/var/log', type: HostPathType.DIRECTORY, readOnly: false },
];

/** Where the driver steps aside by default: GKE-managed drivers, nodes opted out or with a pre-installed driver. */
const DEFAULT_OPT_OUTS = [
  NodeRequirement.doesNotExist('cloud.google.com/gke-gpu-driver-version'),
  NodeRequirement.notIn(DRIVER_DEPLOY_LABEL, DRIVER_OPT_OUT_VALUES),
];

/**
 * The node requirement under which a node does NOT meet `condition` (the driver runs there), or the
 * problem. Each operator's negation is one requirement (`NotIn` also matches a node without the
 * label, as stepping aside on `In` means), except Gt and Lt: "not greater" includes the missing label.
 */
function stepAsideRequirement(prop: string, condition: NodeRequirement): NodeRequirement | string {
  const problems = condition.problems();
  if (problems.length > 0) return `${prop}: ${problems.join('; ')}`;
  switch (condition.operator) {
    case NodeOperator.IN: return NodeRequirement.notIn(condition.key, [...condition.values]);
    case NodeOperator.NOT_IN: return NodeRequirement.in(condition.key, [...condition.values]);
    case NodeOperator.EXISTS: return NodeRequirement.doesNotExist(condition.key);
    case NodeOperator.DOES_NOT_EXIST: return NodeRequirement.exists(condition.key);
    default:
      return `${prop}: ${condition.operator} on "${condition.key}" cannot be a condition to step aside on (a node where it does not hold may lack the label `
        + 'or have a value on the other side, two node-affinity terms); list the values with NodeRequirement.in, or narrow gpuNodes instead';
  }
}

/** The `app.kubernetes.io/component` of driver pods: ours (first), and gpu-operator's. */
const DRIVER_COMPONENTS = ['gpu-driver', 'nvidia-driver'];

/** Names of the driver's own volumes in either shape; extraHostPaths may not reuse them. */
const RESERVED_VOLUMES = [...new Set([...DRIVER_CONTAINER_VOLUMES, ...DRIVER_MANAGER_VOLUMES, ...INSTALLER_VOLUMES].map((v) => v.name))].sort();

/** What both shapes' NodeAgentDaemonSet props share; each shape adds its containers. */
type CommonAgentProps = Omit<NodeAgentDaemonSetProps, 'image'>;

/** The driver's environment: the user's, with no GPU made visible to the driver itself. */
function driverEnvOf(props: GpuDriverDaemonSetProps): { [name: string]: AgentEnvValue } {
  return { ...props.env, NVIDIA_VISIBLE_DEVICES: AgentEnvValue.fromValue('void') };
}

/** The resources of the container that holds the driver, with their defaults. */
function driverResourcesOf(props: GpuDriverDaemonSetProps): AgentResources {
  return {
    cpuRequest: props.resources?.cpuRequest ?? '100m',
    cpuLimit: props.resources?.cpuLimit,
    memoryRequest: props.resources?.memoryRequest ?? '256Mi',
    // gpu-operator sets no resources (assets/state-driver/0500_daemonset.yaml). A limit stays here: a
    // system-node-critical pod without one can take the node's memory from the kubelet. The build's peak
    // grows with the node's cores (the kernel module is compiled in parallel), so 4Gi is a default for
    // ordinary GPU nodes: on large ones raise `resources.memoryLimit`; an OOMKilled build restarts until it fits.
    memoryLimit: props.resources?.memoryLimit ?? DRIVER_BUILD_MEMORY,
  };
}

/** Only the driver container gets the extended resources and the SELinux level. */
function driverSecurityOf(props: GpuDriverDaemonSetProps): Pick<AgentContainer, 'extendedResources' | 'seLinuxLevel'> {
  return { extendedResources: props.extendedResources, seLinuxLevel: props.seLinuxLevel };
}

/** The installer shape: a pause container, the driver installed by a privileged init container. */
function installerAgentProps(
  props: GpuDriverDaemonSetProps, common: CommonAgentProps, o: GpuDriverInstallerOptions, volumes: Volumes,
): NodeAgentDaemonSetProps {
  return {
    ...common,
    containerName: 'pause',
    image: o.pauseImage ?? DEFAULT_PAUSE_IMAGE,
    runAsUser: PAUSE_UID,
    env: { NVIDIA_VISIBLE_DEVICES: AgentEnvValue.fromValue('void') },
    resources: { cpuRequest: '10m', memoryRequest: '16Mi', memoryLimit: '32Mi' },
    initContainers: [
      {
        name: 'nvidia-driver-installer',
        image: props.image,
        command: o.command,
        args: o.args,
        env: sortedRecord(driverEnvOf(props)),
        resources: driverResourcesOf(props),
        privileged: true,
        runAsRoot: true,
        readOnlyRootFilesystem: false,
        ...driverSecurityOf(props),
        mounts: volumes.driverMounts,
      },
      ...(o.extraInitContainers ?? []),
      ...(props.initContainers ?? []),
    ],
  };
}

/** The startup, readiness and preStop commands of the driver container. */
function driverProbes(o: GpuDriverContainerOptions, startup: { period: number; threshold: number; delay: number }) {
  const marker = o.readyMarker ?? DEFAULT_READY_MARKER;
  const check = o.readinessCheck === DriverReadinessCheck.MODULE_LOADED ? 'test -e /sys/module/nvidia/refcnt' : 'nvidia-smi';
  // As upstream's startup-probe.sh (assets/state-driver/0400_configmap.yaml): the module is loaded, and the
  // daemons the driver starts (persistenced, fabricmanager) report Ready when the driver writes their status.
  const daemonsStatus = DRIVER_DAEMONS_STATUS;
  const startupCheck = 'test -f /sys/module/nvidia/refcnt'
    + ` && { [ ! -f ${daemonsStatus} ] || [ "$(cat ${daemonsStatus})" = Ready ]; }`
    + (o.readinessCheck === DriverReadinessCheck.MODULE_LOADED ? '' : ' && nvidia-smi');
  const timeoutSeconds = o.probeTimeoutSeconds ?? 60;
  const timeout = Duration.seconds(timeoutSeconds);
  return {
    startup: AgentProbe.fromCommand(['sh', '-c', `${startupCheck} && mkdir -p ${dirname(marker)} && touch ${marker}`], {
      initialDelaySeconds: Duration.seconds(startup.delay),
      periodSeconds: Duration.seconds(startup.period),
      failureThreshold: startup.threshold,
      timeoutSeconds: timeout,
    }),
    readiness: AgentProbe.fromCommand(['sh', '-c', check], {
      // Never probe again before the previous probe may have timed out.
      periodSeconds: Duration.seconds(Math.max(30, timeoutSeconds)),
      failureThreshold: 3,
      timeoutSeconds: timeout,
    }),
    preStop: AgentHandler.fromCommand(['rm', '-f', marker, daemonsStatus]),
  };
}

/** The driver-container shape: the driver image runs as the main container, after the driver manager. */
function driverContainerAgentProps(
  props: GpuDriverDaemonSetProps, common: CommonAgentProps, o: GpuDriverContainerOptions,
  startup: { period: number; threshold: number; delay: number }, manager: boolean,
): NodeAgentDaemonSetProps {
  const driverEnv = driverEnvOf(props);
  // What decides the install, digested for the manager's and the driver image's fast path.
  const digest = driverConfigDigest({
    image: props.image,
    command: o.command ?? null,
    args: o.args ?? null,
    env: Object.keys(driverEnv).sort().map((name) => [name, driverEnv[name]._toKplus().value ?? null, driverEnv[name]._toKplus().valueFrom ?? null]),
  });
  return {
    ...common,
    containerName: 'nvidia-driver',
    image: props.image,
    command: o.command,
    args: o.args,
    env: sortedRecord(manager ? { ...driverEnv, DRIVER_CONFIG_DIGEST: AgentEnvValue.fromValue(digest) } : driverEnv),
    resources: driverResourcesOf(props),
    privileged: true,
    runAsRoot: true,
    readOnlyRootFilesystem: false,
    ...driverSecurityOf(props),
    ...driverProbes(o, startup),
    initContainers: [
      ...(manager ? [driverManagerContainer(props.driverManagerImage ?? DEFAULT_DRIVER_MANAGER_IMAGE, digest)] : []),
      ...(props.initContainers ?? []),
    ],
    rbacRules: manager ? DRIVER_MANAGER_RBAC : undefined,
  };
}

/** `key=value` or `key`, as the prop's doc says. */
function checkSkipNodeLabel(label: string): string[] {
  const [key, ...value] = label.split('=');
  return [
    ...checkLabelKey('upgradeSkipNodeLabel', key),
    ...(value.length > 0 ? checkLabelValue('upgradeSkipNodeLabel value', value.join('=')) : []),
  ];
}

function dirname(path: string): string {
  return path.substring(0, path.lastIndexOf('/')) || '/';
}

/** The name and namespace of a resolved identity (the GPU driver adopts no install, so it has no identity labels). */
function nameAndNamespace(identity: AgentIdentity): { name: string; namespace: string } {
  return { name: identity.name, namespace: identity.namespace };
}
