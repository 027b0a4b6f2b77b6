import { createHash } from 'crypto';
import * as YAML from 'yaml';
import { ALIAS_SLACK_BYTES, AliasAllowance, expandAliases } from './yaml-aliases';
import { UpdateStrategyJson } from '../../rollout/pace';
import { NodeSelectorTermJson, TolerationJson } from '../../scheduling/types';
import { isLabelKey, isLabelValue } from '../../validation/values';
import { ROLLOUT_GROUP_LABEL, WAVE_INDEX_ANNOTATION } from '../../waves/partition';

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
  /** the rollout group's place in the wave order (WAVE_INDEX_ANNOTATION), when the DaemonSet carries it */
  readonly waveIndex?: number;
  readonly nodeName?: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
  /** required node affinity terms; undefined when the DaemonSet has none (then every node passes) */
  readonly requiredTerms?: readonly NodeSelectorTermJson[];
  readonly tolerations: readonly TolerationJson[];
  readonly hostNetwork: boolean;
  readonly hostPorts: readonly HostPort[];
  readonly updateStrategy: UpdateStrategyJson;
  readonly minReadySeconds: number;
  readonly terminationGracePeriodSeconds?: number;
  /** pod template labels */
  readonly podLabels: Readonly<Record<string, string>>;
  /** the DaemonSet's own labels (a Helm release's `helm.sh/chart`, `app.kubernetes.io/managed-by: Helm`) */
  readonly labels?: Readonly<Record<string, string>>;
  /** `app.kubernetes.io/instance` of the DaemonSet (else of its pod template) */
  readonly instance?: string;
  /** `app.kubernetes.io/version` of the DaemonSet (else of its pod template) */
  readonly version?: string;
  /** required pod anti-affinity terms of the pod template */
  readonly podAntiAffinity: readonly PodAffinityTermJson[];
  /**
   * Extended resources the pod requests (names outside the kubernetes.io domains, e.g. nvidia.com/gpu), as the
   * scheduler counts a pod's request: the sum over containers, at least the largest init container's; a limit
   * without a request is the request. Whole numbers only (extended resources cannot be overcommitted).
   */
  readonly extendedResources: Readonly<Record<string, number>>;
  /** ConfigMaps and Secrets the pod needs (references marked optional are left out), sorted */
  readonly references: readonly ObjectReference[];
  /** image repositories of the containers (no tag or digest), sorted: the programs the pod runs */
  readonly imageRepositories: readonly string[];
  /** sha256 of spec.template in canonical JSON (sorted keys): equal hashes, equal pods */
  readonly templateHash: string;
  /** sha256 of the whole object in canonical JSON: differs when anything about the DaemonSet changes */
  readonly objectHash: string;
}

export interface ManifestSet {
  readonly documents: readonly ManifestDocument[];
  readonly daemonSets: readonly DaemonSetInfo[];
  /**
   * Pull-only DaemonSets (label app.kubernetes.io/component: image-pre-pull, rendered by rollout.prePull), by id, with
   * the DaemonSet whose image each pulls (annotation node-agents.cdk8s.io/pre-pull-for): not agents, so not in
   * `daemonSets`. @default none
   */
  readonly prePulls?: ReadonlyArray<{ readonly id: string; readonly for: string; readonly image: string }>;
  /** count of the other kinds, kept for context (`ConfigMap: 2`) */
  readonly otherKinds: Readonly<Record<string, number>>;
}

/**
 * YAML as the cluster reads it. kubectl and Argo CD parse manifests with go-yaml v2 (through
 * sigs.k8s.io/yaml), which follows YAML 1.1: merge keys (`<<: *base`), `yes`/`no`/`on`/`off`/`y`/`n`
 * booleans, `0755` octal. The `yaml` package's 1.1 schema reads the same, except timestamps and
 * sexagesimal numbers (`1:30`), which go-yaml v2 leaves as strings when decoding to JSON: those
 * two types are dropped so they stay strings here too.
 */
