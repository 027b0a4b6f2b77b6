import * as fs from 'fs';
import * as path from 'path';
import { ApiObject, App, AppProps, Chart, DependencyGraph, Yaml } from 'cdk8s';
import { IConstruct } from 'constructs';
import { FleetCluster, FleetClusterOptions } from './fleet-cluster';
import { NodeAgentDaemonSet } from './node-agent-daemon-set';
import {
  applications, applicationSet, ArgoCluster, ArgoFleetInput, clusterFileContent, clusterFileName, generatedApplications, Json, nodeAgentSyncOptions,
  RepoFile, stepMatches,
} from '../fleet/argocd';
import { duplicateFolders, folderProblems, nestedFolders } from '../fleet/names';
import { ClusterWaveSpec, DEFAULT_CLUSTER_WAVES, effectiveWaves, waveProblems } from '../fleet/waves';
import { withRenderedObjects } from '../render/late-checks';
import { brand } from '../validation/brand';
import { nameOf, throwIfProblems, ValidationError } from '../validation/errors';
import { registerKind } from '../validation/owner';
import { checkArgs, checkStruct } from '../validation/struct-check';
import { checkDnsLabel } from '../validation/values';

/** What a fleet's clusters run: called once per cluster, when the cluster is added. */
export interface IFleetAgents {
  /** Add the agents of `cluster` (read its settings, `hasGpus`, wave) to `chart` (or to charts of `cluster.addChart`). */
  addAgents(cluster: FleetCluster, chart: Chart): void;
}

/** Argo CD's `maxUpdate` of a RollingSync step: how many Applications of the step sync at once. */
export class MaxUpdate {
  /** At most `count` Applications at once (0: the step waits for a manual sync). */
  public static clusters(count: number): MaxUpdate {
    checkArgs('MaxUpdate.clusters', [count]);
    return new MaxUpdate(count);
  }

  /** At most `percent`% of the step's Applications at once (Argo CD rounds down, at least 1). */
  public static percent(percent: number): MaxUpdate {
    checkArgs('MaxUpdate.percent', [percent]);
    return new MaxUpdate(`${percent}%`);
  }

  private constructor(private readonly value: number | string) {}

  /** @internal */
  public _value(): number | string {
    return this.value;
  }
}
brand(MaxUpdate, 'MaxUpdate');

/** One cluster wave: a RollingSync step. */
export interface ClusterWave {
  /** The wave's name: a DNS-1123 label, the value of the clusters' `wave`. */
  readonly name: string;
  /**
   * How many of the wave's Applications sync at once.
   * @default - all of them
   */
  readonly maxUpdate?: MaxUpdate;
}

/** How the fleet's clusters are handed to Argo CD. */
export enum ArgoCdLayout {
  /** One ApplicationSet, a generator over the cluster folders (see `generator`), RollingSync over the cluster waves. */
  APPLICATION_SET = 'ApplicationSet',
  /** One Application per cluster (app-of-apps), for Argo CD installs without ApplicationSets. */
  APPLICATIONS = 'Applications',
}

/** Options of the git files generator. */
export interface GitFilesGeneratorOptions {
  /**
   * The folder of the cluster files (`<folder>/<cluster>.json`), relative to the output directory
   * (repoPath applies, as to the cluster folders). No Application syncs it: it must lie outside
   * every cluster folder and `argocd`, and contain none of them.
   * @default "fleet-clusters"
   */
  readonly folder?: string;
}

/** Where the ApplicationSet's generator finds the clusters. */
export class ArgoCdGenerator {
  /** A list generator: every cluster is an element inside the ApplicationSet. */
  public static list(): ArgoCdGenerator {
    return new ArgoCdGenerator(undefined);
  }

  /**
   * A git files generator over `<folder>/*.json`: the fleet writes one file per cluster with the
   * parameters the template reads; adding a cluster adds a file, the ApplicationSet stays the same.
   */
  public static gitFiles(options: GitFilesGeneratorOptions = {}): ArgoCdGenerator {
    checkArgs('ArgoCdGenerator.gitFiles', [options]);
    return new ArgoCdGenerator(options.folder ?? 'fleet-clusters');
  }

