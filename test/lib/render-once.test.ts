/**
 * One render per synthesis for any App: the late check renders each object, and the synthesis that
 * follows (Testing.synth, App.synth) reuses that JSON instead of rendering again.
 */
import { ApiObject, App, Chart, JsonPatch, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import * as api from '../../src';
import { validateManifests } from '../util/manifests';
import { REPO } from '../util/paths';

function realisticChart(): Chart {
  const chart = new Chart(Testing.app(), 'chart');
  const rollout = { waves: [api.RolloutWave.labelled('canary'), api.RolloutWave.labelled('wave-1')], promoted: api.Promotion.all() };
  new api.LogCollectorDaemonSet(chart, 'logs', { outputs: [api.FluentBitOutput.stdout()], rollout });
  new api.NodeExporterDaemonSet(chart, 'metrics', { rollout });
  new api.GpuDriverDaemonSet(chart, 'gpu', { image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04', rollout });
  return chart;
}

test('a synthesis renders each DaemonSet once (the late check\'s rendering is reused)', () => {
  const chart = realisticChart();
  const daemonSets = chart.node.findAll().filter((c) => c instanceof kplus.DaemonSet).map((c) => ApiObject.of(c));
  const spies = daemonSets.map((o) => jest.spyOn(Object.getPrototypeOf(o), 'toJson'));
  const manifests = Testing.synth(chart);
  validateManifests(manifests);
  // one prototype (KubeDaemonSet) shared by all: exactly one render per DaemonSet
  expect(spies[0].mock.calls.length).toBe(daemonSets.length);
  spies.forEach((s) => s.mockRestore());
});

test('the output is the same as without reuse, and a later synthesis renders afresh (a patch added after is in it)', async () => {
  const chart = realisticChart();
  const first = Testing.synth(chart);
  await Promise.resolve();
  const ds = chart.node.findAll().find((c) => c instanceof kplus.DaemonSet)!;
  ApiObject.of(ds).addJsonPatch(JsonPatch.add('/spec/template/spec/shareProcessNamespace', true));
  const second = Testing.synth(chart);
  expect(second).not.toEqual(first);
  expect(second.filter((m) => m.spec?.template?.spec?.shareProcessNamespace === true)).toHaveLength(1);
});

test('App.synth() writes the same YAML as before (reuse changes nothing but the work)', () => {
  const app = new App({ outdir: `${REPO}/.tmp/render-once` });
  const chart = new Chart(app, 'chart');
  new api.NodeExporterDaemonSet(chart, 'metrics');
  app.synth();
  expect(Testing.synth(chart)).toEqual(chart.toJson());
});

test('the reuse serves one rendering and lets go of the JSON: no object keeps it after the synthesis, even before the microtask', () => {
  const chart = realisticChart();
  const objects = chart.node.findAll().filter((c): c is ApiObject => c instanceof ApiObject);
  validateManifests(Testing.synth(chart));
  // synchronously, with no await: a loop synthesizing many apps keeps none of them alive
  expect(objects.filter((o) => Object.prototype.hasOwnProperty.call(o, 'toJson')).map((o) => o.node.path)).toEqual([]);
  expect(Testing.synth(chart)).toEqual(chart.toJson());
});
