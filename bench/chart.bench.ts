/**
 * One realistic chart through App.synth(): a log collector, node-exporter and a GPU driver, each
 * with three rollout waves (so four DaemonSets each), against the same objects written by hand
 * with cdk8s-plus-28 (bench/chart-by-hand.ts: cdk8s-plus' DaemonSet, containers, volumes and probes,
 * JSON patches for what it does not model, literal values and no checks). Before timing, the two
 * apps' manifests are compared and the benchmark stops if they differ: a change to what the library
 * writes must be written by hand too, or the ratio would compare different work.
 * A benchmark that prints figures, not a test. Goal: library ≤ 1.3× the hand-written chart.
 *
 *   npm run bench -- chart          (BENCH_RUNS, default 60 pairs)
 *
 * Each timed run follows an untimed run of its own kind; library and hand-written runs alternate,
 * and the ratio is the median of the pair-by-pair ratios.
 */
import * as fs from 'fs';
import { performance } from 'perf_hooks';
import { App, Chart, YamlOutputType } from 'cdk8s';
import {
  FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeExporterDaemonSet, Promotion, RolloutWave,
} from '../src';
import { handWrittenAgents } from './chart-by-hand';
import { sized } from './mode';

const RUNS = Number(process.env.BENCH_RUNS ?? sized(60, 1));
const WAVES = ['canary', 'wave-1', 'wave-2'];
const OUT = '.tmp/bench-chart';

function libraryApp(): App {
  const app = new App({ outdir: `${OUT}/library`, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const chart = new Chart(app, 'agents');
  const rollout = { waves: WAVES.map((w) => RolloutWave.labelled(w)), promoted: Promotion.all() };
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', port: 80 })], rollout });
  new NodeExporterDaemonSet(chart, 'metrics', { namespace: 'monitoring', rollout });
  new GpuDriverDaemonSet(chart, 'gpu', { image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04', rollout });
  return app;
}

/** The same objects as a platform team would write them with cdk8s-plus-28 alone. */
function handApp(): App {
  const app = new App({ outdir: `${OUT}/hand`, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  handWrittenAgents(new Chart(app, 'agents'), WAVES);
  return app;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function manifests(app: App): unknown[] {
  return app.charts.flatMap((chart) => chart.toJson());
}

/** Stops the benchmark unless both apps write the same objects, in the same order. */
function sameObjects(): number {
  const library = manifests(libraryApp());
  const hand = manifests(handApp());
  const name = (o: unknown) => { const m = o as { kind: string; metadata: { name: string } }; return `${m.kind} "${m.metadata.name}"`; };
  const differing = library.filter((o, i) => JSON.stringify(o) !== JSON.stringify(hand[i])).map(name);
  if (library.length !== hand.length || differing.length > 0) {
    throw new Error(`the hand-written chart is not the library's objects (${hand.length} vs ${library.length} objects; differing: `
      + `${differing.join(', ')}): update bench/chart-by-hand.ts`);
  }
  return library.length;
}

function main(): void {
  fs.rmSync(OUT, { recursive: true, force: true });
  const objects = sameObjects();
  const library = () => libraryApp().synth();
  const hand = () => handApp().synth();
  const timed = (run: () => void): number => {
    run();
    const start = performance.now();
    run();
    return performance.now() - start;
  };
  const libs: number[] = [];
  const hands: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let l: number;
    let h: number;
    if (i % 2 === 0) {
      l = timed(library);
      h = timed(hand);
    } else {
      h = timed(hand);
      l = timed(library);
    }
    libs.push(l);
    hands.push(h);
    ratios.push(l / h);
  }
  console.log('one chart through App.synth() (build + synth), median ms; library/hand the median of the pair-by-pair ratios');
  console.log(`both write the same ${objects} objects (checked before timing)`);
  console.log('               median ms');
  console.log(`library      ${median(libs).toFixed(1).padStart(11)}`);
  console.log(`hand-written ${median(hands).toFixed(1).padStart(11)}`);
  console.log(`library/hand: ${median(ratios).toFixed(2)}× (goal ≤ 1.30×)`);
}

main();
