import { spawnSync } from 'child_process';
import * as fc from 'fast-check';
import { SHELL_FUNCTIONS, shellLine, shellWord } from '../../src/util/shell';

/** Runs the lines in bash with `args` printing, for each call, its argument count and its arguments, each NUL-terminated. */
function argvInBash(lines: readonly string[]): string[][] {
  const script = 'args() { printf \'%s\\0\' "$#" "$@"; }\n' + lines.map((l) => `${l}\n`).join('');
  const r = spawnSync('bash', ['-s'], { input: script, encoding: 'utf-8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const fields = r.stdout.split('\0').slice(0, -1);
  const calls: string[][] = [];
  for (let i = 0; i < fields.length; i += Number(fields[i]) + 1) calls.push(fields.slice(i + 1, i + 1 + Number(fields[i])));
  return calls;
}

describe('shellWord', () => {
  test('plain words stay bare; anything else is single-quoted with \' as \'\\\'\'', () => {
    expect(shellWord('node-agents.cdk8s.io/rollout-wave=canary')).toBe('node-agents.cdk8s.io/rollout-wave=canary');
    expect(shellWord('ip-10-0-1-2.eu-west-1.compute.internal')).toBe('ip-10-0-1-2.eu-west-1.compute.internal');
    expect(shellWord('')).toBe("''");
    expect(shellWord('a b')).toBe("'a b'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
    expect(shellWord('$(touch x)')).toBe("'$(touch x)'");
    expect(shellWord('~root')).toBe("'~root'");
  });

  test('bash reads every quoted word back exactly, whatever it holds (fast-check, fixed seed)', () => {
    // NUL cannot be in an argument; everything else, newlines and non-ASCII included, can
    const word = fc.string({ unit: 'binary', maxLength: 12 }).filter((w) => !w.includes('\0'));
    // one bash run for all cases: the argvs are generated first, then compared in one go
    const samples = fc.sample(fc.array(word, { minLength: 1, maxLength: 4 }), { seed: 16, numRuns: 300 });
    samples.push([' ', "'", "''", '"', '\\', '`id`', '$(id)', '${HOME}', '$HOME', 'x$1', '~', '~root', '!!', '*', '#', '\n', 'a\nb', '-', '--x']);
    expect(argvInBash(samples.map((argv) => `args ${shellLine(argv)}`))).toEqual(samples);
  });
});

describe('the rendered scripts\' shell_word (a name in a command they print to paste)', () => {
  const BUSYBOX = spawnSync('busybox', ['true']).status === 0;
  const shells = [['sh'], ...(BUSYBOX ? [['busybox', 'sh']] : [])];
  const word = fc.string({ unit: 'binary', maxLength: 12 }).filter((w) => !w.includes('\0'));
  const samples = fc.sample(word, { seed: 52, numRuns: 200 });
  samples.push(' ', "'", "''", '"', '\\', '`id`', '$(id)', '${HOME}', 'x\n', '\n\n', 'a_', '_', '~', '*', '-', '--x', '', 'logs-canary-x7k2p', 'a;rm -rf x');

  test.each(shells)('%s: writes what shellWord writes, and bash reads it back exactly', (...shell) => {
    // each sample as an argument; the script prints each shell_word NUL-terminated
    const script = `${SHELL_FUNCTIONS}for w in "$@"; do shell_word "$w"; printf '\\0'; done`;
    const r = spawnSync(shell[0], [...shell.slice(1), '-c', script, 'sh', ...samples], { encoding: 'utf-8' });
    expect(r.stderr).toBe('');
    const written = r.stdout.split('\0').slice(0, -1);
    expect(written).toEqual(samples.map(shellWord));
    expect(argvInBash(written.map((w) => `args ${w}`))).toEqual(samples.map((w) => [w]));
  });
});
