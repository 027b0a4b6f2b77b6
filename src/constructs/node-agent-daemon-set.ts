import { createHash } from 'crypto';
import { ApiObject, Chart, Duration, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct, IConstruct } from 'constructs';
import {
  checkAbsolutePath, checkCapability, checkConfigKey, checkDnsLabel, checkImage, checkLabelKey, checkLabels,
  checkLabelValue, checkPort, checkPortName, checkQuantity, checkRequestNotAboveLimit, checkWholeNumber, sortedRecord, versionLabel,
} from '../agent/checks';
import { NodeRequirement } from '../agent/node-requirement';
import {
  AgentContainer, AgentContainerSettings, AgentPolicyRule, AgentPort, AgentPriorityClass, AgentResources, AgentToleration,
  AgentVolumeMount, HostPathType, HostPathVolume, MountPropagation, PodSecurityLevel, TaintEffect, TolerationOperator,
} from '../agent/options';
import { AgentRelease, AgentRollout } from '../agent/rollout';
import { planRollout, RolloutGroupPlan } from '../agent/rollout-plan';
import { UpdateStrategy, UpdateStrategyType } from '../agent/update-strategy';
import { ContainerPatch, patchDaemonSet } from '../internal/daemon-set-patches';
import { NodeSelectorRequirementJson, NodeSelectorTermJson } from '../scheduling/types';
import { ROLLOUT_GROUP_LABEL } from '../waves/partition';

/** Label prefix of the Pod Security Admission levels on a namespace. */
const PSA_PREFIX = 'pod-security.kubernetes.io';
/** The volume name of the agent's ConfigMap. */
const CONFIG_VOLUME = 'config';
/** Capabilities the PSA baseline level allows a container to add. */
const BASELINE_CAPABILITIES = new Set([
  'AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD', 'NET_BIND_SERVICE',
  'SETFCAP', 'SETGID', 'SETPCAP', 'SETUID', 'SYS_CHROOT',
]);
const CRITICAL_PRIORITY_CLASSES = ['system-node-critical', 'system-cluster-critical'];

/** Defaults of the base; the specialised agents pass their own. */
const DEFAULT_RESOURCES: Required<Pick<AgentResources, 'cpuRequest' | 'memoryRequest' | 'memoryLimit'>> = {
  cpuRequest: '100m',
  memoryRequest: '128Mi',
  memoryLimit: '512Mi',
};

/** Props of a node agent: one pod on every eligible node. */
export interface NodeAgentDaemonSetProps extends AgentContainerSettings {
  /**
   * The agent's name: the DaemonSet, ServiceAccount and RBAC objects are named after it, and it is
   * the `app.kubernetes.io/name` and `/instance` label. A DNS-1123 label.
   * @default - derived from the construct id (lower case, other characters replaced by "-")
   */
  readonly name?: string;

  /**
   * Namespace of the agent's namespaced objects.
   * @default - the chart's namespace, else "kube-system"
   */
  readonly namespace?: string;

  /**
   * Create the namespace, labelled with the Pod Security Admission level this agent needs.
   * @default false
   */
  readonly createNamespace?: boolean;

  /**
   * Name of the main container.
   * @default - the agent's name
   */
  readonly containerName?: string;

  /**
   * Directories or files of the node mounted into the agent (read-only unless said).
   * @default - none
   */
  readonly hostPaths?: HostPathVolume[];

  /**
   * Data of the agent's ConfigMap (file name → content). The ConfigMap is named after the content's
   * hash, mounted read-only at `configMountPath`, and the pod template carries a `checksum/config`
   * annotation, so a config change rolls the agent and an unchanged config changes nothing.
   * @default - no ConfigMap
   */
  readonly configData?: { [file: string]: string };

  /**
   * Where the main container sees the ConfigMap.
   * @default "/etc/<name>"
   */
  readonly configMountPath?: string;

  /**
   * More long-running containers in the pod (e.g. an auth proxy).
   * @default - none
   */
  readonly sidecars?: AgentContainer[];

  /**
   * Init containers, run in order before the main container (e.g. a driver installer).
   * @default - none
   */
  readonly initContainers?: AgentContainer[];

  /**
   * Environment variables of the main container taken from fields of the pod (downward API),
   * e.g. `{ HOST_IP: kplus.EnvFieldPaths.NODE_IP }`. They never change between versions.
   * @default - none
   */
  readonly fieldEnv?: { [name: string]: kplus.EnvFieldPaths };

  /**
   * Pace of upgrades. Surge is refused for agents that bind host ports or write a hostPath.
   * @default UpdateStrategy.steady() (maxUnavailable 25%, maxSurge 0)
   */
  readonly updateStrategy?: UpdateStrategy;

  /**
   * Seconds a new pod must be Ready before it counts as available and the rollout moves on.
   * @default 10
   */
  readonly minReadySeconds?: number;

  /**
   * Old ControllerRevisions kept for `kubectl rollout undo`.
   * @default 10
   */
  readonly revisionHistoryLimit?: number;

  /**
   * Node labels the node must carry (exact values).
   * @default - { "kubernetes.io/os": os }
   */
  readonly nodeSelector?: { [key: string]: string };

  /**
   * The nodes' operating system (`kubernetes.io/os`); an empty string drops the selector.
   * @default "linux"
   */
  readonly os?: string;

  /**
   * Required node-affinity requirements, all of which a node must meet.
   * @default - none
   */
  readonly nodeRequirements?: NodeRequirement[];

  /**
   * Keep the agent off virtual nodes (EKS Fargate, virtual-kubelet), where no DaemonSet pod can run.
   * @default true
   */
  readonly excludeVirtualNodes?: boolean;

