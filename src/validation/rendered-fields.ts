/**
 * The API server's field rules on a rendered DaemonSet that the value checks of ./rendered-pod.ts
 * do not cover: required fields and enums (k8s.io/kubernetes pkg/apis/core/validation
 * `validateContainers`, `validatePullPolicy`, `validateContainerPorts`, `ValidateVolumeMounts`,
 * `validateRestartPolicy`, `validateDNSPolicy`, `validateHostPathType`, `validateMountPropagation`;
 * pkg/apis/apps/validation `ValidateDaemonSetUpdateStrategy`). They matter for what JSON patches
 * write: the props never produce these. Pure: no cdk8s. Each problem names the field and the fix.
 */
import { describeValue } from './values';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** One enum field: its allowed values, as the API server's `supported values` list them. */
function checkEnum(prop: string, value: unknown, allowed: readonly string[]): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' && allowed.includes(value)
    ? [] : [`${prop} ${describeValue(value)} is not one the API server accepts (supported values: ${allowed.map((a) => `"${a}"`).join(', ')})`];
}

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PROTOCOLS = ['TCP', 'UDP', 'SCTP'];
const DNS_POLICIES = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const HOST_PATH_TYPES = ['', 'DirectoryOrCreate', 'Directory', 'FileOrCreate', 'File', 'Socket', 'CharDevice', 'BlockDevice'];
const TERMINATION_MESSAGE_POLICIES = ['File', 'FallbackToLogsOnError'];

function checkContainer(c: Json, volumes: ReadonlySet<string>): string[] {
  const where = `container "${c?.name ?? '(no name)'}"`;
  const problems: string[] = [];
  if (typeof c?.name !== 'string' || c.name === '') problems.push(`${where}: name is required; give each container a name`);
  // validateContainers: "image: Required value"; leading or trailing spaces are refused too.
  if (typeof c?.image !== 'string' || c.image === '') problems.push(`${where}: image is required (the API server refuses a container without one); give its image`);
  else if (c.image !== c.image.trim()) problems.push(`${where}: image ${JSON.stringify(c.image)} has leading or trailing whitespace, which the API server refuses`);
  problems.push(...checkEnum(`${where} imagePullPolicy`, c?.imagePullPolicy, PULL_POLICIES));
  problems.push(...checkEnum(`${where} terminationMessagePolicy`, c?.terminationMessagePolicy, TERMINATION_MESSAGE_POLICIES));
  for (const p of c?.ports ?? []) problems.push(...checkEnum(`${where} port ${p?.containerPort} protocol`, p?.protocol, PROTOCOLS));
  const paths = new Set<string>();
  for (const m of c?.volumeMounts ?? []) {
    // ValidateVolumeMounts: the name must be a volume of the pod; mountPath is required and unique.
    if (!volumes.has(m?.name)) problems.push(`${where} mounts volume ${describeValue(m?.name)}, which is not a volume of the pod; add the volume or fix the name`);
    if (typeof m?.mountPath !== 'string' || m.mountPath === '') problems.push(`${where} mount ${describeValue(m?.name)}: mountPath is required`);
    else if (paths.has(m.mountPath)) problems.push(`${where} mounts two volumes at ${m.mountPath}; the API server refuses a repeated mountPath`);
    else paths.add(m.mountPath);
    // validateMountPropagation: Bidirectional only in a privileged container.
    if (m?.mountPropagation === 'Bidirectional' && c?.securityContext?.privileged !== true) {
      problems.push(`${where} mounts ${describeValue(m?.name)} with Bidirectional propagation, which the API server allows only in a privileged container; set privileged or use HostToContainer`);
    }
  }
  return problems;
}

/** Problems of the API server's required fields and enums in one rendered pod template's spec. */
export function checkRenderedPodFields(pod: Json): string[] {
  if (!pod || typeof pod !== 'object') return ['the pod template has no spec; the API server requires one'];
  const problems: string[] = [];
  const containers: Json[] = Array.isArray(pod.containers) ? pod.containers : [];
  if (containers.length === 0) problems.push('the pod template has no container; the API server requires at least one');
  const volumes = new Set<string>();
  for (const v of pod.volumes ?? []) {
    if (typeof v?.name !== 'string' || v.name === '') problems.push('a volume has no name; the API server requires one');
    else if (volumes.has(v.name)) problems.push(`volume "${v.name}" is declared twice; give each volume a unique name`);
    volumes.add(v?.name);
    if (v?.hostPath) {
      if (typeof v.hostPath.path !== 'string' || v.hostPath.path === '') problems.push(`volume "${v.name}": hostPath.path is required`);
      problems.push(...checkEnum(`volume "${v.name}" hostPath.type`, v.hostPath.type, HOST_PATH_TYPES));
    }
  }
  for (const c of [...(pod.initContainers ?? []), ...containers]) problems.push(...checkContainer(c, volumes));
  // apps/validation ValidateDaemonSetSpec: the template's restartPolicy must be Always.
  if (pod.restartPolicy !== undefined && pod.restartPolicy !== 'Always') {
    problems.push(`restartPolicy ${describeValue(pod.restartPolicy)}: a DaemonSet's pod template accepts only "Always"`);
  }
  problems.push(...checkEnum('dnsPolicy', pod.dnsPolicy, DNS_POLICIES));
  for (const [i, t] of (pod.tolerations ?? []).entries()) {
    problems.push(...checkEnum(`tolerations[${i}].operator`, t?.operator, ['Exists', 'Equal']));
    problems.push(...checkEnum(`tolerations[${i}].effect`, t?.effect, ['NoSchedule', 'PreferNoSchedule', 'NoExecute']));
  }
  return problems;
}

/** The DaemonSet's own enums: updateStrategy.type (ValidateDaemonSetUpdateStrategy). */
export function checkRenderedDaemonSetFields(spec: Json): string[] {
  const strategy = spec?.updateStrategy;
  const problems = checkEnum('updateStrategy.type', strategy?.type, ['RollingUpdate', 'OnDelete']);
  if (strategy?.type === 'OnDelete' && strategy.rollingUpdate !== undefined) {
    problems.push('updateStrategy: rollingUpdate is set with type OnDelete, which the API server refuses; drop rollingUpdate or use type RollingUpdate');
  }
  return problems;
}
