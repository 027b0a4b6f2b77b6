/**
 * What the Helm charts the library adopts render, in one place: each chart's name and version, how it
 * names its objects and labels its pods, its collector's tail-database default. Every fact is read
 * from the chart's templates and values.yaml at the version named (the chart's `_helpers.tpl`
 * `<chart>.fullname` / `<chart>.selectorLabels` / `<chart>.serviceAccountName`, `daemonset.yaml`,
 * the object templates listed in `leftBehind`). Pure: no cdk8s.
 */

/** An object a chart installs besides its DaemonSet: left behind when the release stops owning it. */
export interface ChartObjectFact {
  /** The object's kind. */
  readonly kind: string;
  /** Its name, from the chart's full name. */
  readonly name: string;
  /** Cluster-scoped (no namespace). */
  readonly clusterScoped: boolean;
  /** The chart value that must be set for the chart to render it (`key: value`), if any. */
  readonly onlyWhen?: string;
  /** What the adopting agent does with it. */
  readonly fate: string;
}

/** The facts of one chart version. */
export interface HelmChartFacts {
  /** `repository/chart`, as `helm install` names it. */
  readonly chart: string;
  /** The chart version the facts were read from. */
  readonly version: string;
  /** The version of the program it installs by default (`appVersion`). */
  readonly appVersion: string;
  /** `.Chart.Name`: the default of `nameOverride` and the selector's `app.kubernetes.io/name`. */
  readonly chartName: string;
  /** The container-log tail input's `DB` in the chart's default config; undefined: none. */
  readonly tailDb?: string;
  /** The container-log tail input's `Read_from_Head` (fluent-bit's default when unset). */
  readonly tailReadFromHead?: boolean;
  /** The DaemonSet's `spec.updateStrategy` as rendered with the default values (undefined: the API server's default, RollingUpdate maxUnavailable 1). */
  readonly updateStrategy?: string;
}

/** fluent/fluent-bit (charts/fluent-bit in fluent/helm-charts). */
export const FLUENT_BIT_CHART: HelmChartFacts = {
  chart: 'fluent/fluent-bit',
  version: '0.58.1',
  appVersion: '5.1.1',
  chartName: 'fluent-bit',
  // values.yaml config.inputs: the tail input has no DB key; fluent-bit's in_tail defaults read_from_head to false
  tailDb: undefined,
  tailReadFromHead: false,
  updateStrategy: undefined,
};

/** prometheus-community/prometheus-node-exporter (charts/prometheus-node-exporter in prometheus-community/helm-charts). */
export const NODE_EXPORTER_CHART: HelmChartFacts = {
  chart: 'prometheus-community/prometheus-node-exporter',
  version: '4.56.1',
  appVersion: '1.12.1',
  chartName: 'prometheus-node-exporter',
  updateStrategy: 'RollingUpdate, maxUnavailable 1',
};

/**
 * How a chart release's series get their `job` label: the Service label a ServiceMonitor's `jobLabel` names, and
 * its value. The prometheus-node-exporter chart's ServiceMonitor template sets
 * `jobLabel: {{ default "app.kubernetes.io/name" .Values.prometheus.monitor.jobLabel }}`.
 */
export interface ChartJobFacts {
  /** The umbrella chart whose values set it, `repository/chart version`, if any. */
  readonly umbrella?: string;
  /** `prometheus.monitor.jobLabel`: the Service (and pod) label the job is read from. */
  readonly jobLabelKey: string;
  /** That label's value (`service.labels.<key>`, `podLabels.<key>`): the series' `job`. */
  readonly job: string;
  /** Is the ServiceMonitor on by default (`prometheus.monitor.enabled`)? */
  readonly monitorEnabled: boolean;
}

/**
 * prometheus-community/kube-prometheus-stack's prometheus-node-exporter subchart (values.yaml
 * `prometheus-node-exporter:`): `podLabels.jobLabel` and `service.labels.jobLabel` are `node-exporter`,
 * `prometheus.monitor.jobLabel` is `jobLabel`, so the series carry `job="node-exporter"`, which the chart's node
 * recording rules, alerts and dashboards select (e.g. `instance:node_num_cpu:sum`).
 */
