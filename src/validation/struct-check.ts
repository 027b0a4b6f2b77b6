/**
 * Runtime type checks for props that did not come through the TypeScript compiler: JavaScript
 * callers, and props built from parsed YAML or JSON. The shapes are not written by hand: they are
 * generated from the jsii assembly (./struct-shapes.generated.ts, written by
 * projenrc/struct-shapes.ts at compile time), so every prop of every public struct is checked, and
 * a prop added to a props interface is checked with no second edit.
 *
 * A wrong type gets the same clear error as a wrong value ("prop resources.cpuRequest must be a
 * string, got number 1") instead of a TypeError deep inside, and an unknown key (a typo in a values
 * file) is refused with the nearest known name instead of silently leaving the default in place.
 * Value checks (ranges, formats, cross-field rules) stay hand-written next to their props.
 */
import * as cdk8s from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import * as constructs from 'constructs';
import { hasBrand, isOwnType } from './brand';
import { RefusedBy, throwIfProblems } from './errors';
import { TYPES } from './struct-shapes.generated';
import { FieldType, TypeRef } from './type-table';

import { describeValue } from './values';
import { nearestName } from '../util/nearest';

/** The names of every struct the assembly declares (for tests: each has a check). */
export function structNames(): string[] {
  return Object.keys(TYPES.structs);
}

const fieldCache = new Map<string, { readonly [field: string]: FieldType }>();
/** A struct's fields, its bases' included. */
export function structFields(name: string): { readonly [field: string]: FieldType } {
  const cached = fieldCache.get(name);
  if (cached) return cached;
  const struct = TYPES.structs[name];
  if (!struct) throw new Error(`struct-check: no struct ${name} in the generated shapes; run \`npx projen compile\``);
  const fields: { [field: string]: FieldType } = {};
  for (const base of struct.bases) Object.assign(fields, structFields(base));
  Object.assign(fields, struct.fields);
  fieldCache.set(name, fields);
  return fields;
}

/** The dependencies whose classes props take, by jsii assembly name. */
const DEPENDENCIES: { readonly [assembly: string]: object } = { 'cdk8s': cdk8s, 'cdk8s-plus-28': kplus, 'constructs': constructs };

/** A dependency's class by its fqn ("cdk8s-plus-28.EnvValue"). */
function dependencyClass(fqn: string): ObjectConstructor | undefined {
  const [assembly, ...rest] = fqn.split('.');
  return rest.reduce((o: any, name) => o?.[name], DEPENDENCIES[assembly]) as ObjectConstructor | undefined;
}

/** Whether `value` is an instance of the class with this fqn: the library's own by brand, a dependency's by instanceof. */
function isInstance(value: unknown, fqn: string): boolean {
  if (isOwnType(fqn)) return hasBrand(value, fqn);
  const cls = dependencyClass(fqn);
  return cls !== undefined && value instanceof cls;
}

function interfaceMembers(name: string): string[] {
  const i = TYPES.interfaces[name];
  return i ? [...i.bases.flatMap(interfaceMembers), ...i.members] : [];
}

function isPlainObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The short name a message uses for a type: the package's own types as they are, others without the package. */
function shortName(name: string): string {
  return name.replace(/^cdk8s-plus-28\./, 'kplus.').replace(/^cdk8s\./, '');
}

export { nearestName };

function unknownKeyProblem(path: string, key: string, struct: string, known: readonly string[]): string {
  const prop = path ? `${path}.${key}` : key;
  const near = nearestName(key, known);
  const hint = near !== undefined
    ? `did you mean ${near}?`
    : `the known props are ${[...known].sort().join(', ')}`;
  return `prop ${prop} is not a prop of ${shortName(struct)}; ${hint}`;
}

/** "a, b or c". */
function list(items: readonly string[]): string {
  return items.length > 1 ? `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}` : items[0];
}

/**
 * A struct's shape for messages: its required fields ("{ secretName, key }"), or its first optional ones
 * when none is required ("{ cpuRequest?, memoryLimit?, ... }"), then its name.
 */
