/**
 * The prop shapes of the node agent and its rollout (see ./prop-shape for the mechanism), shared
 * by the specialized agents' shapes.
 */
import * as kplus from 'cdk8s-plus-28';
import { checkConfigKey, checkEnvName, checkLabelKey, throwIfProblems } from './checks';
import { NodeRequirement } from './node-requirement';
import { AgentVolume } from './options';
import { AgentDnsPolicy, AgentEnvSource } from './pod-options';
import { assertPropTypes, checkShape, KeyCheck, PropFields, shape } from './prop-shape';
import { AgentRelease } from './release';
import { Promotion, RolloutWave } from './rollout';
import { UpdateStrategy } from './update-strategy';
import { AgentAdoption } from '../adoption/adoption';

export { assertPropTypes, checkFields, checkShape, shape } from './prop-shape';
export type { PropFields, PropShape } from './prop-shape';

const { string, number, boolean, array, map, object, instance, enumOf, required } = shape;

const envKey: KeyCheck = (prop, key) => checkEnvName(`${prop}`, key);
const configKey: KeyCheck = (prop, key) => checkConfigKey(prop, key);
const labelKey: KeyCheck = (prop, key) => checkLabelKey(prop, key);

/** Label maps: keys checked as label keys, values must be strings. */
export const LABELS = map(string('v1'), labelKey);
/** An environment map of kplus.EnvValue. */
export const ENV = map(instance(() => kplus.EnvValue, 'kplus.EnvValue.fromValue(...) and the other kplus.EnvValue factories'), envKey);
export const RESOURCES = object({
  cpuRequest: string('100m'),
  cpuLimit: string('500m'),
  memoryRequest: string('128Mi'),
  memoryLimit: string('512Mi'),
});
export const TOLERATION = object({
  key: string('node-role.kubernetes.io/control-plane'),
  operator: enumOf(() => ['Exists', 'Equal'], 'TolerationOperator.EXISTS or EQUAL'),
  value: string('true'),
  effect: enumOf(() => ['NoSchedule', 'PreferNoSchedule', 'NoExecute'], 'TaintEffect.NO_SCHEDULE, PREFER_NO_SCHEDULE or NO_EXECUTE'),
  tolerationSeconds: number(),
});
const MOUNT_PROPAGATION = enumOf(() => ['None', 'HostToContainer', 'Bidirectional'], 'MountPropagation.NONE, HOST_TO_CONTAINER or BIDIRECTIONAL');
export const HOST_PATH = object({
  name: required(string('logs')),
  hostPath: required(string('/var/log')),
  type: enumOf(() => ['Directory', 'DirectoryOrCreate', 'File', 'FileOrCreate', 'Socket', 'CharDevice', 'BlockDevice'], 'a HostPathType'),
  mountPath: string('/var/log'),
  readOnly: boolean(),
  propagation: MOUNT_PROPAGATION,
  mountInMainContainer: boolean(),
});
const PORT = object({
  name: required(string('metrics')),
  containerPort: required(number()),
  hostPort: number(),
  protocol: enumOf(() => Object.values(kplus.Protocol), 'kplus.Protocol.TCP, UDP or SCTP'),
});
const PROBE = instance(() => kplus.Probe, 'kplus.Probe.fromHttpGet(), fromTcpSocket() or fromCommand()');
/** The settings of every container (main, sidecars, init containers). */
export const CONTAINER_SETTINGS: PropFields = {
  image: required(string('registry/name:1.2.3')),
  command: array(string('/bin/agent')),
  args: array(string('--verbose')),
  env: ENV,
  ports: array(PORT),
  resources: RESOURCES,
  privileged: boolean(),
  capabilities: array(string('NET_ADMIN')),
  runAsRoot: boolean(),
  runAsUser: number(),
  runAsGroup: number(),
  readOnlyRootFilesystem: boolean(),
  readiness: PROBE,
  liveness: PROBE,
  startup: PROBE,
  preStop: instance(() => kplus.Handler, 'kplus.Handler.fromCommand(), fromHttpGet() or fromTcpSocket()'),
  extendedResources: map(string('1')),
  seLinuxLevel: string('s0'),
};
const MOUNT = object({
  volume: required(string('config')),
  mountPath: required(string('/etc/agent')),
  readOnly: boolean(),
  propagation: MOUNT_PROPAGATION,
  subPath: string('agent.conf'),
});
export const CONTAINER = object({
  ...CONTAINER_SETTINGS,
  name: required(string('sidecar')),
  mounts: array(MOUNT),
});

