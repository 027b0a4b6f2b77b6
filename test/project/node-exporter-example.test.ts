import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { buildApp, synthesize } from '../../examples/node-exporter/main';
import { validateManifests } from '../util/manifests';
import { REPO } from '../util/paths';

describe('examples/node-exporter', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'node-exporter-example-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('writes one YAML file per chart, every object valid', () => {
    synthesize(dir);
    expect(readdirSync(dir)).toEqual(['node-exporter.k8s.yaml']);
    const manifests = parseAllDocuments(readFileSync(path.join(dir, 'node-exporter.k8s.yaml'), 'utf8')).map((d) => d.toJSON());
    validateManifests(manifests);
    expect(manifests.map((m) => m.kind).sort()).toEqual(['DaemonSet', 'ResourceQuota', 'Service', 'ServiceAccount', 'ServiceMonitor']);
  });

  test('the ServiceMonitor carries the label kube-prometheus-stack selects and scrapes the Service port', () => {
    const app = buildApp(dir);
    const chart = app.charts[0];
    const objects = chart.toJson();
    const sm = objects.find((m: { kind: string }) => m.kind === 'ServiceMonitor');
    const svc = objects.find((m: { kind: string }) => m.kind === 'Service');
    expect(sm.metadata.labels.release).toBe('kube-prometheus-stack');
    expect(sm.spec.endpoints[0].port).toBe(svc.spec.ports[0].name);
    const ds = objects.find((m: { kind: string }) => m.kind === 'DaemonSet');
    expect(ds.spec.template.spec.containers[0].args).toContain('--collector.processes');
  });

  test('the default outdir is examples/node-exporter/dist', () => {
    expect(buildApp().outdir).toBe(path.join(REPO, 'examples', 'node-exporter', 'dist'));
  });
});
