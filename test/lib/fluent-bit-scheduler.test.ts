/**
 * The retry scheduler the collector renders: `scheduler.cap` and `scheduler.base` in [SERVICE],
 * as props with their defaults, checked where fluent-bit would misbehave.
 *
 * fluent-bit 5.1.1 waits uniform(base, min(cap, base × 2^attempt)) + 1 seconds before a chunk's
 * next retry, the first retry being attempt 1 (src/flb_scheduler.c, backoff_full_jitter and
 * flb_sched_request_create; src/flb_task.c, flb_task_retry_create). Its default cap is 2,000 s
 * (include/fluent-bit/flb_scheduler.h, FLB_SCHED_CAP), which left a backlog waiting minutes after an
 * outage; the collector renders 60.
 */
import { Chart, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import { LogCollectorDaemonSet, LogCollectorDaemonSetProps } from '../../src/constructs/log-collector-daemon-set';
import { entryValue, findSections, parseClassicConfig } from '../../src/fluent-bit/classic-format';
import {
  FluentBitConfigOptions, generateFluentBitConfig, MAX_SCHEDULER_CAP_SECONDS, SCHEDULER_BASE_SECONDS, SCHEDULER_CAP_SECONDS,
} from '../../src/fluent-bit/config';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { Manifest, synthManifests } from '../util/manifests';

const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });
const base: FluentBitConfigOptions = { stateDir: '/var/lib/log-collector', collectorName: 'logs', collectorNamespace: 'observability', outputs: [LOKI] };

function serviceOf(text: string) {
  const [service] = findSections(parseClassicConfig(text), 'SERVICE');
  return { cap: entryValue(service, 'scheduler.cap'), base: entryValue(service, 'scheduler.base') };
}

function collector(props: Partial<LogCollectorDaemonSetProps>): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], ...props });
  return synthManifests(chart);
}

/** fluent-bit's wait before retry `attempt` (src/flb_scheduler.c backoff_full_jitter, + 1 in flb_sched_request_create): the range it draws from. */
function retryWaitRange(baseSeconds: number, capSeconds: number, attempt: number): [number, number] {
  return [baseSeconds + 1, Math.min(capSeconds, baseSeconds * 2 ** attempt) + 1];
}

describe('scheduler.cap and scheduler.base', () => {
  test('[SERVICE] sets both: cap 60 s, base 5 s by default', () => {
    expect(serviceOf(generateFluentBitConfig(base).text)).toEqual({ cap: '60', base: '5' });
    expect([SCHEDULER_CAP_SECONDS, SCHEDULER_BASE_SECONDS]).toEqual([60, 5]);
  });

  test('the props reach the ConfigMap', () => {
    const cm = collector({ schedulerCapSeconds: 300, schedulerBaseSeconds: 10 }).find((m) => m.kind === 'ConfigMap')!;
    expect(serviceOf(cm.data['fluent-bit.conf'])).toEqual({ cap: '300', base: '10' });
    const defaults = collector({}).find((m) => m.kind === 'ConfigMap')!;
    expect(serviceOf(defaults.data['fluent-bit.conf'])).toEqual({ cap: '60', base: '5' });
  });

  test('with the defaults, a waiting chunk is retried at most 61 s after its last try, the first retry 6 to 11 s after the failed flush', () => {
    expect(retryWaitRange(SCHEDULER_BASE_SECONDS, SCHEDULER_CAP_SECONDS, 1)).toEqual([6, 11]);
    fc.assert(fc.property(fc.integer({ min: 1, max: 10_000 }), (attempt) => {
      const [low, high] = retryWaitRange(SCHEDULER_BASE_SECONDS, SCHEDULER_CAP_SECONDS, attempt);
      expect(low).toBe(6);
      expect(high).toBeLessThanOrEqual(61);
    }));
    // fluent-bit's own cap: up to 2,001 s
    expect(retryWaitRange(5, MAX_SCHEDULER_CAP_SECONDS, 20)[1]).toBe(2001);
  });

  test.each([
    [{ schedulerCapSeconds: 0 }, /schedulerCapSeconds 0 must be a whole number of seconds from 1 to 2000/],
    [{ schedulerCapSeconds: 30.5 }, /schedulerCapSeconds 30.5 must be a whole number/],
    [{ schedulerCapSeconds: 2001 }, /schedulerCapSeconds 2001 must be a whole number of seconds from 1 to 2000/],
    [{ schedulerBaseSeconds: 0 }, /schedulerBaseSeconds 0 must be a whole number of seconds from 1 to schedulerCapSeconds \(60\)/],
    // uniform(base, cap) has no range when base > cap (fluent-bit's random_uniform would divide by zero or loop)
    [{ schedulerCapSeconds: 10, schedulerBaseSeconds: 20 }, /schedulerBaseSeconds 20 must be a whole number of seconds from 1 to schedulerCapSeconds \(10\)/],
  ])('%p is refused, naming the prop', (props, message) => {
    expect(() => collector(props)).toThrow(message);
    expect(() => collector(props)).toThrow(/LogCollectorDaemonSet test\/logs/);
  });

  test('base equal to the cap is accepted (every retry waits cap + 1 s)', () => {
    expect(serviceOf(generateFluentBitConfig({ ...base, schedulerCapSeconds: 30, schedulerBaseSeconds: 30 }).text)).toEqual({ cap: '30', base: '30' });
    expect(retryWaitRange(30, 30, 3)).toEqual([31, 31]);
  });
});
