/**
 * Last out: when a node goes away, the log collector should stop after the workloads it ships the logs of. `plan
 * --pods` checks, on every node the collector covers, that the longest stop of a workload there (its
 * terminationGracePeriodSeconds, which bounds its preStop hook and its SIGTERM handling together, plus the 2 s the
 * kubelet still gives SIGTERM after a hook that used up the period: minimumGracePeriodInSeconds in
 * pkg/kubelet/kuberuntime/kuberuntime_container.go, killContainer) fits in the collector's own grace period.
 * When both are stopped at once, the collector gets SIGTERM, flushes for its Grace and is killed while such a
 * workload is still writing: its last lines are lost.
 *
 * Whether both are stopped at once depends on who stops the node, which the tool cannot see. The kubelet's graceful
 * node shutdown stops pods by priority, lowest first, each group waiting up to its seconds
 * (pkg/kubelet/nodeshutdown/nodeshutdown_manager.go, groupByPriority and killPods): with
 * `shutdownGracePeriodByPodPriority` system-node-critical agents stop last with their own slot; with only
 * `shutdownGracePeriod` the critical pods form the second group (migrateConfig) and get
 * `shutdownGracePeriodCriticalPods`, at least 2 s (so 0 is not "together": the collector stops after the workloads,
 * with 2 s to flush). Karpenter never evicts a pod that tolerates `karpenter.sh/disrupted:NoSchedule`, as the
 * collector does (pkg/utils/pod/scheduling.go, IsDrainable): it waits until the workloads are gone, and the
 * collector stops with the instance, through the kubelet's shutdown. A node deleted or reclaimed with no graceful
 * shutdown stops them all together. So the finding is a warning.
 */
import { PodIndex } from './pods';
import { shutdownGraceSeconds } from '../../scheduling/kubelet-shutdown';
import { CoverageReport } from '../coverage/analysis';
import { compare, ManifestSet } from '../coverage/manifests';

/** The kubelet's default terminationGracePeriodSeconds (the API server's default for a pod without one). */
const DEFAULT_GRACE_SECONDS = 30;
/** minimumGracePeriodInSeconds: the SIGTERM window the kubelet keeps after a preStop hook that used the period up. */
const SIGTERM_MINIMUM_SECONDS = 2;
const SHOWN = 8;

/** The component label of the log collector's pods (LogCollectorDaemonSet). */
export const LOG_COLLECTOR_COMPONENT = 'log-collector';

export interface ShutdownOrderFinding {
  readonly kind: 'shutdown-order';
  readonly severity: 'warning';
  readonly cause: 'collector-grace';
  readonly agent: string;
  readonly daemonSets: readonly string[];
  readonly nodes: readonly string[];
  readonly message: string;
  readonly fix: string;
}

/** The longest stop of the workloads (pods no DaemonSet controls) on each node, with the pod that takes it. */
function longestStops(pods: PodIndex, node: string): { seconds: number; pod: string } | undefined {
  let longest: { seconds: number; pod: string } | undefined;
  for (const pod of pods.on(node)) {
    if (pod.owner !== undefined || pod.deleting) continue;
    const grace = pod.graceSeconds ?? DEFAULT_GRACE_SECONDS;
    const seconds = grace > 0 ? grace + SIGTERM_MINIMUM_SECONDS : 0;
    if (longest === undefined || seconds > longest.seconds) longest = { seconds, pod: `${pod.namespace}/${pod.name}` };
  }
  return longest;
}

/** One warning per collector DaemonSet whose grace period some workload on its nodes outlasts. */
export function shutdownOrderFindings(tree: ManifestSet, coverage: CoverageReport, pods: PodIndex): ShutdownOrderFinding[] {
  const findings: ShutdownOrderFinding[] = [];
  for (const { info, positions } of coverage.daemonSets) {
    if (info.podLabels['app.kubernetes.io/component'] !== LOG_COLLECTOR_COMPONENT || !tree.daemonSets.includes(info)) continue;
    const grace = info.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS;
    const over: { node: string; seconds: number; pod: string }[] = [];
    for (const at of positions) {
      const node = coverage.nodes[at].name;
      const longest = longestStops(pods, node);
      if (longest !== undefined && longest.seconds > grace) over.push({ node, ...longest });
    }
    if (over.length === 0) continue;
    over.sort((a, b) => b.seconds - a.seconds || compare(a.node, b.node));
    const worst = over[0];
    const shown = over.slice(0, SHOWN).map((o) => `${o.node} (${o.pod}: ${o.seconds} s)`).join(', ');
    findings.push({
      kind: 'shutdown-order',
      severity: 'warning',
      cause: 'collector-grace',
      agent: info.agent,
      daemonSets: [info.id],
      nodes: over.map((o) => o.node).sort(compare),
      message: `${info.id} stops within ${grace} s, but workloads on ${over.length} of its nodes take longer to stop (grace period, preStop hook `
        + `included, plus the kubelet's 2 s after it): ${shown}${over.length > SHOWN ? `, … ${over.length - SHOWN} more` : ''}. Stopped together (a node `
        + 'deleted or reclaimed with no graceful node shutdown), the collector is killed first and their last lines are lost; with the kubelet\'s '
        + `shutdownGracePeriod and shutdownGracePeriodCriticalPods 0 it stops after them, with ${shutdownGraceSeconds(grace, 0)} s to flush`,
      fix: `give the collector a grace period of at least ${worst.seconds + 5} s (terminationGracePeriodSeconds; its fluent-bit Grace follows), and give `
        + 'node agents the last slot of the node\'s shutdown: the kubelet\'s shutdownGracePeriodByPodPriority with system-node-critical in its own, '
        + 'last group (NodeShutdown.kubeletConfiguration() renders it), or with shutdownGracePeriod a shutdownGracePeriodCriticalPods of at least the '
        + 'collector\'s grace period',
    });
  }
  return findings;
}
