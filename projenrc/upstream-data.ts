/**
 * Writes test/upstream/: what the tests need of the upstream files they check the library against,
 * derived from unmodified copies of those files. The tests read only the derived folder, so a clone of
 * the repository passes them anywhere.
 *
 * - CRDs: each served version's structural schema (types, fields, enums, required, formats, patterns,
 *   defaults, `x-kubernetes-*` markers), without description text; the CRD's group, names and scope.
 * - gpu-operator's driver DaemonSet and ClusterRole: the objects as the operator ships them, as a v1 List
 *   (YAML comments dropped).
 * - the charts' values.yaml: every key and default (comments dropped).
 *
 * Usage: npx projen upstream:data -- <folder of upstream copies> [--check]
 *   The folder holds each source's file under the path the table below names (e.g.
 *   <folder>/argo-cd/application-crd.yaml). --check writes nothing and exits 1 when test/upstream/
 *   differs from what the folder gives. To move to a newer upstream commit: copy the same files from
 *   it, update its row below, run this, and read the diff.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';

const ROOT = path.join(__dirname, '..');
export const DATA_DIR = path.join(ROOT, 'test', 'upstream');

/** One upstream file: where it comes from, and how its derived copy is made. */
export interface UpstreamSource {
  /** The copy's path in the folder given, and (with .json) the derived file's path in test/upstream/. */
  readonly file: string;
  readonly repository: string;
  /** The file's path in its repository. */
  readonly upstreamPath: string;
  readonly commit: string;
  readonly date: string;
  readonly version: string;
  readonly license: string;
  readonly derive: 'crd' | 'objects' | 'values';
}

const ARGO_CD = { repository: 'argoproj/argo-cd', commit: '37ee0097cf85', date: '2026-08-22', version: 'Argo CD 3.6.0', license: 'Apache-2.0' };
const KUBE_PROMETHEUS = { repository: 'prometheus-operator/kube-prometheus', commit: '4d719f1dea88', date: '2026-08-10', version: 'prometheus-operator (kube-prometheus main)', license: 'Apache-2.0' };
const KARPENTER = { repository: 'kubernetes-sigs/karpenter', commit: '226646810', date: '2026-08-20', version: 'Karpenter 1.14.1', license: 'Apache-2.0' };
const GPU_OPERATOR = { repository: 'NVIDIA/gpu-operator', commit: 'a22dbf671f2e', date: '2026-08-21', version: 'gpu-operator main', license: 'Apache-2.0' };

export const SOURCES: UpstreamSource[] = [
  { ...ARGO_CD, file: 'argo-cd/application-crd.yaml', upstreamPath: 'manifests/crds/application-crd.yaml', derive: 'crd' },
  { ...ARGO_CD, file: 'argo-cd/applicationset-crd.yaml', upstreamPath: 'manifests/crds/applicationset-crd.yaml', derive: 'crd' },
  { ...KUBE_PROMETHEUS, file: 'prometheus-operator/prometheusrule-crd.yaml', upstreamPath: 'manifests/setup/0prometheusruleCustomResourceDefinition.yaml', derive: 'crd' },
  { ...KUBE_PROMETHEUS, file: 'prometheus-operator/servicemonitor-crd.yaml', upstreamPath: 'manifests/setup/0servicemonitorCustomResourceDefinition.yaml', derive: 'crd' },
  { ...KUBE_PROMETHEUS, file: 'prometheus-operator/podmonitor-crd.yaml', upstreamPath: 'manifests/setup/0podmonitorCustomResourceDefinition.yaml', derive: 'crd' },
  { ...KARPENTER, file: 'karpenter/karpenter.sh_nodepools.yaml', upstreamPath: 'pkg/apis/crds/karpenter.sh_nodepools.yaml', derive: 'crd' },
  { ...GPU_OPERATOR, file: 'gpu-operator/0500_daemonset.yaml', upstreamPath: 'assets/state-driver/0500_daemonset.yaml', derive: 'objects' },
  { ...GPU_OPERATOR, file: 'gpu-operator/0210_clusterrole.yaml', upstreamPath: 'assets/state-driver/0210_clusterrole.yaml', derive: 'objects' },
  {
    file: 'fluent-bit-chart/values.yaml',
    repository: 'fluent/helm-charts',
    upstreamPath: 'charts/fluent-bit/values.yaml',
    commit: '5b81bf7a5a5d',
    date: '2026-08-18',
    version: 'chart 0.58.1, fluent-bit 5.1.1',
    license: 'Apache-2.0',
    derive: 'values',
  },
  {
    file: 'node-exporter-chart/values.yaml',
    repository: 'prometheus-community/helm-charts',
    upstreamPath: 'charts/prometheus-node-exporter/values.yaml',
    commit: 'cf408a290aec',
    date: '2026-08-22',
    version: 'chart 4.56.1, node_exporter 1.12.1',
    license: 'Apache-2.0',
    derive: 'values',
  },
  {
    file: 'kube-prometheus-stack/values.yaml',
    repository: 'prometheus-community/helm-charts',
    upstreamPath: 'charts/kube-prometheus-stack/values.yaml',
    commit: 'cf408a290aec',
    date: '2026-08-22',
    version: 'chart 88.5.3, its prometheus-node-exporter subchart 4.56.1',
    license: 'Apache-2.0',
    derive: 'values',
  },
];

