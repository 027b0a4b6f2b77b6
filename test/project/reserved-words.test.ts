/**
 * jsii warns (JSII5018, kept visible: the compile task no longer passes --silence-warnings=reserved-word) when a
 * public name is a reserved word in one of the binding languages. Each such name in the assembly is public API
 * kept on purpose, listed here with what each binding makes of it; a new one fails this test until it is renamed
 * or listed with its reason (docs/bindings.md).
 */
import * as fs from 'fs';
import * as path from 'path';
import { REPO } from '../util/paths';

/** jsii's own rule (the one behind JSII5018): the languages `name` is reserved in, if any. */
// the module is not in jsii's package exports: load it by its file, beside jsii's main module
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { isReservedName } = require(path.join(path.dirname(require.resolve('jsii')), 'reserved-words.js')) as {
  isReservedName(name: string): string[] | undefined;
};

/** The reserved names the public API keeps: the languages jsii names, and why the name stays. */
export const RESERVED_NAMES_KEPT: Record<string, { languages: string[]; reason: string }> = {
  namespace: {
    languages: ['C#'],
    reason: "the Kubernetes field every cdk8s API names so (cdk8s's own ApiObjectMetadata.namespace); C# spells the properties Namespace and AgentAdoption.problems's parameter @namespace",
  },
  in: {
    languages: ['C#', 'Python'],
    reason: 'NodeRequirement.in mirrors the node-affinity operator In beside notIn, exists and doesNotExist; Python calls it NodeRequirement.in_(), C# NodeRequirement.In()',
  },
  operator: {
    languages: ['C#'],
    reason: "the Kubernetes field (AgentToleration's and NodeRequirement's operator); C# spells the properties Operator",
  },
  type: {
    languages: ['Go'],
    reason: "the Kubernetes field (UpdateStrategy's and HostPathVolume's type); Go exports them as Type",
  },
  copy: {
    languages: ['Go'],
    reason: "fluent-bit's modify filter operation Copy, beside rename; Go exports struct fields as Copy",
  },
};

interface Named { name: string }
interface Callable extends Named { parameters?: Named[] }
interface JsiiType {
  fqn: string;
  properties?: Named[];
  methods?: Callable[];
  initializer?: { parameters?: Named[] };
}

/** Every public name jsii checks (properties, methods and parameters), with where it is, by name. */
function publicNames(): Map<string, string[]> {
  const assembly = path.join(REPO, '.jsii');
  if (!fs.existsSync(assembly)) throw new Error('.jsii is missing: run `npx projen compile` first (the build does, before the tests)');
  const types = Object.values(JSON.parse(fs.readFileSync(assembly, 'utf8')).types as Record<string, JsiiType>);
  const names = new Map<string, string[]>();
  const add = (name: string, where: string) => names.set(name, [...(names.get(name) ?? []), where]);
  for (const type of types) {
    const short = type.fqn.replace(/^[^.]+\./, '');
    for (const p of type.properties ?? []) add(p.name, `${short}.${p.name}`);
    for (const p of type.initializer?.parameters ?? []) add(p.name, `new ${short}(${p.name})`);
    for (const m of type.methods ?? []) {
      add(m.name, `${short}.${m.name}()`);
      for (const p of m.parameters ?? []) add(p.name, `${short}.${m.name}(${p.name})`);
    }
  }
  return names;
}

function reservedInAssembly(): Map<string, { languages: string[]; where: string[] }> {
  const found = new Map<string, { languages: string[]; where: string[] }>();
  for (const [name, where] of publicNames()) {
    const languages = isReservedName(name);
    if (languages && languages.length > 0) found.set(name, { languages, where });
  }
  return found;
}

test('every public name reserved in a binding language is one kept on purpose, for the languages listed', () => {
  const unlisted = [...reservedInAssembly()]
    .filter(([name, { languages }]) => RESERVED_NAMES_KEPT[name]?.languages.join() !== languages.join())
    .map(([name, { languages, where }]) => `"${name}" (reserved in ${languages.join(', ')}) at ${where.join(', ')}`);
  // a new reserved name: rename it, or list it in RESERVED_NAMES_KEPT with what each binding makes of it
  expect(unlisted).toEqual([]);
});

test('no listed name is stale: each still occurs in the public API', () => {
  const found = reservedInAssembly();
  expect(Object.keys(RESERVED_NAMES_KEPT).filter((name) => !found.has(name))).toEqual([]);
});

test("jsii's rule still flags the listed names (the list means what jsii warns about)", () => {
  for (const [name, { languages }] of Object.entries(RESERVED_NAMES_KEPT)) expect([name, isReservedName(name)]).toEqual([name, languages]);
});
