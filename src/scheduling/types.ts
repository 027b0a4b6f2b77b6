/**
 * Plain Kubernetes JSON shapes (the subset node-agent scheduling needs).
 * Pure data: no cdk8s here, so scheduling logic is testable without synthesis.
 */

export type NodeSelectorOperatorJson = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist' | 'Gt' | 'Lt';

export interface NodeSelectorRequirementJson {
  readonly key: string;
  readonly operator: NodeSelectorOperatorJson;
  readonly values?: readonly string[];
}

export interface NodeSelectorTermJson {
  readonly matchExpressions?: readonly NodeSelectorRequirementJson[];
  readonly matchFields?: readonly NodeSelectorRequirementJson[];
}

export type TaintEffectJson = 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';

export interface TaintJson {
  readonly key: string;
  readonly value?: string;
  readonly effect: TaintEffectJson;
}

export interface TolerationJson {
  readonly key?: string;
  readonly operator?: 'Exists' | 'Equal';
  readonly value?: string;
  readonly effect?: string;
  readonly tolerationSeconds?: number;
}

export interface NodeConditionJson {
  readonly type: string;
  readonly status: string;
}

/** A Node object as `kubectl get nodes -o json` lists it (fields we read). */
export interface NodeJson {
  readonly metadata: {
    readonly name: string;
    readonly labels?: Readonly<Record<string, string>>;
  };
  readonly spec?: {
    readonly taints?: readonly TaintJson[];
    readonly unschedulable?: boolean;
  };
  readonly status?: {
    readonly conditions?: readonly NodeConditionJson[];
    /** what the scheduler may place on the node, e.g. `{ "nvidia.com/gpu": "8" }` */
    readonly allocatable?: Readonly<Record<string, string>>;
  };
}

/** What node affinity looks at: the node's name (matchFields) and labels (matchExpressions). */
export interface NodeIdentity {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

/** The label Kubernetes' cloud providers (and Karpenter) put on every node: its instance type. */
export const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';
/** Karpenter's label naming the NodePool that launched the node. */
export const NODE_POOL_LABEL = 'karpenter.sh/nodepool';
/** Karpenter's AWS provider: the instance type's vCPUs (an integer). */
export const INSTANCE_CPU_LABEL = 'karpenter.k8s.aws/instance-cpu';
/** Karpenter's AWS provider: the instance type's memory in MiB (an integer). */
export const INSTANCE_MEMORY_LABEL = 'karpenter.k8s.aws/instance-memory';
