/**
 * Renders one DaemonSet of an agent from one release's spec: the pod template, its containers and
 * volumes, then the fields cdk8s-plus does not model as JSON patches.
 */
import { ApiObject, Duration, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { ContainerPatch, patchDaemonSet } from './daemon-set-patches';
import { readinessRemoverPatches } from './readiness-taint';
import {
  AgentSpec, commonLabels, identityLabels, CONFIG_VOLUME, configChecksum, releaseImage, ResolvedContainer, ResolvedSecurity,
} from '../agent/agent-spec';
import { AgentVolumeKind } from '../agent/options';
import { AgentEnvSourceKind } from '../agent/pod-options';
import { UpdateStrategy, UpdateStrategyType } from '../agent/update-strategy';
import { READINESS_TAINT_ANNOTATION, readinessTaintAnnotation } from '../scheduling/readiness-taint';
import { NodeSelectorRequirementJson, NodeSelectorTermJson } from '../scheduling/types';
import { sortedRecord } from '../validation/values';
import { ROLLOUT_GROUP_LABEL } from '../waves/partition';

/** One DaemonSet to render. */
export interface DaemonSetRender {
  readonly id: string;
  readonly dsName: string;
  /** The rollout group (`fleet` without waves). */
  readonly group: string;
  /** The release the group runs. */
  readonly spec: AgentSpec;
  readonly terms: NodeSelectorTermJson[];
  readonly strategy: UpdateStrategy;
  readonly annotations: { [key: string]: string };
  /** The agent has rollout groups: its pods keep off nodes where another group's pod still runs. */
  readonly rollout: boolean;
  readonly serviceAccount: kplus.IServiceAccount;
  /** The ConfigMap of the group's release, if it has config. */
  readonly configMap?: kplus.ConfigMap;
  /**
   * An adopted DaemonSet's selector (the fleet group's, immutable in the cluster): rendered as is, and its labels
   * on the pod template. Without it the selector is `selectorLabels`.
   */
  readonly adoptedSelector?: { [key: string]: string };
}

/**
 * Only stable identity: never the version, a config hash or the construct address. `agent` is the agent's name,
 * or its identity labels (an adopted DaemonSet's name and instance values).
 */
export function selectorLabels(agent: string | { [key: string]: string }, group: string): { [key: string]: string } {
  const identity = typeof agent === 'string' ? { 'app.kubernetes.io/instance': agent, 'app.kubernetes.io/name': agent } : agent;
  return { ...identity, [ROLLOUT_GROUP_LABEL]: group };
}

export function renderAgentDaemonSet(scope: Construct, r: DaemonSetRender): { ds: kplus.DaemonSet; main: kplus.Container } {
  const spec = r.spec;
  const podAnnotations: { [key: string]: string } = { ...spec.podAnnotations };
  if (spec.configData) podAnnotations['checksum/config'] = configChecksum(spec.configData);
  const labels = commonLabels(spec, releaseImage(spec));
  // The readiness taint the group's pods remove, for coverage, plan and doctor (metadata only: no pod restarts for it).
  const annotations = spec.readinessTaint
    ? { ...r.annotations, [READINESS_TAINT_ANNOTATION]: readinessTaintAnnotation(spec.readinessTaint.key) } : r.annotations;

  const ds = new kplus.DaemonSet(scope, r.id, {
    metadata: { name: r.dsName, namespace: spec.namespace, labels, annotations: sortedRecord(annotations) },
    podMetadata: {
      labels: sortedRecord({ ...spec.podLabels, ...labels, [ROLLOUT_GROUP_LABEL]: r.group, ...r.adoptedSelector }),
      annotations: sortedRecord(podAnnotations),
    },
    select: false,
    minReadySeconds: spec.minReadySeconds,
    serviceAccount: r.serviceAccount,
    automountServiceAccountToken: spec.automountServiceAccountToken,
    hostNetwork: spec.hostNetwork,
    dns: renderDns(spec),
    terminationGracePeriod: Duration.seconds(spec.terminationGracePeriodSeconds),
  });
  // An adopted selector matches the pods of the agent's wave DaemonSets too (they carry the same identity labels):
  // the DaemonSet controller claims only pods without a controller owner (ClaimObject in
  // pkg/controller/controller_ref_manager.go), so each DaemonSet keeps managing its own pods.
  ds.select(kplus.LabelSelector.of({ labels: r.adoptedSelector ?? selectorLabels(identityLabels(spec), r.group) }));

  const volumes = new Map<string, kplus.Volume>();
  const volumeFor = (name: string): kplus.Volume => {
    let volume = volumes.get(name);
    if (!volume) {
      volume = renderVolume(ds, spec, name, r.configMap);
      volumes.set(name, volume);
    }
    return volume;
  };

  const patches: ContainerPatch[] = [];
  const render = (c: ResolvedContainer, index: number, init: boolean): kplus.Container => {
    const container = init ? ds.addInitContainer(containerProps(c)) : ds.addContainer(containerProps(c));
    for (const mount of c.mounts) {
      container.mount(mount.mountPath, volumeFor(mount.volume), {
        readOnly: mount.readOnly,
        propagation: mount.propagation as unknown as kplus.MountPropagation | undefined,
        subPath: mount.subPath,
      });
    }
    patches.push({
      index,
      init,
      resources: renderResources(c),
      securityContext: renderSecurityContext(c.security),
      envFrom: c === spec.containers[0] ? renderEnvFrom(spec) : undefined,
    });
    return container;
  };
  const main = render(spec.containers[0], 0, false);
  spec.containers.slice(1).forEach((c, i) => render(c, i + 1, false));
  spec.initContainers.forEach((c, i) => render(c, i, true));

  const antiAffinity = [
    ...(r.rollout ? [otherGroupsTerm(identityLabels(spec), r.group)] : []),
    ...(spec.exclusiveComponents.length > 0 ? [exclusiveComponentsTerm(spec.exclusiveComponents)] : []),
  ];
  patchDaemonSet(ApiObject.of(ds), {
    updateStrategy: renderUpdateStrategy(r.strategy),
    revisionHistoryLimit: spec.revisionHistoryLimit,
    hostPid: spec.hostPid,
    priorityClassName: spec.priorityClassName,
    nodeSelector: spec.nodeSelector,
    affinity: r.terms.length > 0 || antiAffinity.length > 0 ? {
      nodeAffinity: r.terms.length > 0
        ? { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: r.terms.map(toKubeTerm) } }
        : undefined,
      podAntiAffinity: antiAffinity.length > 0 ? { requiredDuringSchedulingIgnoredDuringExecution: antiAffinity } : undefined,
    } : undefined,
    tolerations: renderTolerations(spec),
    podSecurityContext: renderPodSecurityContext(spec.containers[0].security),
    containers: patches,
    imagePullSecrets: spec.imagePullSecrets.map((name) => ({ name })),
    removeTemplateLabels: [kplus.Pod.ADDRESS_LABEL],
  });
  ApiObject.of(ds).addJsonPatch(...readinessRemoverPatches(spec, volumes.size > 0));
  return { ds, main };
}

