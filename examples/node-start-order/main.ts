/**
 * Example: node agents first in, last out. Each agent has a readiness taint: new nodes join with it (Karpenter's
 * NodePool `startupTaints`), the agent's own pod removes it from its node once Ready, and workloads land only after
 * every agent runs there. The agents tolerate each other's taints, so they all start at once.
 *
 *   npx ts-node --project test/tsconfig.json examples/synth-all.ts node-start-order
 *
 * writes to examples/node-start-order/dist/:
 * - node-agents.k8s.yaml: the log collector, node-exporter and GPU driver, each with its remover container, its
 *   ClusterRole (nodes get/patch), Role (pods get) and the ValidatingAdmissionPolicy that narrows the patch to
 *   removing its taint from its own node (Kubernetes 1.30 or later);
 * - node-pools-and-images.md: what the node pool and node image owners configure: the NodePools' `startupTaints`
 *   entries, and the kubelet's shutdown by pod priority that stops the agents last.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import {
  FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, LogCollectorDaemonSet, NodeExporterDaemonSet, NodeShutdown, ReadinessTaintConsumer,
  TaintEffect, TolerationOperator,
} from 'cdk8s-node-agents';

const LOGS_TAINT = 'node-agents.cdk8s.io/logs-not-ready';
const METRICS_TAINT = 'node-agents.cdk8s.io/metrics-not-ready';
const GPU_DRIVER_TAINT = 'node-agents.cdk8s.io/gpu-driver-not-ready';

/** Build the example app writing to `outdir`; returns the NodePools' and the kubelet's snippets. */
export function synthesize(outdir: string = path.join(__dirname, 'dist')): void {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const chart = new Chart(app, 'node-agents');
  const logs = new LogCollectorDaemonSet(chart, 'logs', {
    createNamespace: true,
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', port: 80 })],
    // the collector tolerates every taint already (tolerateAllTaints): it starts beside the other agents
    readinessTaint: { key: LOGS_TAINT, consumers: [ReadinessTaintConsumer.KARPENTER] },
  });
  const metrics = new NodeExporterDaemonSet(chart, 'metrics', {
    readinessTaint: { key: METRICS_TAINT, consumers: [ReadinessTaintConsumer.KARPENTER] },
  });
  // The driver tolerates the other agents' taints besides the GPU pools' own (`tolerations` adds to it):
  // an agent that waits for another's taint starts only after it, and never if the two wait for each other
  // (`node-agents coverage` says so).
  const gpu = new GpuDriverDaemonSet(chart, 'nvidia', {
    image: 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04',
    shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 30 * 60 }),
    tolerations: [LOGS_TAINT, METRICS_TAINT].map((key) => ({ key, operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE })),
    // GPU workloads land once the driver is loaded: its pod turns Ready only when its probe finds the module
    readinessTaint: { key: GPU_DRIVER_TAINT, consumers: [ReadinessTaintConsumer.KARPENTER] },
  });
  app.synth();

  // karpenterStartupTaints(): the list form, empty while a rollout holds a group that does not remove the taint
  const entries = (agents: { karpenterStartupTaints(): { key: string; effect: string }[] }[]) => agents
    .flatMap((a) => a.karpenterStartupTaints()).map((t) => `        - key: ${t.key}\n          effect: ${t.effect}`).join('\n');
  const doc = [
    '# Node start and node shutdown: what the node pools and node images configure',
    '',
    '## Karpenter NodePools: the agents\' readiness taints as startup taints',
    '',
    'Karpenter puts each startup taint on every node it launches from the pool, ignores them when it decides whether',
    'pending pods fit the new node, and leaves them to the agents, whose pods remove them once Ready.',
    '',
    '```yaml',
    'apiVersion: karpenter.sh/v1',
    'kind: NodePool',
    'metadata:',
    '  name: general',
    'spec:',
    '  template:',
    '    spec:',
    '      startupTaints:',
    entries([logs.agent, metrics.agent]),
    '```',
    '',
    'GPU NodePools add the driver\'s (its DaemonSet runs on GPU nodes only: a pool whose nodes it does not cover must',
    'not list it, or nothing removes it):',
    '',
    '```yaml',
    '      startupTaints:',
    entries([logs.agent, metrics.agent, gpu.agent]),
    '```',
    '',
    '## Node images: the kubelet stops the node agents last',
    '',
    '```yaml',
    NodeShutdown.kubeletConfiguration({ workloadSeconds: 120, agentSeconds: 65 }).trimEnd(),
    '```',
    '',
  ].join('\n');
  fs.writeFileSync(path.join(outdir, 'node-pools-and-images.md'), doc);
}

if (require.main === module) {
  synthesize();
}
