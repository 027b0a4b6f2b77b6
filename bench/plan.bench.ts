/**
 * node-agents plan on synthetic inventories (5k, 10k, 50k nodes; the coverage bench's mix) × 12 DaemonSets × 2
 * trees, as a ratio against coverage of the after-tree on the same input (a benchmark that prints figures, not a
 * test). Target: 10k nodes under 1 s. The change: a new version on the canary wave of the log collector, a new
 * node-exporter everywhere, a wave added to the CNI (its fleet nodes move), a DaemonSet deleted.
 *
 *   npx ts-node --project test/tsconfig.json bench/plan.bench.ts
 */
import { performance } from 'perf_hooks';
import { sized, sizesFrom } from './mode';
import { syntheticNodes } from './synthetic';
import { analyzeCoverage } from '../src/cli/coverage/analysis';
import { KubeObject, manifestSet, ManifestSet, ROLLOUT_GROUP_LABEL } from '../src/cli/coverage/manifests';
import { nodeFacts } from '../src/cli/coverage/nodes';
import { planChange } from '../src/cli/plan/plan';
import { NodeSelectorRequirementJson, TolerationJson } from '../src/scheduling/types';

const WAVE_KEY = 'node-agents.cdk8s.io/rollout-wave';
const RUNS = sized(5, 1);
const LINUX: NodeSelectorRequirementJson[] = [
  { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
  { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
  { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
];
const COMMON: TolerationJson[] = [
  { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
  { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
];

function ds(name: string, agent: string, options: {
  image?: string;
  requirements?: NodeSelectorRequirementJson[];
  nodeSelector?: Record<string, string>;
  tolerations?: TolerationJson[];
  group?: string;
  otherGroups?: boolean;
  hostNetwork?: boolean;
  ports?: number[];
}): KubeObject {
  const labels: Record<string, string> = { 'app.kubernetes.io/name': agent, ...(options.group ? { [ROLLOUT_GROUP_LABEL]: options.group } : {}) };
  const anti = options.group === undefined ? undefined : {
    requiredDuringSchedulingIgnoredDuringExecution: [{
      labelSelector: { matchLabels: { 'app.kubernetes.io/name': agent }, matchExpressions: [{ key: ROLLOUT_GROUP_LABEL, operator: 'NotIn', values: [options.group] }] },
      topologyKey: 'kubernetes.io/hostname',
    }],
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'agents', labels: { 'app.kubernetes.io/name': agent } },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } },
      template: {
        metadata: { labels },
        spec: {
          hostNetwork: options.hostNetwork ?? false,
          nodeSelector: options.nodeSelector,
          tolerations: options.tolerations ?? [],
          affinity: {
            nodeAffinity: options.requirements === undefined ? undefined
              : { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: options.requirements }] } },
            podAntiAffinity: anti,
          },
          containers: [{ name: 'main', image: options.image ?? 'example/agent:1', ports: (options.ports ?? []).map((p) => ({ containerPort: p, hostPort: p })) }],
        },
      },
    },
  };
}

function wave(name: string): NodeSelectorRequirementJson[] {
  return [...LINUX, { key: WAVE_KEY, operator: 'In', values: [name] }];
}

/** 12 DaemonSets before, 12 after (one deleted, one created). */
function tree(after: boolean): ManifestSet {
  const logs = (group: string, requirements: NodeSelectorRequirementJson[], image: string) =>
    ds(group === 'fleet' ? 'fluent-bit' : `fluent-bit-${group}`, 'fluent-bit', { requirements, tolerations: COMMON, group, image });
  const objects = [
    ds('node-exporter', 'node-exporter', { requirements: LINUX, tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }], hostNetwork: true, ports: [9100], image: after ? 'example/node-exporter:2' : 'example/node-exporter:1' }),
    logs('canary', wave('canary'), after ? 'example/fluent-bit:2' : 'example/fluent-bit:1'),
    logs('wave-1', wave('wave-1'), 'example/fluent-bit:1'),
    logs('wave-2', wave('wave-2'), 'example/fluent-bit:1'),
    logs('fleet', [...LINUX, { key: WAVE_KEY, operator: 'NotIn', values: ['canary', 'wave-1', 'wave-2'] }], 'example/fluent-bit:1'),
    ds('promtail', 'promtail', { nodeSelector: { 'kubernetes.io/os': 'linux' }, tolerations: [{ operator: 'Exists' }], ports: [9080] }),
    ds('nvidia-driver', 'nvidia-driver', { nodeSelector: { 'nvidia.com/gpu.deploy.driver': 'true' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] }),
    ds('kube-proxy', 'kube-proxy', { requirements: LINUX, tolerations: [{ operator: 'Exists' }], hostNetwork: true, ports: [10249, 10256] }),
    ds('csi-node', 'csi-node', { requirements: [...LINUX, { key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' }], tolerations: COMMON }),
    ds('security-agent', 'security-agent', { requirements: LINUX, tolerations: [...COMMON, { key: 'spot', operator: 'Equal', value: 'true', effect: 'NoExecute' }] }),
    ...(after ? [
      ds('cni-canary', 'cni', { requirements: wave('canary'), tolerations: [{ operator: 'Exists' }], group: 'canary' }),
      ds('cni', 'cni', { requirements: [...LINUX, { key: WAVE_KEY, operator: 'NotIn', values: ['canary'] }], tolerations: [{ operator: 'Exists' }], group: 'fleet' }),
    ] : [
      ds('cni', 'cni', { requirements: LINUX, tolerations: [{ operator: 'Exists' }], group: 'fleet' }),
      ds('dcgm-exporter', 'dcgm-exporter', { nodeSelector: { 'nvidia.com/gpu.present': 'true' }, ports: [9400] }),
    ]),
  ];
  return manifestSet(objects.map((object) => ({ source: 'bench', object })));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function time(run: () => void): number {
  const times: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const start = performance.now();
    run();
    if (i > 0) times.push(performance.now() - start); // run 0 warms the JIT up
  }
  return median(times);
}

function main(): void {
  const before = tree(false);
  const after = tree(true);
  console.log(`plan: ${before.daemonSets.length} DaemonSets before, ${after.daemonSets.length} after; median of ${RUNS} runs after a warm-up (node facts included)`);
  console.log('nodes    plan ms   coverage ms   plan/coverage   ms/node   findings   vs 5k per node');
  let perNodeAt5k = 0;
  for (const count of sizesFrom(process.env.BENCH_SIZES, '5000,10000,50000', '500,1000')) {
    const inventory = syntheticNodes(count);
    let findings = 0;
    const planMs = time(() => { findings = planChange(before, after, nodeFacts(inventory)).findings.length; });
    const coverageMs = time(() => analyzeCoverage(after.daemonSets, nodeFacts(inventory)));
    if (count === 5000) perNodeAt5k = planMs / count;
    const growth = perNodeAt5k > 0 && count !== 5000 ? `${((planMs / count) / perNodeAt5k).toFixed(2)}×` : '-';
    console.log(`${String(count).padEnd(8)} ${planMs.toFixed(1).padStart(7)}   ${coverageMs.toFixed(1).padStart(11)}   ${(planMs / coverageMs).toFixed(2).padStart(12)}×   ${(planMs / count).toFixed(4).padStart(7)}   ${String(findings).padStart(8)}   ${growth.padStart(14)}`);
  }
}

main();
