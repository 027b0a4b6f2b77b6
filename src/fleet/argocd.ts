/**
 * The Argo CD objects of a fleet, as plain JSON: an ApplicationSet rolling the clusters' folders
 * wave by wave (RollingSync), or one Application per cluster (app-of-apps). No cdk8s.
 */
import { CLUSTER_WAVE_LABEL, ClusterWaveSpec, clustersInWaveOrder, rollingSyncSteps } from './waves';

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

/**
 * The ApplicationSet: a list generator with one element per cluster (in wave order), and one
 * RollingSync step per cluster wave. Under RollingSync the ApplicationSet controller turns autosync
 * off on the Applications it generates (and logs a warning for each that asks for it) and syncs them
 * itself, step by step, with the template's syncPolicy: so the template has no `automated` block.
 */
export function applicationSet(input: ArgoFleetInput): Json {
  const elements = clustersInWaveOrder(input.waves, input.clusters).map((c) => ({
    cluster: c.name,
    destination: c.destinationName,
    environment: c.environment,
    path: c.path,
    region: c.region,
    wave: c.wave,
  }));
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'ApplicationSet',
    metadata: { name: input.name, namespace: input.argoCdNamespace },
    spec: {
      generators: [{ list: { elements } }],
      goTemplate: true,
      goTemplateOptions: ['missingkey=error'],
      strategy: {
        type: 'RollingSync',
        rollingSync: {
          ...(input.prune ? { defaultPrune: true } : {}),
          steps: rollingSyncSteps(input.waves),
        },
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
          syncPolicy: { syncOptions: [...input.syncOptions], retry: RETRY },
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

/**
 * The Applications an ApplicationSet would generate, as the fields the checks need (name, labels,
 * source path, destination namespace): the template rendered with each list element.
 */
export function generatedApplications(appSet: Json): Json[] {
  const template = appSet.spec.template;
  return (appSet.spec.generators[0].list.elements as Array<Record<string, string>>).map((element) => {
    const render = (s: string) => s.replace(/\{\{\.([A-Za-z]+)\}\}/g, (_, key: string) => {
      if (!(key in element)) throw new Error(`ApplicationSet ${appSet.metadata.name}: template names {{.${key}}}, which the list elements lack`);
      return element[key];
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