/** The shape of AgentPodOptions, which every agent construct takes. */
export const POD_OPTIONS: PropFields = {
  imagePullSecrets: array(string('registry-credentials')),
  serviceAccountAnnotations: map(string('arn:aws:iam::123456789012:role/agent')),
  serviceAccountName: string('my-agent'),
  podLabels: LABELS,
  podAnnotations: map(string('value')),
  extraEnv: ENV,
  envFrom: array(instance(() => AgentEnvSource, 'AgentEnvSource.secret() or configMap()')),
  volumes: array(instance(() => AgentVolume, 'AgentVolume.secret(), configMap() or emptyDir()')),
  mounts: array(MOUNT),
  sidecars: array(CONTAINER),
  initContainers: array(CONTAINER),
  dnsPolicy: enumOf(() => Object.values(AgentDnsPolicy), 'an AgentDnsPolicy such as AgentDnsPolicy.CLUSTER_FIRST'),
  dnsConfig: object({ nameservers: array(string('10.0.0.10')), searches: array(string('svc.cluster.local')), options: map(string('2')) }),
  containerResources: map(RESOURCES),
};
export const UPDATE_STRATEGY = instance(() => UpdateStrategy, 'UpdateStrategy.steady(), fast(), oneAtATime(), onDelete() or rollingUpdate()');
export const NODE_REQUIREMENT = instance(() => NodeRequirement, 'NodeRequirement.in(), notIn(), exists(), doesNotExist(), gt() or lt()');
const CONFIG_DATA = map(string('log_level = info'), configKey);

/** The shape of AgentRollout. */
export const ROLLOUT = object({
  waves: required(array(instance(() => RolloutWave, 'RolloutWave.labelled(), matching() or hostnames()'))),
  promoted: required(instance(() => Promotion, 'Promotion.none(), through(), groups() or all()')),
  previous: instance(() => AgentRelease, 'the agent construct\'s release(previousProps), or AgentRelease.fromProps(previousProps)'),
  gates: array(object({ afterWave: required(string('canary')), prometheusUrl: required(string('http://prometheus-operated.monitoring.svc:9090')) })),
  labelKey: string('node-agents.cdk8s.io/rollout-wave'),
  canaryPace: UPDATE_STRATEGY,
  wavePace: map(UPDATE_STRATEGY),
  argoCdSyncWaves: boolean(),
});

/** The shape of NodeAgentDaemonSetProps. */
export const NODE_AGENT_PROPS: PropFields = {
  ...CONTAINER_SETTINGS,
  ...POD_OPTIONS,
  exclusiveComponents: array(string('gpu-driver')),
  name: string('my-agent'),
  namespace: string('kube-system'),
  createNamespace: boolean(),
  containerName: string('agent'),
  hostPaths: array(HOST_PATH),
  configData: CONFIG_DATA,
  configMountPath: string('/etc/agent'),
  fieldEnv: map(enumOf(() => Object.values(kplus.EnvFieldPaths), 'a kplus.EnvFieldPaths value such as NODE_IP'), envKey),
  updateStrategy: UPDATE_STRATEGY,
  minReadySeconds: number(),
  revisionHistoryLimit: number(),
  nodeSelector: LABELS,
  os: string('linux'),
  nodeRequirements: array(NODE_REQUIREMENT),
  nodeRequirementAlternatives: array(array(NODE_REQUIREMENT)),
  excludeVirtualNodes: boolean(),
  tolerateAllTaints: boolean(),
  tolerateControlPlane: boolean(),
  tolerations: array(TOLERATION),
  priorityClassName: string('system-node-critical'),
  priorityClass: object({ name: string('my-agent-critical'), value: required(number()) }),
  createPriorityQuota: boolean(),
  hostNetwork: boolean(),
  hostPid: boolean(),
  rbacRules: array(object({
    apiGroups: array(string('')),
    resources: required(array(string('pods'))),
    verbs: required(array(string('get'))),
    resourceNames: array(string('my-object')),
  })),
  automountServiceAccountToken: boolean(),
  terminationGracePeriodSeconds: number(),
  component: string('exporter'),
  partOf: string('observability'),
  labels: LABELS,
  rollout: ROLLOUT,
  adopt: instance(() => AgentAdoption, 'AgentAdoption.daemonSet(), fluentBitChart() or nodeExporterChart()'),
};

/**
 * Checks NodeAgentDaemonSetProps (and its rollout) for wrong types; throws an Error starting with
 * `where` ("NodeAgentDaemonSet <path>") naming every prop of the wrong type.
 */
export function checkAgentPropTypes(where: string, props: unknown): void {
  assertPropTypes(where, props, NODE_AGENT_PROPS);
}

/** Checks an AgentRollout alone (a construct's `rollout` prop); problems name `rollout.…`. */
export function checkRolloutPropTypes(where: string, rollout: unknown): void {
  throwIfProblems(where, checkShape('rollout', rollout, ROLLOUT));
}
