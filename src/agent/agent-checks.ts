/**
 * Checks of one release of a node agent, on its resolved spec: the current release and the
 * previous one (rollout.previous) go through the same checks. Each problem names the prop, the bad
 * value and the fix; the construct prefixes its path. No constructs here.
 */
import { AgentSpec, CONFIG_VOLUME, ResolvedContainer, resolveResources } from './agent-spec';
import {
  checkAbsolutePath, checkCapability, checkConfigKey, checkDnsLabel, checkImage, checkLabelKey, checkLabels,
  checkLabelValue, checkPort, checkPortName, checkQuantity, checkRequestNotAboveLimit, checkWholeNumber,
} from './checks';
import { AgentToleration, AgentVolumeKind, HostPathType, MountPropagation, TaintEffect, TolerationOperator } from './options';
import { AgentDnsPolicy } from './pod-options';
import { UpdateStrategy, UpdateStrategyType } from './update-strategy';

/** Problems of one release's props. */
export function checkAgentSpec(spec: AgentSpec): string[] {
  const p = spec.props;
  const problems: string[] = [];
  problems.push(...checkDnsLabel('name', spec.name, 50).map((m) => `${m}; set "name" explicitly`));
  problems.push(...checkDnsLabel('namespace', spec.namespace));
  if (p.containerName !== undefined) problems.push(...checkDnsLabel('containerName', p.containerName));
  problems.push(...checkLabels('labels', p.labels));
  for (const key of Object.keys(p.podAnnotations ?? {})) problems.push(...checkLabelKey('podAnnotations', key));
  if (p.component !== undefined) problems.push(...checkLabelValue('component', p.component));
  if (p.partOf !== undefined) problems.push(...checkLabelValue('partOf', p.partOf));

  // containers
  const containers = [...spec.containers, ...spec.initContainers];
  const names = containers.map((c) => c.name);
  for (const name of new Set(names)) {
    if (names.filter((n) => n === name).length > 1) problems.push(`containers: the name "${name}" is used by two containers; give each a unique name`);
  }
  for (const c of containers) {
    problems.push(...checkContainer(spec, c));
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
  if (p.configMountPath !== undefined) problems.push(...checkAbsolutePath('configMountPath', p.configMountPath));

  problems.push(...checkPodOptions(spec));

  // update pace
  problems.push(...spec.updateStrategy.problems().map((m) => `updateStrategy: ${m}`));
  problems.push(...surgeProblems(spec, spec.updateStrategy).map((m) => `updateStrategy: ${m}`));
  problems.push(...checkWholeNumber('minReadySeconds', p.minReadySeconds));
  problems.push(...checkWholeNumber('revisionHistoryLimit', p.revisionHistoryLimit));
  problems.push(...checkWholeNumber('terminationGracePeriodSeconds', p.terminationGracePeriodSeconds));

  // scheduling
  for (const [key, value] of Object.entries(p.nodeSelector ?? {})) {
    problems.push(...checkLabelKey('nodeSelector', key), ...checkLabelValue(`nodeSelector["${key}"]`, value));
  }
  for (const requirement of p.nodeRequirements ?? []) {
    problems.push(...checkLabelKey('nodeRequirements', requirement.key));
    problems.push(...requirement.problems().map((m) => `nodeRequirements: ${m}`));
  }
  (p.tolerations ?? []).forEach((t, i) => problems.push(...checkToleration(`tolerations[${i}]`, t)));

  // priority
  if (p.priorityClass) {
    if (p.priorityClassName !== undefined) problems.push('priorityClassName and priorityClass are both set; give only one');
    problems.push(...checkWholeNumber('priorityClass.value', p.priorityClass.value, -2147483648));
    if (p.priorityClass.value > 1000000000) problems.push(`priorityClass.value ${p.priorityClass.value} is above 1000000000, the highest value a user PriorityClass may have`);
    if (p.priorityClass.name !== undefined) problems.push(...checkDnsLabel('priorityClass.name', p.priorityClass.name));
  }
  if (p.priorityClassName !== undefined && !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(p.priorityClassName)) {
    problems.push(`priorityClassName "${p.priorityClassName}" is not a valid PriorityClass name`);
  }

  // RBAC
  (p.rbacRules ?? []).forEach((rule, i) => {
    if (rule.verbs.length === 0) problems.push(`rbacRules[${i}].verbs is empty; name the verbs, e.g. ["get", "list", "watch"]`);
    if (rule.resources.length === 0) problems.push(`rbacRules[${i}].resources is empty; name the resources, e.g. ["pods"]`);
  });
  return problems;
}

function checkContainer(spec: AgentSpec, c: ResolvedContainer): string[] {
  const where = `container "${c.name}"`;
  const s = c.settings;
  const problems: string[] = [];
  problems.push(...checkDnsLabel(`${where} name`, c.name));
  problems.push(...checkImage(`${where} image`, s.image));
  const r = s.resources ?? {};
  for (const field of ['cpuRequest', 'cpuLimit', 'memoryRequest', 'memoryLimit'] as const) {
    problems.push(...checkQuantity(`${where} resources.${field}`, r[field]));
  }
  const res = resolveResources(s.resources);
  problems.push(...checkRequestNotAboveLimit(`${where} resources cpu`, res.cpuRequest, res.cpuLimit));
  problems.push(...checkRequestNotAboveLimit(`${where} resources memory`, res.memoryRequest, res.memoryLimit));
  (s.capabilities ?? []).forEach((cap) => problems.push(...checkCapability(`${where} capabilities`, cap)));
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
    if (spec.props.hostNetwork && port.hostPort !== undefined && port.hostPort !== port.containerPort) {
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
    if (mount.propagation === MountPropagation.BIDIRECTIONAL && !s.privileged) {
      problems.push(`${where} mounts "${mount.volume}" with Bidirectional propagation, which the API allows only in a privileged container; set privileged: true or use HostToContainer`);
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


function checkToleration(where: string, t: AgentToleration): string[] {
  const problems: string[] = [];
  const operator = t.operator ?? TolerationOperator.EQUAL;
  if (!Object.values(TolerationOperator).includes(operator)) problems.push(`${where}.operator "${operator}" is not Exists or Equal`);
  if (operator === TolerationOperator.EXISTS && t.value) {
    problems.push(`${where}: operator Exists with value "${t.value}"; Exists ignores values, so drop the value or use operator Equal`);
  }
  if (operator === TolerationOperator.EQUAL && !t.key) {
    problems.push(`${where}: operator Equal needs a key; to tolerate every taint use operator Exists with no key (or tolerateAllTaints)`);
  }
  if (t.effect !== undefined && !Object.values(TaintEffect).includes(t.effect)) {
    problems.push(`${where}.effect "${t.effect}" is unknown; use NoSchedule, PreferNoSchedule or NoExecute`);
  }
  if (t.tolerationSeconds !== undefined && t.effect !== TaintEffect.NO_EXECUTE) {
    problems.push(`${where}: tolerationSeconds is only meaningful with effect NoExecute (got ${t.effect ?? 'every effect'}); set effect NoExecute or drop tolerationSeconds`);
  }
  if (t.tolerationSeconds !== undefined && !Number.isInteger(t.tolerationSeconds)) {
    problems.push(`${where}.tolerationSeconds must be a whole number, got ${t.tolerationSeconds}`);
  }
  if (t.key) problems.push(...checkLabelKey(`${where}.key`, t.key));
  return problems;
}


/** Labels the agent sets itself on its pods: never overridden by podLabels. */
const OWN_POD_LABELS = [
  'app.kubernetes.io/name', 'app.kubernetes.io/instance', 'app.kubernetes.io/version', 'app.kubernetes.io/component',
  'app.kubernetes.io/part-of', 'app.kubernetes.io/managed-by', 'node-agents.cdk8s.io/rollout-group',
];
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** The API server's C identifier rule for env names was relaxed in 1.30; prefixes stay conservative. */
const ENV_PREFIX = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const IPV4 = /^(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])(\.(25[0-5]|2[0-4][0-9]|1?[0-9]?[0-9])){3}$/;

function checkSubdomain(prop: string, value: string): string[] {
  return DNS1123_SUBDOMAIN.test(value) && value.length <= 253 ? [] : [`${prop} "${value}" is not a valid object name (a DNS-1123 subdomain: lower-case letters, digits, "-" and ".")`];
}

function checkPodOptions(spec: AgentSpec): string[] {
  const p = spec.props;
  const problems: string[] = [];
  const pullSecrets = p.imagePullSecrets ?? [];
  pullSecrets.forEach((name, i) => {
    problems.push(...checkSubdomain(`imagePullSecrets[${i}]`, name));
    if (pullSecrets.indexOf(name) !== i) problems.push(`imagePullSecrets names "${name}" twice`);
  });
  for (const key of Object.keys(p.serviceAccountAnnotations ?? {})) problems.push(...checkLabelKey('serviceAccountAnnotations', key));
  if (p.serviceAccountName !== undefined) problems.push(...checkSubdomain('serviceAccountName', p.serviceAccountName));
  problems.push(...checkLabels('podLabels', p.podLabels));
  for (const key of Object.keys(p.podLabels ?? {})) {
    if (OWN_POD_LABELS.includes(key)) problems.push(`podLabels: "${key}" is set by the agent itself (selectors and version tracking rely on it); use another key`);
  }
  for (const name of Object.keys(p.extraEnv ?? {})) {
    if (name === '' || name.includes('=')) problems.push(`extraEnv: "${name}" is not an environment variable name (non-empty, without "=")`);
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
