/**
 * Synthetic inputs shared by the benchmarks: a deterministic node inventory like the example one
 * (control plane, GPU, spot, Windows, Fargate, NotReady, wave labels) and 12 DaemonSets.
 */
import { daemonSetInfo, DaemonSetInfo, KubeObject, ROLLOUT_GROUP_LABEL } from '../src/cli/coverage/manifests';
import { NodeJson, NodeSelectorRequirementJson, TaintJson, TolerationJson } from '../src/scheduling/types';

const WAVE_KEY = 'node-agents.cdk8s.io/rollout-wave';
const ZONES = ['eu-west-1a', 'eu-west-1b', 'eu-west-1c'];

/** A deterministic mix like the example inventory: control plane, GPU, spot, Windows, Fargate, NotReady, waves. */
export function syntheticNodes(count: number): NodeJson[] {
  const nodes: NodeJson[] = [];
  for (let i = 0; i < count; i++) {
    const labels: Record<string, string> = {
      'kubernetes.io/os': 'linux',
      'kubernetes.io/hostname': `node-${i}`,
      'topology.kubernetes.io/zone': ZONES[i % 3],
      'node.kubernetes.io/instance-type': 'm6i.2xlarge',
    };
    const taints: TaintJson[] = [];
    let ready = 'True';
    const kind = i % 100;
    if (i < 3) {
      labels['node-role.kubernetes.io/control-plane'] = '';
      taints.push({ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' });
    } else if (kind < 5) {
      labels['nvidia.com/gpu.present'] = 'true';
      labels['nvidia.com/gpu.deploy.driver'] = 'true';
      taints.push({ key: 'nvidia.com/gpu', value: 'present', effect: 'NoSchedule' });
    } else if (kind < 20) {
      labels['karpenter.sh/capacity-type'] = 'spot';
      taints.push({ key: 'spot', value: 'true', effect: 'NoExecute' });
    } else if (kind < 23) {
      labels['kubernetes.io/os'] = 'windows';
      taints.push({ key: 'os', value: 'windows', effect: 'NoSchedule' });
    } else if (kind === 23) {
      labels['eks.amazonaws.com/compute-type'] = 'fargate';
      taints.push({ key: 'eks.amazonaws.com/compute-type', value: 'fargate', effect: 'NoSchedule' });
    } else if (kind === 24 && i % 200 === 24) {
      ready = 'False';
      taints.push({ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' });
    }
    if (i % 50 === 7) labels[WAVE_KEY] = 'canary';
    else if (i % 10 === 3) labels[WAVE_KEY] = 'wave-1';
    nodes.push({ metadata: { name: `node-${String(i).padStart(5, '0')}`, labels }, spec: { taints }, status: { conditions: [{ type: 'Ready', status: ready }] } });
  }
  return nodes;
}

const LINUX: NodeSelectorRequirementJson[] = [
  { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
  { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
  { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
];

function ds(name: string, agent: string, options: {
  requirements?: NodeSelectorRequirementJson[];
  nodeSelector?: Record<string, string>;
  tolerations?: TolerationJson[];
  group?: string;
  hostNetwork?: boolean;
  ports?: number[];
}): KubeObject {
  const podLabels: Record<string, string> = { 'app.kubernetes.io/name': agent, ...(options.group ? { [ROLLOUT_GROUP_LABEL]: options.group } : {}) };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'agents', labels: { 'app.kubernetes.io/name': agent } },
    spec: {
      template: {
        metadata: { labels: podLabels },
        spec: {
          hostNetwork: options.hostNetwork ?? false,
          nodeSelector: options.nodeSelector,
          tolerations: options.tolerations ?? [],
          affinity: options.requirements === undefined ? undefined
            : { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: options.requirements }] } } }, // eslint-disable-line @stylistic/max-len
          containers: [{ name: 'main', image: 'example/agent:1', ports: (options.ports ?? []).map((p) => ({ containerPort: p, hostPort: p })) }],
        },
      },
    },
  };
}

/**
 * A DaemonSet of `agent` in namespace `agents`, selecting its pods by the agent's name label: `podSpec` is its pod
 * template's spec, `spec` more of the DaemonSet's spec (an update strategy).
 */
export function agentDaemonSetObject(name: string, agent: string, podSpec: Record<string, unknown>, spec: Record<string, unknown> = {}): KubeObject {
  const labels = { 'app.kubernetes.io/name': agent };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: 'agents', labels },
    spec: { selector: { matchLabels: labels }, ...spec, template: { metadata: { labels }, spec: podSpec } },
  };
}

/** 12 DaemonSets: a wave partition of 4, and agents with every kind of selection and toleration. */
export function twelveDaemonSets(): DaemonSetInfo[] {
  return twelveDaemonSetObjects().map((object) => daemonSetInfo(object, 'bench'));
}

/** The same 12 DaemonSets as objects, for a manifest file the CLI reads. */
export function twelveDaemonSetObjects(): KubeObject[] {
  const common: TolerationJson[] = [
    { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
    { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
  ];
  return [
    ds('node-exporter', 'node-exporter', { requirements: LINUX, tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }], hostNetwork: true, ports: [9100] }),
    ds('fluent-bit-canary', 'fluent-bit', { requirements: [...LINUX, { key: WAVE_KEY, operator: 'In', values: ['canary'] }], tolerations: common, group: 'canary' }),
    ds('fluent-bit-wave-1', 'fluent-bit', { requirements: [...LINUX, { key: WAVE_KEY, operator: 'In', values: ['wave-1'] }], tolerations: common, group: 'wave-1' }),
    ds('fluent-bit-wave-2', 'fluent-bit', { requirements: [...LINUX, { key: WAVE_KEY, operator: 'In', values: ['wave-2'] }], tolerations: common, group: 'wave-2' }),
    ds('fluent-bit', 'fluent-bit', { requirements: [...LINUX, { key: WAVE_KEY, operator: 'NotIn', values: ['canary', 'wave-1', 'wave-2'] }], tolerations: common, group: 'fleet' }),
    ds('promtail', 'promtail', { nodeSelector: { 'kubernetes.io/os': 'linux' }, tolerations: [{ operator: 'Exists' }], ports: [9080] }),
    ds('nvidia-driver', 'nvidia-driver', { nodeSelector: { 'nvidia.com/gpu.deploy.driver': 'true' }, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' }] }),
    ds('dcgm-exporter', 'dcgm-exporter', { nodeSelector: { 'nvidia.com/gpu.present': 'true' }, ports: [9400] }),
    ds('kube-proxy', 'kube-proxy', { requirements: LINUX, tolerations: [{ operator: 'Exists' }], hostNetwork: true, ports: [10249, 10256] }),
    ds('csi-node', 'csi-node', { requirements: [...LINUX, { key: 'node-role.kubernetes.io/control-plane', operator: 'DoesNotExist' }], tolerations: common }),
    ds('security-agent', 'security-agent', { requirements: LINUX, tolerations: [...common, { key: 'spot', operator: 'Equal', value: 'true', effect: 'NoExecute' }] }),
    ds('cni', 'cni', { requirements: LINUX, tolerations: [{ operator: 'Exists' }], hostNetwork: true, ports: [9099] }),
  ];
}
