/**
 * rollout.prePull: a pull-only DaemonSet for the wave being promoted, on exactly that wave's nodes, in the sync wave
 * before the wave's DaemonSet; gone in the next stage. `plan` lists it and counts no agent pod moving for it;
 * `estimate` drops the pull from the pre-pulled wave's per-node time.
 */
import { Testing } from 'cdk8s';
import {
  AgentRelease, AgentRollout, FluentBitOutput, LogCollectorDaemonSet, LogCollectorDaemonSetProps, NodeAgentDaemonSet, NodeExporterDaemonSet,
  Promotion, ResourceProfileNodes, RolloutWave,
} from '../../src';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { estimateRollout } from '../../src/cli/estimate/estimate';
import { planChange } from '../../src/cli/plan/plan';
import { warningsOf } from '../../src/validation/warnings';
import { Manifest, synthManifests } from '../util/manifests';
import { inventory, tree } from '../util/plan';

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
const PREVIOUS: LogCollectorDaemonSetProps = { name: 'logs', image: 'cr.fluentbit.io/fluent/fluent-bit:4.1.1', outputs: [FluentBitOutput.loki({ host: 'loki' })] };
const CURRENT: LogCollectorDaemonSetProps = { ...PREVIOUS, image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.3' };

function stage(promoted: Promotion, previous = true, extra: Partial<AgentRollout> = {}): Manifest[] {
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', {
    ...(previous ? CURRENT : PREVIOUS),
    rollout: {
      waves: WAVES,
      promoted,
      argoCdSyncWaves: true,
      prePull: {},
      ...(previous ? { previous: LogCollectorDaemonSet.release(PREVIOUS) } : {}),
      ...extra,
    },
  });
  return synthManifests(chart);
}

const prePulls = (m: Manifest[]) => m.filter((x) => x.kind === 'DaemonSet' && x.metadata.labels['app.kubernetes.io/component'] === 'image-pre-pull');
const ds = (m: Manifest[], name: string) => m.find((x) => x.kind === 'DaemonSet' && x.metadata.name === name);
const wave = (x: Manifest) => Number(x.metadata.annotations['argocd.argoproj.io/sync-wave']);

