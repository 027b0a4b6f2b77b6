import { Testing } from 'cdk8s';
import { AgentEnvValue } from '../../src/agent/container-inputs';
import {
  NodeExporterCollector, NodeExporterDaemonSet, NodeExporterDaemonSetProps, RelabelAction,
} from '../../src/constructs/node-exporter-daemon-set';
import { DBUS_SYSTEM_SOCKET, TEXTFILE_DIR, textfileDirectoryProblems } from '../../src/node-exporter/host-mounts';
import { Manifest, synthManifests } from '../util/manifests';

function synth(props?: NodeExporterDaemonSetProps): Manifest[] {
  const chart = Testing.chart();
  new NodeExporterDaemonSet(chart, 'metrics', props);
  return synthManifests(chart);
}
const build = (props: NodeExporterDaemonSetProps) => () => new NodeExporterDaemonSet(Testing.chart(), 'metrics', props);
const one = (m: Manifest[], kind: string): Manifest => {
  const list = m.filter((x) => x.kind === kind);
  expect(list).toHaveLength(1);
  return list[0];
};
const podSpec = (m: Manifest[]) => one(m, 'DaemonSet').spec.template.spec;
const container = (m: Manifest[], name: string) => podSpec(m).containers.find((c: Manifest) => c.name === name);
const volume = (m: Manifest[], name: string) => podSpec(m).volumes.find((v: Manifest) => v.name === name);

const WRITER = { name: 'textfile-writer', image: 'busybox:1.37.0', command: ['/bin/sh', '-c', 'while true; do date +"node_writer_heartbeat %s" > /host/textfile/.hb && mv /host/textfile/.hb /host/textfile/heartbeat.prom; sleep 60; done'], runAsUser: 65534 };

describe('textfile collector', () => {
  test('the host directory is mounted read-only at the collector path and passed as --collector.textfile.directory', () => {
    const m = synth({ textfileCollector: { hostDirectory: '/var/lib/node-exporter/textfile' } });
    expect(container(m, 'node-exporter').args).toContain(`--collector.textfile.directory=${TEXTFILE_DIR}`);
    expect(volume(m, 'textfile').hostPath).toEqual({ path: '/var/lib/node-exporter/textfile', type: 'DirectoryOrCreate' });
    expect(container(m, 'node-exporter').volumeMounts).toContainEqual({ name: 'textfile', mountPath: TEXTFILE_DIR, readOnly: true });
    expect(podSpec(m).containers).toHaveLength(1);
  });

  test('without the prop no textfile directory is set (node_exporter then reads none)', () => {
    const m = synth();
    expect(container(m, 'node-exporter').args.join(' ')).not.toContain('textfile.directory');
    expect(volume(m, 'textfile')).toBeUndefined();
  });

  test('a writer sidecar gets the same host directory writable; the exporter keeps it read-only', () => {
    const m = synth({ textfileCollector: { writer: WRITER } });
    const writer = container(m, 'textfile-writer');
    expect(writer.volumeMounts).toEqual([{ name: 'textfile-writer', mountPath: TEXTFILE_DIR, readOnly: false }]);
    expect(volume(m, 'textfile-writer').hostPath).toEqual({ path: '/var/lib/node-exporter/textfile', type: 'DirectoryOrCreate' });
    expect(container(m, 'node-exporter').volumeMounts.filter((v: Manifest) => v.name.startsWith('textfile'))).toEqual([{ name: 'textfile', mountPath: TEXTFILE_DIR, readOnly: true }]);
    // the writer never sees the host root
    expect(writer.volumeMounts.map((v: Manifest) => v.name)).not.toContain('root');
  });

  test('a writable host root or system directory is refused', () => {
    expect(build({ textfileCollector: { hostDirectory: '/', writer: WRITER } })).toThrow(/textfileCollector.hostDirectory \/ would be writable by the writer sidecar: the host root is never mounted writable/);
    expect(build({ textfileCollector: { hostDirectory: '/etc', writer: WRITER } })).toThrow(/system directory \/etc/);
    expect(build({ textfileCollector: { hostDirectory: '/proc/x' } })).toThrow(/kernel filesystem/);
    expect(build({ textfileCollector: { hostDirectory: 'var/lib/x' } })).toThrow(/absolute path/);
    expect(textfileDirectoryProblems('/var/lib', true)).toHaveLength(1);
    expect(textfileDirectoryProblems('/var/lib', false)).toEqual([]);
    expect(textfileDirectoryProblems('/var/lib/node-exporter/textfile', true)).toEqual([]);
  });

  test('a sidecar mounting the host root or the textfile directory writable is refused', () => {
    const sidecar = (name: string) => ({ name: 'side', image: 'busybox:1.37.0', mounts: [{ volume: name, mountPath: '/x', readOnly: false }] });
    expect(build({ sidecars: [sidecar('root')] })).toThrow(/sidecar "side" mounts the exporter's volume "root" writable; it is the host's root filesystem, never writable/);
    expect(build({ textfileCollector: {}, sidecars: [sidecar('textfile')] })).toThrow(/textfileCollector.writer/);
  });

  test('textfile disabled but a directory given is a contradiction', () => {
    expect(build({ textfileCollector: {}, disableCollectors: [NodeExporterCollector.TEXTFILE] })).toThrow(/textfileCollector is set but disableCollectors turns the textfile collector off/);
  });
});

