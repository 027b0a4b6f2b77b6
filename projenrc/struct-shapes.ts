/**
 * Writes src/validation/struct-shapes.generated.ts from the jsii assembly (.jsii), the complete
 * description of every public type that jsii writes at compile time. The runtime type checks
 * (src/validation/struct-check.ts) read that file, so a prop added to a props interface is type-checked,
 * and its misspellings refused, with no second edit.
 *
 * Run by the compile task after jsii. When the file changed, jsii runs once more so lib/ holds the
 * new shapes; a build that rewrites the checked-in file fails CI (a tracked file changed), so a
 * stale file cannot ship. test/lib/struct-shapes.test.ts checks the same from the test side.
 *
 * Usage: ts-node projenrc/struct-shapes.ts [--check]   (--check: exit 1 when the file is stale, write nothing)
 */
import { execSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..');
export const GENERATED = path.join(ROOT, 'src', 'validation', 'struct-shapes.generated.ts');

/** The JSON subset of a jsii assembly this generator reads (see @jsii/spec). */
interface JsiiTypeRef {
  readonly primitive?: string;
  readonly fqn?: string;
  readonly collection?: { readonly kind: 'array' | 'map'; readonly elementtype: JsiiTypeRef };
  readonly union?: { readonly types: JsiiTypeRef[] };
  readonly intersection?: { readonly types: JsiiTypeRef[] };
}
interface JsiiParam {
  readonly name: string;
  readonly type: JsiiTypeRef;
  readonly optional?: boolean;
  readonly variadic?: boolean;
}
interface JsiiProperty { readonly name: string; readonly type: JsiiTypeRef; readonly optional?: boolean; readonly static?: boolean }
interface JsiiMethod {
  readonly name: string;
  readonly static?: boolean;
  readonly parameters?: JsiiParam[];
  readonly returns?: { readonly type: JsiiTypeRef };
}
interface JsiiType {
  readonly fqn: string;
  readonly name: string;
  readonly kind: 'class' | 'interface' | 'enum';
  readonly datatype?: boolean;
  readonly abstract?: boolean;
  readonly namespace?: string;
  readonly interfaces?: string[];
  readonly base?: string;
  readonly properties?: JsiiProperty[];
  readonly methods?: JsiiMethod[];
  readonly initializer?: { readonly parameters?: JsiiParam[] };
  readonly members?: { readonly name: string }[];
  readonly docs?: { readonly stability?: string };
  readonly locationInModule?: { readonly filename: string };
}
interface Assembly { readonly name: string; readonly types?: { [fqn: string]: JsiiType } }

function readAssembly(file: string): Assembly {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as Assembly;
}

/** Every type of the package's assembly and of its dependencies' assemblies, by fqn. */
function loadTypes(own: Assembly): Map<string, JsiiType> {
  const types = new Map<string, JsiiType>();
  const deps = ['cdk8s', 'cdk8s-plus-28', 'constructs'];
  for (const dep of deps) {
    const file = require.resolve(`${dep}/.jsii`, { paths: [ROOT] });
    for (const t of Object.values(readAssembly(file).types ?? {})) types.set(t.fqn, t);
  }
  for (const t of Object.values(own.types ?? {})) types.set(t.fqn, t);
  return types;
}

/**
 * An enum's values as literals: the package's own from the compiled package (lib/, which jsii has
 * just written: the assembly holds member names, not values), a dependency's from the dependency.
 * The table holds data only, so the checks below the agents never load the modules that use them.
 */
function enumValues(t: JsiiType, own: string): unknown[] {
  const [assembly, ...rest] = t.fqn.split('.');
  const module = assembly === own ? path.join(ROOT, 'lib', 'index.js') : require.resolve(assembly, { paths: [ROOT] });
  if (assembly === own && !fs.existsSync(module)) throw new Error('struct-shapes: lib/index.js is missing: run jsii first (npx projen compile)');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const values = rest.reduce((o: any, name) => o?.[name], require(module));
  if (values === undefined) throw new Error(`struct-shapes: ${t.fqn} is not exported by ${assembly}`);
  // by member (a numeric enum's object also maps its values back to its names)
  return (t.members ?? []).map((m) => (values as { [member: string]: unknown })[m.name]);
}

/** The short name the generated table uses: the package's own types without its prefix. */
function key(fqn: string, own: string): string {
  return fqn.startsWith(`${own}.`) ? fqn.substring(own.length + 1) : fqn;
}

/**
 * Generates the shapes module's text. Pure: the assembly in, the file's text out (the test
 * compares it with the checked-in file).
 */
export function generate(ownFile = path.join(ROOT, '.jsii')): string {
  const own = readAssembly(ownFile);
  const types = loadTypes(own);
  const ownName = own.name;
  const reached = new Set<string>();
  const queue: string[] = [];
  const reach = (fqn: string): void => {
    if (!reached.has(fqn)) {
      reached.add(fqn);
      queue.push(fqn);
    }
  };

  const ref = (t: JsiiTypeRef): string => {
    if (t.primitive) return JSON.stringify(t.primitive);
    if (t.collection) return `{ ${t.collection.kind}: ${ref(t.collection.elementtype)} }`;
    if (t.union) return `{ union: [${t.union.types.map(ref).join(', ')}] }`;
    if (t.intersection) return '"any"';
    if (t.fqn) {
      reach(t.fqn);
      return `{ ref: ${JSON.stringify(key(t.fqn, ownName))} }`;
    }
    throw new Error(`struct-shapes: unknown type reference ${JSON.stringify(t)}`);
  };
  const params = (ps: JsiiParam[] | undefined): string =>
    `[${(ps ?? []).map((p) => `{ name: ${JSON.stringify(p.name)}, type: ${ref(p.type)}${p.optional ? ', optional: true' : ''}${p.variadic ? ', variadic: true' : ''} }`).join(', ')}]`;

  // Every public type of the package, and every type they reach in the dependencies.
  for (const t of Object.values(own.types ?? {})) reach(t.fqn);
  const methods: string[] = [];
  const structs: string[] = [];
  const enums: string[] = [];
  const classes: string[] = [];
  const interfaces: string[] = [];

  while (queue.length > 0) {
    const fqn = queue.shift()!;
    const t = types.get(fqn);
    const name = JSON.stringify(key(fqn, ownName));
    if (!t) throw new Error(`struct-shapes: ${fqn} is in no assembly read`);
    const isOwn = fqn.startsWith(`${ownName}.`);
    if (t.kind === 'interface' && t.datatype) {
      const fields = [...(t.properties ?? [])].sort((a, b) => a.name.localeCompare(b.name))
        .map((p) => `    ${p.name}: { type: ${ref(p.type)}${p.optional ? ', optional: true' : ''} },`);
      for (const b of t.interfaces ?? []) reach(b);
      const bases = (t.interfaces ?? []).map((b) => JSON.stringify(key(b, ownName)));
      structs.push(`  ${name}: {\n    bases: [${bases.join(', ')}],\n    fields: {\n${fields.map((f) => `  ${f}`).join('\n')}\n    },\n  },`);
    } else if (t.kind === 'interface') {
      for (const b of t.interfaces ?? []) reach(b);
      const own_ = [...(t.methods ?? []).map((m) => m.name), ...(t.properties ?? []).filter((p) => !p.optional).map((p) => p.name)].sort();
      const bases = (t.interfaces ?? []).map((b) => JSON.stringify(key(b, ownName)));
      interfaces.push(`  ${name}: { bases: [${bases.join(', ')}], members: [${own_.map((m) => JSON.stringify(m)).join(', ')}] },`);
    } else if (t.kind === 'enum') {
      const members = (t.members ?? []).map((m) => JSON.stringify(m.name));
      const values = enumValues(t, ownName).map((v) => JSON.stringify(v));
      enums.push(`  ${name}: { members: [${members.join(', ')}], values: [${values.join(', ')}] },`);
    } else {
      // Factories: the static methods of the class's assembly that return it, the class's own first.
      const factories: string[] = [];
      const assembly = fqn.split('.')[0];
      const owners = [t, ...[...types.values()].filter((c) => c !== t && c.kind === 'class' && c.fqn.split('.')[0] === assembly)
        .sort((a, b) => a.fqn.localeCompare(b.fqn))];
      for (const c of owners) {
        for (const m of c.methods ?? []) {
          if (m.static && m.returns?.type.fqn === fqn) factories.push(`${assembly === 'cdk8s-plus-28' ? 'kplus.' : ''}${c.name}.${m.name}()`);
        }
      }
      const newable = t.initializer !== undefined && !t.abstract;
      classes.push(`  ${name}: { fqn: ${JSON.stringify(fqn)}, factories: [${factories.map((f) => JSON.stringify(f)).join(', ')}]${newable ? ', newable: true' : ''} },`);
      if (isOwn) {
        if (t.initializer) methods.push(`  ${JSON.stringify(`${t.name}.constructor`)}: ${params(t.initializer.parameters)},`);
        for (const m of t.methods ?? []) {
          methods.push(`  ${JSON.stringify(`${t.name}.${m.name}`)}: ${params(m.parameters)},`);
        }
      }
    }
  }

  const byName = (a: string, b: string): number => a.localeCompare(b);
  return [
    '// ~~ Generated by projenrc/struct-shapes.ts from the jsii assembly (.jsii). Do not edit: `npx projen compile` rewrites it.',
    '// The runtime type checks of every public struct, class, enum and method parameter (see ./struct-check).',
    '/* eslint-disable */',
    'import type { TypeTable } from \'./type-table\';',
    '',
    'export const TYPES: TypeTable = {',
    '  structs: {',
    ...structs.sort(byName).map((s) => s.replace(/^/gm, '  ')),
    '  },',
    '  enums: {',
    ...enums.sort(byName).map((s) => `  ${s}`),
    '  },',
    '  classes: {',
    ...classes.sort(byName).map((s) => `  ${s}`),
    '  },',
    '  interfaces: {',
    ...interfaces.sort(byName).map((s) => `  ${s}`),
    '  },',
    '  methods: {',
    ...methods.sort(byName).map((s) => `  ${s}`),
    '  },',
    '};',
    '',
  ].join('\n');
}

function main(): void {
  const check = process.argv.includes('--check');
  const text = generate();
  const before = fs.existsSync(GENERATED) ? fs.readFileSync(GENERATED, 'utf8') : '';
  if (text === before) return;
  if (check) {
    console.error(`${path.relative(ROOT, GENERATED)} is stale: run \`npx projen compile\` and commit it.`);
    process.exit(1);
  }
  fs.writeFileSync(GENERATED, text);
  console.error(`struct-shapes: rewrote ${path.relative(ROOT, GENERATED)} from .jsii; compiling once more so lib/ has it (commit the file).`);
  // the same jsii as the compile task: the reserved-word warnings stay visible (test/project/reserved-words.test.ts)
  execSync('jsii', { cwd: ROOT, stdio: 'inherit' });
}

if (require.main === module) main();
