/**
 * The readiness taint remover's JSON reader (a benchmark that prints figures, never asserts): ms to find the taint in
 * a node object of about 180 KB, 720 KB and 1.8 MB, with busybox's awk (the remover image's) when installed, else the
 * host's awk, and the largest / smallest ratio (goal: about 10x, i.e. linear; the reader ran every recheck).
 *
 *   npx ts-node --project test/tsconfig.json bench/readiness-remover.bench.ts
 */
import { spawnSync } from 'child_process';
import { performance } from 'perf_hooks';
import { sized } from './mode';
import { JSON_AWK } from '../src/agent/readiness-remover';

const KEY = 'node-agents.cdk8s.io/logs-not-ready';
const AWK = spawnSync('busybox', ['true']).status === 0 ? ['busybox', 'awk'] : ['awk'];

/** A node of a busy host: `images` images, and an annotation quoting a quarter of them (escaped quotes). */
function nodeText(images: number): string {
  const list = Array.from({ length: images }, (_, i) => ({
    names: [`registry.example.com/team-${i}/app@sha256:${'0123456789abcdef'.repeat(4)}`], sizeBytes: 123456789 + i,
  }));
  const node = {
    metadata: { name: 'n1', annotations: { 'example.com/last-applied': JSON.stringify({ items: list.slice(0, images / 4) }) } },
    spec: { taints: [{ key: 'example.com/dedicated', effect: 'NoSchedule' }, { key: KEY, effect: 'NoSchedule' }] },
    status: { images: list },
  };
  return `${JSON.stringify(node)}\n`;
}

function ms(text: string): number {
  const start = performance.now();
  const run = spawnSync(AWK[0], [...AWK.slice(1), '-v', 'mode=taint', '-v', `key=${KEY}`, JSON_AWK], { input: text, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (run.stdout.trim() !== '1') throw new Error(`unexpected answer: ${run.stdout}${run.stderr}`);
  return performance.now() - start;
}

const figures: number[] = [];
const SIZES = sized([1000, 4000, 10_000], [100, 200, 1000]);
for (const images of SIZES) {
  const text = nodeText(images);
  const took = Math.min(ms(text), ms(text), ms(text));
  figures.push(took);
  console.log(`${AWK.join(' ')}: node of ${(text.length / 1000).toFixed(0)} KB: ${took.toFixed(0)} ms`);
}
console.log(`ratio largest / smallest (10x the images): ${(figures[2] / figures[0]).toFixed(1)}x (goal: about 10x)`);