const YAML_OPTIONS = {
  version: '1.1',
  merge: true,
  // the package compares each key with every earlier key of its map (quadratic: 100,000 keys took 260 s);
  // checkUniqueKeys refuses duplicates in one pass instead
  uniqueKeys: false,
  // the package's own warnings (a collection as a key) would reach stderr unformatted: such input is refused
  // with an error of ours (yaml-aliases.ts) instead
  logLevel: 'error',
  customTags: (tags: YAML.Tags) => tags.filter((tag) => (typeof tag === 'string' ? !['timestamp', 'intTime', 'floatTime'].includes(tag)
    : tag.tag !== 'tag:yaml.org,2002:timestamp' && (tag as { format?: string }).format !== 'TIME')),
} as const;

/**
 * Parses one YAML (or JSON) text with any number of documents, with the rules kubectl and Argo CD
 * apply (YAML_OPTIONS). `kind: List` documents are expanded. Errors say where; they quote no more of the text
 * than a field name (a repeated key) or an anchor's name, cut short.
 */
export function parseManifestText(text: string, source: string): ManifestDocument[] {
  const result: ManifestDocument[] = [];
  const allowance: AliasAllowance = { slack: ALIAS_SLACK_BYTES };
  const docs = YAML.parseAllDocuments(text, YAML_OPTIONS);
  for (const doc of Array.isArray(docs) ? docs : [docs]) {
    if (doc.errors.length > 0) {
      const error = doc.errors[0];
      const at = error.linePos?.[0];
      throw new Error(`${source}: not valid YAML (${error.code}${at ? ` at line ${at.line}, column ${at.col}` : ''})`);
    }
    checkUniqueKeys(doc, text, source);
    try {
      expandAliases(doc, text, source, allowance);
    } catch (error) {
      if (error instanceof RangeError) throw new Error(`${source}: not valid YAML (nested too deeply)`);
      throw error;
    }
    let value: unknown;
    try {
      // no alias is left (expandAliases put each anchored node in its place): nothing for the package to count
      value = doc.toJS({ maxAliasCount: -1 });
    } catch (error) {
      const why = error instanceof RangeError ? 'nested too deeply' : /alias/i.test((error as Error).message) ? 'an alias it cannot resolve, or too many' : 'cannot be read';
      throw new Error(`${source}: not valid YAML (${why})`);
    }
    if (value === null || value === undefined) continue; // empty document (`---` at the end)
    collect(value, source, result);
  }
  return result;
}

/**
 * Refuses a mapping with a key twice, as the API server's strict decoding does ("duplicate field") and as the
 * yaml package's own check would (scalar keys with equal values; other keys are compared by identity, so never
 * equal): a Set per mapping, linear in its keys. The key is named when it reads as a field name.
 */
function checkUniqueKeys(doc: YAML.Document.Parsed, text: string, source: string): void {
  try {
    YAML.visit(doc, {
      Map(_, map) {
        const seen = new Set<unknown>();
        for (const pair of map.items) {
          if (!YAML.isScalar(pair.key)) continue;
          const key = pair.key.value;
          if (typeof key === 'number' && Number.isNaN(key)) continue; // NaN equals no key
          if (seen.has(key)) {
            const offset = pair.key.range?.[0] ?? 0;
            const line = text.slice(0, offset).split('\n').length;
            const named = typeof key === 'string' && /^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/.test(key) ? `the key "${key}"` : 'a key';
            throw new Error(`${source}: not valid YAML (${named} appears twice in one mapping, line ${line}: the API server refuses a duplicate field; keep one)`);
          }
          seen.add(key);
        }
      },
    });
  } catch (error) {
    if (error instanceof RangeError) throw new Error(`${source}: not valid YAML (nested too deeply)`);
    throw error;
  }
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
  const prePulls: { id: string; for: string; image: string }[] = [];
  const otherKinds: Record<string, number> = {};
  const seen = new Map<string, string>();
  for (const doc of documents) {
    const prePull = prePullOf(doc.object);
    if (prePull !== undefined) {
      prePulls.push(prePull);
      continue;
    }
    if (doc.object.kind !== 'DaemonSet') {
      const kind = doc.object.kind ?? 'unknown';
      otherKinds[kind] = (otherKinds[kind] ?? 0) + 1;
      continue;
    }
    const ds = daemonSetInfo(doc.object, doc.source);
    const earlier = seen.get(ds.id);
    if (earlier !== undefined) {
      const folder = (source: string) => source.replace(/[\\/][^\\/]*$/, '');
      // A fleet's output holds one folder per cluster, each with the same DaemonSets.
      const fleet = folder(doc.source) !== folder(earlier) && folder(doc.source) !== doc.source
        ? `; two folders define it, as a fleet's output does (one folder per cluster): pass one cluster's folder, e.g. ${folder(earlier)}`
        : '; pass each manifest once';
      throw new Error(`${doc.source}: DaemonSet ${ds.id} is defined twice (also in ${earlier})${fleet}`);
    }
    seen.set(ds.id, doc.source);
    daemonSets.push(ds);
  }
  daemonSets.sort((a, b) => compare(a.id, b.id));
  prePulls.sort((a, b) => compare(a.id, b.id));
  return { documents, daemonSets, prePulls, otherKinds };
}

