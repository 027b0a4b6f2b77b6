/**
 * Type checks for props that did not come through the TypeScript compiler: JavaScript callers, and
 * props built from parsed YAML or JSON. Each props interface has a small declarative shape; a
 * construct checks its props against it on entry, so a wrong type gets the same clear error as a
 * wrong value ("prop resources.cpuRequest must be a string such as \"100m\", got number 1") instead
 * of a TypeError deep inside. Value checks (ranges, formats) stay in ./checks. Pure: no cdk8s.
 */
import { describeValue, throwIfProblems } from './checks';

/** Checks one map key; returns problems naming `prop`. */
export type KeyCheck = (prop: string, key: string) => string[];

/** A class, whatever its constructor's visibility. */
type ClassRef = { readonly prototype: object };

/** The expected type of one prop. */
export type PropShape =
  | { readonly type: 'string'; readonly example: string; readonly required?: boolean }
  | { readonly type: 'number'; readonly required?: boolean }
  | { readonly type: 'boolean'; readonly required?: boolean }
  | { readonly type: 'array'; readonly items: PropShape; readonly required?: boolean }
  | { readonly type: 'map'; readonly values: PropShape; readonly keys?: KeyCheck; readonly required?: boolean }
  | { readonly type: 'object'; readonly fields: PropFields; readonly required?: boolean }
  // A thunk, so shapes can name classes of modules that import this one (classes with private constructors too).
  | { readonly type: 'instance'; readonly of: () => ClassRef; readonly hint: string; readonly required?: boolean }
  | { readonly type: 'enum'; readonly values: () => readonly string[]; readonly hint: string; readonly required?: boolean }
  | { readonly type: 'any'; readonly required?: boolean };

/** The fields of an object shape, by prop name. */
export type PropFields = { readonly [field: string]: PropShape };

/** Builders for shapes: `object({ image: required(string('registry/name:1.2.3')), ports: array(...) })`. */
export const shape = {
  string: (example: string): PropShape => ({ type: 'string', example }),
  number: (): PropShape => ({ type: 'number' }),
  boolean: (): PropShape => ({ type: 'boolean' }),
  array: (items: PropShape): PropShape => ({ type: 'array', items }),
  map: (values: PropShape, keys?: KeyCheck): PropShape => ({ type: 'map', values, keys }),
  object: (fields: PropFields): PropShape => ({ type: 'object', fields }),
  instance: (of: () => ClassRef, hint: string): PropShape => ({ type: 'instance', of, hint }),
  enumOf: (values: () => readonly string[], hint: string): PropShape => ({ type: 'enum', values, hint }),
  any: (): PropShape => ({ type: 'any' }),
  required: (s: PropShape): PropShape => ({ ...s, required: true }),
};

/**
 * When `value` is the same class from another major of a jsii library (cdk8s-plus-33's EnvValue for
 * cdk8s-plus-28's), says so: jsii classes carry their fully qualified name under Symbol.for('jsii.rtti').
 */
function otherMajor(value: unknown, expected: ObjectConstructor): string | undefined {
  const rtti = (c: unknown): string | undefined => {
    const info = c === undefined || c === null ? undefined : (c as { [k: symbol]: { fqn?: unknown } })[Symbol.for('jsii.rtti')];
    return typeof info?.fqn === 'string' ? info.fqn : undefined;
  };
  const want = rtti(expected);
  const got = typeof value === 'object' && value !== null ? rtti((value as object).constructor) : undefined;
  if (want === undefined || got === undefined || got === want) return undefined;
  const [wantLib, ...wantName] = want.split('.');
  const [gotLib, ...gotName] = got.split('.');
  const family = (lib: string) => lib.replace(/-\d+$/, '');
  if (family(wantLib) !== family(gotLib) || gotName.join('.') !== wantName.join('.')) return undefined;
  return `was made with ${gotLib}; this library takes ${wantLib} objects: import ${wantName.join('.')} from '${wantLib}' `
    + `(install ${wantLib} beside ${gotLib}; objects of one major are not objects of the other)`;
}

function isPlainObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every type problem of `value` against `s`, each starting with "prop <path>". */
export function checkShape(path: string, value: unknown, s: PropShape): string[] {
  const prop = `prop ${path}`;
  if (value === undefined) return [];
  switch (s.type) {
    case 'any':
      return [];
    case 'string':
      return typeof value === 'string' ? [] : [`${prop} must be a string such as ${JSON.stringify(s.example)}, got ${describeValue(value)}`];
    case 'number':
      return typeof value === 'number' ? [] : [`${prop} must be a number, got ${describeValue(value)}`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${prop} must be true or false, got ${describeValue(value)}`];
    case 'enum': {
      const values = s.values();
      return typeof value === 'string' && values.includes(value)
        ? []
        : [`${prop} must be one of ${s.hint} (${values.map((v) => JSON.stringify(v)).join(', ')}), got ${describeValue(value)}`];
    }
    case 'instance': {
      const expected = s.of() as unknown as ObjectConstructor;
      if (value instanceof expected) return [];
      const other = otherMajor(value, expected);
      return [other ?? `${prop} must be made with ${s.hint}, got ${describeValue(value)}`].map((m) => (other ? `${prop} ${m}` : m));
    }
    case 'array':
      if (!Array.isArray(value)) return [`${prop} must be an array, got ${describeValue(value)}`];
      return value.flatMap((item, i) => (item === undefined
        ? [`${prop}[${i}] must not be undefined`]
        : checkShape(`${path}[${i}]`, item, s.items)));
    case 'map':
      if (!isPlainObject(value)) return [`${prop} must be an object mapping names to values, got ${describeValue(value)}`];
      return Object.keys(value).flatMap((key) => [
        ...(s.keys ? s.keys(`${path}`, key).map((p) => `prop ${p}`) : []),
        ...(value[key] === undefined ? [`${prop}[${JSON.stringify(key)}] must not be undefined`] : checkShape(`${path}[${JSON.stringify(key)}]`, value[key], s.values)),
      ]);
    case 'object':
      if (!isPlainObject(value)) return [`${prop} must be an object, got ${describeValue(value)}`];
      return checkFields(path, value, s.fields);
  }
}

/** Every type problem of an object's fields, by their declared shapes (undeclared fields are left alone). */
export function checkFields(path: string, value: { [key: string]: unknown }, fields: PropFields): string[] {
  const problems: string[] = [];
  for (const field of Object.keys(fields)) {
    const fieldShape = fields[field];
    const fieldPath = path ? `${path}.${field}` : field;
    const fieldValue = Object.prototype.hasOwnProperty.call(value, field) ? value[field] : undefined;
    if (fieldValue === undefined) {
      if (fieldShape.required) problems.push(`prop ${fieldPath} is required${fieldShape.type === 'string' ? `, e.g. ${JSON.stringify(fieldShape.example)}` : ''}`);
      continue;
    }
    problems.push(...checkShape(fieldPath, fieldValue, fieldShape));
  }
  return problems;
}

/**
 * Checks a construct's props against their shape; throws one Error starting with `where` (the
 * construct kind and path) that lists every problem.
 */
export function assertPropTypes(where: string, props: unknown, fields: PropFields): void {
  const problems = isPlainObject(props)
    ? checkFields('', props, fields)
    : [`props must be an object, got ${describeValue(props)}`];
  throwIfProblems(where, problems);
}


