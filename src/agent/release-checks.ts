/**
 * Checks of one release of a node agent, on its resolved spec: the current release and the
 * previous one (rollout.previous) go through the same checks. Each problem names the prop, the bad
 * value and the fix; the construct prefixes its path. No constructs here.
 */
import { AgentSpec, CONFIG_VOLUME, ResolvedContainer, resolveResources } from './agent-spec';
import { AgentHandler } from './container-inputs';
import { hostPathTypeProblem } from './host-path-types';
import { AgentContainerSettings, AgentToleration, AgentVolumeKind, HostPathType, MountPropagation, TaintEffect, TolerationOperator } from './options';
import { AgentDnsPolicy } from './pod-options';
import { readinessTaintProblems } from './readiness-taint-spec';
import { UpdateStrategy, UpdateStrategyType } from './update-strategy';
import { REMOVER_CONTAINER } from '../scheduling/readiness-taint';
import { CONFIG_MAP_MAX_BYTES, configMapDataBytes } from '../validation/object-size';
import {
  checkAbsolutePath, checkCapability, checkConfigKey, checkDnsLabel, checkEnvName, checkDnsSubdomain, checkImage, checkInteger, checkLabelKey,
  checkLabels,
  checkSubPath, checkTolerationValue, describeValue, INT32_MAX,
  checkLabelValue, checkMemoryQuantity, checkPort, checkPortName, checkQuantity, checkRenderableKey, checkRequestNotAboveLimit, checkWholeNumber,
} from '../validation/values';

/** Namespaces every cluster has, owned by Kubernetes itself: never created (nor labelled) by an agent. */
const SYSTEM_NAMESPACES = ['default', 'kube-node-lease', 'kube-public', 'kube-system'];

