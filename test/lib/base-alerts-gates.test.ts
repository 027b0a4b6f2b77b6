/** A plain NodeAgentDaemonSet takes alerts and wave gates too; the agent constructs render theirs once. */
import { Chart, Testing } from 'cdk8s';
import { AgentRelease, FluentBitOutput, LogCollectorDaemonSet, NodeAgentDaemonSet, Promotion, RolloutWave } from '../../src';
import { synthManifests } from '../util/manifests';

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
const GATE = { afterWave: 'canary', prometheusUrl: 'http://prometheus-operated.monitoring.svc:9090' };

test('NodeAgentDaemonSet: alerts over every wave and a gate Job after the canary', () => {
  const chart = new Chart(Testing.app(), 'chart');
  new NodeAgentDaemonSet(chart, 'scanner', {
    image: 'ghcr.io/acme/scanner:2.0.0',
    alerts: {},
    rollout: {
      waves: WAVES,
      promoted: Promotion.through('canary'),
      argoCdSyncWaves: true,
      gates: [GATE],
      previous: AgentRelease.fromProps({ image: 'ghcr.io/acme/scanner:1.0.0' }),
    },
  });
  const manifests = synthManifests(chart);
  const rule = manifests.find((m) => m.kind === 'PrometheusRule');
  expect(JSON.stringify(rule.spec)).toContain('scanner(-canary|-wave-1)?');
  expect(manifests.filter((m) => m.kind === 'Job').map((m) => m.metadata.name)).toEqual(['scanner-gate-canary']);
});

test('an agent construct renders its gate once, with its own checks', () => {
  const chart = new Chart(Testing.app(), 'chart');
  new LogCollectorDaemonSet(chart, 'logs', {
    outputs: [FluentBitOutput.stdout()],
    rollout: {
      waves: WAVES,
      promoted: Promotion.through('canary'),
      argoCdSyncWaves: true,
      gates: [GATE],
      previous: LogCollectorDaemonSet.release({ outputs: [FluentBitOutput.stdout()], image: 'cr.fluentbit.io/fluent/fluent-bit:4.1.1' }),
    },
  });
  expect(synthManifests(chart).filter((m) => m.kind === 'Job').map((m) => m.metadata.name)).toEqual(['log-collector-gate-canary']);
});
