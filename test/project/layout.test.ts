/**
 * The layout of src/ as CONTRIBUTING.md's Layout section draws it: two wings that never import each other, the
 * library (the constructs and what only they use) and the tools (src/cli/: the `node-agents` commands and their
 * engines), both standing on shared floors (rollout, waves, scheduling, validation, util). Within a wing or the
 * floors, each folder imports only from folders on the floors below it; render/ renders the resolved spec, never
 * the props as the user wrote them.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as ts from 'typescript';
import { REPO } from '../util/paths';

const SRC = path.join(REPO, 'src');

/** The shared floors: both wings import them, they import neither wing. */
const SHARED = ['util', 'validation', 'scheduling', 'rollout', 'waves'];
/** The library wing: the constructs and what only they use. */
const LIBRARY = ['adoption', 'fleet', 'fluent-bit', 'node-exporter', 'alerts', 'agent', 'render', 'gpu', 'constructs'];
/** The tools wing: src/cli/ (its command files, "cli") and the engines in its folders. */
const TOOLS = ['cli/coverage', 'cli/estimate', 'cli/plan', 'cli/capacity', 'cli/doctor', 'cli/size', 'cli'];

/** Each folder of src/ (and of src/cli/) and its floor: a folder may import only from folders on a lower floor. */
const FLOORS: Record<string, number> = {
  'util': 0,
  'validation': 1,
  'scheduling': 2,
  'rollout': 2,
  'waves': 3,
  // the library wing
  'adoption': 4,
  'fleet': 4,
  'fluent-bit': 4,
  'node-exporter': 4,
  'alerts': 5,
  'agent': 6,
  'render': 7,
  'gpu': 7,
  'constructs': 9,
  // the tools wing
  'cli/coverage': 4,
  'cli/estimate': 5,
  'cli/plan': 6,
  'cli/capacity': 6,
  'cli/doctor': 7,
  'cli/size': 7,
  'cli': 9,
};

