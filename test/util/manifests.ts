/**
 * The one place every manifest a test synthesizes goes through.
 *
 * 1. Schema: each built-in object is checked with the `kubernetes-models` model for its
 *    apiVersion/kind; each custom resource (Argo CD's Application and ApplicationSet,
 *    prometheus-operator's PrometheusRule, ServiceMonitor and PodMonitor) against the upstream CRD's
 *    OpenAPI schema with the API server's structural rules: unknown fields are errors (./crd-schemas.ts;
 *    the typed model packages accept fields the CRDs lack). An unknown kind fails: nothing reaches a
 *    test unchecked.
 * 2. API-server rules a schema misses (pkg/apis/apps/validation, pkg/apis/core/validation): names,
 *    labels, the DaemonSet selector and update strategy, unique container/port/volume names, mounts
 *    naming volumes, privileged vs allowPrivilegeEscalation, mount propagation, tolerations, probes,
 *    requests not above limits.
 * 3. Numbers and formats the API server checks: int32/int64 ranges (minReadySeconds,
 *    revisionHistoryLimit, probe fields, ids, grace periods), ports (container, host, probe), env
 *    names, quantities, subPath, mount propagation, toleration keys and values, priority class
 *    names, one host port per pod.
 * 4. Size: a ConfigMap's data at most 1 MiB, and every object small enough for client-side
 *    apply's `last-applied-configuration` annotation (256 KiB for all annotations).
 */
import { App, Chart, Testing } from 'cdk8s';
import { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-models/admissionregistration.k8s.io/v1';
import { DaemonSet } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { ClusterRole, ClusterRoleBinding, Role, RoleBinding } from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { PriorityClass } from 'kubernetes-models/scheduling.k8s.io/v1';
import { ConfigMap, Namespace, ResourceQuota, Secret, Service, ServiceAccount } from 'kubernetes-models/v1';
import { crdProblems, hasCrdSchema } from './crd-schemas';
import { parseQuantity } from '../../src/util/quantity';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Manifest = any;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ResourceQuota': ResourceQuota,
  'apps/v1/DaemonSet': DaemonSet,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'scheduling.k8s.io/v1/PriorityClass': PriorityClass,
  'batch/v1/Job': Job,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy': ValidatingAdmissionPolicy,
  'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding': ValidatingAdmissionPolicyBinding,
};

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const DNS1035_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
// apimachinery IsEnvVarName: what every supported API server (1.28 on) accepts.
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;
const QUANTITY = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+|n|u|m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$/;
const INT32_MAX = 2 ** 31 - 1;
/** ConfigMap data and binaryData together (core/validation ValidateConfigMap). */
export const CONFIGMAP_MAX_BYTES = 1024 * 1024;
/** All annotations of an object (TotalAnnotationSizeLimitB), which holds last-applied-configuration. */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;
const NAMESPACED_KINDS = new Set(['ServiceAccount', 'ConfigMap', 'Secret', 'Service', 'ResourceQuota', 'DaemonSet', 'Role', 'RoleBinding', 'ServiceMonitor', 'PodMonitor',
  'PrometheusRule', 'Job', 'Application', 'ApplicationSet']);

/** Synthesizes a chart (or every chart of an app) and validates every manifest. */
export function synthManifests(scope: Chart | App): Manifest[] {
  const manifests = scope instanceof App
    ? scope.charts.flatMap((chart) => Testing.synth(chart))
    : Testing.synth(scope);
  validateManifests(manifests);
  return manifests;
}

/** Throws one Error listing every problem found; returns nothing when all manifests are valid. */
export function validateManifests(manifests: Manifest[]): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const manifest of manifests) {
    const id = `${manifest?.kind}/${manifest?.metadata?.namespace ?? ''}/${manifest?.metadata?.name}`;
    for (const problem of checkManifest(manifest)) problems.push(`${id}: ${problem}`);
    if (seen.has(id)) problems.push(`${id}: two objects with the same kind, namespace and name`);
    seen.add(id);
  }
  if (problems.length > 0) {
    throw new Error(`invalid manifests:\n  ${problems.join('\n  ')}`);
  }
}

