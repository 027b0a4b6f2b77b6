/**
 * Example: a cluster running the fluent/fluent-bit chart (0.58.1, release `fluent-bit` in `logging`) and the
 * prometheus-community/prometheus-node-exporter chart (4.56.1, release `prometheus-node-exporter` in
 * `monitoring`) with their default values moves to this library, one commit per stage. Each stage's YAML is in
 * dist/<stage>/:
 *
 *   1-chart     what the charts render today (chart-rendered/, written from the charts' templates and values)
 *   2-adopt     the agents adopt the charts' DaemonSets: same names, namespaces and selectors, so each DaemonSet
 *               is updated in place at the agent's pace; the collector starts at the end of the files on disk
 *   3-complete  `completed: true` once every node runs the new pods: the collector reads files without an
 *               offset from their start again (one more restart per node, resuming from its tail DB)
 *   4-waves     rollout waves enabled (a canary wave): the adopted DaemonSet stays the fleet's
 *
 * The README's "Adopting a running install" gives the procedure around these commits (how the Helm release or
 * the Argo CD Application stops owning the objects, what the charts leave behind, rollback at each step).
 */
import * as fs from 'fs';
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import {
  AgentAdoption, AgentRollout, FluentBitOutput, LogCollectorDaemonSet, NodeExporterDaemonSet, Promotion, RolloutWave,
} from 'cdk8s-node-agents';

/** The same destination the chart's default config ships to. */
const OUTPUTS = [FluentBitOutput.elasticsearch({ host: 'elasticsearch-master', logstashFormat: true })];

interface Stage {
  readonly name: string;
  readonly completed: boolean;
  readonly rollout?: AgentRollout;
}

export const STAGES: Stage[] = [
  { name: '2-adopt', completed: false },
  { name: '3-complete', completed: true },
  { name: '4-waves', completed: true, rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all() } },
];

/** One library stage as a cdk8s app writing to `outdir`. */
export function buildStage(stage: Stage, outdir: string, options: { adopt?: boolean } = {}): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const adopt = options.adopt ?? true;
  const logs = new Chart(app, 'logging', { namespace: 'logging' });
  new LogCollectorDaemonSet(logs, 'fluent-bit', {
    outputs: OUTPUTS,
    adopt: adopt ? AgentAdoption.fluentBitChart({ namespace: 'logging', completed: stage.completed }) : undefined,
    rollout: stage.rollout,
  });
  const metrics = new Chart(app, 'monitoring', { namespace: 'monitoring' });
  new NodeExporterDaemonSet(metrics, 'node-exporter', {
    adopt: adopt ? AgentAdoption.nodeExporterChart({ namespace: 'monitoring', completed: stage.completed }) : undefined,
    rollout: stage.rollout,
  });
  return app;
}

/** Writes examples/migrate-from-helm/dist/<stage>/. */
export function synthesize(outdir: string = path.join(__dirname, 'dist')): void {
  const chart = path.join(outdir, '1-chart');
  fs.mkdirSync(chart, { recursive: true });
  for (const file of fs.readdirSync(path.join(__dirname, 'chart-rendered')).sort()) {
    fs.copyFileSync(path.join(__dirname, 'chart-rendered', file), path.join(chart, file));
  }
  for (const stage of STAGES) buildStage(stage, path.join(outdir, stage.name)).synth();
}

if (require.main === module) {
  synthesize();
}