  /**
   * Tolerate every taint (`operator: Exists`): for observability agents that must be on every node.
   * A conscious choice: the agent then also lands on nodes being drained for NoExecute taints.
   * @default false
   */
  readonly tolerateAllTaints?: boolean;

  /**
   * Tolerate the control-plane taints (`node-role.kubernetes.io/control-plane` and the legacy
   * `node-role.kubernetes.io/master`, NoSchedule).
   * @default true
   */
  readonly tolerateControlPlane?: boolean;

  /**
   * More tolerations.
   * @default - none
   */
  readonly tolerations?: AgentToleration[];

  /**
   * PriorityClass of the pods. DaemonSet pods do not preempt: without a high priority they stay
   * Pending on a full node.
   * @default "system-node-critical" (or the created class when `priorityClass` is given)
   */
  readonly priorityClassName?: string;

  /**
   * Create a dedicated PriorityClass for the agent instead of using a system one.
   * @default - none
   */
  readonly priorityClass?: AgentPriorityClass;

  /**
   * Outside kube-system, some clusters admit `system-node-critical` / `system-cluster-critical` pods
   * only when a ResourceQuota scoped to that PriorityClass exists in the namespace: emit one.
   * @default true
   */
  readonly createPriorityQuota?: boolean;

  /**
   * Use the node's network namespace. Sets `dnsPolicy: ClusterFirstWithHostNet`.
   * @default false
   */
  readonly hostNetwork?: boolean;

  /**
   * Use the node's PID namespace.
   * @default false
   */
  readonly hostPid?: boolean;

  /**
   * Cluster-wide RBAC rules; they become a ClusterRole and ClusterRoleBinding named after the agent,
   * and the ServiceAccount token is mounted.
   * @default - no RBAC, no token mounted
   */
  readonly rbacRules?: AgentPolicyRule[];

  /**
   * Mount the ServiceAccount token.
   * @default - true when `rbacRules` are given, else false
   */
  readonly automountServiceAccountToken?: boolean;

  /**
   * Seconds a stopping pod gets before it is killed; pair it with the agent's own shutdown grace.
   * @default 30
   */
  readonly terminationGracePeriodSeconds?: number;

  /**
   * The `app.kubernetes.io/component` label.
   * @default "node-agent"
   */
  readonly component?: string;

  /**
   * The `app.kubernetes.io/part-of` label.
   * @default "node-agents"
   */
  readonly partOf?: string;

  /**
   * More labels on every object of the agent (never in the pod selector).
   * @default - none
   */
  readonly labels?: { [key: string]: string };

  /**
   * Annotations on the pod template.
   * @default - none
   */
  readonly podAnnotations?: { [key: string]: string };

  /**
   * Roll the agent out over canary waves of nodes: one DaemonSet per wave plus the fleet.
   * @default - one DaemonSet for all nodes
   */
  readonly rollout?: AgentRollout;
}

/** A host port the agent binds on every node it runs on. */
export interface AgentHostPort {
  /** Port number on the node. */
  readonly port: number;
  /** Protocol. */
  readonly protocol: string;
  /** Container that binds it. */
  readonly container: string;
}

interface ResolvedContainer {
  readonly name: string;
  readonly settings: AgentContainerSettings;
  readonly mounts: AgentVolumeMount[];
  readonly fieldEnv: { [name: string]: kplus.EnvFieldPaths };
}

/**
 * A node agent: a DaemonSet running one pod on every eligible node, with the defaults a careful SRE
 * writes (pinned image, IfNotPresent, small requests and a memory limit, explicit update budgets,
 * linux and non-virtual nodes only, explicit tolerations, system-node-critical priority, read-only
 * host mounts, dropped capabilities, a dedicated ServiceAccount) and synth-time checks for the
 * mistakes the API server or the DaemonSet controller would punish later.
 */
export class NodeAgentDaemonSet extends Construct {
  /** Is `x` a NodeAgentDaemonSet? */
  public static isNodeAgentDaemonSet(x: any): boolean {
    return x instanceof NodeAgentDaemonSet;
  }

  /** The agent's name. */
  public readonly name: string;
  /** Namespace of the agent's namespaced objects. */
  public readonly namespace: string;
  /**
   * The DaemonSet that covers the fleet (all nodes outside rollout waves); when the agent is new and
   * not yet promoted to the fleet, the last promoted wave's DaemonSet.
   */
  public readonly daemonSet: kplus.DaemonSet;
  /** Every DaemonSet of the agent: one per rendered rollout wave, then the fleet. */
  public readonly daemonSets: kplus.DaemonSet[];
  /** The main container of `daemonSet`. */
  public readonly mainContainer: kplus.Container;
  /** The agent's ServiceAccount. */
  public readonly serviceAccount: kplus.ServiceAccount;
  /** The ConfigMap of the current version, if the agent has config. */
  public readonly configMap?: kplus.ConfigMap;
  /** The ClusterRole, if `rbacRules` were given. */
  public readonly clusterRole?: ApiObject;
  /** The Namespace object, if `createNamespace`. */
  public readonly namespaceObject?: ApiObject;
  /** The Pod Security Admission level the agent's pods need. */
  public readonly podSecurityLevel: PodSecurityLevel;
  /** Labels selecting the agent's pods (of the fleet DaemonSet). Stable: never the version or a hash. */
  public readonly selectorLabels: { [key: string]: string };
  /** Host ports the agent binds on its nodes. */
  public readonly hostPorts: AgentHostPort[];
  /** The update strategy of the current version. */
  public readonly updateStrategy: UpdateStrategy;
  /** The priority class name the pods use. */
  public readonly priorityClassName: string;
  /** Names of the rollout groups rendered, in order (wave names, then `fleet`); `["fleet"]` without waves. */
  public readonly rolloutGroups: string[];
  /** Names of the rollout groups that run the current version. */
  public readonly promotedGroups: string[];

