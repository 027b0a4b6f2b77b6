/**
 * Custom resources checked against the upstream CRDs' OpenAPI v3 schemas the way the API server
 * checks them (k8s.io/apiextensions-apiserver: structural schemas, pkg/apiserver/schema/pruning
 * and the strict field validation `kubectl apply` and server-side apply report):
 * - a field the schema does not declare is an error, unless the object has
 *   `x-kubernetes-preserve-unknown-fields: true` or an `additionalProperties` schema; an object
 *   schema with neither `properties` nor `additionalProperties` takes no fields;
 * - `x-kubernetes-embedded-resource` objects also take `apiVersion`, `kind` and `metadata`;
 * - `x-kubernetes-int-or-string`: an integer or a string;
 * - `null` only where `nullable: true`;
 * - `type`, `required`, `enum`, `pattern` (Go RE2, unanchored; a leading `(?i)` is the i flag),
 *   `minLength`/`maxLength` (in characters), `minimum`/`maximum`, `format` int32/int64 bounds,
 *   `items`, `anyOf`. These, with `properties`, `additionalProperties` and the x-kubernetes
 *   extensions, are every keyword the five CRDs use (a test checks the list).
 * - the root `metadata` is ObjectMeta, which the API server validates itself (the shared manifest
 *   check's metadata rules cover it), so its schema is not applied.
 *
 * A direct walk over schema and object (no compiled validator): the ApplicationSet CRD is 23,000
 * lines, with the Application template repeated under every generator kind, and compiling it with a
 * JSON Schema compiler took 26 s, once per test file.
 *
 * The schemas are Argo CD 3.6's and kube-prometheus' CRDs as test/upstream/ keeps them (each served
 * version's structural schema, description text dropped; test/upstream/README.md names the commits).
 */
import { upstream } from './upstream';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Schema = any;

/** The CRD files, by the apiVersion/kind of the objects they define. */
export const CRD_FILES: Record<string, string> = {
  'argoproj.io/v1alpha1/Application': 'argo-cd/application-crd.json',
  'argoproj.io/v1alpha1/ApplicationSet': 'argo-cd/applicationset-crd.json',
  'monitoring.coreos.com/v1/PrometheusRule': 'prometheus-operator/prometheusrule-crd.json',
  'monitoring.coreos.com/v1/ServiceMonitor': 'prometheus-operator/servicemonitor-crd.json',
  'monitoring.coreos.com/v1/PodMonitor': 'prometheus-operator/podmonitor-crd.json',
};

/** The schema keywords the walk implements; any other keyword in a CRD fails loudly. */
export const KEYWORDS = new Set([
  'type', 'properties', 'additionalProperties', 'items', 'required', 'enum', 'pattern', 'format', 'minLength', 'maxLength',
  'minimum', 'maximum', 'anyOf', 'nullable', 'default',
  'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-int-or-string', 'x-kubernetes-embedded-resource',
  // Merge strategies of server-side apply; they do not validate.
  'x-kubernetes-map-type', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys',
]);

const INT32 = 2 ** 31;
const schemas = new Map<string, Schema>();
const patterns = new Map<string, RegExp>();

/** The served version's openAPIV3Schema of the CRD defining `apiVersion/kind`. */
export function crdSchema(key: string): Schema | undefined {
  const file = CRD_FILES[key];
  if (!file) return undefined;
  if (!schemas.has(key)) {
    const version = key.split('/').slice(-2)[0];
    const crd = upstream(file);
    const served = crd?.spec.versions.find((v: Schema) => v.name === version && v.served);
    if (!served) throw new Error(`${file} serves no version ${version}`);
    schemas.set(key, served.schema.openAPIV3Schema);
  }
  return schemas.get(key);
}

