/**
 * The CLI on large and hostile input (a benchmark that prints figures, not a test):
 * - peak RSS of `coverage --json` on 130k nodes with its output to a pipe (read slowly) and to a
 *   file, side by side (goal: piped ≤ 1.2× file: the writer waits for the pipe);
 * - for the cases that were quadratic, the time at n and at 10n side by side (goal: ratio ≤ 12).
 * Inputs are generated here, in a temporary directory.
 *
 *   npx ts-node --project test/tsconfig.json bench/cli-input.bench.ts
 *   BENCH_NODES=20000 ... (a smaller inventory for the RSS figures)
 *   BENCH_MAIN=path/to/other-main.ts ... (the executable to measure, e.g. an older one to compare)
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { performance } from 'perf_hooks';
import * as v8 from 'v8';
import * as vm from 'vm';
import * as YAML from 'yaml';
import { sized } from './mode';
import { agentDaemonSetObject, syntheticNodes, twelveDaemonSetObjects } from './synthetic';
import { analyzeCoverage } from '../src/cli/coverage/analysis';
import { KubeObject, manifestSet, parseManifestText } from '../src/cli/coverage/manifests';
import { nodeFacts } from '../src/cli/coverage/nodes';
import { planChange } from '../src/cli/plan/plan';
import { untoleratedTaints } from '../src/scheduling/tolerations';
import { TaintJson, TolerationJson } from '../src/scheduling/types';
import { parseQuantity } from '../src/util/quantity';

const ROOT = path.join(__dirname, '..');

/** Runs `coverage --json` in a child node whose peak RSS (MiB) is written to stderr at exit. */
function coverageRss(dir: string, redirect: string): number {
  const preload = path.join(dir, 'rss.js');
  fs.writeFileSync(preload, "process.on('exit', () => require('fs').writeSync(2, 'RSS ' + process.resourceUsage().maxRSS + '\\n'));\n");
  const node = [process.execPath, '-r', require.resolve('ts-node/register/transpile-only'), '-r', preload, path.join(ROOT, process.env.BENCH_MAIN ?? 'src/cli/main.ts')]
    .map((w) => `'${w}'`).join(' ');
  const command = `${node} coverage --nodes '${dir}/nodes.json' '${dir}/agents.yaml' --json ${redirect}`;
  const r = spawnSync('sh', ['-c', command], { encoding: 'utf-8', cwd: ROOT, maxBuffer: 1024 * 1024 });
  const match = /RSS (\d+)/.exec(r.stderr);
  if (match === null) throw new Error(`coverage failed: ${r.stderr.slice(0, 500)}`);
  return Number(match[1]) / 1024;
}

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/**
 * The best of three runs after a warm-up, each after a full garbage collection: on a shared machine one
 * run swings by 2x, and the garbage of the previous run is not the next one's cost.
 */