  private readonly props: NodeAgentDaemonSetProps;
  private readonly configMaps = new Map<string, kplus.ConfigMap>();
  private readonly hostPathVolumes = new Map<string, HostPathVolume>();
  /** Node requirements every DaemonSet of the agent carries (besides nodeSelector). */
  private readonly baseRequirements: NodeSelectorRequirementJson[];
  private readonly nodeSelector: { [key: string]: string };

  public constructor(scope: Construct, id: string, props: NodeAgentDaemonSetProps) {
    super(scope, id);
    this.props = props;
    this.name = props.name ?? nameFromId(id);
    this.namespace = props.namespace ?? Chart.of(this).namespace ?? 'kube-system';
    this.updateStrategy = props.updateStrategy ?? UpdateStrategy.steady();
    this.hostPorts = collectHostPorts(props);
    this.nodeSelector = sortedRecord(props.nodeSelector ?? (props.os === '' ? {} : { 'kubernetes.io/os': props.os ?? 'linux' }));
    this.baseRequirements = [
      ...(props.excludeVirtualNodes ?? true ? VIRTUAL_NODE_EXCLUSIONS : []),
      ...(props.nodeRequirements ?? []).map((r) => r._toJson()),
    ];
    for (const volume of props.hostPaths ?? []) this.hostPathVolumes.set(volume.name, volume);

    // Checks before building: a bad prop produces no object at all.
    const problems = this.checkProps();
    if (problems.length > 0) {
      throw new Error(`${this.describe()}: invalid props:\n  - ${problems.join('\n  - ')}`);
    }
    const plan = props.rollout ? planRollout(props.rollout, this.currentRelease(), this.baseTerms(), this.updateStrategy, this.name) : undefined;
    const planProblems = plan ? [
      ...plan.problems,
      ...plan.groups.flatMap((g) => this.surgeProblems(g.strategy).map((m) => `rollout pace of "${g.name}": ${m}`)),
    ] : [];
    if (planProblems.length > 0) {
      throw new Error(`${this.describe()}: invalid props:\n  - ${planProblems.join('\n  - ')}`);
    }

    this.podSecurityLevel = this.computePodSecurityLevel();
    this.priorityClassName = props.priorityClass ? (props.priorityClass.name ?? `${this.name}-critical`) : (props.priorityClassName ?? 'system-node-critical');

    if (props.createNamespace) this.namespaceObject = this.renderNamespace();
    if (props.priorityClass) this.renderPriorityClass(props.priorityClass);
    if ((props.createPriorityQuota ?? true) && !props.priorityClass && this.namespace !== 'kube-system'
      && CRITICAL_PRIORITY_CLASSES.includes(this.priorityClassName)) {
      this.renderPriorityQuota();
    }
    const automount = props.automountServiceAccountToken ?? (props.rbacRules ?? []).length > 0;
    this.serviceAccount = new kplus.ServiceAccount(this, 'ServiceAccount', {
      metadata: { name: this.name, namespace: this.namespace, labels: this.commonLabels() },
      automountToken: automount,
    });
    if ((props.rbacRules ?? []).length > 0) this.clusterRole = this.renderRbac(props.rbacRules!);

    const groups: RolloutGroupPlan[] = plan ? plan.groups : [{
      name: 'fleet',
      id: 'DaemonSet',
      dsName: this.name,
      release: this.currentRelease(),
      promoted: true,
      terms: this.baseTerms(),
      strategy: this.updateStrategy,
      annotations: {},
    }];
    this.rolloutGroups = groups.map((g) => g.name);
    this.promotedGroups = groups.filter((g) => g.promoted).map((g) => g.name);
    // The current version's ConfigMap exists from the first stage on, so a promotion only changes
    // DaemonSets; the previous version's exists while a group still runs it.
    if (props.configData) this.configMapFor(props.configData);
    this.daemonSets = [];
    let primary: { ds: kplus.DaemonSet; main: kplus.Container } | undefined;
    for (const group of groups) {
      const rendered = this.renderDaemonSet(group.id, group.dsName, group.name, group.release, group.terms, group.strategy, group.annotations);
      this.daemonSets.push(rendered.ds);
      primary = rendered;
    }
    if (!primary) {
      throw new Error(`${this.describe()}: rollout: no DaemonSet would be rendered; promote at least the first wave`);
    }
    this.daemonSet = primary.ds;
    this.mainContainer = primary.main;
    this.configMap = this.configMaps.get(configName(this.name, this.props.configData ?? {}));
    this.selectorLabels = this.selectorFor('fleet');

    this.node.addValidation({ validate: () => this.checkAgainstOtherAgents() });
  }

  /** The settings that change between versions, as the props give them. */
  private currentRelease(): AgentRelease {
    const p = this.props;
    return {
      image: p.image,
      command: p.command,
      args: p.args,
      env: p.env,
      resources: p.resources,
      configData: p.configData,
      sidecars: p.sidecars,
      initContainers: p.initContainers,
    };
  }

  /** The agent's own node-affinity term (virtual nodes and user requirements), as one ANDed term. */
  private baseTerms(): NodeSelectorTermJson[] {
    return this.baseRequirements.length > 0 ? [{ matchExpressions: this.baseRequirements }] : [];
  }

  private describe(): string {
    return `NodeAgentDaemonSet ${this.node.path}`;
  }

  // ---------------------------------------------------------------- checks