/**
 * A pull-only DaemonSet of rollout.prePull (label app.kubernetes.io/component: image-pre-pull): its id, the DaemonSet
 * it pulls for (same namespace) and the image its init container pulls. No agent pod: it neither moves nor replaces one.
 */
function prePullOf(object: KubeObject): { id: string; for: string; image: string } | undefined {
  const meta = object.metadata;
  if (object.kind !== 'DaemonSet' || !isObject(meta) || !isObject(meta.labels) || meta.labels['app.kubernetes.io/component'] !== 'image-pre-pull') return undefined;
  const namespace = typeof meta.namespace === 'string' ? meta.namespace : 'default';
  const target = isObject(meta.annotations) && typeof meta.annotations['node-agents.cdk8s.io/pre-pull-for'] === 'string' ? meta.annotations['node-agents.cdk8s.io/pre-pull-for'] : '';
  const init = (object as Record<string, any>).spec?.template?.spec?.initContainers?.[0];
  return { id: `${namespace}/${String(meta.name)}`, for: `${namespace}/${target}`, image: typeof init?.image === 'string' ? init.image : '' };
}

/** Reads the fields coverage and estimates need, checking the shapes it relies on. */
export function daemonSetInfo(object: KubeObject, source: string): DaemonSetInfo {
  const name = object.metadata?.name;
  if (typeof name !== 'string' || name === '') {
    throw new Error(`${source}: a DaemonSet has no metadata.name`);
  }
  // The API server's ValidateObjectMeta: a DaemonSet name is a DNS subdomain, a namespace a DNS label.
  if (name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
    throw new Error(`${source}: a DaemonSet's metadata.name ${shown(name)} is not a DNS subdomain (lowercase letters, digits, "-" and "."); the API server refuses it`);
  }
  const namespace = object.metadata?.namespace ?? 'default';
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    throw new Error(`${source}: DaemonSet ${name}: metadata.namespace ${shown(namespace)} is not a DNS label (at most 63 lowercase letters, digits and "-"); the API server refuses it`);
  }
  const id = `${namespace}/${name}`;
  const where = `${source}: DaemonSet ${id}`;
  const spec = asObject(object.spec, `${where}: spec`);
  const template = asObject(spec.template, `${where}: spec.template`);
  const podSpec = asObject(template.spec, `${where}: spec.template.spec`);
  labelSelector(spec.selector, `${where}: spec.selector`);
  const templateMeta = isObject(template.metadata) ? template.metadata : {};
  const podLabels = labelMap(templateMeta.labels, `${where}: spec.template.metadata.labels`);
  const labels = labelMap(object.metadata?.labels, `${where}: metadata.labels`);
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
    requiredTerms = required.nodeSelectorTerms.map((term: unknown, i: number) => nodeSelectorTerm(term, `${where}: nodeSelectorTerms[${i}]`));
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
    waveIndex: /^\d{1,4}$/.test(annotations[WAVE_INDEX_ANNOTATION] ?? '') ? Number(annotations[WAVE_INDEX_ANNOTATION]) : undefined,
    nodeName: typeof podSpec.nodeName === 'string' && podSpec.nodeName !== '' ? podSpec.nodeName : undefined,
    // ValidatePodSpec checks nodeSelector with ValidateLabels: a key the API server refuses is refused here, never dropped
    nodeSelector: labelMap(podSpec.nodeSelector, `${where}: nodeSelector`),
    requiredTerms,
    tolerations: tolerations(podSpec.tolerations, `${where}: tolerations`),
    hostNetwork,
    hostPorts: hostPorts(podSpec, hostNetwork),
    updateStrategy: updateStrategy(spec.updateStrategy, where),
    minReadySeconds: integer(spec.minReadySeconds, INT32_MAX, `${where}: spec.minReadySeconds`) ?? 0,
    terminationGracePeriodSeconds: integer(podSpec.terminationGracePeriodSeconds, Number.MAX_SAFE_INTEGER, `${where}: terminationGracePeriodSeconds`),
    podLabels,
    labels,
    instance: labels['app.kubernetes.io/instance'] ?? podLabels['app.kubernetes.io/instance'],
    version: labels['app.kubernetes.io/version'] ?? podLabels['app.kubernetes.io/version'],
    podAntiAffinity,
    extendedResources: extendedResources(podSpec),
    references: references(podSpec),
    imageRepositories: imageRepositories(podSpec),
    templateHash: canonicalHash(template),
    objectHash: canonicalHash(object),
  };
}