function checkManifest(manifest: Manifest): string[] {
  const problems: string[] = [];
  const key = `${manifest.apiVersion}/${manifest.kind}`;
  const Model = MODELS[key];
  if (hasCrdSchema(manifest.apiVersion, manifest.kind)) {
    problems.push(...crdProblems(manifest).map((p) => `schema (CRD): ${p}`));
  } else if (!Model) {
    return [`no schema known for ${key}: add its model (or its CRD) to test/util/manifests.ts`];
  } else {
    try {
      new Model(manifest).validate();
    } catch (e) {
      problems.push(`schema: ${(e as Error).message}`);
    }
  }
  problems.push(...checkMetadata(manifest));
  if (manifest.kind === 'DaemonSet') problems.push(...checkDaemonSet(manifest));
  if (manifest.kind === 'Job') {
    const pod = manifest.spec?.template?.spec ?? {};
    // pkg/apis/batch/validation: a Job's pods restart Never or OnFailure (the default Always is refused).
    if (!['Never', 'OnFailure'].includes(pod.restartPolicy)) problems.push(`Job restartPolicy "${pod.restartPolicy}" must be Never or OnFailure`);
    problems.push(...checkPodSpec(pod));
    // batch/validation ValidateJobSpec: activeDeadlineSeconds a positive int64, backoffLimit and ttlSecondsAfterFinished non-negative int32.
    const job = manifest.spec ?? {};
    if (job.activeDeadlineSeconds !== undefined && !isInt(job.activeDeadlineSeconds, 1, Number.MAX_SAFE_INTEGER)) {
      problems.push(`Job activeDeadlineSeconds must be a positive int64, got ${job.activeDeadlineSeconds}`);
    }
    for (const field of ['backoffLimit', 'ttlSecondsAfterFinished']) {
      if (job[field] !== undefined && !isInt(job[field], 0, INT32_MAX)) problems.push(`Job ${field} must be a non-negative int32, got ${job[field]}`);
    }
  }
  if (manifest.kind === 'ConfigMap') {
    for (const k of Object.keys(manifest.data ?? {})) {
      if (!CONFIG_KEY.test(k) || k === '.' || k.startsWith('..')) problems.push(`data key "${k}" is not a valid ConfigMap key`);
    }
    const size = [...Object.entries(manifest.data ?? {}), ...Object.entries(manifest.binaryData ?? {})]
      .reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(String(v)), 0);
    if (size > CONFIGMAP_MAX_BYTES) problems.push(`data of ${size} bytes exceeds the ConfigMap limit of ${CONFIGMAP_MAX_BYTES} bytes (1 MiB)`);
  }
  problems.push(...checkLastAppliedSize(manifest));
  return problems;
}

/**
 * Client-side apply (kubectl apply, Argo CD's default) stores the whole object in the
 * last-applied-configuration annotation; beyond 256 KiB for all annotations the apply fails.
 */
function checkLastAppliedSize(manifest: Manifest): string[] {
  const annotations: Record<string, string> = manifest.metadata?.annotations ?? {};
  const others = Object.entries(annotations).reduce((sum, [k, v]) => sum + Buffer.byteLength(k) + Buffer.byteLength(String(v)), 0);
  const lastApplied = Buffer.byteLength(JSON.stringify(manifest));
  const total = others + lastApplied + Buffer.byteLength('kubectl.kubernetes.io/last-applied-configuration');
  return total > ANNOTATIONS_MAX_BYTES
    ? [`the object (${lastApplied} bytes of JSON) would not fit the ${ANNOTATIONS_MAX_BYTES}-byte annotation limit as a client-side apply last-applied-configuration; apply it server-side`]
    : [];
}

function isInt(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function checkMetadata(manifest: Manifest): string[] {
  const problems: string[] = [];
  const md = manifest.metadata ?? {};
  const nameRule = manifest.kind === 'Namespace' || manifest.kind === 'Service' ? DNS1123_LABEL : DNS1123_SUBDOMAIN;
  if (typeof md.name !== 'string' || !nameRule.test(md.name) || md.name.length > 253) {
    problems.push(`metadata.name "${md.name}" is not a valid name`);
  }
  if (manifest.kind === 'Namespace' || manifest.kind === 'Service') {
    if ((md.name ?? '').length > 63) problems.push(`metadata.name "${md.name}" is longer than 63 characters`);
  }
  if (manifest.kind === 'Service' && typeof md.name === 'string' && !DNS1035_LABEL.test(md.name)) {
    problems.push(`metadata.name "${md.name}" is not a DNS-1035 label (a Service name starts with a letter)`);
  }
  if (NAMESPACED_KINDS.has(manifest.kind) && md.namespace !== undefined && !DNS1123_LABEL.test(md.namespace)) {
    problems.push(`metadata.namespace "${md.namespace}" is not a DNS-1123 label`);
  }
  // The API server ignores a namespace on a cluster-scoped object, but kubectl and Argo CD then
  // track the object under a namespace it does not have (perpetual diffs, failed prunes).
  if (CLUSTER_SCOPED_KINDS.has(manifest.kind) && md.namespace !== undefined) {
    problems.push(`metadata.namespace "${md.namespace}" on a cluster-scoped ${manifest.kind}`);
  }
  problems.push(...checkLabels('metadata.labels', md.labels));
  return problems;
}

const CLUSTER_SCOPED_KINDS = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'PriorityClass', 'CustomResourceDefinition', 'StorageClass', 'RuntimeClass']);

