/**
 * One agent pod per node across the DaemonSets of a rollout: when a node changes wave, the DaemonSet
 * it leaves deletes its pod while the one it enters creates a pod at once. Each DaemonSet's required
 * pod anti-affinity keeps the new pod Pending until the old one is gone.
 */
import { Chart, Testing } from 'cdk8s';
import {
  AgentRelease, AgentRollout, FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeAgentDaemonSet, NodeExporterDaemonSet,
  Promotion, RolloutWave,
} from '../../src';
import { Manifest, synthManifests } from '../util/manifests';

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
const GROUP = 'node-agents.cdk8s.io/rollout-group';

type Build = (chart: Chart, rollout: AgentRollout | undefined) => void;
/** Each agent, and its previous release (an older image). */
const AGENTS: Array<[string, Build, AgentRelease]> = [
  ['NodeAgentDaemonSet', (c, rollout) => new NodeAgentDaemonSet(c, 'a', { name: 'scanner', image: 'ghcr.io/acme/scanner:1.2.3', rollout }),
    AgentRelease.fromProps({ name: 'scanner', image: 'ghcr.io/acme/scanner:1.2.2' })],
  ['LogCollectorDaemonSet', (c, rollout) => new LogCollectorDaemonSet(c, 'a', { outputs: [FluentBitOutput.stdout()], rollout }),
    LogCollectorDaemonSet.release({ outputs: [FluentBitOutput.stdout()], image: 'cr.fluentbit.io/fluent/fluent-bit:4.1.1' })],
  ['NodeExporterDaemonSet', (c, rollout) => new NodeExporterDaemonSet(c, 'a', { rollout }),
    NodeExporterDaemonSet.release({ image: 'quay.io/prometheus/node-exporter:v1.8.2' })],
  ['GpuDriverDaemonSet', (c, rollout) => new GpuDriverDaemonSet(c, 'a', { image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', rollout }),
    GpuDriverDaemonSet.release({ image: 'nvcr.io/nvidia/driver:535.183.01-ubuntu22.04' })],
];

interface Selector {
  matchLabels?: { [key: string]: string };
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

/** A Kubernetes label selector, as the scheduler evaluates it. */
function selects(selector: Selector, labels: { [key: string]: string }): boolean {
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) if (labels[k] !== v) return false;
  for (const e of selector.matchExpressions ?? []) {
    const has = e.key in labels;
    const ok = e.operator === 'In' ? has && e.values!.includes(labels[e.key])
      : e.operator === 'NotIn' ? !has || !e.values!.includes(labels[e.key])
        : e.operator === 'Exists' ? has : !has;
    if (!ok) return false;
  }
  return true;
}

function daemonSets(build: Build, rollout: AgentRollout | undefined): Manifest[] {
  const chart = new Chart(Testing.app(), 'c');
  build(chart, rollout);
  return synthManifests(chart).filter((m) => m.kind === 'DaemonSet');
}

function antiAffinityTerms(ds: Manifest): Manifest[] {
  return ds.spec.template.spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
}

/** Can a pod of `incoming` be placed on a node where a pod of `existing` still is (running or terminating)? */
function canShareNode(incoming: Manifest, existing: Manifest): boolean {
  const incomingLabels = incoming.spec.template.metadata.labels;
  const existingLabels = existing.spec.template.metadata.labels;
  // The scheduler checks the incoming pod's terms against the existing pods, and the existing pods' terms against the incoming pod.
  const blockedByOwn = antiAffinityTerms(incoming).some((t) => t.topologyKey === 'kubernetes.io/hostname' && selects(t.labelSelector, existingLabels));
  const blockedByExisting = antiAffinityTerms(existing).some((t) => t.topologyKey === 'kubernetes.io/hostname' && selects(t.labelSelector, incomingLabels));
  return !blockedByOwn && !blockedByExisting;
}

describe.each(AGENTS)('%s', (_kind, build, previous) => {
  const stages: Array<[string, AgentRollout]> = [
    ['canary promoted', { waves: WAVES, promoted: Promotion.through('canary'), previous }],
    ['all promoted', { waves: WAVES, promoted: Promotion.all() }],
  ];

  const gpu = _kind === 'GpuDriverDaemonSet';

  test.each(stages)('%s: no pod of one group can join a node that still has a pod of another group', (_name, rollout) => {
    const all = daemonSets(build, rollout);
    expect(all.length).toBe(3);
    for (const incoming of all) {
      expect(antiAffinityTerms(incoming)).toHaveLength(gpu ? 2 : 1);
      for (const existing of all) {
        const same = incoming.metadata.name === existing.metadata.name;
        // its own group is not selected: the DaemonSet's own rolling update is not held up; a GPU
        // driver waits even for its own DaemonSet's old pod (the module must be unloaded first)
        expect(canShareNode(incoming, existing)).toBe(same && !gpu);
      }
    }
  });

  test('the term selects on labels every group shares, never the version', () => {
    const [canary] = daemonSets(build, stages[0][1]);
    const selector = antiAffinityTerms(canary)[0].labelSelector;
    expect(Object.keys(selector.matchLabels).sort()).toEqual(['app.kubernetes.io/instance', 'app.kubernetes.io/name']);
    expect(selector.matchExpressions).toEqual([{ key: GROUP, operator: 'NotIn', values: ['canary'] }]);
    expect(JSON.stringify(selector)).not.toContain('version');
  });

  test('other agents on the node are not selected', () => {
    const mine = daemonSets(build, stages[0][1]);
    const otherRollout = { ...stages[0][1], previous: AgentRelease.fromProps({ name: 'other-agent', image: 'ghcr.io/acme/other:0.9.0' }) };
    const other = daemonSets((c, r) => new NodeAgentDaemonSet(c, 'o', { name: 'other-agent', image: 'ghcr.io/acme/other:1.0.0', rollout: r }), otherRollout);
    for (const incoming of mine) for (const existing of other) expect(canShareNode(incoming, existing)).toBe(true);
  });

  test('without waves there is no other group and no anti-affinity term for one (the GPU driver keeps its own)', () => {
    const [only] = daemonSets(build, undefined);
    expect(antiAffinityTerms(only)).toHaveLength(gpu ? 1 : 0);
  });
});

test('a node relabelled from the fleet into the canary: the canary pod waits Pending until the fleet pod is gone', () => {
  const [canary, , fleet] = daemonSets(AGENTS[1][1], { waves: WAVES, promoted: Promotion.through('canary'), previous: AGENTS[1][2] });
  // 1. the label changes; the fleet DaemonSet no longer matches the node and deletes its pod, which terminates for up to its grace period
  const podsOnNode = [fleet];
  // 2. the canary DaemonSet creates its pod at once; the scheduler still counts the terminating fleet pod
  expect(podsOnNode.every((existing) => canShareNode(canary, existing))).toBe(false);
  // 3. the fleet pod is deleted; the scheduler retries and binds the canary pod
  podsOnNode.pop();
  expect(podsOnNode.every((existing) => canShareNode(canary, existing))).toBe(true);
});

test('a GPU driver pod never joins a node that runs a driver pod of another GpuDriverDaemonSet or of gpu-operator', () => {
  const gpuBuild = AGENTS[3][1];
  for (const rollout of [undefined, { waves: WAVES, promoted: Promotion.all() }]) {
    const [ours] = daemonSets(gpuBuild, rollout);
    const operatorDriver = { spec: { template: { metadata: { labels: { 'app.kubernetes.io/component': 'nvidia-driver', 'app': 'nvidia-driver-daemonset' } }, spec: {} } } };
    expect(canShareNode(ours, operatorDriver)).toBe(false);
    const otherPool = daemonSets((c, r) => new GpuDriverDaemonSet(c, 'b', { name: 'gpu-driver-a100', image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', rollout: r }), rollout)[0];
    expect(canShareNode(ours, otherPool)).toBe(false);
  }
});