/** Problems of one release's props. */
export function checkAgentSpec(spec: AgentSpec): string[] {
  const p = spec.props;
  const problems: string[] = [];
  problems.push(...checkDnsLabel('name', spec.name, 50).map((m) => `${m}; set "name" explicitly`));
  problems.push(...checkDnsLabel('namespace', spec.namespace));
  if (p.createNamespace && SYSTEM_NAMESPACES.includes(spec.namespace)) {
    problems.push(`createNamespace: "${spec.namespace}" exists in every cluster and belongs to Kubernetes; a Namespace object for it would carry this agent's `
      + 'Pod Security labels, which apply to every pod there (kube-proxy, the CNI and CSI agents in kube-system), and a prune would delete it. '
      + 'Drop createNamespace (the namespace exists), or give the agent a namespace of its own');
  }
  if (p.createNamespace && p.adopt) {
    problems.push(`createNamespace with adopt: the adopted DaemonSet runs in "${spec.namespace}", which exists and belongs to whoever installed it; `
      + 'a Namespace object for it would put this agent\'s Pod Security labels on every pod there, and deleting the agent (or a prune) would delete the namespace '
      + 'with everything in it. Drop createNamespace');
  }
  if (p.containerName !== undefined) problems.push(...checkDnsLabel('containerName', p.containerName));
  problems.push(...checkLabels('labels', p.labels));
  for (const key of Object.keys(p.podAnnotations ?? {})) problems.push(...checkLabelKey('podAnnotations', key), ...checkRenderableKey('podAnnotations', key));
  problems.push(...checkOwnLabels('labels', p.labels));
  if (p.component !== undefined) problems.push(...checkLabelValue('component', p.component));
  if (p.partOf !== undefined) problems.push(...checkLabelValue('partOf', p.partOf));

  // containers
  const containers = [...spec.containers, ...spec.initContainers];
  const names = containers.map((c) => c.name);
  for (const name of new Set(names)) {
    if (names.filter((n) => n === name).length > 1) problems.push(`containers: the name "${name}" is used by two containers; give each a unique name`);
  }
  for (const c of containers) {
    problems.push(...checkContainer(spec, c, spec.initContainers.includes(c)));
  }
  problems.push(...readinessTaintProblems(spec.readinessTaint));
  if (spec.readinessTaint && names.includes(REMOVER_CONTAINER)) {
    problems.push(`containers: "${REMOVER_CONTAINER}" is the readiness taint's remover container; give yours another name`);
  }

  // host paths and config
  const volumeNames = (p.hostPaths ?? []).map((v) => v.name);
  for (const volume of p.hostPaths ?? []) {
    const where = `hostPaths["${volume.name}"]`;
    problems.push(...checkDnsLabel(`${where}.name`, volume.name));
    if (volume.name === CONFIG_VOLUME) problems.push(`${where}.name "config" is reserved for the agent's ConfigMap; choose another name`);
    if (volumeNames.filter((n) => n === volume.name).length > 1) problems.push(`${where}: the volume name is used twice; give each hostPath a unique name`);
    problems.push(...checkAbsolutePath(`${where}.hostPath`, volume.hostPath));
    if (volume.mountPath !== undefined) problems.push(...checkAbsolutePath(`${where}.mountPath`, volume.mountPath));
    if (volume.type !== undefined && !Object.values(HostPathType).includes(volume.type)) problems.push(`${where}.type "${volume.type}" is not a hostPath type`);
    // The resolved default (Directory) is checked too: an untyped hostPath is Directory here.
    const typeProblem = typeof volume.hostPath === 'string' ? hostPathTypeProblem(`${where}.type`, volume.hostPath, volume.type ?? HostPathType.DIRECTORY) : undefined;
    if (typeProblem) problems.push(typeProblem);
  }
  const allVolumeNames = [...volumeNames, ...(p.volumes ?? []).map((v) => v.name)];
  for (const volume of p.volumes ?? []) {
    const where = `volumes["${volume.name}"]`;
    problems.push(...checkDnsLabel(`${where}.name`, volume.name));
    if (volume.name === CONFIG_VOLUME) problems.push(`${where}.name "config" is reserved for the agent's ConfigMap; choose another name`);
    if (allVolumeNames.filter((n) => n === volume.name).length > 1) problems.push(`${where}: the volume name is used twice (volumes and hostPaths share one namespace); give each volume a unique name`);
    if (volume.sourceName !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(volume.sourceName)) {
      problems.push(`${where}: "${volume.sourceName}" is not a valid ${volume.kind === AgentVolumeKind.SECRET ? 'Secret' : 'ConfigMap'} name (a DNS-1123 subdomain)`);
    }
    if (volume.defaultMode !== undefined && !(Number.isInteger(volume.defaultMode) && volume.defaultMode >= 0 && volume.defaultMode <= 0o777)) {
      problems.push(`${where}.defaultMode ${volume.defaultMode} must be a file mode from 0 to 0o777 (511)`);
    }
    if (volume.sizeLimit !== undefined && !/^[1-9][0-9]*(Mi|Gi|Ti)$/.test(volume.sizeLimit)) {
      problems.push(`${where}.sizeLimit "${volume.sizeLimit}" must be a whole number of Mi, Gi or Ti, e.g. "64Mi"`);
    }
  }
  for (const key of Object.keys(p.configData ?? {})) problems.push(...checkConfigKey('configData', key));
  problems.push(...configDataSizeProblems(p.configData));
  if (p.configMountPath !== undefined) problems.push(...checkAbsolutePath('configMountPath', p.configMountPath));

  problems.push(...checkPodOptions(spec));
  problems.push(...checkHostPortsOnce(spec));
  if (p.os !== undefined && p.os !== '') problems.push(...checkLabelValue('os', p.os));

  // update pace
  problems.push(...spec.updateStrategy.problems().map((m) => `updateStrategy: ${m}`));
  problems.push(...surgeProblems(spec, spec.updateStrategy).map((m) => `updateStrategy: ${m}`));
  problems.push(...checkWholeNumber('minReadySeconds', p.minReadySeconds));
  problems.push(...checkWholeNumber('revisionHistoryLimit', p.revisionHistoryLimit));
  problems.push(...checkWholeNumber('terminationGracePeriodSeconds', p.terminationGracePeriodSeconds));

  // scheduling
  for (const [key, value] of Object.entries(p.nodeSelector ?? {})) {
    problems.push(...checkLabelKey('nodeSelector', key), ...checkRenderableKey('nodeSelector', key), ...checkLabelValue(`nodeSelector["${key}"]`, value));
  }
  for (const requirement of p.nodeRequirements ?? []) {
    problems.push(...checkLabelKey('nodeRequirements', requirement.key));
    problems.push(...requirement.problems().map((m) => `nodeRequirements: ${m}`));
  }
  (p.nodeRequirementAlternatives ?? []).forEach((alternative, i) => {
    const prop = `nodeRequirementAlternatives[${i}]`;
    if (alternative.length === 0) problems.push(`${prop} is empty, which every node meets (the other alternatives would select nothing more); remove it`);
    for (const requirement of alternative) {
      problems.push(...checkLabelKey(prop, requirement.key));
      problems.push(...requirement.problems().map((m) => `${prop}: ${m}`));
    }
  });
  (p.tolerations ?? []).forEach((t, i) => problems.push(...checkToleration(`tolerations[${i}]`, t)));

  // priority
  if (p.priorityClass) {
    if (p.priorityClassName !== undefined) problems.push('priorityClassName and priorityClass are both set; give only one');
    problems.push(...checkWholeNumber('priorityClass.value', p.priorityClass.value, -2147483648));
    if (p.priorityClass.value > 1000000000) problems.push(`priorityClass.value ${p.priorityClass.value} is above 1000000000, the highest value a user PriorityClass may have`);
    if (p.priorityClass.name !== undefined) problems.push(...checkDnsLabel('priorityClass.name', p.priorityClass.name));
  }
  if (p.priorityClassName !== undefined && checkDnsSubdomain('priorityClassName', p.priorityClassName).length > 0) {
    problems.push(`priorityClassName "${p.priorityClassName}" is not a valid PriorityClass name (a DNS-1123 subdomain of at most 253 characters)`);
  }

  // RBAC
  (p.rbacRules ?? []).forEach((rule, i) => {
    if (rule.verbs.length === 0) problems.push(`rbacRules[${i}].verbs is empty; name the verbs, e.g. ["get", "list", "watch"]`);
    if (rule.resources.length === 0) problems.push(`rbacRules[${i}].resources is empty; name the resources, e.g. ["pods"]`);
  });
  return problems;
}

