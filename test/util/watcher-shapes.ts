/**
 * The shapes a rollout watcher reads, as the API server serves them: a wave's DaemonSet, the pods of its new
 * revision and their events, for each failure the watcher must stop (a crash loop, an OOM kill, an image pull
 * failure, a missing Secret as env and as a volume, a pod the scheduler cannot place) and for a slow but healthy
 * rollout. The status fields are the kubelet's and the scheduler's own:
 * - CrashLoopBackOff: kubelet pkg/kubelet/kuberuntime/kuberuntime_manager.go doBackOff ("back-off 40s restarting
 *   failed container=… pod=…"), lastState.terminated from the runtime (reason Error, the exit code);
 * - OOMKilled: the runtime's terminated reason (exit code 137), then CrashLoopBackOff;
 * - ErrImagePull / ImagePullBackOff: pkg/kubelet/images/image_manager.go EnsureImageExists ('Back-off pulling image "…"');
 * - CreateContainerConfigError: pkg/kubelet/kuberuntime/kuberuntime_container.go startContainer, from
 *   makeEnvironmentVariables ('secret "es-credentials" not found');
 * - a missing Secret volume: pod Pending, container waiting ContainerCreating, event FailedMount
 *   ('MountVolume.SetUp failed for volume "…" : secret "…" not found', pkg/volume/secret/secret.go);
 * - Unschedulable: the PodScheduled condition's message from the scheduler ("0/12 nodes are available: 1 Insufficient memory…").
 * Timestamps are written relative to "now" when the fake serves them.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */
import { Testing } from 'cdk8s';
import { Manifest, synthManifests } from './manifests';
import { FluentBitOutput, LogCollectorDaemonSet, Promotion, RolloutWave } from '../../src';

export const NAMESPACE = 'observability';
export const DAEMONSET = 'logs-canary';
export const TEMPLATE_GENERATION = 3;
const SELECTOR = { 'app.kubernetes.io/instance': 'logs', 'app.kubernetes.io/name': 'logs', 'node-agents.cdk8s.io/rollout-group': 'canary' };

export interface DaemonSetStatus {
  readonly desired: number;
  readonly updated: number;
  readonly available: number;
  readonly observedGeneration?: number;
}

export function daemonSet(status: DaemonSetStatus): any {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: {
      name: DAEMONSET,
      namespace: NAMESPACE,
      generation: 5,
      annotations: { 'deprecated.daemonset.template.generation': String(TEMPLATE_GENERATION), 'node-agents.cdk8s.io/rollout-wave-index': '0' },
      labels: SELECTOR,
    },
    spec: { selector: { matchLabels: SELECTOR }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } } },
    status: {
      currentNumberScheduled: status.desired,
      desiredNumberScheduled: status.desired,
      numberAvailable: status.available,
      numberMisscheduled: 0,
      numberReady: status.available,
      numberUnavailable: status.desired - status.available,
      observedGeneration: status.observedGeneration ?? 5,
      updatedNumberScheduled: status.updated,
    },
  };
}

export interface PodShape {
  readonly name: string;
  readonly node?: string;
  /** the node the controller made the pod for (matchFields), when not bound */
  readonly target?: string;
  readonly ageSeconds: number;
  /** the pod's template generation: TEMPLATE_GENERATION is the new revision */
  readonly generation?: number;
  readonly status: any;
}

/** A pod of the DaemonSet, as the API server lists it (managedFields included: the watcher must walk past them). */
export function pod(shape: PodShape, now: number = Math.floor(Date.now() / 1000)): any {
  const node = shape.node ?? shape.target!;
  return {
    metadata: {
      name: shape.name,
      generateName: `${DAEMONSET}-`,
      namespace: NAMESPACE,
      uid: `uid-${shape.name}`,
      creationTimestamp: new Date((now - shape.ageSeconds) * 1000).toISOString().replace(/\.\d+Z$/, 'Z'),
      labels: { ...SELECTOR, 'controller-revision-hash': 'abc', 'pod-template-generation': String(shape.generation ?? TEMPLATE_GENERATION) },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'DaemonSet', name: DAEMONSET, uid: 'ds-uid', controller: true, blockOwnerDeletion: true }],
      managedFields: [{
        manager: 'kube-controller-manager',
        operation: 'Update',
        apiVersion: 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:labels': { '.': {}, 'f:pod-template-generation': {} } }, 'f:spec': { 'f:containers': { 'k:{"name":"fluent-bit"}': { '.': {} } } } },
      }],
    },
    spec: {
      ...(shape.node === undefined ? {} : { nodeName: shape.node }),
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
          },
        },
      },
      containers: [{ name: 'fluent-bit', image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.3', args: ['--config', '{"a": [1, 2]}'] }],
    },
    status: shape.status,
  };
}

const at = (now: number, secondsAgo: number) => new Date((now - secondsAgo) * 1000).toISOString().replace(/\.\d+Z$/, 'Z');

