/**
 * Taking over a running DaemonSet in place: the agent renders the DaemonSet under its existing name,
 * namespace and (immutable) selector, so applying it is an ordinary rolling update of that object at the
 * agent's pace: each node's pod is replaced once, never two on a node, never a node without one.
 * The chart facts behind the factories are in ./charts.ts.
 */
import {
  ChartJobFacts, ChartObjectFact, chartFullname, chartLeftBehind, chartName, ChartRelease, chartSelector, FLUENT_BIT_CHART, HelmChartFacts,
  KUBE_PROMETHEUS_STACK_NODE_EXPORTER, NODE_EXPORTER_CHART,
} from './charts';
import { brand } from '../validation/brand';
import { ValidationError } from '../validation/errors';
import { checkArgs } from '../validation/struct-check';

/** A running DaemonSet to adopt, described by hand. */
export interface AdoptedDaemonSetOptions {
  /** The DaemonSet's name. */
  readonly name: string;
  /** Its namespace. */
  readonly namespace: string;
  /**
   * Its `spec.selector.matchLabels`, exactly as the cluster has them (`kubectl get ds NAME -o jsonpath='{.spec.selector}'`).
   * A selector with `matchExpressions` cannot be adopted.
   */
  readonly selector: { [key: string]: string };
  /**
   * The switch is done: every node runs the agent's pod. Agents that keep state on the node use it (the log
   * collector reads files without an offset from their start again).
   * @default false
   */
  readonly completed?: boolean;
}

/** A Helm release of a chart the library knows. */
export interface HelmReleaseAdoptionOptions {
  /** The release's namespace (`helm install -n`). */
  readonly namespace: string;
  /**
   * The release name (`helm install NAME`).
   * @default - the chart's name ("fluent-bit", "prometheus-node-exporter")
   */
  readonly releaseName?: string;
  /**
   * The release's `nameOverride` value.
   * @default - none
   */
  readonly nameOverride?: string;
  /**
   * The release's `fullnameOverride` value.
   * @default - none
   */
  readonly fullnameOverride?: string;
  /**
   * The switch is done: every node runs the agent's pod (see `AdoptedDaemonSetOptions.completed`).
   * @default false
   */
  readonly completed?: boolean;
}

/** A release of the prometheus-node-exporter chart: on its own, or as kube-prometheus-stack's subchart. */
export interface NodeExporterChartAdoptionOptions extends HelmReleaseAdoptionOptions {
  /**
   * The exporter is kube-prometheus-stack's `prometheus-node-exporter` subchart, and `releaseName` is the
   * kube-prometheus-stack release's name. Its values label the exporter's Service and pods `jobLabel: node-exporter`
   * and set `prometheus.monitor.jobLabel: jobLabel`, so its series carry `job="node-exporter"`, which the stack's node
   * recording rules, alerts and dashboards select. The adopting exporter keeps that job: its Service and pods carry
   * the same label and its ServiceMonitor or PodMonitor reads the job from it.
   * @default false
   */
  readonly kubePrometheusStack?: boolean;
  /**
   * The `job` the adopted install's series carry, when its values set one through `prometheus.monitor.jobLabel`
   * (the value of the Service label it names). The adopting exporter keeps it the same way.
   * @default - "node-exporter" with `kubePrometheusStack`, else the chart's default: the `app.kubernetes.io/name` label, which the adopting exporter keeps
   */
  readonly job?: string;
}

/** An object the adopted install leaves in the cluster besides its DaemonSet. */
export interface AdoptionLeftover {
  /** The object's kind. */
  readonly kind: string;
  /** Its name. */
  readonly name: string;
  /** Its namespace; undefined for cluster-scoped objects. */
  readonly namespace?: string;
  /** The chart value that must be set for the chart to have rendered it, if any. */
  readonly onlyWhen?: string;
  /** What becomes of it. */
  readonly fate: string;
}

/**
 * A running DaemonSet the agent takes over in place (prop `adopt`). Create one with the static factories.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/adopting-helm.md
 */