function checkLabels(where: string, labels: Record<string, string> | undefined): string[] {
  const problems: string[] = [];
  for (const [k, v] of Object.entries(labels ?? {})) {
    const [prefix, name] = k.includes('/') ? k.split('/', 2) : [undefined, k];
    if (prefix !== undefined && (!DNS1123_SUBDOMAIN.test(prefix) || prefix.length > 253)) problems.push(`${where}: label key prefix "${prefix}" is invalid`);
    if (!LABEL_NAME.test(name) || name.length > 63) problems.push(`${where}: label key "${k}" is invalid`);
    if (typeof v !== 'string' || !LABEL_VALUE.test(v) || v.length > 63) problems.push(`${where}: label value "${v}" of "${k}" is invalid`);
  }
  return problems;
}

function checkDaemonSet(ds: Manifest): string[] {
  const problems: string[] = [];
  const spec = ds.spec ?? {};
  const selector = spec.selector ?? {};
  const templateLabels: Record<string, string> = spec.template?.metadata?.labels ?? {};
  const matchLabels: Record<string, string> = selector.matchLabels ?? {};
  const matchExpressions: Array<{ key: string; operator: string; values?: string[] }> = selector.matchExpressions ?? [];
  if (Object.keys(matchLabels).length === 0 && matchExpressions.length === 0) {
    problems.push('spec.selector is empty');
  }
  problems.push(...checkLabels('spec.template.metadata.labels', templateLabels));
  for (const [k, v] of Object.entries(matchLabels)) {
    if (templateLabels[k] !== v) problems.push(`spec.selector.matchLabels ${k}=${v} does not match the template labels`);
  }
  for (const e of matchExpressions) {
    const has = hasKey(templateLabels, e.key);
    const ok = e.operator === 'In' ? has && (e.values ?? []).includes(templateLabels[e.key])
      : e.operator === 'NotIn' ? !has || !(e.values ?? []).includes(templateLabels[e.key])
        : e.operator === 'Exists' ? has : !has;
    if (!ok) problems.push(`spec.selector expression on ${e.key} does not match the template labels`);
  }
  problems.push(...checkUpdateStrategy(spec.updateStrategy));
  for (const [field, value] of [['minReadySeconds', spec.minReadySeconds], ['revisionHistoryLimit', spec.revisionHistoryLimit]] as const) {
    if (value !== undefined && !isInt(value, 0, INT32_MAX)) problems.push(`spec.${field} must be a non-negative int32, got ${value}`);
  }
  problems.push(...checkPodSpec(spec.template?.spec ?? {}));
  return problems;
}

function labelKeyValid(k: string): boolean {
  return checkLabels('', { [k]: 'v' }).length === 0;
}

/** runAsUser / runAsGroup: 0 to 2^31 - 1 (IsValidUserID, IsValidGroupID). */
function checkIds(where: string, sc: Manifest): string[] {
  const problems: string[] = [];
  for (const field of ['runAsUser', 'runAsGroup', 'fsGroup']) {
    const id = sc?.[field];
    if (id !== undefined && !isInt(id, 0, INT32_MAX)) problems.push(`${where}.${field} must be a whole number from 0 to ${INT32_MAX}, got ${id}`);
  }
  return problems;
}

function hasKey(labels: Record<string, string>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(labels, key);
}

