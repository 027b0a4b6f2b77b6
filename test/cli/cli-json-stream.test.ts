import fc from 'fast-check';
import { LazyArray, writeJson } from '../../src/cli/format';
import { runCli } from '../../src/cli/run';
import { REPO } from '../util/paths';

function written(value: unknown): { text: string; writes: number } {
  let text = '';
  let writes = 0;
  writeJson(value, (chunk) => {
    text += chunk;
    writes++;
  });
  return { text, writes };
}

describe('writeJson: JSON.stringify(value, null, 2) + newline, written in chunks', () => {
  test('property: any JSON value, plus undefined members and array holes, comes out exactly as JSON.stringify writes it', () => {
    const withUndefined = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined),
        fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(fc.string({ maxLength: 6 }), tie('value'), { maxKeys: 4 })),
    })).value;
    fc.assert(fc.property(fc.oneof(fc.jsonValue(), withUndefined.filter((v) => v !== undefined)), (value) => {
      expect(written(value).text).toBe(JSON.stringify(value, null, 2) + '\n');
    }), { numRuns: 500, seed: 13 });
  });

  test('a LazyArray is written like the array of its items, items made one at a time', () => {
    const made: number[] = [];
    const lazy = new LazyArray(3, (i) => {
      made.push(i);
      return { i, name: `n-${i}`, tags: ['a', { deep: [i] }], skipped: undefined };
    });
    const plain = [0, 1, 2].map((i) => ({ i, name: `n-${i}`, tags: ['a', { deep: [i] }], skipped: undefined }));
    expect(written({ top: { nodes: lazy }, empty: new LazyArray(0, () => 1) }).text)
      .toBe(JSON.stringify({ top: { nodes: plain }, empty: [] }, null, 2) + '\n');
    expect(made).toEqual([0, 1, 2]);
  });

  test('a big document goes out in many writes of bounded size', () => {
    const chunks: number[] = [];
    writeJson({ nodes: new LazyArray(20000, (i) => ({ name: `node-${i}`, zone: 'eu-west-1a' })) }, (chunk) => chunks.push(chunk.length));
    expect(chunks.length).toBeGreaterThan(10);
    // a chunk is flushed once it passes 64 KiB: never much larger than that plus one item
    expect(Math.max(...chunks)).toBeLessThan(64 * 1024 + 1024);
  });
});

describe('coverage --json is streamed and formatted as before', () => {
  test('the mixed cluster: the text is exactly JSON.stringify(parsed, null, 2)', () => {
    const writes: string[] = [];
    const code = runCli(['coverage', '--json', '--nodes', 'examples/inventories/mixed-cluster.json', 'test/fixtures/coverage/cluster'], {
      stdout: { write: (text: string) => writes.push(text) },
      stderr: { write: () => true },
      cwd: `${REPO}`,
    });
    expect(code).toBe(1);
    const text = writes.join('');
    const parsed = JSON.parse(text);
    expect(text).toBe(JSON.stringify(parsed, null, 2) + '\n');
    expect(parsed.nodes).toHaveLength(23);
    expect(parsed.nodes.find((n: { name: string }) => n.name === 'worker-c-4').rolloutHazards).toEqual(['cordoned (spec.unschedulable)']);
    expect(parsed.agents[0].nodes).toHaveLength(23);
  });
});