/** `registry/path` of each container's image, without tag or digest (`docker.io/library/` implied prefixes dropped). */
function imageRepositories(podSpec: Record<string, unknown>): string[] {
  const result = new Set<string>();
  for (const c of Array.isArray(podSpec.containers) ? podSpec.containers : []) {
    if (!isObject(c) || typeof c.image !== 'string') continue;
    const noDigest = c.image.split('@')[0];
    const slash = noDigest.lastIndexOf('/');
    const colon = noDigest.lastIndexOf(':');
    const repo = colon > slash ? noDigest.substring(0, colon) : noDigest;
    result.add(repo.replace(/^docker\.io\//, '').replace(/^library\//, ''));
  }
  return [...result].sort(compare);
}

/** A resource name the scheduler treats as extended: a domain-prefixed name outside kubernetes.io and its subdomains. */
function isExtendedResource(name: string): boolean {
  const slash = name.indexOf('/');
  if (slash < 0) return false;
  const domain = name.slice(0, slash);
  return domain !== 'kubernetes.io' && !domain.endsWith('.kubernetes.io') && !name.startsWith('requests.');
}

function extendedResources(podSpec: Record<string, any>): Record<string, number> {
  const of = (container: unknown): Record<string, number> => {
    const resources = isObject(container) && isObject(container.resources) ? container.resources : {};
    const result: Record<string, number> = {};
    for (const source of [resources.limits, resources.requests]) {
      if (!isObject(source)) continue;
      for (const [name, value] of Object.entries(source)) {
        const text = String(value).trim();
        if (isExtendedResource(name) && /^\d+$/.test(text)) result[name] = Number(text);
      }
    }
    return result;
  };
  const total: Record<string, number> = {};
  for (const container of Array.isArray(podSpec.containers) ? podSpec.containers : []) {
    for (const [name, n] of Object.entries(of(container))) total[name] = (total[name] ?? 0) + n;
  }
  for (const container of Array.isArray(podSpec.initContainers) ? podSpec.initContainers : []) {
    for (const [name, n] of Object.entries(of(container))) total[name] = Math.max(total[name] ?? 0, n);
  }
  return Object.fromEntries(Object.entries(total).filter(([, n]) => n > 0).sort(([a], [b]) => compare(a, b)));
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

function updateStrategy(value: unknown, where: string): UpdateStrategyJson {
  if (!isObject(value)) return { type: 'RollingUpdate' };
  const type = value.type ?? 'RollingUpdate';
  if (type !== 'RollingUpdate' && type !== 'OnDelete') {
    throw new Error(`${where}: updateStrategy.type is ${shown(type)}; it must be RollingUpdate or OnDelete`);
  }
  const rolling = isObject(value.rollingUpdate) ? value.rollingUpdate : {};
  return {
    type,
    maxUnavailable: intOrPercent(rolling.maxUnavailable, `${where}: updateStrategy.rollingUpdate.maxUnavailable`),
    maxSurge: intOrPercent(rolling.maxSurge, `${where}: updateStrategy.rollingUpdate.maxSurge`),
  };
}

const INT32_MAX = 2 ** 31 - 1;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A value for an error message: JSON-quoted, cut short (the output escaper makes it printable). */
export function shown(value: unknown): string {
  const text = typeof value === 'number' ? String(value) : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
}

/**
 * An IntOrString field as the API server decodes and validates it (intstr.IntOrString,
 * ValidateNonnegativeIntOrPercent): an integer of 0 or more (int32: 0.5, 1e300 or NaN do not decode),
 * or a percentage "N%". Anything else is refused here rather than modelled.
 */
function intOrPercent(value: unknown, what: string): number | string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value > INT32_MAX) throw new Error(`${what} ${shown(value)} is not an integer; give a whole number of pods or a percentage such as "10%"`);
    if (value < 0) throw new Error(`${what} ${value} is negative; give 0 or more pods, or a percentage such as "10%"`);
    return value;
  }
  if (typeof value === 'string' && /^[0-9]+%$/.test(value)) return value;
  throw new Error(`${what} ${shown(value)} is neither an integer nor a percentage such as "10%"; the API server refuses it`);
}

