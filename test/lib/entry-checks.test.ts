/**
 * Issue 27's list of props that went unchecked, TypeErrors from JavaScript callers, a crash on
 * valid input and errors naming no construct or the wrong one: each now gives an Error naming the
 * construct the user built (or the factory), the prop and the fix.
 */
import { Chart, Testing } from 'cdk8s';
import * as api from '../../src';
import { thrownClass } from '../util/fuzz';
import { validateManifests } from '../util/manifests';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;
const chart = (): Chart => new Chart(Testing.app(), 'chart');
const agents = { addAgents: () => undefined };
const repoUrl = 'https://git.example.com/fleet.git';
const cluster = (name: unknown) => ({ name, environment: 'prod', region: 'eu-west-1' }) as api.FleetClusterOptions;
const wave = (gate: Partial<api.WaveGate>): api.AgentRollout => ({
  waves: [api.RolloutWave.labelled('canary')],
  promoted: api.Promotion.all(),
  argoCdSyncWaves: true,
  gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090', ...gate }],
});

describe('unchecked props', () => {
  test.each<[string, (c: Chart) => unknown, string]>([
    ['alerts.ruleLabels with an invalid key (every construct)', (c) => new api.NodeExporterDaemonSet(c, 'metrics', { alerts: { ruleLabels: { 'bad key': 'x' } } }),
      'NodeExporterDaemonSet chart/metrics: alerts.ruleLabels: "bad key" is not a valid label key'],
    ['alerts.ruleLabels with an invalid value', (c) => new api.LogCollectorDaemonSet(c, 'logs', { outputs: [api.FluentBitOutput.stdout()], alerts: { ruleLabels: { team: 'a b' } } }),
      'LogCollectorDaemonSet chart/logs: alerts.ruleLabels'],
    ['a gate image ""', (c) => new api.NodeAgentDaemonSet(c, 'agent', { image: 'a:1', rollout: wave({ image: '' }) }),
      'NodeAgentDaemonSet chart/agent: rollout.gates ("canary") image "" is not an image reference'],
    ['gate bakeMinutes past a day', (c) => new api.NodeAgentDaemonSet(c, 'agent', { image: 'a:1', rollout: wave({ bakeMinutes: 1e300 }) }),
      'bakeMinutes 1e+300 must be a whole number from 0 to 1440'],
    ['gate bakeMinutes Infinity', (c) => new api.NodeAgentDaemonSet(c, 'agent', { image: 'a:1', rollout: wave({ bakeMinutes: Infinity }) }),
      'bakeMinutes Infinity must be a whole number from 0 to 1440'],
    ['gate timeoutSeconds past a day', (c) => new api.NodeAgentDaemonSet(c, 'agent', { image: 'a:1', rollout: wave({ timeoutSeconds: 2 ** 63 }) }),
      'timeoutSeconds 9223372036854776000 must be a whole number from 30'],
  ])('%s', (_what, build, message) => {
    expect(() => build(chart())).toThrow(message);
  });

  test('a day of bake and a day of timeout still render a valid gate Job', () => {
    const c = chart();
    new api.NodeAgentDaemonSet(c, 'agent', { image: 'a:1', rollout: wave({ bakeMinutes: 1440, timeoutSeconds: 86400 }) });
    validateManifests(Testing.synth(c));
  });
});

