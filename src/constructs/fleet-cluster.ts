import { Chart, ChartProps } from 'cdk8s';
import { Construct } from 'constructs';
import { Promotion } from '../agent/rollout';
import { defaultClusterFolder, folderProblems } from '../fleet/names';
import { clusterPromotion, DEFAULT_CLUSTER_WAVE, DEFAULT_CLUSTER_WAVES, FleetStageSpec, stageProblems } from '../fleet/waves';
import { brand } from '../validation/brand';
import { throwIfProblems, ValidationError } from '../validation/errors';
import { registerKind } from '../validation/owner';
import { checkArgs, checkStruct } from '../validation/struct-check';
import { checkDnsLabel, checkLabelValue } from '../validation/values';

/**
 * The key of the property that marks a construct as one cluster's scope: cross-agent checks (two
 * agents binding one host port) compare only agents under the same cluster scope.
 */
export const CLUSTER_SCOPE_KEY = Symbol.for('cdk8s-node-agents.cluster-scope');

/** One cluster of a fleet, as the fleet's clusters list gives it. */
export interface FleetClusterOptions {
  /** The cluster's name: a DNS-1123 label, unique in the fleet; its folder and Application name derive from it. */
  readonly name: string;

  /** The environment (e.g. `dev`, `staging`, `prod`): a label value on the cluster's Application. */
  readonly environment: string;

  /** The region (e.g. `eu-west-1`): a label value on the cluster's Application. */
  readonly region: string;

  /**
   * The cluster wave: the cluster's Application syncs in this wave's RollingSync step.
   * @default "rest"
   */
  readonly wave?: string;

  /**
   * Whether the cluster has GPU node pools (the agents may add a GPU driver only there).
   * @default false
   */
  readonly hasGpus?: boolean;

  /**
   * Per-cluster settings the fleet's agents read (e.g. a log endpoint), by key.
   * @default - none
   */
  readonly settings?: { [key: string]: string };

  /**
   * The folder of the cluster's manifests, relative to the fleet's output directory.
   * @default "clusters/<name>"
   */
  readonly folder?: string;

  /**
   * The cluster's name as registered in Argo CD (the Application's `destination.name`).
   * @default - the cluster's name
   */
  readonly argoCdName?: string;
}

/** Props of a FleetCluster. */
export interface FleetClusterProps extends FleetClusterOptions {
  /**
   * The fleet's cluster waves in order, for `promotion()`.
   * @default ["canary", "early", "rest"]
   */
  readonly clusterWaveOrder?: string[];

  /**
   * Namespace of the cluster's charts (objects without one get it).
   * @default "kube-system"
   */
  readonly namespace?: string;
}

/** How far a new agent version has got across the fleet: one commit per stage. */
export class FleetStage {
  /** Every cluster runs the new version on every node. */
  public static all(): FleetStage {
    return new FleetStage({ kind: 'all' });
  }

  /** No cluster runs the new version yet. */
  public static none(): FleetStage {
    return new FleetStage({ kind: 'none' });
  }

  /**
   * The clusters of every cluster wave before `clusterWave` run the new version everywhere; those in
   * `clusterWave` run it through node group `nodeGroup` (a node wave's name, or `fleet` for all
   * their nodes); later cluster waves run the previous version.
   */
  public static through(clusterWave: string, nodeGroup: string): FleetStage {
    checkArgs('FleetStage.through', [clusterWave, nodeGroup]);
    return new FleetStage({ kind: 'through', clusterWave, nodeGroup });
  }

  private constructor(private readonly spec: FleetStageSpec) {}

  /** @internal */
  public _spec(): FleetStageSpec {
    return this.spec;
  }
}
brand(FleetStage, 'FleetStage');

/**
 * One cluster of a fleet: the scope of its charts, synthesized to the cluster's own folder. Agents
 * in different clusters never share a node, so cross-agent checks stop at this scope.
 */
export class FleetCluster extends Construct {
  /** The cluster's name. */
  public readonly clusterName: string;
  /** Its environment. */
  public readonly environment: string;
  /** Its region. */
  public readonly region: string;
  /** Its cluster wave. */
  public readonly wave: string;
  /** Whether it has GPU node pools. */
  public readonly hasGpus: boolean;
  /** Its settings. */
  public readonly settings: { [key: string]: string };
  /** The folder of its manifests, relative to the fleet's output directory. */
  public readonly folder: string;
  /** Its name in Argo CD. */
  public readonly argoCdName: string;
  /** Namespace of its charts. */
  public readonly namespace: string;
  /** The chart the fleet's agents are added to. */
  public readonly chart: Chart;

  private readonly clusterWaveOrder: string[];

  public constructor(scope: Construct, id: string, props: FleetClusterProps) {
    super(scope, id);
    registerKind(this, 'FleetCluster', true);
    Object.defineProperty(this, CLUSTER_SCOPE_KEY, { value: true });
    checkStruct(this, 'FleetClusterProps', props);
    this.clusterName = props.name;
    this.environment = props.environment;
    this.region = props.region;
    this.wave = props.wave ?? DEFAULT_CLUSTER_WAVE;
    this.hasGpus = props.hasGpus ?? false;
    this.settings = { ...props.settings };
    this.folder = props.folder ?? defaultClusterFolder(props.name);
    this.argoCdName = props.argoCdName ?? props.name;
    this.namespace = props.namespace ?? 'kube-system';
    this.clusterWaveOrder = props.clusterWaveOrder ?? DEFAULT_CLUSTER_WAVES.map((w) => w.name);
    const problems = [
      ...checkDnsLabel('name', props.name),
      ...checkLabelValue('environment', this.environment),
      ...checkLabelValue('region', this.region),
      ...checkDnsLabel('wave', this.wave),
      ...folderProblems(this.folder).map((p) => `folder: ${p}`),
      ...checkDnsLabel('namespace', this.namespace),
    ];
    throwIfProblems(this, problems, { heading: 'invalid props' });
    this.chart = this.addChart('node-agents');
  }

  /**
   * A chart of this cluster, written to `<folder>/<id>.k8s.yaml`.
   * @param id a DNS-1123 label, the file's name
   */
  public addChart(id: string, props: ChartProps = {}): Chart {
    // "constructor" is an id the constructs library takes for an existing child (its children are a plain object).
    const problems = [...checkDnsLabel('chart id', id), ...(id in Object.prototype ? [`chart id "${id}" is a name the constructs library cannot hold; choose another`] : [])];
    if (problems.length > 0) throw new ValidationError(this, `${problems.join('; ')}: it names the chart's file`);
    return new Chart(this, id, { namespace: this.namespace, ...props });
  }

  /** A setting of this cluster, or `fallback` when the cluster has none. */
  public setting(key: string, fallback: string): string {
    // Own keys only: "constructor" must not find Object's.
    return Object.prototype.hasOwnProperty.call(this.settings, key) ? this.settings[key] : fallback;
  }

  /** The rollout promotion this cluster's agents use at a fleet stage (see FleetStage.through). */
  public promotion(stage: FleetStage): Promotion {
    checkArgs('FleetCluster.promotion', [stage], this);
    throwIfProblems(this, stageProblems(stage._spec(), this.clusterWaveOrder), { at: 'promotion' });
    const p = clusterPromotion(stage._spec(), this.clusterWaveOrder, this.wave);
    if (p.kind === 'all') return Promotion.all();
    if (p.kind === 'none') return Promotion.none();
    return Promotion.through(p.nodeGroup);
  }
}
brand(FleetCluster, 'FleetCluster');