function conditions(now: number, ready: boolean): any[] {
  return [
    { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: at(now, 300) },
    { type: 'Initialized', status: 'True', lastTransitionTime: at(now, 300) },
    { type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: at(now, 60), ...(ready ? {} : { reason: 'ContainersNotReady', message: 'containers with unready status: [fluent-bit]' }) },
    { type: 'ContainersReady', status: ready ? 'True' : 'False', lastTransitionTime: at(now, 60) },
    { type: 'PodScheduled', status: 'True', lastTransitionTime: at(now, 300) },
  ];
}

const IMAGE = 'cr.fluentbit.io/fluent/fluent-bit:4.2.3';

export function running(now: number, restarts = 0): any {
  return {
    phase: 'Running',
    conditions: conditions(now, true),
    hostIP: '10.0.0.11',
    podIP: '10.0.0.11',
    startTime: at(now, 300),
    containerStatuses: [{
      name: 'fluent-bit',
      image: IMAGE,
      imageID: `${IMAGE}@sha256:0123`,
      ready: true,
      started: true,
      restartCount: restarts,
      state: { running: { startedAt: at(now, 120) } },
      ...(restarts > 0 ? { lastState: { terminated: { exitCode: 1, reason: 'Error', startedAt: at(now, 200), finishedAt: at(now, 125) } } } : { lastState: {} }),
    }],
  };
}

export function containerCreating(now: number): any {
  return {
    phase: 'Pending',
    conditions: conditions(now, false),
    hostIP: '10.0.0.11',
    startTime: at(now, 20),
    containerStatuses: [waitingStatus('fluent-bit', IMAGE, { reason: 'ContainerCreating' })],
  };
}

