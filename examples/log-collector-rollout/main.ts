/**
 * Example: upgrading the log collector from fluent-bit 4.1.1 to 4.2.3 over rollout waves,
 * canary → wave-1 → fleet, one commit per stage. Each stage's YAML is in dist/<stage>/:
 *
 *   0-before   4.1.1 everywhere (waves already enabled)
 *   1-canary   4.2.3 on the canary nodes only          (only DaemonSet logs-canary changes)
 *   2-wave-1   4.2.3 on canary and wave-1              (only DaemonSet logs-wave-1 changes)
 *   3-fleet    4.2.3 everywhere                        (only DaemonSet logs changes; the 4.1.1 ConfigMap goes)
 *   4-done     `previous` removed from the code         (no manifest changes at all)
 *
 * Rolling back a stage is reverting its commit: the earlier stage's YAML comes back byte for byte.
 * Nodes join a wave through the label node-agents.cdk8s.io/rollout-wave=<wave>; compute it from the
 * node inventory with `node-agents label --nodes nodes.json --wave canary=0.05 --wave wave-1=0.25`.
 */
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import { AgentRollout, FluentBitOutput, LogCollectorDaemonSet, Promotion, RolloutWave } from 'cdk8s-node-agents';

const PREVIOUS_IMAGE = 'cr.fluentbit.io/fluent/fluent-bit:4.1.1';
const CURRENT_IMAGE = 'cr.fluentbit.io/fluent/fluent-bit:4.2.3';
const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];

/** The stages, in commit order: the image the code names and its rollout prop. */
const STAGES: Array<{ name: string; image: string; rollout: AgentRollout }> = [
  { name: '0-before', image: PREVIOUS_IMAGE, rollout: { waves: WAVES, promoted: Promotion.all() } },
  { name: '1-canary', image: CURRENT_IMAGE, rollout: { waves: WAVES, promoted: Promotion.through('canary'), previous: { image: PREVIOUS_IMAGE } } },
  { name: '2-wave-1', image: CURRENT_IMAGE, rollout: { waves: WAVES, promoted: Promotion.through('wave-1'), previous: { image: PREVIOUS_IMAGE } } },
  { name: '3-fleet', image: CURRENT_IMAGE, rollout: { waves: WAVES, promoted: Promotion.all(), previous: { image: PREVIOUS_IMAGE } } },
  { name: '4-done', image: CURRENT_IMAGE, rollout: { waves: WAVES, promoted: Promotion.all() } },
];

/** One stage of the upgrade as a cdk8s app writing to `outdir`. */
export function buildStage(stage: (typeof STAGES)[number], outdir: string): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const chart = new Chart(app, 'log-collector');
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'logs',
    image: stage.image,
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', port: 80 })],
    rollout: stage.rollout,
  });
  return app;
}

/** Synthesize every stage to examples/log-collector-rollout/dist/<stage>/. */
export function synthesize(outdir: string = path.join(__dirname, 'dist')): void {
  for (const stage of STAGES) buildStage(stage, path.join(outdir, stage.name)).synth();
}

if (require.main === module) {
  synthesize();
}
