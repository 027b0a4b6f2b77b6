import * as fc from 'fast-check';
import {
  DEFAULT_DRIVER_BUILD_SECONDS,
  failureThresholdFor,
  shortDuration,
  startupBudgetProblem,
  startupBudgetSeconds,
} from '../../src/rollout/startup-budget';

describe('startupBudgetSeconds', () => {
  test('is periodSeconds × failureThreshold plus initialDelaySeconds', () => {
    expect(startupBudgetSeconds({ periodSeconds: 10, failureThreshold: 120 })).toBe(1200);
    expect(startupBudgetSeconds({ periodSeconds: 10, failureThreshold: 120, initialDelaySeconds: 60 })).toBe(1260);
  });

  test.each([
    [{ periodSeconds: 0, failureThreshold: 1 }, /periodSeconds must be an integer >= 1, got 0/],
    [{ periodSeconds: 1.5, failureThreshold: 1 }, /periodSeconds/],
    [{ periodSeconds: 10, failureThreshold: 0 }, /failureThreshold must be an integer >= 1, got 0/],
    [{ periodSeconds: 10, failureThreshold: 1, initialDelaySeconds: -1 }, /initialDelaySeconds must be an integer >= 0, got -1/],
  ])('rejects %o', (timing, message) => {
    expect(() => startupBudgetSeconds(timing)).toThrow(message);
  });
});

describe('failureThresholdFor', () => {
  test('rounds up so the budget covers the build', () => {
    expect(failureThresholdFor(1200, 10)).toBe(120);
    expect(failureThresholdFor(1201, 10)).toBe(121);
    expect(failureThresholdFor(1200, 10, 300)).toBe(90);
  });

  test('is at least 1 even when the initial delay alone covers the build', () => {
    expect(failureThresholdFor(60, 10, 600)).toBe(1);
  });

  test('the default build time is 20 minutes', () => {
    expect(DEFAULT_DRIVER_BUILD_SECONDS).toBe(1200);
  });

  test('property: the derived threshold covers the build and is the smallest that does', () => {
    fc.assert(fc.property(
      fc.integer({ min: 1, max: 20_000 }),
      fc.integer({ min: 1, max: 300 }),
      fc.integer({ min: 0, max: 600 }),
      (build, period, delay) => {
        const threshold = failureThresholdFor(build, period, delay);
        const budget = startupBudgetSeconds({ periodSeconds: period, failureThreshold: threshold, initialDelaySeconds: delay });
        expect(budget).toBeGreaterThanOrEqual(build);
        if (threshold > 1) {
          expect(startupBudgetSeconds({ periodSeconds: period, failureThreshold: threshold - 1, initialDelaySeconds: delay })).toBeLessThan(build);
        }
        expect(startupBudgetProblem({ periodSeconds: period, failureThreshold: threshold, initialDelaySeconds: delay }, build)).toBeUndefined();
      },
    ));
  });
});

describe('startupBudgetProblem', () => {
  test('explains a budget shorter than the build and the threshold that fixes it', () => {
    const problem = startupBudgetProblem({ periodSeconds: 10, failureThreshold: 30 }, 1200);
    expect(problem).toContain('the startupProbe budget is 5m');
    expect(problem).toContain('periodSeconds 10 × failureThreshold 30');
    expect(problem).toContain('may take 20m');
    expect(problem).toContain('Set failureThreshold to at least 120');
  });

  test('accepts a budget exactly equal to the build', () => {
    expect(startupBudgetProblem({ periodSeconds: 10, failureThreshold: 120 }, 1200)).toBeUndefined();
    expect(startupBudgetProblem({ periodSeconds: 10, failureThreshold: 119 }, 1200)).toBeDefined();
  });
});

test('shortDuration', () => {
  expect(shortDuration(0)).toBe('0s');
  expect(shortDuration(90)).toBe('1m 30s');
  expect(shortDuration(1200)).toBe('20m');
  expect(shortDuration(3900)).toBe('1h 5m');
});