/** The wing a folder belongs to. */
function wingOf(folder: string): 'shared' | 'library' | 'tools' | undefined {
  if (SHARED.includes(folder)) return 'shared';
  if (LIBRARY.includes(folder)) return 'library';
  if (TOOLS.includes(folder)) return 'tools';
  return undefined;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

/** The module specifiers a file imports or re-exports, with the names it imports from each. */
function importsOf(file: string): { from: string; names: string[] }[] {
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { from: string; names: string[] }[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const names: string[] = [];
      const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
      if (bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings))) {
        for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
      }
      found.push({ from: node.moduleSpecifier.text, names });
    } else if (ts.isCallExpression(node) && node.expression.getText() === 'require' && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      found.push({ from: node.arguments[0].text, names: [] });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/**
 * The folder of src/ a path lies in ("cli/<engine>" for a folder of src/cli/, "cli" for src/cli/'s own files), or
 * undefined for src/'s own files (the index).
 */
function folderOf(file: string, root = SRC): string | undefined {
  const parts = path.relative(root, file).split(path.sep);
  if (parts.length === 1) return undefined;
  if (parts[0] === 'cli' && parts.length > 2) return `cli/${parts[1]}`;
  return parts[0];
}

/** Every import between two folders of src/ that does not point down, or that crosses between the wings. */
function upwardImports(files: string[], root = SRC): string[] {
  const wrong: string[] = [];
  for (const file of files) {
    const from = folderOf(file, root);
    if (from === undefined) continue;
    for (const imported of importsOf(file)) {
      if (!imported.from.startsWith('.')) continue;
      const target = path.resolve(path.dirname(file), imported.from);
      const to = folderOf(target, root);
      if (to === undefined && !path.relative(root, target).startsWith('..')) {
        wrong.push(`${path.relative(root, file)} imports src/'s index`);
      } else if (to !== undefined && to !== from) {
        const [fromWing, toWing] = [wingOf(from), wingOf(to)];
        if (fromWing !== toWing && toWing !== 'shared') {
          wrong.push(`${path.relative(root, file)} (${fromWing} wing) imports ${to}/ (${toWing} wing)`);
        } else if (!(FLOORS[to] < FLOORS[from])) {
          wrong.push(`${path.relative(root, file)} (floor ${FLOORS[from]}) imports ${to}/ (floor ${FLOORS[to]})`);
        }
      }
    }
  }
  return wrong;
}

const files = sourceFiles(SRC);

/** The folders of src/ and of src/cli/, as folderOf names them. */
function folders(): string[] {
  const dirs = (dir: string) => fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  return [...dirs(SRC), ...dirs(path.join(SRC, 'cli')).map((d) => `cli/${d}`)].sort();
}

test('every folder of src/ has a floor and a wing', () => {
  const found = folders();
  expect(found.filter((f) => FLOORS[f] === undefined || wingOf(f) === undefined)).toEqual([]);
  expect(Object.keys(FLOORS).filter((f) => !found.includes(f))).toEqual([]);
});

test('folders import only from the floors below them', () => {
  expect(upwardImports(files)).toEqual([]);
});

test('the check sees an import that climbs, a require(), a re-export and an import across the wings', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layout-'));
  try {
    fs.mkdirSync(path.join(root, 'validation'));
    fs.mkdirSync(path.join(root, 'cli', 'plan'), { recursive: true });
    fs.mkdirSync(path.join(root, 'alerts'));
    const bad = path.join(root, 'validation', 'bad.ts');
    fs.writeFileSync(bad, [
      "import { x } from '../constructs/node-agent-daemon-set';",
      "export { y } from '../render/daemon-set';",
      "const z = require('../agent/agent-spec');",
      "import { u } from '../util/shell';",
      "import { v } from '../index';",
    ].join('\n'));
    const tool = path.join(root, 'cli', 'plan', 'tool.ts');
    fs.writeFileSync(tool, "import { a } from '../../agent/agent-spec';\nimport { b } from '../coverage/manifests';\nimport { c } from '../../rollout/pace';\n");
    const library = path.join(root, 'alerts', 'lib.ts');
    fs.writeFileSync(library, "import { d } from '../cli/doctor/diagnose';\nimport { e } from '../cli/args';\n");
    expect(upwardImports([bad, tool, library], root).map((w) => w.replace(/^.*imports /, ''))).toEqual([
      'constructs/ (library wing)', 'render/ (library wing)', 'agent/ (library wing)', "src/'s index",
      'agent/ (library wing)', 'cli/doctor/ (tools wing)', 'cli/ (tools wing)',
    ]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('render/ reads the resolved spec: no props type, no .props', () => {
  const found: string[] = [];
  for (const file of files.filter((f) => folderOf(f) === 'render')) {
    for (const imported of importsOf(file)) {
      for (const name of imported.names) {
        if (/Props$|^AgentContainerSettings$|^AgentPodOptions$/.test(name)) found.push(`${path.basename(file)} imports ${name}`);
      }
    }
    if (/\.props\b/.test(fs.readFileSync(file, 'utf8'))) found.push(`${path.basename(file)} reads .props`);
  }
  expect(found).toEqual([]);
});

/** The folders that build constructs or read their tree; every other folder is pure logic on plain data. */
const CDK8S_FOLDERS = ['validation', 'agent', 'render', 'gpu', 'constructs'];

/** The imports of cdk8s, cdk8s-plus or constructs in the given files, as `file imports package`. */
function cdk8sImports(checked: string[], root = SRC): string[] {
  return checked.flatMap((file) => importsOf(file)
    .filter((i) => /^(cdk8s|cdk8s-plus-\d+|constructs)(\/|$)/.test(i.from))
    .map((i) => `${path.relative(root, file)} imports ${i.from}`));
}

test('the pure-logic folders (waves, rollout, fluent-bit, alerts, the tools...) import no cdk8s', () => {
  const pure = files.filter((f) => { const folder = folderOf(f); return folder !== undefined && !CDK8S_FOLDERS.includes(folder); });
  expect(pure.map((f) => folderOf(f))).toEqual(expect.arrayContaining(['waves', 'rollout', 'cli/coverage', 'cli/plan', 'cli/estimate', 'fluent-bit', 'alerts', 'cli']));
  expect(cdk8sImports(pure)).toEqual([]);
  // the check itself sees each package's import
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layout-'));
  try {
    const bad = path.join(root, 'bad.ts');
    fs.writeFileSync(bad, "import * as a from 'cdk8s';\nimport * as b from 'cdk8s-plus-28';\nimport { IConstruct } from 'constructs';\nimport * as c from 'cdk8s-foo';\n");
    expect(cdk8sImports([bad], root)).toEqual(['bad.ts imports cdk8s', 'bad.ts imports cdk8s-plus-28', 'bad.ts imports constructs']);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

/** The modules of lib/ that node loads for `require(entry)`, relative to lib/, in a process of their own. */
function modulesLoadedBy(entry: string): string[] {
  const lib = path.join(REPO, 'lib');
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'layout-load-')), 'loaded.json');
  const script = [
    `process.argv = [process.argv[0], ${JSON.stringify(entry)}, '--help'];`,
    `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(out)}, JSON.stringify(Object.keys(require.cache))));`,
    `require(${JSON.stringify(path.join(lib, entry))});`,
  ].join('\n');
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  expect(r.error).toBeUndefined();
  const loaded: string[] = JSON.parse(fs.readFileSync(out, 'utf8'));
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  return loaded.filter((f) => f.startsWith(lib + path.sep)).map((f) => path.relative(lib, f));
}

/** The wing of a module of lib/ (or of a source file relative to src/). */
function wingOfModule(relative: string): string | undefined {
  const folder = folderOf(path.join(SRC, relative));
  return folder === undefined ? 'entry' : wingOf(folder);
}

describe('each product loads only its own wing and the floors', () => {
  test('require("cdk8s-node-agents") (lib/index.js) loads no module of the tools', () => {
    const loaded = modulesLoadedBy('index.js');
    expect(loaded).toContain(path.join('constructs', 'node-agent-daemon-set.js'));
    expect(loaded.filter((m) => wingOfModule(m) === 'tools')).toEqual([]);
  });

  test('the node-agents executable (lib/cli/main.js) loads no module of the library', () => {
    const loaded = modulesLoadedBy(path.join('cli', 'main.js'));
    expect(loaded).toContain(path.join('cli', 'doctor', 'diagnose.js'));
    expect(loaded.filter((m) => wingOfModule(m) === 'library' || m === 'index.js')).toEqual([]);
  });
});