function checkUpdateStrategy(strategy: Manifest): string[] {
  if (!strategy) return [];
  if (strategy.type === 'OnDelete') {
    return strategy.rollingUpdate ? ['updateStrategy.rollingUpdate must be empty with type OnDelete'] : [];
  }
  if (strategy.type !== 'RollingUpdate') return [`updateStrategy.type "${strategy.type}" is not RollingUpdate or OnDelete`];
  const ru = strategy.rollingUpdate ?? {};
  const problems: string[] = [];
  // apps/v1 defaults: maxUnavailable 1, maxSurge 0 (applied before validation).
  const unavailable = ru.maxUnavailable ?? 1;
  const surge = ru.maxSurge ?? 0;
  const values: Array<[string, number | string]> = [['maxUnavailable', unavailable], ['maxSurge', surge]];
  for (const [field, value] of values) {
    if (typeof value === 'number') {
      if (!Number.isInteger(value) || value < 0) problems.push(`rollingUpdate.${field} must be a non-negative integer, got ${value}`);
    } else if (!/^\d+%$/.test(value) || Number.parseInt(value, 10) > 100) {
      problems.push(`rollingUpdate.${field} "${value}" must be a percentage from 0% to 100%`);
    }
  }
  const isZero = (v: number | string) => v === 0 || v === '0%';
  if (isZero(unavailable) && isZero(surge)) problems.push('rollingUpdate: maxUnavailable and maxSurge cannot both be zero');
  if (!isZero(unavailable) && !isZero(surge)) problems.push('rollingUpdate: maxUnavailable and maxSurge cannot both be non-zero');
  return problems;
}

function checkPodSpec(pod: Manifest): string[] {
  const problems: string[] = [];
  const containers: Manifest[] = pod.containers ?? [];
  const initContainers: Manifest[] = pod.initContainers ?? [];
  if (containers.length === 0) problems.push('pod has no containers');
  const names = [...containers, ...initContainers].map((c) => c.name);
  for (const name of new Set(names)) {
    if (names.filter((n) => n === name).length > 1) problems.push(`container name "${name}" is used twice`);
    if (!DNS1123_LABEL.test(name)) problems.push(`container name "${name}" is not a DNS-1123 label`);
  }
  const volumes: Manifest[] = pod.volumes ?? [];
  const volumeNames = volumes.map((v) => v.name);
  for (const name of new Set(volumeNames)) {
    if (volumeNames.filter((n) => n === name).length > 1) problems.push(`volume name "${name}" is used twice`);
    if (!DNS1123_LABEL.test(name)) problems.push(`volume name "${name}" is not a DNS-1123 label`);
  }
  // core/validation validateContainers: "image: Required value" (pod templates of workloads included).
  for (const c of [...containers, ...initContainers]) if (typeof c.image !== 'string' || c.image.trim() === '') problems.push(`container "${c.name}" has no image`);
  // core/validation validatePodDNSConfig: at most 3 nameservers (IP addresses), 32 searches, named options; None needs a nameserver.
  const dns = pod.dnsConfig;
  if ((dns?.nameservers ?? []).length > 3) problems.push(`dnsConfig has ${dns.nameservers.length} nameservers; at most 3`);
  for (const ns of dns?.nameservers ?? []) if (!/^[0-9.]+$|:/.test(ns)) problems.push(`dnsConfig nameserver "${ns}" is not an IP address`);
  if ((dns?.searches ?? []).length > 32) problems.push(`dnsConfig has ${dns.searches.length} searches; at most 32`);
  for (const search of dns?.searches ?? []) if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.?$/.test(search)) problems.push(`dnsConfig search "${search}" is not a DNS name`);
  for (const option of dns?.options ?? []) if (!option.name) problems.push('dnsConfig option without a name');
  if (pod.dnsPolicy === 'None' && (dns?.nameservers ?? []).length === 0) problems.push('dnsPolicy None needs dnsConfig.nameservers');
  for (const toleration of pod.tolerations ?? []) {
    if (toleration.operator === 'Exists' && toleration.value) problems.push(`toleration ${toleration.key}: operator Exists must not have a value`);
    if (toleration.tolerationSeconds !== undefined && toleration.effect !== 'NoExecute') problems.push(`toleration ${toleration.key}: tolerationSeconds needs effect NoExecute`);
    if (!toleration.key && toleration.operator !== 'Exists') problems.push('toleration with an empty key must use operator Exists');
    if (toleration.effect && !['NoSchedule', 'PreferNoSchedule', 'NoExecute'].includes(toleration.effect)) problems.push(`toleration effect "${toleration.effect}" is unknown`);
  }
  for (const toleration of pod.tolerations ?? []) {
    if (toleration.key && !labelKeyValid(toleration.key)) problems.push(`toleration key "${toleration.key}" is not a label key`);
    if (toleration.value !== undefined && (typeof toleration.value !== 'string' || !LABEL_VALUE.test(toleration.value) || toleration.value.length > 63)) {
      problems.push(`toleration value "${toleration.value}" is not a label value`);
    }
    if (toleration.tolerationSeconds !== undefined && !isInt(toleration.tolerationSeconds, -Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER)) {
      problems.push(`tolerationSeconds ${toleration.tolerationSeconds} is not an int64`);
    }
  }
  if (pod.terminationGracePeriodSeconds !== undefined && !isInt(pod.terminationGracePeriodSeconds, 0, Number.MAX_SAFE_INTEGER)) {
    problems.push(`terminationGracePeriodSeconds must be a non-negative int64, got ${pod.terminationGracePeriodSeconds}`);
  }
  if (pod.priorityClassName !== undefined && (!DNS1123_SUBDOMAIN.test(pod.priorityClassName) || pod.priorityClassName.length > 253)) {
    problems.push(`priorityClassName "${pod.priorityClassName}" is not a DNS-1123 subdomain`);
  }
  problems.push(...checkLabels('nodeSelector', pod.nodeSelector));
  const terms: Manifest[] = pod.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const e of term.matchExpressions ?? []) {
      if (!labelKeyValid(e.key)) problems.push(`node affinity key "${e.key}" is not a label key`);
      if (e.operator === 'In' || e.operator === 'NotIn') {
        for (const v of e.values ?? []) {
          if (typeof v !== 'string' || !LABEL_VALUE.test(v) || v.length > 63) problems.push(`node affinity value "${v}" of "${e.key}" is not a label value`);
        }
      }
    }
  }
  problems.push(...checkIds('securityContext', pod.securityContext));
  // core/validation checkHostPortConflicts: one hostPort/protocol/hostIP per pod (hostNetwork: hostPort = containerPort).
  const hostPorts = new Map<string, string>();
  for (const c of [...containers, ...initContainers]) {
    for (const p of c.ports ?? []) {
      const hostPort = p.hostPort ?? (pod.hostNetwork ? p.containerPort : undefined);
      if (!hostPort) continue;
      const key = `${p.hostIP ?? ''}:${hostPort}/${p.protocol ?? 'TCP'}`;
      const owner = hostPorts.get(key);
      if (owner !== undefined) problems.push(`host port ${key} is used twice in the pod (containers "${owner}" and "${c.name}")`);
      hostPorts.set(key, c.name);
    }
  }
  if (pod.hostNetwork && pod.dnsPolicy && pod.dnsPolicy !== 'ClusterFirstWithHostNet' && pod.dnsPolicy !== 'Default') {
    problems.push(`hostNetwork pods should use dnsPolicy ClusterFirstWithHostNet, got ${pod.dnsPolicy}`);
  }
  for (const c of [...containers, ...initContainers]) {
    problems.push(...checkContainer(c, volumeNames, pod.hostNetwork === true).map((p) => `container ${c.name}: ${p}`));
  }
  return problems;
}

