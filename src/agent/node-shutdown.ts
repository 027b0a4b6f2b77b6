/**
 * Node shutdown ordering for the node image owner: the kubelet configuration that stops the node agents last.
 */
import { brand } from '../validation/brand';
import { ValidationError } from '../validation/errors';
import { checkArgs } from '../validation/struct-check';

/** Options of `NodeShutdown.kubeletConfiguration`. */
export interface NodeShutdownOptions {
  /**
   * Seconds the workloads get (pods below system-cluster-critical, those without a priority class included): at
   * least their longest terminationGracePeriodSeconds, which bounds their preStop hooks too.
   * @default 30
   */
  readonly workloadSeconds?: number;

  /**
   * Seconds the system-cluster-critical pods get (cluster add-ons such as CoreDNS), after the workloads.
   * @default 30
   */
  readonly clusterCriticalSeconds?: number;

  /**
   * Seconds the node agents get (system-node-critical, this library's default priority class), last: at least the
   * longest agent grace period (the log collector's: 60 s by default). 0 is refused: the kubelet would give each
   * agent 2 s (its minimum grace period) and not wait for them.
   * @default 65
   */
  readonly agentSeconds?: number;
}

/** The priority of `system-cluster-critical` (k8s.io/api scheduling: SystemCriticalPriority). */
const SYSTEM_CLUSTER_CRITICAL = 2000000000;
/** The priority of `system-node-critical`: SystemCriticalPriority + 1000. */
const SYSTEM_NODE_CRITICAL = 2000001000;

/** What node images must configure so that node agents stop after the workloads they serve. */
export class NodeShutdown {
  /**
   * A KubeletConfiguration fragment (kubelet.config.k8s.io/v1beta1) for the node image: graceful node shutdown by
   * pod priority, so the kubelet stops the workloads first, then system-cluster-critical pods, then the node agents
   * (system-node-critical), each group waiting for its pods up to its seconds
   * (pkg/kubelet/nodeshutdown/nodeshutdown_manager.go, groupByPriority and killPods). A pod's grace period there
   * is the smaller of its own and its group's seconds.
   */
  public static kubeletConfiguration(options: NodeShutdownOptions = {}): string {
    checkArgs('NodeShutdown.kubeletConfiguration', [options]);
    const seconds = {
      workloadSeconds: options.workloadSeconds ?? 30,
      clusterCriticalSeconds: options.clusterCriticalSeconds ?? 30,
      agentSeconds: options.agentSeconds ?? 65,
    };
    for (const [name, value] of Object.entries(seconds)) {
      if (!Number.isInteger(value) || value < 0 || value > 3600) {
        throw new ValidationError('NodeShutdown.kubeletConfiguration', `${name} ${value} must be a whole number of seconds from 0 to 3600`);
      }
    }
    if (seconds.agentSeconds === 0) {
      throw new ValidationError('NodeShutdown.kubeletConfiguration', 'agentSeconds 0 does not stop the agents together with the rest: the kubelet '
        + 'stops them last with 2 s each (its minimum grace period) and does not wait for them, so the log collector cannot flush; give at least '
        + 'the longest agent grace period (60 s for the log collector)');
    }
    const total = seconds.workloadSeconds + seconds.clusterCriticalSeconds + seconds.agentSeconds;
    return [
      '# KubeletConfiguration fragment for the node image (merge it into the kubelet config file the image writes).',
      '# Graceful node shutdown by pod priority (GracefulNodeShutdownBasedOnPodPriority: beta and on by default since',
      '# Kubernetes 1.24): on a shutdown the kubelet stops the pods group by group, lowest priority first, each group',
      '# waiting for its pods up to its seconds, so node agents (system-node-critical) stop after the workloads whose',
      '# logs and metrics they ship. A pod below the first priority joins the first group; one above the last, the last.',
      '# Do not set shutdownGracePeriod or shutdownGracePeriodCriticalPods with it (the kubelet refuses both); the',
      `# kubelet asks systemd-logind for the total (${total} s) as InhibitDelayMaxSec. It covers shutdowns the kubelet`,
      '# sees (systemd shutdown: spot or maintenance reboots, the instance stopping after a drain). Karpenter\'s drain',
      '# never evicts a pod that tolerates karpenter.sh/disrupted:NoSchedule (the log collector does): such agents stop',
      '# here, in their slot, after the drain. Without this configuration they are killed with the machine.',
      'apiVersion: kubelet.config.k8s.io/v1beta1',
      'kind: KubeletConfiguration',
      'shutdownGracePeriodByPodPriority:',
      '  # workloads (every priority below system-cluster-critical)',
      '  - priority: 0',
      `    shutdownGracePeriodSeconds: ${seconds.workloadSeconds}`,
      '  # system-cluster-critical',
      `  - priority: ${SYSTEM_CLUSTER_CRITICAL}`,
      `    shutdownGracePeriodSeconds: ${seconds.clusterCriticalSeconds}`,
      '  # system-node-critical: the node agents, last',
      `  - priority: ${SYSTEM_NODE_CRITICAL}`,
      `    shutdownGracePeriodSeconds: ${seconds.agentSeconds}`,
      '',
    ].join('\n');
  }

  private constructor() {}
}
brand(NodeShutdown, 'NodeShutdown');