function renderDns(spec: AgentSpec): kplus.PodDnsProps | undefined {
  const policy = spec.dnsPolicy;
  const config = spec.dnsConfig;
  if (policy === undefined && !config) return undefined;
  return {
    policy: policy as unknown as kplus.DnsPolicy | undefined,
    nameservers: config?.nameservers,
    searches: config?.searches,
    options: Object.entries(sortedRecord(config?.options)).map(([name, value]) => ({ name, value: value === '' ? undefined : value })),
  };
}

function renderEnvFrom(spec: AgentSpec): kplus.k8s.EnvFromSource[] {
  return spec.envFrom.map((source) => ({
    prefix: source.prefix,
    secretRef: source.kind === AgentEnvSourceKind.SECRET ? { name: source.name, optional: source.optional } : undefined,
    configMapRef: source.kind === AgentEnvSourceKind.CONFIG_MAP ? { name: source.name, optional: source.optional } : undefined,
  }));
}

function renderVolume(ds: kplus.DaemonSet, spec: AgentSpec, name: string, configMap: kplus.ConfigMap | undefined): kplus.Volume {
  if (name === CONFIG_VOLUME) return kplus.Volume.fromConfigMap(ds, 'ConfigVolume', configMap!, { name: CONFIG_VOLUME });
  const host = spec.hostPathVolumes.get(name);
  if (host) {
    return kplus.Volume.fromHostPath(ds, `HostPath-${name}`, name, { path: host.hostPath, type: host.type as unknown as kplus.HostPathVolumeType });
  }
  const volume = spec.volumes.get(name)!;
  switch (volume.kind) {
    case AgentVolumeKind.SECRET:
      return kplus.Volume.fromSecret(ds, `Volume-${name}`, kplus.Secret.fromSecretName(ds, `Secret-${name}`, volume.sourceName!), {
        name, optional: volume.optional, defaultMode: volume.defaultMode,
      });
    case AgentVolumeKind.CONFIG_MAP:
      return kplus.Volume.fromConfigMap(ds, `Volume-${name}`, kplus.ConfigMap.fromConfigMapName(ds, `ConfigMap-${name}`, volume.sourceName!), {
        name, optional: volume.optional, defaultMode: volume.defaultMode,
      });
    default:
      return kplus.Volume.fromEmptyDir(ds, `Volume-${name}`, name, {
        medium: volume.memory ? kplus.EmptyDirMedium.MEMORY : undefined,
        sizeLimit: volume.sizeLimit !== undefined ? Size.mebibytes(mebibytes(volume.sizeLimit)) : undefined,
      });
  }
}