  private checkProps(): string[] {
    const p = this.props;
    const problems: string[] = [];
    problems.push(...checkDnsLabel('name', this.name, 50).map((m) => `${m}; set "name" explicitly`));
    problems.push(...checkDnsLabel('namespace', this.namespace));
    if (p.containerName !== undefined) problems.push(...checkDnsLabel('containerName', p.containerName));
    problems.push(...checkLabels('labels', p.labels));
    for (const key of Object.keys(p.podAnnotations ?? {})) problems.push(...checkLabelKey('podAnnotations', key));
    if (p.component !== undefined) problems.push(...checkLabelValue('component', p.component));
    if (p.partOf !== undefined) problems.push(...checkLabelValue('partOf', p.partOf));

    // containers
    const containers = this.resolveContainers(this.currentRelease());
    const names = [...containers.main, ...containers.init].map((c) => c.name);
    for (const name of new Set(names)) {
      if (names.filter((n) => n === name).length > 1) problems.push(`containers: the name "${name}" is used by two containers; give each a unique name`);
    }
    for (const c of [...containers.main, ...containers.init]) {
      problems.push(...this.checkContainer(c));
    }

    // host paths and config
    const volumeNames = (p.hostPaths ?? []).map((v) => v.name);
    for (const volume of p.hostPaths ?? []) {
      const where = `hostPaths["${volume.name}"]`;
      problems.push(...checkDnsLabel(`${where}.name`, volume.name));
      if (volume.name === CONFIG_VOLUME) problems.push(`${where}.name "config" is reserved for the agent's ConfigMap; choose another name`);
      if (volumeNames.filter((n) => n === volume.name).length > 1) problems.push(`${where}: the volume name is used twice; give each hostPath a unique name`);
      problems.push(...checkAbsolutePath(`${where}.hostPath`, volume.hostPath));
      if (volume.mountPath !== undefined) problems.push(...checkAbsolutePath(`${where}.mountPath`, volume.mountPath));
      if (volume.type !== undefined && !Object.values(HostPathType).includes(volume.type)) problems.push(`${where}.type "${volume.type}" is not a hostPath type`);
    }
    for (const key of Object.keys(p.configData ?? {})) problems.push(...checkConfigKey('configData', key));
    if (p.configMountPath !== undefined) problems.push(...checkAbsolutePath('configMountPath', p.configMountPath));

    // update pace
    problems.push(...this.updateStrategy.problems().map((m) => `updateStrategy: ${m}`));
    problems.push(...this.surgeProblems(this.updateStrategy).map((m) => `updateStrategy: ${m}`));
    problems.push(...checkWholeNumber('minReadySeconds', p.minReadySeconds));
    problems.push(...checkWholeNumber('revisionHistoryLimit', p.revisionHistoryLimit));
    problems.push(...checkWholeNumber('terminationGracePeriodSeconds', p.terminationGracePeriodSeconds));

    // scheduling
    for (const [key, value] of Object.entries(p.nodeSelector ?? {})) {
      problems.push(...checkLabelKey('nodeSelector', key), ...checkLabelValue(`nodeSelector["${key}"]`, value));
    }
    for (const requirement of p.nodeRequirements ?? []) {
      problems.push(...checkLabelKey('nodeRequirements', requirement.key));
      problems.push(...requirement.problems().map((m) => `nodeRequirements: ${m}`));
    }
    (p.tolerations ?? []).forEach((t, i) => problems.push(...checkToleration(`tolerations[${i}]`, t)));

    // priority
    if (p.priorityClass) {
      if (p.priorityClassName !== undefined) problems.push('priorityClassName and priorityClass are both set; give only one');
      problems.push(...checkWholeNumber('priorityClass.value', p.priorityClass.value, -2147483648));
      if (p.priorityClass.value > 1000000000) problems.push(`priorityClass.value ${p.priorityClass.value} is above 1000000000, the highest value a user PriorityClass may have`);
      if (p.priorityClass.name !== undefined) problems.push(...checkDnsLabel('priorityClass.name', p.priorityClass.name));
    }
    if (p.priorityClassName !== undefined && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(p.priorityClassName)) {
      problems.push(`priorityClassName "${p.priorityClassName}" is not a valid PriorityClass name`);
    }

    // RBAC
    (p.rbacRules ?? []).forEach((rule, i) => {
      if (rule.verbs.length === 0) problems.push(`rbacRules[${i}].verbs is empty; name the verbs, e.g. ["get", "list", "watch"]`);
      if (rule.resources.length === 0) problems.push(`rbacRules[${i}].resources is empty; name the resources, e.g. ["pods"]`);
    });
    return problems;
  }