function checkContainer(spec: AgentSpec, c: ResolvedContainer, init: boolean): string[] {
  const where = `container "${c.name}"`;
  const s = c.settings;
  const problems: string[] = [];
  problems.push(...checkDnsLabel(`${where} name`, c.name));
  problems.push(...checkImage(`${where} image`, s.image));
  problems.push(...checkProbes(where, s, init));
  if (s.runAsUser !== undefined) problems.push(...checkInteger(`${where} runAsUser`, s.runAsUser, 0, INT32_MAX));
  if (s.runAsGroup !== undefined) problems.push(...checkInteger(`${where} runAsGroup`, s.runAsGroup, 0, INT32_MAX));
  const preStop = s.preStop ? handlerJson(s.preStop) : undefined;
  if (preStop?.exec && (preStop.exec.command ?? []).length === 0) problems.push(`${where} preStop has an empty command; give the command to run`);
  const containerPorts = (s.ports ?? []).map((port) => `${port.containerPort}/${port.protocol ?? 'TCP'}`);
  containerPorts.forEach((key, i) => {
    if (containerPorts.indexOf(key) !== i) problems.push(`${where}: container port ${key} is declared twice; declare each port once`);
  });
  const r = s.resources ?? {};
  for (const field of ['cpuRequest', 'cpuLimit'] as const) problems.push(...checkQuantity(`${where} resources.${field}`, r[field]));
  const memory = [
    ...checkMemoryQuantity(`${where} resources.memoryRequest`, r.memoryRequest),
    ...checkMemoryQuantity(`${where} resources.memoryLimit`, r.memoryLimit),
  ];
  problems.push(...memory);
  const res = resolveResources(s.resources);
  problems.push(...checkRequestNotAboveLimit(`${where} resources cpu`, res.cpuRequest, res.cpuLimit));
  // A memory quantity below the floor is explained above; comparing it with the other would blame the wrong one.
  if (memory.length === 0) problems.push(...checkRequestNotAboveLimit(`${where} resources memory`, res.memoryRequest, res.memoryLimit));
  (s.capabilities ?? []).forEach((cap) => problems.push(...checkCapability(`${where} capabilities`, cap)));
  for (const key of Object.keys(s.env ?? {})) problems.push(...checkEnvName(`${where} env`, key));
  for (const [resource, quantity] of Object.entries(s.extendedResources ?? {})) {
    const hugePages = /^hugepages-[0-9]+[KMGT]i$/.test(resource);
    if (!hugePages && (!resource.includes('/') || resource.startsWith('kubernetes.io/'))) {
      problems.push(`${where} extendedResources: "${resource}" is not an extended resource name; give a domain-prefixed name such as "example.com/device" or "hugepages-2Mi" (cpu and memory go in resources)`);
    } else if (!hugePages) {
      problems.push(...checkLabelKey(`${where} extendedResources`, resource));
    }
    problems.push(...checkQuantity(`${where} extendedResources["${resource}"]`, quantity));
  }
  if (s.seLinuxLevel !== undefined && !/^s[0-9]+(-s[0-9]+)?(:c[0-9]+([.,]c[0-9]+)*)?$/.test(s.seLinuxLevel)) {
    problems.push(`${where} seLinuxLevel "${s.seLinuxLevel}" is not an SELinux MLS/MCS level such as "s0" or "s0:c123,c456"`);
  }
  const portNames = (s.ports ?? []).map((port) => port.name);
  for (const port of s.ports ?? []) {
    problems.push(...checkPortName(`${where} port name`, port.name));
    if (portNames.filter((n) => n === port.name).length > 1) problems.push(`${where}: the port name "${port.name}" is used twice`);
    problems.push(...checkPort(`${where} port "${port.name}" containerPort`, port.containerPort));
    problems.push(...checkPort(`${where} port "${port.name}" hostPort`, port.hostPort));
    if (spec.hostNetwork && port.hostPort !== undefined && port.hostPort !== port.containerPort) {
      problems.push(`${where} port "${port.name}": with hostNetwork the hostPort (${port.hostPort}) must equal the containerPort (${port.containerPort}); drop hostPort or make them equal`);
    }
  }
  for (const mount of c.mounts) {
    if (mount.volume !== CONFIG_VOLUME && !spec.hostPathVolumes.has(mount.volume) && !spec.volumes.has(mount.volume)) {
      problems.push(`${where} mounts "${mount.volume}", which is not a volume of the agent; add it to hostPaths or volumes, or fix the name`);
    }
    if (mount.volume === CONFIG_VOLUME && !spec.configData) {
      problems.push(`${where} mounts "config" but the agent has no configData`);
    }
    problems.push(...checkAbsolutePath(`${where} mountPath`, mount.mountPath));
    if (mount.subPath !== undefined) problems.push(...checkSubPath(`${where} mount "${mount.volume}" subPath`, mount.subPath));
    if (mount.propagation === MountPropagation.BIDIRECTIONAL && !s.privileged) {
      problems.push(`${where} mounts "${mount.volume}" with Bidirectional propagation, which the API allows only in a privileged container; set privileged: true or use HostToContainer`);
    }
    if (mount.propagation === MountPropagation.BIDIRECTIONAL && mount.readOnly) {
      problems.push(`${where} mounts "${mount.volume}" with Bidirectional propagation but read-only (readOnly defaults to true): Bidirectional is there so that `
        + 'mounts the container makes below it reach the host, and a read-only mount lets it create nothing there (EROFS on every mkdir); '
        + 'set readOnly: false on it, or use HostToContainer to only see the host\'s mounts');
    }
  }
  const paths = c.mounts.map((m) => m.mountPath);
  for (const path of new Set(paths)) {
    if (paths.filter((x) => x === path).length > 1) problems.push(`${where} mounts two volumes at ${path}`);
  }
  return problems;
}

