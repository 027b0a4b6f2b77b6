/**
 * `node-agents doctor` and `plan --pods` on 5k, 50k and 130k nodes with 30 pods per node (a benchmark that prints
 * figures, not a test). Each size runs in a child process of its own, so its peak RSS is its own; the inputs are
 * generated object by object and fed to the same readers the commands use (StateBuilder, PodIndex), as a dump split
 * into files would be read (one JSON file of 130k × 30 pods is more than one JavaScript string holds). Time excludes
 * generation and is the median of the timed runs after a first one that warms the JIT up (doctor: state building
 * excluded), the slowest run printed beside it (a full GC lands in one run, not all). Runs: at least MIN_RUNS, and
 * as many as fill about TIMED_MS: a 5k run takes 20–50 ms and one of them varies by half on a shared machine, so the
 * small sizes, the ratios' denominator, get tens of runs (a warmer JIT there can only raise the ratios). RSS includes everything; a full GC runs between
 * doctor and plan (separate commands, separate processes in use), so the peak is the larger of the two. Live heap:
 * what each command's input holds after a full GC (doctor's state; plan's inventory and pod index), the heap
 * before reading any input (the code loaded) subtracted.
 *
 * Floor: the least any pass over the same input does, timed the same way in the same process: a map of the nodes
 * by name, and for each node its pods found by name and their requests read. It is not linear on this hardware:
 * from 5k to 130k nodes the working set leaves the CPU caches and V8's young generation, so each lookup costs more
 * (the floor grew 35-45x for 26x the nodes). Target: linear growth, i.e. each command's ratio against 5k near the
 * node ratio (10 and 26) and near the floor's, printed beside it; and between 50k and 130k, both past the caches,
 * near the node ratio (2.6).
 *
 * What doctor keeps (`--live-max-kept`): the bytes its StateBuilder estimates it keeps (HeapEstimate) beside the live
 * heap measured, for the whole state at each size, and per object of each kind (100,000 of one kind in a child of
 * its own: nodes, DaemonSet pods, workload pods, events), the figures DEFAULT_MAX_KEPT is sized on.
 *
 *   npx ts-node --project test/tsconfig.json bench/doctor.bench.ts            (BENCH_DOCTOR_SIZES=5000,50000,130000)
 */
import { spawnSync } from 'child_process';
import * as path from 'path';
import { performance } from 'perf_hooks';
import { sized, sizesFrom } from './mode';
import { agentDaemonSetObject } from './synthetic';
import { PodIndex, podRecord } from '../src/cli/capacity/pods';
import { planCapacity } from '../src/cli/capacity-hooks';
import { analyzeCoverage } from '../src/cli/coverage/analysis';
import { KubeObject, manifestSet, ManifestSet } from '../src/cli/coverage/manifests';
import { nodeFacts } from '../src/cli/coverage/nodes';
import { diagnose } from '../src/cli/doctor/diagnose';
import { StateBuilder } from '../src/cli/doctor/state';
import { planChange } from '../src/cli/plan/plan';
import { NodeJson } from '../src/scheduling/types';

const ROOT = path.join(__dirname, '..');
const PODS_PER_NODE = 30;
const AGENTS = ['logs', 'node-exporter'];
/** timed runs per size (after one warm-up run), their median printed: at least MIN_RUNS, as many as fill TIMED_MS */
const MIN_RUNS = sized(5, 1);
const MAX_RUNS = sized(41, 1);
const TIMED_MS = 2000;

function nodeObject(i: number): NodeJson {
  const ready = i % 1000 === 7 ? 'False' : 'True';
  return {
    kind: 'Node',
    metadata: { name: `node-${i}`, labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': `node-${i}`, 'node.kubernetes.io/instance-type': i % 2 ? 'm6i.2xlarge' : 'm6i.4xlarge' } },
    spec: { taints: i % 500 === 3 ? [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] : [] },
    status: { allocatable: { 'cpu': '8', 'memory': '32Gi', 'ephemeral-storage': '100Gi', 'pods': '110' }, conditions: [{ type: 'Ready', status: ready }] },
  } as unknown as NodeJson;
}

function daemonSet(name: string, memory: string, hostPort?: number): KubeObject {
  return {
    ...agentDaemonSetObject(name, name, {
      priorityClassName: 'system-node-critical',
      containers: [{ name: 'main', image: `example/${name}:${memory}`, resources: { requests: { cpu: '100m', memory } }, ports: hostPort ? [{ containerPort: hostPort, hostPort }] : undefined }],
    }, { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } } }),
    status: {},
  };
}