export class AgentAdoption {
  /** A DaemonSet described by its name, namespace and selector. */
  public static daemonSet(options: AdoptedDaemonSetOptions): AgentAdoption {
    checkArgs('AgentAdoption.daemonSet', [options]);
    return new AgentAdoption(options.name, options.namespace, { ...options.selector }, options.completed ?? false, undefined, []);
  }

  /**
   * The DaemonSet of a `fluent/fluent-bit` chart release (chart 0.58.x, `kind: DaemonSet`): named after the
   * chart's full name, selector `app.kubernetes.io/name: fluent-bit` (or nameOverride) and
   * `app.kubernetes.io/instance: <release>`; ServiceAccount, ClusterRole and ClusterRoleBinding named after the
   * full name too, which the collector takes over. The chart's default tail input has no DB.
   */
  public static fluentBitChart(options: HelmReleaseAdoptionOptions): AgentAdoption {
    checkArgs('AgentAdoption.fluentBitChart', [options]);
    return AgentAdoption.fromChart(FLUENT_BIT_CHART, options);
  }

  /**
   * The DaemonSet of a `prometheus-community/prometheus-node-exporter` chart release (chart 4.56.x): named after
   * the chart's full name, selector `app.kubernetes.io/name: prometheus-node-exporter` (or nameOverride) and
   * `app.kubernetes.io/instance: <release>`; its ServiceAccount named after the full name too.
   */
  public static nodeExporterChart(options: NodeExporterChartAdoptionOptions): AgentAdoption {
    checkArgs('AgentAdoption.nodeExporterChart', [options]);
    return AgentAdoption.fromChart(NODE_EXPORTER_CHART, options, exporterJob(options));
  }

  private static fromChart(facts: HelmChartFacts, options: HelmReleaseAdoptionOptions, job?: ChartJobFacts): AgentAdoption {
    const release: ChartRelease = {
      releaseName: options.releaseName ?? facts.chartName,
      namespace: options.namespace,
      nameOverride: options.nameOverride,
      fullnameOverride: options.fullnameOverride,
    };
    const leftovers = chartLeftBehind(facts, release).map((o: ChartObjectFact): AdoptionLeftover => ({
      kind: o.kind, name: o.name, namespace: o.clusterScoped ? undefined : release.namespace, onlyWhen: o.onlyWhen, fate: o.fate,
    })).map((o) => (job ? withJob(o, job) : o));
    const chart = job?.umbrella ? `${facts.chart} ${facts.version} (subchart of ${job.umbrella})` : `${facts.chart} ${facts.version}`;
    return new AgentAdoption(chartFullname(facts, release), release.namespace, chartSelector(facts, release), options.completed ?? false,
      chart, leftovers, facts, { job: job?.job ?? chartName(facts, release), key: job?.jobLabelKey });
  }

  /** The adopted DaemonSet's name: the agent's name. */
  public readonly daemonSetName: string;
  /** Its namespace: the agent's namespace. */
  public readonly namespace: string;
  /** Its selector (matchLabels): the fleet DaemonSet's selector for good. */
  public readonly selector: { [key: string]: string };
  /** The switch is done (every node runs the agent's pod). */
  public readonly completed: boolean;
  /** The chart and version the facts come from, for a chart release. */
  public readonly chart?: string;
  /** Objects the install leaves besides the DaemonSet, and what becomes of them. */
  public readonly leftovers: AdoptionLeftover[];
  /**
   * The `job` label the adopted install's series carry, which the agent's ServiceMonitor or PodMonitor keeps;
   * undefined for a DaemonSet described by hand.
   */
  public readonly job?: string;
  /**
   * The Service and pod label the job is read from (a ServiceMonitor's `jobLabel`); undefined: `app.kubernetes.io/name`.
   */
  public readonly jobLabelKey?: string;
  /** @internal */
  public readonly _chartFacts?: HelmChartFacts;

