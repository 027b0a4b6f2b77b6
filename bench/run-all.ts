/**
 * Runs every benchmark (bench/*.bench.ts, or only those named as arguments) one after another and
 * prints their figures. Benchmarks are never part of the test run.
 *
 *   npm run bench [-- coverage fleet]
 *   npm run bench -- --short     (what CI runs: each bench once, on small inputs; see bench/mode.ts)
 *
 * A bench that fails (throws, exits non-zero) fails the run.
 */
import { execFileSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const short = process.argv.includes('--short');
const requested = process.argv.slice(2).filter((a) => a !== '--short');
const benches = fs.readdirSync(__dirname)
  .filter((file) => file.endsWith('.bench.ts'))
  .filter((file) => requested.length === 0 || requested.includes(file.replace(/\.bench\.ts$/, '')))
  .sort();

for (const file of benches) {
  console.log(`== bench/${file}`);
  // a process per benchmark: one's heap and JIT state never skews the next one's figures
  execFileSync(process.execPath, [require.resolve('ts-node/dist/bin'), '--project', 'test/tsconfig.json', path.join('bench', file)], {
    stdio: 'inherit',
    cwd: path.join(__dirname, '..'),
    env: short ? { ...process.env, BENCH_SHORT: '1' } : process.env,
  });
}
