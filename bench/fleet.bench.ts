/**
 * Fleet synthesis time: N clusters × (log collector + node exporter + GPU driver, each 3 rollout
 * waves + fleet), in process, against cdk8s's floor: the same objects as plain ApiObjects (built
 * from the library's own JSON) in a plain App. A benchmark that prints figures, not a test.
 * Goal: library ≤ 1.25× the floor at 50 and 200 clusters, time(200)/time(50) ≤ 4.4 (linear).
 *
 *   npm run bench -- fleet          (BENCH_SIZES=1,10,50,200 by default; BENCH_CAP_MS, BENCH_APP_MAX_CLUSTERS)
 *
 * Columns: `fleet` is build + AgentFleet.synthFiles() (one validation pass); `app` is the same
 * charts rendered the way App.synth() does (validate, then chart.toJson() per chart, each of which
 * validates the whole app again: N+1 passes), run only while it stays under the time cap; `floor`
 * is build + the same rendering for the plain ApiObjects.
 *
 * Each timed run follows an untimed run of the same kind, so it collects garbage like its own:
 * right after the other kind, the fleet, which leaves far more, would hand much of its collection
 * to the floor's runs and the ratio would look better than it is.
 */
import { performance } from 'perf_hooks';
import { ApiObject, App, Chart, Yaml } from 'cdk8s';
import {
  AgentFleet, FleetCluster, FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeExporterDaemonSet,
  Promotion, RolloutWave,
} from '../src';
import { sized, sizesFrom } from './mode';

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1'), RolloutWave.labelled('wave-2')];
const ROLLOUT = { waves: WAVES, promoted: Promotion.all() };
/** A run longer than this stops the larger sizes (and the N+1-pass column). */
const CAP_MS = Number(process.env.BENCH_CAP_MS ?? 20_000);
/** The largest size measured the N+1-pass way (it grows with the square of the clusters). */
const APP_MAX_CLUSTERS = Number(process.env.BENCH_APP_MAX_CLUSTERS ?? 50);

