/**
 * Example: Prometheus node_exporter on every node, scraped through a ServiceMonitor.
 *
 *   npx ts-node --project test/tsconfig.json examples/synth-all.ts node-exporter
 *
 * writes examples/node-exporter/dist/node-exporter.k8s.yaml. It expects the `monitoring` namespace
 * and a Prometheus Operator (kube-prometheus-stack installed as release `kube-prometheus-stack`,
 * whose Prometheus selects ServiceMonitors labelled `release: kube-prometheus-stack`).
 *
 * The namespace is not created here: node-exporter needs the `privileged` Pod Security level
 * (hostNetwork, hostPID, hostPath), and labelling the shared monitoring namespace so is a decision
 * for whoever owns it (`createNamespace: true` with `ownMonitoringNamespace: true` does it; without the
 * second prop the exporter refuses to create `monitoring`).
 */
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import { Construct } from 'constructs';
import { NodeExporterCollector, NodeExporterDaemonSet } from 'cdk8s-node-agents';

/** The chart of the example: the exporter DaemonSet, its Service and ServiceMonitor. */
export class NodeExporterChart extends Chart {
  public readonly exporter: NodeExporterDaemonSet;

  public constructor(scope: Construct, id: string) {
    super(scope, id);
    this.exporter = new NodeExporterDaemonSet(this, 'metrics', {
      // process and thread counts by state, on top of the default collectors (read from /proc)
      enableCollectors: [NodeExporterCollector.PROCESSES],
      // *.prom files that node tooling (e.g. the OS updater, a backup job) drops on the host
      textfileCollector: { hostDirectory: '/var/lib/node-exporter/textfile' },
      serviceMonitor: {
        interval: '30s',
        labels: { release: 'kube-prometheus-stack' },
        // the cluster's name on every series, once several clusters feed one Thanos or Mimir
        relabelings: [{ targetLabel: 'cluster', replacement: 'prod-eu-1' }],
      },
    });
  }
}

/** Build the example app writing to `outdir`. */
export function buildApp(outdir: string = path.join(__dirname, 'dist')): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  new NodeExporterChart(app, 'node-exporter');
  return app;
}

/** Synthesize the example to examples/node-exporter/dist/. */
export function synthesize(outdir?: string): void {
  buildApp(outdir).synth();
}

if (require.main === module) {
  synthesize();
}