/** Surge starts a second pod on the node beside the old one: refuse it where the two would clash. */
export function surgeProblems(spec: AgentSpec, strategy: UpdateStrategy): string[] {
  const problems: string[] = [];
  if (strategy.type !== UpdateStrategyType.ROLLING_UPDATE || !strategy.surges) return problems;
  if (spec.hostPorts.length > 0) {
    const ports = spec.hostPorts.map((p) => `${p.port}/${p.protocol}`).join(', ');
    problems.push(`maxSurge ${strategy.maxSurge!.toString()} with host port(s) ${ports}: the surge pod can never schedule beside the old one (the scheduler's NodePorts filter), so the rollout deadlocks; use maxUnavailable instead (e.g. UpdateStrategy.oneAtATime())`);
  }
  const writable = (spec.props.hostPaths ?? []).filter((v) => v.readOnly === false);
  if (writable.length > 0) {
    problems.push(`maxSurge ${strategy.maxSurge!.toString()} with writable hostPath(s) ${writable.map((v) => v.hostPath).join(', ')}: old and new pod would write the same host state at once; use maxUnavailable instead`);
  }
  return problems;
}


function checkToleration(at: string, t: AgentToleration): string[] {
  const problems: string[] = [];
  if (t.value !== undefined) problems.push(...checkTolerationValue(`${at}.value`, t.value));
  const operator = t.operator ?? TolerationOperator.EQUAL;
  if (!Object.values(TolerationOperator).includes(operator)) problems.push(`${at}.operator "${operator}" is not Exists or Equal`);
  if (operator === TolerationOperator.EXISTS && t.value) {
    problems.push(`${at}: operator Exists with value "${t.value}"; Exists ignores values, so drop the value or use operator Equal`);
  }
  if (operator === TolerationOperator.EQUAL && !t.key) {
    problems.push(`${at}: operator Equal needs a key; to tolerate every taint use operator Exists with no key (or tolerateAllTaints)`);
  }
  if (t.effect !== undefined && !Object.values(TaintEffect).includes(t.effect)) {
    problems.push(`${at}.effect "${t.effect}" is unknown; use NoSchedule, PreferNoSchedule or NoExecute`);
  }
  if (t.tolerationSeconds !== undefined && t.effect !== TaintEffect.NO_EXECUTE) {
    problems.push(`${at}: tolerationSeconds is only meaningful with effect NoExecute (got ${t.effect ?? 'every effect'}); set effect NoExecute or drop tolerationSeconds`);
  }
  if (t.tolerationSeconds !== undefined && !Number.isInteger(t.tolerationSeconds)) {
    problems.push(`${at}.tolerationSeconds must be a whole number, got ${t.tolerationSeconds}`);
  }
  if (t.key) problems.push(...checkLabelKey(`${at}.key`, t.key));
  return problems;
}


