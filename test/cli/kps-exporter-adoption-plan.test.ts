/**
 * kube-prometheus-stack's node exporter handed over to the library, as a sequence of trees: what runs in the cluster
 * after each step, read by node-agents plan on the example inventory. The umbrella chart (release "kps") stays
 * installed, so its Application is never deleted: the exporter is turned off in its values, and Argo CD's prune must
 * not remove the exporter's objects in between. At every step no node is without an exporter, and none runs two.
 * The subchart's objects are test/fixtures/kube-prometheus-stack/node-exporter.yaml.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import * as YAML from 'yaml';
import { AgentAdoption, NodeExporterDaemonSet, RelabelAction } from '../../src';
import { loadManifests, loadNodeList } from '../../src/cli/coverage/load';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { planChange, PlanReport } from '../../src/cli/plan/plan';
import { Manifest, synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';

const NODES = nodeFacts(loadNodeList('examples/inventories/mixed-cluster.json', REPO));
const FIXTURE = path.join(REPO, 'test', 'fixtures', 'kube-prometheus-stack', 'node-exporter.yaml');
const SYNC_OPTIONS = 'argocd.argoproj.io/sync-options';
const subchart = (): Manifest[] => YAML.parseAllDocuments(fs.readFileSync(FIXTURE, 'utf8')).map((d) => d.toJS()).filter((m) => m);

/** The library's exporter adopting the subchart's: the umbrella's release name, the stack's job kept. */
function adoption(releaseName: string): Manifest[] {
  const chart = Testing.chart();
  new NodeExporterDaemonSet(chart, 'metrics', {
    adopt: AgentAdoption.nodeExporterChart({ namespace: 'monitoring', releaseName, kubePrometheusStack: true }),
    serviceMonitor: { labels: { release: releaseName }, relabelings: [{ action: RelabelAction.REPLACE, targetLabel: 'job', replacement: 'node-exporter' }] },
  });
  return synthManifests(chart);
}

/**
 * What Argo CD leaves live when an Application syncs with prune: the desired objects, and of the objects it tracked
 * that are no longer desired, only those annotated `Prune=false` (argo-cd's sync option: skipped by the prune).
 */
function afterPrune(tracked: Manifest[], desired: Manifest[]): Manifest[] {
  const key = (m: Manifest) => `${m.kind}/${m.metadata.namespace ?? ''}/${m.metadata.name}`;
  const wanted = new Set(desired.map(key));
  const kept = tracked.filter((m) => !wanted.has(key(m)) && (m.metadata.annotations?.[SYNC_OPTIONS] ?? '').split(',').includes('Prune=false'));
  return [...desired, ...kept];
}

const protect = (objects: Manifest[]): Manifest[] =>
  objects.map((m) => ({ ...m, metadata: { ...m.metadata, annotations: { ...m.metadata.annotations, [SYNC_OPTIONS]: 'Prune=false' } } }));

let dir: string;
let trees = 0;
/** plan over two live trees */
function plan(before: Manifest[], after: Manifest[]): PlanReport {
  const write = (objects: Manifest[]) => {
    const file = path.join(dir, `tree-${trees++}.yaml`);
    fs.writeFileSync(file, objects.map((o) => YAML.stringify(o)).join('---\n'));
    return file;
  };
  return planChange(loadManifests([write(before)], '/'), loadManifests([write(after)], '/'), NODES);
}

beforeAll(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kps-'))));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** No node without an exporter, none with two: the only safe step. */
function expectSafe(report: PlanReport): void {
  expect(report.findings.filter((f) => f.kind === 'two-pods-per-node')).toEqual([]);
  for (const agent of report.agents) expect(agent.lost).toEqual([]);
}

describe('kube-prometheus-stack\'s exporter, step by step (release kps)', () => {
  // step 0: the umbrella's Application renders the subchart; Argo CD tracks its objects
  const step0 = subchart();
  // step 1: the exporter's objects annotated Prune=false (a commit to the umbrella's values, or kubectl annotate)
  const step1 = protect(step0);
  // step 2: nodeExporter.enabled: false in the umbrella's values; its sync prunes what it no longer renders
  const step2 = afterPrune(step1, []);
  // step 3: the adoption commit, synced by the library's Application: the same objects, taken over in place
  const step3 = afterPrune(step2, adoption('kps'));

  test('the fixture is the subchart as the umbrella renders it: the DaemonSet adoption names, its selector, the stack\'s job label', () => {
    const ds = step0.find((m) => m.kind === 'DaemonSet');
    const adopted = adoption('kps').find((m) => m.kind === 'DaemonSet');
    const identity = (m: Manifest) => [m.metadata.name, m.metadata.namespace, m.spec.selector];
    expect(identity(ds)).toEqual(identity(adopted));
    expect(ds.spec.template.metadata.labels.jobLabel).toBe('node-exporter');
  });

  test('step 1 (Prune=false): metadata only, no pod moves', () => {
    const report = plan(step0, step1);
    expectSafe(report);
    for (const agent of report.agents) expect(agent.replaced).toEqual([]);
  });

  test('step 2 (nodeExporter.enabled: false): the sync prunes nothing of the exporter; its DaemonSet keeps running, unowned', () => {
    expect(step2.map((m) => m.kind).sort()).toEqual(['DaemonSet', 'Service', 'ServiceAccount', 'ServiceMonitor']);
    expectSafe(plan(step1, step2));
  });

  test('step 3 (the adoption): the DaemonSet is replaced in place, node by node; no DaemonSet is deleted', () => {
    const report = plan(step2, step3);
    expectSafe(report);
    const [agent] = report.agents;
    expect(agent.daemonSets.map((d) => [d.id, d.change])).toEqual([['monitoring/kps-prometheus-node-exporter', 'changed']]);
    expect(agent.replaced.length).toBeGreaterThan(0);
    expect(agent.moved).toEqual([]);
  });

  test('out of order: the exporter turned off before Prune=false: the sync deletes it, every node loses the exporter', () => {
    const pruned = afterPrune(step0, []);
    expect(pruned).toEqual([]);
    const report = plan(step0, pruned);
    expect(report.agents.flatMap((a) => a.lost).length).toBeGreaterThan(0);
  });

  test('the wrong release name (the stack\'s chart name, not the release): a second DaemonSet beside the subchart\'s, two exporters per node', () => {
    const report = plan(step2, afterPrune(step2, adoption('kube-prometheus-stack')));
    const two = report.findings.filter((f) => f.kind === 'two-pods-per-node');
    expect(two.map((f) => [f.cause, f.severity])).toEqual([['duplicate', 'error']]);
    // the fix names the adoption with the umbrella's release name, read from the subchart's Helm labels
    expect(two[0].fix).toContain('adopt the chart\'s DaemonSet monitoring/kps-prometheus-node-exporter (Helm release kps, chart prometheus-node-exporter-4.56.1) instead of adding a second one: '
      + 'in prometheus-node-exporter, adopt: AgentAdoption.nodeExporterChart({ namespace: \'monitoring\', releaseName: \'kps\', kubePrometheusStack: true })');
  });
});