/** The pods of node i: the two agents' pods (some broken), and 28 workload pods, a few Pending or finished. */
function* podsOf(i: number): Generator<Record<string, unknown>> {
  const node = `node-${i}`;
  for (const agent of AGENTS) {
    const broken = agent === 'logs' && i % 97 === 5;
    yield {
      kind: 'Pod',
      metadata: {
        name: `${agent}-${i}`,
        namespace: 'agents',
        labels: { 'controller-revision-hash': i % 50 === 1 ? 'old' : 'v2' },
        ownerReferences: [{ kind: 'DaemonSet', name: agent, controller: true }],
      },
      spec: {
        nodeName: node,
        priority: 2000001000,
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }] } } },
        containers: [{ name: 'main', resources: { requests: { cpu: '100m', memory: '200Mi' } }, ports: agent === 'node-exporter' ? [{ containerPort: 9100, hostPort: 9100 }] : undefined }],
      },
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: broken ? 'False' : 'True' }],
        containerStatuses: [{ name: 'main', image: 'x', ready: !broken, restartCount: broken ? 3 : 0, state: broken ? { waiting: { reason: 'CrashLoopBackOff' } } : { running: {} }, lastState: broken ? { terminated: { reason: 'Error', exitCode: 1 } } : {} }],
      },
    };
  }
  for (let k = 0; k < PODS_PER_NODE - AGENTS.length; k++) {
    yield {
      kind: 'Pod',
      metadata: { name: `app-${i}-${k}`, namespace: `team-${k % 7}` },
      spec: { nodeName: node, priority: k % 3 === 0 ? 1000 : 0, containers: [{ name: 'c', resources: { requests: { cpu: '250m', memory: i % 400 === 9 ? '1.2Gi' : '1Gi' } } }] },
      status: { phase: k === 27 ? 'Succeeded' : 'Running', startTime: '2026-01-01T00:00:00Z' },
    };
  }
}

/** An event about the pod of agent `logs` on node i, as the kubelet reports a crash loop. */
function eventObject(i: number): Record<string, unknown> {
  return {
    kind: 'Event',
    involvedObject: { kind: 'Pod', namespace: 'agents', name: `logs-${i}` },
    reason: 'BackOff',
    message: `Back-off restarting failed container main in pod logs-${i}_agents(0f2c5a1e-8d3b-4f7a-9c21-${String(i).padStart(12, '0')})`,
    type: 'Warning',
    lastTimestamp: '2026-01-01T00:00:00Z',
    count: 12,
  };
}

/** Pod i of a kind, on node i / PODS_PER_NODE (a node's pods share its list in the pod index, as in a cluster). */
function onItsNode(pod: Record<string, any>, i: number): Record<string, unknown> {
  return { ...pod, spec: { ...pod.spec, nodeName: `node-${Math.floor(i / PODS_PER_NODE)}` } };
}

const KEPT_KINDS: Record<string, (i: number) => Record<string, unknown>> = {
  'node': (i) => nodeObject(i) as unknown as Record<string, unknown>,
  'DaemonSet pod': (i) => onItsNode(podsOf(i).next().value as Record<string, unknown>, i),
  'workload pod': (i) => onItsNode([...podsOf(i)][2 + (i % 26)], i),
  'event': eventObject,
};

/** `count` objects of one kind (KEPT_KINDS), each parsed from its JSON as a read does: prints `KEPT estimateBytes measuredBytes`, per object. */
function keptChild(kind: string, count: number): void {
  baseHeap = liveHeap();
  const builder = new StateBuilder();
  for (let i = 0; i < count; i++) builder.add(JSON.parse(JSON.stringify(KEPT_KINDS[kind](i))), 'bench');
  const measured = liveHeap() * 2 ** 20;
  console.log(`KEPT ${(builder.kept / count).toFixed(0)} ${(measured / count).toFixed(0)}`);
}

