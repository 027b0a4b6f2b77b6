/**
 * Synth-time checks of a GPU driver DaemonSet, on plain Kubernetes JSON.
 *
 * Pure module: no cdk8s imports, so each check is testable on hand-written pod specs.
 */
import { nodeSelectorMatches, termsMatch } from '../scheduling/node-affinity';
import { NodeSelectorTermJson } from '../scheduling/types';

/** Extended resources the NVIDIA device plugin advertises: whole GPUs and MIG slices. */
export function isGpuResource(name: string): boolean {
  return /^nvidia\.com\/(gpu|mig-.+)$/.test(name);
}

/** Why a driver pod must never request a GPU, for error messages. */
export function gpuRequestProblem(subject: string, resource: string): string {
  return `${subject} requests "${resource}". A driver pod must never request a GPU: the device plugin that advertises `
    + `${resource} needs the driver first, so on a fresh node the request can never be met and the driver pod stays Pending `
    + 'forever (a deadlock); where GPUs are already advertised it would take one away from workloads. The driver reaches the '
    + 'devices through privileged mode and /dev instead (gpu-operator does not request GPUs for its driver either). Remove it.';
}

// The manifests are plain JSON here; `any` keeps the walk short.
/* eslint-disable @typescript-eslint/no-explicit-any */

function allContainers(podSpec: any): any[] {
  return [...(podSpec?.initContainers ?? []), ...(podSpec?.containers ?? [])];
}

/** Every (container, resource) pair of the pod spec that asks for a GPU in requests or limits. */
export function gpuResourceRequests(podSpec: any): Array<{ container: string; resource: string }> {
  const found: Array<{ container: string; resource: string }> = [];
  for (const c of allContainers(podSpec)) {
    const names = new Set([...Object.keys(c.resources?.requests ?? {}), ...Object.keys(c.resources?.limits ?? {})]);
    for (const resource of [...names].sort()) {
      if (isGpuResource(resource)) found.push({ container: c.name, resource });
    }
  }
  return found;
}

