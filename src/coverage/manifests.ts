import { createHash } from 'crypto';
import * as YAML from 'yaml';
import { NodeSelectorTermJson, TolerationJson } from '../scheduling/types';
import { ROLLOUT_GROUP_LABEL } from '../waves/partition';

/** The pod template label the wave construct puts on each wave's DaemonSet (`fleet` for the remainder). */
export { ROLLOUT_GROUP_LABEL };
/** Agents are DaemonSets grouped by this label (falling back to the DaemonSet name). */
export const AGENT_NAME_LABEL = 'app.kubernetes.io/name';
/** Argo CD applies sync-wave k+1 only once wave k is Healthy; we use it to order waves. */
export const ARGO_SYNC_WAVE_ANNOTATION = 'argocd.argoproj.io/sync-wave';

/** Any Kubernetes object as parsed from YAML: only the envelope is typed. */
export interface KubeObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
  };
  readonly [field: string]: unknown;
}

export interface ManifestDocument {
  /** file (or label) the document came from */
  readonly source: string;
  readonly object: KubeObject;
}

export interface HostPort {
  readonly container: string;
  readonly port: number;
  readonly protocol: string;
  /** '' when the port binds every host address */
  readonly hostIP: string;
}

/** `spec.updateStrategy` as written (defaults are applied by the estimate, like the API server would). */
export interface UpdateStrategy {
  readonly type: 'RollingUpdate' | 'OnDelete';
  readonly maxUnavailable?: number | string;
  readonly maxSurge?: number | string;
}

/** A label selector as written in a pod (anti-)affinity term. */
export interface LabelSelectorJson {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly { readonly key: string; readonly operator: string; readonly values?: readonly string[] }[];
}

/** One required pod anti-affinity term (requiredDuringSchedulingIgnoredDuringExecution). */
export interface PodAffinityTermJson {
  readonly labelSelector?: LabelSelectorJson;
  readonly topologyKey: string;
  readonly namespaces?: readonly string[];
  readonly namespaceSelector?: LabelSelectorJson;
}

/** A ConfigMap or Secret the pod template needs to start (volumes, projected sources, envFrom, env). */
export interface ObjectReference {
  readonly kind: 'ConfigMap' | 'Secret';
  readonly name: string;
  /** where the template names it: `volumes[config]`, `containers[app].envFrom`, `imagePullSecrets` */
  readonly from: string;
}

/** What coverage and estimates need from one DaemonSet. */
export interface DaemonSetInfo {
  /** `namespace/name` */
  readonly id: string;
  readonly name: string;
  readonly namespace: string;
  readonly agent: string;
  readonly source: string;
  /** pod template label `node-agents.cdk8s.io/rollout-group`, when the DaemonSet is part of a wave partition */
  readonly rolloutGroup?: string;
  /** `argocd.argoproj.io/sync-wave` annotation, when it is an integer */
  readonly syncWave?: number;
  readonly nodeName?: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** required node affinity terms; undefined when the DaemonSet has none (then every node passes) */
  readonly requiredTerms?: readonly NodeSelectorTermJson[];
  readonly tolerations: readonly TolerationJson[];
  readonly hostNetwork: boolean;
  readonly hostPorts: readonly HostPort[];
  readonly updateStrategy: UpdateStrategy;
  readonly minReadySeconds: number;
  readonly terminationGracePeriodSeconds?: number;
  /** pod template labels */
  readonly podLabels: Readonly<Record<string, string>>;
  /** `app.kubernetes.io/instance` of the DaemonSet (else of its pod template) */
  readonly instance?: string;
  /** `app.kubernetes.io/version` of the DaemonSet (else of its pod template) */
  readonly version?: string;
  /** required pod anti-affinity terms of the pod template */
  readonly podAntiAffinity: readonly PodAffinityTermJson[];
  /** ConfigMaps and Secrets the pod needs (references marked optional are left out), sorted */
  readonly references: readonly ObjectReference[];
  /** sha256 of spec.template in canonical JSON (sorted keys): equal hashes, equal pods */
  readonly templateHash: string;
  /** sha256 of the whole object in canonical JSON: differs when anything about the DaemonSet changes */
  readonly objectHash: string;
}