function checkContainer(c: Manifest, volumeNames: string[], hostNetwork: boolean): string[] {
  const problems: string[] = [];
  const sc = c.securityContext ?? {};
  if (sc.privileged === true && sc.allowPrivilegeEscalation === false) {
    problems.push('privileged: true with allowPrivilegeEscalation: false is rejected by the API server');
  }
  if (sc.capabilities?.add?.includes('CAP_SYS_ADMIN') && sc.allowPrivilegeEscalation === false) {
    problems.push('CAP_SYS_ADMIN with allowPrivilegeEscalation: false is rejected by the API server');
  }
  const mountPaths = new Set<string>();
  for (const m of c.volumeMounts ?? []) {
    if (!volumeNames.includes(m.name)) problems.push(`volumeMount "${m.name}" names no volume`);
    if (mountPaths.has(m.mountPath)) problems.push(`mountPath ${m.mountPath} is mounted twice`);
    mountPaths.add(m.mountPath);
    if (m.mountPropagation === 'Bidirectional' && sc.privileged !== true) problems.push(`mount ${m.name}: Bidirectional propagation needs a privileged container`);
  }
  const portNames = (c.ports ?? []).map((p: Manifest) => p.name).filter((n: string | undefined) => n !== undefined);
  for (const name of new Set<string>(portNames)) {
    if (portNames.filter((n: string) => n === name).length > 1) problems.push(`port name "${name}" is used twice`);
    if (name.length > 15 || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || !/[a-z]/.test(name)) problems.push(`port name "${name}" is not an IANA_SVC_NAME`);
  }
  for (const p of c.ports ?? []) {
    if (hostNetwork && p.hostPort !== undefined && p.hostPort !== p.containerPort) problems.push(`hostNetwork: hostPort ${p.hostPort} must equal containerPort ${p.containerPort}`);
    if (!isInt(p.containerPort, 1, 65535)) problems.push(`containerPort ${p.containerPort} is not a port from 1 to 65535`);
    if (p.hostPort !== undefined && !isInt(p.hostPort, 0, 65535)) problems.push(`hostPort ${p.hostPort} is not a port from 0 to 65535`);
  }
  for (const e of c.env ?? []) {
    if (typeof e.name !== 'string' || !ENV_NAME.test(e.name) || e.name === '.' || e.name.startsWith('..')) problems.push(`env name ${JSON.stringify(e.name)} is not a valid environment variable name`);
  }
  for (const m of c.volumeMounts ?? []) {
    if (m.subPath !== undefined && (m.subPath.startsWith('/') || m.subPath.split(/[\\/]/).includes('..'))) problems.push(`mount ${m.name}: subPath "${m.subPath}" must be relative without ".."`);
    if (m.mountPropagation !== undefined && !['None', 'HostToContainer', 'Bidirectional'].includes(m.mountPropagation)) problems.push(`mount ${m.name}: mountPropagation "${m.mountPropagation}" is unknown`);
  }
  problems.push(...checkIds('securityContext', sc));
  for (const [kind, values] of [['requests', c.resources?.requests], ['limits', c.resources?.limits]] as const) {
    for (const [resource, quantity] of Object.entries(values ?? {})) {
      // A JSON number decodes as a quantity too.
      const isNumber = typeof quantity === 'number' && Number.isFinite(quantity) && quantity >= 0;
      if (!isNumber && (typeof quantity !== 'string' || !QUANTITY.test(quantity))) problems.push(`resources.${kind}.${resource} ${JSON.stringify(quantity)} is not a quantity string`);
    }
  }
  for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) {
    const pr = c[probe];
    if (!pr) continue;
    const handlers = ['exec', 'httpGet', 'tcpSocket', 'grpc'].filter((h) => pr[h] !== undefined);
    if (handlers.length !== 1) problems.push(`${probe} must have exactly one handler, has ${handlers.length}`);
    if ((probe === 'livenessProbe' || probe === 'startupProbe') && pr.successThreshold !== undefined && pr.successThreshold !== 1) {
      problems.push(`${probe}.successThreshold must be 1`);
    }
    for (const field of ['initialDelaySeconds', 'periodSeconds', 'timeoutSeconds', 'successThreshold', 'failureThreshold']) {
      if (pr[field] !== undefined && !isInt(pr[field], 0, INT32_MAX)) problems.push(`${probe}.${field} must be a non-negative int32, got ${pr[field]}`);
    }
    if (pr.terminationGracePeriodSeconds !== undefined && !isInt(pr.terminationGracePeriodSeconds, 1, Number.MAX_SAFE_INTEGER)) {
      problems.push(`${probe}.terminationGracePeriodSeconds must be a positive int64, got ${pr.terminationGracePeriodSeconds}`);
    }
    for (const handler of ['httpGet', 'tcpSocket', 'grpc']) {
      const port = pr[handler]?.port;
      if (pr[handler] === undefined) continue;
      const named = typeof port === 'string' && port.length <= 15 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(port) && /[a-z]/.test(port) && handler !== 'grpc';
      if (!named && !isInt(port, 1, 65535)) problems.push(`${probe}.${handler}.port ${JSON.stringify(port)} is neither a port from 1 to 65535 nor a port name`);
    }
  }
  for (const hook of ['preStop', 'postStart']) {
    const exec = c.lifecycle?.[hook]?.exec;
    if (exec && (!Array.isArray(exec.command) || exec.command.length === 0)) problems.push(`lifecycle.${hook}.exec.command is empty`);
  }
  const requests = c.resources?.requests ?? {};
  const limits = c.resources?.limits ?? {};
  for (const [resource, limit] of Object.entries(limits)) {
    const request = requests[resource];
    if (request !== undefined && parseQuantity(String(request)) > parseQuantity(String(limit))) {
      problems.push(`resources.requests.${resource} ${request} is above its limit ${limit}`);
    }
  }
  return problems;
}
