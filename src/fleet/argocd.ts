/**
 * The Argo CD objects of a fleet, as plain JSON: an ApplicationSet rolling the clusters' folders
 * wave by wave (RollingSync), or one Application per cluster (app-of-apps). No cdk8s.
 */
import { CLUSTER_WAVE_LABEL, ClusterWaveSpec, clustersInWaveOrder, rollingSyncSteps } from './waves';
import { sortedRecord } from '../validation/values';

export const CLUSTER_LABEL = 'node-agents.cdk8s.io/cluster';
export const ENVIRONMENT_LABEL = 'node-agents.cdk8s.io/environment';
export const REGION_LABEL = 'node-agents.cdk8s.io/region';

/** One cluster as the Argo CD layer sees it. */
export interface ArgoCluster {
  readonly name: string;
  /** The folder path inside the Git repository. */
  readonly path: string;
  readonly wave: string;
  readonly environment: string;
  readonly region: string;
  /** The cluster's name as registered in Argo CD. */
  readonly destinationName: string;
}

export interface ArgoFleetInput {
  /** The ApplicationSet's name and the prefix of every Application's name. */
  readonly name: string;
  /** Namespace Argo CD runs in (its Applications and ApplicationSets live there). */
  readonly argoCdNamespace: string;
  readonly project: string;
  readonly repoUrl: string;
  readonly targetRevision: string;
  readonly destinationNamespace: string;
  readonly clusters: readonly ArgoCluster[];
  readonly waves: readonly ClusterWaveSpec[];
  readonly syncOptions: readonly string[];
  readonly prune: boolean;
  readonly selfHeal: boolean;
  /**
   * The folder of the cluster files inside the repository (repoPath included): the ApplicationSet
   * then uses a git files generator over `<folder>/*.json`. Unset: a list generator.
   */
  readonly clusterFilesFolder?: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** The Application name of a cluster. */
export function applicationName(fleetName: string, cluster: string): string {
  return `${fleetName}-${cluster}`;
}

/**
 * Sync options for node agents. ServerSideApply: a client-side apply stores the whole object in the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation, and annotations are limited to
 * 256 KiB in total, which a log collector's ConfigMap (parsers, Lua filters) or a CRD can exceed.
 * ApplyOutOfSyncOnly: a promotion changes one DaemonSet; applying only what differs keeps a fleet
 * sync from re-applying every object of every agent. FailOnSharedResource: an object that another
 * Application already manages (a second fleet rendering the same agent) fails the sync instead of
 * two Applications taking turns overwriting it. PruneLast, with pruning on: a removed wave's
 * DaemonSet goes only after the others are Healthy.
 */
export function nodeAgentSyncOptions(options: { serverSideApply: boolean; prune: boolean; extra: readonly string[] }): string[] {
  const list = [
    'ApplyOutOfSyncOnly=true',
    'FailOnSharedResource=true',
    ...(options.prune ? ['PruneLast=true'] : []),
    ...(options.serverSideApply ? ['ServerSideApply=true'] : []),
    ...options.extra,
  ];
  return [...new Set(list)].sort();
}

/** Retries of a failed sync: an apply racing a CRD or webhook upgrade succeeds on a later try. */
const RETRY = { limit: 5, backoff: { duration: '30s', factor: 2, maxDuration: '5m' } };

function labels(cluster: { name: string; wave: string; environment: string; region: string }): Record<string, string> {
  return {
    [CLUSTER_LABEL]: cluster.name,
    [CLUSTER_WAVE_LABEL]: cluster.wave,
    [ENVIRONMENT_LABEL]: cluster.environment,
    [REGION_LABEL]: cluster.region,
  };
}

/** The parameters the ApplicationSet's template reads for one cluster: a list element, or a cluster file's content. */
export function clusterParameters(c: ArgoCluster): Record<string, string> {
  return {
    cluster: c.name,
    destination: c.destinationName,
    environment: c.environment,
    path: c.path,
    region: c.region,
    wave: c.wave,
  };
}

/** The name of a cluster's file in the cluster files folder. */
export function clusterFileName(cluster: string): string {
  return `${cluster}.json`;
}

/** A cluster file's content: its parameters as JSON, keys sorted, one trailing newline. */
export function clusterFileContent(c: ArgoCluster): string {
  return `${JSON.stringify(sortedRecord(clusterParameters(c)), null, 2)}\n`;
}

/**
 * The git files generator adds the matched file's location to each file's parameters under `path`
 * (applicationset/generators/git.go), replacing a `path` key of the file: with goTemplate an object
 * `{path, basename, filename, basenameNormalized, filenameNormalized, segments}`, without it the
 * flattened strings `path`, `path.basename`, `path[n]`, .... With `pathParamPrefix` that goes under
 * `<prefix>.path` instead, so the cluster files keep the list elements' keys (`path` among them)
 * and the template is the same for both generators.
 */
export const GIT_FILES_PATH_PARAM_PREFIX = 'clusterFile';

/** The ApplicationSet's generator: a list of the clusters (in wave order), or git files over the cluster files folder. */
function generator(input: ArgoFleetInput): Json {
  if (input.clusterFilesFolder !== undefined) {
    return {
      git: {
        repoURL: input.repoUrl,
        revision: input.targetRevision,
        files: [{ path: `${input.clusterFilesFolder}/*.json` }],
        pathParamPrefix: GIT_FILES_PATH_PARAM_PREFIX,
      },
    };
  }
  return { list: { elements: clustersInWaveOrder(input.waves, input.clusters).map(clusterParameters) } };
}

/**
 * The ApplicationSet: a list generator with one element per cluster (in wave order), or a git files
 * generator reading one file per cluster (adding a cluster then adds a file, the ApplicationSet
 * stays the same), and one RollingSync step per cluster wave.
 *
 * Under RollingSync the ApplicationSet controller syncs the Applications itself, step by step
 * (applicationset/progressivesync `SyncDesiredApplications` / `syncApplication`): it turns the
 * template's automated sync off on each Application it generates and starts a sync operation with
 * the template's syncOptions and retry, and with prune taken from the template's
 * `syncPolicy.automated.prune` only. RollingSync has no prune field of its own. So with pruning on,
 * the template carries `automated: { prune: true }`; without pruning it has no `automated` block,
 * and an Argo CD without progressive syncs enabled then syncs none of the Applications by itself
 * (with pruning on it would sync every cluster at once: progressive syncs must be on).
 */
export function applicationSet(input: ArgoFleetInput): Json {
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: input.name, namespace: input.argoCdNamespace },
    spec: {
      generators: [generator(input)],
      goTemplate: true,
      goTemplateOptions: ['missingkey=error'],
      strategy: {
        type: 'RollingSync',
        rollingSync: { steps: rollingSyncSteps(input.waves) },
      },
      // Deleting the ApplicationSet (or renaming it) must not delete every agent on every node.
      syncPolicy: { preserveResourcesOnDeletion: true },
      template: {
        metadata: {
          name: `${input.name}-{{.cluster}}`,
          labels: labels({ name: '{{.cluster}}', wave: '{{.wave}}', environment: '{{.environment}}', region: '{{.region}}' }),
        },
        spec: {
          project: input.project,
          source: { repoURL: input.repoUrl, targetRevision: input.targetRevision, path: '{{.path}}' },
          destination: { name: '{{.destination}}', namespace: input.destinationNamespace },
          syncPolicy: {
            ...(input.prune ? { automated: { prune: true } } : {}),
            syncOptions: [...input.syncOptions],
            retry: RETRY,
          },
        },
      },
    },
  };
}