/** One size, in this process: prints `RESULT doctorMs doctorMaxMs planMs planMaxMs rssMB doctorLiveMB planLiveMB floorMs findings keptMB`. */
function child(count: number): void {
  const before = manifestSet([daemonSet('logs', '200Mi'), daemonSet('node-exporter', '64Mi', 9100)].map((object) => ({ source: 'bench', object })));
  const after: ManifestSet = manifestSet([daemonSet('logs', '2Gi'), daemonSet('node-exporter', '64Mi', 9100)].map((object) => ({ source: 'bench', object })));
  // doctor and plan one after the other, each holding only its own input (the peak is the larger of the two)
  baseHeap = liveHeap();
  const doctor = timeDoctor(count, after);
  gc();
  const plan = timePlan(count, before, after);
  const rss = process.resourceUsage().maxRSS / 1024;
  console.log(`RESULT ${[doctor.ms, doctor.maxMs, plan.ms, plan.maxMs, rss, doctor.liveMb, plan.liveMb, plan.floorMs].map((n) => n.toFixed(0)).join(' ')} ${doctor.findings} ${plan.findings} ${doctor.keptMb.toFixed(0)}`);
}

let baseHeap = 0;

function gc(): void {
  (global as unknown as { gc: () => void }).gc();
}

/** heap in use after a full GC, MB, above what the child held before reading any input (the code loaded) */
function liveHeap(): number {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20 - baseHeap;
}

/** The median of the timed calls of `run` (see MIN_RUNS), after one untimed call (it warms the JIT up); and run's last result. */
function median<T>(run: () => T): { ms: number; maxMs: number; result: T } {
  const warm = performance.now();
  let result = run();
  const runs = Math.min(MAX_RUNS, Math.max(MIN_RUNS, Math.ceil(TIMED_MS / Math.max(1, performance.now() - warm))));
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    result = run();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  return { ms: times[Math.floor(runs / 2)], maxMs: times[runs - 1], result };
}

/** doctor on a state read object by object (building it is not timed). */
function timeDoctor(count: number, after: ManifestSet): { ms: number; maxMs: number; liveMb: number; findings: number; keptMb: number } {
  const builder = new StateBuilder();
  for (let i = 0; i < count; i++) {
    builder.add(nodeObject(i), 'bench');
    for (const p of podsOf(i)) builder.add(p, 'bench');
  }
  for (const object of after.documents) builder.add(object.object, 'bench');
  builder.add({ kind: 'ControllerRevision', metadata: { name: 'logs-v2', namespace: 'agents', labels: { 'controller-revision-hash': 'v2' }, ownerReferences: [{ kind: 'DaemonSet', name: 'logs', controller: true }] }, revision: 2 }, 'bench');
  const keptMb = builder.kept / 2 ** 20;
  const state = builder.finish('bench');
  const liveMb = liveHeap();
  const { ms, maxMs, result } = median(() => diagnose(state).findings.length);
  return { ms, maxMs, liveMb, findings: result, keptMb };
}

/** plan with --pods: the plan and the capacity check, node facts included. */
function timePlan(count: number, before: ManifestSet, after: ManifestSet):
{ ms: number; maxMs: number; liveMb: number; findings: number; floorMs: number } {
  const inventory: NodeJson[] = [];
  const pods = new PodIndex();
  for (let i = 0; i < count; i++) {
    inventory.push(nodeObject(i));
    for (const p of podsOf(i)) pods.add(podRecord(p, undefined, pods.interner)!);
  }
  // as the plan command does: each tree's coverage computed once, the after-tree's shared by the plan and --pods
  const once = () => {
    const nodes = nodeFacts(inventory);
    const coverage = { before: analyzeCoverage(before.daemonSets, nodes), after: analyzeCoverage(after.daemonSets, nodes) };
    return planChange(before, after, nodes, { coverage }).findings.length
      + planCapacity(before, after, nodes, pods, coverage.after).length;
  };
  const liveMb = liveHeap();
  const { ms, maxMs, result } = median(once);
  return { ms, maxMs, liveMb, findings: result, floorMs: median(() => floor(inventory, pods)).ms };
}

/** The floor (see the header): a map of the nodes by name, each node's pods found by name, their requests read. */
function floor(inventory: readonly NodeJson[], pods: PodIndex): number {
  const byName = new Map(inventory.map((n, i) => [n.metadata.name, i]));
  let memory = 0;
  for (const n of inventory) {
    if (byName.get(n.metadata.name) === undefined) continue;
    for (const p of pods.on(n.metadata.name)) memory += p.requests.memory ?? 0;
  }
  return memory;
}