function structExample(name: string): string {
  const fields = structFields(name);
  const required = Object.keys(fields).filter((f) => !fields[f].optional);
  const optional = Object.keys(fields).filter((f) => fields[f].optional).map((f) => `${f}?`);
  const shown = required.length > 0 ? required : optional.slice(0, 2);
  const more = required.length === 0 && optional.length > 2 ? ', ...' : '';
  return `an object such as { ${shown.join(', ')}${more} } (${shortName(name)})`;
}

/**
 * A class's factories, each class named once: "UpdateStrategy.steady(), fast() or onDelete()",
 * "AgentEnvValue.fromConfigMap(), fromField() or fromValue()".
 */
function factoryList(factories: readonly string[]): string {
  const owner = (f: string) => f.slice(0, f.lastIndexOf('.', f.length - 3));
  return list(factories.map((f, i) => (i > 0 && owner(f) === owner(factories[i - 1]) ? f.slice(owner(f).length + 1) : f)));
}

/** The argument a message shows: a string in single quotes (as in TypeScript source), a number or boolean as it is. */
function sourceLiteral(value: string | number | boolean): string {
  return typeof value === 'string' ? `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'` : String(value);
}

/**
 * A call that makes the class from `value` when a factory takes one argument of its type
 * ("AgentEnvValue.fromValue('eu-west-1')", "RolloutBudget.count(3)"); undefined when none does.
 */
function factoryExample(factories: readonly string[], value: unknown): string | undefined {
  if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return undefined;
  if (typeof value === 'string' && value.length > 40) return undefined;
  const takes = (f: string): boolean => {
    const params = TYPES.methods[shortToFqnMethod(f)];
    // A dependency's factories are not in the table: its fromValue(value: string) is the one known.
    return params === undefined ? /\.fromValue\(\)$/.test(f) && typeof value === 'string' : params.length === 1 && params[0].type === typeof value;
  };
  const factory = factories.find(takes);
  return factory === undefined ? undefined : `${factory.slice(0, -2)}(${sourceLiteral(value)})`;
}

/** "RolloutBudget.count()" → "RolloutBudget.count", the key of its parameters in the table. */
function shortToFqnMethod(factory: string): string {
  return factory.replace(/\(\)$/, '');
}

/** What a value of this type looks like, for messages; with the bad `value`, an example made from it where one can be. */
function expected(t: TypeRef, value?: unknown): string {
  if (typeof t === 'string') {
    switch (t) {
      case 'string': return 'a string';
      case 'number': return 'a number';
      case 'boolean': return 'true or false';
      case 'date': return 'a Date';
      default: return 'a value';
    }
  }
  if ('array' in t) return `an array of ${expected(t.array).replace(/^an? /, '')}s`;
  if ('map' in t) return 'an object mapping names to values';
  if ('union' in t) return t.union.map((u) => expected(u)).join(' or ');
  const name = t.ref;
  const tt = TYPES;
  if (tt.structs[name]) return structExample(name);
  const e = tt.enums[name];
  if (e) {
    const values = TYPES.enums[name].values.map((v) => JSON.stringify(v));
    if (e.members.length > 10) return `a ${shortName(name)} value such as ${shortName(name)}.${e.members[0]} (${values[0]})`;
    return `one of ${list(e.members.map((m, i) => (i === 0 ? `${shortName(name)}.${m}` : m)))} (${values.join(', ')})`;
  }
  const c = tt.classes[name];
  if (c) return expectedInstance(name, c.factories, c.newable, value);
  return `an object implementing ${shortName(name)} (${interfaceMembers(name).join(', ')})`;
}

/** An instance of a class: made with its factories (with an example call from `value` where one takes it), or constructed. */
function expectedInstance(name: string, factories: readonly string[], newable: boolean | undefined, value: unknown): string {
  const named = `${/^[AEIOU]/.test(shortName(name)) ? 'an' : 'a'} ${shortName(name)}`;
  if (factories.length === 0) return newable ? `${named} (new ${shortName(name)}(...))` : named;
  const example = factoryExample(factories, value);
  return example === undefined
    ? `made with ${factoryList(factories)}`
    : `${named}, e.g. ${example} (made with ${factoryList(factories)})`;
}