describe('collectors that need a host path', () => {
  test.each([NodeExporterCollector.SYSTEMD, NodeExporterCollector.LOGIND])('%s mounts the D-Bus system socket read-only at its default path', (collector) => {
    const m = synth({ enableCollectors: [collector] });
    expect(volume(m, 'dbus').hostPath).toEqual({ path: DBUS_SYSTEM_SOCKET, type: 'Socket' });
    expect(container(m, 'node-exporter').volumeMounts).toContainEqual({ name: 'dbus', mountPath: '/var/run/dbus/system_bus_socket', readOnly: true });
  });

  test('one socket for both; none without them', () => {
    const m = synth({ enableCollectors: [NodeExporterCollector.SYSTEMD, NodeExporterCollector.LOGIND] });
    expect(podSpec(m).volumes.filter((v: Manifest) => v.name === 'dbus')).toHaveLength(1);
    expect(volume(synth(), 'dbus')).toBeUndefined();
  });
});

describe('monitoring, env and annotations', () => {
  const relabelings = [{ action: RelabelAction.REPLACE, sourceLabels: ['__meta_kubernetes_node_label_topology_kubernetes_io_zone'], targetLabel: 'zone' }];
  const metricRelabelings = [{ action: RelabelAction.DROP, sourceLabels: ['__name__'], regex: 'node_scrape_collector_.*' }];

  test('ServiceMonitor relabelings follow the instance one; metricRelabelings on the endpoint', () => {
    const m = synth({ serviceMonitor: { relabelings, metricRelabelings } });
    const ep = one(m, 'ServiceMonitor').spec.endpoints[0];
    expect(ep.relabelings.map((r: Manifest) => r.targetLabel)).toEqual(['instance', 'zone']);
    expect(ep.metricRelabelings).toEqual([{ action: 'drop', sourceLabels: ['__name__'], regex: 'node_scrape_collector_.*' }]);
  });

  test('a PodMonitor instead of a ServiceMonitor', () => {
    const m = synth({ podMonitor: { interval: '15s', labels: { release: 'kps' }, metricRelabelings } });
    const pm = one(m, 'PodMonitor');
    expect(pm.spec.podMetricsEndpoints[0]).toMatchObject({ port: 'metrics', interval: '15s', scheme: 'http' });
    expect(pm.metadata.labels.release).toBe('kps');
    expect(m.filter((x) => x.kind === 'ServiceMonitor')).toHaveLength(0);
    expect(build({ serviceMonitor: {}, podMonitor: {} })).toThrow(/scraped twice/);
    expect(build({ podMonitor: {}, kubeRbacProxy: {} })).toThrow(/no bearerTokenFile/);
  });

  test('bad relabelings are refused at synthesis', () => {
    expect(build({ serviceMonitor: { relabelings: [{ action: RelabelAction.REPLACE, sourceLabels: ['a'] }] } })).toThrow(/serviceMonitor.relabelings\[0\]: action replace needs targetLabel/);
    expect(build({ serviceMonitor: { metricRelabelings: [{ action: RelabelAction.HASHMOD, targetLabel: 't', sourceLabels: ['a'] }] } })).toThrow(/modulus/);
    expect(build({ serviceMonitor: { metricRelabelings: [{ action: RelabelAction.DROP, sourceLabels: ['bad-label'] }] } })).toThrow(/not a label name/);
    expect(build({ serviceMonitor: { metricRelabelings: [{ action: RelabelAction.DROP, regex: '(' }] } })).toThrow(/does not compile/);
  });

  test('extraEnv and podAnnotations (shared pod settings) reach the exporter pod; HOST_IP stays the downward API one', () => {
    const m = synth({ extraEnv: { GOMAXPROCS: AgentEnvValue.fromValue('1') }, podAnnotations: { 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true' } });
    expect(container(m, 'node-exporter').env).toContainEqual({ name: 'GOMAXPROCS', value: '1' });
    expect(one(m, 'DaemonSet').spec.template.metadata.annotations).toMatchObject({
      'cluster-autoscaler.kubernetes.io/safe-to-evict': 'true', 'kubectl.kubernetes.io/default-container': 'node-exporter',
    });
    expect(build({ extraEnv: { HOST_IP: AgentEnvValue.fromValue('1.2.3.4') } })).toThrow(/extraEnv.HOST_IP/);
  });
});

test('the node-exporter example enables the textfile collector read-only', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { buildApp } = require('../../examples/node-exporter/main');
  const m = synthManifests(buildApp('/tmp/node-exporter-parity-example'));
  expect(container(m, 'node-exporter').args).toContain('--collector.textfile.directory=/host/textfile');
  expect(container(m, 'node-exporter').volumeMounts).toContainEqual({ name: 'textfile', mountPath: '/host/textfile', readOnly: true });
});
