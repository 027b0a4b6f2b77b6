/**
 * Fuzz tests of the three specialized agents (fixed seed, bounded runs): every run synthesizes
 * valid, deterministic manifests or throws an Error naming the construct kind and path. The base
 * construct's own problems, reached through these agents, are in test/lib/fuzz-base.test.ts.
 */
import { Chart } from 'cdk8s';
import * as fc from 'fast-check';
import {
  DriverReadinessCheck, FluentBitLogLevel, FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, GpuNodeSelection, HostPathType, LogCollectorDaemonSet,
  LogCollectorMonitorKind, NodeContainerRuntime, NodeExporterCollector, NodeExporterDaemonSet, NodeExporterListenAddress,
} from '../../src';
import {
  failureClass, fuzzProps, fuzzRun, outcomeCounts, image, labels, maybe, nodeRequirements, pick, port, priorityClassName, Props,
  rarely, resources, sidecar, tolerations, updateStrategy, env, ints,
} from '../util/fuzz';

// About 10-20 s per construct; FUZZ_RUNS raises it for a longer local run.
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = 16;

/** Runs the property; on failure, fast-check reports the shrunk props and the reason. */
function fuzz(kind: string, build: (chart: Chart, props: Props) => void, arb: fc.Arbitrary<Props>): void {
  fc.assert(fc.property(arb, (props) => {
    const outcome = fuzzRun(kind, build, props);
    if (outcome.kind === 'failure') throw new Error(`${failureClass(outcome.reason)}\n${outcome.reason}`);
  }), { seed: SEED, numRuns: RUNS });
  // The fuzz must reach synthesis often, not only refusals.
  const counts = outcomeCounts.get(kind)!;
  expect(counts.ok).toBeGreaterThan(RUNS / 10);
  expect(counts.refused).toBeGreaterThan(RUNS / 10);
}

const output = fc.oneof(
  fc.record({ host: pick('loki.monitoring.svc', 'https://loki', 'a b', ''), port: maybe(port), tenantId: maybe(pick('team-a', ' a', '')) }, { requiredKeys: ['host'] })
    .map((o) => FluentBitOutput.loki(o)),
  fc.record({ host: pick('fluentd.logging.svc', 'x:1'), username: maybe(pick('fb', '')) }, { requiredKeys: ['host'] }).map((o) => FluentBitOutput.forward(o)),
  // issue 52: basic auth without a password, port 443 without tls, an unset \${VAR} in the host
  fc.record({
    host: pick('search.example.com', '${SEARCH_HOST}'),
    port: maybe(pick(9200, 443)),
    tls: maybe(fc.boolean()),
    httpUser: maybe(pick('fb')),
    httpPassword: maybe(fc.constant({ secretName: 'search', key: 'password' })),
  }, { requiredKeys: ['host'] }).map((o) => FluentBitOutput.openSearch(o)),
  fc.record({ retryLimit: maybe(ints(5)), storageTotalLimitSize: maybe(pick('1G', 'lots', '5 M')) }, { requiredKeys: [] }).map((o) => FluentBitOutput.stdout(o)),
);