export interface ManifestSet {
  readonly documents: readonly ManifestDocument[];
  readonly daemonSets: readonly DaemonSetInfo[];
  /** count of the other kinds, kept for context (`ConfigMap: 2`) */
  readonly otherKinds: Readonly<Record<string, number>>;
}

/** Parses one YAML (or JSON) text with any number of documents. `kind: List` documents are expanded. */
export function parseManifestText(text: string, source: string): ManifestDocument[] {
  const result: ManifestDocument[] = [];
  const docs = YAML.parseAllDocuments(text);
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0) {
      throw new Error(`${source}: not valid YAML: ${doc.errors[0].message.split('\n')[0].replace(/:$/, '')}`);
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 1000 });
    } catch (error) {
      throw new Error(`${source}: not valid YAML: ${(error as Error).message}`);
    }
    if (value === null || value === undefined) continue; // empty document (`---` at the end)
    collect(value, source, result);
  }
  return result;
}

function collect(value: unknown, source: string, into: ManifestDocument[]): void {
  if (!isObject(value) || typeof value.kind !== 'string') {
    throw new Error(`${source}: a document is not a Kubernetes object (no "kind"); each YAML document must be one object with apiVersion and kind`);
  }
  if (/List$/.test(value.kind) && Array.isArray(value.items)) {
    for (const item of value.items) collect(item, source, into);
    return;
  }
  into.push({ source, object: value as KubeObject });
}

/** Extracts the DaemonSets (and counts the other kinds) of parsed documents. */
export function manifestSet(documents: readonly ManifestDocument[]): ManifestSet {
  const daemonSets: DaemonSetInfo[] = [];
  const otherKinds: Record<string, number> = {};
  const seen = new Map<string, string>();
  for (const doc of documents) {
    if (doc.object.kind !== 'DaemonSet') {
      const kind = doc.object.kind ?? 'unknown';
      otherKinds[kind] = (otherKinds[kind] ?? 0) + 1;
      continue;
    }
    const ds = daemonSetInfo(doc.object, doc.source);
    const earlier = seen.get(ds.id);
    if (earlier !== undefined) {
      throw new Error(`${doc.source}: DaemonSet ${ds.id} is defined twice (also in ${earlier}); pass each manifest once`);
    }
    seen.set(ds.id, doc.source);
    daemonSets.push(ds);
  }
  daemonSets.sort((a, b) => compare(a.id, b.id));
  return { documents, daemonSets, otherKinds };
}