/** Labels the agent sets itself on its pods: never overridden by podLabels. */
const OWN_POD_LABELS = [
  'app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/version', 'app.kubernetes.io/component',
  'app.kubernetes.io/part-of', 'app.kubernetes.io/managed-by', 'node-agents.cdk8s.io/rollout-group',
];
/** The API server's C identifier rule for env names was relaxed in 1.30; prefixes stay conservative. */
const ENV_PREFIX = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const IPV4 = /^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}$/;

/** checkDnsSubdomain, worded for the name of an object the pod refers to. */
function checkSubdomain(prop: string, value: string): string[] {
  return checkDnsSubdomain(prop, value).length === 0 ? [] : [`${prop} "${value}" is not a valid object name (a DNS-1123 subdomain: lower-case letters, digits, "-" and ".")`];
}

/**
 * `labels` go on every object, but the agent's own identity labels win on each of them (the
 * selector and version tracking rely on them): one given here would be dropped without a word.
 */
function checkOwnLabels(prop: string, labels: { [key: string]: string } | undefined): string[] {
  return Object.keys(labels ?? {}).filter((key) => OWN_POD_LABELS.includes(key)).map((key) => `${prop}: "${key}" is set by the agent itself and would be `
    + `dropped without a word (selectors and version tracking rely on it); ${OWN_LABEL_PROPS[key] ?? 'use another key'}`);
}

/** Where the value of each of the agent's own labels comes from, when a prop of every agent sets it. */
const OWN_LABEL_PROPS: { [key: string]: string } = {
  'app.kubernetes.io/name': 'set the agent\'s "name" instead (it is both its name and its instance label)',
  'app.kubernetes.io/instance': 'set the agent\'s "name" instead (it is both its name and its instance label)',
  'app.kubernetes.io/version': 'the version label is the image\'s tag',
};

