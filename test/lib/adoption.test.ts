/**
 * Adopting a running DaemonSet (prop `adopt`): the agent renders the adopted DaemonSet's name, namespace and
 * selector, and takes over the chart's ServiceAccount and RBAC by name. The chart facts follow the charts'
 * templates: fluent/helm-charts charts/fluent-bit/templates/_helpers.tpl (fluent-bit.fullname,
 * fluent-bit.selectorLabels, fluent-bit.serviceAccountName) at chart 0.58.1, and
 * prometheus-community/helm-charts charts/prometheus-node-exporter/templates/_helpers.tpl at 4.56.1; the chart
 * manifests in examples/migrate-from-helm/chart-rendered/ are written from those templates.
 */
import * as fs from 'fs';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { parseAllDocuments } from 'yaml';
import { AgentAdoption } from '../../src/adoption/adoption';
import { chartFullname, FLUENT_BIT_CHART, KUBE_PROMETHEUS_STACK_NODE_EXPORTER, NODE_EXPORTER_CHART } from '../../src/adoption/charts';
import { Promotion, RolloutWave } from '../../src/agent/rollout';
import { LogCollectorDaemonSet } from '../../src/constructs/log-collector-daemon-set';
import { NodeAgentDaemonSet } from '../../src/constructs/node-agent-daemon-set';
import { NodeExporterDaemonSet } from '../../src/constructs/node-exporter-daemon-set';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { Manifest, synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';
import { UPSTREAM_DATA, upstream } from '../util/upstream';

const RENDERED = path.join(REPO, 'examples', 'migrate-from-helm', 'chart-rendered');
const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });

function chartObjects(file: string): Manifest[] {
  return parseAllDocuments(fs.readFileSync(path.join(RENDERED, file), 'utf8')).map((d) => d.toJS()).filter((d) => d !== null);
}
function find(objects: Manifest[], kind: string, name?: string): Manifest {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!found) throw new Error(`no ${kind} ${name ?? ''}`);
  return found;
}
function names(objects: Manifest[], kinds: string[]): string[] {
  return objects.filter((o) => kinds.includes(o.kind)).map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
}
function synthCollector(adopt: AgentAdoption, extra: Partial<ConstructorParameters<typeof LogCollectorDaemonSet>[2]> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], adopt, ...extra });
  return synthManifests(chart);
}
function tailInput(manifests: Manifest[]): string {
  const data = find(manifests, 'ConfigMap').data['fluent-bit.conf'] as string;
  return data.split('[INPUT]').find((s) => s.includes('/var/log/containers/'))!;
}