  private checkContainer(c: ResolvedContainer): string[] {
    const where = `container "${c.name}"`;
    const s = c.settings;
    const problems: string[] = [];
    problems.push(...checkDnsLabel(`${where} name`, c.name));
    problems.push(...checkImage(`${where} image`, s.image));
    const r = s.resources ?? {};
    for (const field of ['cpuRequest', 'cpuLimit', 'memoryRequest', 'memoryLimit'] as const) {
      problems.push(...checkQuantity(`${where} resources.${field}`, r[field]));
    }
    const res = resolveResources(s.resources);
    problems.push(...checkRequestNotAboveLimit(`${where} resources cpu`, res.cpuRequest, res.cpuLimit));
    problems.push(...checkRequestNotAboveLimit(`${where} resources memory`, res.memoryRequest, res.memoryLimit));
    (s.capabilities ?? []).forEach((cap) => problems.push(...checkCapability(`${where} capabilities`, cap)));
    const portNames = (s.ports ?? []).map((port) => port.name);
    for (const port of s.ports ?? []) {
      problems.push(...checkPortName(`${where} port name`, port.name));
      if (portNames.filter((n) => n === port.name).length > 1) problems.push(`${where}: the port name "${port.name}" is used twice`);
      problems.push(...checkPort(`${where} port "${port.name}" containerPort`, port.containerPort));
      problems.push(...checkPort(`${where} port "${port.name}" hostPort`, port.hostPort));
      if (this.props.hostNetwork && port.hostPort !== undefined && port.hostPort !== port.containerPort) {
        problems.push(`${where} port "${port.name}": with hostNetwork the hostPort (${port.hostPort}) must equal the containerPort (${port.containerPort}); drop hostPort or make them equal`);
      }
    }
    for (const mount of c.mounts) {
      if (mount.volume !== CONFIG_VOLUME && !this.hostPathVolumes.has(mount.volume)) {
        problems.push(`${where} mounts "${mount.volume}", which is not a volume of the agent; add it to hostPaths or fix the name`);
      }
      if (mount.volume === CONFIG_VOLUME && !this.props.configData) {
        problems.push(`${where} mounts "config" but the agent has no configData`);
      }
      problems.push(...checkAbsolutePath(`${where} mountPath`, mount.mountPath));
      if (mount.propagation === MountPropagation.BIDIRECTIONAL && !s.privileged) {
        problems.push(`${where} mounts "${mount.volume}" with Bidirectional propagation, which the API allows only in a privileged container; set privileged: true or use HostToContainer`);
      }
    }
    const paths = c.mounts.map((m) => m.mountPath);
    for (const path of new Set(paths)) {
      if (paths.filter((x) => x === path).length > 1) problems.push(`${where} mounts two volumes at ${path}`);
    }
    return problems;
  }

  /** Surge starts a second pod on the node beside the old one: refuse it where the two would clash. */
  private surgeProblems(strategy: UpdateStrategy): string[] {
    const problems: string[] = [];
    if (strategy.type !== UpdateStrategyType.ROLLING_UPDATE || !strategy.surges) return problems;
    if (this.hostPorts.length > 0) {
      const ports = this.hostPorts.map((p) => `${p.port}/${p.protocol}`).join(', ');
      problems.push(`maxSurge ${strategy.maxSurge!.toString()} with host port(s) ${ports}: the surge pod can never schedule beside the old one (the scheduler's NodePorts filter), so the rollout deadlocks; use maxUnavailable instead (e.g. UpdateStrategy.oneAtATime())`);
    }
    const writable = (this.props.hostPaths ?? []).filter((v) => v.readOnly === false);
    if (writable.length > 0) {
      problems.push(`maxSurge ${strategy.maxSurge!.toString()} with writable hostPath(s) ${writable.map((v) => v.hostPath).join(', ')}: old and new pod would write the same host state at once; use maxUnavailable instead`);
    }
    return problems;
  }

  /** Late check: agents of one app must not bind the same host port on nodes they may share. */
  private checkAgainstOtherAgents(): string[] {
    const problems: string[] = [];
    const others = this.node.root.node.findAll().filter((c: IConstruct): c is NodeAgentDaemonSet => c instanceof NodeAgentDaemonSet && c !== this);
    for (const other of others) {
      for (const mine of this.hostPorts) {
        const clash = other.hostPorts.find((theirs) => theirs.port === mine.port && theirs.protocol === mine.protocol);
        if (clash && !this.nodeSetsDisjoint(other)) {
          problems.push(`${this.describe()} and NodeAgentDaemonSet ${other.node.path} both bind host port ${mine.port}/${mine.protocol} on nodes they may share; change one port, or give them node requirements that exclude each other`);
        }
      }
      if (this.props.createNamespace && other.props.createNamespace && other.namespace === this.namespace && this.node.path > other.node.path) {
        problems.push(`${this.describe()} and NodeAgentDaemonSet ${other.node.path} both create namespace "${this.namespace}"; set createNamespace on one of them only`);
      }
    }
    return problems;
  }

  /** True when no node can match both agents (a key required with disjoint values, or present vs absent). */
  private nodeSetsDisjoint(other: NodeAgentDaemonSet): boolean {
    const mine = [...selectorAsRequirements(this.nodeSelector), ...this.baseRequirements];
    const theirs = [...selectorAsRequirements(other.nodeSelector), ...other.baseRequirements];
    return mine.some((a) => theirs.some((b) => requirementsExclude(a, b)));
  }

  // ---------------------------------------------------------------- rendering

  /**
   * Labels of every object; `app.kubernetes.io/version` only on the DaemonSets (objects of one
   * version), so starting a rollout does not touch the shared ones.
   */
  private commonLabels(image?: string): { [key: string]: string } {
    return sortedRecord({
      ...this.props.labels,
      'app.kubernetes.io/name': this.name,
      'app.kubernetes.io/instance': this.name,
      ...(image ? { 'app.kubernetes.io/version': versionLabel(image) } : {}),
      'app.kubernetes.io/component': this.props.component ?? 'node-agent',
      'app.kubernetes.io/part-of': this.props.partOf ?? 'node-agents',
      'app.kubernetes.io/managed-by': 'cdk8s',
    });
  }

  /** Only stable identity: never the version, a config hash or the construct address. */
  private selectorFor(group: string): { [key: string]: string } {
    return {
      'app.kubernetes.io/instance': this.name,
      'app.kubernetes.io/name': this.name,
      [ROLLOUT_GROUP_LABEL]: group,
    };
  }