  private constructor(private readonly folder: string | undefined) {}

  /** @internal The cluster files folder (relative to the output directory), or undefined for the list generator. */
  public _clusterFilesFolder(): string | undefined {
    return this.folder;
  }
}
brand(ArgoCdGenerator, 'ArgoCdGenerator');

/** Argo CD's resource tracking method (`application.resourceTrackingMethod` in argocd-cm). */
export enum ArgoCdResourceTracking {
  /** `annotation`: the default from Argo CD 3.0 on. */
  ANNOTATION = 'annotation',
  /** `annotation+label`. */
  ANNOTATION_AND_LABEL = 'annotation+label',
  /** `label`: the default before Argo CD 3.0. */
  LABEL = 'label',
}

/** Props of an AgentFleet. */
export interface AgentFleetProps extends AppProps {
  /** The Git repository Argo CD reads the fleet's folders from. */
  readonly repoUrl: string;

  /** Adds each cluster's agents. */
  readonly agents: IFleetAgents;

  /**
   * The clusters (more with `addCluster`).
   * @default - none
   */
  readonly clusters?: FleetClusterOptions[];

  /**
   * The ApplicationSet's name and the prefix of each Application's name (`<name>-<cluster>`).
   * @default "node-agents"
   */
  readonly name?: string;

  /**
   * The revision Argo CD syncs.
   * @default "HEAD"
   */
  readonly targetRevision?: string;

  /**
   * Where the output directory is inside the repository (prefix of every cluster's `source.path`).
   * @default "" (the repository's root)
   */
  readonly repoPath?: string;

  /**
   * The cluster waves in rollout order.
   * @default canary (1 at a time), early (25% at a time), rest (all at once); those without clusters left out
   */
  readonly clusterWaves?: ClusterWave[];

  /**
   * The Argo CD objects: an ApplicationSet, or one Application per cluster.
   * @default ArgoCdLayout.APPLICATION_SET
   */
  readonly layout?: ArgoCdLayout;

  /**
   * The ApplicationSet's generator (layout APPLICATION_SET only): the clusters listed inside it, or
   * read from one file per cluster in the repository.
   * @default ArgoCdGenerator.list()
   */
  readonly generator?: ArgoCdGenerator;

  /**
   * Namespace Argo CD runs in.
   * @default "argocd"
   */
  readonly argoCdNamespace?: string;

  /**
   * Argo CD project of the Applications.
   * @default "default"
   */
  readonly project?: string;

  /**
   * Each Application's destination namespace and the namespace of the clusters' charts.
   * @default "kube-system"
   */
  readonly namespace?: string;

  /**
   * Other namespaces agents may run in (e.g. the GPU driver's own): an agent in any other namespace fails synthesis.
   * @default - none
   */
  readonly additionalNamespaces?: string[];

  /**
   * Delete objects removed from Git. Off by default: a node agent removed by mistake stops on every node at once.
   * In the ApplicationSet layout it is the template's `syncPolicy.automated.prune`: RollingSync takes
   * prune from there only (and turns that automated sync off, syncing step by step itself), so
   * progressive syncs must be enabled in Argo CD.
   * @default false
   */
  readonly prune?: boolean;

  /**
   * Revert changes made in the cluster (Applications layout; under RollingSync the controller syncs).
   * @default true
   */
  readonly selfHeal?: boolean;

  /**
   * Apply with server-side apply (no size-limited last-applied annotation).
   * @default true
   */
  readonly serverSideApply?: boolean;

  /**
   * More Argo CD sync options.
   * @default - none
   */
  readonly extraSyncOptions?: string[];

  /**
   * The resource tracking method the Argo CD install uses. The agents set `app.kubernetes.io/instance`
   * to the agent's name; label tracking overwrites it with the Application's name, so it is refused.
   * @default ArgoCdResourceTracking.ANNOTATION
   */
  readonly resourceTracking?: ArgoCdResourceTracking;
}

