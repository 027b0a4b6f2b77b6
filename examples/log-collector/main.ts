/**
 * Example: a fluent-bit log collector on every node shipping to Loki.
 *
 *   npx ts-node --project test/tsconfig.json examples/synth-all.ts log-collector
 *
 * writes examples/log-collector/dist/log-collector.k8s.yaml. The Loki password is read from the
 * Secret `loki-credentials` (key `password`) in the `observability` namespace, which is not part of
 * this app: create it out of band (e.g. with an external-secrets ExternalSecret).
 */
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import { Construct } from 'constructs';
import { FluentBitFilter, FluentBitOutput, LogCollectorDaemonSet, LogCollectorMonitorKind } from 'cdk8s-node-agents';

/** The chart of the example: the collector, its RBAC, config and a ServiceMonitor. */
export class LogCollectorChart extends Chart {
  public readonly collector: LogCollectorDaemonSet;

  public constructor(scope: Construct, id: string) {
    super(scope, id);
    this.collector = new LogCollectorDaemonSet(this, 'logs', {
      createNamespace: true,
      outputs: [
        FluentBitOutput.loki({
          host: 'loki-gateway.monitoring.svc',
          port: 80,
          tenantId: 'platform',
          httpUser: 'fluent-bit',
          httpPassword: { secretName: 'loki-credentials', key: 'password' },
          labels: {
            job: 'fluent-bit',
            namespace: "$kubernetes['namespace_name']",
            container: "$kubernetes['container_name']",
          },
          // pod annotations are nested under `kubernetes` by the kubernetes filter
          removeKeys: ["$kubernetes['annotations']"],
        }),
      ],
      // kubelet and containerd logs from the journal as well
      systemdInput: true,
      // kube-system's chatter is never read (skipped by the tail input, before any lookup)
      excludeNamespaces: ['kube-system'],
      filters: [
        // load balancer and kubelet probes hitting health endpoints: noise in every access log
        FluentBitFilter.grep({ exclude: [{ key: 'log', regex: '"GET /(healthz|readyz|livez)' }] }),
        // which cluster a line comes from, once several clusters ship to one Loki
        FluentBitFilter.modify({ set: { cluster: 'prod-eu-1' } }),
      ],
      metrics: { kind: LogCollectorMonitorKind.SERVICE_MONITOR, labels: { release: 'kube-prometheus-stack' } },
    });
  }
}

/** Build the example app writing to `outdir`. */
export function buildApp(outdir: string = path.join(__dirname, 'dist')): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  new LogCollectorChart(app, 'log-collector');
  return app;
}

/** Synthesize the example to examples/log-collector/dist/. */
export function synthesize(outdir?: string): void {
  buildApp(outdir).synth();
}

if (require.main === module) {
  synthesize();
}
