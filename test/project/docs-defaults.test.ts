/**
 * Every default the docs quote is the code's. Each `<!-- default: KEY -->` marker in README.md and docs/*.md is
 * followed by the value the docs state (an inline code span, or a number). That value must equal
 * - the jsii assembly's `@default` of the prop KEY names (`Type.prop`, what API.md shows), when KEY is a prop, and
 * - what the constructs render with the prop left out (RENDERED below: one synthesis of every agent).
 * A marker whose KEY has no renderer here fails, so no quoted default goes unchecked. docs/defaults.md is the table.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import {
  FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, LogCollectorDaemonSet, NodeExporterDaemonSet, Promotion, RolloutWave,
} from '../../src';
import { REPO } from '../util/paths';

const ROOT = REPO;
const FILES = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

interface Marker { file: string; line: number; key: string; value: string }

/** The markers of the docs, with the value each states. */
function markers(): Marker[] {
  const out: Marker[] = [];
  for (const file of FILES) {
    fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').forEach((text, i) => {
      for (const m of text.matchAll(/<!-- default: ([^>]+?) -->(`[^`]*`|[\d,.]+)/g)) {
        out.push({ file, line: i + 1, key: m[1], value: m[2].startsWith('`') ? m[2].slice(1, -1) : m[2].replace(/,/g, '') });
      }
      if (/<!-- default: [^>]+? -->(?!`|\d)/.test(text)) out.push({ file, line: i + 1, key: '(a marker not followed by a value)', value: text });
    });
  }
  return out;
}

/** The value a jsii @default states: its first quoted string, else its first number. */
function jsiiDefault(key: string): string | undefined {
  const assembly = JSON.parse(fs.readFileSync(path.join(ROOT, '.jsii'), 'utf8'));
  const [type, prop] = key.split('.');
  const property = (assembly.types[`cdk8s-node-agents.${type}`]?.properties ?? []).find((p: { name: string }) => p.name === prop);
  const text: string | undefined = property?.docs?.default;
  if (text === undefined) return undefined;
  const quoted = /"([^"]*)"/.exec(text);
  if (quoted) return quoted[1];
  return /-?\d+(\.\d+)?/.exec(text)?.[0];
}

/** One synthesis of every agent with the props these defaults belong to left out. */
function renderAll(): any[] {
  const chart = new Chart(Testing.app(), 'defaults');
  new LogCollectorDaemonSet(chart, 'logs', {
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })],
    readinessTaint: { key: 'node-agents.cdk8s.io/logs-not-ready' },
    rollout: {
      waves: [RolloutWave.labelled('canary')],
      promoted: Promotion.all(),
      argoCdSyncWaves: true,
      watch: {},
      gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090' }],
    },
  });
  new NodeExporterDaemonSet(chart, 'metrics', { kubeRbacProxy: {}, textfileCollector: {} });
  new GpuDriverDaemonSet(chart, 'nvidia', {
    image: 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04',
    shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 30 * 60 }),
  });
  return Testing.synth(chart);
}

const objects = renderAll();
const find = (kind: string, name: string) => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`no ${kind} ${name} rendered`);
  return o;
};
const podSpec = (o: any) => o.spec.template.spec;
const container = (o: any, name: string) => {
  const c = [...(podSpec(o).containers ?? []), ...(podSpec(o).initContainers ?? [])].find((x: any) => x.name === name);
  if (!c) throw new Error(`no container ${name} in ${o.kind} ${o.metadata.name}`);
  return c;
};
const env = (c: any, name: string) => String(c.env.find((e: any) => e.name === name)?.value);
const collectorConfig = () => Object.values(objects.find((x) => x.kind === 'ConfigMap' && x.metadata.name.startsWith('log-collector-config')).data).join('\n');
const configValue = (key: string) => new RegExp(`^\\s*${key.replace('.', '\\.')}\\s+(\\S+)`, 'm').exec(collectorConfig())?.[1];
const gate = () => find('Job', 'log-collector-gate-canary');
const watcher = () => find('Job', 'log-collector-watch-canary');
const remover = () => podSpec(find('DaemonSet', 'log-collector')).containers.find((c: any) => (c.env ?? []).some((e: any) => e.name === 'RECHECK_SECONDS'));

/** What the constructs render for each key: the value to compare with the docs'. */
const RENDERED: Record<string, () => string> = {
  'LogCollectorDaemonSetProps.image': () => container(find('DaemonSet', 'log-collector'), 'fluent-bit').image,
  'NodeExporterDaemonSetProps.image': () => container(find('DaemonSet', 'node-exporter'), 'node-exporter').image,
  'NodeExporterKubeRbacProxyOptions.image': () => container(find('DaemonSet', 'node-exporter'), 'kube-rbac-proxy').image,
  'GpuDriverDaemonSetProps.driverManagerImage': () => podSpec(find('DaemonSet', 'gpu-driver')).initContainers.find((c: any) => /driver-manager/.test(c.image)).image,
  'WaveGate.image': () => podSpec(gate()).containers[0].image,
  'RolloutWatch.image': () => podSpec(watcher()).containers[0].image,
  'AgentReadinessTaint.removerImage': () => remover().image,
  'LogCollectorDaemonSetProps.namespace': () => find('DaemonSet', 'log-collector').metadata.namespace,
  'LogCollectorDaemonSetProps.terminationGracePeriodSeconds': () => String(podSpec(find('DaemonSet', 'log-collector')).terminationGracePeriodSeconds),
  'LogCollectorDaemonSetProps.schedulerCapSeconds': () => String(configValue('scheduler.cap')),
  'LogCollectorDaemonSetProps.schedulerBaseSeconds': () => String(configValue('scheduler.base')),
  'LogCollectorDaemonSetProps.storageMaxChunksUp': () => String(configValue('storage.max_chunks_up')),
  'NodeExporterDaemonSetProps.namespace': () => find('DaemonSet', 'node-exporter').metadata.namespace,
  'NodeExporterTextfileCollectorOptions.hostDirectory': () => podSpec(find('DaemonSet', 'node-exporter')).volumes.find((v: any) => v.name === 'textfile').hostPath.path,
  'GpuDriverDaemonSetProps.name': () => objects.find((x) => x.kind === 'DaemonSet' && /driver/.test(x.metadata.name)).metadata.name,
  'WaveGate.bakeMinutes': () => String(Number(env(podSpec(gate()).containers[0], 'BAKE_SECONDS')) / 60),
  'WaveGate.timeoutSeconds': () => String(gate().spec.activeDeadlineSeconds - Number(env(podSpec(gate()).containers[0], 'BAKE_SECONDS'))),
  'RolloutWatch.restartBudget': () => env(podSpec(watcher()).containers[0], 'RESTART_BUDGET'),
  'RolloutWatch.pollSeconds': () => env(podSpec(watcher()).containers[0], 'POLL_SECONDS'),
  'RolloutWatch.failureGraceSeconds': () => env(podSpec(watcher()).containers[0], 'FAILURE_GRACE_SECONDS'),
  // the watcher's own verdict comes at timeoutSeconds; its Job's deadline is a minute later
  'RolloutWatch.timeoutSeconds': () => String(watcher().spec.activeDeadlineSeconds - 60),
  'RolloutWatch.pendingDeadlineSeconds(log collector)': () => env(podSpec(watcher()).containers[0], 'PENDING_DEADLINE_SECONDS'),
  'AgentReadinessTaint.recheckSeconds': () => env(remover(), 'RECHECK_SECONDS'),
};

/** Mem_Buf_Limit of the container-log input of a collector with two outputs and memBufLimit left out. */
function twoOutputsMemBufLimit(): string {
  const chart = new Chart(Testing.app(), 'two');
  new LogCollectorDaemonSet(chart, 'logs', {
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' }), FluentBitOutput.http({ host: 'archive.example.com' })],
  });
  const config = Testing.synth(chart).find((x) => x.kind === 'ConfigMap').data['fluent-bit.conf'];
  return String(/^\s*Mem_Buf_Limit\s+(\S+)/m.exec(config)?.[1]);
}
RENDERED['LogCollectorDaemonSetProps.memBufLimit(two outputs)'] = twoOutputsMemBufLimit;

const found = markers();

test('the docs quote defaults with markers, docs/defaults.md most of them', () => {
  expect(found.filter((m) => m.file === 'docs/defaults.md').length).toBeGreaterThanOrEqual(20);
});

test.each(found.map((m) => [`${m.file}:${m.line} ${m.key} = ${m.value}`, m] as const))('%s', (_, m) => {
  const render = RENDERED[m.key];
  expect({ where: `${m.file}:${m.line}`, key: m.key, checkable: render !== undefined }).toEqual({ where: `${m.file}:${m.line}`, key: m.key, checkable: true });
  // what the code renders with the prop left out
  expect({ where: `${m.file}:${m.line}`, key: m.key, rendered: render() }).toEqual({ where: `${m.file}:${m.line}`, key: m.key, rendered: m.value });
  // what the prop's doc comment (@default, API.md) says, where the key is a prop of the assembly
  if (/^\w+\.\w+$/.test(m.key)) {
    expect({ where: `${m.file}:${m.line}`, key: m.key, jsiiDefault: jsiiDefault(m.key) }).toEqual({ where: `${m.file}:${m.line}`, key: m.key, jsiiDefault: m.value });
  }
});
