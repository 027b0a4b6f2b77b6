/**
 * One way to fail (src/validation/errors.ts): a ValidationError raised by the construct itself (as
 * aws-cdk's takes its scope) or by a factory's name, whose prefix names the construct the user built,
 * built in one place. The scans below fail on any error, problem or warning in src/ that spells a
 * construct's kind and path by hand, or that hands an error a `where` string instead of the construct.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart } from 'cdk8s';
import { AgentFleet, FluentBitOutput, LogCollectorDaemonSet, NodeAgentDaemonSet } from '../../src';
import { nameOf, throwIfProblems, ValidationError } from '../../src/validation/errors';
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
      "throw new ValidationError(this, 'chart id: bad');",
      'throw new ValidationError(scope, `rollout.gates needs rollout.argoCdSyncWaves: true`);',
      "throw new Error('FluentBitFilter.grep: give at least one regex or exclude rule.');",
    ];
    expect(ok.flatMap((l) => handBuiltPrefixes('x.ts', l, kinds))).toEqual([]);
  });
});

/** Lines of `text` that hand an error a `where` string (or one built from a value) instead of who refuses, as "file:line: text". */
export function whereStrings(file: string, text: string): string[] {
  const patterns = [
    /\b(ValidationError|throwIfProblems|addWarning|checkStruct)\((where|[\w.]+\.where)\b/,
    /\b(ValidationError|throwIfProblems|checkStruct)\(`\$\{(where|this|scope|[\w.]*node\.)/,
    /\baddWarning\([\w.]+, where\b/,
    /\bwhere\??: string\b.*\)(: [\w<>[\]|{} ]+)? \{$/,
  ];
  return text.split('\n').flatMap((line, i) => (patterns.some((p) => p.test(line)) ? [`${file}:${i + 1}: ${line.trim()}`] : []));
}

describe('errors take who refuses, not a where string (issue 47)', () => {
  const LIBRARY = sourceFiles().filter((f) => !/^cli\//.test(f) && !EXEMPT.test(f));

  test('no error, warning or struct check in the library is handed a where string', () => {
    expect(LIBRARY.flatMap((f) => whereStrings(f, fs.readFileSync(path.join(SRC, f), 'utf8')))).toEqual([]);
  });

  test('no error is caught and raised again as a ValidationError with its message (a check returns its problem instead)', () => {
    const rethrow = /ValidationError\([^,]+, (`\$\{)?\(e as Error\)\.message(\}`)?\)/;
    expect(rethrow.test('throw new ValidationError(`FluentBitInput.${pluginName}`, (e as Error).message);')).toBe(true);
    expect(rethrow.test('throw new ValidationError(`${pluginName} filter`, `${(e as Error).message}`);')).toBe(true);
    const found = LIBRARY.flatMap((f) => fs.readFileSync(path.join(SRC, f), 'utf8').split('\n')
      .flatMap((line, i) => (rethrow.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])));
    expect(found).toEqual([]);
  });

  test.each([
    ['throw new ValidationError(where, `bad`);'],
    ['throwIfProblems(target.where, problems);'],
    ['throw new ValidationError(`${where}: runbook`, message);'],
    ["checkStruct(`${this.describe()}: rollout.previous`, 'Props', props);"],
    ["addWarning(this, where, 'x');"],
    ['function checkGate(gate: WaveGate, where: string): number {'],
  ])('the scan catches %s', (line) => {
    expect(whereStrings('x.ts', line)).toHaveLength(1);
  });

  test('the scan lets construct, factory and prop-path problems through', () => {
    const ok = [
      'throw new ValidationError(this, `runbookScript group "${group}" is not promoted`);',
      "throw new ValidationError('FluentBitFilter.grep', 'give a rule');",
      'throw new ValidationError(`FluentBitInput.${pluginName}`, message);',
      'throwIfProblems(this, problems, { heading: \'invalid props\' });',
      'const where = `hostPaths["${volume.name}"]`;',
    ];
    expect(ok.flatMap((l) => whereStrings('x.ts', l))).toEqual([]);
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
    expect(() => throwIfProblems('X a', [], { heading: 'invalid props' })).not.toThrow();
  });

  test('one problem reads "where: problem"; several are counted and listed', () => {
    expect(thrown(() => throwIfProblems('X a', ['p'])).message).toBe('X a: p');
    expect(thrown(() => throwIfProblems('X a', ['p', 'q'])).message).toBe('X a: 2 problems:\n  - p\n  - q');
  });

  test('with a heading every problem is listed under it', () => {
    expect(thrown(() => throwIfProblems('X a', ['p'], { heading: 'invalid props' })).message).toBe('X a: invalid props:\n  - p');
  });

  test('`at` comes after who refuses, before the problems', () => {
    expect(thrown(() => throwIfProblems('X a', ['p'], { at: 'runbook' })).message).toBe('X a: runbook: p');
    expect(thrown(() => throwIfProblems('X a', ['p', 'q'], { at: 'runbook' })).message).toBe('X a: runbook: 2 problems:\n  - p\n  - q');
  });

  test('the error is a ValidationError', () => {
    const e = thrown(() => throwIfProblems('X a', ['p']));
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.name).toBe('ValidationError');
  });
});

describe('ValidationError takes the construct', () => {
  test('a root construct is named by its kind, another by kind and path', () => {
    const fleet = new AgentFleet({ repoUrl: 'https://git.example/fleet.git', agents: { addAgents: () => undefined } });
    expect(nameOf(fleet)).toBe('AgentFleet');
    expect(nameOf(fleet.addCluster({ name: 'c', environment: 'e', region: 'r' }))).toMatch(/^FleetCluster \S*c$/);
  });

  test('the error carries the construct and names the construct the user built', () => {
    const chart = new Chart(new App(), 'chart');
    const logs = new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()] });
    const inner = logs.node.children.find((c) => c instanceof NodeAgentDaemonSet)!;
    const e = new ValidationError(inner, 'bad');
    expect(e.message).toBe('LogCollectorDaemonSet chart/logs: bad');
    expect(e.construct).toBe(inner);
    expect(new ValidationError('FluentBitFilter.grep', 'bad').construct).toBeUndefined();
  });

  test('an agent built inside a fleet cluster keeps its own name (the cluster holds it, it did not build it)', () => {
    const fleet = new AgentFleet({ repoUrl: 'https://git.example/fleet.git', agents: { addAgents: () => undefined } });
    const cluster = fleet.addCluster({ name: 'c', environment: 'e', region: 'r' });
    const agent = new NodeAgentDaemonSet(cluster.chart, 'agent', { image: 'registry.example/agent:1.0.0' });
    expect(nameOf(agent)).toBe(`NodeAgentDaemonSet ${agent.node.path}`);
    expect(agent.node.path).toContain(cluster.node.path);
  });

  test('a construct of another library is a programming error, not a refusal', () => {
    expect(() => new ValidationError(new Chart(new App(), 'c'), 'x')).toThrow(/not a construct of this library/);
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
    'fluent-bit/classic-format.ts': 'parse errors of extraConfig become problems (fluent-bit/config.ts); the factories check entries with writableEntryProblem first; the rest render what the checks passed',
    'fleet/argocd.ts': 'simulates Argo CD on the objects and files the fleet writes itself (its glob patterns, its templates\' keys, its JSON cluster files); the user\'s repoPath is refused before (repoPathProblems): a bug, not a mistake in props',
    'fleet/waves.ts': 'FleetCluster.promotion raises stageProblems as its own before it calls clusterPromotion',
    'gpu/runbook.ts': 'GpuDriverDaemonSet.runbook()/runbookScript() raise runbookInputProblems as their own before they render',
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
