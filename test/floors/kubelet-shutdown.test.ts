/**
 * The kubelet's graceful node shutdown with only shutdownGracePeriod and shutdownGracePeriodCriticalPods. Port of
 * kubernetes/kubernetes pkg/kubelet/nodeshutdown/nodeshutdown_manager.go migrateConfig, with the table of
 * pkg/kubelet/nodeshutdown/nodeshutdown_manager_test.go Test_migrateConfig; the grace a pod gets is killPods' override
 * raised to killContainer's minimumGracePeriodInSeconds (pkg/kubelet/kuberuntime/kuberuntime_container.go).
 */
import { migrateShutdownConfig, shutdownGraceSeconds, SYSTEM_CRITICAL_PRIORITY } from '../../src/scheduling/kubelet-shutdown';

describe('migrateConfig (pkg/kubelet/nodeshutdown/nodeshutdown_manager.go), Test_migrateConfig\'s table', () => {
  test.each([
    ['both shutdownGracePeriodRequested and shutdownGracePeriodCriticalPods', 300, 120,
      [{ priority: 0, seconds: 180 }, { priority: SYSTEM_CRITICAL_PRIORITY, seconds: 120 }]],
    ['only shutdownGracePeriodRequested', 100, 0, [{ priority: 0, seconds: 100 }, { priority: SYSTEM_CRITICAL_PRIORITY, seconds: 0 }]],
    ['empty configuration', 0, 0, undefined],
    ['wrong configuration', 1, 100, undefined],
  ])('%s', (_name, period, critical, groups) => {
    expect(migrateShutdownConfig(period, critical)).toEqual(groups);
  });
});

test('shutdownGracePeriodCriticalPods 0 is not "everything together": workloads get the period, then critical pods 2 s', () => {
  const [workloads, critical] = migrateShutdownConfig(100, 0)!;
  // a workload with 30 s gets its 30 s, in the first group
  expect(shutdownGraceSeconds(30, workloads.seconds)).toBe(30);
  // a system-node-critical agent with 60 s gets SIGTERM after the workloads, and SIGKILL 2 s later
  expect(shutdownGraceSeconds(60, critical.seconds)).toBe(2);
  // a pod's own shorter period wins; never below 2 s
  expect(shutdownGraceSeconds(10, 65)).toBe(10);
  expect(shutdownGraceSeconds(0, 65)).toBe(2);
});
