/**
 * The benches' two modes. By default each prints its figures on full-size inputs. In the short mode
 * (`npm run bench -- --short`, which sets BENCH_SHORT=1: what CI runs) each runs once on small inputs, so a bench
 * that no longer runs (an input the tools refuse, a hand-written chart that no longer matches the library's
 * objects) fails the build; its figures are printed but mean nothing and nothing judges them.
 */
export const SHORT = process.env.BENCH_SHORT === '1';

/** `full` in the default mode, `short` in the short mode. */
export function sized<T>(full: T, short: T): T {
  return SHORT ? short : full;
}

/** The sizes a bench runs: the environment's list (e.g. BENCH_SIZES=1000,5000) if given, else the mode's. */
export function sizesFrom(variable: string | undefined, full: string, short: string): number[] {
  return (variable ?? sized(full, short)).split(',').map(Number);
}
