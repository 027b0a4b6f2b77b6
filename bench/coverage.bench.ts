/**
 * Coverage analysis time for 1k, 5k and 20k synthetic nodes × 12 DaemonSets (a benchmark that prints figures,
 * not a test). Target: under 250 ms for 5k nodes, near-linear growth.
 *
 *   npx ts-node --project test/tsconfig.json bench/coverage.bench.ts
 */
import { performance } from 'perf_hooks';
import { sized, sizesFrom } from './mode';
import { syntheticNodes, twelveDaemonSets } from './synthetic';
import { analyzeCoverage } from '../src/cli/coverage/analysis';
import { nodeFacts } from '../src/cli/coverage/nodes';

const RUNS = sized(9, 1);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function main(): void {
  const daemonSets = twelveDaemonSets();
  console.log(`coverage analysis: ${daemonSets.length} DaemonSets, median of ${RUNS} runs after a warm-up (node facts + analysis)`);
  console.log('nodes    median ms   ms/node   problems');
  let perNodeAt1k = 0;
  for (const count of sizesFrom(process.env.BENCH_SIZES, '1000,5000,20000', '1000')) {
    const inventory = syntheticNodes(count);
    let problems = 0;
    const times: number[] = [];
    for (let run = 0; run <= RUNS; run++) {
      const start = performance.now();
      const report = analyzeCoverage(daemonSets, nodeFacts(inventory));
      const elapsed = performance.now() - start;
      problems = report.problems.length;
      if (run > 0) times.push(elapsed); // run 0 warms the JIT up
    }
    const ms = median(times);
    if (count === 1000) perNodeAt1k = ms / count;
    const growth = perNodeAt1k > 0 ? `  (${((ms / count) / perNodeAt1k).toFixed(2)}× the 1k per-node time)` : '';
    console.log(`${String(count).padEnd(8)} ${ms.toFixed(1).padStart(9)}   ${(ms / count).toFixed(4).padStart(7)}   ${String(problems).padStart(8)}${count === 1000 ? '' : growth}`);
  }
}

main();
