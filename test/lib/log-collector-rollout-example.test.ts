/**
 * The committed upgrade example (examples/log-collector-rollout/dist/<stage>/): each stage commit
 * changes only the DaemonSet of the wave it promotes, and the last step (removing `previous`)
 * changes nothing.
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { GATE_SCRIPT } from '../../src/alerts/gate';
import { REPO } from '../util/paths';

const dist = path.join(REPO, 'examples', 'log-collector-rollout', 'dist');

function objects(stage: string): Map<string, string> {
  const text = fs.readFileSync(path.join(dist, stage, 'log-collector.k8s.yaml'), 'utf8');
  const docs = parseAllDocuments(text).map((d) => d.toJS()).filter((d) => d);
  return new Map(docs.map((d) => [`${d.kind}/${d.metadata.name}`, JSON.stringify(d)]));
}

function diff(a: string, b: string): string[] {
  const before = objects(a);
  const after = objects(b);
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  return keys.filter((k) => before.get(k) !== after.get(k));
}

function images(stage: string): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [key, json] of objects(stage)) {
    if (key.startsWith('DaemonSet/') && !key.includes('-prepull')) result[key] = JSON.parse(json).spec.template.spec.containers[0].image.split(':').pop();
  }
  return result;
}

function configMap(stage: string): string {
  const keys = [...objects(stage).keys()].filter((k) => k.startsWith('ConfigMap/'));
  expect(keys).toHaveLength(1);
  return keys[0];
}

test('each stage changes only the promoted DaemonSet; the new config is added with the canary, the old one goes with the fleet', () => {
  const oldConfig = configMap('0-before');
  const newConfig = configMap('4-done');
  expect(newConfig).not.toBe(oldConfig);
  // The canary's gate Job and each wave's watcher change with their wave: their record's revision hashes its DaemonSet.
  // The pull-only DaemonSet of the promoted wave comes with its stage and goes with the next, with its watcher; the
  // watchers' Role names it (get on the DaemonSet, the watcher's record). The canary brings the second output
  // (Elasticsearch), and with it LogCollectorOutputStarved into the agent's rules.
  expect(diff('0-before', '1-canary')).toEqual([newConfig, 'DaemonSet/logs-canary', 'DaemonSet/logs-prepull-canary', 'Job/logs-gate-canary', 'Job/logs-watch-canary',
    'Job/logs-watch-prepull-canary', 'PrometheusRule/logs-alerts', 'Role/logs-watch']);
  expect(diff('1-canary', '2-wave-1')).toEqual(['DaemonSet/logs-prepull-canary', 'DaemonSet/logs-prepull-wave-1', 'DaemonSet/logs-wave-1',
    'Job/logs-watch-prepull-canary', 'Job/logs-watch-prepull-wave-1', 'Job/logs-watch-wave-1', 'Role/logs-watch']);
  expect(diff('2-wave-1', '3-fleet')).toEqual([oldConfig, 'DaemonSet/logs', 'DaemonSet/logs-prepull-fleet', 'DaemonSet/logs-prepull-wave-1', 'Job/logs-watch-fleet',
    'Job/logs-watch-prepull-fleet', 'Job/logs-watch-prepull-wave-1', 'Role/logs-watch'].sort());
  expect(diff('3-fleet', '4-done')).toEqual(['DaemonSet/logs-prepull-fleet', 'Job/logs-watch-prepull-fleet', 'Role/logs-watch']);
  expect([...objects('4-done').keys()].filter((k) => k.includes('prepull'))).toEqual([]);
});

test('every stage renders a watcher per wave, and one for its pull-only DaemonSet, in the DaemonSet\'s sync wave, named by the DaemonSet it watches', () => {
  const pulled: Record<string, string[]> = { '1-canary': ['logs-watch-prepull-canary'], '2-wave-1': ['logs-watch-prepull-wave-1'], '3-fleet': ['logs-watch-prepull-fleet'] };
  for (const stage of ['0-before', '1-canary', '2-wave-1', '3-fleet', '4-done']) {
    const all = [...objects(stage).values()].map((j) => JSON.parse(j));
    const watchers = all.filter((o) => o.kind === 'Job' && o.metadata.labels['app.kubernetes.io/component'] === 'rollout-watch');
    expect(watchers.map((w) => w.metadata.name).sort()).toEqual(['logs-watch-canary', 'logs-watch-fleet', 'logs-watch-wave-1', ...(pulled[stage] ?? [])].sort());
    for (const w of watchers) {
      const ds = all.find((o) => o.kind === 'DaemonSet' && o.metadata.annotations['node-agents.cdk8s.io/rollout-watcher'] === w.metadata.name);
      expect(w.metadata.annotations['argocd.argoproj.io/sync-wave']).toBe(ds.metadata.annotations['argocd.argoproj.io/sync-wave']);
    }
  }
});

test('the new credentialed output reaches only promoted waves: held ones keep the previous release byte for byte', () => {
  const before = objects('0-before');
  const secretEnv = (stage: string, ds: string) => (JSON.parse(objects(stage).get(`DaemonSet/${ds}`)!).spec.template.spec.containers[0].env ?? [])
    .filter((e: { valueFrom?: { secretKeyRef?: unknown } }) => e.valueFrom?.secretKeyRef).map((e: { name: string }) => e.name);
  expect(secretEnv('1-canary', 'logs-canary')).toEqual(['FLB_ES_HTTP_PASSWD']);
  for (const held of ['logs-wave-1', 'logs']) {
    expect(objects('1-canary').get(`DaemonSet/${held}`)).toBe(before.get(`DaemonSet/${held}`));
    expect(secretEnv('1-canary', held)).toEqual([]);
  }
  expect(objects('2-wave-1').get('DaemonSet/logs')).toBe(before.get('DaemonSet/logs'));
});

test('the new version widens canary → wave-1 → fleet', () => {
  expect(images('0-before')).toEqual({ 'DaemonSet/logs-canary': '4.1.1', 'DaemonSet/logs-wave-1': '4.1.1', 'DaemonSet/logs': '4.1.1' });
  expect(images('1-canary')).toEqual({ 'DaemonSet/logs-canary': '4.2.3', 'DaemonSet/logs-wave-1': '4.1.1', 'DaemonSet/logs': '4.1.1' });
  expect(images('2-wave-1')).toEqual({ 'DaemonSet/logs-canary': '4.2.3', 'DaemonSet/logs-wave-1': '4.2.3', 'DaemonSet/logs': '4.1.1' });
  expect(images('3-fleet')).toEqual({ 'DaemonSet/logs-canary': '4.2.3', 'DaemonSet/logs-wave-1': '4.2.3', 'DaemonSet/logs': '4.2.3' });
});

test('every stage alerts on all three DaemonSets and gates the rollout after the canary', () => {
  for (const stage of ['0-before', '1-canary', '2-wave-1', '3-fleet', '4-done']) {
    const all = objects(stage);
    const rule = JSON.parse(all.get('PrometheusRule/logs-alerts')!);
    expect(rule.spec.groups.map((g: { name: string }) => g.name)).toEqual(['logs.daemonsets', 'logs.fluent-bit']);
    expect(JSON.stringify(rule)).toContain('daemonset=~\\"logs(-canary|-wave-1)?\\"');
    const gate = JSON.parse(all.get('Job/logs-gate-canary')!);
    const wave = (key: string) => Number(JSON.parse(all.get(key)!).metadata.annotations['argocd.argoproj.io/sync-wave']);
    expect([wave('DaemonSet/logs-canary'), wave('Job/logs-gate-canary'), wave('DaemonSet/logs-wave-1'), wave('DaemonSet/logs')]).toEqual([1, 2, 3, 5]);
    expect(gate.metadata.annotations['argocd.argoproj.io/hook']).toBe('Sync');
    // The script survives YAML folding byte for byte (it is what the gate tests run).
    expect(gate.spec.template.spec.containers[0].command).toEqual(['sh', '-c', GATE_SCRIPT]);
  }
});