const logCollectorProps = fc.record({
  outputs: fc.oneof({ arbitrary: fc.array(output, { minLength: 1, maxLength: 2 }), weight: 10 }, { arbitrary: fc.constant([]), weight: 1 }),
  name: maybe(pick('log-collector', 'fb', '1collector', 'Bad_Name', 'x'.repeat(60))),
  image: maybe(image),
  containerRuntime: maybe(pick(NodeContainerRuntime.CONTAINERD, NodeContainerRuntime.DOCKER)),
  stateDir: maybe(pick('/var/lib/fb', '/var/log', 'relative', '/', '/fluent-bit/etc', '/var/lib/a b')),
  httpPort: maybe(pick(2020, 2021, 80, 0, 65536, 1.5)),
  flushSeconds: maybe(pick(1, 0.5, 0, -1, 1e308, 5)),
  terminationGracePeriodSeconds: maybe(ints(60)),
  graceSeconds: rarely(ints(20)),
  logLevel: maybe(pick(FluentBitLogLevel.INFO, FluentBitLogLevel.DEBUG)),
  memBufLimit: maybe(pick('5M', '5 MB', '')),
  storageMaxChunksUp: maybe(pick(64, 0, -1, 1.5, 1000, 2 ** 31)),
  storageBacklogMemLimit: maybe(pick('5M', 'lots')),
  refreshIntervalSeconds: maybe(ints(10)),
  systemdInput: maybe(fc.boolean()),
  useKubelet: maybe(fc.boolean()),
  kubernetesTlsVerify: fc.boolean(),
  kubeletPort: rarely(port),
  forwardInputPort: rarely(pick(24224, 80, 2020, 0)),
  extraConfig: maybe(pick('[FILTER]\n    Name grep\n    Match *\n    Exclude log ^$', '[SERVICE]\n    Flush 1', 'not config')),
  runAsUser: rarely(ints(1000)),
  runAsGroup: rarely(ints(1000)),
  tolerateAllTaints: maybe(fc.boolean()),
  tolerations: maybe(tolerations),
  updateStrategy: maybe(updateStrategy),
  resources: maybe(resources),
  priorityClassName: maybe(priorityClassName),
  nodeSelector: maybe(labels),
  nodeRequirements: maybe(nodeRequirements),
  labels: maybe(labels),
  podAnnotations: maybe(fc.dictionary(pick('a', 'example.com/b'), pick('x', ''), { maxKeys: 1 })),
  metrics: maybe(fc.record({
    kind: maybe(pick(LogCollectorMonitorKind.SERVICE_MONITOR, LogCollectorMonitorKind.POD_MONITOR)),
    interval: maybe(pick('30s', '30', '1m')),
    labels: maybe(labels),
  }, { requiredKeys: [] })),
}, { requiredKeys: ['outputs'] });

const nodeExporterProps = fc.record({
  name: maybe(pick('node-exporter', '1exporter', 'Bad_Name')),
  image: maybe(image),
  port: maybe(port),
  listenAddress: maybe(pick(NodeExporterListenAddress.NODE_IP, NodeExporterListenAddress.ALL_INTERFACES, 'everywhere' as NodeExporterListenAddress)),
  enableCollectors: maybe(fc.array(pick(NodeExporterCollector.SYSTEMD, NodeExporterCollector.WIFI, 'filesytem' as NodeExporterCollector), { maxLength: 2 })),
  disableCollectors: maybe(fc.array(pick(NodeExporterCollector.WIFI, NodeExporterCollector.HWMON), { maxLength: 2 })),
  mountPointsExclude: maybe(pick('^/(dev|proc)($|/)', '', 'a\nb')),
  extraArgs: maybe(fc.array(pick('--collector.textfile.directory=/x', 'oops', '--web.max-requests=5'), { maxLength: 2 })),
  resources: maybe(resources),
  updateStrategy: maybe(updateStrategy),
  tolerateAllTaints: maybe(fc.boolean()),
  tolerations: maybe(tolerations),
  nodeSelector: maybe(labels),
  nodeRequirements: maybe(nodeRequirements),
  priorityClassName: maybe(priorityClassName),
  kubeRbacProxy: maybe(fc.record({
    image: maybe(image), upstreamPort: maybe(port), tlsSecretName: maybe(pick('tls', 'Bad_Name')), requireTlsSecret: maybe(fc.boolean()), resources: maybe(resources),
  }, { requiredKeys: [] })),
  serviceMonitor: maybe(fc.record({ interval: maybe(pick('30s', '1m', '30')), scrapeTimeout: maybe(pick('10s', '2m')), labels: maybe(labels) }, { requiredKeys: [] })),
  sidecars: maybe(fc.array(sidecar, { maxLength: 1 })),
  labels: maybe(labels),
}, { requiredKeys: [] });