/**
 * One Application per cluster, for Argo CD installs without ApplicationSets: automated sync
 * (prune off unless asked), and the cluster wave's index as `argocd.argoproj.io/sync-wave`, so a
 * parent Application syncing this folder creates them canary first. No finalizer: deleting an
 * Application leaves its agents running.
 */
export function applications(input: ArgoFleetInput): Json[] {
  return clustersInWaveOrder(input.waves, input.clusters).map((c) => ({
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: applicationName(input.name, c.name),
      namespace: input.argoCdNamespace,
      annotations: { 'argocd.argoproj.io/sync-wave': String(input.waves.findIndex((w) => w.name === c.wave)) },
      labels: labels(c),
    },
    spec: {
      project: input.project,
      source: { repoURL: input.repoUrl, targetRevision: input.targetRevision, path: c.path },
      destination: { name: c.destinationName, namespace: input.destinationNamespace },
      syncPolicy: {
        automated: { prune: input.prune, selfHeal: input.selfHeal },
        syncOptions: [...input.syncOptions],
        retry: RETRY,
      },
    },
  }));
}

/** A file of the repository: path from the repository's root, `/`-separated. */
export interface RepoFile {
  readonly path: string;
  readonly content: string;
}

/** Go's path.Match for the patterns the fleet writes (`*` within one segment, the rest literal). */
function globMatches(pattern: string, filePath: string): boolean {
  if (/[?[\\]/.test(pattern)) throw new Error(`glob "${pattern}": only "*" is simulated`);
  const regex = pattern.split('*').map((part) => part.replace(/[.+^${}()|]/g, '\\$&')).join('[^/]*');
  return new RegExp(`^${regex}$`).test(filePath);
}

/**
 * The parameter sets of a git files generator (goTemplate on), as applicationset/generators/git.go
 * builds them: the files its include patterns match minus those its exclude patterns match, in path
 * order; each file's JSON object copied, then the file's location under `path` (or `<pathParamPrefix>.path`).
 */
export function gitFilesParameters(git: Json, repoFiles: readonly RepoFile[]): Array<Record<string, Json>> {
  const requests = git.files as Array<{ path: string; exclude?: boolean }>;
  const included = repoFiles.filter((f) => requests.some((r) => !r.exclude && globMatches(r.path, f.path))
    && !requests.some((r) => r.exclude && globMatches(r.path, f.path)));
  return [...included].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((f) => {
    const object = JSON.parse(f.content);
    if (typeof object !== 'object' || object === null || Array.isArray(object)) throw new Error(`git files generator: ${f.path} does not hold one JSON object`);
    const dir = f.path.includes('/') ? f.path.slice(0, f.path.lastIndexOf('/')) : '.';
    const location = { path: dir, basename: dir.split('/').pop(), filename: f.path.split('/').pop(), segments: dir.split('/') };
    const params: Record<string, Json> = { ...object };
    if (git.pathParamPrefix) params[git.pathParamPrefix] = { path: location };
    else params.path = location;
    return params;
  });
}

/**
 * The Applications an ApplicationSet would generate, as the fields the checks need (name, labels,
 * source path, destination): the template rendered with each parameter set of its generator, a list
 * generator's elements or a git files generator's files (taken from `repoFiles`).
 */
export function generatedApplications(appSet: Json, repoFiles: readonly RepoFile[] = []): Json[] {
  const template = appSet.spec.template;
  const gen = appSet.spec.generators[0];
  const paramSets: Array<Record<string, Json>> = gen.list ? gen.list.elements : gitFilesParameters(gen.git, repoFiles);
  return paramSets.map((params) => {
    const render = (s: string) => s.replace(/\{\{\.([A-Za-z]+)\}\}/g, (_, key: string) => {
      if (!(key in params)) throw new Error(`ApplicationSet ${appSet.metadata.name}: template names {{.${key}}}, which its generator's parameters lack`);
      if (typeof params[key] !== 'string') throw new Error(`ApplicationSet ${appSet.metadata.name}: template names {{.${key}}}, which its generator sets to an object, not a string`);
      return params[key];
    });
    const labelsOf: Record<string, string> = {};
    for (const [k, v] of Object.entries(template.metadata.labels as Record<string, string>)) labelsOf[k] = render(v);
    return {
      metadata: { name: render(template.metadata.name), labels: labelsOf },
      spec: {
        source: { ...template.spec.source, path: render(template.spec.source.path) },
        destination: { name: render(template.spec.destination.name), namespace: template.spec.destination.namespace },
      },
    };
  });
}

export interface StepSelector {
  readonly matchExpressions: ReadonlyArray<{ key: string; operator: string; values: string[] }>;
}

/** Does a RollingSync step select an Application (every expression true)? */
export function stepMatches(step: StepSelector, appLabels: Record<string, string>): boolean {
  return step.matchExpressions.every((e) => {
    const value = appLabels[e.key];
    if (e.operator === 'In') return value !== undefined && e.values.includes(value);
    if (e.operator === 'NotIn') return value === undefined || !e.values.includes(value);
    return false;
  });
}
