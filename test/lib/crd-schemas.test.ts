/**
 * Custom resources validate against the upstream CRDs (Argo CD 3.6 `manifests/crds/*`,
 * kube-prometheus `manifests/setup/*CustomResourceDefinition.yaml`) with the API server's structural
 * rules (apiextensions-apiserver pkg/apiserver/schema: pruning / strict field validation), through
 * the shared manifest check; and the committed fleet and rollout examples' YAML validate.
 */
import { readdirSync, readFileSync, statSync } from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { AgentFleet, ArgoCdLayout, FluentBitOutput, IFleetAgents, LogCollectorDaemonSet } from '../../src';
import { crdProblems, crdSchema, CRD_FILES, KEYWORDS, schemaProblems } from '../util/crd-schemas';
import { Manifest, validateManifests } from '../util/manifests';
import { REPO } from '../util/paths';

const EXAMPLES = path.join(REPO, 'examples');

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).sort().flatMap((name) => {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return p.endsWith('.yaml') ? [p] : [];
  });
}

const docs = (file: string): Manifest[] => parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS()).filter((d) => d !== null);

const agents: IFleetAgents = {
  addAgents(_cluster, chart) {
    new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })] });
  },
};
const fleet = (prune: boolean, layout?: ArgoCdLayout) => new AgentFleet({
  repoUrl: 'https://git.example.com/platform/fleet.git',
  agents,
  clusters: [{ name: 'dev-eu-1', environment: 'dev', region: 'eu-west-1', wave: 'canary' }, { name: 'prod-eu-1', environment: 'prod', region: 'eu-west-1' }],
  prune,
  layout,
});

describe('the structural rules, on the upstream ApplicationSet CRD', () => {
  const appSet = () => JSON.parse(JSON.stringify(fleet(true).argoCdObjects()[0]));

  test('the fleet\'s ApplicationSet is valid', () => {
    expect(crdProblems(appSet())).toEqual([]);
  });

  test('rollingSync.defaultPrune is not a field of the CRD: an error, as the API server\'s strict validation reports it', () => {
    const set = appSet();
    set.spec.strategy.rollingSync.defaultPrune = true;
    expect(crdProblems(set)).toEqual(['/spec/strategy/rollingSync: unknown field "defaultPrune"']);
    expect(() => validateManifests([set])).toThrow('schema (CRD): /spec/strategy/rollingSync: unknown field "defaultPrune"');
  });

  test('unknown fields anywhere, wrong types, missing required fields and values outside an enum are errors', () => {
    const set = appSet();
    set.spec.template.spec.syncPolicy.retry.limitt = 5;
    set.spec.template.spec.syncPolicy.retry.backoff.factor = 'two';
    delete set.spec.template.spec.project;
    set.spec.syncPolicy.applicationsSync = 'create';
    const problems = crdProblems(set);
    expect(problems).toContain('/spec/template/spec/syncPolicy/retry: unknown field "limitt"');
    expect(problems).toContain('/spec/template/spec/syncPolicy/retry/backoff/factor: must be integer, got string');
    expect(problems).toContain('/spec/template/spec: required field "project" is missing');
    expect(problems).toContain('/spec/syncPolicy/applicationsSync: "create" is not one of create-only, create-update, create-delete, sync');
    expect(problems).toHaveLength(4);
  });

  test('x-kubernetes-preserve-unknown-fields keeps unknown fields (a list generator\'s elements are free-form)', () => {
    const set = JSON.parse(JSON.stringify(fleet(false).argoCdObjects()[0]));
    set.spec.generators[0].list.elements[0].anything = { nested: [1] };
    expect(crdProblems(set)).toEqual([]);
  });

  test('an object schema with no properties takes no fields; int-or-string takes both; null only where nullable', () => {
    expect(schemaProblems({ type: 'object' }, { a: 1 })).toEqual(['<root>: unknown field "a"']);
    expect(schemaProblems({ 'type': 'object', 'x-kubernetes-preserve-unknown-fields': true }, { a: 1 })).toEqual([]);
    expect(schemaProblems({ type: 'object', additionalProperties: { type: 'string' } }, { a: 1 })).toEqual(['/a: must be string, got number']);
    expect(schemaProblems({ type: 'object', properties: { a: { type: 'string', nullable: true }, b: { type: 'string' } } }, { a: null, b: null }))
      .toEqual(['/b: must not be null']);
    expect(schemaProblems({ type: 'string', pattern: '^(?i)(abort|warn)?$' }, 'Warn')).toEqual([]);
    expect(schemaProblems({ type: 'integer', format: 'int32' }, 2 ** 31)).toEqual(['<root>: not an int32']);
    const set = appSet();
    set.spec.strategy.rollingSync.steps[0].maxUpdate = '10%';
    expect(crdProblems(set)).toEqual([]);
    set.spec.strategy.rollingSync.steps[0].maxUpdate = true;
    expect(crdProblems(set).length).toBeGreaterThan(0);
  });
});

test('every custom resource kind the library renders has its CRD, whose keywords the walk implements', () => {
  for (const key of Object.keys(CRD_FILES)) {
    const used = new Set<string>();
    const walk = (node: Manifest): void => {
      for (const [k, v] of Object.entries(node)) {
        used.add(k);
        if (k === 'properties') Object.values(v as Record<string, Manifest>).forEach(walk);
        else if (k === 'items' || (k === 'additionalProperties' && typeof v === 'object')) walk(v);
        else if (k === 'anyOf') (v as Manifest[]).forEach(walk);
      }
    };
    walk(crdSchema(key));
    expect([...used].filter((k) => !KEYWORDS.has(k))).toEqual([]);
  }
  expect(Object.keys(CRD_FILES).sort()).toEqual([
    'argoproj.io/v1alpha1/Application', 'argoproj.io/v1alpha1/ApplicationSet',
    'monitoring.coreos.com/v1/PodMonitor', 'monitoring.coreos.com/v1/PrometheusRule', 'monitoring.coreos.com/v1/ServiceMonitor',
  ]);
  const app = JSON.parse(JSON.stringify(fleet(true, ArgoCdLayout.APPLICATIONS).argoCdObjects()[0]));
  expect(crdProblems(app)).toEqual([]);
  app.spec.syncPolicy.automated.prunee = true;
  expect(crdProblems(app)).toEqual(['/spec/syncPolicy/automated: unknown field "prunee"']);
});

describe.each(['fleet', 'log-collector-rollout'])('the committed examples/%s YAML', (example) => {
  const files = yamlFiles(path.join(EXAMPLES, example, 'dist'));
  test('has custom resources', () => {
    const kinds = new Set(files.flatMap((f) => docs(f).map((d) => d.kind)));
    expect([...kinds].filter((k) => ['ApplicationSet', 'PrometheusRule', 'ServiceMonitor', 'PodMonitor'].includes(k)).length).toBeGreaterThan(0);
  });
  test('an unknown field in any of its custom resources fails', () => {
    for (const m of files.flatMap(docs).filter((d) => ['ApplicationSet', 'PrometheusRule', 'ServiceMonitor', 'PodMonitor'].includes(d.kind))) {
      const broken = JSON.parse(JSON.stringify(m));
      broken.spec.unknownField = 1;
      expect(crdProblems(broken)).toEqual(['/spec: unknown field "unknownField"']);
    }
  });
  test.each(files.map((f) => [path.relative(EXAMPLES, f)]))('%s validates, custom resources against the upstream CRDs', (file) => {
    expect(() => validateManifests(docs(path.join(EXAMPLES, file)))).not.toThrow();
  });
});