/** Containers whose NVIDIA_VISIBLE_DEVICES is not `void` (the runtime would hand them GPUs). */
export function visibleDevicesProblems(podSpec: any): string[] {
  const problems: string[] = [];
  for (const c of allContainers(podSpec)) {
    const env = (c.env ?? []).find((e: any) => e.name === 'NVIDIA_VISIBLE_DEVICES');
    if (env && (env.value !== 'void' || env.valueFrom)) {
      problems.push(`container "${c.name}" sets NVIDIA_VISIBLE_DEVICES to ${env.valueFrom ? 'a reference' : `"${env.value}"`}; `
        + 'a driver container must keep "void" so the NVIDIA container runtime injects no GPU into it');
    }
  }
  return problems;
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/**
 * Labels of an ordinary node without GPUs, as every cluster sets them. If the driver's scheduling
 * matches it, the selection picks no GPU nodes in particular: the driver would land on every node.
 */
const PLAIN_NODE_LABELS: Readonly<Record<string, string>> = {
  'kubernetes.io/os': 'linux',
  'kubernetes.io/arch': 'amd64',
  'kubernetes.io/hostname': 'cpu-node-1',
  'node.kubernetes.io/instance-type': 'm5.large',
  'topology.kubernetes.io/zone': 'zone-a',
};

/**
 * Explains why the node selection does not single out GPU nodes, or undefined when it does.
 * Requirements like NotIn / DoesNotExist match nodes that lack the key, so opt-out labels alone select everything.
 */
export function gpuSelectionProblem(nodeSelector: Readonly<Record<string, string>>, terms: readonly NodeSelectorTermJson[]): string | undefined {
  const node = { name: 'cpu-node-1', labels: PLAIN_NODE_LABELS };
  const selectorMatches = nodeSelectorMatches(nodeSelector, node.labels);
  const affinityMatches = terms.length === 0 || termsMatch(terms, node);
  if (!(selectorMatches && affinityMatches)) return undefined;
  return 'the driver is not restricted to GPU nodes: a node without GPUs (labels kubernetes.io/os=linux only) matches its '
    + 'nodeSelector and node affinity, so it would run a privileged driver installer on every node. Select GPU nodes with a '
    + 'positive requirement (GpuNodeSelection.featureDiscovery() for nvidia.com/gpu.present=true, labelExists(...) or labelIn(...)); '
    + 'opt-out labels (NotIn / DoesNotExist) match every node that lacks them.';
}

/**
 * NVIDIA's driver repository (nvcr.io/nvidia/driver, or a mirror that keeps its path). Its tags carry the
 * node's OS: `<version>-<os>` (`550.90.07-ubuntu22.04`), or `<branch>-<kernel>-<os>` for a precompiled driver
 * (`550-5.15.0-1065-nvidia-ubuntu22.04`). gpu-operator appends `-<os>` from the node's OS labels itself
 * (resolveDriverTag, unless the image is a digest); this DaemonSet pulls the tag as written.
 */
const NVIDIA_DRIVER_REPOSITORY = /(^|\/)nvidia\/driver$/;
/** An OS suffix as gpu-operator writes it: `-ubuntu22.04`, `-rhel9.4`, `-rhcos4.14`, `-sles15.5`. */
const OS_SUFFIX = /-[a-z]+[0-9]+(\.[0-9]+)*$/;
/** A precompiled driver's tag: `<branch>-<kernel>-<os>`, the branch a major version only. */
const PRECOMPILED_TAG = /^[0-9]+-[0-9]+\.[0-9]+\.[0-9]+-.+-[a-z]+[0-9]+(\.[0-9]+)*$/;

/** The repository and tag of an image reference (no tag: undefined; a digest counts as no tag). */
function repositoryAndTag(image: string): { repository: string; tag?: string } {
  const [name, digest] = image.split('@', 2);
  const colon = name.lastIndexOf(':');
  const tagged = colon > name.lastIndexOf('/');
  return { repository: tagged ? name.slice(0, colon) : name, tag: tagged && digest === undefined ? name.slice(colon + 1) : undefined };
}

/**
 * Why an NVIDIA driver image's tag cannot be pulled (it lacks the OS suffix the registry's tags carry), or
 * undefined. Images of other repositories, and digests, are not judged.
 */
export function driverImageTagProblem(prop: string, image: unknown): string | undefined {
  if (typeof image !== 'string') return undefined;
  const { repository, tag } = repositoryAndTag(image);
  if (!NVIDIA_DRIVER_REPOSITORY.test(repository) || tag === undefined || OS_SUFFIX.test(tag)) return undefined;
  return `${prop} "${image}" has no OS suffix: NVIDIA's driver tags are <version>-<os> (gpu-operator appends the node's OS itself; this `
    + `DaemonSet pulls the tag as written), so every GPU node would be in ImagePullBackOff. Name the nodes' OS, e.g. "${repository}:${tag}-ubuntu22.04" `
    + `(or -rhel9.4, -rhcos4.14, ...), a precompiled "${repository}:<branch>-<kernel>-<os>", or pin a digest (@sha256:...)`;
}

/** Whether an NVIDIA driver image is precompiled for one kernel (its tag `<branch>-<kernel>-<os>`): it loads a module, builds none. */
export function isPrecompiledDriverImage(image: unknown): boolean {
  if (typeof image !== 'string') return false;
  const { tag } = repositoryAndTag(image);
  return tag !== undefined && PRECOMPILED_TAG.test(tag);
}

/**
 * The memory limit a driver built from source needs: the build compiles the kernel module in parallel, its
 * peak growing with the node's cores; 4Gi covers ordinary GPU nodes (the driver's default limit).
 */
export const DRIVER_BUILD_MEMORY = '4Gi';
