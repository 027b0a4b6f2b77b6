import { AgentEnvFieldPath } from './container-inputs';
import { NodeRequirement } from './node-requirement';
import {
  AgentContainerSettings, AgentPolicyRule, AgentPriorityClass, AgentToleration, HostPathVolume,
} from './options';
import { AgentPodOptions } from './pod-options';
import type { AgentRollout } from './rollout';
import { UpdateStrategy } from './update-strategy';
import type { AgentAdoption } from '../adoption/adoption';
import { AgentAlertsOptions } from '../alerts/options';

// The props sit beside the spec that resolves them (agent-spec.ts), below the construct that takes
// them, so the spec, the release and the held waves import them without climbing to constructs/.
// constructs/node-agent-daemon-set.ts re-exports them: the public API is unchanged.

/** Props of a node agent: one pod on every eligible node. */
export interface NodeAgentDaemonSetProps extends AgentContainerSettings, AgentPodOptions {
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
   * Environment variables of the main container taken from fields of the pod (downward API),
   * e.g. `{ HOST_IP: AgentEnvFieldPath.NODE_IP }`. They never change between versions.
   * @default - none
   */
  readonly fieldEnv?: { [name: string]: AgentEnvFieldPath };

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
   * Alternative sets of node requirements: a node must meet every requirement of at least one set
   * (one node-affinity term per set; the scheduler ORs terms), besides `nodeRequirements`. For nodes
   * that different tools label differently, e.g. GPU nodes labelled by NFD or by gpu-operator.
   * @default - none
   */
  readonly nodeRequirementAlternatives?: NodeRequirement[][];

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
   * PriorityClass of the pods. The default scheduler places DaemonSet pods (since Kubernetes 1.12)
   * and, on a full node, preempts only pods of lower priority: at the default priority an agent pod
   * stays Pending beside workloads of equal priority.
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
   * Keep the agent's pods off nodes that run a pod of one of these `app.kubernetes.io/component`
   * values, in any namespace, its own replaced pod included (a required pod anti-affinity per node
   * with an empty namespaceSelector): for agents of which two on one node clash, such as kernel-module drivers.
   * @default - none
   */
  readonly exclusiveComponents?: string[];

  /**
   * Render a PrometheusRule with the agent's DaemonSet alerts (kube-state-metrics), summed over
   * every rollout wave.
   * @default - no alerts
   */
  readonly alerts?: AgentAlertsOptions;

  /**
   * Roll the agent out over canary waves of nodes: one DaemonSet per wave plus the fleet.
   * @default - one DaemonSet for all nodes
   */
  readonly rollout?: AgentRollout;

  /**
   * Take over a running DaemonSet in place (a Helm chart's, or any): the fleet DaemonSet keeps its name,
   * namespace and selector for good, so applying the agent is a rolling update of that object at the agent's
   * pace (each node's pod replaced once, never two on a node). The agent's name and namespace default to the
   * DaemonSet's, and its `app.kubernetes.io/name` / `/instance` labels take the selector's values.
   * Rollout waves can be enabled later as for any running agent.
   * @default - a new DaemonSet
   */
  readonly adopt?: AgentAdoption;
}
