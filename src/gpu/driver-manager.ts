/**
 * The k8s-driver-manager init container gpu-operator runs before its driver container, and the RBAC
 * it needs.
 *
 * Pure module: no constructs, only the container spec, its host paths and its rules.
 */
import { createHash } from 'crypto';
import { AgentEnvFieldPath, AgentEnvValue } from '../agent/container-inputs';
import { AgentContainer, AgentPolicyRule, HostPathType, HostPathVolume, MountPropagation } from '../agent/options';

/** The driver manager gpu-operator's chart pins beside driver 595.91.07 (deployments/gpu-operator/values.yaml). */
export const DEFAULT_DRIVER_MANAGER_IMAGE = 'nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0';

/**
 * The first k8s-driver-manager release with the fast path: it compares `DRIVER_CONFIG_DIGEST` with the
 * digest the running driver wrote to /run/nvidia/nvidia-driver.state and, when they match and the module
 * is loaded, leaves the driver (and the GPU pods using it) alone (cmd/driver-manager/main.go
 * `shouldSkipUninstall`, v0.10.0 on). Older managers ignore the variable and always try to unload.
 */
export const FAST_PATH_SINCE: readonly [number, number, number] = [0, 10, 0];

/** The `vX.Y.Z` of a driver manager image's tag, or undefined (digest-pinned, other tag). */
export function driverManagerVersion(image: string): [number, number, number] | undefined {
  const match = /:v(\d+)\.(\d+)\.(\d+)(?:[-@].*)?$/.exec(image);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Whether the manager image has the fast path: true, false, or undefined when its tag tells no version. */
export function driverManagerHasFastPath(image: string): boolean | undefined {
  const version = driverManagerVersion(image);
  if (version === undefined) return undefined;
  for (let i = 0; i < 3; i++) if (version[i] !== FAST_PATH_SINCE[i]) return version[i] > FAST_PATH_SINCE[i];
  return true;
}

/**
 * The digest of what decides the driver install (image, command, args, env), as gpu-operator computes
 * one after rendering its driver DaemonSet and sets it as `DRIVER_CONFIG_DIGEST` on the manager and the
 * driver container (controllers/object_controls.go, `extractDriverInstallConfig`): the driver image
 * writes it to /run/nvidia/nvidia-driver.state once loaded, and an unchanged digest on the next start
 * lets both skip the reload.
 */
export function driverConfigDigest(config: unknown): string {
  return createHash('sha256').update(JSON.stringify(config)).digest('hex').substring(0, 16);
}

/** Name of the init container, as in gpu-operator's driver DaemonSet. */
export const DRIVER_MANAGER_CONTAINER = 'k8s-driver-manager';

/**
 * Host paths only the driver manager mounts (the driver container shares `run-nvidia` and
 * `run-mellanox-drivers` with it); kept out of the driver container.
 */
export const DRIVER_MANAGER_VOLUMES: HostPathVolume[] = [
  // The host root, read-only: the manager looks for a driver installed on the host itself.
  { name: 'host-root', hostPath: '/', type: HostPathType.DIRECTORY, readOnly: true, propagation: MountPropagation.HOST_TO_CONTAINER, mountInMainContainer: false },
  // sysfs, writable: the manager unloads a stale nvidia module and unbinds devices before the new driver loads.
  { name: 'host-sys', hostPath: '/sys', type: HostPathType.DIRECTORY, readOnly: false, mountInMainContainer: false },
];

/**
 * Whether k8s-driver-manager touches the node's cordon (cordons before evicting, uncordons after, on
 * success, on failure, and on a node with no driver loaded), from its env and the node's
 * `nvidia.com/gpu-driver-upgrade-enabled` annotation. As v0.12.0 cmd/driver-manager/main.go
 * `isGPUPodEvictionEnabled` / `isAutoDrainEnabled` (false whenever `isDriverAutoUpgradePolicyEnabled`,
 * i.e. the annotation is exactly "true") and `cleanupOnFailure`; the v0.6.10 shell script's
 * `_is_gpu_pod_eviction_enabled` / `_is_auto_drain_enabled` agree. Env values other than "true" are
 * false there (urfave/cli parses booleans with strconv.ParseBool: "1", "t", "TRUE" are true too).
 */
export function managerTouchesCordon(env: Readonly<Record<string, string | undefined>>, upgradeAnnotation: string | undefined): boolean {
  if (upgradeAnnotation === 'true') return false;
  // Both default to true when unset (main.go flags ENABLE_AUTO_DRAIN / ENABLE_GPU_POD_EVICTION, Value: true).
  const on = (name: string) => env[name] === undefined || ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(env[name]!);
  return on('ENABLE_GPU_POD_EVICTION') || on('ENABLE_AUTO_DRAIN');
}

/**
 * The init container. Env and mounts as gpu-operator's DaemonSet (assets/state-driver/0500_daemonset.yaml),
 * except where said.
 *
 * Who cordons: the runbook (or the operator running it), never the manager. The manager cordons,
 * evicts GPU pods and uncordons only while `ENABLE_GPU_POD_EVICTION` or `ENABLE_AUTO_DRAIN` is true
 * and the node lacks the annotation `nvidia.com/gpu-driver-upgrade-enabled=true` that gpu-operator's
 * upgrade controller sets (v0.12.0 cmd/driver-manager/main.go `isGPUPodEvictionEnabled`,
 * `isAutoDrainEnabled`, `cleanupOnFailure`; v0.6.10 driver-manager `_is_gpu_pod_eviction_enabled`,
 * `_exit_failed`, `_exit_success`). Then it uncordons on success and on failure alike, and even on a
 * node with no driver loaded: it would undo the runbook's cordon before the new driver is built, and
 * uncordon a node cordoned for other work whenever a driver pod restarts. So both are false, on every
 * manager version: the manager only pauses the GPU components it knows (their `nvidia.com/gpu.deploy.*`
 * labels), unloads a driver nothing holds, and restores the labels. Without gpu-operator it still
 * writes each `nvidia.com/gpu.deploy.*` label it read as absent back with an empty value (v0.12.0
 * `rescheduleGPUOperatorComponents` / `maybeSetTrue("")`): about ten empty labels per node, which
 * select nothing; `driverManager: false` avoids them where no gpu-operator component runs. A driver still held by GPU pods
 * fails the init container (Init:CrashLoopBackOff, the old driver keeps serving) until the runbook
 * has evicted them.
 */
export function driverManagerContainer(image: string, configDigest: string): AgentContainer {
  return {
    name: DRIVER_MANAGER_CONTAINER,
    image,
    command: ['driver-manager'],
    args: ['uninstall_driver'],
    env: {
      NODE_NAME: AgentEnvValue.fromField(AgentEnvFieldPath.NODE_NAME),
      // The NVIDIA container runtime injects no GPU into it, as for the driver.
      NVIDIA_VISIBLE_DEVICES: AgentEnvValue.fromValue('void'),
      // Upstream: true. Evicting would make the manager cordon and uncordon (see above).
      ENABLE_GPU_POD_EVICTION: AgentEnvValue.fromValue('false'),
      ENABLE_AUTO_DRAIN: AgentEnvValue.fromValue('false'),
      DRAIN_USE_FORCE: AgentEnvValue.fromValue('false'),
      // Selects the pods a drain would delete; unused with auto drain off. upgradeWaitForPodSelector
      // names pods to wait for, the opposite meaning, so it is not passed here.
      DRAIN_POD_SELECTOR_LABEL: AgentEnvValue.fromValue(''),
      // Upstream: "0s", which waits forever on a PodDisruptionBudget that allows no eviction. Unused
      // with both switches off; bounded anyway, as gpu-operator's upgrade policy default (drain.timeoutSeconds 300).
      DRAIN_TIMEOUT_SECONDS: AgentEnvValue.fromValue('300s'),
      DRAIN_DELETE_EMPTYDIR_DATA: AgentEnvValue.fromValue('false'),
      // Where it waits for the GPU components' pods to go (by gpu-operator's `app` labels, v0.12.0 main.go
      // waitForPodsToTerminate): the driver's own namespace, as upstream. A standalone device plugin,
      // dcgm-exporter or GFD elsewhere is not paused and keeps the driver open, so unloading fails "in use"
      // and the init container retries; the runbook's failure section says to stop those pods on the node.
      OPERATOR_NAMESPACE: AgentEnvValue.fromField(AgentEnvFieldPath.POD_NAMESPACE),
      // The fast path (v0.10.0 on): an unchanged driver is not reloaded when its pod restarts.
      DRIVER_CONFIG_DIGEST: AgentEnvValue.fromValue(configDigest),
    },
    privileged: true,
    runAsRoot: true,
    // kubectl writes its discovery cache under $HOME.
    readOnlyRootFilesystem: false,
    mounts: [
      { volume: 'run-nvidia', mountPath: '/run/nvidia', readOnly: false, propagation: MountPropagation.BIDIRECTIONAL },
      { volume: 'host-root', mountPath: '/host', readOnly: true, propagation: MountPropagation.HOST_TO_CONTAINER },
      { volume: 'host-sys', mountPath: '/sys', readOnly: false },
      { volume: 'run-mellanox-drivers', mountPath: '/run/mellanox/drivers', readOnly: false, propagation: MountPropagation.HOST_TO_CONTAINER },
    ],
  };
}

/**
 * What the manager does through the API with eviction and drain off, no more. gpu-operator's
 * ClusterRole for the driver (assets/state-driver/0210_clusterrole.yaml) is wider: nodes
 * list/update/watch, pods/eviction create, daemonsets get, and OpenShift's clusterversions; those
 * serve cordons, evictions, drains and OpenShift, which this manager never does.
 */
export const DRIVER_MANAGER_RBAC: AgentPolicyRule[] = [
  // Read and relabel (pause, restore) its own node, read its upgrade annotation.
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] },
  // Wait for paused components to go; list the pods on the node that still hold a GPU.
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
  // With gpu-operator's DRA driver on the node, it resolves pods' ResourceClaims to find GPU holders
  // (internal/kubernetes/client.go GetGPUResourceClaimHolders, v0.12.0).
  { apiGroups: ['resource.k8s.io'], resources: ['resourceclaims'], verbs: ['get', 'list'] },
];
