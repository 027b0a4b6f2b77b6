/**
 * Example: a fleet of six clusters in three environments in one GitOps repository. Every cluster runs
 * fluent-bit over node rollout waves; the two clusters with GPU node pools also run the NVIDIA driver.
 * Argo CD rolls a change out cluster wave by cluster wave: the dev cluster (canary), then the staging
 * clusters (early, a quarter at a time), then production (rest).
 *
 *   npx ts-node --project test/tsconfig.json examples/synth-all.ts fleet
 *
 * writes examples/fleet/dist/:
 * - clusters/<cluster>/node-agents.k8s.yaml: one folder per cluster, a file per chart;
 * - argocd/node-agents.k8s.yaml: the ApplicationSet (list generator over the folders, RollingSync).
 *
 * README.md walks through moving fluent-bit to a new version fleet-wide, one commit per stage.
 */
import * as path from 'path';
import { Chart } from 'cdk8s';
import {
  AgentFleet, FleetCluster, FleetStage, FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, LogCollectorDaemonSet, LogCollectorDaemonSetProps,
  NodeExporterDaemonSet, RolloutWave,
} from 'cdk8s-node-agents';

/** The fluent-bit version the code names, and how far it is promoted (see README.md). */
const LOG_COLLECTOR_IMAGE = 'cr.fluentbit.io/fluent/fluent-bit:4.1.1';
const STAGE = FleetStage.all();
/** While a rollout is under way: the version the clusters and nodes not yet promoted keep. */
const PREVIOUS_IMAGE: string | undefined = undefined;

const NODE_WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];

/** Build the fleet writing to `outdir`. */
export function buildFleet(outdir: string = path.join(__dirname, 'dist')): AgentFleet {
  return new AgentFleet({
    outdir,
    repoUrl: 'https://git.example.com/platform/node-agents.git',
    repoPath: 'examples/fleet/dist',
    agents: {
      addAgents(cluster: FleetCluster, chart: Chart) {
        // One release of the collector: its props for an image (the cluster's Loki endpoint differs).
        const collector = (image: string): LogCollectorDaemonSetProps => ({
          name: 'fluent-bit',
          image,
          outputs: [FluentBitOutput.loki({ host: cluster.setting('loki-host', 'loki-gateway.monitoring.svc'), port: 80 })],
        });
        new LogCollectorDaemonSet(chart, 'logs', {
          ...collector(LOG_COLLECTOR_IMAGE),
          rollout: {
            waves: NODE_WAVES,
            promoted: cluster.promotion(STAGE),
            previous: PREVIOUS_IMAGE ? LogCollectorDaemonSet.release(collector(PREVIOUS_IMAGE)) : undefined,
          },
        });
        new NodeExporterDaemonSet(chart, 'metrics');
        if (cluster.hasGpus) {
          new GpuDriverDaemonSet(chart, 'nvidia', {
            image: 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04',
            shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 30 * 60 }),
          });
        }
      },
    },
    clusters: [
      { name: 'dev-eu-1', environment: 'dev', region: 'eu-west-1', wave: 'canary' },
      { name: 'staging-eu-1', environment: 'staging', region: 'eu-west-1', wave: 'early' },
      { name: 'staging-us-1', environment: 'staging', region: 'us-east-1', wave: 'early' },
      { name: 'prod-eu-1', environment: 'prod', region: 'eu-west-1', hasGpus: true, settings: { 'loki-host': 'loki.prod-eu-1.example.com' } },
      { name: 'prod-us-1', environment: 'prod', region: 'us-east-1', hasGpus: true, settings: { 'loki-host': 'loki.prod-us-1.example.com' } },
      { name: 'prod-ap-1', environment: 'prod', region: 'ap-southeast-1', settings: { 'loki-host': 'loki.prod-ap-1.example.com' } },
    ],
  });
}

/** Synthesize the example to examples/fleet/dist/. */
export function synthesize(outdir?: string): void {
  buildFleet(outdir).synth();
}

if (require.main === module) {
  synthesize();
}