export const KUBE_PROMETHEUS_STACK_NODE_EXPORTER: ChartJobFacts = {
  umbrella: 'prometheus-community/kube-prometheus-stack 88.5.3',
  jobLabelKey: 'jobLabel',
  job: 'node-exporter',
  monitorEnabled: true,
};

/** A Helm release of one of the charts. */
export interface ChartRelease {
  readonly releaseName: string;
  readonly namespace: string;
  readonly nameOverride?: string;
  readonly fullnameOverride?: string;
}

/** `<chart>.name`: nameOverride or the chart name, at most 63 characters, no trailing "-". */
export function chartName(facts: HelmChartFacts, release: ChartRelease): string {
  return trunc63(release.nameOverride || facts.chartName);
}

/**
 * `<chart>.fullname` (both charts define it alike): fullnameOverride; else the release name when it
 * contains the name; else `<release>-<name>`; at most 63 characters, no trailing "-".
 */
export function chartFullname(facts: HelmChartFacts, release: ChartRelease): string {
  if (release.fullnameOverride) return trunc63(release.fullnameOverride);
  const name = release.nameOverride || facts.chartName;
  return trunc63(release.releaseName.includes(name) ? release.releaseName : `${release.releaseName}-${name}`);
}

/** `<chart>.selectorLabels`: the DaemonSet's immutable spec.selector.matchLabels. */
export function chartSelector(facts: HelmChartFacts, release: ChartRelease): { [key: string]: string } {
  return { 'app.kubernetes.io/instance': release.releaseName, 'app.kubernetes.io/name': chartName(facts, release) };
}

/** The objects each chart renders with its default values besides the DaemonSet, and what becomes of them. */
export function chartLeftBehind(facts: HelmChartFacts, release: ChartRelease): ChartObjectFact[] {
  const full = chartFullname(facts, release);
  const takenOver = 'taken over in place: the agent renders an object of the same kind and name';
  if (facts === FLUENT_BIT_CHART) {
    return [
      { kind: 'ServiceAccount', name: full, clusterScoped: false, fate: takenOver },
      { kind: 'ClusterRole', name: full, clusterScoped: true, fate: takenOver },
      { kind: 'ClusterRoleBinding', name: full, clusterScoped: true, fate: takenOver },
      { kind: 'ConfigMap', name: full, clusterScoped: false, fate: 'unused once every node runs the agent\'s pod (the agent\'s ConfigMap is named after its content); delete it after the switch' },
      { kind: 'Service', name: full, clusterScoped: false, fate: 'still selects the agent\'s pods (same selector labels); delete it after the switch unless something sends to it' },
      { kind: 'ServiceMonitor', name: full, clusterScoped: false, onlyWhen: 'serviceMonitor.enabled: true', fate: 'still scrapes the agent\'s pods through the chart\'s Service; delete it with the Service (the agent renders its own with `metrics`)' },
    ];
  }
  return [
    { kind: 'ServiceAccount', name: full, clusterScoped: false, fate: takenOver },
    { kind: 'Service', name: full, clusterScoped: false, fate: `${takenOver}; it keeps its cluster IP (spec.clusterIP is immutable, so it is not made headless)` },
    { kind: 'ServiceMonitor', name: full, clusterScoped: false, onlyWhen: 'prometheus.monitor.enabled: true', fate: 'taken over in place when the exporter renders a ServiceMonitor (`metrics`), else delete it after the switch' },
    { kind: 'ClusterRole', name: full, clusterScoped: true, onlyWhen: 'kubeRBACProxy.enabled: true', fate: 'unused by the agent (no kube-rbac-proxy); delete it after the switch' },
    { kind: 'ClusterRoleBinding', name: full, clusterScoped: true, onlyWhen: 'kubeRBACProxy.enabled: true', fate: 'unused by the agent; delete it after the switch' },
  ];
}

function trunc63(s: string): string {
  return s.substring(0, 63).replace(/-+$/, '');
}