describe('chart facts', () => {
  test('the pinned chart versions are the ones whose values.yaml the tests read', () => {
    const readme = fs.readFileSync(path.join(UPSTREAM_DATA, 'README.md'), 'utf8');
    expect(readme).toContain(`chart ${FLUENT_BIT_CHART.version}, fluent-bit ${FLUENT_BIT_CHART.appVersion}`);
    expect(readme).toContain(`chart ${NODE_EXPORTER_CHART.version}, node_exporter ${NODE_EXPORTER_CHART.appVersion}`);
  });

  test('the fluent-bit chart\'s default tail input has no DB and no Read_from_Head (fluent-bit reads from the tail)', () => {
    const inputs: string = upstream('fluent-bit-chart/values.json').config.inputs;
    expect(inputs).toContain('Path /var/log/containers/*.log');
    expect(inputs).not.toMatch(/^\s+DB\s/m);
    expect(inputs).not.toMatch(/Read_from_Head/i);
    expect(FLUENT_BIT_CHART.tailDb).toBeUndefined();
    expect(FLUENT_BIT_CHART.tailReadFromHead).toBe(false);
  });

  test('the node-exporter chart\'s default updateStrategy is RollingUpdate, maxUnavailable 1 (values.yaml updateStrategy)', () => {
    expect(upstream('node-exporter-chart/values.json').updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } });
    expect(NODE_EXPORTER_CHART.updateStrategy).toBe('RollingUpdate, maxUnavailable 1');
    // the fluent-bit chart's values set none: the API server's default
    expect(upstream('fluent-bit-chart/values.json').updateStrategy).toEqual({});
    expect(FLUENT_BIT_CHART.updateStrategy).toBeUndefined();
  });

  // the fullname helper: fullnameOverride; the release name when it contains the chart name; else release-name
  test.each([
    [{ releaseName: 'fluent-bit' }, 'fluent-bit', 'fluent-bit'],
    [{ releaseName: 'my-fluent-bit-logs' }, 'my-fluent-bit-logs', 'fluent-bit'],
    [{ releaseName: 'logging' }, 'logging-fluent-bit', 'fluent-bit'],
    [{ releaseName: 'logging', nameOverride: 'fb' }, 'logging-fb', 'fb'],
    [{ releaseName: 'logging', fullnameOverride: 'collector' }, 'collector', 'fluent-bit'],
    [{ releaseName: `${'x'.repeat(60)}-a` }, `${'x'.repeat(60)}-a`.substring(0, 63), 'fluent-bit'],
  ])('fluent-bit release %o: DaemonSet %s, selector name %s', (release, fullname, name) => {
    const adoption = AgentAdoption.fluentBitChart({ namespace: 'logging', ...release });
    expect(adoption.daemonSetName).toBe(fullname);
    expect(adoption.selector).toEqual({ 'app.kubernetes.io/instance': release.releaseName, 'app.kubernetes.io/name': name });
    expect(chartFullname(FLUENT_BIT_CHART, { namespace: 'logging', ...release })).toBe(fullname);
  });

  test('a trailing "-" left by the 63-character cut is trimmed, as `trunc 63 | trimSuffix "-"`', () => {
    const release = `${'a'.repeat(62)}-b`;
    expect(AgentAdoption.fluentBitChart({ namespace: 'l', releaseName: release }).daemonSetName).toBe('a'.repeat(62));
  });
});

