/**
 * The resolved plan of one release of a node agent: every default applied, every container with
 * its mounts, the volumes, the config, the scheduling and the identity it shares with the other
 * releases. Pure (no constructs): the renderers turn a spec into objects, the checks read it.
 */
import { createHash } from 'crypto';
import * as kplus from 'cdk8s-plus-28';
import {
  AgentContainer, AgentContainerSettings, AgentHostPort, AgentPolicyRule, AgentPort, AgentResources, AgentVolume, AgentVolumeMount, HostPathVolume,
  PodSecurityLevel,
} from './options';
import type { NodeAgentDaemonSetProps } from './props';
import { UpdateStrategy } from './update-strategy';
import { NodeSelectorRequirementJson, NodeSelectorTermJson } from '../scheduling/types';
import { sortedRecord, versionLabel } from '../validation/values';

/** The volume name of the agent's ConfigMap. */
export const CONFIG_VOLUME = 'config';

/** Capabilities the PSA baseline level allows a container to add. */
const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE',
  'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT',
]);

/** Defaults of the base; the specialised agents pass their own. */
const DEFAULT_RESOURCES = { cpuRequest: '100m', memoryRequest: '128Mi', memoryLimit: '512Mi' };

/** EKS Fargate and virtual-kubelet nodes run no DaemonSet pod. */
export const VIRTUAL_NODE_EXCLUSIONS: NodeSelectorRequirementJson[] = [
  { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
  { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
];

/** One container of the pod, with every mount it gets. */
export interface ResolvedContainer {
  readonly name: string;
  readonly settings: AgentContainerSettings;
  readonly mounts: AgentVolumeMount[];
  readonly fieldEnv: { [name: string]: kplus.EnvFieldPaths };
}

/** Identity every release of an agent shares: the names of its objects. */
export interface AgentIdentity {
  readonly name: string;
  readonly namespace: string;
  /**
   * `app.kubernetes.io/name` and `/instance` of every object and pod: the agent's name, or an adopted
   * DaemonSet's selector values (its pods must keep carrying them).
   */
  readonly identityLabels?: { [key: string]: string };
}

/** The agent's `app.kubernetes.io/name` and `/instance` labels. */
export function identityLabels(identity: AgentIdentity): { [key: string]: string } {
  return identity.identityLabels ?? { 'app.kubernetes.io/instance': identity.name, 'app.kubernetes.io/name': identity.name };
}

/** One release of an agent, resolved. */
export interface AgentSpec extends AgentIdentity {
  /** The release's props, as given. */
  readonly props: NodeAgentDaemonSetProps;
  /** Main container first, then the sidecars. */
  readonly containers: ResolvedContainer[];
  readonly initContainers: ResolvedContainer[];
  readonly hostPathVolumes: ReadonlyMap<string, HostPathVolume>;
  readonly volumes: ReadonlyMap<string, AgentVolume>;
  /** The ConfigMap data, if the release has config. */
  readonly configData?: { [file: string]: string };
  readonly nodeSelector: { [key: string]: string };
  /** Node requirements besides the nodeSelector (virtual nodes, user requirements). */
  readonly baseRequirements: NodeSelectorRequirementJson[];
  /** nodeRequirementAlternatives: one term each, ANDed with baseRequirements (empty: one term). */
  readonly baseAlternatives: NodeSelectorRequirementJson[][];
  readonly updateStrategy: UpdateStrategy;
  readonly hostPorts: AgentHostPort[];
  readonly priorityClassName: string;
  readonly rbacRules: AgentPolicyRule[];
  readonly automountServiceAccountToken: boolean;
  readonly podSecurityLevel: PodSecurityLevel;
}

/** Resolves one release's props (the identity comes from the current release). */
export function resolveAgentSpec(props: NodeAgentDaemonSetProps, identity: AgentIdentity): AgentSpec {
  const rbacRules = props.rbacRules ?? [];
  const spec = {
    ...identity,
    props,
    ...resolveContainers(props, identity.name),
    hostPathVolumes: new Map((props.hostPaths ?? []).map((v) => [v.name, v])),
    volumes: new Map((props.volumes ?? []).map((v) => [v.name, v])),
    configData: props.configData,
    nodeSelector: sortedRecord(props.nodeSelector ?? (props.os === '' ? {} : { 'kubernetes.io/os': props.os ?? 'linux' })),
    baseRequirements: [
      ...(props.excludeVirtualNodes ?? true ? VIRTUAL_NODE_EXCLUSIONS : []),
      ...(props.nodeRequirements ?? []).map((r) => r._toJson()),
    ],
    baseAlternatives: (props.nodeRequirementAlternatives ?? []).map((alternative) => alternative.map((r) => r._toJson())),
    updateStrategy: props.updateStrategy ?? UpdateStrategy.steady(),
    hostPorts: collectHostPorts(props),
    priorityClassName: props.priorityClass ? (props.priorityClass.name ?? `${identity.name}-critical`) : (props.priorityClassName ?? 'system-node-critical'),
    rbacRules,
    automountServiceAccountToken: props.automountServiceAccountToken ?? rbacRules.length > 0,
  };
  return { ...spec, podSecurityLevel: podSecurityLevel(spec) };
}

/**
 * The agent's own node-affinity terms (virtual nodes and user requirements): one ANDed term, or one
 * per requirement alternative, each with the common requirements.
 */
export function baseTerms(spec: AgentSpec): NodeSelectorTermJson[] {
  if (spec.baseAlternatives.length > 0) {
    return spec.baseAlternatives.map((alternative) => ({ matchExpressions: [...spec.baseRequirements, ...alternative] }));
  }
  return spec.baseRequirements.length > 0 ? [{ matchExpressions: spec.baseRequirements }] : [];
}

/** The main container's image: the version of the release. */
export function releaseImage(spec: AgentSpec): string {
  return spec.containers[0].settings.image;
}

/**
 * Labels of every object; `app.kubernetes.io/version` only on the DaemonSets (objects of one
 * version, `image` given), so starting a rollout does not touch the shared ones.
 */
export function commonLabels(spec: AgentSpec, image?: string): { [key: string]: string } {
  return sortedRecord({
    ...spec.props.labels,
    ...identityLabels(spec),
    ...(image ? { 'app.kubernetes.io/version': versionLabel(image) } : {}),
    'app.kubernetes.io/component': spec.props.component ?? 'node-agent',
    'app.kubernetes.io/part-of': spec.props.partOf ?? 'node-agents',
    'app.kubernetes.io/managed-by': 'cdk8s',
  });
}

/** The full sha256 of the config, for the `checksum/config` pod annotation. */
export function configChecksum(data: { [file: string]: string }): string {
  return createHash('sha256').update(JSON.stringify(sortedRecord(data))).digest('hex');
}

/** Content-addressed ConfigMap name: each version of the config is its own object. */
export function configMapName(agent: string, data: { [file: string]: string }): string {
  return `${agent}-config-${configChecksum(data).substring(0, 10)}`;
}

export interface ResolvedResources {
  readonly cpuRequest: string;
  readonly cpuLimit?: string;
  readonly memoryRequest: string;
  readonly memoryLimit: string;
}

export function resolveResources(r: AgentResources | undefined): ResolvedResources {
  return {
    cpuRequest: r?.cpuRequest ?? DEFAULT_RESOURCES.cpuRequest,
    cpuLimit: r?.cpuLimit,
    memoryRequest: r?.memoryRequest ?? DEFAULT_RESOURCES.memoryRequest,
    memoryLimit: r?.memoryLimit ?? DEFAULT_RESOURCES.memoryLimit,
  };
}

function resolveContainers(p: NodeAgentDaemonSetProps, name: string): { containers: ResolvedContainer[]; initContainers: ResolvedContainer[] } {
  const mainMounts: AgentVolumeMount[] = [
    ...(p.hostPaths ?? []).filter((v) => v.mountInMainContainer ?? true).map((v) => ({
      volume: v.name, mountPath: v.mountPath ?? v.hostPath, readOnly: v.readOnly ?? true, propagation: v.propagation,
    })),
    ...(p.configData ? [{ volume: CONFIG_VOLUME, mountPath: p.configMountPath ?? `/etc/${name}`, readOnly: true }] : []),
    ...(p.mounts ?? []),
  ];
  // containerResources replaces a container's resources by name; a name matching no container is refused by the checks.
  const overrides = new Map(Object.entries(p.containerResources ?? {}));
  const withOverride = <T extends AgentContainerSettings>(containerName: string, settings: T): T =>
    overrides.has(containerName) ? { ...settings, resources: overrides.get(containerName) } : settings;
  const mainName = p.containerName ?? name;
  const main: ResolvedContainer = {
    name: mainName,
    settings: withOverride(mainName, { ...p, env: p.extraEnv ? { ...p.env, ...p.extraEnv } : p.env }),
    mounts: mainMounts,
    fieldEnv: p.fieldEnv ?? {},
  };
  const extra = (list: AgentContainer[] | undefined) => (list ?? [])
    .map((c) => ({ name: c.name, settings: withOverride(c.name, c), mounts: c.mounts ?? [], fieldEnv: {} }));
  return { containers: [main, ...extra(p.sidecars)], initContainers: extra(p.initContainers) };
}

function collectHostPorts(props: NodeAgentDaemonSetProps): AgentHostPort[] {
  const result: AgentHostPort[] = [];
  const containers: Array<{ name: string; ports?: AgentPort[] }> = [
    { name: props.containerName ?? props.name ?? 'main', ports: props.ports },
    ...(props.sidecars ?? []),
  ];
  for (const c of containers) {
    for (const port of c.ports ?? []) {
      const hostPort = port.hostPort ?? (props.hostNetwork ? port.containerPort : undefined);
      if (hostPort !== undefined) result.push({ port: hostPort, protocol: port.protocol ?? 'TCP', container: c.name });
    }
  }
  return result;
}

/** Computed from what the pods use, not hard-coded. */
function podSecurityLevel(spec: Omit<AgentSpec, 'podSecurityLevel'>): PodSecurityLevel {
  const p = spec.props;
  const all = [...spec.containers, ...spec.initContainers].map((c) => c.settings);
  const hostAccess = spec.hostPathVolumes.size > 0 || p.hostNetwork || p.hostPid || spec.hostPorts.length > 0
    || all.some((c) => c.privileged || (c.capabilities ?? []).some((cap) => !BASELINE_CAPABILITIES.has(cap)));
  if (hostAccess) return PodSecurityLevel.PRIVILEGED;
  const restricted = all.every((c) => !c.runAsRoot && (c.capabilities ?? []).every((cap) => cap === 'NET_BIND_SERVICE'));
  return restricted ? PodSecurityLevel.RESTRICTED : PodSecurityLevel.BASELINE;
}

/** The more permissive of two levels: what a namespace running both releases must allow. */
export function widerPodSecurityLevel(a: PodSecurityLevel, b: PodSecurityLevel): PodSecurityLevel {
  const order = [PodSecurityLevel.RESTRICTED, PodSecurityLevel.BASELINE, PodSecurityLevel.PRIVILEGED];
  return order[Math.max(order.indexOf(a), order.indexOf(b))];
}
