/**
 * Regression tests from the issue and the fuzz tests, for the three agents: each bad prop gives an
 * Error naming the construct kind and path, the prop and the fix, never a TypeError or a
 * cdk8s-plus message without path.
 */
import { Chart, Duration, Testing } from 'cdk8s';
import {
  FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, LogCollectorDaemonSet, LogCollectorMonitorKind, NodeExporterDaemonSet,
} from '../../src';
import { AgentEnvValue, AgentProbe } from '../../src/agent/container-inputs';
import { thrownClass } from '../util/fuzz';
import { synthManifests } from '../util/manifests';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Untyped = any;

const LOKI = FluentBitOutput.loki({ host: 'loki.monitoring.svc' });
const DRIVER_IMAGE = 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04';

function errorOf(build: (chart: Chart) => void): Error {
  const chart = new Chart(Testing.app(), 'chart', { namespace: 'agents' });
  try {
    build(chart);
    synthManifests(chart);
  } catch (e) {
    expect(['Error', 'ValidationError']).toContain(thrownClass(e));
    return e as Error;
  }
  throw new Error('expected an error');
}

describe('LogCollectorDaemonSet', () => {
  const collector = (props: Untyped) => errorOf((chart) => new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], ...props }));

  test.each<[string, Untyped, string]>([
    ['a number as cpuRequest', { resources: { cpuRequest: 1 } }, 'LogCollectorDaemonSet chart/logs: prop resources.cpuRequest must be a string, got number 1'],
    ['a string httpPort', { httpPort: '2020' }, 'LogCollectorDaemonSet chart/logs: prop httpPort must be a number, got string "2020"'],
    ['outputs not an array', { outputs: LOKI }, 'LogCollectorDaemonSet chart/logs: prop outputs must be an array'],
    ['an output built by hand', { outputs: [{ kind: 'loki' }] }, 'prop outputs[0] must be made with FluentBitOutput.cloudWatchLogs(), custom(), datadog(), elasticsearch(), forward(), http(), kafka(), loki(), openSearch(), openTelemetry(), s3(), splunk() or stdout()'],
    ['stateDir /var/log', { stateDir: '/var/log' }, 'LogCollectorDaemonSet chart/logs: stateDir "/var/log" is the read-only container log directory'],
    ['a memoryRequest with a space', { resources: { memoryRequest: ' 128Mi' } }, 'resources.memoryRequest " 128Mi" has leading or trailing spaces'],
    ['metrics labels with key "]%"', { metrics: { labels: { ']%': 'x' } } }, 'metrics.labels: "]%" is not a valid label key'],
    ['a name starting with a digit and a ServiceMonitor', { name: '1collector', metrics: {} }, 'gives the Service the name "1collector-metrics", which is not a DNS-1035 label'],
    ['priorityClassName a..b', { priorityClassName: 'a..b' }, 'priorityClassName "a..b" must be a DNS-1123 subdomain'],
    ['a toleration value "bad value!"', { tolerations: [{ key: 'k', value: 'bad value!' }] }, 'tolerations[0].value: "bad value!" is not a valid label value'],
    ['runAsUser 1.5', { runAsUser: 1.5 }, 'runAsUser 1.5 must be a whole number from 0 to 2147483647'],
    ['a Prometheus interval without unit', { metrics: { interval: '30' } }, 'metrics.interval "30" is not a Prometheus duration'],
  ])('%s', (_what, props, message) => {
    expect(collector(props).message).toContain(message);
  });

  test('a PodMonitor needs no Service, so a name starting with a digit is fine there', () => {
    const chart = new Chart(Testing.app(), 'chart', { namespace: 'agents' });
    new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], name: '1collector', metrics: { kind: LogCollectorMonitorKind.POD_MONITOR } });
    expect(synthManifests(chart).map((m) => m.kind)).toContain('PodMonitor');
  });

  test('FluentBitOutput problems carry the path and name the option, not the fluent-bit key', () => {
    const message = collector({ outputs: [LOKI, FluentBitOutput.forward({ host: 'fluentd', username: '' })] }).message;
    expect(message).toBe('LogCollectorDaemonSet chart/logs: outputs[1] (FluentBitOutput forward): username is empty; give a value or leave it unset.');
    const port = collector({ outputs: [FluentBitOutput.loki({ host: 'l', port: '80' as Untyped })] }).message;
    expect(port).toBe('LogCollectorDaemonSet chart/logs: outputs[0] (FluentBitOutput loki): port must be a number, got string "80"');
  });

  test('a configuration over the ConfigMap limit is refused with the path and the fix', () => {
    const extraConfig = `[FILTER]\n    Name grep\n    Match *\n    Exclude log ${'x'.repeat(1024 * 1024)}`;
    const message = collector({ extraConfig }).message;
    expect(message).toMatch(/^LogCollectorDaemonSet chart\/logs: /);
    expect(message).toMatch(/configuration: ConfigMap "log-collector-config" holds \d+ bytes of data, above the API server's ConfigMap limit/);
  });

  test('a configuration too large for client-side apply is refused, naming server-side apply', () => {
    const extraConfig = `[FILTER]\n    Name grep\n    Match *\n    Exclude log ${'x'.repeat(300 * 1024)}`;
    expect(collector({ extraConfig }).message).toContain('apply it server-side (kubectl apply --server-side, Argo CD sync option ServerSideApply=true)');
  });
});