describe('errors naming the construct the user built', () => {
  test('a namespace with a line break on the log collector is refused before the fluent-bit config is written', () => {
    expect(() => new api.LogCollectorDaemonSet(chart(), 'logs', { outputs: [api.FluentBitOutput.stdout()], namespace: 'a\nb' }))
      .toThrow(/^LogCollectorDaemonSet chart\/logs: namespace "a\nb"/);
  });

  test('kafka rdkafkaOptions keys are checked with the output, and reported by the collector', () => {
    const kafka = api.FluentBitOutput.kafka({ brokers: ['kafka-0:9092'], topic: 'logs', rdkafkaOptions: { 'bad key\n': 'x' } });
    expect(() => new api.LogCollectorDaemonSet(chart(), 'logs', { outputs: [kafka] }))
      .toThrow(/^LogCollectorDaemonSet chart\/logs: [\s\S]*rdkafkaOptions key "bad key\\n" is not a librdkafka property name/);
    const ok = api.FluentBitOutput.kafka({ brokers: ['kafka-0:9092'], topic: 'logs', rdkafkaOptions: { 'compression.codec': 'zstd', 'queue.buffering.max.ms': '50' } });
    const c = chart();
    new api.LogCollectorDaemonSet(c, 'logs', { outputs: [ok] });
    validateManifests(Testing.synth(c));
  });

  test('two fleet clusters with one name, or an empty name, are refused by the fleet', () => {
    expect(() => new api.AgentFleet({ agents, repoUrl, clusters: [cluster('a'), cluster('a')] }))
      .toThrow('AgentFleet: addCluster: two clusters are named "a"');
    expect(() => new api.AgentFleet({ agents, repoUrl, clusters: [cluster('')] })).toThrow('AgentFleet: addCluster: cluster name "" is empty');
  });

  test('promotion(FleetStage.through("nope", ...)) names the cluster', () => {
    const fleet = new api.AgentFleet({ agents, repoUrl });
    const c = fleet.addCluster(cluster('prod-1'));
    expect(() => c.promotion(api.FleetStage.through('nope', 'canary')))
      .toThrow('FleetCluster prod-1: promotion: fleet stage: "nope" is not a cluster wave; valid names are');
  });

  test.each<[string, (c: Chart) => unknown, RegExp]>([
    ['a pod option of the log collector', (c) => new api.LogCollectorDaemonSet(c, 'logs', { outputs: [api.FluentBitOutput.stdout()], imagePullSecrets: ['Bad_Name'] }),
      /^LogCollectorDaemonSet chart\/logs: invalid props:\n {2}- imagePullSecrets\[0\]/],
    ['a pod option of the node exporter', (c) => new api.NodeExporterDaemonSet(c, 'metrics', { serviceAccountName: 'Bad_Name' }),
      /^NodeExporterDaemonSet chart\/metrics: invalid props:\n {2}- serviceAccountName/],
    ['a pod option of the GPU driver', (c) => new api.GpuDriverDaemonSet(c, 'gpu', { image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04', podLabels: { 'app.kubernetes.io/name': 'x' } }),
      /^GpuDriverDaemonSet chart\/gpu: invalid props:\n {2}- podLabels/],
    ['an alert option of the node exporter', (c) => new api.NodeExporterDaemonSet(c, 'metrics', { alerts: { missingFor: 'soon' } }),
      /^NodeExporterDaemonSet chart\/metrics: /],
  ])('%s names the construct the user built, not its internal child', (_what, build, message) => {
    let error: Error | undefined;
    try {
      build(chart());
    } catch (e) {
      error = e as Error;
    }
    expect(error?.message).toMatch(message);
    expect(error?.message).not.toMatch(/\/(Agent|Alerts)\b/);
  });
});

describe('TypeErrors become Errors naming the construct or factory and the prop', () => {
  test.each<[string, () => unknown, string]>([
    ['new AgentFleet()', () => new (api.AgentFleet as Any)(), 'AgentFleet: props must be an object, got undefined'],
    ['AgentFleet generator {}', () => new api.AgentFleet({ agents, repoUrl, generator: {} as Any }), 'AgentFleet: prop generator must be made with ArgoCdGenerator.gitFiles()'],
    ['AgentFleet clusters [null]', () => new api.AgentFleet({ agents, repoUrl, clusters: [null as Any] }), 'AgentFleet: prop clusters[0] must be an object such as { environment, name, region } (FleetClusterOptions), got null'],
    ['a cluster named 42', () => new api.AgentFleet({ agents, repoUrl, clusters: [cluster(42)] }), 'AgentFleet: prop clusters[0].name must be a string, got number 42'],
    ['agents without addAgents', () => new api.AgentFleet({ agents: {} as Any, repoUrl }), 'AgentFleet: prop agents must implement IFleetAgents: it has no addAgents'],
    ['alerts.watchedCollectors [42]', () => new api.NodeExporterDaemonSet(chart(), 'metrics', { alerts: { watchedCollectors: [42 as Any] } }),
      'NodeExporterDaemonSet chart/metrics: prop alerts.watchedCollectors[0] must be a string, got number 42'],
    ['FluentBitInput.tail(null)', () => api.FluentBitInput.tail(null as Any), 'FluentBitInput.tail: options must be an object such as { tag, paths } (TailInputOptions), got null'],
    ['FluentBitParser.regex({ name }) without a regex', () => api.FluentBitParser.regex({ name: 'p' } as Any), 'FluentBitParser.regex: prop regex is required'],
    ['ArgoCdGenerator.gitFiles(null)', () => api.ArgoCdGenerator.gitFiles(null as Any), 'ArgoCdGenerator.gitFiles: options must be an object such as { folder? } (GitFilesGeneratorOptions), got null'],
    ['cluster.promotion(null)', () => new api.AgentFleet({ agents, repoUrl }).addCluster(cluster('a')).promotion(null as Any),
      'FleetCluster a: promotion: stage must be made with FleetStage.all(), none() or through(), got null'],
  ])('%s', (_what, build, message) => {
    let error: unknown;
    try {
      build();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(Error);
    expect(thrownClass(error)).toBe('ValidationError');
    expect((error as Error).message).toContain(message);
  });
});

test('configData with a key named like an Object.prototype member ({ toString: "x" }) renders (cdk8s-plus called it "already used")', () => {
  const c = chart();
  new api.NodeAgentDaemonSet(c, 'agent', { image: 'a:1', configData: { 'toString': 'x', 'constructor': 'y', 'agent.conf': 'z' } });
  const manifests = Testing.synth(c);
  validateManifests(manifests);
  const configMap = manifests.find((m) => m.kind === 'ConfigMap');
  expect(configMap.data).toEqual({ 'agent.conf': 'z', 'constructor': 'y', 'toString': 'x' });
  expect(Testing.synth(c)).toEqual(manifests);
});

describe('createNamespace', () => {
  test.each(['kube-system', 'default', 'kube-public', 'kube-node-lease'])('creating "%s" is refused (its Pod Security labels would apply to every pod there)', (namespace) => {
    expect(() => new api.NodeAgentDaemonSet(chart(), 'agent', { image: 'a:1', namespace, createNamespace: true }))
      .toThrow(`NodeAgentDaemonSet chart/agent: invalid props:\n  - createNamespace: "${namespace}" exists in every cluster and belongs to Kubernetes`);
    expect(() => new api.LogCollectorDaemonSet(chart(), 'logs', { outputs: [api.FluentBitOutput.stdout()], namespace, createNamespace: true }))
      .toThrow(`LogCollectorDaemonSet chart/logs: invalid props:\n  - createNamespace: "${namespace}"`);
  });

  test('an agent in kube-system without createNamespace is fine (the namespace exists)', () => {
    const c = chart();
    new api.NodeAgentDaemonSet(c, 'agent', { image: 'a:1', namespace: 'kube-system' });
    expect(Testing.synth(c).filter((m) => m.kind === 'Namespace')).toEqual([]);
  });

  test('the node exporter creates "monitoring" only with ownMonitoringNamespace (kube-prometheus-stack usually owns it)', () => {
    expect(() => new api.NodeExporterDaemonSet(chart(), 'metrics', { createNamespace: true }))
      .toThrow('NodeExporterDaemonSet chart/metrics: createNamespace would create the namespace "monitoring"');
    const c = chart();
    new api.NodeExporterDaemonSet(c, 'metrics', { createNamespace: true, ownMonitoringNamespace: true });
    const manifests = Testing.synth(c);
    validateManifests(manifests);
    expect(manifests.find((m) => m.kind === 'Namespace').metadata.name).toBe('monitoring');
    // a namespace of its own needs no confirmation
    const own = chart();
    new api.NodeExporterDaemonSet(own, 'metrics', { namespace: 'node-exporter', createNamespace: true });
    expect(Testing.synth(own).find((m) => m.kind === 'Namespace').metadata.name).toBe('node-exporter');
  });
});
