/**
 * Coverage on the example inventory (examples/inventories/mixed-cluster.json) with the hand-written
 * DaemonSets of test/fixtures/coverage/cluster: the gaps a reader can verify by eye.
 */
import { AgentNodeStatus, analyzeCoverage, CoverageReport, explainPlacement, placementClasses, placementsFor, Problem, reasonClassesFor } from '../../src/cli/coverage/analysis';
import { loadManifests, loadNodeList } from '../../src/cli/coverage/load';
import { daemonSetInfo, ROLLOUT_GROUP_LABEL } from '../../src/cli/coverage/manifests';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { NodeJson } from '../../src/scheduling/types';
import { REPO } from '../util/paths';

const ROOT = REPO;
const INVENTORY = 'examples/inventories/mixed-cluster.json';
const inventory = loadNodeList(INVENTORY, ROOT);
const nodes = nodeFacts(inventory);
const manifests = loadManifests(['test/fixtures/coverage/cluster'], ROOT);
const report = analyzeCoverage(manifests.daemonSets, nodes);

function status(r: CoverageReport, agent: string, node: string): AgentNodeStatus {
  const entry = r.agents.find((a) => a.agent === agent)!.nodes.find((n) => n.node === node);
  if (entry === undefined) throw new Error(`no node ${node}`);
  return entry.status;
}

function entryOf(r: CoverageReport, agent: string, node: string) {
  return r.agents.find((a) => a.agent === agent)!.nodes.find((n) => n.node === node)!;
}

function problems(kind: Problem['kind']): Problem[] {
  return report.problems.filter((p) => p.kind === kind);
}

describe('the example inventory', () => {
  test('has what the issue asks for: control plane, 3 zones, GPU pool, Windows, virtual, NotReady, spot', () => {
    expect(nodes.filter((n) => n.controlPlane).map((n) => n.zone)).toEqual(['eu-west-1a', 'eu-west-1b', 'eu-west-1c']);
    expect(nodes.filter((n) => n.controlPlane).every((n) => n.taints.some((t) => t.key === 'node-role.kubernetes.io/control-plane' && t.effect === 'NoSchedule'))).toBe(true);
    const workers = nodes.filter((n) => n.name.startsWith('worker-'));
    expect(workers.length).toBeGreaterThanOrEqual(12);
    expect(new Set(workers.map((n) => n.zone))).toEqual(new Set(['eu-west-1a', 'eu-west-1b', 'eu-west-1c']));
    const gpu = nodes.filter((n) => n.labels['nvidia.com/gpu.present'] === 'true');
    expect(gpu.length).toBe(2);
    expect(gpu.every((n) => n.taints.some((t) => t.key === 'nvidia.com/gpu' && t.value === 'present' && t.effect === 'NoSchedule'))).toBe(true);
    const windows = nodes.filter((n) => n.labels['kubernetes.io/os'] === 'windows');
    expect(windows.map((n) => n.platform)).toEqual(['non-linux', 'non-linux']);
    expect(windows.every((n) => n.taints.some((t) => t.key === 'os' && t.value === 'windows'))).toBe(true);
    expect(nodes.filter((n) => n.platform === 'virtual').map((n) => n.platformReason)).toEqual(['eks.amazonaws.com/compute-type=fargate']);
    const notReady = nodes.filter((n) => n.ready === 'False');
    expect(notReady.map((n) => n.name)).toEqual(['worker-b-5']);
    expect(inventory.find((n) => n.metadata.name === 'worker-b-5')!.spec!.taints).toEqual([
      expect.objectContaining({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }),
    ]);
    const spot = nodes.filter((n) => n.taints.some((t) => t.key === 'spot' && t.value === 'true' && t.effect === 'NoExecute'));
    expect(spot.map((n) => n.name)).toEqual(['spot-a-1', 'spot-c-1']);
    expect(nodes.filter((n) => n.labels['node-agents.cdk8s.io/rollout-wave'] === 'canary').length).toBe(1);
    expect(nodes.filter((n) => n.labels['node-agents.cdk8s.io/rollout-wave'] === 'wave-1').length).toBe(3);
  });

  test('keeps the non-DaemonSet objects for context', () => {
    expect(manifests.otherKinds).toEqual({ ConfigMap: 1, Service: 1, ServiceAccount: 1 });
    expect(manifests.daemonSets.map((d) => d.id)).toEqual([
      'gpu-operator/dcgm-exporter', 'gpu-operator/nvidia-driver-daemonset', 'logging/fluent-bit', 'logging/fluent-bit-canary',
      'logging/fluent-bit-wave-1', 'logging/fluent-bit-wave-2', 'logging/promtail', 'logging/promtail-canary', 'monitoring/node-exporter',
    ]);
  });
});

