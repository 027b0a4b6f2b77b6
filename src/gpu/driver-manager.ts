/**
 * The k8s-driver-manager init container gpu-operator runs before its driver container, and the RBAC
 * it needs.
 *
 * Pure module: no constructs, only the container spec, its host paths and its rules.
 */
import * as kplus from 'cdk8s-plus-28';
import { AgentContainer, AgentPolicyRule, HostPathType, HostPathVolume, MountPropagation } from '../agent/options';

/** The driver manager gpu-operator's chart pins beside driver 550.90.07. */
export const DEFAULT_DRIVER_MANAGER_IMAGE = 'nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.6.10';

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
 * The init container: pauses the GPU components on the node (their `nvidia.com/gpu.deploy.*` labels
 * become `paused-for-driver-upgrade`), evicts GPU pods through the Eviction API, unloads a stale
 * driver and unmounts its root, then restores the labels. Env and mounts as gpu-operator's DaemonSet.
 */
export function driverManagerContainer(image: string): AgentContainer {
  return {
    name: DRIVER_MANAGER_CONTAINER,
    image,
    command: ['driver-manager'],
    args: ['uninstall_driver'],
    env: {
      NODE_NAME: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.NODE_NAME),
      // The NVIDIA container runtime injects no GPU into it, as for the driver.
      NVIDIA_VISIBLE_DEVICES: kplus.EnvValue.fromValue('void'),
      ENABLE_GPU_POD_EVICTION: kplus.EnvValue.fromValue('true'),
      // Only GPU pods are evicted; a full drain stays the runbook's choice.
      ENABLE_AUTO_DRAIN: kplus.EnvValue.fromValue('false'),
      DRAIN_USE_FORCE: kplus.EnvValue.fromValue('false'),
      // Selects the pods a drain would delete; unused with auto drain off. upgradeWaitForPodSelector
      // names pods to wait for, the opposite meaning, so it is not passed here.
      DRAIN_POD_SELECTOR_LABEL: kplus.EnvValue.fromValue(''),
      DRAIN_TIMEOUT_SECONDS: kplus.EnvValue.fromValue('0s'),
      DRAIN_DELETE_EMPTYDIR_DATA: kplus.EnvValue.fromValue('false'),
      // Where it waits for the GPU components' pods to go: the driver's own namespace.
      OPERATOR_NAMESPACE: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAMESPACE),
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
 * What the manager does through the API, no more. gpu-operator's ClusterRole for the driver is wider
 * (nodes update/watch, pods create/patch/update/delete); evictions go through pods/eviction, so pod
 * delete is not needed.
 */
export const DRIVER_MANAGER_RBAC: AgentPolicyRule[] = [
  // Read and relabel (pause, restore) its own node.
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] },
  // Find the GPU pods on the node and wait for paused components to go (`kubectl wait --for=delete`).
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
  // Evict GPU pods, honouring PodDisruptionBudgets.
  { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
  // The eviction helper skips DaemonSet pods after looking up their DaemonSet.
  { apiGroups: ['apps'], resources: ['daemonsets'], verbs: ['get'] },
];