/** One file of the fleet's output. */
export interface FleetFile {
  /** Path relative to the output directory, `/`-separated. */
  readonly path: string;
  /** The file's content. */
  readonly content: string;
}

/**
 * A fleet of clusters in one GitOps repository: one folder per cluster with a file per chart, and
 * the Argo CD objects that roll a change out cluster wave by cluster wave. Synthesize with
 * `synth()` (the cdk8s `App.synth()` layout, one flat folder, does not apply).
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/fleets.md
 */
export class AgentFleet extends App {
  /** The clusters, in the order added. */
  public readonly clusters: FleetCluster[] = [];

  private readonly props: AgentFleetProps;
  private readonly fleetName: string;
  private readonly destinationNamespace: string;
  private readonly waveOrder: string[];

  public constructor(props: AgentFleetProps) {
    // Types and unknown keys first (JavaScript callers, props from parsed YAML): App's own constructor reads props.
    super(checkedFleetProps(props));
    registerKind(this, 'AgentFleet', true);
    this.props = props;
    this.fleetName = props.name ?? 'node-agents';
    this.destinationNamespace = props.namespace ?? 'kube-system';
    this.waveOrder = (props.clusterWaves ?? DEFAULT_CLUSTER_WAVES).map((w) => w.name);
    const problems = [
      ...checkDnsLabel('name', this.fleetName, 40),
      ...checkDnsLabel('namespace', this.destinationNamespace),
      ...checkDnsLabel('argoCdNamespace', props.argoCdNamespace ?? 'argocd'),
      ...(props.clusterWaves ?? []).flatMap((w, i) => checkDnsLabel(`clusterWaves[${i}].name`, w.name)),
      ...repoPathProblems(props.repoPath),
      ...this.generatorProblems(),
    ];
    throwIfProblems(this, problems, { heading: 'invalid props' });
    for (const cluster of props.clusters ?? []) this.addCluster(cluster);
    // synth() validates once; under cdk8s's own App.synth() this would run once per chart.
    this.node.addValidation({ validate: () => this.checkFleet() });
  }

  /** Add a cluster and its agents. */
  public addCluster(options: FleetClusterOptions): FleetCluster {
    checkArgs('AgentFleet.addCluster', [options], this);
    // The cluster's name is its construct id: refused here, before the constructs library's generic errors.
    if (options.name === '') throw new ValidationError(this, 'addCluster: cluster name "" is empty; give each cluster its name (a DNS-1123 label)');
    if (this.clusters.some((c) => c.clusterName === options.name)) {
      throw new ValidationError(this, `addCluster: two clusters are named "${options.name}"; each cluster needs a name of its own (it names its folder and its Argo CD Application)`);
    }
    const cluster = new FleetCluster(this, clusterConstructId(options.name), {
      ...options,
      clusterWaveOrder: this.waveOrder,
      namespace: this.destinationNamespace,
    });
    this.props.agents.addAgents(cluster, cluster.chart);
    this.clusters.push(cluster);
    return cluster;
  }

  /** The Argo CD objects (ApplicationSet, or the Applications), as JSON. */
  public argoCdObjects(): any[] {
    const input = this.argoInput();
    return this.layout === ArgoCdLayout.APPLICATION_SET ? [applicationSet(input)] : applications(input);
  }

  /**
   * Every output file, sorted by path: `<folder>/<chart>.k8s.yaml` per cluster chart,
   * `argocd/<name>.k8s.yaml`, and with `ArgoCdGenerator.gitFiles()` one `<cluster>.json` per cluster
   * in the generator's folder. Validates the app once (cdk8s's `chart.toJson()` would validate the
   * whole app again per chart).
   */
  public synthFiles(): FleetFile[] {
    const all = this.node.findAll();
    // The late checks render every agent object; the output reuses that JSON (nothing changes in between).
    return withRenderedObjects((render) => {
      validateOnce(this, all);
      resolveDependencies(all);
      const files: FleetFile[] = [];
      for (const cluster of this.clusters) {
        for (const chart of cluster.node.children.filter((c): c is Chart => c instanceof Chart)) {
          files.push({ path: `${cluster.folder}/${chart.node.id}.k8s.yaml`, content: Yaml.stringify(...chartObjects(chart, render)) });
        }
      }
      files.push(...this.clusterFiles());
      files.push({ path: `argocd/${this.fleetName}.k8s.yaml`, content: Yaml.stringify(...this.argoCdObjects()) });
      return files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    });
  }