const gpuProps = fc.record({
  image: pick('nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', 'driver', 'driver:latest', 'nvcr.io/nvidia/driver:550.90.07'),
  shape: maybe(fc.oneof(
    fc.record({
      buildTimeSeconds: maybe(ints(600)),
      startupPeriodSeconds: maybe(ints(10)),
      startupFailureThreshold: rarely(ints(100)),
      probeTimeoutSeconds: maybe(ints(60)),
      readinessCheck: maybe(pick(DriverReadinessCheck.NVIDIA_SMI, DriverReadinessCheck.MODULE_LOADED)),
      readyMarker: maybe(pick('/run/x/.ready', 'rel', '/a b')),
    }, { requiredKeys: [] }).map((o) => GpuDriverShape.driverContainer(o)),
    fc.record({ pauseImage: maybe(image), extraInitContainers: maybe(fc.array(sidecar, { maxLength: 1 })) }, { requiredKeys: [] })
      .map((o) => GpuDriverShape.installer(o)),
  )),
  name: maybe(pick('gpu-driver', 'Bad_Name')),
  gpuNodes: maybe(fc.oneof(pick(GpuNodeSelection.featureDiscovery()), pick('gpu', 'bad key!').map((k) => GpuNodeSelection.labelExists(k)))),
  kernelVersions: maybe(fc.array(pick('5.15.0-1048-aws', '5.15 generic'), { maxLength: 2 })),
  tolerations: maybe(tolerations),
  priorityClassName: maybe(priorityClassName),
  seLinuxLevel: maybe(pick('s0', 's0:c1,c2', 'bad')),
  resources: maybe(resources),
  extendedResources: maybe(fc.dictionary(pick('example.com/dev', 'nvidia.com/gpu', 'bad key'), pick('1', '2', ' 1', 'x'), { maxKeys: 2 })),
  env: maybe(env),
  driverManager: maybe(fc.boolean()),
  extraHostPaths: maybe(fc.array(fc.record({
    name: pick('extra', 'run-nvidia', 'Bad'),
    hostPath: pick('/opt/x', 'rel'),
    type: maybe(pick(HostPathType.DIRECTORY, 'Nope' as HostPathType)),
    propagation: maybe(pick('None', 'Sideways')),
    readOnly: maybe(fc.boolean()),
  }, { requiredKeys: ['name', 'hostPath'] }), { maxLength: 1 })),
  updateStrategy: maybe(updateStrategy),
  terminationGracePeriodSeconds: maybe(ints(120)),
  labels: maybe(labels),
  upgradeSkipNodeLabel: maybe(pick('nvidia.com/skip', 'bad key!')),
}, { requiredKeys: ['image'] });

const LOG_PATHS = ['outputs', 'name', 'httpPort', 'stateDir', 'resources', 'resources.cpuRequest', 'resources.memoryLimit', 'tolerations', 'labels',
  'metrics', 'metrics.labels', 'updateStrategy', 'nodeRequirements', 'runAsUser', 'extraConfig', 'parsers', 'rollout', 'flushSeconds'];
const EXPORTER_PATHS = ['name', 'port', 'enableCollectors', 'extraArgs', 'resources', 'resources.cpuRequest', 'kubeRbacProxy', 'kubeRbacProxy.upstreamPort',
  'serviceMonitor', 'serviceMonitor.labels', 'sidecars', 'labels', 'tolerations', 'nodeSelector', 'rollout'];
const GPU_PATHS = ['image', 'shape', 'gpuNodes', 'kernelVersions', 'resources', 'resources.memoryRequest', 'extendedResources', 'env', 'extraHostPaths',
  'labels', 'tolerations', 'terminationGracePeriodSeconds', 'rollout', 'updateStrategy'];

describe('fuzz: every run synthesizes valid, deterministic manifests or names the construct', () => {
  test('LogCollectorDaemonSet', () => {
    fuzz('LogCollectorDaemonSet', (chart, props) => new LogCollectorDaemonSet(chart, 'agent', props), fuzzProps(logCollectorProps, LOG_PATHS));
  });

  test('NodeExporterDaemonSet', () => {
    fuzz('NodeExporterDaemonSet', (chart, props) => new NodeExporterDaemonSet(chart, 'agent', props), fuzzProps(nodeExporterProps, EXPORTER_PATHS));
  });

  test('GpuDriverDaemonSet', () => {
    fuzz('GpuDriverDaemonSet', (chart, props) => new GpuDriverDaemonSet(chart, 'agent', props), fuzzProps(gpuProps, GPU_PATHS));
  });
});