describe('the pull-only DaemonSet', () => {
  const canary = stage(Promotion.through('canary'));

  test('one, for the promoted wave, in the sync wave before its DaemonSet, on the same nodes', () => {
    const [pull] = prePulls(canary);
    expect(prePulls(canary)).toHaveLength(1);
    expect(pull.metadata.name).toBe('logs-prepull-canary');
    expect(pull.metadata.annotations['node-agents.cdk8s.io/pre-pull-for']).toBe('logs-canary');
    expect(wave(pull)).toBe(wave(ds(canary, 'logs-canary')) - 1);
    const target = ds(canary, 'logs-canary').spec.template.spec;
    const spec = pull.spec.template.spec;
    expect(spec.affinity).toEqual({ nodeAffinity: target.affinity.nodeAffinity });
    expect(spec.tolerations).toEqual(target.tolerations);
    expect(spec.nodeSelector).toEqual(target.nodeSelector);
  });

  test('the new image in an init container that exits at once (fluent-bit --version), a pause container, tiny requests, no host access, priority 0', () => {
    const spec = prePulls(canary)[0].spec.template.spec;
    expect(spec.initContainers).toEqual([expect.objectContaining({
      image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.3',
      imagePullPolicy: 'IfNotPresent',
      command: ['/fluent-bit/bin/fluent-bit', '--version'],
      resources: { requests: { cpu: '1m', memory: '16Mi' }, limits: { memory: '64Mi' } },
    })]);
    expect(spec.containers).toEqual([expect.objectContaining({ name: 'pause', image: 'registry.k8s.io/pause:3.10' })]);
    expect(spec.volumes).toBeUndefined();
    expect([spec.hostNetwork, spec.hostPID, spec.priorityClassName, spec.automountServiceAccountToken])
      .toEqual([undefined, undefined, undefined, false]);
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true });
    // not selected by the agent's own selectors, nor by its pod anti-affinity between groups
    expect(prePulls(canary)[0].spec.template.metadata.labels['app.kubernetes.io/name']).toBe('logs-prepull');
  });

  test('each stage pulls for the wave it promotes, and the last stage (previous removed) renders none', () => {
    expect(prePulls(stage(Promotion.through('wave-1'))).map((p) => p.metadata.name)).toEqual(['logs-prepull-wave-1']);
    expect(prePulls(stage(Promotion.all())).map((p) => [p.metadata.name, p.metadata.annotations['node-agents.cdk8s.io/pre-pull-for']])).toEqual([['logs-prepull-fleet', 'logs']]);
    expect(prePulls(stage(Promotion.all(), false))).toEqual([]);
  });

  test('each agent knows its command; a NodeAgentDaemonSet must give one; argoCdSyncWaves is needed', () => {
    const chart = Testing.chart();
    const exporter = new NodeExporterDaemonSet(chart, 'metrics', {
      image: 'quay.io/prometheus/node-exporter:v1.12.1',
      rollout: {
        waves: WAVES,
        promoted: Promotion.through('canary'),
        argoCdSyncWaves: true,
        prePull: {},
        previous: NodeExporterDaemonSet.release({ image: 'quay.io/prometheus/node-exporter:v1.9.1' }),
      },
    });
    expect(synthManifests(chart).find((m) => m.metadata.name === 'node-exporter-prepull-canary').spec.template.spec.initContainers[0].command)
      .toEqual(['/bin/node_exporter', '--version']);
    expect(exporter).toBeDefined();
    expect(() => new NodeAgentDaemonSet(Testing.chart(), 'a', {
      name: 'a',
      image: 'example.com/a:2',
      rollout: { waves: WAVES, promoted: Promotion.through('canary'), argoCdSyncWaves: true, prePull: {}, previous: AgentRelease.fromProps({ name: 'a', image: 'example.com/a:1' }) },
    })).toThrow(/rollout\.prePull\.command undefined: give the command the agent's image runs and exits at once/);
    expect(() => stage(Promotion.through('canary'), true, { argoCdSyncWaves: false })).toThrow(/rollout\.prePull needs rollout\.argoCdSyncWaves: true/);
  });
});