  /** Write every file of `synthFiles()` under `outdir`. */
  public synth(): void {
    for (const file of this.synthFiles()) {
      const full = path.join(this.outdir, ...file.path.split('/'));
      fs.mkdirSync(path.dirname(full), { recursive: true });
      fs.writeFileSync(full, file.content);
    }
  }

  private get layout(): ArgoCdLayout {
    return this.props.layout ?? ArgoCdLayout.APPLICATION_SET;
  }

  /** The cluster files folder relative to the output directory, with the git files generator. */
  private clusterFilesFolder(): string | undefined {
    return this.props.generator?._clusterFilesFolder();
  }

  /** With the git files generator: one file per cluster, the parameters its Application's template reads. */
  private clusterFiles(): FleetFile[] {
    const folder = this.clusterFilesFolder();
    if (folder === undefined) return [];
    return this.argoInput().clusters.map((c) => ({ path: `${folder}/${clusterFileName(c.name)}`, content: clusterFileContent(c) }));
  }

  /** The path of a file in the repository: repoPath, then its path in the output directory. */
  private repoPathOf(outputPath: string): string {
    const prefix = (this.props.repoPath ?? '').replace(/\/+$/, '');
    return prefix ? `${prefix}/${outputPath}` : outputPath;
  }

  /** The generator: only with the ApplicationSet layout, its folder a plain relative path. */
  private generatorProblems(): string[] {
    const folder = this.clusterFilesFolder();
    if (folder === undefined) return [];
    if (this.layout !== ArgoCdLayout.APPLICATION_SET) {
      return ['generator ArgoCdGenerator.gitFiles() needs layout ArgoCdLayout.APPLICATION_SET (the Applications layout has no generator); drop generator or set layout to ArgoCdLayout.APPLICATION_SET'];
    }
    return folderProblems(folder).map((p) => `generator ArgoCdGenerator.gitFiles() folder: ${p}`);
  }

  /** The cluster files folder lies apart from every folder an Application syncs (Argo CD would read its .json files as manifests). */
  private clusterFilesFolderProblems(): string[] {
    const folder = this.clusterFilesFolder();
    if (folder === undefined) return [];
    const synced = [...new Set([...this.clusters.map((c) => c.folder), 'argocd'])].sort();
    const clash = (relation: string, other: string) => `generator ArgoCdGenerator.gitFiles() folder "${folder}" ${relation} folder "${other}", which an Application syncs: `
      + 'its cluster files would be applied as manifests; pass gitFiles({ folder }) a folder outside every cluster folder and "argocd"';
    return [
      ...synced.filter((f) => f === folder).map((f) => clash('is', f)),
      ...nestedFolders([folder, ...synced]).flatMap((n) => (n.outer === folder ? [clash('contains', n.inner)] : n.inner === folder ? [clash('is inside', n.outer)] : [])),
    ];
  }

  private argoInput(): ArgoFleetInput {
    const p = this.props;
    const prune = p.prune ?? false;
    const filesFolder = this.clusterFilesFolder();
    const clusters: ArgoCluster[] = this.clusters.map((c) => ({
      name: c.clusterName,
      path: this.repoPathOf(c.folder),
      wave: c.wave,
      environment: c.environment,
      region: c.region,
      destinationName: c.argoCdName,
    }));
    return {
      name: this.fleetName,
      argoCdNamespace: p.argoCdNamespace ?? 'argocd',
      project: p.project ?? 'default',
      repoUrl: p.repoUrl,
      targetRevision: p.targetRevision ?? 'HEAD',
      destinationNamespace: this.destinationNamespace,
      clusters,
      waves: this.waves(clusters),
      syncOptions: nodeAgentSyncOptions({ serverSideApply: p.serverSideApply ?? true, prune, extra: p.extraSyncOptions ?? [] }),
      prune,
      selfHeal: p.selfHeal ?? true,
      clusterFilesFolder: filesFolder === undefined ? undefined : this.repoPathOf(filesFolder),
    };
  }

