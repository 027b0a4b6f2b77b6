/**
 * The resolved plan of one release of a node agent: every default applied, every container with
 * its mounts, the volumes, the config, the scheduling and the identity it shares with the other
 * releases. Pure (no constructs): the renderers turn a spec into objects, the checks read it.
 */
import { createHash } from 'crypto';
import { Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { IConstruct } from 'constructs';
import { AgentEnvFieldPath, AgentEnvValue } from './container-inputs';
import {
  AgentContainer, AgentContainerSettings, AgentHostPort, AgentPolicyRule, AgentPort, AgentResources, AgentToleration, AgentVolume, AgentVolumeMount,
  HostPathType, HostPathVolume, PodSecurityLevel, TaintEffect, TolerationOperator,
} from './options';
import { AgentDnsConfig, AgentDnsPolicy, AgentEnvSource } from './pod-options';
import type { NodeAgentDaemonSetProps } from './props';
import { ResolvedReadinessTaint, resolveReadinessTaint } from './readiness-taint-spec';
import { UpdateStrategy } from './update-strategy';
import { AgentAdoption } from '../adoption/adoption';
import { NodeSelectorRequirementJson, NodeSelectorTermJson } from '../scheduling/types';
import { sortedRecord, versionLabel } from '../validation/values';

/** The volume name of the agent's ConfigMap. */
export const CONFIG_VOLUME = 'config';

/** Capabilities the PSA baseline level allows a container to add. */
export const BASELINE_CAPABILITIES = new Set([
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

/** One container of the pod, with every mount it gets, every default applied. */
export interface ResolvedContainer {
  readonly name: string;
  /** The container's settings as given: for the checks, which report what the user wrote. */
  readonly settings: AgentContainerSettings;
  /** Every mount, `readOnly` resolved (true unless given false). */
  readonly mounts: AgentVolumeMount[];
  readonly fieldEnv: { [name: string]: AgentEnvFieldPath };
  readonly image: string;
  readonly command?: string[];
  readonly args?: string[];
  /** The downward-API variables, then `env` (which wins on a shared name), sorted by name. */
  readonly env: { [name: string]: kplus.EnvValue };
  /** The ports, `hostPort` resolved: with hostNetwork every container port is a host port. */
  readonly ports: AgentPort[];
  readonly readiness?: kplus.Probe;
  readonly liveness?: kplus.Probe;
  readonly startup?: kplus.Probe;
  readonly preStop?: kplus.Handler;
  readonly resources: ResolvedResources;
  /** Extended resources (request equals limit). */
  readonly extendedResources: { [resource: string]: string };
  readonly security: ResolvedSecurity;
}

/** A container's security settings, every default applied. */
export interface ResolvedSecurity {
  readonly privileged: boolean;
  readonly runAsRoot: boolean;
  /** Given, else 0 for a root container. */
  readonly runAsUser?: number;
  readonly runAsGroup?: number;
  readonly readOnlyRootFilesystem: boolean;
  /** Added capabilities, sorted. */
  readonly capabilities: string[];
  readonly seLinuxLevel?: string;
}

/** A toleration as the pod carries it: the operator resolved (Equal unless given). */
export interface ResolvedToleration {
  readonly key?: string;
  readonly operator: TolerationOperator;
  readonly value?: string;
  readonly effect?: TaintEffect;
  readonly tolerationSeconds?: number;
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

/** The props that decide an agent's identity, as every agent construct takes them. */
export interface IdentityProps {
  readonly name?: string;
  readonly namespace?: string;
  readonly adopt?: AgentAdoption;
}

/**
 * An agent's identity, resolved in one place for every construct (the base and each specialised agent): the
 * props as the user wrote them, else the adopted DaemonSet's (`adopt`: it keeps its name, its namespace and the
 * name and instance labels of its immutable selector), else the chart's namespace, else the agent's defaults.
 */
export function resolveIdentity(scope: IConstruct, props: IdentityProps, defaults: Omit<AgentIdentity, 'identityLabels'>): AgentIdentity {
  const adopt = props.adopt;
  const name = props.name ?? adopt?.daemonSetName ?? defaults.name;
  const namespace = props.namespace ?? adopt?.namespace ?? Chart.of(scope).namespace ?? defaults.namespace;
  if (!adopt) return { name, namespace };
  const sel = adopt.selector;
  return {
    name,
    namespace,
    identityLabels: {
      'app.kubernetes.io/instance': sel['app.kubernetes.io/instance'] ?? name,
      'app.kubernetes.io/name': sel['app.kubernetes.io/name'] ?? name,
    },
  };
}

/** The agent's `app.kubernetes.io/name` and `/instance` labels. */
export function identityLabels(identity: AgentIdentity): { [key: string]: string } {
  return identity.identityLabels ?? { 'app.kubernetes.io/instance': identity.name, 'app.kubernetes.io/name': identity.name };
}

/** One release of an agent, resolved. */
export interface AgentSpec extends AgentIdentity {
  /** The release's props, as given. */
  readonly props: NodeAgentDaemonSetProps;
  // The resolved fields below are all render reads; `props` stays for the checks that report what was
  // given and compare two releases' props.
  /** Main container first, then the sidecars. */
  readonly containers: ResolvedContainer[];
  readonly initContainers: ResolvedContainer[];
  /** The host paths by volume name, `type` resolved (Directory unless given). */
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
  /** Labels of every object besides the identity, version and app.kubernetes.io ones. */
  readonly labels: { [key: string]: string };
  /** `app.kubernetes.io/component`. */
  readonly component: string;
  /** `app.kubernetes.io/part-of`. */
  readonly partOf: string;
  readonly podLabels: { [key: string]: string };
  readonly podAnnotations: { [key: string]: string };
  readonly minReadySeconds: number;
  readonly revisionHistoryLimit: number;
  readonly terminationGracePeriodSeconds: number;
  readonly hostNetwork: boolean;
  readonly hostPid: boolean;
  /** Given, else ClusterFirstWithHostNet with hostNetwork (so the agent still resolves cluster names). */
  readonly dnsPolicy?: AgentDnsPolicy;
  readonly dnsConfig?: AgentDnsConfig;
  /** Every toleration the pod carries, in order: the control plane's (unless turned off), then the given ones. */
  readonly tolerations: ResolvedToleration[];
  /** Components whose pods this agent's pods never share a node with. */
  readonly exclusiveComponents: string[];
  readonly imagePullSecrets: string[];
  /** The main container's envFrom sources. */
  readonly envFrom: AgentEnvSource[];
  /** The taint the agent's pod removes from its node once Ready (its toleration is in `tolerations`). */
  readonly readinessTaint?: ResolvedReadinessTaint;
}

/** Resolves one release's props (the identity comes from the current release). */
export function resolveAgentSpec(props: NodeAgentDaemonSetProps, identity: AgentIdentity): AgentSpec {
  const rbacRules = props.rbacRules ?? [];
  const spec = {
    ...identity,
    props,
    ...resolveContainers(props, identity.name),
    hostPathVolumes: new Map((props.hostPaths ?? []).map((v) => [v.name, { ...v, type: v.type ?? HostPathType.DIRECTORY }])),
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
    ...resolvePodSettings(props),
  };
  return { ...spec, podSecurityLevel: podSecurityLevel(spec) };
}

/** The pod's and the objects' settings, every default applied. */
function resolvePodSettings(props: NodeAgentDaemonSetProps) {
  const hostNetwork = props.hostNetwork ?? false;
  return {
    labels: { ...props.labels },
    component: props.component ?? 'node-agent',
    partOf: props.partOf ?? 'node-agents',
    podLabels: { ...props.podLabels },
    podAnnotations: { ...props.podAnnotations },
    minReadySeconds: props.minReadySeconds ?? 10,
    revisionHistoryLimit: props.revisionHistoryLimit ?? 10,
    terminationGracePeriodSeconds: props.terminationGracePeriodSeconds ?? 30,
    hostNetwork,
    hostPid: props.hostPid ?? false,
    dnsPolicy: props.dnsPolicy ?? (hostNetwork ? AgentDnsPolicy.CLUSTER_FIRST_WITH_HOST_NET : undefined),
    dnsConfig: props.dnsConfig,
    tolerations: resolveTolerations(props),
    exclusiveComponents: [...props.exclusiveComponents ?? []],
    imagePullSecrets: [...props.imagePullSecrets ?? []],
    envFrom: [...props.envFrom ?? []],
    readinessTaint: resolveReadinessTaint(props.readinessTaint),
  };
}

/** The control plane's NoSchedule taints, which a node agent tolerates unless told otherwise. */
const CONTROL_PLANE_TOLERATIONS: AgentToleration[] = [
  { key: 'node-role.kubernetes.io/control-plane', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE },
  { key: 'node-role.kubernetes.io/master', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE },
];

function resolveTolerations(props: NodeAgentDaemonSetProps): ResolvedToleration[] {
  if (props.tolerateAllTaints) return [{ operator: TolerationOperator.EXISTS }];
  // The agent tolerates its own readiness taint: it is the pod that removes it.
  const own: AgentToleration[] = props.readinessTaint
    ? [{ key: props.readinessTaint.key, operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE }] : [];
  const list = [...(props.tolerateControlPlane ?? true ? CONTROL_PLANE_TOLERATIONS : []), ...own, ...props.tolerations ?? []];
  return list.map((t) => ({
    key: t.key, operator: t.operator ?? TolerationOperator.EQUAL, value: t.value, effect: t.effect, tolerationSeconds: t.tolerationSeconds,
  }));
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
    ...spec.labels,
    ...identityLabels(spec),
    ...(image ? { 'app.kubernetes.io/version': versionLabel(image) } : {}),
    'app.kubernetes.io/component': spec.component,
    'app.kubernetes.io/part-of': spec.partOf,
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
  const hostNetwork = p.hostNetwork ?? false;
  const main = resolveContainer(mainName, withOverride(mainName, { ...p, env: p.extraEnv ? { ...p.env, ...p.extraEnv } : p.env }),
    mainMounts, p.fieldEnv ?? {}, hostNetwork);
  const extra = (list: AgentContainer[] | undefined) => (list ?? [])
    .map((c) => resolveContainer(c.name, withOverride(c.name, c), c.mounts ?? [], {}, hostNetwork));
  return { containers: [main, ...extra(p.sidecars)], initContainers: extra(p.initContainers) };
}

function resolveContainer(
  name: string, s: AgentContainerSettings, mounts: AgentVolumeMount[], fieldEnv: { [name: string]: AgentEnvFieldPath }, hostNetwork: boolean,
): ResolvedContainer {
  // the library's own input types become cdk8s-plus-28 objects here, where the DaemonSet is rendered
  const env: { [name: string]: kplus.EnvValue } = {};
  for (const [envName, path] of Object.entries(fieldEnv)) env[envName] = AgentEnvValue.fromField(path)._toKplus();
  for (const [envName, value] of Object.entries(s.env ?? {})) env[envName] = value._toKplus();
  return {
    name,
    settings: s,
    mounts: mounts.map((m) => ({ ...m, readOnly: m.readOnly ?? true })),
    fieldEnv,
    image: s.image,
    command: s.command,
    args: s.args,
    env: sortedRecord(env),
    ports: (s.ports ?? []).map((port) => ({ ...port, hostPort: effectiveHostPort(port, hostNetwork) })),
    readiness: s.readiness?._toKplus(),
    liveness: s.liveness?._toKplus(),
    startup: s.startup?._toKplus(),
    preStop: s.preStop?._toKplus(),
    resources: resolveResources(s.resources),
    extendedResources: { ...s.extendedResources },
    security: {
      privileged: s.privileged ?? false,
      runAsRoot: s.runAsRoot ?? false,
      runAsUser: s.runAsUser ?? (s.runAsRoot ? 0 : undefined),
      runAsGroup: s.runAsGroup,
      readOnlyRootFilesystem: s.readOnlyRootFilesystem ?? true,
      capabilities: [...(s.capabilities ?? [])].sort(),
      seLinuxLevel: s.seLinuxLevel,
    },
  };
}

/** The host port a container port binds: given, else (with hostNetwork) the container port itself, as the API server defaults it. */
function effectiveHostPort(port: AgentPort, hostNetwork: boolean | undefined): number | undefined {
  return port.hostPort ?? (hostNetwork ? port.containerPort : undefined);
}

function collectHostPorts(props: NodeAgentDaemonSetProps): AgentHostPort[] {
  const result: AgentHostPort[] = [];
  const containers: Array<{ name: string; ports?: AgentPort[] }> = [
    { name: props.containerName ?? props.name ?? 'main', ports: props.ports },
    ...(props.sidecars ?? []),
  ];
  for (const c of containers) {
    for (const port of c.ports ?? []) {
      const hostPort = effectiveHostPort(port, props.hostNetwork);
      if (hostPort !== undefined) result.push({ port: hostPort, protocol: port.protocol ?? 'TCP', container: c.name });
    }
  }
  return result;
}

/** Computed from what the pods use, not hard-coded. */
function podSecurityLevel(spec: Omit<AgentSpec, 'podSecurityLevel'>): PodSecurityLevel {
  const all = [...spec.containers, ...spec.initContainers].map((c) => c.security);
  const hostAccess = spec.hostPathVolumes.size > 0 || spec.hostNetwork || spec.hostPid || spec.hostPorts.length > 0
    || all.some((c) => c.privileged || c.capabilities.some((cap) => !BASELINE_CAPABILITIES.has(cap)));
  if (hostAccess) return PodSecurityLevel.PRIVILEGED;
  const restricted = all.every((c) => !c.runAsRoot && c.capabilities.every((cap) => cap === 'NET_BIND_SERVICE'));
  return restricted ? PodSecurityLevel.RESTRICTED : PodSecurityLevel.BASELINE;
}

/** The more permissive of two levels: what a namespace running both releases must allow. */
export function widerPodSecurityLevel(a: PodSecurityLevel, b: PodSecurityLevel): PodSecurityLevel {
  const order = [PodSecurityLevel.RESTRICTED, PodSecurityLevel.BASELINE, PodSecurityLevel.PRIVILEGED];
  return order[Math.max(order.indexOf(a), order.indexOf(b))];
}