function time(run: () => unknown): number {
  run(); // warm-up
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    gc();
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

/** A DaemonSet of agent `agent` binding host port 9100 on every Linux node. */
function agentDaemonSet(name: string, agent: string, extra: Record<string, unknown> = {}): KubeObject {
  return agentDaemonSetObject(name, agent, { containers: [{ name: 'main', image: `example.com/${agent}:1`, ports: [{ containerPort: 9100, hostPort: 9100 }] }], ...extra });
}

const treeOf = (objects: readonly KubeObject[]) => manifestSet(objects.map((object) => ({ source: 'bench.yaml', object })));

function side(label: string, n: number, atN: number, at10n: number): void {
  console.log(`${label.padEnd(48)} n=${String(n).padEnd(7)} ${atN.toFixed(1).padStart(9)} ms   10n ${at10n.toFixed(1).padStart(9)} ms   ratio ${(at10n / Math.max(atN, 0.01)).toFixed(1)}`);
}

function main(): void {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-bench-input-'));
  try {
    const count = Number(process.env.BENCH_NODES ?? sized(130_000, 2_000));
    fs.writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: syntheticNodes(count) }));
    fs.writeFileSync(path.join(dir, 'agents.yaml'), twelveDaemonSetObjects().map((o) => YAML.stringify(o)).join('---\n'));
    const file = coverageRss(dir, `> '${dir}/out.json'`);
    const piped = coverageRss(dir, '| (sleep 2; cat > /dev/null)');
    console.log(`coverage --json on ${count} nodes, peak RSS: to a file ${file.toFixed(0)} MiB, to a slow pipe ${piped.toFixed(0)} MiB, `
      + `ratio ${(piped / file).toFixed(2)} (goal ≤ 1.2)`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  console.log('\nonce quadratic: time at n and 10n, best of 3 (goal: ratio ≤ 12)');
  for (const n of [sized(3_000, 300)]) {
    side('quantity regex, n digits then "x"', n, time(() => parseQuantity(`${'1'.repeat(n)}x`)), time(() => parseQuantity(`${'1'.repeat(10 * n)}x`)));
  }
  const taintsAndTolerations = (n: number): [TolerationJson[], TaintJson[]] => [
    Array.from({ length: n }, (_, i) => ({ key: `k-${i + 1}`, operator: 'Equal', value: `v${i + 1}`, effect: 'NoSchedule' })),
    Array.from({ length: n }, (_, i) => ({ key: `k-${i}`, value: `v${i}`, effect: 'NoSchedule' })),
  ];
  {
    const n = sized(30_000, 300);
    const [tolerationsN, taintsN] = taintsAndTolerations(n);
    const [tolerations10n, taints10n] = taintsAndTolerations(10 * n);
    side('n taints x n tolerations', n, time(() => untoleratedTaints([...tolerationsN], taintsN)),
      time(() => untoleratedTaints([...tolerations10n], taints10n)));
    // the floor of any hashed index: a bare Map filled with the tolerations' keys and asked for the taints'
    // (V8's Map itself grows faster than 10x from 30k to 300k string keys: cache misses, not steps)
    const bareMap = (tolerations: TolerationJson[], taints: TaintJson[]) => () => {
      const map = new Map<string, string | undefined>();
      for (const t of tolerations) map.set(t.key!, t.value);
      return taints.filter((t) => map.get(t.key) !== t.value).length;
    };
    side('  floor: a bare Map of the same keys', n, time(bareMap(tolerationsN, taintsN)), time(bareMap(tolerations10n, taints10n)));
  }
  {
    const n = sized(20_000, 200);
    const docs = (k: number) => Array.from({ length: k }, (_, i) => `{kind: ConfigMap, metadata: {name: c${i}}}`).join('\n---\n');
    const small = docs(n);
    const large = docs(10 * n);
    side('n documents in one file', n, time(() => parseManifestText(small, 'b.yaml')), time(() => parseManifestText(large, 'b.yaml')));
    // the floor: the yaml package's parse of the same text, with the options coverage reads manifests with (minus its tags)
    const parseOnly = (text: string) => () => YAML.parseAllDocuments(text, { version: '1.1', merge: true, uniqueKeys: false });
    side('  floor: the yaml package\'s parse alone', n, time(parseOnly(small)), time(parseOnly(large)));
  }
  {
    // one agent's DaemonSets, every one on every node: once compared in pairs (1,000 made 499,500 findings)
    const n = 100;
    const nodes = nodeFacts(syntheticNodes(sized(2_000, 200)));
    const before = treeOf([agentDaemonSet('a-0', 'one')]);
    const after = (k: number) => treeOf(Array.from({ length: k }, (_, i) => agentDaemonSet(`a-${i}`, 'one')));
    const small = after(n);
    const large = after(10 * n);
    side('n DaemonSets of one agent, plan (2,000 nodes)', n, time(() => planChange(before, small, nodes)), time(() => planChange(before, large, nodes)));
    side('n DaemonSets of one agent, coverage (2,000 nodes)', n, time(() => analyzeCoverage(small.daemonSets, nodes)),
      time(() => analyzeCoverage(large.daemonSets, nodes)));
  }
  {
    // n nodeSelectorTerms (pool In [p-i], and zone In [z-1] for odd i) on 2n nodes: once every term on every node
    const n = sized(2_000, 200);
    const nodesOf = (k: number) => nodeFacts(syntheticNodes(2 * k).map((node, j) => ({
      ...node, metadata: { ...node.metadata, labels: { ...node.metadata?.labels, pool: `p-${j % k}`, zone: `z-${j % 3}` } },
    })));
    const treeWith = (k: number) => treeOf([agentDaemonSet('a', 'one', {
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: Array.from({ length: k }, (_, i) => ({
              matchExpressions: [{ key: 'pool', operator: 'In', values: [`p-${i}`] }, ...(i % 2 === 1 ? [{ key: 'zone', operator: 'In', values: ['z-1'] }] : [])],
            })),
          },
        },
      },
    })]);
    const [smallNodes, largeNodes] = [nodesOf(n), nodesOf(10 * n)];
    const [small, large] = [treeWith(n), treeWith(10 * n)];
    side('n nodeSelectorTerms on 2n nodes, coverage', n, time(() => analyzeCoverage(small.daemonSets, smallNodes)),
      time(() => analyzeCoverage(large.daemonSets, largeNodes)));
  }
  {
    // the yaml package's own duplicate-key check compared each key with every earlier one
    const n = sized(10_000, 100);
    const text = (k: number) => `kind: ConfigMap\nmetadata: {name: c}\ndata:\n${Array.from({ length: k }, (_, i) => `  k${i}: v`).join('\n')}\n`;
    const [small, large] = [text(n), text(10 * n)];
    side('n keys in one mapping', n, time(() => parseManifestText(small, 'k.yaml')), time(() => parseManifestText(large, 'k.yaml')));
  }
  {
    // alias amplification is refused after counting the anchored nodes once each
    const n = sized(1_000, 100);
    const text = (k: number) => `kind: X\nbase: &b {${Array.from({ length: k }, (_, i) => `k${i}: v`).join(', ')}}\nl:\n${Array.from({ length: 900 }, () => '  - *b').join('\n')}\n`;
    const refuse = (t: string) => () => {
      try {
        parseManifestText(t, 'a.yaml');
      } catch {
        // refused: what is timed
      }
    };
    side('alias of n nodes x 900 (refused)', n, time(refuse(text(n))), time(refuse(text(10 * n))));
  }
}

main();
