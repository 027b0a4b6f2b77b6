/**
 * One way to fail (src/validation/errors.ts): a ValidationError whose prefix names the construct the
 * user built, built in one place. The scan below fails on any error, problem or `where` in src/ that
 * spells a construct's kind and path by hand.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart } from 'cdk8s';
import { FluentBitOutput, LogCollectorDaemonSet, NodeAgentDaemonSet } from '../../src';
import { constructWhere, throwIfProblems, ValidationError } from '../../src/validation/errors';
import { namedBy } from '../../src/validation/struct-check';
import { REPO } from '../util/paths';

const SRC = path.join(REPO, 'src');
// Where the prefix is built (errors.ts, owner.ts) and data without code.
const EXEMPT = /(^validation\/(errors|owner)\.ts$|\.generated\.ts$)/;

function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [path.relative(SRC, full).split(path.sep).join('/')] : [];
  });
}

/** The library's constructs' kinds: its classes that extend Construct or App. */
function constructKinds(files: readonly string[]): string[] {
  const kinds = new Set<string>();
  for (const f of files) {
    for (const m of fs.readFileSync(path.join(SRC, f), 'utf8').matchAll(/^export class (\w+) extends (Construct|App)\b/gm)) kinds.add(m[1]);
  }
  return [...kinds].sort();
}