function main(): void {
  const sizes = sizesFrom(process.env.BENCH_DOCTOR_SIZES, '5000,50000,130000', '1000');
  console.log(`doctor and plan --pods, ${PODS_PER_NODE} pods per node (2 agents + 28 workloads), one child process per size; time: median (slowest) of ${MIN_RUNS} to ${MAX_RUNS} runs after a warm-up, excluding generating the input; RSS includes it`);
  console.log('nodes     doctor ms (max)   plan --pods ms (max)   floor ms   peak RSS MB   live heap MB doctor/plan   doctor findings   plan findings   doctor kept, estimated MB');
  const rows: { count: number; doctor: number; plan: number; floor: number; rss: number; doctorLive: number; planLive: number }[] = [];
  for (const count of sizes) {
    const run = spawnSync(process.execPath, ['--max-old-space-size=12000', '--expose-gc', '-r', require.resolve('ts-node/register/transpile-only'), __filename, 'child', String(count)], {
      cwd: ROOT, env: { ...process.env, TS_NODE_PROJECT: path.join(ROOT, 'test/tsconfig.json') }, encoding: 'utf-8', maxBuffer: 1024 * 1024,
    });
    const match = /RESULT (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+) (\d+)/.exec(run.stdout);
    if (match === null) throw new Error(`size ${count}: the child printed no result: ${run.stderr.slice(0, 2000)}`);
    const [doctor, doctorMax, plan, planMax, rss, doctorLive, planLive, floorMs, doctorFindings, planFindings, kept] = match.slice(1).map(Number);
    rows.push({ count, doctor, plan, floor: floorMs, rss, doctorLive, planLive });
    console.log(`${String(count).padEnd(9)} ${`${doctor} (${doctorMax})`.padStart(15)}   ${`${plan} (${planMax})`.padStart(20)}   ${String(floorMs).padStart(8)}   ${String(rss).padStart(11)}   `
      + `${`${doctorLive}/${planLive}`.padStart(24)}   ${String(doctorFindings).padStart(15)}   ${String(planFindings).padStart(13)}   `
      + `${kept} (measured ${doctorLive})`);
  }
  const ratio = (row: typeof rows[number], base: typeof rows[number]) => {
    const x = (a: number, b: number) => `${(a / b).toFixed(1)}x`;
    console.log(`ratio ${row.count / 1000}k/${base.count / 1000}k (nodes ${x(row.count, base.count)}): doctor ${x(row.doctor, base.doctor)}, `
      + `plan --pods ${x(row.plan, base.plan)}, floor ${x(row.floor, base.floor)}, peak RSS ${x(row.rss, base.rss)}, `
      + `live heap doctor ${x(row.doctorLive, base.doctorLive)}, plan ${x(row.planLive, base.planLive)}`);
  };
  // against the smallest size (the issue's figures), then between consecutive sizes (both past the caches from 50k on)
  for (const row of rows.slice(1)) ratio(row, rows[0]);
  for (let i = 2; i < rows.length; i++) ratio(rows[i], rows[i - 1]);
  keptPerObject();
}

/** What doctor keeps per object of each kind: estimated (HeapEstimate, as the StateBuilder counts) and measured (live heap). */
function keptPerObject(): void {
  const count = sized(100_000, 1_000);
  console.log(`\nwhat doctor keeps per object (${count} of one kind, parsed from JSON, in a child of its own): estimated beside measured (live heap after a full GC)`);
  for (const kind of Object.keys(KEPT_KINDS)) {
    const run = spawnSync(process.execPath, ['--expose-gc', '-r', require.resolve('ts-node/register/transpile-only'), __filename, 'kept', kind, String(count)], {
      cwd: ROOT, env: { ...process.env, TS_NODE_PROJECT: path.join(ROOT, 'test/tsconfig.json') }, encoding: 'utf-8', maxBuffer: 1024 * 1024,
    });
    const match = /KEPT (\d+) (-?\d+)/.exec(run.stdout);
    if (match === null) throw new Error(`kept ${kind}: the child printed no result: ${run.stderr.slice(0, 2000)}`);
    console.log(`  ${kind.padEnd(14)} estimated ${match[1].padStart(5)} bytes, measured ${match[2].padStart(5)} bytes`);
  }
}

if (process.argv[2] === 'child') child(Number(process.argv[3]));
else if (process.argv[2] === 'kept') keptChild(process.argv[3], Number(process.argv[4]));
else main();
