import { AgentResources } from './options';
import { INSTANCE_CPU_LABEL, INSTANCE_MEMORY_LABEL, INSTANCE_TYPE_LABEL, NODE_POOL_LABEL } from '../scheduling/types';
import { brand } from '../validation/brand';
import { checkArgs } from '../validation/struct-check';
import { ProfileSpec } from '../waves/profiles';


/** Integer bounds of a node label's value, both inclusive. */
export interface ResourceProfileBounds {
  /**
   * The lowest value (rendered `Gt min-1`).
   * @default - no lower bound
   */
  readonly min?: number;

  /**
   * The highest value (rendered `Lt max+1`).
   * @default - no upper bound
   */
  readonly max?: number;
}

/**
 * Which nodes a resource profile sizes, by one node label: its value in a list, or (read as an integer) within
 * bounds. Profiles on one label must be disjoint; a node matching no profile gets the agent's own resources.
 */
export class ResourceProfileNodes {
  /** Nodes of these instance types (`node.kubernetes.io/instance-type`), e.g. `['m7i.4xlarge', 'm7i.8xlarge']`. */
  public static instanceTypes(types: string[]): ResourceProfileNodes {
    checkArgs('ResourceProfileNodes.instanceTypes', [types]);
    return new ResourceProfileNodes(INSTANCE_TYPE_LABEL, [...types], undefined);
  }

  /** Nodes launched by these Karpenter NodePools (`karpenter.sh/nodepool`). */
  public static nodePools(names: string[]): ResourceProfileNodes {
    checkArgs('ResourceProfileNodes.nodePools', [names]);
    return new ResourceProfileNodes(NODE_POOL_LABEL, [...names], undefined);
  }

  /**
   * Nodes whose instance type has this many vCPUs (`karpenter.k8s.aws/instance-cpu`, set by Karpenter's AWS
   * provider), e.g. `{ min: 16 }`.
   */
  public static instanceCpu(bounds: ResourceProfileBounds): ResourceProfileNodes {
    checkArgs('ResourceProfileNodes.instanceCpu', [bounds]);
    return new ResourceProfileNodes(INSTANCE_CPU_LABEL, undefined, { ...bounds });
  }

  /** Nodes whose instance type has this much memory in MiB (`karpenter.k8s.aws/instance-memory`), e.g. `{ max: 16384 }`. */
  public static instanceMemoryMib(bounds: ResourceProfileBounds): ResourceProfileNodes {
    checkArgs('ResourceProfileNodes.instanceMemoryMib', [bounds]);
    return new ResourceProfileNodes(INSTANCE_MEMORY_LABEL, undefined, { ...bounds });
  }

  /** Nodes whose label `key` has one of `values` (a node pool label, a node group, any label). */
  public static labelValues(key: string, values: string[]): ResourceProfileNodes {
    checkArgs('ResourceProfileNodes.labelValues', [key, values]);
    return new ResourceProfileNodes(key, [...values], undefined);
  }

  /**
   * Nodes whose label `key`, read as an integer, lies within `bounds`. A node whose value is not an integer
   * matches no bound (the scheduler's parse fails): neither this profile nor the default one.
   */
  public static labelRange(key: string, bounds: ResourceProfileBounds): ResourceProfileNodes {
    checkArgs('ResourceProfileNodes.labelRange', [key, bounds]);
    return new ResourceProfileNodes(key, undefined, { ...bounds });
  }

  private constructor(
    /** The node label the profile selects by. */
    public readonly key: string,
    /** The label values, for a list. */
    public readonly values: string[] | undefined,
    /** The integer bounds, for a range. */
    public readonly bounds: ResourceProfileBounds | undefined,
  ) {}

  /** @internal */
  public _toSpec(name: string): ProfileSpec {
    return this.values !== undefined
      ? { name, key: this.key, values: [...this.values] }
      : { name, key: this.key, min: this.bounds?.min, max: this.bounds?.max };
  }
}
brand(ResourceProfileNodes, 'ResourceProfileNodes');

/**
 * A resource profile: the requests and limits the agent's pods get on some nodes, e.g. a log collector's memory on
 * nodes that run 200 pods. Each profile is its own DaemonSet (per rollout wave), whose node affinity takes exactly
 * its nodes: the first profile matching a node owns it, a node matching none runs the agent's own resources.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/resource-profiles.md
 */
export interface AgentResourceProfile {
  /** The profile's name: a DNS-1123 label, part of its DaemonSets' names (`<agent>-<profile>`, `<agent>-<profile>-<wave>`). */
  readonly name: string;

  /** The nodes it sizes, e.g. `ResourceProfileNodes.instanceCpu({ min: 16 })`. */
  readonly nodes: ResourceProfileNodes;

  /**
   * Resources of the agent's main container on these nodes; unset fields keep the agent's defaults.
   * @default - the agent's `resources`
   */
  readonly resources?: AgentResources;

  /**
   * Resources of other containers of the pod by name (sidecars, init containers, the agent's own such as
   * `kube-rbac-proxy`) on these nodes.
   * @default - the agent's `containerResources`
   */
  readonly containerResources?: { [container: string]: AgentResources };

  /**
   * `NodeAgentDaemonSet` only: the ConfigMap data of this profile's pods, replacing `configData` (its own
   * content-addressed ConfigMap). The log collector writes it from `storageMaxChunksUp` and `storageBacklogMemLimit`.
   * @default - the agent's config
   */
  readonly configData?: { [file: string]: string };

  /**
   * `LogCollectorDaemonSet` only: fluent-bit's `storage.max_chunks_up` on these nodes (chunks of about 2 MB kept in
   * memory). Other agents refuse it.
   * @default - the collector's `storageMaxChunksUp`
   */
  readonly storageMaxChunksUp?: number;

  /**
   * `LogCollectorDaemonSet` only: fluent-bit's `storage.backlog.mem_limit` on these nodes. Other agents refuse it.
   * @default - the collector's `storageBacklogMemLimit`
   */
  readonly storageBacklogMemLimit?: string;
}