/** The derived file of a source, relative to test/upstream/. */
export function derivedFile(source: UpstreamSource): string {
  return source.file.replace(/\.yaml$/, '.json');
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** The schema keywords whose values are schemas (or maps or lists of schemas): the walk descends only through them. */
const SCHEMA_MAPS = ['properties', 'patternProperties', 'definitions'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf'];
const SCHEMA_ONE = ['items', 'additionalProperties', 'not', 'additionalItems'];

/** A schema without its description text (a field named `description` is kept: it is a key of `properties`). */
export function structuralSchema(schema: Json): Json {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'description') continue;
    if (SCHEMA_MAPS.includes(key)) out[key] = Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, structuralSchema(v)]));
    else if (SCHEMA_LISTS.includes(key)) out[key] = (value as Json[]).map(structuralSchema);
    else if (SCHEMA_ONE.includes(key)) out[key] = Array.isArray(value) ? value.map(structuralSchema) : structuralSchema(value);
    else out[key] = value;
  }
  return out;
}

function documents(text: string, file: string): Json[] {
  const docs = parseAllDocuments(text);
  for (const d of docs) if (d.errors.length > 0) throw new Error(`${file}: ${d.errors[0].message}`);
  return docs.map((d) => d.toJS()).filter((d) => d !== null && d !== undefined);
}

/** The CRD as the API server uses it to validate: group, names, scope and each version's structural schema. */
function deriveCrd(docs: Json[], file: string): Json {
  const crd = docs.find((d) => d.kind === 'CustomResourceDefinition');
  if (!crd) throw new Error(`${file}: no CustomResourceDefinition`);
  return {
    apiVersion: crd.apiVersion,
    kind: crd.kind,
    metadata: { name: crd.metadata.name },
    spec: {
      group: crd.spec.group,
      names: { kind: crd.spec.names.kind, listKind: crd.spec.names.listKind, plural: crd.spec.names.plural, singular: crd.spec.names.singular },
      scope: crd.spec.scope,
      versions: (crd.spec.versions as Json[]).map((v) => ({
        name: v.name,
        served: v.served,
        storage: v.storage,
        schema: { openAPIV3Schema: structuralSchema(v.schema.openAPIV3Schema) },
      })),
    },
  };
}

/** The derived file's text for one source, from the copy's text. */
export function derive(source: UpstreamSource, text: string): string {
  const docs = documents(text, source.file);
  let data: Json;
  if (source.derive === 'crd') data = deriveCrd(docs, source.file);
  // several objects as one v1 List (kubectl reads it); a List given (a derived file) is kept as it is
  else if (source.derive === 'objects') data = docs.length === 1 && docs[0].kind === 'List' ? docs[0] : { apiVersion: 'v1', kind: 'List', items: docs };
  else if (docs.length === 1) data = docs[0];
  else throw new Error(`${source.file}: expected one YAML document of values, found ${docs.length}`);
  return `${JSON.stringify(data, null, 1)}\n`;
}

/** test/upstream/README.md, from the table. */
export function readme(): string {
  const rows = SOURCES.map((s) => `| \`${derivedFile(s)}\` | ${s.repository} | \`${s.upstreamPath}\` | ${s.commit} (${s.date}) | ${s.version} | ${s.license} |`);
  return [
    '# Upstream facts the tests check against',
    '',
    'Generated by `projenrc/upstream-data.ts` (`npx projen upstream:data -- <folder>`) from unmodified',
    'copies of the upstream files below; do not edit by hand. Each upstream file is Apache-2.0; what is',
    'here is derived from it:',
    '',
    '- the CRDs: each served version\'s structural schema (types, fields, enums, required fields, formats,',
    '  patterns, defaults and the `x-kubernetes-*` markers) without description text, as the API server',
    '  validates custom resources with it (test/util/crd-schemas.ts);',
    '- gpu-operator\'s driver DaemonSet and ClusterRole: the objects as the operator ships them, comments dropped;',
    '- the charts\' `values.yaml`: every key and default, comments dropped.',
    '',
    'To move to a newer upstream commit, copy the same paths from it into a folder, update the source\'s row',
    'in the script, run it with that folder, and read the diff.',
    '',
    '| file | upstream repository | path | commit (date) | version | license |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** Every derived file's text, by its path relative to test/upstream/. */
export function generateAll(folder: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const source of SOURCES) {
    const copy = path.join(folder, source.file);
    if (!fs.statSync(copy, { throwIfNoEntry: false })?.isFile()) throw new Error(`${copy} is missing: the folder must hold ${source.upstreamPath} of ${source.repository} as ${source.file}`);
    files.set(derivedFile(source), derive(source, fs.readFileSync(copy, 'utf8')));
  }
  files.set('README.md', readme());
  return files;
}

function main(): void {
  const args = process.argv.slice(2);
  const check = args.includes('--check');
  const folders = args.filter((a) => a !== '--check');
  if (folders.length !== 1) {
    console.error('usage: npx projen upstream:data -- <folder of upstream copies> [--check]');
    process.exit(2);
  }
  const files = generateAll(path.resolve(folders[0]));
  const current = (name: string): string | undefined => (fs.existsSync(path.join(DATA_DIR, name)) ? fs.readFileSync(path.join(DATA_DIR, name), 'utf8') : undefined);
  const stale = [...files].filter(([name, text]) => current(name) !== text).map(([name]) => name);
  if (check) {
    if (stale.length > 0) {
      console.error(`test/upstream/ is stale: ${stale.join(', ')}`);
      process.exit(1);
    }
    return;
  }
  for (const name of stale) {
    fs.mkdirSync(path.dirname(path.join(DATA_DIR, name)), { recursive: true });
    fs.writeFileSync(path.join(DATA_DIR, name), files.get(name)!);
    console.log(`wrote test/upstream/${name}`);
  }
}

if (require.main === module) main();