  private resolveContainers(release: AgentRelease): { main: ResolvedContainer[]; init: ResolvedContainer[] } {
    const p = this.props;
    const mainMounts: AgentVolumeMount[] = [
      ...(p.hostPaths ?? []).filter((v) => v.mountInMainContainer ?? true).map((v) => ({
        volume: v.name, mountPath: v.mountPath ?? v.hostPath, readOnly: v.readOnly ?? true, propagation: v.propagation,
      })),
      ...(release.configData ? [{ volume: CONFIG_VOLUME, mountPath: p.configMountPath ?? `/etc/${this.name}`, readOnly: true }] : []),
    ];
    const main: ResolvedContainer = {
      name: p.containerName ?? this.name,
      settings: { ...p, ...release, image: release.image },
      mounts: mainMounts,
      fieldEnv: p.fieldEnv ?? {},
    };
    const extra = (list: AgentContainer[] | undefined) => (list ?? [])
      .map((c) => ({ name: c.name, settings: c, mounts: c.mounts ?? [], fieldEnv: {} }));
    return { main: [main, ...extra(release.sidecars)], init: extra(release.initContainers) };
  }

  private renderDaemonSet(
    id: string, dsName: string, group: string, release: AgentRelease, terms: NodeSelectorTermJson[],
    strategy: UpdateStrategy, annotations: { [key: string]: string },
  ): { ds: kplus.DaemonSet; main: kplus.Container } {
    const p = this.props;
    const containers = this.resolveContainers(release);
    const podAnnotations: { [key: string]: string } = { ...p.podAnnotations };
    const config = release.configData ? this.configMapFor(release.configData) : undefined;
    if (config) podAnnotations['checksum/config'] = configChecksum(release.configData!);
    const labels = this.commonLabels(release.image);

    const ds = new kplus.DaemonSet(this, id, {
      metadata: { name: dsName, namespace: this.namespace, labels, annotations: sortedRecord(annotations) },
      podMetadata: { labels: { ...labels, [ROLLOUT_GROUP_LABEL]: group }, annotations: sortedRecord(podAnnotations) },
      select: false,
      minReadySeconds: p.minReadySeconds ?? 10,
      serviceAccount: this.serviceAccount,
      automountServiceAccountToken: this.serviceAccount.automountToken,
      hostNetwork: p.hostNetwork ?? false,
      dns: p.hostNetwork ? { policy: kplus.DnsPolicy.CLUSTER_FIRST_WITH_HOST_NET } : undefined,
      terminationGracePeriod: Duration.seconds(p.terminationGracePeriodSeconds ?? 30),
    });
    ds.select(kplus.LabelSelector.of({ labels: this.selectorFor(group) }));

    const volumes = new Map<string, kplus.Volume>();
    const volumeFor = (name: string): kplus.Volume => {
      let volume = volumes.get(name);
      if (!volume) {
        if (name === CONFIG_VOLUME) {
          volume = kplus.Volume.fromConfigMap(ds, 'ConfigVolume', config!, { name: CONFIG_VOLUME });
        } else {
          const host = this.hostPathVolumes.get(name)!;
          volume = kplus.Volume.fromHostPath(ds, `HostPath-${name}`, name, { path: host.hostPath, type: (host.type ?? HostPathType.DIRECTORY) as unknown as kplus.HostPathVolumeType });
        }
        volumes.set(name, volume);
      }
      return volume;
    };

    const patches: ContainerPatch[] = [];
    const render = (c: ResolvedContainer, index: number, init: boolean): kplus.Container => {
      const s = c.settings;
      const container = init
        ? ds.addInitContainer(this.containerProps(c))
        : ds.addContainer(this.containerProps(c));
      for (const mount of c.mounts) {
        container.mount(mount.mountPath, volumeFor(mount.volume), {
          readOnly: mount.readOnly ?? true,
          propagation: mount.propagation as unknown as kplus.MountPropagation | undefined,
          subPath: mount.subPath,
        });
      }
      patches.push({ index, init, resources: renderResources(s.resources), securityContext: renderSecurityContext(s) });
      return container;
    };
    const main = render(containers.main[0], 0, false);
    containers.main.slice(1).forEach((c, i) => render(c, i + 1, false));
    containers.init.forEach((c, i) => render(c, i, true));

    patchDaemonSet(ApiObject.of(ds), {
      updateStrategy: renderUpdateStrategy(strategy),
      revisionHistoryLimit: p.revisionHistoryLimit ?? 10,
      hostPid: p.hostPid ?? false,
      priorityClassName: this.priorityClassName,
      nodeSelector: this.nodeSelector,
      affinity: terms.length > 0 || this.props.rollout ? {
        nodeAffinity: terms.length > 0 ? { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms.map(toKubeTerm) } } : undefined,
        podAntiAffinity: this.props.rollout ? otherGroupsAntiAffinity(this.name, group) : undefined,
      } : undefined,
      tolerations: this.renderTolerations(),
      podSecurityContext: renderPodSecurityContext(containers.main[0].settings),
      containers: patches,
      removeTemplateLabels: [kplus.Pod.ADDRESS_LABEL],
    });
    return { ds, main };
  }

  private containerProps(c: ResolvedContainer): kplus.ContainerProps {
    const s = c.settings;
    const env: { [name: string]: kplus.EnvValue } = {};
    for (const [name, path] of Object.entries(c.fieldEnv)) env[name] = kplus.EnvValue.fromFieldRef(path);
    Object.assign(env, s.env ?? {});
    return {
      name: c.name,
      image: s.image,
      imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
      command: s.command,
      args: s.args,
      envVariables: sortedRecord(env),
      // `ports`, not `portNumber`: cdk8s-plus adds a TCP startup probe for `portNumber`.
      ports: (s.ports ?? []).map((port: AgentPort) => ({
        name: port.name,
        number: port.containerPort,
        hostPort: port.hostPort ?? (this.props.hostNetwork ? port.containerPort : undefined),
        protocol: port.protocol,
      })),
      readiness: s.readiness,
      liveness: s.liveness,
      startup: s.startup,
      lifecycle: s.preStop ? { preStop: s.preStop } : undefined,
    };
  }

  private renderTolerations(): kplus.k8s.Toleration[] {
    const p = this.props;
    if (p.tolerateAllTaints) return [{ operator: 'Exists' }];
    const list: AgentToleration[] = [];
    if (p.tolerateControlPlane ?? true) {
      list.push({ key: 'node-role.kubernetes.io/control-plane', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE });
      list.push({ key: 'node-role.kubernetes.io/master', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE });
    }
    list.push(...(p.tolerations ?? []));
    return list.map((t) => ({
      key: t.key, operator: t.operator ?? TolerationOperator.EQUAL, value: t.value, effect: t.effect, tolerationSeconds: t.tolerationSeconds,
    }));
  }

  /** Content-addressed, immutable, and without a version label: two versions with the same config share it. */
  private configMapFor(data: { [file: string]: string }): kplus.ConfigMap {
    const name = configName(this.name, data);
    let configMap = this.configMaps.get(name);
    if (!configMap) {
      const id = this.configMaps.size === 0 ? 'ConfigMap' : `ConfigMap-${name}`;
      configMap = new kplus.ConfigMap(this, id, {
        metadata: { name, namespace: this.namespace, labels: this.commonLabels() },
        data: sortedRecord(data),
        // Its name changes with its content, so it never needs an update; immutable spares the
        // API server a watch from every node's kubelet.
        immutable: true,
      });
      this.configMaps.set(name, configMap);
    }
    return configMap;
  }

  private renderNamespace(): ApiObject {
    const level = this.podSecurityLevel;
    return clusterScoped(new kplus.k8s.KubeNamespace(this, 'Namespace', {
      metadata: {
        name: this.namespace,
        labels: sortedRecord({
          'app.kubernetes.io/managed-by': 'cdk8s',
          [`${PSA_PREFIX}/enforce`]: level,
          [`${PSA_PREFIX}/audit`]: level,
          [`${PSA_PREFIX}/warn`]: level,
        }),
      },
    }));
  }

  private renderPriorityClass(priorityClass: AgentPriorityClass): void {
    clusterScoped(new kplus.k8s.KubePriorityClass(this, 'PriorityClass', {
      metadata: { name: this.priorityClassName, labels: this.commonLabels() },
      value: priorityClass.value,
      globalDefault: false,
      preemptionPolicy: 'PreemptLowerPriority',
      description: `Node agent ${this.name}: scheduled ahead of ordinary workloads so it is never left Pending on a full node.`,
    }));
  }

  private renderPriorityQuota(): void {
    new kplus.k8s.KubeResourceQuota(this, 'PriorityQuota', {
      metadata: { name: `${this.name}-${this.priorityClassName}`, namespace: this.namespace, labels: this.commonLabels() },
      spec: {
        // Not a limit: the quota exists so that admission accepts critical-priority pods here.
        hard: { pods: kplus.k8s.Quantity.fromString('1000000') },
        scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [this.priorityClassName] }] },
      },
    });
  }

  private renderRbac(rules: AgentPolicyRule[]): ApiObject {
    const labels = this.commonLabels();
    const role = clusterScoped(new kplus.k8s.KubeClusterRole(this, 'ClusterRole', {
      metadata: { name: this.name, labels },
      rules: rules.map((r) => ({ apiGroups: r.apiGroups ?? [''], resources: r.resources, verbs: r.verbs, resourceNames: r.resourceNames })),
    }));
    clusterScoped(new kplus.k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
      metadata: { name: this.name, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: this.name },
      subjects: [{ kind: 'ServiceAccount', name: this.name, namespace: this.namespace }],
    }));
    return role;
  }

  /** Computed from what the pods use, not hard-coded. */
  private computePodSecurityLevel(): PodSecurityLevel {
    const p = this.props;
    const release = this.currentRelease();
    const all = [{ ...p, ...release } as AgentContainerSettings, ...(release.sidecars ?? []), ...(release.initContainers ?? [])];
    const hostAccess = (p.hostPaths ?? []).length > 0 || p.hostNetwork || p.hostPid || this.hostPorts.length > 0
      || all.some((c) => c.privileged || (c.capabilities ?? []).some((cap) => !BASELINE_CAPABILITIES.has(cap)));
    if (hostAccess) return PodSecurityLevel.PRIVILEGED;
    const restricted = all.every((c) => !c.runAsRoot && (c.capabilities ?? []).every((cap) => cap === 'NET_BIND_SERVICE'));
    return restricted ? PodSecurityLevel.RESTRICTED : PodSecurityLevel.BASELINE;
  }
}