/** Reads the fields coverage and estimates need, checking the shapes it relies on. */
export function daemonSetInfo(object: KubeObject, source: string): DaemonSetInfo {
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') {
    throw new Error(`${source}: a DaemonSet has no metadata.name`);
  }
  const namespace = object.metadata?.namespace ?? 'default';
  const id = `${namespace}/${name}`;
  const where = `${source}: DaemonSet ${id}`;
  const spec = asObject(object.spec, `${where}: spec`);
  const template = asObject(spec.template, `${where}: spec.template`);
  const podSpec = asObject(template.spec, `${where}: spec.template.spec`);
  const templateMeta = isObject(template.metadata) ? template.metadata : {};
  const podLabels = stringMap(templateMeta.labels, `${where}: spec.template.metadata.labels`);
  const labels = stringMap(object.metadata?.labels, `${where}: metadata.labels`);
  const annotations = stringMap(object.metadata?.annotations, `${where}: metadata.annotations`);
  const podAntiAffinity = isObject(podSpec.affinity) && isObject(podSpec.affinity.podAntiAffinity)
    && Array.isArray(podSpec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution)
    ? (podSpec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution as unknown[])
      .filter((t): t is PodAffinityTermJson => isObject(t) && typeof t.topologyKey === 'string')
    : [];

  const nodeAffinity = isObject(podSpec.affinity) && isObject(podSpec.affinity.nodeAffinity) ? podSpec.affinity.nodeAffinity : undefined;
  const required = nodeAffinity && isObject(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution)
    ? nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution : undefined;
  let requiredTerms: NodeSelectorTermJson[] | undefined;
  if (required !== undefined) {
    if (!Array.isArray(required.nodeSelectorTerms)) {
      throw new Error(`${where}: requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms must be a list`);
    }
    requiredTerms = required.nodeSelectorTerms as NodeSelectorTermJson[];
  }

  const hostNetwork = podSpec.hostNetwork === true;
  const syncWaveText = annotations[ARGO_SYNC_WAVE_ANNOTATION];
  const syncWave = syncWaveText !== undefined && /^-?\d+$/.test(syncWaveText.trim()) ? Number.parseInt(syncWaveText, 10) : undefined;

  return {
    id,
    name,
    namespace,
    agent: labels[AGENT_NAME_LABEL] ?? podLabels[AGENT_NAME_LABEL] ?? name,
    source,
    rolloutGroup: podLabels[ROLLOUT_GROUP_LABEL],
    syncWave,
    nodeName: typeof podSpec.nodeName === 'string' && podSpec.nodeName !== '' ? podSpec.nodeName : undefined,
    nodeSelector: stringMap(podSpec.nodeSelector, `${where}: nodeSelector`),
    requiredTerms,
    tolerations: Array.isArray(podSpec.tolerations) ? podSpec.tolerations as TolerationJson[] : [],
    hostNetwork,
    hostPorts: hostPorts(podSpec, hostNetwork),
    updateStrategy: updateStrategy(spec.updateStrategy, where),
    minReadySeconds: typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0,
    terminationGracePeriodSeconds: typeof podSpec.terminationGracePeriodSeconds === 'number' ? podSpec.terminationGracePeriodSeconds : undefined,
    podLabels,
    instance: labels['app.kubernetes.io/instance'] ?? podLabels['app.kubernetes.io/instance'],
    version: labels['app.kubernetes.io/version'] ?? podLabels['app.kubernetes.io/version'],
    podAntiAffinity,
    references: references(podSpec),
    templateHash: canonicalHash(template),
    objectHash: canonicalHash(object),
  };
}