/**
 * Every type problem of `value` against `t`, each starting with "prop <path>". `path` is the
 * prop's path ("resources.memoryLimit", "tolerations[0].key").
 */
export function typeProblems(path: string, value: unknown, t: TypeRef): string[] {
  if (value === undefined) return [];
  const prop = `prop ${path}`;
  const wrong = (): string[] => [`${prop} must be ${expected(t, value)}, got ${describeValue(value)}`];
  if (typeof t === 'string') {
    switch (t) {
      case 'string': return typeof value === 'string' ? [] : wrong();
      case 'number': return typeof value === 'number' ? [] : wrong();
      case 'boolean': return typeof value === 'boolean' ? [] : wrong();
      case 'date': return value instanceof Date ? [] : wrong();
      default: return [];
    }
  }
  if ('array' in t) {
    if (!Array.isArray(value)) return [`${prop} must be an array, got ${describeValue(value)}`];
    return value.flatMap((item, i) => (item === undefined
      ? [`${prop}[${i}] must not be undefined`]
      : typeProblems(`${path}[${i}]`, item, t.array)));
  }
  if ('map' in t) {
    if (!isPlainObject(value)) return wrong();
    return Object.keys(value).flatMap((key) => (value[key] === undefined
      ? [`${prop}[${JSON.stringify(key)}] must not be undefined`]
      : typeProblems(`${path}[${JSON.stringify(key)}]`, value[key], t.map)));
  }
  if ('union' in t) {
    return t.union.some((u) => typeProblems(path, value, u).length === 0) ? [] : wrong();
  }
  const tt = TYPES;
  if (tt.structs[t.ref]) {
    if (!isPlainObject(value)) return wrong();
    return structProblems(path, value, t.ref);
  }
  const e = tt.enums[t.ref];
  if (e) {
    const values = TYPES.enums[t.ref].values;
    if (values.includes(value)) return [];
    const near = typeof value === 'string' ? nearestName(value, values.filter((v): v is string => typeof v === 'string')) : undefined;
    return near === undefined ? wrong() : [`${wrong()[0]}; did you mean ${JSON.stringify(near)}?`];
  }
  const c = tt.classes[t.ref];
  if (c) {
    if (isInstance(value, c.fqn)) return [];
    const other = otherMajor(value, c.fqn);
    if (other !== undefined) return [`${prop} ${other}`];
    const kplusClass = isOwnType(c.fqn) ? cdk8sPlusClass(value) : undefined;
    return kplusClass === undefined ? wrong()
      : [`${prop} must be ${expected(t)}, got ${kplusClass}: props take the library's own types, not cdk8s-plus objects (of any major)`];
  }
  // A behavioural interface: an object with its members.
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return wrong();
  const missing = interfaceMembers(t.ref).filter((m) => (value as { [m: string]: unknown })[m] === undefined);
  return missing.length === 0 ? [] : [`${prop} must implement ${shortName(t.ref)}: it has no ${missing.join(', ')}`];
}

/**
 * Every type problem of a struct's value: each field against its type, required fields present,
 * and no key the struct does not declare (with the nearest declared name).
 */
export function structProblems(path: string, value: { [key: string]: unknown }, struct: string): string[] {
  const fields = structFields(struct);
  const known = Object.keys(fields);
  const problems: string[] = [];
  for (const key of Object.keys(value)) {
    if (!Object.prototype.hasOwnProperty.call(fields, key)) problems.push(unknownKeyProblem(path, key, struct, known));
  }
  for (const field of known) {
    const fieldPath = path ? `${path}.${field}` : field;
    const fieldValue = Object.prototype.hasOwnProperty.call(value, field) ? value[field] : undefined;
    if (fieldValue === undefined) {
      if (!fields[field].optional) problems.push(`prop ${fieldPath} is required (${expected(fields[field].type)})`);
      continue;
    }
    problems.push(...typeProblems(fieldPath, fieldValue, fields[field].type));
  }
  return problems;
}

