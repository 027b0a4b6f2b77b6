import { memoizeForSynthesis } from '../src/util/per-synthesis';

describe('memoizeForSynthesis', () => {
  test('computes once within a synchronous run, afresh after it', async () => {
    let calls = 0;
    const check = memoizeForSynthesis(() => ++calls);
    expect([check(), check(), check()]).toEqual([1, 1, 1]);
    await Promise.resolve();
    expect(check()).toBe(2);
    expect(calls).toBe(2);
  });

  test('a computation that throws is not cached', () => {
    let calls = 0;
    const check = memoizeForSynthesis(() => {
      calls++;
      throw new Error('bad');
    });
    expect(() => check()).toThrow('bad');
    expect(() => check()).toThrow('bad');
    expect(calls).toBe(2);
  });
});
