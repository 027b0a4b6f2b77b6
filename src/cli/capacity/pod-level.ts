import { NodeJson } from '../../scheduling/types';

/** The minor release whose scheduler reads pod-level resources by default: PodLevelResources beta, on (alpha and off in 1.32, 1.33). */
export const POD_LEVEL_RESOURCES_DEFAULT_ON = 34;

/** Whether the scheduler counts pod-level `spec.resources`, and what that rests on. */
export interface PodLevelResourcesGate {
  readonly enabled: boolean;
  /** how it was decided, for a warning: `Kubernetes 1.33 (--kubernetes-version)`, `the newest kubelet listed is v1.33.2` */
  readonly basis: string;
  /** the version was given, or the inventory shows a control plane of 1.34 or later; else enabled is an assumption */
  readonly certain: boolean;
}

/** `v1.34.1`, `1.33`, `v1.30.4-eks-a737599` → [1, 34]; undefined when it is not a version. */
export function minorVersion(text: unknown): [number, number] | undefined {
  const match = typeof text === 'string' ? /^v?(\d{1,3})\.(\d{1,3})(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?$/.exec(text) : null;
  return match === null ? undefined : [Number(match[1]), Number(match[2])];
}

/**
 * The control plane runs Kubernetes 1.`minor` or later for certain: `--kubernetes-version` says so, or a kubelet of
 * the inventory does (a kubelet is never newer than its control plane). False when neither tells.
 */
export function controlPlaneAtLeast(inventory: readonly NodeJson[], kubernetesVersion: string | undefined, minor: number): boolean {
  const atLeast = (v: [number, number] | undefined) => v !== undefined && (v[0] > 1 || (v[0] === 1 && v[1] >= minor));
  if (kubernetesVersion !== undefined) return atLeast(minorVersion(kubernetesVersion));
  return inventory.some((node) => {
    const status = node.status as { nodeInfo?: { kubeletVersion?: unknown } } | undefined;
    return atLeast(minorVersion(status?.nodeInfo?.kubeletVersion));
  });
}

function atLeastDefaultOn(version: [number, number]): boolean {
  return version[0] > 1 || (version[0] === 1 && version[1] >= POD_LEVEL_RESOURCES_DEFAULT_ON);
}

/**
 * The PodLevelResources gate of the scheduler: from `--kubernetes-version` (the control plane's) when given;
 * else from the nodes' status.nodeInfo.kubeletVersion: a kubelet is never newer than the control plane
 * (version skew policy), so a 1.34 kubelet means a 1.34 scheduler at least. With older kubelets or none listed,
 * the control plane may be up to three minors newer: the gate is taken as on (pod-level requests are at least the
 * containers', so that counts more, never less) and the verdict rests on an assumption the caller must name.
 */
export function podLevelResourcesGate(inventory: readonly NodeJson[], kubernetesVersion?: string): PodLevelResourcesGate {
  if (kubernetesVersion !== undefined) {
    const version = minorVersion(kubernetesVersion);
    if (version === undefined) throw new Error(`--kubernetes-version ${JSON.stringify(kubernetesVersion)}: not a version; give MAJOR.MINOR, e.g. 1.34`);
    return { enabled: atLeastDefaultOn(version), basis: `Kubernetes ${version.join('.')} (--kubernetes-version)`, certain: true };
  }
  let newest: { version: [number, number]; text: string } | undefined;
  for (const node of inventory) {
    const text = (node.status as { nodeInfo?: { kubeletVersion?: unknown } } | undefined)?.nodeInfo?.kubeletVersion;
    const version = minorVersion(text);
    if (version !== undefined && (newest === undefined || version[0] > newest.version[0]
      || (version[0] === newest.version[0] && version[1] > newest.version[1]))) newest = { version, text: text as string };
  }
  if (newest === undefined) return { enabled: true, basis: 'no kubelet version in the inventory', certain: false };
  return { enabled: true, basis: `the newest kubelet listed is ${newest.text}`, certain: atLeastDefaultOn(newest.version) };
}
