/**
 * The readiness taint prop every agent takes (`AgentPodOptions.readinessTaint`). Resolved and checked in
 * readiness-taint-spec.ts; what the pod runs is in readiness-remover.ts; what it renders in src/render/readiness-taint.ts.
 */

/** Who else reads the readiness taint's key: the key is checked against each one's rules. */
export enum ReadinessTaintConsumer {
  /**
   * Karpenter: the NodePools list the taint under `spec.template.spec.startupTaints` (see
   * `NodeAgentDaemonSet.karpenterStartupTaint()`); any valid taint key.
   */
  KARPENTER = 'karpenter',
  /**
   * cluster-autoscaler (and the managed ones of GKE and AKS): a startup taint only under the prefix
   * `startup-taint.cluster-autoscaler.kubernetes.io/`; the node pools (node groups) carry the taint.
   */
  CLUSTER_AUTOSCALER = 'cluster-autoscaler',
  /** kubernetes-sigs/node-readiness-controller's rules: only keys under `readiness.k8s.io/`. */
  NODE_READINESS_CONTROLLER = 'node-readiness-controller',
}

/**
 * A NoSchedule taint the agent's nodes join with (from the node pool: Karpenter's `startupTaints`, a node group's
 * taints, kubelet `--register-with-taints`), which the agent's own pod removes from its node once it is Ready
 * there: workloads that do not tolerate it land only after the agent runs. The agent tolerates it.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/readiness-taints.md
 */
export interface AgentReadinessTaint {
  /** The taint key, e.g. `node-agents.cdk8s.io/logs-not-ready` or `startup-taint.cluster-autoscaler.kubernetes.io/logs`. */
  readonly key: string;

  /**
   * Who else reads the key; it is checked against each one's rules.
   * @default [ReadinessTaintConsumer.KARPENTER]
   */
  readonly consumers?: ReadinessTaintConsumer[];

  /**
   * Seconds between two reads of the node once the taint is gone: a taint added again later is removed within
   * this time (while the pod is Ready). One GET of the node per node per period, served from the API server's
   * watch cache (`resourceVersion=0`): 5,000 nodes at 60 s are about 83 reads a second per agent.
   * @default 60
   */
  readonly recheckSeconds?: number;

  /**
   * Render the ValidatingAdmissionPolicy that lets the remover change only its own node, and only by removing
   * this taint (admissionregistration.k8s.io/v1: Kubernetes 1.30 or later, whose tokens name the pod's node).
   * Without it (clusters before 1.30) the remover's `nodes` patch grant is as wide as RBAC makes it: every node,
   * every field.
   * @default true
   */
  readonly admissionPolicy?: boolean;

  /**
   * Image of the remover container: POSIX sh with awk and sed (busybox), and curl.
   * @default "curlimages/curl:8.21.0"
   */
  readonly removerImage?: string;
}