  private waves(clusters: readonly { name: string; wave: string }[]): ClusterWaveSpec[] {
    const declared = this.props.clusterWaves?.map((w) => ({ name: w.name, maxUpdate: w.maxUpdate?._value() }));
    return effectiveWaves(declared, clusters);
  }

  /** Fleet-wide checks: one walk of each cluster's subtree. */
  private checkFleet(): string[] {
    const problems: string[] = [];
    const tracking = this.props.resourceTracking ?? ArgoCdResourceTracking.ANNOTATION;
    if (tracking !== ArgoCdResourceTracking.ANNOTATION) {
      problems.push(`resourceTracking "${tracking}": Argo CD's label tracking writes the Application's name into app.kubernetes.io/instance on every object it applies, replacing the agent's name the agents' own labels carry; set application.resourceTrackingMethod: annotation in argocd-cm (the default from Argo CD 3.0 on) and resourceTracking to ArgoCdResourceTracking.ANNOTATION`);
    }
    const input = this.argoInput();
    const names = input.clusters.map((c) => c.name);
    for (const name of new Set(names)) {
      if (names.filter((n) => n === name).length > 1) problems.push(`cluster "${name}" is added twice`);
    }
    for (const dup of duplicateFolders(this.clusters.map((c) => ({ cluster: c.clusterName, folder: c.folder })))) {
      problems.push(`clusters ${dup.clusters.map((c) => `"${c}"`).join(' and ')} share folder "${dup.folder}": each Application would sync the other's agents; give each its own folder`);
    }
    for (const nest of nestedFolders(this.clusters.map((c) => c.folder))) {
      problems.push(`folder "${nest.inner}" is inside folder "${nest.outer}": give each cluster a folder outside the others'`);
    }
    problems.push(...this.clusterFilesFolderProblems());
    problems.push(...waveProblems(input.waves, input.clusters, { names: this.waveOrder, defaults: this.props.clusterWaves === undefined }));
    problems.push(...this.stepProblems(input));
    problems.push(...this.namespaceProblems());
    return problems.map((p) => `AgentFleet ${this.fleetName}: ${p}`);
  }

  /** On the generated ApplicationSet itself: each Application in exactly one step, each step matching one. */
  private stepProblems(input: ArgoFleetInput): string[] {
    if (this.layout !== ArgoCdLayout.APPLICATION_SET || input.clusters.length === 0) return [];
    const appSet = applicationSet(input);
    // The git files generator reads the cluster files as the repository holds them (repoPath included).
    const repoFiles: RepoFile[] = this.clusterFiles().map((f) => ({ path: this.repoPathOf(f.path), content: f.content }));
    const apps = generatedApplications(appSet, repoFiles);
    const steps: Json[] = appSet.spec.strategy.rollingSync.steps;
    const problems: string[] = [];
    steps.forEach((step, i) => {
      if (!apps.some((app) => stepMatches(step, app.metadata.labels))) problems.push(`RollingSync step ${i + 1} (${JSON.stringify(step.matchExpressions)}) matches no Application`);
    });
    for (const app of apps) {
      const count = steps.filter((step) => stepMatches(step, app.metadata.labels)).length;
      if (count !== 1) problems.push(`Application ${app.metadata.name} is matched by ${count} RollingSync steps, not exactly one`);
    }
    return problems;
  }