describe('adopting the fluent-bit chart', () => {
  const chart = chartObjects('fluent-bit.yaml');
  const adoption = AgentAdoption.fluentBitChart({ namespace: 'logging' });
  const manifests = synthCollector(adoption);
  const ds = find(manifests, 'DaemonSet');

  test('the DaemonSet keeps the chart\'s name, namespace and selector, and its pods carry the selector labels', () => {
    const old = find(chart, 'DaemonSet');
    expect(ds.metadata.name).toBe(old.metadata.name);
    expect(ds.metadata.namespace).toBe(old.metadata.namespace);
    expect(ds.spec.selector).toEqual(old.spec.selector);
    expect(ds.spec.template.metadata.labels).toMatchObject(old.spec.selector.matchLabels);
  });

  test('ServiceAccount, ClusterRole and ClusterRoleBinding are the chart\'s by name (taken over in place), the binding\'s roleRef unchanged', () => {
    const kinds = ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'];
    expect(names(manifests, kinds)).toEqual(names(chart, kinds));
    expect(find(manifests, 'ClusterRoleBinding').roleRef).toEqual(find(chart, 'ClusterRoleBinding').roleRef);
    expect(ds.spec.template.spec.serviceAccountName).toBe(find(chart, 'DaemonSet').spec.template.spec.serviceAccountName);
  });

  test('the leftovers name the chart\'s other objects', () => {
    const left = adoption.leftovers.map((o) => `${o.kind}/${o.namespace ?? ''}/${o.name}`);
    for (const o of chart.filter((x) => x.kind !== 'DaemonSet')) expect(left).toContain(`${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    expect(adoption.chart).toBe('fluent/fluent-bit 0.58.1');
  });

  // fluent-bit 5.1.1 (as 4.2.3) plugins/in_tail/tail_file.c set_file_position: a file with no DB offset and read_from_head off
  // is seeked to its end (the offset recorded in the DB); plugins/in_tail/tail.c in_tail_init: after the first scan,
  // read_newly_discovered_files_from_head (default true) turns read_from_head on for files found later.
  test('until the adoption is completed the container-log input starts at the end of the files (no second copy), then from the head again', () => {
    expect(tailInput(manifests)).toMatch(/Read_from_Head\s+Off/);
    expect(tailInput(synthCollector(AgentAdoption.fluentBitChart({ namespace: 'logging', completed: true })))).toMatch(/Read_from_Head\s+On/);
    // an explicit readFromHead wins
    expect(tailInput(synthCollector(adoption, { readFromHead: true }))).toMatch(/Read_from_Head\s+On/);
    // and without adoption the default is unchanged
    const chart2 = new Chart(Testing.app(), 'test');
    new LogCollectorDaemonSet(chart2, 'logs', { outputs: [LOKI] });
    expect(tailInput(synthManifests(chart2))).toMatch(/Read_from_Head\s+On/);
  });

  test('the tail DB stays on the node: the next restart resumes from it', () => {
    expect(tailInput(manifests)).toMatch(/DB\s+\/var\/lib\/fluent-bit\/tail-containers\.db/);
  });

  test('a name or namespace other than the adopted DaemonSet\'s is refused, naming the prop and the fix', () => {
    expect(() => synthCollector(adoption, { name: 'logs' })).toThrow(/adopt: name "logs" differs from the adopted DaemonSet "fluent-bit".*remove name or set it to "fluent-bit"/);
    expect(() => synthCollector(adoption, { namespace: 'observability' })).toThrow(/adopt: namespace "observability" differs.*"logging"/);
  });

  test('a release named otherwise: identity labels follow the selector, so the metrics Service selects the pods', () => {
    const m = synthCollector(AgentAdoption.fluentBitChart({ namespace: 'logging', releaseName: 'logging' }), { metrics: {} });
    const d = find(m, 'DaemonSet');
    expect(d.metadata.name).toBe('logging-fluent-bit');
    expect(d.spec.selector.matchLabels).toEqual({ 'app.kubernetes.io/instance': 'logging', 'app.kubernetes.io/name': 'fluent-bit' });
    const service = find(m, 'Service');
    for (const [k, v] of Object.entries(service.spec.selector)) expect(d.spec.template.metadata.labels[k]).toBe(v);
  });
});

describe('adopting the node-exporter chart', () => {
  const chart = chartObjects('prometheus-node-exporter.yaml');
  const c = new Chart(Testing.app(), 'test');
  new NodeExporterDaemonSet(c, 'exporter', { adopt: AgentAdoption.nodeExporterChart({ namespace: 'monitoring' }) });
  const manifests = synthManifests(c);

  test('DaemonSet, ServiceAccount and Service keep the chart\'s names; the selector is the chart\'s', () => {
    expect(names(manifests, ['DaemonSet', 'ServiceAccount', 'Service'])).toEqual(names(chart, ['DaemonSet', 'ServiceAccount', 'Service']));
    expect(find(manifests, 'DaemonSet').spec.selector).toEqual(find(chart, 'DaemonSet').spec.selector);
    const ds = find(manifests, 'DaemonSet');
    for (const [k, v] of Object.entries(find(manifests, 'Service').spec.selector)) expect(ds.spec.template.metadata.labels[k]).toBe(v);
  });

  test('the Service taken over keeps its cluster IP: spec.clusterIP is immutable (ClusterIP -> None is rejected by the API server)', () => {
    expect(find(chart, 'Service').spec.type).toBe('ClusterIP');
    expect(find(manifests, 'Service').spec.clusterIP).toBeUndefined();
    // a new exporter stays headless
    const fresh = new Chart(Testing.app(), 'test');
    new NodeExporterDaemonSet(fresh, 'exporter', {});
    expect(find(synthManifests(fresh), 'Service').spec.clusterIP).toBe('None');
  });
});

/**
 * The `job` prometheus-operator gives a ServiceMonitor's (PodMonitor's) series: the value of the Service's (pod's)
 * label named by `spec.jobLabel` (prometheus-operator pkg/prometheus/promcfg.go, generateServiceMonitorConfig:
 * `__meta_kubernetes_service_label_<jobLabel>` replaces `job`). The prometheus-node-exporter chart's
 * templates/servicemonitor.yaml sets `jobLabel: {{ default "app.kubernetes.io/name" .Values.prometheus.monitor.jobLabel }}`.
 */
function scrapedJob(manifests: Manifest[], monitorKind = 'ServiceMonitor'): string | undefined {
  const monitor = find(manifests, monitorKind);
  const labels = monitorKind === 'ServiceMonitor'
    ? find(manifests, 'Service').metadata.labels
    : find(manifests, 'DaemonSet').spec.template.metadata.labels;
  return labels[monitor.spec.jobLabel];
}

describe('adopting kube-prometheus-stack\'s node exporter keeps its job', () => {
  const kpsValues = () => upstream('kube-prometheus-stack/values.json')['prometheus-node-exporter'];
  function synthExporter(adopt: AgentAdoption, monitor: 'serviceMonitor' | 'podMonitor' = 'serviceMonitor'): Manifest[] {
    const c = new Chart(Testing.app(), 'test');
    new NodeExporterDaemonSet(c, 'exporter', { adopt, [monitor]: { labels: { release: 'kps' } } });
    return synthManifests(c);
  }

  test('the facts are kube-prometheus-stack values.yaml\'s prometheus-node-exporter subchart values', () => {
    const v = kpsValues();
    const key = KUBE_PROMETHEUS_STACK_NODE_EXPORTER.jobLabelKey;
    expect(v.prometheus.monitor.jobLabel).toBe(key);
    expect(v.service.labels[key]).toBe(KUBE_PROMETHEUS_STACK_NODE_EXPORTER.job);
    expect(v.podLabels[key]).toBe(KUBE_PROMETHEUS_STACK_NODE_EXPORTER.job);
    expect(v.prometheus.monitor.enabled).toBe(KUBE_PROMETHEUS_STACK_NODE_EXPORTER.monitorEnabled);
    // the standalone chart's default: no jobLabel, so the template's default app.kubernetes.io/name
    expect(upstream('node-exporter-chart/values.json').prometheus.monitor.jobLabel).toBe('');
  });

  test('the ServiceMonitor and PodMonitor keep job="node-exporter", which the stack\'s node rules select', () => {
    const adopt = AgentAdoption.nodeExporterChart({ namespace: 'monitoring', releaseName: 'kps', kubePrometheusStack: true });
    expect(adopt.daemonSetName).toBe('kps-prometheus-node-exporter');
    expect(adopt.job).toBe('node-exporter');
    expect(scrapedJob(synthExporter(adopt))).toBe('node-exporter');
    expect(scrapedJob(synthExporter(adopt, 'podMonitor'), 'PodMonitor')).toBe('node-exporter');
  });

  test('a standalone chart release keeps its job too (the chart name, or nameOverride)', () => {
    expect(scrapedJob(synthExporter(AgentAdoption.nodeExporterChart({ namespace: 'monitoring' })))).toBe('prometheus-node-exporter');
    const overridden = AgentAdoption.nodeExporterChart({ namespace: 'monitoring', nameOverride: 'nodes' });
    expect(overridden.job).toBe('nodes');
    expect(scrapedJob(synthExporter(overridden))).toBe('nodes');
    const given = AgentAdoption.nodeExporterChart({ namespace: 'monitoring', releaseName: 'ne', job: 'node' });
    expect(scrapedJob(synthExporter(given))).toBe('node');
  });

  test('the adoption\'s leftovers say the job is kept, and that the stack renders the ServiceMonitor by default', () => {
    const adopt = AgentAdoption.nodeExporterChart({ namespace: 'monitoring', releaseName: 'kps', kubePrometheusStack: true });
    expect(adopt.chart).toContain('kube-prometheus-stack');
    const monitor = adopt.leftovers.find((o) => o.kind === 'ServiceMonitor')!;
    expect(monitor.onlyWhen).toBeUndefined();
    expect(monitor.fate).toContain('job="node-exporter"');
  });

  test('kubePrometheusStack without releaseName, or a job that is no label value, is refused naming the prop', () => {
    expect(() => AgentAdoption.nodeExporterChart({ namespace: 'monitoring', kubePrometheusStack: true })).toThrow(/nodeExporterChart.*releaseName/);
    expect(() => AgentAdoption.nodeExporterChart({ namespace: 'monitoring', job: 'node exporter' })).toThrow(/job "node exporter" is not a label value/);
  });
});

test('the committed example adopts kube-prometheus-stack\'s exporter with its job kept', () => {
  const dir = path.join(REPO, 'examples', 'adopt-kube-prometheus-stack', 'dist');
  const committed = parseAllDocuments(fs.readFileSync(path.join(dir, 'monitoring.k8s.yaml'), 'utf8')).map((d) => d.toJS()).filter((d) => d !== null);
  expect(find(committed, 'DaemonSet').metadata.name).toBe('kps-prometheus-node-exporter');
  expect(scrapedJob(committed)).toBe('node-exporter');
  expect(fs.readFileSync(path.join(dir, 'adoption.md'), 'utf8')).toContain('job="node-exporter"');
});

describe('adopting any DaemonSet with NodeAgentDaemonSet', () => {
  const adopt = AgentAdoption.daemonSet({ name: 'old-agent', namespace: 'infra', selector: { app: 'old-agent', tier: 'node' } });
  const props = { image: 'registry.example/agent:1.0.0', adopt };

  test('the selector is rendered exactly (no rollout-group label) and its labels are on the pods', () => {
    const c = new Chart(Testing.app(), 'test');
    const agent = new NodeAgentDaemonSet(c, 'a', props);
    const ds = find(synthManifests(c), 'DaemonSet');
    expect(ds.metadata).toMatchObject({ name: 'old-agent', namespace: 'infra' });
    expect(ds.spec.selector).toEqual({ matchLabels: { app: 'old-agent', tier: 'node' } });
    expect(ds.spec.template.metadata.labels).toMatchObject({ 'app': 'old-agent', 'tier': 'node', 'node-agents.cdk8s.io/rollout-group': 'fleet' });
    expect(agent.selectorLabels).toEqual({ app: 'old-agent', tier: 'node' });
  });

  test('enabling waves later: the fleet DaemonSet keeps the adopted object and selector; waves get their own, and wait for the old pod', () => {
    const c = new Chart(Testing.app(), 'test');
    new NodeAgentDaemonSet(c, 'a', { ...props, rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all() } });
    const list = synthManifests(c).filter((o) => o.kind === 'DaemonSet');
    const fleet = find(list, 'DaemonSet', 'old-agent');
    const canary = find(list, 'DaemonSet', 'old-agent-canary');
    expect(fleet.spec.selector).toEqual({ matchLabels: { app: 'old-agent', tier: 'node' } });
    expect(canary.spec.selector.matchLabels).toEqual({
      'app.kubernetes.io/instance': 'old-agent', 'app.kubernetes.io/name': 'old-agent', 'node-agents.cdk8s.io/rollout-group': 'canary',
    });
    // the canary pod's anti-affinity matches the fleet's pods (same identity labels, another group)
    const term = canary.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
    for (const [k, v] of Object.entries(term.labelSelector.matchLabels)) expect(fleet.spec.template.metadata.labels[k]).toBe(v);
  });

  test.each([
    [{ selector: {} }, /adopt: the selector is empty/],
    [{ selector: { 'node-agents.cdk8s.io/rollout-group': 'fleet' } }, /selector label node-agents.cdk8s.io\/rollout-group is the library's own/],
    [{ selector: { app: 'bad value' } }, /selector value "bad value" of app is not a label value/],
  ])('a bad adopted selector %o is refused', (over, message) => {
    const bad = AgentAdoption.daemonSet({ name: 'x', namespace: 'infra', ...over });
    expect(() => new NodeAgentDaemonSet(new Chart(Testing.app(), 'test'), 'a', { image: 'registry.example/agent:1.0.0', adopt: bad }))
      .toThrow(message);
  });

  test('adopt must be an AgentAdoption', () => {
    expect(() => new NodeAgentDaemonSet(new Chart(Testing.app(), 'test'), 'a', { image: 'registry.example/agent:1.0.0', adopt: { daemonSetName: 'x' } as any }))
      .toThrow(/adopt must be made with AgentAdoption.daemonSet\(\), fluentBitChart\(\) or nodeExporterChart\(\)/);
  });
});

describe('a cdk8s-plus object of another major', () => {
  test('is reported as such (jsii rtti fqn): the props take the library\'s own types', () => {
    // cdk8s-plus-33's EnvValue: the same jsii class name under another major's package
    class EnvValue33 {}
    Object.defineProperty(EnvValue33, Symbol.for('jsii.rtti'), { value: { fqn: 'cdk8s-plus-33.EnvValue', version: '2.0.0' } });
    expect(() => new NodeAgentDaemonSet(new Chart(Testing.app(), 'test'), 'a', {
      image: 'registry.example/agent:1.0.0', env: { A: new EnvValue33() as any },
    })).toThrow(/prop env\["A"\] must be made with AgentEnvValue.fromConfigMap\(\), fromField\(\), fromSecret\(\) or fromValue\(\), got cdk8s-plus-33's EnvValue: props take the library's own types/);
  });
});

describe('the adoption guide\'s example', () => {
  test('synthesizes: both charts adopted under their names', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const ts = require('typescript') as typeof import('typescript');
    const readme = fs.readFileSync(path.join(REPO, 'docs', 'adopting-helm.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Adopting a running install'), readme.indexOf('\n## ', readme.indexOf('## Adopting a running install') + 1));
    const code = /```ts\n([\s\S]*?)```/.exec(section)![1];
    const js = ts.transpileModule(code, { compilerOptions: { module: ts.ModuleKind.CommonJS } }).outputText;
    const c = new Chart(Testing.app(), 'test');
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const library = require('../../src');
    new Function('chart', ...Object.keys(library), js)(c, ...Object.values(library));
    const ds = synthManifests(c).filter((o) => o.kind === 'DaemonSet').map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();
    expect(ds).toEqual(['logging/fluent-bit', 'monitoring/prometheus-node-exporter']);
  });
});

describe('the namespace and name of an adopted DaemonSet are the agent\'s, for every agent', () => {
  // One resolution (src/agent/identity.ts): the prop, else the adopted DaemonSet's, else the chart's namespace, else
  // the agent's default. The node exporter once skipped `adopt` and refused its own adoption with "remove namespace".
  const adopt = () => AgentAdoption.daemonSet({ name: 'kps-prometheus-node-exporter', namespace: 'prometheus', selector: { 'app.kubernetes.io/name': 'prometheus-node-exporter', 'app.kubernetes.io/instance': 'kps' } });
  const cases: [string, (c: Chart) => void][] = [
    ['NodeExporterDaemonSet', (c) => new NodeExporterDaemonSet(c, 'exporter', { adopt: AgentAdoption.nodeExporterChart({ namespace: 'prometheus', releaseName: 'kps' }) })],
    ['NodeExporterDaemonSet (a DaemonSet)', (c) => new NodeExporterDaemonSet(c, 'exporter', { adopt: adopt() })],
    ['LogCollectorDaemonSet', (c) => new LogCollectorDaemonSet(c, 'logs', { adopt: adopt(), outputs: [LOKI] })],
    ['NodeAgentDaemonSet', (c) => new NodeAgentDaemonSet(c, 'agent', { adopt: adopt(), image: 'example.com/agent:1.0.0' })],
  ];
  test.each(cases)('%s adopted in another namespace, without a namespace prop', (_, build) => {
    const c = new Chart(Testing.app(), 'test');
    build(c);
    const ds = synthManifests(c).find((m) => m.kind === 'DaemonSet')!;
    expect(ds.metadata.namespace).toBe('prometheus');
    expect(ds.metadata.name).toBe('kps-prometheus-node-exporter');
  });
});
