/**
 * The kubelet's graceful node shutdown, ported from kubernetes/kubernetes pkg/kubelet/nodeshutdown
 * (nodeshutdown_manager.go: migrateConfig, groupByPriority, killPods) and pkg/kubelet/kuberuntime
 * (kuberuntime_container.go: killContainer's minimumGracePeriodInSeconds).
 */

/** One priority group: pods from `priority` up to the next group's priority, waited for up to `seconds`. */
export interface ShutdownGroup {
  readonly priority: number;
  readonly seconds: number;
}

/** scheduling.SystemCriticalPriority: system-cluster-critical; system-node-critical is 1000 above it. */
export const SYSTEM_CRITICAL_PRIORITY = 2000000000;

/** killContainer never gives a container less than 2 s between SIGTERM and SIGKILL. */
export const MINIMUM_GRACE_SECONDS = 2;

/**
 * migrateConfig: the two groups the kubelet makes of `shutdownGracePeriod` and `shutdownGracePeriodCriticalPods`
 * when `shutdownGracePeriodByPodPriority` is not set. Pods below system-cluster-critical get the difference, then
 * critical pods (system-cluster-critical and system-node-critical alike) get `criticalSeconds`. Undefined: graceful
 * node shutdown is off (a zero period, or a critical period longer than the whole).
 */
export function migrateShutdownConfig(periodSeconds: number, criticalSeconds: number): ShutdownGroup[] | undefined {
  if (periodSeconds === 0) return undefined;
  const workloads = periodSeconds - criticalSeconds;
  if (workloads < 0) return undefined;
  return [
    { priority: 0, seconds: workloads },
    { priority: SYSTEM_CRITICAL_PRIORITY, seconds: periodSeconds - workloads },
  ];
}

/**
 * The seconds between SIGTERM and SIGKILL for a pod of a group: killPods gives the smaller of the pod's
 * terminationGracePeriodSeconds and the group's seconds, and killContainer raises it to 2 s. The kubelet waits
 * for the group only up to its seconds, so with 0 s it moves on (and releases the shutdown) at once.
 */
export function shutdownGraceSeconds(podGraceSeconds: number, groupSeconds: number): number {
  return Math.max(Math.min(podGraceSeconds, groupSeconds), MINIMUM_GRACE_SECONDS);
}