// ------------------------------------------------------------------ helpers

const VIRTUAL_NODE_EXCLUSIONS: NodeSelectorRequirementJson[] = [
  { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
  { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
];

/**
 * cdk8s gives every object of a chart with a namespace that namespace, cluster-scoped ones too; a
 * Namespace, PriorityClass, ClusterRole or ClusterRoleBinding must carry none.
 */
function clusterScoped<T extends ApiObject>(object: T): T {
  if (object.metadata.namespace !== undefined) object.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
  return object;
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
function otherGroupsAntiAffinity(agent: string, group: string): kplus.k8s.PodAntiAffinity {
  return {
    requiredDuringSchedulingIgnoredDuringExecution: [{
      labelSelector: {
        matchLabels: { 'app.kubernetes.io/instance': agent, 'app.kubernetes.io/name': agent },
        matchExpressions: [{ key: ROLLOUT_GROUP_LABEL, operator: 'NotIn', values: [group] }],
      },
      topologyKey: 'kubernetes.io/hostname',
    }],
  };
}

function nameFromId(id: string): string {
  return id.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').substring(0, 50);
}

function canonicalJson(data: { [key: string]: string }): string {
  return JSON.stringify(sortedRecord(data));
}

/** The full sha256 of the config, for the `checksum/config` pod annotation. */
export function configChecksum(data: { [file: string]: string }): string {
  return createHash('sha256').update(canonicalJson(data)).digest('hex');
}

/** Content-addressed ConfigMap name: each version of the config is its own object. */
function configName(agent: string, data: { [file: string]: string }): string {
  return `${agent}-config-${configChecksum(data).substring(0, 10)}`;
}

function resolveResources(r: AgentResources | undefined): { cpuRequest: string; cpuLimit?: string; memoryRequest: string; memoryLimit: string } {
  return {
    cpuRequest: r?.cpuRequest ?? DEFAULT_RESOURCES.cpuRequest,
    cpuLimit: r?.cpuLimit,
    memoryRequest: r?.memoryRequest ?? DEFAULT_RESOURCES.memoryRequest,
    memoryLimit: r?.memoryLimit ?? DEFAULT_RESOURCES.memoryLimit,
  };
}

function renderResources(r: AgentResources | undefined): kplus.k8s.ResourceRequirements {
  const res = resolveResources(r);
  const limits: { [key: string]: kplus.k8s.Quantity } = { memory: kplus.k8s.Quantity.fromString(res.memoryLimit) };
  if (res.cpuLimit) limits.cpu = kplus.k8s.Quantity.fromString(res.cpuLimit);
  return {
    requests: { cpu: kplus.k8s.Quantity.fromString(res.cpuRequest), memory: kplus.k8s.Quantity.fromString(res.memoryRequest) },
    limits: sortedRecord(limits),
  };
}

function renderSecurityContext(s: AgentContainerSettings): kplus.k8s.SecurityContext {
  const added = [...(s.capabilities ?? [])].sort();
  // The API rejects allowPrivilegeEscalation: false together with privileged or CAP_SYS_ADMIN.
  const escalation = (s.privileged ?? false) || added.includes('SYS_ADMIN');
  return {
    privileged: s.privileged ?? false,
    allowPrivilegeEscalation: escalation,
    readOnlyRootFilesystem: s.readOnlyRootFilesystem ?? true,
    runAsNonRoot: !(s.runAsRoot ?? false),
    runAsUser: s.runAsUser ?? (s.runAsRoot ? 0 : undefined),
    runAsGroup: s.runAsGroup,
    capabilities: { drop: ['ALL'], add: added.length > 0 ? added : undefined },
    seccompProfile: { type: 'RuntimeDefault' },
  };
}

function renderPodSecurityContext(main: AgentContainerSettings): kplus.k8s.PodSecurityContext {
  return {
    runAsNonRoot: !(main.runAsRoot ?? false),
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
    ? list.map((r) => ({ key: r.key, operator: r.operator, values: r.values ? [...r.values] : undefined }))
    : undefined;
  return { matchExpressions: copy(term.matchExpressions), matchFields: copy(term.matchFields) };
}

function checkToleration(where: string, t: AgentToleration): string[] {
  const problems: string[] = [];
  const operator = t.operator ?? TolerationOperator.EQUAL;
  if (!Object.values(TolerationOperator).includes(operator)) problems.push(`${where}.operator "${operator}" is not Exists or Equal`);
  if (operator === TolerationOperator.EXISTS && t.value) {
    problems.push(`${where}: operator Exists with value "${t.value}"; Exists ignores values, so drop the value or use operator Equal`);
  }
  if (operator === TolerationOperator.EQUAL && !t.key) {
    problems.push(`${where}: operator Equal needs a key; to tolerate every taint use operator Exists with no key (or tolerateAllTaints)`);
  }
  if (t.effect !== undefined && !Object.values(TaintEffect).includes(t.effect)) {
    problems.push(`${where}.effect "${t.effect}" is unknown; use NoSchedule, PreferNoSchedule or NoExecute`);
  }
  if (t.tolerationSeconds !== undefined && t.effect !== TaintEffect.NO_EXECUTE) {
    problems.push(`${where}: tolerationSeconds is only meaningful with effect NoExecute (got ${t.effect ?? 'every effect'}); set effect NoExecute or drop tolerationSeconds`);
  }
  if (t.tolerationSeconds !== undefined && !Number.isInteger(t.tolerationSeconds)) {
    problems.push(`${where}.tolerationSeconds must be a whole number, got ${t.tolerationSeconds}`);
  }
  if (t.key) problems.push(...checkLabelKey(`${where}.key`, t.key));
  return problems;
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

function selectorAsRequirements(selector: { [key: string]: string }): NodeSelectorRequirementJson[] {
  return Object.entries(selector).map(([key, value]) => ({ key, operator: 'In', values: [value] }));
}

/** Whether no label set can satisfy both requirements. */
function requirementsExclude(a: NodeSelectorRequirementJson, b: NodeSelectorRequirementJson): boolean {
  if (a.key !== b.key) return false;
  const av = a.values ?? [];
  const bv = b.values ?? [];
  const pair = (x: string, y: string) => (a.operator === x && b.operator === y) || (a.operator === y && b.operator === x);
  if (a.operator === 'In' && b.operator === 'In') return !av.some((v) => bv.includes(v));
  if (pair('In', 'NotIn')) {
    const [inValues, notInValues] = a.operator === 'In' ? [av, bv] : [bv, av];
    return inValues.every((v) => notInValues.includes(v));
  }
  return pair('Exists', 'DoesNotExist') || pair('In', 'DoesNotExist');
}
