/**
 * The base construct on its own: node-problem-detector, a node agent that reads the kernel log and
 * reports node conditions and events to the API server.
 */
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { HostPathType, NodeAgentDaemonSet, UpdateStrategy } from 'cdk8s-node-agents';

const app = new App({ outdir: path.join(__dirname, 'dist'), yamlOutputType: YamlOutputType.FILE_PER_CHART });
const chart = new Chart(app, 'node-problem-detector');

new NodeAgentDaemonSet(chart, 'npd', {
  name: 'node-problem-detector',
  namespace: 'node-health',
  createNamespace: true,
  image: 'registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.20',
  command: [
    '/node-problem-detector', '--logtostderr', '--config.system-log-monitor=/config/kernel-monitor.json',
    // Both servers listen on 127.0.0.1 by default, where the kubelet's probes (sent to the pod IP)
    // and Prometheus cannot reach them.
    '--address=0.0.0.0', '--port=20256', '--prometheus-address=0.0.0.0', '--prometheus-port=20257',
  ],
  fieldEnv: { NODE_NAME: kplus.EnvFieldPaths.NODE_NAME },
  // The kmsg monitor opens /dev/kmsg, a host device: without privilege the open fails and, as the
  // only monitor configured, the daemon exits. Upstream's DaemonSet runs it privileged too.
  runAsRoot: true,
  privileged: true,
  hostPaths: [
    { name: 'log', hostPath: '/var/log' },
    { name: 'kmsg', hostPath: '/dev/kmsg', type: HostPathType.CHAR_DEVICE },
    { name: 'localtime', hostPath: '/etc/localtime', type: HostPathType.FILE },
  ],
  configMountPath: '/config',
  configData: {
    'kernel-monitor.json': JSON.stringify({
      plugin: 'kmsg',
      logPath: '/dev/kmsg',
      lookback: '5m',
      bufferSize: 10,
      source: 'kernel-monitor',
      conditions: [{ type: 'KernelDeadlock', reason: 'KernelHasNoDeadlock', message: 'kernel has no deadlock' }],
      rules: [
        { type: 'temporary', reason: 'OOMKilling', pattern: 'Killed process \\d+ (.+) total-vm:\\d+kB, anon-rss:\\d+kB, file-rss:\\d+kB.*' },
        { type: 'permanent', condition: 'KernelDeadlock', reason: 'DockerHung', pattern: 'task docker:\\w+ blocked for more than \\w+ seconds\\.' },
      ],
    }, null, 2),
  },
  resources: { cpuRequest: '20m', memoryRequest: '64Mi', memoryLimit: '128Mi' },
  ports: [{ name: 'healthz', containerPort: 20256 }, { name: 'metrics', containerPort: 20257 }],
  readiness: kplus.Probe.fromHttpGet('/healthz', { port: 20256 }),
  liveness: kplus.Probe.fromHttpGet('/healthz', { port: 20256, failureThreshold: 6 }),
  updateStrategy: UpdateStrategy.oneAtATime(),
  rbacRules: [
    { resources: ['nodes'], verbs: ['get'] },
    { resources: ['nodes/status'], verbs: ['patch'] },
    { resources: ['events'], verbs: ['create', 'patch', 'update'] },
  ],
});

app.synth();
