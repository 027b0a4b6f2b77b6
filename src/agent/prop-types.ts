/**
 * Type checks for props that did not come through the TypeScript compiler: JavaScript callers, and
 * props built from parsed YAML or JSON. Each props interface has a small declarative shape; a
 * construct checks its props against it on entry, so a wrong type gets the same clear error as a
 * wrong value ("prop resources.cpuRequest must be a string such as \"100m\", got number 1") instead
 * of a TypeError deep inside. Value checks (ranges, formats) stay in ./checks.
 */
import * as kplus from 'cdk8s-plus-28';
import { checkConfigKey, checkEnvName, checkLabelKey, describeValue, throwIfProblems } from './checks';
import { NodeRequirement } from './node-requirement';
import { Promotion, RolloutWave } from './rollout';
import { UpdateStrategy } from './update-strategy';

/** Checks one map key; returns problems naming `prop`. */
type KeyCheck = (prop: string, key: string) => string[];

/** A class, whatever its constructor's visibility. */
type ClassRef = { readonly prototype: object };

/** The expected type of one prop. */
export type PropShape =
  | { readonly type: 'string'; readonly example: string; readonly required?: boolean }
  | { readonly type: 'number'; readonly required?: boolean }
  | { readonly type: 'boolean'; readonly required?: boolean }
  | { readonly type: 'array'; readonly items: PropShape; readonly required?: boolean }
  | { readonly type: 'map'; readonly values: PropShape; readonly keys?: KeyCheck; readonly required?: boolean }
  | { readonly type: 'object'; readonly fields: PropFields; readonly required?: boolean }
  // A thunk, so shapes can name classes of modules that import this one (classes with private constructors too).
  | { readonly type: 'instance'; readonly of: () => ClassRef; readonly hint: string; readonly required?: boolean }
  | { readonly type: 'enum'; readonly values: () => readonly string[]; readonly hint: string; readonly required?: boolean }
  | { readonly type: 'any'; readonly required?: boolean };

/** The fields of an object shape, by prop name. */
export type PropFields = { readonly [field: string]: PropShape };

/** Builders for shapes: `object({ image: required(string('registry/name:1.2.3')), ports: array(...) })`. */
export const shape = {
  string: (example: string): PropShape => ({ type: 'string', example }),
  number: (): PropShape => ({ type: 'number' }),
  boolean: (): PropShape => ({ type: 'boolean' }),
  array: (items: PropShape): PropShape => ({ type: 'array', items }),
  map: (values: PropShape, keys?: KeyCheck): PropShape => ({ type: 'map', values, keys }),
  object: (fields: PropFields): PropShape => ({ type: 'object', fields }),
  instance: (of: () => ClassRef, hint: string): PropShape => ({ type: 'instance', of, hint }),
  enumOf: (values: () => readonly string[], hint: string): PropShape => ({ type: 'enum', values, hint }),
  any: (): PropShape => ({ type: 'any' }),
  required: (s: PropShape): PropShape => ({ ...s, required: true }),
};

function isPlainObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every type problem of `value` against `s`, each starting with "prop <path>". */
export function checkShape(path: string, value: unknown, s: PropShape): string[] {
  const prop = `prop ${path}`;
  if (value === undefined) return [];
  switch (s.type) {
    case 'any':
      return [];
    case 'string':
      return typeof value === 'string' ? [] : [`${prop} must be a string such as ${JSON.stringify(s.example)}, got ${describeValue(value)}`];
    case 'number':
      return typeof value === 'number' ? [] : [`${prop} must be a number, got ${describeValue(value)}`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${prop} must be true or false, got ${describeValue(value)}`];
    case 'enum': {
      const values = s.values();
      return typeof value === 'string' && values.includes(value)
        ? []
        : [`${prop} must be one of ${s.hint} (${values.map((v) => JSON.stringify(v)).join(', ')}), got ${describeValue(value)}`];
    }
    case 'instance':
      return value instanceof (s.of() as unknown as ObjectConstructor) ? [] : [`${prop} must be made with ${s.hint}, got ${describeValue(value)}`];
    case 'array':
      if (!Array.isArray(value)) return [`${prop} must be an array, got ${describeValue(value)}`];
      return value.flatMap((item, i) => (item === undefined
        ? [`${prop}[${i}] must not be undefined`]
        : checkShape(`${path}[${i}]`, item, s.items)));
    case 'map':
      if (!isPlainObject(value)) return [`${prop} must be an object mapping names to values, got ${describeValue(value)}`];
      return Object.keys(value).flatMap((key) => [
        ...(s.keys ? s.keys(`${path}`, key).map((p) => `prop ${p}`) : []),
        ...(value[key] === undefined ? [`${prop}[${JSON.stringify(key)}] must not be undefined`] : checkShape(`${path}[${JSON.stringify(key)}]`, value[key], s.values)),
      ]);
    case 'object':
      if (!isPlainObject(value)) return [`${prop} must be an object, got ${describeValue(value)}`];
      return checkFields(path, value, s.fields);
  }
}

/** Every type problem of an object's fields, by their declared shapes (undeclared fields are left alone). */
export function checkFields(path: string, value: { [key: string]: unknown }, fields: PropFields): string[] {
  const problems: string[] = [];
  for (const field of Object.keys(fields)) {
    const fieldShape = fields[field];
    const fieldPath = path ? `${path}.${field}` : field;
    const fieldValue = Object.prototype.hasOwnProperty.call(value, field) ? value[field] : undefined;
    if (fieldValue === undefined) {
      if (fieldShape.required) problems.push(`prop ${fieldPath} is required${fieldShape.type === 'string' ? `, e.g. ${JSON.stringify(fieldShape.example)}` : ''}`);
      continue;
    }
    problems.push(...checkShape(fieldPath, fieldValue, fieldShape));
  }
  return problems;
}

/**
 * Checks a construct's props against their shape; throws one Error starting with `where` (the
 * construct kind and path) that lists every problem.
 */
export function assertPropTypes(where: string, props: unknown, fields: PropFields): void {
  const problems = isPlainObject(props)
    ? checkFields('', props, fields)
    : [`props must be an object, got ${describeValue(props)}`];
  throwIfProblems(where, problems);
}


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
};
export const CONTAINER = object({
  ...CONTAINER_SETTINGS,
  name: required(string('sidecar')),
  mounts: array(object({
    volume: required(string('config')),
    mountPath: required(string('/etc/agent')),
    readOnly: boolean(),
    propagation: MOUNT_PROPAGATION,
    subPath: string('agent.conf'),
  })),
});
export const UPDATE_STRATEGY = instance(() => UpdateStrategy, 'UpdateStrategy.steady(), fast(), oneAtATime(), onDelete() or rollingUpdate()');
export const NODE_REQUIREMENT = instance(() => NodeRequirement, 'NodeRequirement.in(), notIn(), exists(), doesNotExist(), gt() or lt()');
const CONFIG_DATA = map(string('log_level = info'), configKey);

/** The shape of AgentRollout. */
export const ROLLOUT = object({
  waves: required(array(instance(() => RolloutWave, 'RolloutWave.labelled(), matching() or hostnames()'))),
  promoted: required(instance(() => Promotion, 'Promotion.none(), through(), groups() or all()')),
  previous: object({
    image: string('registry/name:1.2.2'),
    command: array(string('/bin/agent')),
    args: array(string('--verbose')),
    env: ENV,
    resources: RESOURCES,
    configData: CONFIG_DATA,
    sidecars: array(CONTAINER),
    initContainers: array(CONTAINER),
  }),
  labelKey: string('node-agents.cdk8s.io/rollout-wave'),
  canaryPace: UPDATE_STRATEGY,
  wavePace: map(UPDATE_STRATEGY),
  argoCdSyncWaves: boolean(),
});

/** The shape of NodeAgentDaemonSetProps. */
export const NODE_AGENT_PROPS: PropFields = {
  ...CONTAINER_SETTINGS,
  name: string('my-agent'),
  namespace: string('kube-system'),
  createNamespace: boolean(),
  containerName: string('agent'),
  hostPaths: array(HOST_PATH),
  configData: CONFIG_DATA,
  configMountPath: string('/etc/agent'),
  sidecars: array(CONTAINER),
  initContainers: array(CONTAINER),
  fieldEnv: map(enumOf(() => Object.values(kplus.EnvFieldPaths), 'a kplus.EnvFieldPaths value such as NODE_IP'), envKey),
  updateStrategy: UPDATE_STRATEGY,
  minReadySeconds: number(),
  revisionHistoryLimit: number(),
  nodeSelector: LABELS,
  os: string('linux'),
  nodeRequirements: array(NODE_REQUIREMENT),
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
  podAnnotations: map(string('value')),
  rollout: ROLLOUT,
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