describe('NodeExporterDaemonSet', () => {
  const exporter = (props: Untyped) => errorOf((chart) => new NodeExporterDaemonSet(chart, 'metrics', props));

  test.each<[string, Untyped, string]>([
    ['a string port', { port: '9100' }, 'NodeExporterDaemonSet chart/metrics: prop port must be a number, got string "9100"'],
    ['collectors not strings', { enableCollectors: [5] }, 'prop enableCollectors[0] must be a NodeExporterCollector value such as NodeExporterCollector.ARP ("arp"), got number 5'],
    ['an extra argument that is no flag', { extraArgs: ['oops'] }, 'extraArgs[0] must be one node_exporter flag'],
    ['ServiceMonitor labels with key "]%"', { serviceMonitor: { labels: { ']%': 'x' } } }, 'serviceMonitor.labels: "]%" is not a valid label key'],
    ['a name starting with a digit', { name: '1exporter' }, 'gives the Service the name "1exporter", which is not a DNS-1035 label'],
    ['a sidecar runAsUser -1 (refused before building, with the path)', { sidecars: [{ name: 'proxy', image: 'p:1', runAsUser: -1 }] },
      'NodeExporterDaemonSet chart/metrics: invalid props:\n  - container "proxy" runAsUser -1 must be a whole number from 0 to 2147483647'],
    ['a port twice in one sidecar (before cdk8s-plus)', { sidecars: [{ name: 'proxy', image: 'p:1', ports: [{ name: 'a', containerPort: 9200 }, { name: 'b', containerPort: 9200 }] }] },
      'NodeExporterDaemonSet chart/metrics: port 9200/TCP is listed twice in container "proxy"'],
    ['a fractional probe period in a sidecar (refused before cdk8s-plus, with the path)', { sidecars: [{ name: 'proxy', image: 'p:1', readiness: AgentProbe.fromTcpSocket({ port: 80, periodSeconds: Duration.seconds(1.5) }) }] },
      'NodeExporterDaemonSet chart/metrics: invalid props:\n  - container "proxy" readiness probe: 1.5 must be a whole number of seconds'],
    ['a sidecar on the exporter\'s host port', { sidecars: [{ name: 'proxy', image: 'p:1', ports: [{ name: 'p', containerPort: 9100 }] }] },
      'port 9100/TCP is used by two containers, "node-exporter" and "proxy"'],
  ])('%s', (_what, props, message) => {
    expect(exporter(props).message).toContain(message);
  });
});

describe('GpuDriverDaemonSet', () => {
  const driver = (props: Untyped) => errorOf((chart) => new GpuDriverDaemonSet(chart, 'gpu', { image: DRIVER_IMAGE, ...props }));

  test.each<[string, Untyped, string]>([
    ['an extended resource as a number', { extendedResources: { 'example.com/dev': 1 } }, 'prop extendedResources["example.com/dev"] must be a string, got number 1'],
    ['an extended resource with a space', { extendedResources: { 'example.com/dev': ' 1' } }, 'extendedResources["example.com/dev"] " 1" has leading or trailing spaces'],
    ['an unknown mountPropagation', { extraHostPaths: [{ name: 'x', hostPath: '/opt/x', propagation: 'Sideways' }] }, 'prop extraHostPaths[0].propagation must be one of MountPropagation.NONE'],
    ['an env name with "="', { env: { 'A=B': AgentEnvValue.fromValue('x') } }, 'env: "A=B" is not a valid environment variable name'],
    ['a shape option of the wrong type', { shape: GpuDriverShape.driverContainer({ buildTimeSeconds: '600' as Untyped }) }, 'prop shape.buildTimeSeconds must be a number, got string "600"'],
    ['an extra init container with a probe (before cdk8s-plus)', {
      shape: GpuDriverShape.installer({ extraInitContainers: [{ name: 'check', image: 'c:1', liveness: AgentProbe.fromTcpSocket({ port: 80 }) }] }),
    }, 'shape extraInitContainers[0] ("check"): an init container runs to completion and takes no liveness probe'],
    ['grace period 1e20', { terminationGracePeriodSeconds: 1e20 }, 'terminationGracePeriodSeconds 100000000000000000000 must be a whole number'],
  ])('%s', (_what, props, message) => {
    const error = driver(props);
    expect(error.message).toMatch(/^GpuDriverDaemonSet chart\/gpu: /);
    expect(error.message).toContain(message);
  });
});