function checkPodOptions(spec: AgentSpec): string[] {
  const p = spec.props;
  const problems: string[] = [];
  const pullSecrets = p.imagePullSecrets ?? [];
  pullSecrets.forEach((name, i) => {
    problems.push(...checkSubdomain(`imagePullSecrets[${i}]`, name));
    if (pullSecrets.indexOf(name) !== i) problems.push(`imagePullSecrets names "${name}" twice`);
  });
  for (const key of Object.keys(p.serviceAccountAnnotations ?? {})) {
    problems.push(...checkLabelKey('serviceAccountAnnotations', key), ...checkRenderableKey('serviceAccountAnnotations', key));
  }
  for (const key of Object.keys(p.extraEnv ?? {})) problems.push(...checkEnvName('extraEnv', key));
  for (const key of Object.keys(p.fieldEnv ?? {})) problems.push(...checkEnvName('fieldEnv', key));
  if (p.serviceAccountName !== undefined) problems.push(...checkSubdomain('serviceAccountName', p.serviceAccountName));
  problems.push(...checkLabels('podLabels', p.podLabels));
  for (const key of Object.keys(p.podLabels ?? {})) {
    if (OWN_POD_LABELS.includes(key)) problems.push(`podLabels: "${key}" is set by the agent itself (selectors and version tracking rely on it); use another key`);
  }
  (p.envFrom ?? []).forEach((source, i) => {
    problems.push(...checkSubdomain(`envFrom[${i}] name`, source.name));
    if (source.prefix !== undefined && !ENV_PREFIX.test(source.prefix)) {
      problems.push(`envFrom[${i}].prefix "${source.prefix}" must be letters, digits, "_", "-" or ".", not starting with a digit`);
    }
  });
  const dns = p.dnsConfig;
  if (p.dnsPolicy === AgentDnsPolicy.NONE && (dns?.nameservers ?? []).length === 0) {
    problems.push('dnsPolicy None needs dnsConfig.nameservers: without them the pods have no DNS at all');
  }
  if (p.dnsPolicy !== undefined && !Object.values(AgentDnsPolicy).includes(p.dnsPolicy)) problems.push(`dnsPolicy "${p.dnsPolicy}" is unknown`);
  if ((dns?.nameservers ?? []).length > 3) problems.push(`dnsConfig.nameservers has ${dns!.nameservers!.length} entries; the API allows at most 3`);
  for (const server of dns?.nameservers ?? []) {
    if (!IPV4.test(server) && !/^[0-9a-fA-F:]+$/.test(server)) problems.push(`dnsConfig.nameservers: "${server}" is not an IP address`);
  }
  if ((dns?.searches ?? []).length > 32) problems.push(`dnsConfig.searches has ${dns!.searches!.length} entries; the API allows at most 32`);
  for (const domain of dns?.searches ?? []) problems.push(...checkSubdomain('dnsConfig.searches', domain.replace(/\.$/, '')));
  const containerNames = [...spec.containers, ...spec.initContainers].map((c) => c.name);
  for (const name of Object.keys(p.containerResources ?? {})) {
    if (!containerNames.includes(name)) {
      problems.push(`containerResources names "${name}", which is not a container of the pod; the containers are ${containerNames.map((n) => `"${n}"`).join(', ')}`);
    }
  }
  return problems;
}


/** The rendered form of a hook (its command), for the checks. */
function handlerJson(handler: AgentHandler): { exec?: { command?: string[] } } | undefined {
  try {
    return (handler._toKplus() as unknown as { _toKube(c: unknown): { exec?: { command?: string[] } } })._toKube({});
  } catch {
    return undefined;
  }
}

/**
 * configData becomes one ConfigMap, which the API server refuses above 1 MiB: refused here, with the prop,
 * rather than by the late size check at synthesis.
 */
function configDataSizeProblems(data: { [file: string]: string } | undefined): string[] {
  const bytes = configMapDataBytes({ data });
  return bytes > CONFIG_MAP_MAX_BYTES
    ? [`configData holds ${bytes} bytes (keys and values), above the API server's ConfigMap limit of ${CONFIG_MAP_MAX_BYTES} bytes (1 MiB); `
      + 'make the files smaller, or move the large ones into a ConfigMap of their own mounted with volumes: [AgentVolume.configMap(...)]']
    : [];
}