/** The problems of a construct's props (top-level props are named without a prefix). */
export function propsProblems(struct: string, props: unknown): string[] {
  return isPlainObject(props) ? structProblems('', props, struct) : [`props must be an object, got ${describeValue(props)}`];
}

/**
 * Checks a construct's props against their struct; the construct (`by`) refuses them with one error
 * that lists every problem, after `at` when the props are a prop's ("rollout.previous").
 */
export function checkStruct(by: RefusedBy, struct: string, props: unknown, at?: string): void {
  throwIfProblems(by, propsProblems(struct, props), { at });
}

/**
 * The problems of a method's arguments ("FluentBitInput.tail"). A struct parameter's fields are
 * named as they are ("prop paths"), other parameters by their name ("prop clusterWave").
 */
export function argProblems(method: string, args: readonly unknown[]): string[] {
  const params = TYPES.methods[method];
  if (!params) throw new Error(`struct-check: no method ${method} in the generated shapes; run \`npx projen compile\``);
  return params.flatMap((p, i) => {
    const value = args[i];
    if (value === undefined) return p.optional || p.variadic ? [] : [`${p.name} is required (${expected(p.type)})`];
    if (typeof p.type !== 'string' && 'ref' in p.type && TYPES.structs[p.type.ref]) {
      return isPlainObject(value) ? structProblems('', value, p.type.ref) : [`${p.name} must be ${structExample(p.type.ref)}, got ${describeValue(value)}`];
    }
    return typeProblems(p.name, value, p.type).map((m) => m.replace(/^prop /, ''));
  });
}

/**
 * Checks a method's arguments: refused by the factory ("FluentBitFilter.grep: ...") or, for a
 * construct's method, by the construct ("GpuDriverDaemonSet chart/gpu: runbook: ...").
 */
export function checkArgs(method: string, args: readonly unknown[], construct?: constructs.IConstruct): void {
  if (construct === undefined) throwIfProblems(method, argProblems(method, args));
  else throwIfProblems(construct, argProblems(method, args), { at: method.slice(method.lastIndexOf('.') + 1) });
}

/** "cdk8s-plus-33's EnvValue" when `value` is an object of a cdk8s-plus class (by its jsii rtti fqn), of any major. */
function cdk8sPlusClass(value: unknown): string | undefined {
  const ctor = typeof value === 'object' && value !== null ? (value as object).constructor : undefined;
  const fqn = (ctor as { [k: symbol]: { fqn?: unknown } } | undefined)?.[Symbol.for('jsii.rtti')]?.fqn;
  const m = typeof fqn === 'string' ? /^(cdk8s-plus-\d+)\.(.+)$/.exec(fqn) : null;
  return m ? `${m[1]}'s ${m[2]}` : undefined;
}

/**
 * When `value` is the same class from another major of a jsii library (cdk8s-plus-33's EnvValue for
 * cdk8s-plus-28's), says so: jsii classes carry their fully qualified name under Symbol.for('jsii.rtti').
 */
function otherMajor(value: unknown, fqn: string): string | undefined {
  const rtti = (c: unknown): string | undefined => {
    const info = c === undefined || c === null ? undefined : (c as { [k: symbol]: { fqn?: unknown } })[Symbol.for('jsii.rtti')];
    return typeof info?.fqn === 'string' ? info.fqn : undefined;
  };
  const want = isOwnType(fqn) ? undefined : rtti(dependencyClass(fqn));
  const got = typeof value === 'object' && value !== null ? rtti((value as object).constructor) : undefined;
  if (want === undefined || got === undefined || got === want) return undefined;
  const [wantLib, ...wantName] = want.split('.');
  const [gotLib, ...gotName] = got.split('.');
  const family = (lib: string) => lib.replace(/-\d+$/, '');
  if (family(wantLib) !== family(gotLib) || gotName.join('.') !== wantName.join('.')) return undefined;
  return `was made with ${gotLib}; this library takes ${wantLib} objects: import ${wantName.join('.')} from '${wantLib}' `
    + `(install ${wantLib} beside ${gotLib}; objects of one major are not objects of the other)`;
}
