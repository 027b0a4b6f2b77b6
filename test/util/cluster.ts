/** Builders for cluster objects as `kubectl get ... -o json` prints them (nodes, pods, DaemonSets, events), for capacity and doctor tests. */
import { Manifest } from './manifests';

export interface NodeOptions {
  readonly cpu?: string;
  readonly memory?: string;
  readonly pods?: number;
  readonly labels?: Record<string, string>;
  readonly taints?: Manifest[];
  readonly ready?: 'True' | 'False' | 'Unknown';
  readonly unschedulable?: boolean;
  readonly extended?: Record<string, string>;
}

export function node(name: string, o: NodeOptions = {}): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name, ...o.labels } },
    spec: { taints: o.taints ?? [], ...(o.unschedulable ? { unschedulable: true } : {}) },
    status: {
      allocatable: { 'cpu': o.cpu ?? '4', 'memory': o.memory ?? '8Gi', 'ephemeral-storage': '100Gi', 'pods': String(o.pods ?? 110), ...o.extended },
      conditions: [{ type: 'Ready', status: o.ready ?? 'True' }],
    },
  };
}

export interface PodOptions {
  readonly namespace?: string;
  readonly node?: string;
  readonly cpu?: string;
  readonly memory?: string;
  readonly priority?: number;
  readonly phase?: string;
  readonly owner?: string;
  readonly labels?: Record<string, string>;
  readonly hostPort?: number;
  readonly startTime?: string;
  readonly status?: Manifest;
  readonly deletionTimestamp?: string;
  readonly initContainers?: Manifest[];
  readonly image?: string;
}

export function pod(name: string, o: PodOptions = {}): Manifest {
  const requests: Record<string, string> = {};
  if (o.cpu) requests.cpu = o.cpu;
  if (o.memory) requests.memory = o.memory;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.namespace ?? 'apps',
      labels: o.labels ?? {},
      ...(o.owner ? { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: o.owner, controller: true, uid: `uid-${o.owner}` }] } : {}),
      creationTimestamp: o.startTime ?? '2026-01-01T00:00:00Z',
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: {
      ...(o.node ? { nodeName: o.node } : {}),
      priority: o.priority ?? 0,
      initContainers: o.initContainers,
      containers: [{
        name: 'main',
        image: o.image ?? 'example.com/app:1',
        resources: { requests },
        ports: o.hostPort ? [{ containerPort: o.hostPort, hostPort: o.hostPort, protocol: 'TCP' }] : undefined,
      }],
    },
    status: { phase: o.phase ?? 'Running', startTime: o.startTime ?? '2026-01-01T00:00:00Z', ...o.status },
  };
}

export function list(items: readonly Manifest[]): Manifest {
  return { apiVersion: 'v1', kind: 'List', items: [...items] };
}