/** cdk8s-plus takes an emptyDir size in whole units; the checks accept only sizes it can express. */
function mebibytes(quantity: string): number {
  const m = /^([0-9]+)(Mi|Gi|Ti)$/.exec(quantity)!;
  return Number(m[1]) * { Mi: 1, Gi: 1024, Ti: 1024 * 1024 }[m[2] as 'Mi' | 'Gi' | 'Ti'];
}

function containerProps(c: ResolvedContainer): kplus.ContainerProps {
  return {
    name: c.name,
    image: c.image,
    imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
    command: c.command,
    args: c.args,
    envVariables: c.env,
    // `ports`, not `portNumber`: cdk8s-plus adds a TCP startup probe for `portNumber`.
    // AgentProtocol's values are cdk8s-plus-28's Protocol values
    ports: c.ports.map((port) => ({
      name: port.name,
      number: port.containerPort,
      hostPort: port.hostPort,
      protocol: port.protocol as string | undefined as kplus.Protocol | undefined,
    })),
    readiness: c.readiness,
    liveness: c.liveness,
    startup: c.startup,
    lifecycle: c.preStop ? { preStop: c.preStop } : undefined,
  };
}

function renderTolerations(spec: AgentSpec): kplus.k8s.Toleration[] {
  return spec.tolerations.map((t) => ({ ...t }));
}

/**
 * With rollout waves, a node that changes wave is left by one DaemonSet and entered by another, and
 * nothing in the DaemonSet controller orders the two: the new pod would start while the old one is
 * still terminating (two collectors on one tail database, a second exporter Pending on its host
 * port, two drivers fighting over the module). This term keeps the new pod Pending until the old
 * pod of any other group of the agent is gone from the node: the scheduler keeps a terminating pod
 * in its cache, and counts it, until it is deleted, then retries the Pending pod. It selects on
 * labels every group shares (never the version), and not the pod's own group, so a group's own
 * rolling update is unaffected.
 */
function otherGroupsTerm(identity: { [key: string]: string }, group: string): kplus.k8s.PodAffinityTerm {
  return {
    labelSelector: {
      matchLabels: { ...identity },
      matchExpressions: [{ key: ROLLOUT_GROUP_LABEL, operator: 'NotIn', values: [group] }],
    },
    topologyKey: 'kubernetes.io/hostname',
  };
}

/**
 * No pod of the agent joins a node that runs a pod of one of these components (its own old pod
 * included), in any namespace: without a namespaceSelector a term sees only the pod's own namespace,
 * and the clashing agent (e.g. gpu-operator's driver) usually runs in another. An empty
 * namespaceSelector selects every namespace (k8s.io/api core/v1 PodAffinityTerm).
 */