export function fleetOf(clusters: number): AgentFleet {
  return new AgentFleet({
    outdir: '.tmp/bench-fleet',
    repoUrl: 'https://git.example.com/platform/fleet.git',
    agents: {
      addAgents(cluster: FleetCluster, chart: Chart) {
        new LogCollectorDaemonSet(chart, 'logs', {
          outputs: [FluentBitOutput.loki({ host: cluster.setting('loki', 'loki-gateway.monitoring.svc'), port: 80 })],
          rollout: ROLLOUT,
        });
        new NodeExporterDaemonSet(chart, 'metrics', { rollout: ROLLOUT });
        new GpuDriverDaemonSet(chart, 'gpu', { image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04', rollout: ROLLOUT });
      },
    },
    clusters: Array.from({ length: clusters }, (_, i) => ({
      name: `cluster-${String(i).padStart(3, '0')}`,
      environment: i === 0 ? 'dev' : 'prod',
      region: `region-${i % 4}`,
      wave: i === 0 ? 'canary' : i % 4 === 1 ? 'early' : 'rest',
    })),
  });
}

/** The way App.synth() renders: one validation of the app, then chart.toJson() per chart. */
function renderLikeAppSynth(app: App): number {
  let bytes = 0;
  app.node.findAll().forEach((c) => c.node.validate());
  for (const chart of app.charts) bytes += Yaml.stringify(...chart.toJson()).length;
  return bytes;
}

/** The library's objects, chart by chart, as JSON. */
function libraryJson(clusters: number): Array<{ id: string; objects: unknown[] }> {
  const fleet = fleetOf(clusters);
  fleet.synthFiles();
  return fleet.clusters.flatMap((cluster) => cluster.node.children.filter((c): c is Chart => c instanceof Chart)
    .map((chart) => ({ id: `${cluster.clusterName}-${chart.node.id}`, objects: chart.toJson() })))
    .concat([{ id: 'argocd', objects: fleet.argoCdObjects() }]);
}

function floorApp(charts: Array<{ id: string; objects: any[] }>): App {
  const app = new App({ outdir: '.tmp/bench-floor' });
  for (const { id, objects } of charts) {
    const chart = new Chart(app, id);
    objects.forEach((o, i) => new ApiObject(chart, `o${i}`, o));
  }
  return app;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Times `a` and `b` in turn (a b, b a, a b, ...), each run after an untimed one of its own, so
 * drift in the machine's speed reaches both alike, and gives each one's median and the median of
 * the pair-by-pair ratios.
 */
function timePaired(a: () => void, b: () => void, pairs: number): { a: number; b: number; ratio: number } {
  const as: number[] = [];
  const bs: number[] = [];
  const ratios: number[] = [];
  const timed = (run: () => void) => {
    run();
    const start = performance.now();
    run();
    return performance.now() - start;
  };
  for (let i = 0; i < pairs; i++) {
    let ta: number;
    let tb: number;
    if (i % 2 === 0) {
      ta = timed(a);
      tb = timed(b);
    } else {
      tb = timed(b);
      ta = timed(a);
    }
    as.push(ta);
    bs.push(tb);
    ratios.push(ta / tb);
  }
  return { a: median(as), b: median(bs), ratio: median(ratios) };
}

function time(run: () => void, runs: number): number {
  run(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    run();
    times.push(performance.now() - start);
  }
  return median(times);
}

function main(): void {
  const sizes = sizesFrom(process.env.BENCH_SIZES, '1,10,50,200', '1,2');
  console.log(`fleet synthesis, median ms (build + render), time cap ${CAP_MS} ms per run; fleet and floor timed in turn, fleet/floor the median of the pair-by-pair ratios`);
  console.log('clusters  objects      fleet   app (N+1 passes)      floor   fleet/floor   app/floor');
  const fleetTimes = new Map<number, number>();
  let appStillUnderCap = true;
  for (const n of sizes) {
    const previous = [...fleetTimes.entries()].pop();
    if (previous && previous[1] * (n / previous[0]) > CAP_MS * 2) {
      console.log(`${String(n).padEnd(8)}  skipped: ${previous[0]} clusters took ${previous[1].toFixed(0)} ms, so ${n} would exceed the cap`);
      continue;
    }
    const json = libraryJson(n);
    const objects = json.reduce((sum, c) => sum + c.objects.length, 0);
    const runs = sized(n >= 200 ? 5 : n >= 50 ? 9 : 11, 1);
    const paired = timePaired(() => fleetOf(n).synthFiles(), () => renderLikeAppSynth(floorApp(json)), runs);
    const fleet = paired.a;
    const floor = paired.b;
    fleetTimes.set(n, fleet);
    let app: number | undefined;
    if (appStillUnderCap && n <= APP_MAX_CLUSTERS) {
      app = time(() => renderLikeAppSynth(fleetOf(n)), n >= 50 ? 1 : 3);
      if (app > CAP_MS / 4) appStillUnderCap = false;
    }
    console.log(`${String(n).padEnd(8)}  ${String(objects).padStart(7)}  ${fleet.toFixed(0).padStart(9)}  ${(app === undefined ? 'skipped' : app.toFixed(0)).padStart(17)}  `
      + `${floor.toFixed(0).padStart(9)}  ${paired.ratio.toFixed(2).padStart(11)}×  ${(app === undefined ? '-' : `${(app / floor).toFixed(2)}×`).padStart(10)}`);
  }
  const t50 = fleetTimes.get(50);
  const t200 = fleetTimes.get(200);
  if (t50 !== undefined && t200 !== undefined) console.log(`time(200)/time(50) = ${(t200 / t50).toFixed(2)} (linear: 4; goal ≤ 4.4)`);
  else console.log('time(200)/time(50): not measured (a size was skipped or not requested)');
}

if (require.main === module) main();
