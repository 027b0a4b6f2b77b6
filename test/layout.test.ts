/**
 * The layout of src/ as the README's Development section draws it: each folder sits on a floor and
 * imports only from folders on the floors below it (constructs → render → agent → validation → util),
 * and render/ renders the resolved spec, never the props as the user wrote them.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import * as ts from 'typescript';

const SRC = path.join(__dirname, '..', 'src');

/** Each folder of src/ and its floor: a folder may import only from folders on a lower floor. */
const FLOORS: Record<string, number> = {
  'util': 0,
  'validation': 1,
  'scheduling': 2,
  'adoption': 2,
  'fleet': 2,
  'fluent-bit': 2,
  'node-exporter': 2,
  'alerts': 3,
  'waves': 3,
  'agent': 4,
  'coverage': 4,
  'render': 5,
  'gpu': 5,
  'estimate': 5,
  'plan': 6,
  'capacity': 6,
  'constructs': 8,
  'doctor': 7,
  'cli': 8,
};

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

/** The folder of src/ a path lies in, or undefined for src/'s own files (the index). */
function folderOf(file: string, root = SRC): string | undefined {
  const parts = path.relative(root, file).split(path.sep);
  return parts.length > 1 ? parts[0] : undefined;
}

/** Every import between two folders of src/ that does not point down. */
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
      } else if (to !== undefined && to !== from && !(FLOORS[to] < FLOORS[from])) {
        wrong.push(`${path.relative(root, file)} (floor ${FLOORS[from]}) imports ${to}/ (floor ${FLOORS[to]})`);
      }
    }
  }
  return wrong;
}

const files = sourceFiles(SRC);

test('every folder of src/ has a floor', () => {
  const folders = fs.readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
  expect(folders.filter((f) => FLOORS[f] === undefined)).toEqual([]);
  expect(Object.keys(FLOORS).filter((f) => !folders.includes(f))).toEqual([]);
});

test('folders import only from the floors below them', () => {
  expect(upwardImports(files)).toEqual([]);
});

test('the check sees an import that climbs, a require() and a re-export', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layout-'));
  try {
    fs.mkdirSync(path.join(root, 'validation'));
    const bad = path.join(root, 'validation', 'bad.ts');
    fs.writeFileSync(bad, [
      "import { x } from '../constructs/node-agent-daemon-set';",
      "export { y } from '../render/daemon-set';",
      "const z = require('../agent/agent-spec');",
      "import { u } from '../util/shell';",
      "import { v } from '../index';",
    ].join('\n'));
    expect(upwardImports([bad], root).map((w) => w.replace(/^.*imports /, ''))).toEqual([
      'constructs/ (floor 8)', 'render/ (floor 5)', 'agent/ (floor 4)', "src/'s index",
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

test('the pure-logic folders (waves, coverage, plan, estimate, fluent-bit, alerts...) import no cdk8s', () => {
  const pure = files.filter((f) => { const folder = folderOf(f); return folder !== undefined && !CDK8S_FOLDERS.includes(folder); });
  expect(pure.map((f) => folderOf(f))).toEqual(expect.arrayContaining(['waves', 'coverage', 'plan', 'estimate', 'fluent-bit', 'alerts', 'cli']));
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
