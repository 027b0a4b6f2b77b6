/**
 * Memoizes a late check's result for the rest of the current synchronous run. cdk8s 2.70 validates
 * the whole app once in `App.synth()` and again in every `chart.toJson()` (N+1 passes for N charts),
 * all within one synchronous call; nothing the check reads can change between those passes. A
 * microtask clears the result, so the next synthesis (after the current call returns) computes it
 * afresh. Changes made between two syntheses within one synchronous block are not seen by the
 * second: synthesize once after the last change.
 */
export function memoizeForSynthesis<T>(compute: () => T): () => T {
  let cached: { value: T } | undefined;
  return () => {
    if (cached === undefined) {
      cached = { value: compute() };
      queueMicrotask(() => {
        cached = undefined;
      });
    }
    return cached.value;
  };
}