  private constructor(name: string, namespace: string, selector: { [key: string]: string }, completed: boolean, chart: string | undefined,
    leftovers: AdoptionLeftover[], facts?: HelmChartFacts, job?: { job: string; key?: string }) {
    this.daemonSetName = name;
    this.namespace = namespace;
    this.selector = Object.fromEntries(Object.entries(selector).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    this.completed = completed;
    this.chart = chart;
    this.leftovers = leftovers;
    this._chartFacts = facts;
    this.job = job?.job;
    this.jobLabelKey = job?.key;
  }

  /** Is this the adoption of a fluent/fluent-bit chart release? */
  public get isFluentBitChart(): boolean {
    return this._chartFacts === FLUENT_BIT_CHART;
  }

  /** What a construct's props must hold for this adoption: problems, each naming the prop and the fix. */
  public problems(name: string | undefined, namespace: string | undefined): string[] {
    const problems: string[] = [];
    if (name !== undefined && name !== this.daemonSetName) {
      problems.push(`name "${name}" differs from the adopted DaemonSet "${this.daemonSetName}": the agent's name is the DaemonSet's name; remove name or set it to "${this.daemonSetName}"`);
    }
    if (namespace !== undefined && namespace !== this.namespace) {
      problems.push(`namespace "${namespace}" differs from the adopted DaemonSet's namespace "${this.namespace}"; remove namespace or set it to "${this.namespace}"`);
    }
    if (Object.keys(this.selector).length === 0) {
      problems.push('adopt: the selector is empty; give the DaemonSet\'s spec.selector.matchLabels');
    }
    for (const [key, value] of Object.entries(this.selector)) {
      if (key.startsWith('node-agents.cdk8s.io/')) {
        problems.push(`adopt: selector label ${key} is the library's own; give the adopted DaemonSet's selector as the cluster has it`);
      }
      if (!/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(value) || value.length > 63) {
        problems.push(`adopt: selector value ${JSON.stringify(value)} of ${key} is not a label value (at most 63 characters: letters, digits, '-', '_', '.')`);
      }
    }
    return problems;
  }
}
brand(AgentAdoption, 'AgentAdoption');

/** The job facts of a node-exporter release: kube-prometheus-stack's, a job given, or none (the chart's default). */
function exporterJob(options: NodeExporterChartAdoptionOptions): ChartJobFacts | undefined {
  const kps = options.kubePrometheusStack ?? false;
  if (kps && options.releaseName === undefined) {
    throw new ValidationError('AgentAdoption.nodeExporterChart', 'kubePrometheusStack: releaseName is unset; give the kube-prometheus-stack release\'s name (`helm list -A`), which names the subchart\'s objects');
  }
  if (options.job !== undefined && !/^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/.test(options.job)) {
    throw new ValidationError('AgentAdoption.nodeExporterChart', `job ${JSON.stringify(options.job)} is not a label value (at most 63 characters: letters, digits, '-', '_', '.'); give the value of the Service label prometheus.monitor.jobLabel names`);
  }
  if (kps) return { ...KUBE_PROMETHEUS_STACK_NODE_EXPORTER, job: options.job ?? KUBE_PROMETHEUS_STACK_NODE_EXPORTER.job };
  if (options.job !== undefined) return { jobLabelKey: KUBE_PROMETHEUS_STACK_NODE_EXPORTER.jobLabelKey, job: options.job, monitorEnabled: false };
  return undefined;
}

/** A leftover of a release whose job the adopting exporter keeps: its ServiceMonitor says so. */
function withJob(o: AdoptionLeftover, job: ChartJobFacts): AdoptionLeftover {
  if (o.kind === 'ServiceMonitor') {
    return {
      ...o,
      onlyWhen: job.monitorEnabled ? undefined : o.onlyWhen,
      fate: `${o.fate}; the Service keeps its label ${job.jobLabelKey}: ${job.job}, so the series keep job="${job.job}"`,
    };
  }
  if (o.kind === 'Service') return { ...o, fate: `${o.fate}; it keeps its label ${job.jobLabelKey}: ${job.job} (the job of the series)` };
  return o;
}