/** Go RE2 as a JS RegExp: a `(?i)` at the start (after `^`) becomes the i flag (the only inline flag the CRDs use). */
function goRegExp(pattern: string): RegExp {
  let re = patterns.get(pattern);
  if (!re) {
    const caseless = /^(\^?)\(\?i\)/.exec(pattern);
    re = caseless ? new RegExp(caseless[1] + pattern.slice(caseless[0].length), 'iu') : new RegExp(pattern, 'u');
    patterns.set(pattern, re);
  }
  return re;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function typeOk(type: string | undefined, v: unknown): boolean {
  switch (type) {
    case undefined: return true;
    case 'object': return isObject(v);
    case 'array': return Array.isArray(v);
    case 'string': return typeof v === 'string';
    case 'integer': return typeof v === 'number' && Number.isInteger(v);
    case 'number': return typeof v === 'number' && Number.isFinite(v);
    case 'boolean': return typeof v === 'boolean';
    default: throw new Error(`schema type "${type}" is not implemented`);
  }
}

/** The problems of `value` against `schema`, each as "<path>: <what>". */
export function schemaProblems(schema: Schema, value: unknown, at = '', root = true): string[] {
  for (const k of Object.keys(schema)) if (!KEYWORDS.has(k)) throw new Error(`${at || '<root>'}: schema keyword "${k}" is not implemented`);
  const where = at || '<root>';
  if (value === null) return schema.nullable === true ? [] : [`${where}: must not be null`];
  if (schema['x-kubernetes-int-or-string'] === true) {
    if (!(typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)))) return [`${where}: must be an integer or a string`];
  } else if (!typeOk(schema.type, value)) {
    return [`${where}: must be ${schema.type}, got ${Array.isArray(value) ? 'array' : typeof value}`];
  }
  const problems: string[] = [];
  if (schema.anyOf && !(schema.anyOf as Schema[]).some((s) => schemaProblems(s, value, at, false).length === 0)) {
    problems.push(`${where}: matches none of ${JSON.stringify(schema.anyOf)}`);
  }
  if (schema.enum && !(schema.enum as unknown[]).includes(value)) problems.push(`${where}: ${JSON.stringify(value)} is not one of ${(schema.enum as unknown[]).join(', ')}`);
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) problems.push(`${where}: shorter than ${schema.minLength}`);
    if (schema.maxLength !== undefined && length > schema.maxLength) problems.push(`${where}: longer than ${schema.maxLength}`);
    if (schema.pattern !== undefined && !goRegExp(schema.pattern).test(value)) problems.push(`${where}: ${JSON.stringify(value)} does not match ${schema.pattern}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) problems.push(`${where}: below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) problems.push(`${where}: above ${schema.maximum}`);
    if (schema.format === 'int32' && (value < -INT32 || value >= INT32)) problems.push(`${where}: not an int32`);
    if (schema.format === 'int64' && !Number.isSafeInteger(value)) problems.push(`${where}: not an int64`);
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, i) => problems.push(...schemaProblems(schema.items, item, `${at}/${i}`, false)));
  }
  if (isObject(value)) {
    for (const name of schema.required ?? []) if (!(name in value)) problems.push(`${where}: required field "${name}" is missing`);
  }
  if (isObject(value) && (schema.type === 'object' || schema.properties)) {
    const properties: Record<string, Schema> = { ...(schema.properties ?? {}) };
    if (schema['x-kubernetes-embedded-resource'] === true) {
      properties.apiVersion ??= { type: 'string' };
      properties.kind ??= { type: 'string' };
      properties.metadata ??= { 'type': 'object', 'x-kubernetes-preserve-unknown-fields': true };
    }
    for (const [name, v] of Object.entries(value)) {
      const sub = properties[name];
      if (root && name === 'metadata') continue;
      if (sub) problems.push(...schemaProblems(sub, v, `${at}/${name}`, false));
      else if (isObject(schema.additionalProperties)) problems.push(...schemaProblems(schema.additionalProperties, v, `${at}/${name}`, false));
      else if (schema['x-kubernetes-preserve-unknown-fields'] !== true && schema.additionalProperties !== true) problems.push(`${where}: unknown field "${name}"`);
    }
  }
  return problems;
}

/** Is the kind one of the custom resources checked against an upstream CRD? */
export function hasCrdSchema(apiVersion: string, kind: string): boolean {
  return `${apiVersion}/${kind}` in CRD_FILES;
}

/** The API server's complaints about a custom resource, one line each ([] when it is valid). */
export function crdProblems(manifest: Schema): string[] {
  const schema = crdSchema(`${manifest.apiVersion}/${manifest.kind}`);
  if (!schema) return [`no CRD known for ${manifest.apiVersion}/${manifest.kind}`];
  return schemaProblems(schema, manifest);
}