describe('coverage on the mixed cluster', () => {
  test('agents are DaemonSets grouped by app.kubernetes.io/name', () => {
    expect(report.agents.map((a) => [a.agent, a.daemonSets])).toEqual([
      ['dcgm-exporter', ['gpu-operator/dcgm-exporter']],
      ['fluent-bit', ['logging/fluent-bit-canary', 'logging/fluent-bit-wave-1', 'logging/fluent-bit-wave-2', 'logging/fluent-bit']],
      ['node-exporter', ['monitoring/node-exporter']],
      ['nvidia-driver', ['gpu-operator/nvidia-driver-daemonset']],
      ['promtail', ['logging/promtail', 'logging/promtail-canary']],
    ]);
  });

  test('the agent is missing from the spot nodes with the custom NoExecute taint: a gap', () => {
    expect(status(report, 'node-exporter', 'spot-a-1')).toBe('gap');
    expect(status(report, 'node-exporter', 'spot-c-1')).toBe('gap');
    expect(entryOf(report, 'node-exporter', 'spot-a-1').why).toBe('monitoring/node-exporter: taint spot=true:NoExecute not tolerated');
    const gap = problems('gap').find((p) => p.agent === 'node-exporter');
    expect(gap).toMatchObject({ daemonSets: ['monitoring/node-exporter'], nodes: ['spot-a-1', 'spot-c-1'] });
    // fluent-bit tolerates spot=true:NoExecute, so it covers them
    expect(status(report, 'fluent-bit', 'spot-a-1')).toBe('covered');
  });

  test('the GPU DaemonSet without the GPU toleration misses every GPU node: a gap', () => {
    const gap = problems('gap').find((p) => p.agent === 'dcgm-exporter');
    expect(gap).toMatchObject({ daemonSets: ['gpu-operator/dcgm-exporter'], nodes: ['gpu-a-1', 'gpu-b-1'] });
    expect(gap!.message).toContain('taint nvidia.com/gpu=present:NoSchedule not tolerated');
    // ...while non-GPU nodes are simply not selected by its nodeSelector: not a gap
    expect(status(report, 'dcgm-exporter', 'worker-a-2')).toBe('not-selected');
    expect(placementsFor(report, 'dcgm-exporter', 'worker-a-2').map(explainPlacement))
      .toEqual(['gpu-operator/dcgm-exporter: nodeSelector nvidia.com/gpu.present=true (node has no nvidia.com/gpu.present label)']);
    // the driver tolerates it
    expect(report.daemonSets.find((d) => d.info.id === 'gpu-operator/nvidia-driver-daemonset')!.covered).toEqual(['gpu-a-1', 'gpu-b-1']);
  });

  test('Windows and virtual nodes are excluded on purpose, never gaps', () => {
    for (const agent of ['node-exporter', 'fluent-bit', 'dcgm-exporter', 'nvidia-driver', 'promtail']) {
      expect(status(report, agent, 'win-a-1')).toBe('excluded');
      expect(status(report, agent, 'win-b-1')).toBe('excluded');
    }
    expect(entryOf(report, 'node-exporter', 'win-a-1').why).toBe('non-linux node (kubernetes.io/os=windows): excluded on purpose');
    expect(status(report, 'node-exporter', 'fargate-ip-10-0-12-34.eu-west-1.compute.internal')).toBe('excluded');
    expect(report.problems.some((p) => p.nodes.some((n) => n.startsWith('win-')))).toBe(false);
  });

  test('a node owned by two DaemonSets of one agent is a duplicate', () => {
    expect(status(report, 'promtail', 'worker-a-1')).toBe('duplicate');
    expect(problems('duplicate')).toEqual([expect.objectContaining({
      agent: 'promtail', daemonSets: ['logging/promtail', 'logging/promtail-canary'], nodes: ['worker-a-1'],
    })]);
  });

  test('the wave partition covers every linux node exactly once', () => {
    const fluent = report.agents.find((a) => a.agent === 'fluent-bit')!;
    expect(fluent.counts).toEqual({ 'covered': 19, 'duplicate': 0, 'gap': 0, 'excluded': 3, 'not-selected': 0, 'node-condition': 1 });
    expect(entryOf(report, 'fluent-bit', 'worker-a-1').owners).toEqual(['logging/fluent-bit-canary']);
    expect(entryOf(report, 'fluent-bit', 'worker-b-2').owners).toEqual(['logging/fluent-bit-wave-1']);
    expect(entryOf(report, 'fluent-bit', 'worker-a-3').owners).toEqual(['logging/fluent-bit']);
  });

  test('a rollout wave matching zero nodes is flagged (Argo CD would count it Healthy)', () => {
    expect(problems('empty-wave')).toEqual([expect.objectContaining({ agent: 'fluent-bit', daemonSets: ['logging/fluent-bit-wave-2'] })]);
    expect(problems('empty-wave')[0].message).toContain('covers zero nodes: Argo CD counts a DaemonSet with nothing to schedule (desiredNumberScheduled 0) as Healthy');
    // dcgm-exporter also covers nothing but is not a wave: a gap, not an empty wave
    expect(problems('empty-wave').some((p) => p.agent === 'dcgm-exporter')).toBe(false);
  });

  test('two agents binding the same host port on one node clash (hostNetwork containerPort counts)', () => {
    const clash = problems('host-port-clash');
    expect(clash).toHaveLength(1);
    expect(clash[0].daemonSets).toEqual(['logging/promtail', 'monitoring/node-exporter']);
    expect(clash[0].message).toContain('host port TCP/9100');
    // both run on 18 nodes: every node node-exporter covers (promtail covers them all too)
    expect(clash[0].nodes).toEqual(report.daemonSets.find((d) => d.info.id === 'monitoring/node-exporter')!.covered);
    // dcgm-exporter's hostPort 9400 clashes with nobody
    expect(clash.some((p) => p.daemonSets.includes('gpu-operator/dcgm-exporter'))).toBe(false);
  });

  test('a DaemonSet landing on a virtual node it did not select is flagged', () => {
    expect(problems('unsupported-node')).toEqual([expect.objectContaining({
      daemonSets: ['logging/promtail'], nodes: ['fargate-ip-10-0-12-34.eu-west-1.compute.internal'],
    })]);
  });

  test('the NotReady node: not a gap; the DaemonSet that tolerates it covers it, the other is told why not', () => {
    // node-exporter tolerates every NoSchedule taint (not-ready:NoSchedule included); NoExecute is the controller's
    expect(status(report, 'node-exporter', 'worker-b-5')).toBe('covered');
    expect(status(report, 'fluent-bit', 'worker-b-5')).toBe('node-condition');
    expect(entryOf(report, 'fluent-bit', 'worker-b-5').why).toBe('logging/fluent-bit: taint node.kubernetes.io/not-ready:NoSchedule not tolerated '
      + '(implied by Ready=False: not listed in the inventory, added on purpose as the node lifecycle controller taints such a node): a pod already running there keeps running (the controller tolerates not-ready/unreachable NoExecute), '
      + 'but no new pod is created until the node recovers');
  });

  test('the cordoned node is still covered', () => {
    expect(nodes.find((n) => n.name === 'worker-c-4')!.unschedulable).toBe(true);
    expect(status(report, 'fluent-bit', 'worker-c-4')).toBe('covered');
    expect(status(report, 'node-exporter', 'worker-c-4')).toBe('covered');
  });

  test('exactly these problems, in a stable order', () => {
    expect(report.problems.map((p) => `${p.kind} ${p.agent ?? '-'} ${p.nodes.length}`)).toEqual([
      'duplicate promtail 1',
      'empty-wave fluent-bit 0',
      'gap dcgm-exporter 2',
      'gap node-exporter 2',
      'host-port-clash - 18',
      'unsupported-node promtail 1',
    ]);
  });

  test('the clean node-exporter (tolerates everything, excludes non-linux/virtual) has no problem', () => {
    const clean = analyzeCoverage(loadManifests(['test/fixtures/coverage/clean'], ROOT).daemonSets, nodes);
    expect(clean.problems).toEqual([]);
    expect(clean.agents[0].counts).toMatchObject({ covered: 20, excluded: 3, gap: 0 });
  });

  test('--allow-taint: a taint left untolerated on purpose makes the node an intended exclusion', () => {
    const allowed = analyzeCoverage(manifests.daemonSets, nodes, { intendedTaintKeys: ['spot'] });
    expect(status(allowed, 'node-exporter', 'spot-a-1')).toBe('excluded');
    expect(allowed.problems.some((p) => p.kind === 'gap' && p.agent === 'node-exporter')).toBe(false);
  });

  test('the fast classification agrees with the detailed reasons on every DaemonSet and node', () => {
    let compared = 0;
    for (const agent of report.agents) {
      for (const node of nodes) {
        for (const placement of placementsFor(report, agent.agent, node.name)) {
          expect([placement.daemonSet, node.name, reasonClassesFor(report, placement.daemonSet, node.name)])
            .toEqual([placement.daemonSet, node.name, placementClasses(placement)]);
          compared++;
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  test('the result does not depend on the order of nodes or manifests', () => {
    const shuffled = analyzeCoverage([...manifests.daemonSets].reverse(), [...nodes].reverse());
    expect(shuffled.problems).toEqual(report.problems);
    expect(shuffled.daemonSets.map((d) => [d.info.id, d.covered])).toEqual(report.daemonSets.map((d) => [d.info.id, d.covered]));
    expect(shuffled.agents).toEqual(report.agents);
  });
});

describe('waves: nodes falling between them', () => {
  const wave = (name: string, group: string, requirement: Record<string, unknown>) => daemonSetInfo({
    kind: 'DaemonSet',
    metadata: { name, namespace: 'ns', labels: { 'app.kubernetes.io/name': 'agent' } },
    spec: {
      template: {
        metadata: { labels: { [ROLLOUT_GROUP_LABEL]: group } },
        spec: {
          containers: [],
          affinity: {
            nodeAffinity: {
              requiredDuringSchedulingIgnoredDuringExecution: {
                nodeSelectorTerms: [{ matchExpressions: [requirement] }],
              },
            },
          },
        },
      },
    },
  }, 'waves.yaml');
  const key = 'node-agents.cdk8s.io/rollout-wave';
  const daemonSets = [
    wave('agent-canary', 'canary', { key, operator: 'In', values: ['canary'] }),
    wave('agent', 'fleet', { key, operator: 'NotIn', values: ['canary', 'wave-1'] }),
  ];
  const mk = (name: string, value?: string): NodeJson => ({ metadata: { name, labels: value ? { [key]: value } : {} } });

  test('a node labelled with a wave no DaemonSet serves is a gap, explained', () => {
    const r = analyzeCoverage(daemonSets, nodeFacts([mk('a', 'canary'), mk('b'), mk('c', 'wave-1'), mk('d', 'wave-9')]));
    expect(r.agents[0].nodes.map((n) => [n.node, n.status])).toEqual([['a', 'covered'], ['b', 'covered'], ['c', 'gap'], ['d', 'covered']]);
    expect(entryOf(r, 'agent', 'c').why).toContain('(the node falls between the rollout waves');
    expect(r.problems.map((p) => p.kind)).toEqual(['gap']);
  });

  // A cordoned node is not one: the DaemonSet controller adds a toleration of node.kubernetes.io/unschedulable:NoSchedule
  // to its pods (kubernetes pkg/controller/daemon/util/daemonset_util.go, AddOrUpdateDaemonPodTolerations), so the
  // new pod runs and turns Ready there.
  test('a wave holding an unreachable or NotReady node is an unready-in-wave problem naming each; a cordoned node is not; the fleet holding one is not', () => {
    const state = (name: string, value: string | undefined, extra: Partial<NodeJson>): NodeJson => ({ ...mk(name, value), ...extra });
    const given = [
      state('u1', 'canary', { status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } }),
      state('n1', 'canary', { status: { conditions: [{ type: 'Ready', status: 'False' }] } }),
      state('k1', 'canary', { spec: { unschedulable: true } }),
      mk('ok', 'canary'),
      state('f1', undefined, { status: { conditions: [{ type: 'Ready', status: 'False' }] } }),
    ];
    const r = analyzeCoverage(daemonSets, nodeFacts(given));
    const unready = r.problems.filter((p) => p.kind === 'unready-in-wave');
    expect(unready).toHaveLength(1);
    expect(unready[0].daemonSets).toEqual(['ns/agent-canary']);
    expect(unready[0].nodes).toEqual(['n1', 'u1']);
    expect(unready[0].message).toContain('(n1: NotReady (Ready=False); u1: unreachable (Ready=Unknown))');
    expect(entryOf(r, 'agent', 'k1').status).toBe('covered');
  });

  test('a wave whose only hazard is a cordoned node has no problem (DaemonSet pods tolerate node.kubernetes.io/unschedulable)', () => {
    const cordoned: NodeJson = { ...mk('k1', 'canary'), spec: { unschedulable: true } };
    const r = analyzeCoverage(daemonSets, nodeFacts([cordoned, mk('f')]));
    expect(entryOf(r, 'agent', 'k1').status).toBe('covered');
    expect(r.problems).toEqual([]);
  });

  test('a wave whose nodes all carry an untolerated taint also covers zero nodes: flagged; an empty fleet is not', () => {
    const tainted: NodeJson = { metadata: { name: 'c1', labels: { [key]: 'canary' } }, spec: { taints: [{ key: 'spot', effect: 'NoExecute' }] } };
    const r = analyzeCoverage(daemonSets, nodeFacts([tainted]));
    expect(r.problems.map((p) => `${p.kind} ${p.daemonSets.join(',')}`)).toEqual(['empty-wave ns/agent-canary', 'gap ns/agent-canary']);
  });

  test('with another wave key, the same requirement is a selection, not a gap', () => {
    const r = analyzeCoverage(daemonSets, nodeFacts([mk('c', 'wave-1')]), { waveLabelKey: 'example.com/other' });
    expect(r.agents[0].nodes[0].status).toBe('not-selected');
  });
});