/** An integer field of 0 up to `max` (int32 or int64 in the API); undefined when absent. */
function integer(value: unknown, max: number, what: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new Error(`${what} ${shown(value)} is not a whole number from 0 to ${max}; the API server refuses it`);
  }
  return value;
}

/** A map[string]string field: every value a string (`on`, `yes` and numbers must be quoted: the API server refuses them). */
function stringMap(value: unknown, what: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new Error(`${what} must be a map of strings`);
  const result: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    if (typeof v !== 'string') {
      throw new Error(`${what}: the value of ${shown(key)} is ${shown(v)}, not a string; quote it (YAML reads yes, on, true and numbers as other types)`);
    }
    // a key "__proto__" stays a key (an assignment would set the prototype and drop it), so the checks see it
    Object.defineProperty(result, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return result;
}

/** Labels: a string map whose keys are qualified names and values label values (ValidateLabels). */
function labelMap(value: unknown, what: string): Record<string, string> {
  const labels = stringMap(value, what);
  for (const [key, v] of Object.entries(labels)) {
    if (!isLabelKey(key)) throw new Error(`${what}: ${shown(key)} is not a valid label key; the API server refuses it`);
    if (!isLabelValue(v)) throw new Error(`${what}: the value of ${key} (${shown(v)}) is not a valid label value; the API server refuses it`);
  }
  return labels;
}

const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
const LABEL_SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'];

/**
 * spec.selector as ValidateDaemonSetSpec checks it with ValidateLabelSelector (apimachinery
 * pkg/apis/meta/v1/validation/validation.go): matchLabels are labels (ValidateLabels), and each
 * matchExpressions requirement (ValidateLabelSelectorRequirement) has a label-name key, In or NotIn with
 * values, Exists or DoesNotExist without, every value a label value. `label` writes matchLabels into the GPU
 * drain script's `--selector`: a value such as `a,app notin (logs)` would pick which pods the drain waits for.
 */
function labelSelector(value: unknown, what: string): void {
  if (value === undefined || value === null) return;
  if (!isObject(value)) throw new Error(`${what} must be an object with matchLabels or matchExpressions`);
  labelMap(value.matchLabels, `${what}.matchLabels`);
  const expressions = value.matchExpressions;
  if (expressions === undefined || expressions === null) return;
  if (!Array.isArray(expressions)) throw new Error(`${what}.matchExpressions must be a list`);
  expressions.forEach((requirement: unknown, i: number) => {
    const at = `${what}.matchExpressions[${i}]`;
    if (!isObject(requirement) || typeof requirement.key !== 'string' || !isLabelKey(requirement.key)) {
      throw new Error(`${at}: key ${shown(isObject(requirement) ? requirement.key : requirement)} is not a valid label key; the API server refuses it`);
    }
    if (!LABEL_SELECTOR_OPERATORS.includes(requirement.operator)) {
      throw new Error(`${at}: operator ${shown(requirement.operator)} is not one of ${LABEL_SELECTOR_OPERATORS.join(', ')}; the API server refuses it`);
    }
    const values: unknown = requirement.values ?? [];
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string' || !isLabelValue(v))) {
      const bad = Array.isArray(values) ? values.find((v) => typeof v !== 'string' || !isLabelValue(v)) : values;
      throw new Error(`${at}: values must be a list of label values, and ${shown(bad)} is not one; the API server refuses it`);
    }
    const within = requirement.operator === 'In' || requirement.operator === 'NotIn';
    if (within && values.length === 0) throw new Error(`${at}: operator ${requirement.operator} needs at least one value`);
    if (!within && values.length > 0) throw new Error(`${at}: operator ${requirement.operator} takes no values`);
  });
}