  /** Every agent of a cluster runs in the Application's destination namespace (or an additional one). */
  private namespaceProblems(): string[] {
    const allowed = [this.destinationNamespace, ...(this.props.additionalNamespaces ?? [])];
    const problems: string[] = [];
    for (const cluster of this.clusters) {
      for (const agent of cluster.node.findAll().filter((c: IConstruct): c is NodeAgentDaemonSet => c instanceof NodeAgentDaemonSet)) {
        if (!allowed.includes(agent.namespace)) {
          problems.push(`${nameOf(agent)} runs in namespace "${agent.namespace}", but the Application of cluster "${cluster.clusterName}" has destination namespace "${this.destinationNamespace}"; use that namespace or list "${agent.namespace}" in additionalNamespaces`);
        }
      }
    }
    return problems;
  }
}
brand(AgentFleet, 'AgentFleet');

/**
 * Run every construct's validations once, throwing as cdk8s's App.synth does, but a ValidationError
 * raised by the fleet.
 */
function validateOnce(fleet: AgentFleet, all: IConstruct[]): void {
  const errors = all.flatMap((c) => c.node.validate().map((error) => `[${c.node.path}] ${error}`));
  if (errors.length > 0) throw new ValidationError(fleet, `validation failed with the following errors:\n  ${errors.join('\n  ')}`);
}

/**
 * cdk8s 2.70's dependency resolution before synthesis (App.synth does the same): nested charts and
 * construct dependencies become dependencies between the API objects, which order each chart's output.
 */
function resolveDependencies(all: IConstruct[]): void {
  for (const parent of all.filter((c): c is Chart => c instanceof Chart)) {
    for (const child of parent.node.children.filter((c) => c instanceof Chart)) parent.node.addDependency(child);
  }
  const deps: Array<{ source: IConstruct; target: IConstruct }> = [];
  for (const c of all) for (const target of c.node.dependencies) deps.push({ source: c, target });
  for (const { source, target } of deps) {
    const sourceChart = Chart.of(source);
    const targetChart = Chart.of(target);
    if (sourceChart !== targetChart) sourceChart.node.addDependency(targetChart);
    const targets = target.node.findAll().filter((c) => c instanceof ApiObject && Chart.of(c) === targetChart);
    const sources = source.node.findAll().filter((c) => c instanceof ApiObject && Chart.of(c) === sourceChart);
    for (const t of targets) for (const s of sources) if (t !== s) s.node.addDependency(t);
  }
}

/** A chart's objects in dependency order (cdk8s's chartToKube), rendered. */
function chartObjects(chart: Chart, render: (o: ApiObject) => Json): Json[] {
  return new DependencyGraph(chart.node).topology()
    .filter((c): c is ApiObject => c instanceof ApiObject && Chart.of(c) === chart)
    .map(render);
}

/**
 * The construct id of a cluster: its name, but for a name Object.prototype has ("constructor", the one
 * DNS label among them, or "toString", which FleetCluster then refuses as no DNS label): the
 * constructs library keeps children in a plain object and its `in` test finds the prototype's
 * member, refusing the id as "already a Construct". "_" is in no DNS label, so the id cannot clash
 * with another cluster's.
 */
function clusterConstructId(name: string): string {
  return name in Object.prototype ? `${name}_` : name;
}

/**
 * repoPath prefixes every path Argo CD reads: each Application's source.path and the git files
 * generator's pattern, which Argo CD matches as a glob (`?`, `*` and `[` match other paths there, or
 * break the pattern). So its segments are plain names, as a cluster folder's are.
 */
function repoPathProblems(repoPath: string | undefined): string[] {
  const folder = (repoPath ?? '').replace(/\/+$/, '');
  if (folder === '') return [];
  return folderProblems(folder).map((p) => `repoPath: ${p}; Argo CD reads it as a path and, in the git files generator, as a glob where "?", "*" and "[" match `
    + 'other paths: give the folder of the output in the repository, e.g. "deploy/node-agents"');
}

/** The fleet's props, type-checked (with every cluster's options) before App's constructor reads them. */
function checkedFleetProps(props: AgentFleetProps): AgentFleetProps {
  // no construct yet: refused by its name, as a root AgentFleet's errors read
  checkStruct('AgentFleet', 'AgentFleetProps', props);
  return props;
}
