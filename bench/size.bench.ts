/**
 * `node-agents size`: time and memory against the samples read, up to a 130k-node fleet's week (a benchmark that
 * prints figures, not a test). The fleet is made chunk by chunk (CHUNK nodes at a time, as several `--series`
 * files or a paged read would hand it over), fed to the same ingest, groups and recommender the command runs; a
 * chunk's JSON is also parsed and checked (parseSavedFile) to give the per-sample cost of reading the answers.
 *
 *   npm run bench -- size                       (full: 10k, 50k, 130k nodes, 7 days at a 1h step)
 *   npm run bench -- size --short               (the short mode, bench/mode.ts: 200 and 1k nodes, 2 days at a 1h step)
 *   BENCH_SIZE_NODES=1000,130000 BENCH_STEP=300 ... (sizes and step of your own; 300 s is 2,016 samples a week)
 */
import { performance } from 'perf_hooks';
import * as v8 from 'v8';
import * as vm from 'vm';
import { SHORT } from './mode';
import { groupByOf, groupReports, planProfiles } from '../src/cli/size/groups';
import { SizeIngest } from '../src/cli/size/ingest';
import { parseSavedFile, Series } from '../src/cli/size/series';
import { savedAnswers } from '../test/util/size-fleet';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

const SIZES = (process.env.BENCH_SIZE_NODES ?? (SHORT ? '200,1000' : '10000,50000,130000')).split(',').map(Number);
const DAYS = SHORT ? 2 : 7;
const STEP = Number(process.env.BENCH_STEP ?? 3600);
const CHUNK = 1000;
const CPUS = ['2', '4', '8', '16', '32', '48', '64', '96'];
const START = 1_760_000_000 - (1_760_000_000 % 86400);

/** The series of nodes [from, to): one collector pod per node, memory growing with the node's size. */
function chunk(from: number, to: number, samples: number): Record<string, Series[]> {
  const out: Record<string, Series[]> = { pods: [], nodes: [], memory: [], cpu: [], oom: [], restarts: [] };
  const times = new Float64Array(samples).map((_, i) => START + i * STEP);
  const one = new Float64Array(samples).fill(1);
  for (let n = from; n < to; n++) {
    const node = `node-${n}`;
    const cpu = CPUS[n % CPUS.length];
    const id = { namespace: 'logging', pod: `fb-${n}`, container: 'fluent-bit' };
    out.pods.push({ metric: { namespace: 'logging', pod: `fb-${n}`, node }, times: times.subarray(0, 1), values: one.subarray(0, 1) });
    out.nodes.push({ metric: { node, label_karpenter_k8s_aws_instance_cpu: cpu }, times: times.subarray(0, 1), values: one.subarray(0, 1) });
    const base = Number(cpu) * 20e6;
    out.memory.push({ metric: id, times, values: times.map((_, i) => base * (1 + 0.1 * Math.sin(i + n))) });
    out.cpu.push({ metric: id, times, values: times.map((_, i) => Number(cpu) / 100 * (1 + 0.2 * Math.sin(i * 3 + n))) });
    out.restarts.push({ metric: id, times, values: new Float64Array(samples) });
  }
  return out;
}

function run(nodes: number): { samples: number; ms: number; heapMB: number; profiles: number } {
  const samples = Math.floor(DAYS * 86400 / STEP);
  const by = groupByOf('instance-size')!;
  gc();
  const before = process.memoryUsage().heapUsed;
  const ingest = new SizeIngest({ groupKey: by.key });
  ingest.stepSeconds = STEP;
  let ms = 0;
  // identities first (as the command reads them), then the usage, chunk by chunk
  for (const phase of [['pods', 'nodes'], ['memory', 'cpu', 'oom', 'restarts']]) {
    for (let from = 0; from < nodes; from += CHUNK) {
      const c = chunk(from, Math.min(nodes, from + CHUNK), samples);
      const t0 = performance.now();
      for (const name of phase) (ingest as any)[`${name}Series`](c[name]);
      ms += performance.now() - t0;
    }
  }
  const t0 = performance.now();
  ingest.finish();
  let profiles = 0;
  for (const [agent, states] of ingest.states) {
    profiles += planProfiles(agent, groupReports(states, ingest.pods.get(agent)!, by), by, states).profiles.length;
  }
  ms += performance.now() - t0;
  gc();
  const heapMB = (process.memoryUsage().heapUsed - before) / 1e6;
  return { samples: ingest.samplesRead, ms, heapMB, profiles };
}

/** Parsing and checking one chunk's saved answers (JSON text → series), per sample. */
function parseCost(): number {
  const nodes = Array.from({ length: 200 }, (_, n) => ({ name: `node-${n}`, labels: { 'karpenter.k8s.aws/instance-cpu': CPUS[n % 8] }, memory: 3e8, cpu: 0.1 }));
  const text = JSON.stringify(savedAnswers({ nodes, start: START, samples: Math.floor(DAYS * 86400 / STEP), stepSeconds: STEP }));
  const t0 = performance.now();
  const parsed = parseSavedFile(JSON.parse(text), 'bench');
  const ms = performance.now() - t0;
  const count = Object.values(parsed).reduce((s, list) => s + list!.reduce((x, y) => x + y.times.length, 0), 0);
  return ms * 1e6 / count;
}

function main(): void {
  console.log(`size: ${SHORT ? 'short' : 'full'} mode, ${DAYS} days at a ${STEP}s step, ${CHUNK} nodes a chunk (ingest, groups, VPA recommender; series made outside the timing)`);
  console.log('nodes     samples read   ms       ns/sample   retained heap MB   bytes/node   profiles');
  for (const nodes of SIZES) {
    const r = run(nodes);
    console.log(`${String(nodes).padEnd(9)} ${String(r.samples).padStart(12)}   ${r.ms.toFixed(0).padStart(6)}   ${(r.ms * 1e6 / r.samples).toFixed(1).padStart(9)}   `
      + `${r.heapMB.toFixed(1).padStart(16)}   ${(r.heapMB * 1e6 / nodes).toFixed(0).padStart(10)}   ${String(r.profiles).padStart(8)}`);
  }
  console.log(`reading the answers (JSON.parse + checks, parseSavedFile): ${parseCost().toFixed(1)} ns/sample`);
}

main();