/**
 * A required node affinity term, checked as ValidateNodeSelectorTerm does: each requirement has a
 * string key, a known operator, and values that are a list of strings (a string would be matched as
 * a substring), non-empty for In/NotIn, absent for Exists/DoesNotExist, one integer for Gt/Lt.
 */
function nodeSelectorTerm(term: unknown, where: string): NodeSelectorTermJson {
  if (!isObject(term)) throw new Error(`${where} must be an object with matchExpressions or matchFields`);
  for (const field of ['matchExpressions', 'matchFields'] as const) {
    const list = term[field];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) throw new Error(`${where}.${field} must be a list`);
    list.forEach((requirement: unknown, i: number) => {
      const at = `${where}.${field}[${i}]`;
      if (!isObject(requirement) || typeof requirement.key !== 'string' || requirement.key === '') throw new Error(`${at}: needs a key`);
      if (field === 'matchFields') {
        fieldRequirement(requirement, at);
        return;
      }
      // ValidateNodeSelectorRequirement: the key is a label name (ValidateLabelName, IsQualifiedName)
      if (!isLabelKey(requirement.key)) {
        throw new Error(`${at}: key ${shown(requirement.key)} is not a valid label key; the API server refuses it`);
      }
      if (!SELECTOR_OPERATORS.includes(requirement.operator)) {
        throw new Error(`${at}: operator ${shown(requirement.operator)} is not one of ${SELECTOR_OPERATORS.join(', ')}`);
      }
      const values = requirement.values;
      if (values !== undefined && values !== null && (!Array.isArray(values) || values.some((v: unknown) => typeof v !== 'string'))) {
        throw new Error(`${at}: values must be a list of strings (a single string is not a list); the API server refuses it`);
      }
      const count = Array.isArray(values) ? values.length : 0;
      const op = requirement.operator as string;
      if ((op === 'In' || op === 'NotIn') && count === 0) throw new Error(`${at}: operator ${op} needs at least one value`);
      if ((op === 'Exists' || op === 'DoesNotExist') && count > 0) throw new Error(`${at}: operator ${op} takes no values`);
      // one value only: a value that is not an integer passes validation and matches no node (the scheduler's parse fails)
      if ((op === 'Gt' || op === 'Lt') && count !== 1) throw new Error(`${at}: operator ${op} takes exactly one value`);
      // ValidateNodeSelectorRequirement checks every value with IsValidLabelValue; one stored before that check
      // fails labels.NewRequirement and its term matches no node (requirementParses), a NotIn included
      const bad = (values as string[] | undefined ?? []).find((v) => !isLabelValue(v));
      if (bad !== undefined) {
        throw new Error(`${at}: ${shown(bad)} is not a valid label value; the API server refuses the object, and the scheduler `
          + 'matches no node with this term (a NotIn of it is not "not equal")');
      }
    });
  }
  return term as NodeSelectorTermJson;
}