export function crashLoop(now: number, restarts: number): any {
  return {
    phase: 'Running',
    conditions: conditions(now, false),
    hostIP: '10.0.0.11',
    startTime: at(now, 600),
    containerStatuses: [{
      name: 'fluent-bit',
      image: IMAGE,
      imageID: `${IMAGE}@sha256:0123`,
      ready: false,
      started: false,
      restartCount: restarts,
      state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off 40s restarting failed container=fluent-bit pod=${DAEMONSET}-x7k2p_${NAMESPACE}(uid)` } },
      lastState: { terminated: { exitCode: 1, reason: 'Error', message: '[error] [config] section \'es\' tried to instance a plugin name that doesn\'t exist', startedAt: at(now, 45), finishedAt: at(now, 44) } },
    }],
  };
}

export function oomKilled(now: number): any {
  return {
    phase: 'Running',
    conditions: conditions(now, false),
    hostIP: '10.0.0.11',
    startTime: at(now, 200),
    containerStatuses: [{
      name: 'fluent-bit',
      image: IMAGE,
      imageID: `${IMAGE}@sha256:0123`,
      ready: false,
      started: false,
      restartCount: 1,
      state: { waiting: { reason: 'CrashLoopBackOff', message: `back-off 10s restarting failed container=fluent-bit pod=${DAEMONSET}-m2q9d_${NAMESPACE}(uid)` } },
      lastState: { terminated: { exitCode: 137, reason: 'OOMKilled', startedAt: at(now, 30), finishedAt: at(now, 5) } },
    }],
  };
}

/** A container that never started, waiting for `waiting.reason`, as the kubelet reports it. */
function waitingStatus(name: string, image: string, waiting: { reason: string; message?: string }): any {
  return { name, image, imageID: '', ready: false, started: false, restartCount: 0, lastState: {}, state: { waiting } };
}

export function imagePull(now: number, reason: 'ErrImagePull' | 'ImagePullBackOff'): any {
  const image = 'cr.fluentbit.io/fluent/fluent-bit:4.2.33';
  return {
    phase: 'Pending',
    conditions: conditions(now, false),
    hostIP: '10.0.0.11',
    startTime: at(now, 90),
    containerStatuses: [waitingStatus('fluent-bit', image, reason === 'ImagePullBackOff'
      ? { reason, message: `Back-off pulling image "${image}"` }
      : { reason, message: `rpc error: code = NotFound desc = failed to pull and unpack image "${image}": failed to resolve reference "${image}": ${image}: not found` })],
  };
}

export function missingSecretEnv(now: number): any {
  return {
    phase: 'Pending',
    conditions: conditions(now, false),
    hostIP: '10.0.0.11',
    startTime: at(now, 90),
    containerStatuses: [waitingStatus('fluent-bit', IMAGE, { reason: 'CreateContainerConfigError', message: 'secret "es-credentials" not found' })],
  };
}

export function unschedulable(now: number): any {
  return {
    phase: 'Pending',
    conditions: [{
      type: 'PodScheduled',
      status: 'False',
      reason: 'Unschedulable',
      lastProbeTime: null,
      lastTransitionTime: at(now, 900),
      message: '0/12 nodes are available: 1 Insufficient memory, 11 node(s) didn\'t satisfy plugin(s) [NodeAffinity]. preemption: 0/12 nodes are available: 1 No preemption victims found for incoming pod, 11 Preemption is not helpful for scheduling.',
    }],
  };
}

export function event(podName: string, now: number, type: string, reason: string, message: string, secondsAgo = 10): any {
  return {
    metadata: { name: `${podName}.17c0a`, namespace: NAMESPACE },
    involvedObject: { kind: 'Pod', namespace: NAMESPACE, name: podName, apiVersion: 'v1' },
    reason,
    message,
    type,
    count: 3,
    source: { component: 'kubelet', host: 'worker-a-1' },
    firstTimestamp: at(now, secondsAgo + 60),
    lastTimestamp: at(now, secondsAgo),
  };
}

/**
 * The app these pull-only shapes come from: a log collector with `rollout.prePull` and `rollout.watch`, promoting
 * the canary to an image that does not exist (4.2.33) from 4.1.1.
 */
export function prePullCanaryManifests(): Manifest[] {
  const chart = Testing.chart();
  const props = { name: 'logs', outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })] };
  new LogCollectorDaemonSet(chart, 'logs', {
    ...props,
    image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.33',
    rollout: {
      waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')],
      promoted: Promotion.through('canary'),
      argoCdSyncWaves: true,
      watch: {},
      prePull: {},
      previous: LogCollectorDaemonSet.release({ ...props, image: 'cr.fluentbit.io/fluent/fluent-bit:4.1.1' }),
    },
  });
  return synthManifests(chart);
}

/** The pull-only DaemonSet of `rollout.prePull` for the canary, its selector as renderPrePull writes it. */
export const PRE_PULL_DAEMONSET = 'logs-prepull-canary';
const PRE_PULL_SELECTOR = { 'app.kubernetes.io/instance': 'logs', 'app.kubernetes.io/name': 'logs-prepull', 'node-agents.cdk8s.io/pre-pull-group': 'canary' };

export function prePullDaemonSet(status: DaemonSetStatus): any {
  const ds = daemonSet(status);
  return {
    ...ds,
    metadata: { ...ds.metadata, name: PRE_PULL_DAEMONSET, labels: PRE_PULL_SELECTOR, annotations: { 'deprecated.daemonset.template.generation': String(TEMPLATE_GENERATION) } },
    spec: { selector: { matchLabels: PRE_PULL_SELECTOR }, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '100%', maxSurge: 0 } } },
  };
}

/** A pull-only pod: the new image in the init container `pull`, the pause container after it. */
export function prePullPod(shape: PodShape, now?: number): any {
  const p = pod(shape, now);
  return {
    ...p,
    metadata: {
      ...p.metadata,
      generateName: `${PRE_PULL_DAEMONSET}-`,
      labels: { ...PRE_PULL_SELECTOR, 'controller-revision-hash': 'def', 'pod-template-generation': String(shape.generation ?? TEMPLATE_GENERATION) },
      ownerReferences: [{ ...p.metadata.ownerReferences[0], name: PRE_PULL_DAEMONSET }],
    },
    spec: {
      ...p.spec,
      initContainers: [{ name: 'pull', image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.33', command: ['/fluent-bit/bin/fluent-bit', '--version'] }],
      containers: [{ name: 'pause', image: 'registry.k8s.io/pause:3.10' }],
    },
  };
}

/**
 * A pull-only pod whose init container's image cannot be pulled: Pending, not Initialized (the kubelet's
 * "containers with incomplete status"), the init container waiting in the pull error, the pause container PodInitializing.
 */
export function initImagePull(now: number, reason: 'ErrImagePull' | 'ImagePullBackOff'): any {
  const image = 'cr.fluentbit.io/fluent/fluent-bit:4.2.33';
  return {
    phase: 'Pending',
    conditions: [
      { type: 'PodReadyToStartContainers', status: 'True', lastTransitionTime: at(now, 300) },
      { type: 'Initialized', status: 'False', lastTransitionTime: at(now, 300), reason: 'ContainersNotInitialized', message: 'containers with incomplete status: [pull]' },
      { type: 'Ready', status: 'False', lastTransitionTime: at(now, 300), reason: 'ContainersNotReady', message: 'containers with unready status: [pause]' },
      { type: 'ContainersReady', status: 'False', lastTransitionTime: at(now, 300), reason: 'ContainersNotReady', message: 'containers with unready status: [pause]' },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: at(now, 300) },
    ],
    hostIP: '10.0.0.11',
    startTime: at(now, 300),
    initContainerStatuses: [waitingStatus('pull', image, {
      reason, message: reason === 'ImagePullBackOff' ? `Back-off pulling image "${image}"` : `rpc error: code = NotFound desc = failed to pull and unpack image "${image}": not found`,
    })],
    containerStatuses: [waitingStatus('pause', 'registry.k8s.io/pause:3.10', { reason: 'PodInitializing' })],
  };
}