/** Lines of `text` that build a construct prefix by hand, as "file:line: text". */
export function handBuiltPrefixes(file: string, text: string, kinds: readonly string[]): string[] {
  const kind = kinds.join('|');
  const patterns = [
    // any string that reads a construct's path into a message: `${x.node.path}` next to a kind or in an error
    new RegExp(`(${kind}) \\$\\{[\\w.()]*node\\.path\\}`),
    /new Error\([^;]*node\.path/,
    // a kind spelled as the start of an error's message
    new RegExp(`new Error\\(['\`](${kind})[ :]`),
    // the kind taken from the class name instead of the registered kind
    /constructor\.name\} \$\{[\w.]*node\.path/,
  ];
  return text.split('\n').flatMap((line, i) => (patterns.some((p) => p.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('one error idiom', () => {
  const files = sourceFiles();
  const kinds = constructKinds(files);

  test('the scan knows the construct kinds', () => {
    expect(kinds).toEqual(expect.arrayContaining(['AgentFleet', 'FleetCluster', 'GpuDriverDaemonSet', 'LogCollectorDaemonSet', 'NodeAgentDaemonSet', 'NodeExporterDaemonSet']));
  });

  test('no file in src/ builds a construct prefix by hand', () => {
    const found = files.filter((f) => !EXEMPT.test(f)).flatMap((f) => handBuiltPrefixes(f, fs.readFileSync(path.join(SRC, f), 'utf8'), kinds));
    expect(found).toEqual([]);
  });

  test.each([
    ['throw new Error(`GpuDriverDaemonSet ${this.node.path}: invalid props`);'],
    ['const where = `LogCollectorDaemonSet ${this.node.path}`;'],
    ["throw new Error('AgentFleet: addCluster: no name');"],
    ['throw new Error(`${scope.node.path}: bad`);'],
    ['const where = `${scope.constructor.name} ${scope.node.path}`;'],
  ])('the scan catches %s', (line) => {
    expect(handBuiltPrefixes('x.ts', line, kinds)).toHaveLength(1);
  });

  test('the scan lets the idiom through', () => {
    const ok = [
      "throw new ValidationError(constructWhere(this, 'FleetCluster'), 'chart id: bad');",
      'throw new ValidationError(where, `rollout.gates needs rollout.argoCdSyncWaves: true`);',
      "throw new Error('FluentBitFilter.grep: give at least one regex or exclude rule.');",
    ];
    expect(ok.flatMap((l) => handBuiltPrefixes('x.ts', l, kinds))).toEqual([]);
  });
});

describe('throwIfProblems', () => {
  const thrown = (f: () => void): Error => {
    try {
      f();
    } catch (e) {
      return e as Error;
    }
    throw new Error('nothing thrown');
  };

  test('no problems: no error', () => {
    expect(() => throwIfProblems('X a', [])).not.toThrow();
    expect(() => throwIfProblems('X a', [], 'invalid props')).not.toThrow();
  });

  test('one problem reads "where: problem"; several are counted and listed', () => {
    expect(thrown(() => throwIfProblems('X a', ['p'])).message).toBe('X a: p');
    expect(thrown(() => throwIfProblems('X a', ['p', 'q'])).message).toBe('X a: 2 problems:\n  - p\n  - q');
  });

  test('with a heading every problem is listed under it', () => {
    expect(thrown(() => throwIfProblems('X a', ['p'], 'invalid props')).message).toBe('X a: invalid props:\n  - p');
  });

  test('the error is a ValidationError', () => {
    const e = thrown(() => throwIfProblems('X a', ['p']));
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.name).toBe('ValidationError');
  });
});

describe('constructWhere', () => {
  test('a root construct is named by its kind, another by kind and path', () => {
    const app = new App();
    expect(constructWhere(app, 'AgentFleet')).toBe('AgentFleet');
    expect(constructWhere(new Chart(app, 'c'), 'Thing')).toBe('Thing c');
  });

  test('an error inside a library construct names the construct the user built', () => {
    const chart = new Chart(new App(), 'chart');
    const logs = new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()] });
    const inner = logs.node.children.find((c) => c instanceof NodeAgentDaemonSet)!;
    expect(constructWhere(inner, 'NodeAgentDaemonSet')).toBe('LogCollectorDaemonSet chart/logs');
  });
});

describe('namedBy', () => {
  test('a ValidationError from a shared helper is named by the factory', () => {
    expect(() => namedBy('FluentBitFilter.grep', () => {
      throw new ValidationError('parser', 'bad');
    })).toThrow(/^FluentBitFilter\.grep: parser: bad$/);
  });

  test('an error already named by the factory is left as it is', () => {
    expect(() => namedBy('F.x', () => {
      throw new ValidationError('F.x', 'bad');
    })).toThrow(/^F\.x: bad$/);
  });
});

/**
 * Issue 52: one error class. A mistake in props or a factory's arguments is refused with a
 * ValidationError; `throw new Error` is left only where a user's mistake cannot reach it as a plain
 * Error: each file below says why. The CLI's folders are not construct code.
 */
describe('one error class: no plain Error thrown at a user', () => {
  const CLI_FOLDERS = /^cli\//;
  const PLAIN_ERRORS_ALLOWED: { [file: string]: string } = {
    'validation/struct-check.ts': 'the generated shapes are stale: a build error (run npx projen compile), not a mistake in props',
    'validation/owner.ts': 'a construct of another library passed as one of ours: a programming error',
    'waves/partition.ts': 'planRollout turns its errors into problems of the construct (agent/rollout-plan.ts); the sync-wave indices are the library\'s own',
    'waves/profiles.ts': 'planProfiles turns its errors into problems of the construct (agent/profile-plan.ts)',
    'fluent-bit/classic-format.ts': 'parse errors of extraConfig become problems (fluent-bit/config.ts); the rest render what the checks passed',
    'fluent-bit/parser-checks.ts': 'called inside the parser factories\' namedBy, which makes it a ValidationError naming the factory',
    'fleet/argocd.ts': 'runs in AgentFleet\'s validation, whose plain Errors become the fleet\'s ValidationError (validateOnce)',
    'fleet/waves.ts': 'FleetCluster.promotion rethrows it as its ValidationError',
    'gpu/runbook.ts': 'GpuDriverDaemonSet.runbook()/runbookScript() rethrow it as their ValidationError (refusedAs)',
    'rollout/startup-budget.ts': 'GpuDriverDaemonSet checks the timings (checkWholeNumber) before it computes the budget',
    'rollout/pace.ts': 'the constructs give it their own checked update strategy (UpdateStrategy.problems()); the rest runs in the tools, on manifests',
    'rollout/hook-shell.ts': 'a check of the library\'s own script when the module loads: a build error, never a mistake in props',
    'rollout/watch-script.ts': 'a check of the library\'s own script when the module loads: a build error, never a mistake in props',
    'alerts/gate.ts': 'a check of the library\'s own script when the module loads: a build error, never a mistake in props',
    'util/json-awk.ts': 'a check of the library\'s own script when the module loads: a build error, never a mistake in props',
  };
  const files = sourceFiles().filter((f) => !CLI_FOLDERS.test(f) && !EXEMPT.test(f));

  test('every file that throws a plain Error is one whose Errors cannot reach a user as such', () => {
    const throwing = files.filter((f) => /throw new Error\(/.test(fs.readFileSync(path.join(SRC, f), 'utf8')));
    expect(throwing.filter((f) => !(f in PLAIN_ERRORS_ALLOWED))).toEqual([]);
  });

  test('the list names no file that no longer throws one (keep it short)', () => {
    const stale = Object.keys(PLAIN_ERRORS_ALLOWED).filter((f) => !/throw new Error\(/.test(fs.readFileSync(path.join(SRC, f), 'utf8')));
    expect(stale).toEqual([]);
  });
});