/**
 * A matchFields requirement as ValidateNodeFieldSelectorRequirement checks it: the only key is metadata.name,
 * the operator In or NotIn with exactly one value, a node name.
 */
function fieldRequirement(requirement: Record<string, any>, at: string): void {
  if (requirement.key !== 'metadata.name') throw new Error(`${at}: key ${shown(requirement.key)} is not a valid field selector key (only metadata.name); the API server refuses it`);
  if (requirement.operator !== 'In' && requirement.operator !== 'NotIn') {
    throw new Error(`${at}: operator ${shown(requirement.operator)} is not a valid field selector operator (In or NotIn); the API server refuses it`);
  }
  const values = requirement.values;
  if (!Array.isArray(values) || values.length !== 1 || typeof values[0] !== 'string') {
    throw new Error(`${at}: values must be a list of exactly one node name for operator ${requirement.operator} of a field selector; the API server refuses it`);
  }
  if (values[0].length > 253 || !DNS_SUBDOMAIN.test(values[0])) throw new Error(`${at}: ${shown(values[0])} is not a node name; the API server refuses it`);
}

const TOLERATION_OPERATORS = ['Exists', 'Equal', ''];
/**
 * The numeric toleration operators: Kubernetes 1.35 added them, alpha, behind the feature gate
 * TaintTolerationComparisonOperators, off by default (pkg/features/kube_features.go; staging/src/k8s.io/api/core/v1
 * toleration.go compares the values as integers). Without the gate the API server refuses the pod.
 */
const NUMERIC_TOLERATIONS = 'a numeric comparison, accepted only from Kubernetes 1.35 with the alpha feature gate TaintTolerationComparisonOperators '
  + 'enabled (off by default: the API server refuses it otherwise); not modelled here: tolerate with Exists or Equal';
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute', ''];

/** Tolerations checked as ValidateTolerations does (string fields, known operator and effect, integer seconds). */
function tolerations(value: unknown, where: string): TolerationJson[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`${where} must be a list`);
  value.forEach((t: unknown, i: number) => {
    const at = `${where}[${i}]`;
    if (!isObject(t)) throw new Error(`${at} must be an object`);
    for (const field of ['key', 'operator', 'value', 'effect']) {
      if (t[field] !== undefined && t[field] !== null && typeof t[field] !== 'string') throw new Error(`${at}.${field}: ${shown(t[field])} is not a string`);
    }
    if (t.operator === 'Gt' || t.operator === 'Lt') throw new Error(`${at}.operator: ${t.operator}: ${NUMERIC_TOLERATIONS}`);
    if (!TOLERATION_OPERATORS.includes(t.operator ?? '')) throw new Error(`${at}.operator: ${shown(t.operator)} is not Exists or Equal`);
    if (!TAINT_EFFECTS.includes(t.effect ?? '')) throw new Error(`${at}.effect: ${shown(t.effect)} is not NoSchedule, PreferNoSchedule or NoExecute`);
    if (t.operator === 'Exists' && t.value !== undefined && t.value !== null && t.value !== '') throw new Error(`${at}: operator Exists takes no value`);
    if (t.tolerationSeconds !== undefined && t.tolerationSeconds !== null) {
      if (typeof t.tolerationSeconds !== 'number' || !Number.isInteger(t.tolerationSeconds)) throw new Error(`${at}.tolerationSeconds: ${shown(t.tolerationSeconds)} is not an integer`);
      if (t.effect !== 'NoExecute') throw new Error(`${at}.tolerationSeconds: only for effect NoExecute`);
    }
  });
  return value as TolerationJson[];
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
