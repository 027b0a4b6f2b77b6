/**
 * The base construct on its own: node-problem-detector, a node agent that reads the kernel log and
 * reports node conditions and events to the API server.
 *
 * config/kernel-monitor.json and config/readonly-monitor.json are upstream's, as released in
 * node-problem-detector v0.8.25 (its config/ directory): 4 conditions and 15 rules between them.
 * Upstream's DaemonSet also loads docker-monitor.json (the journald plugin, dockerd's unit), left
 * out here: the nodes run containerd.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import { AgentEnvFieldPath, AgentProbe, HostPathType, NodeAgentDaemonSet, TaintEffect, TolerationOperator, UpdateStrategy } from 'cdk8s-node-agents';

const MONITORS = ['kernel-monitor.json', 'readonly-monitor.json'];

const app = new App({ outdir: path.join(__dirname, 'dist'), yamlOutputType: YamlOutputType.FILE_PER_CHART });
const chart = new Chart(app, 'node-problem-detector');

new NodeAgentDaemonSet(chart, 'npd', {
  name: 'node-problem-detector',
  namespace: 'node-health',
  createNamespace: true,
  image: 'registry.k8s.io/node-problem-detector/node-problem-detector:v0.8.25',
  command: [
    '/node-problem-detector', '--logtostderr', `--config.system-log-monitor=${MONITORS.map((m) => `/config/${m}`).join(',')}`,
    // Both servers listen on 127.0.0.1 by default, where the kubelet's probes (sent to the pod IP)
    // and Prometheus cannot reach them.
    '--address=0.0.0.0', '--port=20256', '--prometheus-address=0.0.0.0', '--prometheus-port=20257',
  ],
  fieldEnv: { NODE_NAME: AgentEnvFieldPath.NODE_NAME },
  // The kmsg monitor opens /dev/kmsg, a host device: without privilege the open fails and, as the
  // only monitor configured, the daemon exits. Upstream's DaemonSet runs it privileged too.
  runAsRoot: true,
  privileged: true,
  hostPaths: [
    { name: 'log', hostPath: '/var/log' },
    { name: 'kmsg', hostPath: '/dev/kmsg', type: HostPathType.CHAR_DEVICE },
    // No /etc/localtime (upstream mounts it untyped): only the filelog plugin reads local times, and
    // typed File it keeps the pod from starting on nodes without one.
  ],
  configMountPath: '/config',
  configData: Object.fromEntries(MONITORS.map((m) => [m, fs.readFileSync(path.join(__dirname, 'config', m), 'utf8')])),
  resources: { cpuRequest: '20m', memoryRequest: '64Mi', memoryLimit: '128Mi' },
  ports: [{ name: 'healthz', containerPort: 20256 }, { name: 'metrics', containerPort: 20257 }],
  readiness: AgentProbe.fromHttpGet('/healthz', { port: 20256 }),
  liveness: AgentProbe.fromHttpGet('/healthz', { port: 20256, failureThreshold: 6 }),
  updateStrategy: UpdateStrategy.oneAtATime(),
  // As upstream's DaemonSet: every NoSchedule and NoExecute taint (GPU, spot, control-plane pools;
  // the control-plane tolerations are among them).
  tolerateControlPlane: false,
  tolerations: [
    { operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE },
    { operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_EXECUTE },
  ],
  rbacRules: [
    { resources: ['nodes'], verbs: ['get'] },
    { resources: ['nodes/status'], verbs: ['patch'] },
    { resources: ['events'], verbs: ['create', 'patch', 'update'] },
  ],
});

app.synth();