/** A cdk8s Duration as read here: its amount (a number unless a caller passed something else) and unit. */
interface DurationLike {
  readonly amount: unknown;
  readonly unit: { readonly label: string };
}

/**
 * The Durations among a probe's options (one level down) made with something other than a number
 * (`Duration.seconds({})` from JavaScript), which cdk8s reports as "[object Object] must be ...".
 */
function badDurations(probe: object): Array<[string, DurationLike]> {
  const found: Array<[string, DurationLike]> = [];
  for (const options of Object.values(probe)) {
    if (typeof options !== 'object' || options === null) continue;
    for (const [field, value] of Object.entries(options)) {
      const d = value as Partial<DurationLike> | null;
      if (typeof d === 'object' && d !== null && 'amount' in d && typeof d.unit?.label === 'string' && typeof d.amount !== 'number') {
        found.push([field, d as DurationLike]);
      }
    }
  }
  return found;
}

/**
 * Probes as the API server checks them (core/validation validateProbe): a port 1-65535, whole
 * seconds, periods and thresholds of at least 1, successThreshold 1 for liveness and startup; and no
 * probe on an init container. Checked here so the error names the container and the probe.
 */
function checkProbes(at: string, s: AgentContainerSettings, init: boolean): string[] {
  const problems: string[] = [];
  for (const [name, probe] of [['readiness', s.readiness], ['liveness', s.liveness], ['startup', s.startup]] as const) {
    if (!probe) continue;
    const prop = `${at} ${name} probe`;
    if (init) {
      problems.push(`${prop}: an init container runs to completion before the pod starts and may have no probe; drop it, or make the container a sidecar`);
      continue;
    }
    let json: { [key: string]: any };
    try {
      json = (probe._toKplus() as unknown as { _toKube(c: unknown): { [key: string]: any } })._toKube({ portNumber: undefined });
    } catch (e) {
      const bad = badDurations(probe._toKplus());
      problems.push(...(bad.length > 0
        ? bad.map(([field, d]) => `${prop} ${field}: Duration.${d.unit.label}() was given ${describeValue(d.amount)}; give it a number, e.g. Duration.seconds(10)`)
        : [`${prop}: ${(e as Error).message} Use whole seconds, e.g. Duration.seconds(10)`]));
      continue;
    }
    const port = json.httpGet?.port?.value ?? json.tcpSocket?.port?.value;
    if ((json.httpGet || json.tcpSocket) && typeof port === 'number' && !(Number.isInteger(port) && port >= 1 && port <= 65535)) {
      problems.push(`${prop} port ${port} is outside 1-65535; give the port the container listens on`);
    }
    for (const [field, min] of [['initialDelaySeconds', 0], ['periodSeconds', 1], ['timeoutSeconds', 1], ['failureThreshold', 1], ['successThreshold', 1]] as const) {
      if (json[field] !== undefined) problems.push(...checkInteger(`${prop} ${field}`, json[field], min, INT32_MAX));
    }
    if (name !== 'readiness' && json.successThreshold !== undefined && json.successThreshold !== 1) {
      problems.push(`${prop} successThreshold must be 1 for a ${name} probe (the API requires it); only a readiness probe may need several successes`);
    }
  }
  return problems;
}

/** A host port is bound once per pod: two containers asking for one (e.g. a sidecar under hostNetwork) never start. */
function checkHostPortsOnce(spec: AgentSpec): string[] {
  const owners = new Map<string, string>();
  const problems: string[] = [];
  for (const c of spec.containers) {
    for (const port of c.ports) {
      const hostPort = port.hostPort;
      if (hostPort === undefined) continue;
      const key = `${hostPort}/${port.protocol ?? 'TCP'}`;
      const owner = owners.get(key);
      if (owner !== undefined && owner !== c.name) {
        problems.push(`host port ${key} is bound by two containers, "${owner}" and "${c.name}"${spec.hostNetwork ? ' (with hostNetwork every container port is a host port)' : ''}; give one of them another port`);
      }
      owners.set(key, c.name);
    }
  }
  return problems;
}