/** sha256 of a value's JSON with object keys sorted: the same for equal objects whatever their key order. */
export function canonicalHash(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isObject(value)) {
    return `{${Object.keys(value).sort(compare).filter((k) => value[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The ConfigMaps and Secrets a pod cannot start without: volumes (configMap, secret, projected sources),
 * envFrom and env valueFrom of every container, and imagePullSecrets. `optional: true` references are left out:
 * the kubelet starts the pod without them.
 */
function references(podSpec: Record<string, unknown>): ObjectReference[] {
  const result: ObjectReference[] = [];
  const add = (kind: ObjectReference['kind'], ref: unknown, nameField: string, from: string) => {
    if (!isObject(ref) || ref.optional === true || typeof ref[nameField] !== 'string' || ref[nameField] === '') return;
    result.push({ kind, name: ref[nameField], from });
  };
  for (const volume of Array.isArray(podSpec.volumes) ? podSpec.volumes : []) {
    if (!isObject(volume)) continue;
    const from = `volumes[${String(volume.name ?? '')}]`;
    add('ConfigMap', volume.configMap, 'name', from);
    add('Secret', volume.secret, 'secretName', from);
    const sources = isObject(volume.projected) && Array.isArray(volume.projected.sources) ? volume.projected.sources : [];
    for (const source of sources) {
      if (!isObject(source)) continue;
      add('ConfigMap', source.configMap, 'name', from);
      add('Secret', source.secret, 'name', from);
    }
  }
  const containers = [
    ...(Array.isArray(podSpec.initContainers) ? podSpec.initContainers.map((c) => ['initContainers', c] as const) : []),
    ...(Array.isArray(podSpec.containers) ? podSpec.containers.map((c) => ['containers', c] as const) : []),
  ];
  for (const [field, container] of containers) {
    if (!isObject(container)) continue;
    const at = `${field}[${String(container.name ?? '')}]`;
    for (const source of Array.isArray(container.envFrom) ? container.envFrom : []) {
      if (!isObject(source)) continue;
      add('ConfigMap', source.configMapRef, 'name', `${at}.envFrom`);
      add('Secret', source.secretRef, 'name', `${at}.envFrom`);
    }
    for (const env of Array.isArray(container.env) ? container.env : []) {
      if (!isObject(env) || !isObject(env.valueFrom)) continue;
      add('ConfigMap', env.valueFrom.configMapKeyRef, 'name', `${at}.env[${String(env.name ?? '')}]`);
      add('Secret', env.valueFrom.secretKeyRef, 'name', `${at}.env[${String(env.name ?? '')}]`);
    }
  }
  for (const secret of Array.isArray(podSpec.imagePullSecrets) ? podSpec.imagePullSecrets : []) add('Secret', secret, 'name', 'imagePullSecrets');
  // one entry per object: the first place that names it
  const seen = new Set<string>();
  return result.filter((r) => {
    const key = `${r.kind}/${r.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  }).sort((a, b) => compare(a.kind, b.kind) || compare(a.name, b.name));
}

/**
 * Host ports the scheduler's NodePorts filter counts: containers and restartable (sidecar) init containers.
 * With hostNetwork the API server defaults hostPort to containerPort, so every containerPort binds the host.
 */
export function hostPorts(podSpec: Record<string, unknown>, hostNetwork: boolean): HostPort[] {
  const containers = [
    ...(Array.isArray(podSpec.containers) ? podSpec.containers : []),
    ...(Array.isArray(podSpec.initContainers) ? podSpec.initContainers.filter((c) => isObject(c) && c.restartPolicy === 'Always') : []),
  ];
  const result: HostPort[] = [];
  for (const container of containers) {
    if (!isObject(container) || !Array.isArray(container.ports)) continue;
    for (const port of container.ports) {
      if (!isObject(port)) continue;
      const bound = typeof port.hostPort === 'number' && port.hostPort > 0 ? port.hostPort
        : hostNetwork && typeof port.containerPort === 'number' ? port.containerPort : undefined;
      if (bound === undefined) continue;
      result.push({
        container: String(container.name ?? ''),
        port: bound,
        protocol: typeof port.protocol === 'string' ? port.protocol : 'TCP',
        hostIP: typeof port.hostIP === 'string' && port.hostIP !== '0.0.0.0' ? port.hostIP : '',
      });
    }
  }
  return result;
}

function updateStrategy(value: unknown, where: string): UpdateStrategy {
  if (!isObject(value)) return { type: 'RollingUpdate' };
  const type = value.type ?? 'RollingUpdate';
  if (type !== 'RollingUpdate' && type !== 'OnDelete') {
    throw new Error(`${where}: updateStrategy.type is "${String(type)}"; it must be RollingUpdate or OnDelete`);
  }
  const rolling = isObject(value.rollingUpdate) ? value.rollingUpdate : {};
  return {
    type,
    maxUnavailable: intOrString(rolling.maxUnavailable),
    maxSurge: intOrString(rolling.maxSurge),
  };
}

function intOrString(value: unknown): number | string | undefined {
  return typeof value === 'number' || typeof value === 'string' ? value : undefined;
}

function stringMap(value: unknown, what: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new Error(`${what} must be a map of strings`);
  const result: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) result[key] = String(v);
  return result;
}

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (!isObject(value)) throw new Error(`${what} is missing or not an object`);
  return value;
}

export function isObject(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Byte-wise string order: stable whatever the locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