describe('plan and estimate', () => {
  const nodes = inventory([
    { name: 'c1', wave: 'canary' }, { name: 'w1', wave: 'wave-1' }, { name: 'w2', wave: 'wave-1' }, { name: 'f1' }, { name: 'f2' },
  ]);
  const before = tree(stage(Promotion.all(), false));
  const canary = tree(stage(Promotion.through('canary')));
  const wave1 = tree(stage(Promotion.through('wave-1')));

  test('plan lists the pull-only DaemonSet and counts no agent pod moving for it; the next stage deletes it, no finding', () => {
    const first = planChange(before, canary, nodes);
    expect(first.prePulls).toEqual([{ id: 'observability/logs-prepull-canary', for: 'observability/logs-canary', image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.3', change: 'created' }]);
    expect(first.agents.map((a) => a.agent)).toEqual(['logs']);
    expect(first.agents[0].moved).toEqual([]);
    expect(first.findings.filter((f) => f.severity === 'error')).toEqual([]);
    const second = planChange(canary, wave1, nodes);
    expect(second.prePulls.map((p) => [p.id, p.change])).toEqual([['observability/logs-prepull-canary', 'deleted'], ['observability/logs-prepull-wave-1', 'created']]);
    expect(second.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(second.agents[0].moved).toEqual([]);
  });

  test('estimate: the pre-pulled wave\'s cycle has no pull', () => {
    const report = analyzeCoverage(canary.daemonSets, nodes);
    const [without] = estimateRollout(report.daemonSets, { podSeconds: 30 });
    const [withPull] = estimateRollout(report.daemonSets, { podSeconds: 30, prePulled: new Map([['observability/logs-canary', 10]]) });
    const cycle = (e: typeof without) => e.waves.find((w) => w.daemonSet === 'observability/logs-canary')!.cycleSeconds;
    expect(cycle(without) - cycle(withPull)).toBe(10);
    expect(canary.prePulls).toEqual([expect.objectContaining({ for: 'observability/logs-canary' })]);
  });
});

describe('with resource profiles: a watcher and a pull-only DaemonSet per DaemonSet of the wave', () => {
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', {
    ...CURRENT,
    resourceProfiles: [{ name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 16 }), resources: { memoryRequest: '450Mi', memoryLimit: '900Mi' } }],
    rollout: {
      waves: WAVES,
      promoted: Promotion.through('canary'),
      argoCdSyncWaves: true,
      prePull: {},
      watch: {},
      previous: LogCollectorDaemonSet.release(PREVIOUS),
    },
  });
  const m = synthManifests(chart);

  test('each profile\'s DaemonSet of the promoted wave gets its own pull, on its own nodes', () => {
    expect(prePulls(m).map((p) => [p.metadata.name, p.metadata.annotations['node-agents.cdk8s.io/pre-pull-for']]))
      .toEqual([['logs-prepull-canary', 'logs-canary'], ['logs-prepull-canary-large', 'logs-large-canary']]);
    for (const pull of prePulls(m)) {
      const target = ds(m, pull.metadata.annotations['node-agents.cdk8s.io/pre-pull-for']).spec.template.spec;
      expect(pull.spec.template.spec.affinity).toEqual({ nodeAffinity: target.affinity.nodeAffinity });
    }
  });

  test('every DaemonSet is watched, and names its own watcher', () => {
    const agentSets = m.filter((x) => x.kind === 'DaemonSet' && x.metadata.labels['app.kubernetes.io/component'] !== 'image-pre-pull');
    expect(agentSets.length).toBe(6);
    const jobs = m.filter((x) => x.kind === 'Job' && x.metadata.labels['app.kubernetes.io/component'] === 'rollout-watch');
    // the pull-only DaemonSets too: a pull that fails would hold the sync in their sync wave for good
    expect(jobs.map((j) => j.metadata.name).sort()).toEqual(['logs-watch-canary', 'logs-watch-canary-large', 'logs-watch-fleet', 'logs-watch-fleet-large',
      'logs-watch-prepull-canary', 'logs-watch-prepull-canary-large', 'logs-watch-wave-1', 'logs-watch-wave-1-large']);
    for (const set of [...agentSets, ...prePulls(m)]) {
      const job = jobs.find((j) => j.metadata.name === set.metadata.annotations['node-agents.cdk8s.io/rollout-watcher']);
      expect(job?.spec.template.spec.containers[0].env).toEqual(expect.arrayContaining([{ name: 'WATCH_DAEMONSET', value: set.metadata.name }]));
    }
  });
});

test('prePull without watch: a warning naming the wedge and the fix (a pull that fails holds the sync in the pre-pull\'s sync wave for good)', () => {
  const warned = (extra: Partial<AgentRollout>) => {
    const chart = Testing.chart();
    new LogCollectorDaemonSet(chart, 'logs', {
      ...CURRENT,
      rollout: { waves: WAVES, promoted: Promotion.through('canary'), argoCdSyncWaves: true, prePull: {}, previous: LogCollectorDaemonSet.release(PREVIOUS), ...extra },
    });
    return warningsOf(chart).filter((w) => w.includes('rollout.prePull'));
  };
  expect(warned({})).toEqual([expect.stringContaining('rollout.prePull without rollout.watch: a pull that fails (ImagePullBackOff) keeps the pull-only DaemonSet '
    + 'Progressing, and Argo CD waits in its sync wave for good; add rollout.watch: {}')]);
  expect(warned({ watch: {} })).toEqual([]);
});
