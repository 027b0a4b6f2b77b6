/**
 * Example: a cluster whose node exporter comes from kube-prometheus-stack (release `kps` in `monitoring`, its
 * `prometheus-node-exporter` subchart with the stack's values) moves to this library's exporter, keeping the job.
 *
 *   npx ts-node --project test/tsconfig.json examples/synth-all.ts adopt-kube-prometheus-stack
 *
 * writes dist/monitoring.k8s.yaml and dist/adoption.md (what the install leaves behind and what becomes of it).
 *
 * The stack labels its exporter's Service and pods `jobLabel: node-exporter` and its ServiceMonitor reads the job
 * from that label, so the series carry `job="node-exporter"`, which the stack's node recording rules, alerts and
 * dashboards select (`instance:node_num_cpu:sum`, NodeFilesystemSpaceFillingUp, the Node Exporter dashboards).
 * `kubePrometheusStack: true` keeps that job: the adopting exporter's Service and pods carry the same label and
 * its ServiceMonitor reads the job from it. Without it the job would become `prometheus-node-exporter` and those
 * rules would go empty after the switch.
 *
 * Around this commit: set `nodeExporter.enabled: false` in the stack's values (the stack stops rendering the
 * subchart) in the same sync, or orphan the objects first, as docs/adopting-helm.md says.
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import { AgentAdoption, NodeExporterDaemonSet } from 'cdk8s-node-agents';

/** The stack's node exporter, adopted: its name, namespace, selector and job kept. */
export const ADOPTION = AgentAdoption.nodeExporterChart({ namespace: 'monitoring', releaseName: 'kps', kubePrometheusStack: true });

/** The app: the exporter adopting the subchart's DaemonSet, with a ServiceMonitor the stack's Prometheus selects. */
export function buildApp(outdir: string): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const chart = new Chart(app, 'monitoring', { namespace: 'monitoring' });
  new NodeExporterDaemonSet(chart, 'node-exporter', {
    adopt: ADOPTION,
    // kube-prometheus-stack's Prometheus selects ServiceMonitors labelled `release: <release>`
    serviceMonitor: { labels: { release: 'kps' } },
  });
  return app;
}

/** The adoption as a person reads it before the switch. */
export function adoptionDoc(): string {
  const rows = ADOPTION.leftovers.map((o) => `| ${o.kind} | ${o.namespace ? `${o.namespace}/` : ''}${o.name} | ${o.onlyWhen ?? 'always'} | ${o.fate} |`);
  return [
    `# Adopting ${ADOPTION.chart}`,
    '',
    `DaemonSet \`${ADOPTION.namespace}/${ADOPTION.daemonSetName}\`, selector ${Object.entries(ADOPTION.selector).map(([k, v]) => `\`${k}: ${v}\``).join(', ')}.`,
    `The series keep \`job="${ADOPTION.job}"\` (label \`${ADOPTION.jobLabelKey}\` on the Service and the pods).`,
    '',
    '| kind | name | rendered when | after the switch |',
    '|---|---|---|---|',
    ...rows,
    '',
  ].join('\n');
}

/** Writes examples/adopt-kube-prometheus-stack/dist/. */
export function synthesize(outdir: string = path.join(__dirname, 'dist')): void {
  buildApp(outdir).synth();
  fs.writeFileSync(path.join(outdir, 'adoption.md'), adoptionDoc());
}

if (require.main === module) {
  synthesize();
}