function exclusiveComponentsTerm(components: string[]): kplus.k8s.PodAffinityTerm {
  return {
    labelSelector: { matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: [...components] }] },
    namespaceSelector: {},
    topologyKey: 'kubernetes.io/hostname',
  };
}

function renderResources(c: ResolvedContainer): kplus.k8s.ResourceRequirements {
  const res = c.resources;
  const requests: { [key: string]: kplus.k8s.Quantity } = {
    cpu: kplus.k8s.Quantity.fromString(res.cpuRequest),
    memory: kplus.k8s.Quantity.fromString(res.memoryRequest),
  };
  const limits: { [key: string]: kplus.k8s.Quantity } = { memory: kplus.k8s.Quantity.fromString(res.memoryLimit) };
  if (res.cpuLimit) limits.cpu = kplus.k8s.Quantity.fromString(res.cpuLimit);
  // Extended resources cannot be overcommitted: the API requires the request to equal the limit.
  for (const [resource, quantity] of Object.entries(c.extendedResources)) {
    requests[resource] = kplus.k8s.Quantity.fromString(quantity);
    limits[resource] = kplus.k8s.Quantity.fromString(quantity);
  }
  return { requests: sortedRecord(requests), limits: sortedRecord(limits) };
}

function renderSecurityContext(s: ResolvedSecurity): kplus.k8s.SecurityContext {
  const added = s.capabilities;
  // The API rejects allowPrivilegeEscalation: false together with privileged or CAP_SYS_ADMIN.
  const escalation = s.privileged || added.includes('SYS_ADMIN');
  return {
    privileged: s.privileged,
    allowPrivilegeEscalation: escalation,
    readOnlyRootFilesystem: s.readOnlyRootFilesystem,
    runAsNonRoot: !s.runAsRoot,
    runAsUser: s.runAsUser,
    runAsGroup: s.runAsGroup,
    // A privileged container gets every capability and no seccomp filter from containerd's CRI whatever
    // it asks, so a dropped set and RuntimeDefault are inert there at best; a runtime set up otherwise
    // (e.g. privileged_without_host_devices) may apply them, and a driver's modprobe / rmmod then fail.
    // So privileged containers ask for neither, as gpu-operator's driver DaemonSet
    // (assets/state-driver/0500_daemonset.yaml: privileged and seLinuxOptions only), and are Unconfined
    // over the pod's RuntimeDefault.
    capabilities: s.privileged ? (added.length > 0 ? { add: added } : undefined) : { drop: ['ALL'], add: added.length > 0 ? added : undefined },
    seccompProfile: { type: s.privileged ? 'Unconfined' : 'RuntimeDefault' },
    seLinuxOptions: s.seLinuxLevel !== undefined ? { level: s.seLinuxLevel } : undefined,
  };
}

function renderPodSecurityContext(main: ResolvedSecurity): kplus.k8s.PodSecurityContext {
  return {
    runAsNonRoot: !main.runAsRoot,
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

function renderUpdateStrategy(strategy: UpdateStrategy): kplus.k8s.DaemonSetUpdateStrategy {
  if (strategy.type === UpdateStrategyType.ON_DELETE) return { type: 'OnDelete' };
  const budget = (b: { isPercent: boolean; amount: number }) => b.isPercent
    ? kplus.k8s.IntOrString.fromString(`${b.amount}%`)
    : kplus.k8s.IntOrString.fromNumber(b.amount);
  return {
    type: 'RollingUpdate',
    rollingUpdate: { maxUnavailable: budget(strategy.maxUnavailable!), maxSurge: budget(strategy.maxSurge!) },
  };
}

function toKubeTerm(term: NodeSelectorTermJson): kplus.k8s.NodeSelectorTerm {
  const copy = (list: readonly NodeSelectorRequirementJson[] | undefined) => list && list.length > 0
    ? list.map((req) => ({ key: req.key, operator: req.operator, values: req.values ? [...req.values] : undefined }))
    : undefined;
  return { matchExpressions: copy(term.matchExpressions), matchFields: copy(term.matchFields) };
}
