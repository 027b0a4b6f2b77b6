/**
 * Example: upgrading the log collector from fluent-bit 4.1.1 to 4.2.3, adding an Elasticsearch
 * output with credentials, over rollout waves canary → wave-1 → fleet, one commit per stage. The
 * previous release is its own props (PREVIOUS), so held waves render exactly as before. Each
 * stage's YAML is in dist/<stage>/:
 *
 *   0-before   4.1.1 everywhere (waves already enabled)
 *   1-canary   4.2.3 on the canary nodes only          (DaemonSet logs-canary changes; the new ConfigMap is added;
 *                                                        logs-prepull-canary pulls 4.2.3 on the canary nodes first)
 *   2-wave-1   4.2.3 on canary and wave-1              (only DaemonSet logs-wave-1 changes)
 *   3-fleet    4.2.3 everywhere                        (only DaemonSet logs changes; the 4.1.1 ConfigMap goes)
 *   4-done     `previous` removed from the code         (no manifest changes at all)
 *
 * Every stage has the same alerts (a PrometheusRule covering all three DaemonSets), the same watchers
 * and the same gate: with Argo CD sync waves, the canary's DaemonSet and its watcher Job are applied
 * first (sync wave 1; the watcher follows the canary's new pods until every one is updated and
 * available, and fails on the first that crash-loops), then a Sync hook Job (sync wave 2) bakes 10
 * minutes and queries Prometheus; wave-1 (3) and the fleet (5), each with its watcher, are applied
 * only when the gate passes.
 *
 * Rolling back a stage is reverting its commit: the earlier stage's YAML comes back byte for byte.
 * Nodes join a wave through the label node-agents.cdk8s.io/rollout-wave=<wave>; compute it from the
 * node inventory with `node-agents label --nodes nodes.json --wave canary=0.05 --wave wave-1=0.25`.
 */
import * as path from 'path';
import { App, Chart, YamlOutputType } from 'cdk8s';
import { AgentRollout, FluentBitOutput, LogCollectorDaemonSet, LogCollectorDaemonSetProps, Promotion, RolloutWave } from 'cdk8s-node-agents';

/** The release running today: fluent-bit 4.1.1 shipping to Loki. */
const PREVIOUS: LogCollectorDaemonSetProps = {
  name: 'logs',
  image: 'cr.fluentbit.io/fluent/fluent-bit:4.1.1',
  outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', port: 80 })],
  // fluent-bit's metrics scraped (ServiceMonitor), so its alerts and the gate's checks have data
  metrics: {},
  alerts: { labels: { team: 'platform' } },
};

/**
 * The new release: fluent-bit 4.2.3, and a second output with credentials (from the Secret
 * es-credentials, which only needs to exist before the canary is promoted). Held waves keep
 * PREVIOUS exactly: no Secret reference, no restart there.
 */
const CURRENT: LogCollectorDaemonSetProps = {
  ...PREVIOUS,
  image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.3',
  outputs: [
    ...PREVIOUS.outputs!,
    FluentBitOutput.elasticsearch({
      host: 'es-http.logging.svc',
      httpUser: 'fluent-bit',
      httpPassword: { secretName: 'es-credentials', key: 'password' },
    }),
  ],
};

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
/**
 * Argo CD orders the waves; a watcher per wave (a Sync hook Job in the wave's own sync wave) fails the sync as soon
 * as a new pod crash-loops, is OOMKilled, cannot pull its image or start for a missing Secret, or stays Pending; the
 * gate after the canary stops the sync if the canary's metrics are bad after its bake.
 */
const GATING = {
  argoCdSyncWaves: true,
  watch: {},
  // the wave being promoted gets its image pulled on each of its nodes first (a pull-only DaemonSet in the sync
  // wave before it), so a node's collector is down for the restart only, not for the pull
  prePull: {},
  gates: [{ afterWave: 'canary', prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090' }],
};

/** The stages, in commit order: the props the code gives and its rollout prop. */
const STAGES: Array<{ name: string; props: LogCollectorDaemonSetProps; rollout: AgentRollout }> = [
  { name: '0-before', props: PREVIOUS, rollout: { ...GATING, waves: WAVES, promoted: Promotion.all() } },
  { name: '1-canary', props: CURRENT, rollout: { ...GATING, waves: WAVES, promoted: Promotion.through('canary'), previous: LogCollectorDaemonSet.release(PREVIOUS) } },
  { name: '2-wave-1', props: CURRENT, rollout: { ...GATING, waves: WAVES, promoted: Promotion.through('wave-1'), previous: LogCollectorDaemonSet.release(PREVIOUS) } },
  { name: '3-fleet', props: CURRENT, rollout: { ...GATING, waves: WAVES, promoted: Promotion.all(), previous: LogCollectorDaemonSet.release(PREVIOUS) } },
  { name: '4-done', props: CURRENT, rollout: { ...GATING, waves: WAVES, promoted: Promotion.all() } },
];

/** One stage of the upgrade as a cdk8s app writing to `outdir`. */
export function buildStage(stage: (typeof STAGES)[number], outdir: string): App {
  const app = new App({ outdir, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const chart = new Chart(app, 'log-collector');
  new LogCollectorDaemonSet(chart, 'logs', { ...stage.props, rollout: stage.rollout });
  return app;
}

/** Synthesize every stage to examples/log-collector-rollout/dist/<stage>/. */
export function synthesize(outdir: string = path.join(__dirname, 'dist')): void {
  for (const stage of STAGES) buildStage(stage, path.join(outdir, stage.name)).synth();
}

if (require.main === module) {
  synthesize();
}
