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

export interface AgentOptions {
  readonly namespace?: string;
  readonly agent?: string;
  readonly nodeSelector?: Record<string, string>;
  readonly hostPort?: number;
  readonly memory?: string;
  readonly strategy?: Manifest;
  readonly status?: Record<string, number>;
  readonly tolerations?: Manifest[];
}

/** A DaemonSet as the API server returns it (with status), its pods labelled app.kubernetes.io/name. */
export function agentDaemonSet(name: string, o: AgentOptions = {}): Manifest {
  const labels = { 'app.kubernetes.io/name': o.agent ?? name };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: o.namespace ?? 'agents', labels, generation: 2 },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: o.strategy ?? { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: o.nodeSelector,
          tolerations: o.tolerations,
          containers: [{
            name: 'main',
            image: 'example.com/agent:2',
            resources: { requests: { cpu: '100m', memory: o.memory ?? '128Mi' } },
            ports: o.hostPort ? [{ containerPort: o.hostPort, hostPort: o.hostPort, protocol: 'TCP' }] : undefined,
          }],
        },
      },
    },
    ...(o.status ? { status: o.status } : {}),
  };
}

export function revision(ds: Manifest, hash: string, number: number): Manifest {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `${ds.metadata.name}-${hash}`,
      namespace: ds.metadata.namespace,
      labels: { ...ds.spec.selector.matchLabels, 'controller-revision-hash': hash },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name, controller: true, uid: `uid-${ds.metadata.name}` }],
    },
    revision: number,
    data: {},
  };
}

export interface AgentPodOptions {
  readonly hash?: string;
  /** false: Pending, not bound (the controller's node affinity names the node) */
  readonly bound?: boolean;
  readonly ready?: boolean;
  readonly phase?: string;
  readonly waiting?: { reason: string; message?: string };
  readonly lastTerminated?: { reason: string; exitCode: number };
  readonly restartCount?: number;
  readonly deletionTimestamp?: string;
  readonly name?: string;
}

/** A pod of a DaemonSet on (or made for) a node, as the controller creates it. */
export function agentPod(ds: Manifest, nodeName: string, o: AgentPodOptions = {}): Manifest {
  const bound = o.bound ?? true;
  const ready = o.ready ?? (bound && o.waiting === undefined);
  const container = ds.spec.template.spec.containers[0];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: o.name ?? `${ds.metadata.name}-${nodeName}`,
      namespace: ds.metadata.namespace,
      labels: { ...ds.spec.template.metadata.labels, 'controller-revision-hash': o.hash ?? 'v2' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: ds.metadata.name, controller: true, uid: `uid-${ds.metadata.name}` }],
      creationTimestamp: '2026-01-01T00:00:00Z',
      ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
    },
    spec: {
      ...(bound ? { nodeName } : {}),
      priority: 0,
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }] } } },
      containers: [container],
    },
    status: {
      phase: o.phase ?? (bound ? (o.waiting && o.waiting.reason !== 'CrashLoopBackOff' ? 'Pending' : 'Running') : 'Pending'),
      conditions: [
        { type: 'PodScheduled', status: bound ? 'True' : 'False' },
        { type: 'Ready', status: ready ? 'True' : 'False' },
      ],
      ...(bound ? {
        startTime: '2026-01-01T00:00:00Z',
        containerStatuses: [{
          name: container.name,
          image: container.image,
          ready,
          restartCount: o.restartCount ?? 0,
          state: o.waiting ? { waiting: o.waiting } : { running: { startedAt: '2026-01-01T00:00:00Z' } },
          ...(o.lastTerminated ? { lastState: { terminated: o.lastTerminated } } : {}),
        }],
      } : {}),
    },
  };
}

export function event(about: Manifest, reason: string, message: string, type = 'Warning'): Manifest {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${about.metadata.name}.1`, namespace: about.metadata.namespace },
    involvedObject: { kind: 'Pod', name: about.metadata.name, namespace: about.metadata.namespace },
    reason,
    message,
    type,
    count: 3,
    lastTimestamp: '2026-01-01T00:10:00Z',
  };
}
