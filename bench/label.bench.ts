/**
 * Scale of the node tools (a benchmark that prints figures, never asserts):
 * - `label`: wave assignment alone, and the whole command (inventory read, assignment, commands),
 *   for 5k, 10k and 50k synthetic nodes, with the 50k/5k ratio (goal: at most 11x, i.e. O(n log n));
 * - `coverage --json` at 50k nodes x 12 DaemonSets: peak RSS of a child process running the CLI
 *   (goal: under 300 MB), next to the same child on 10 nodes (what ts-node and the code take alone).
 *
 *   npx ts-node --project test/tsconfig.json bench/label.bench.ts
 *   BENCH_SIZES=5000,50000 BENCH_RSS_NODES=20000 npx ts-node --project test/tsconfig.json bench/label.bench.ts
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { performance } from 'perf_hooks';
import * as YAML from 'yaml';
import { sized, sizesFrom } from './mode';
import { syntheticNodes, twelveDaemonSetObjects } from './synthetic';
import { assignWaves, labelCommands } from '../src/cli/coverage/labelling';
import { runCli } from '../src/cli/run';

const RUNS = sized(5, 1);
const WAVES = [{ name: 'canary', fraction: 0.02 }, { name: 'wave-1', fraction: 0.1 }, { name: 'wave-2', fraction: 0.3 }];
const ROOT = path.join(__dirname, '..');

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** Median ms of `fn` over RUNS runs after a warm-up run. */
function time(fn: () => void): number {
  const times: number[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const start = performance.now();
    fn();
    if (run > 0) times.push(performance.now() - start);
  }
  return median(times);
}

function writeInventory(dir: string, count: number): string {
  const file = path.join(dir, `nodes-${count}.json`);
  fs.writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: syntheticNodes(count) }));
  return file;
}

const discard = { write: () => true };

function labelTimes(dir: string, sizes: readonly number[]): void {
  console.log(`label: ${WAVES.length} waves, median of ${RUNS} runs after a warm-up`);
  console.log('nodes    assign ms   command ms');
  const rows = sizes.map((count) => {
    const nodes = syntheticNodes(count).filter((n) => n.metadata.labels?.['kubernetes.io/os'] === 'linux');
    const assign = time(() => labelCommands(assignWaves(nodes, { waves: WAVES }), nodes));
    const file = writeInventory(dir, count);
    const argv = ['label', '--nodes', file, ...WAVES.map((w) => `--wave=${w.name}=${w.fraction}`), '--diff'];
    const command = time(() => runCli(argv, { stdout: discard, stderr: discard, cwd: ROOT }));
    console.log(`${String(count).padEnd(8)} ${assign.toFixed(1).padStart(9)}   ${command.toFixed(1).padStart(10)}`);
    return { count, assign, command };
  });
  const first = rows[0];
  for (const row of rows.slice(1)) {
    console.log(`ratio ${row.count / 1000}k/${first.count / 1000}k (nodes x${row.count / first.count}): `
      + `assign ${(row.assign / first.assign).toFixed(1)}x, command ${(row.command / first.command).toFixed(1)}x`);
  }
}

/** Peak RSS (MB) of a child process running `node-agents coverage --json` on `count` nodes, stdout to /dev/null. */
function coverageJsonRss(dir: string, manifests: string, count: number): number {
  const file = writeInventory(dir, count);
  const script = `const { runCli } = require(${JSON.stringify(path.join(ROOT, 'src/cli/run'))});
const code = runCli(['coverage', '--json', '--nodes', ${JSON.stringify(file)}, ${JSON.stringify(manifests)}], { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd() });
process.stderr.write('RSS ' + process.resourceUsage().maxRSS + ' ' + code + '\\n');`;
  const child = spawnSync(process.execPath, ['-r', require.resolve('ts-node/register/transpile-only'), '-e', script], {
    cwd: ROOT,
    env: { ...process.env, TS_NODE_PROJECT: path.join(ROOT, 'test/tsconfig.json') },
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf-8',
  });
  const out = child.stderr;
  const match = /RSS (\d+) (\d+)/.exec(out);
  if (match === null) throw new Error(`the child printed no RSS: ${out}`);
  return Number(match[1]) / 1024; // maxRSS is in KiB
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-bench-'));
  try {
    labelTimes(dir, sizesFrom(process.env.BENCH_SIZES, '5000,10000,50000', '500,1000'));
    const manifests = path.join(dir, 'agents.yaml');
    fs.writeFileSync(manifests, twelveDaemonSetObjects().map((o) => YAML.stringify(o)).join('---\n'));
    const count = Number(process.env.BENCH_RSS_NODES ?? sized(50000, 500));
    const base = coverageJsonRss(dir, manifests, 10);
    const peak = coverageJsonRss(dir, manifests, count);
    console.log('\ncoverage --json, 12 DaemonSets, child process (ts-node, transpile only), stdout to /dev/null:');
    console.log(`peak RSS ${peak.toFixed(0)} MB at ${count} nodes; ${base.toFixed(0)} MB at 10 nodes (the runtime alone); goal < 300 MB at 50k`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main();
