/**
 * Example: a fluent-bit log collector sized by instance size, across three Karpenter NodePools, rolled out over
 * canary waves.
 *
 *   npx ts-node --project test/tsconfig.json examples/synth-all.ts log-collector-profiles
 *
 * writes examples/log-collector-profiles/dist/log-collector-profiles.k8s.yaml. fluent-bit's memory grows with the
 * pods on a node: gardener measured 220-270 MB at about 30 pods per node and 400-450 MB at 200
 * (gardener/gardener#7564), and one request for every node either OOM-kills the collectors on big nodes or wastes
 * small ones. So the collector takes three sizes, by the vCPUs Karpenter labels each node with
 * (`karpenter.k8s.aws/instance-cpu`, which bounds the pods a node gets): up to 7 vCPUs (m7i.large to
 * m7i.xlarge, g5.xlarge: at most 58 pods), 8 to 31, and 32 and more (234 pods and up). The pools
 * (nodepools.yaml) span the sizes: `general` (m7i, 2-16 vCPUs), `compute` (c7i, 8-48 vCPUs) and `gpu` (g5,
 * tainted nvidia.com/gpu, which the collector tolerates with every other taint). Check the agents against the
 * pools before a node exists, with the instance types they may launch (instance-types.yaml: a file of its own,
 * kept out of the manifests a GitOps tool syncs, as no cluster has its kind):
 *
 *   node-agents plan --nodes examples/log-collector-profiles/nodes.json \
 *     --before examples/log-collector-profiles/dist --after examples/log-collector-profiles/dist \
 *     --nodepools examples/log-collector-profiles/nodepools.yaml \
 *     --instance-types examples/log-collector-profiles/instance-types.yaml --cost
 */
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import { Construct } from 'constructs';
import { FluentBitOutput, LogCollectorDaemonSet, Promotion, ResourceProfileNodes, RolloutWave } from 'cdk8s-node-agents';

/** The chart of the example: the collector in three sizes, each over the canary waves. */
export class LogCollectorProfilesChart extends Chart {
  public readonly collector: LogCollectorDaemonSet;

  public constructor(scope: Construct, id: string) {
    super(scope, id);
    this.collector = new LogCollectorDaemonSet(this, 'logs', {
      createNamespace: true,
      outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', port: 80, tenantId: 'platform' })],
      excludeNamespaces: ['kube-system'],
      // small nodes (up to 7 vCPUs, at most 58 pods; and any node without the label): 220-270 MB measured at 30 pods
      resources: { cpuRequest: '100m', memoryRequest: '256Mi', memoryLimit: '512Mi' },
      resourceProfiles: [
        {
          // 32 vCPUs and more (234 pods and up): 400-450 MB measured at 200 pods, and more chunks in memory
          name: 'large',
          nodes: ResourceProfileNodes.instanceCpu({ min: 32 }),
          resources: { cpuRequest: '200m', memoryRequest: '450Mi', memoryLimit: '800Mi' },
          storageMaxChunksUp: 192,
        },
        {
          // 8 to 31 vCPUs (58 to 234 pods)
          name: 'medium',
          nodes: ResourceProfileNodes.instanceCpu({ min: 8, max: 31 }),
          resources: { cpuRequest: '150m', memoryRequest: '350Mi', memoryLimit: '650Mi' },
          storageMaxChunksUp: 128,
        },
      ],
      // every size goes through the same waves: each wave has a DaemonSet per size
      rollout: {
        waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')],
        promoted: Promotion.all(),
      },
      alerts: {},
    });
  }
}

/** Build the example app writing to `outdir`. */
export function buildApp(outdir: string = path.join(__dirname, 'dist')): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  new LogCollectorProfilesChart(app, 'log-collector-profiles');
  return app;
}

/** Synthesize the example to examples/log-collector-profiles/dist/. */
export function synthesize(outdir?: string): void {
  buildApp(outdir).synth();
}

if (require.main === module) {
  synthesize();
}
