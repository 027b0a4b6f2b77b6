/**
 * Joins the series of `size`'s queries into one usage state per agent and node group: pods to their node
 * (kube_pod_info), nodes to their labels (the inventory, else kube_node_labels), usage to its pod. One pass over
 * the series in QUERY_NAMES order; the state kept is per container (a memory peak per day) and per group (fixed-size
 * histograms), so time and memory are linear in the samples read.
 */
import { oomBump, UsageState, VPA } from './recommender';
import { Series } from './series';

/** Namespace and container names as the API server takes them: the agent's name is printed in code and comments. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** A node group: the value of the grouping label on the node, '' when the node lacks it. */
export const ABSENT = '';

/** The container a usage series belongs to: the agent (namespace/container) and its group. */
interface ContainerState {
  readonly agent: string;
  readonly group: string;
  readonly state: UsageState;
  /** per day (Unix day number): the day's memory peak and its time (ms) */
  readonly peaks: Map<number, { bytes: number; timeMs: number }>;
  /** sample times (s) at which the last termination reason was OOMKilled */
  oomTimes?: Set<number>;
}

export interface IngestOptions {
  /** the node label the groups are made of */
  readonly groupKey: string;
  /** node name → labels, from the inventory; when absent, kube_node_labels is read */
  readonly inventory?: ReadonlyMap<string, Readonly<Record<string, string>>>;
}

/** kube-state-metrics' name of a node label: `label_` and the key with every character outside [a-zA-Z0-9_] as `_`. */
export function kubeStateLabel(key: string): string {
  return `label_${key.replace(/[^a-zA-Z0-9_]/g, '_')}`;
}

export class SizeIngest {
  /** namespace/pod → node */
  private readonly podNode = new Map<string, string>();
  /** node → group value (from kube_node_labels) */
  private readonly nodeGroup = new Map<string, string>();
  private readonly containers = new Map<string, ContainerState>();
  /** agent → group value → state */
  readonly states = new Map<string, Map<string, UsageState>>();
  /** agent → group value → pods seen */
  readonly pods = new Map<string, Map<string, Set<string>>>();
  /** series whose pod is not a DaemonSet pod kube_pod_info named, or whose node has no labels */
  unjoined = 0;
  samplesRead = 0;
  stepSeconds = 60;

  constructor(private readonly options: IngestOptions) {}

  podsSeries(series: readonly Series[]): void {
    for (const s of series) {
      const { namespace, pod, node } = s.metric;
      if (namespace && pod && node) this.podNode.set(`${namespace}/${pod}`, node);
    }
  }

  nodesSeries(series: readonly Series[]): void {
    const label = kubeStateLabel(this.options.groupKey);
    for (const s of series) {
      if (s.metric.node) this.nodeGroup.set(s.metric.node, s.metric[label] ?? ABSENT);
    }
  }

  private groupOfNode(node: string): string | undefined {
    const inventory = this.options.inventory;
    if (inventory !== undefined) {
      const labels = inventory.get(node);
      return labels === undefined ? undefined : labels[this.options.groupKey] ?? ABSENT;
    }
    return this.nodeGroup.get(node);
  }

  /** The container's state, made on first sight; undefined when its pod or node is unknown. */
  private container(metric: Readonly<Record<string, string>>): ContainerState | undefined {
    const { namespace, pod, container } = metric;
    if (!namespace || !pod || !container || !DNS_LABEL.test(namespace) || !DNS_LABEL.test(container)) return undefined;
    const key = `${namespace}/${pod}/${container}`;
    const known = this.containers.get(key);
    if (known !== undefined) return known;
    const node = this.podNode.get(`${namespace}/${pod}`);
    const group = node === undefined ? undefined : this.groupOfNode(node);
    if (group === undefined) return undefined;
    const agent = `${namespace}/${container}`;
    const byGroup = this.states.get(agent) ?? this.states.set(agent, new Map()).get(agent)!;
    const state = byGroup.get(group) ?? byGroup.set(group, new UsageState()).get(group)!;
    const podsByGroup = this.pods.get(agent) ?? this.pods.set(agent, new Map()).get(agent)!;
    (podsByGroup.get(group) ?? podsByGroup.set(group, new Set()).get(group)!).add(`${namespace}/${pod}`);
    const made: ContainerState = { agent, group, state, peaks: new Map() };
    this.containers.set(key, made);
    return made;
  }

  /** Working-set samples: each day's peak per container (VPA's memory aggregation interval). */
  memorySeries(series: readonly Series[]): void {
    for (const s of series) {
      this.samplesRead += s.times.length;
      const c = this.container(s.metric);
      if (c === undefined) { this.unjoined++; continue; }
      let day = Number.NaN;
      let peak: { bytes: number; timeMs: number } | undefined;
      for (let i = 0; i < s.times.length; i++) {
        const timeMs = s.times[i] * 1000;
        const d = Math.floor(timeMs / VPA.memoryAggregationIntervalMs);
        if (d !== day) { // the times increase: the map is read once a day, not once a sample
          day = d;
          peak = c.peaks.get(day) ?? c.peaks.set(day, { bytes: s.values[i], timeMs }).get(day)!;
        }
        if (s.values[i] > peak!.bytes) {
          peak!.bytes = s.values[i];
          peak!.timeMs = timeMs;
        }
      }
    }
  }

  /** CPU usage samples (cores), straight into the group's histogram; each stands for one step. */
  cpuSeries(series: readonly Series[]): void {
    const minutes = this.stepSeconds / 60;
    for (const s of series) {
      this.samplesRead += s.times.length;
      const c = this.container(s.metric);
      if (c === undefined) { this.unjoined++; continue; }
      for (let i = 0; i < s.times.length; i++) c.state.addCpu(s.values[i], s.times[i] * 1000, minutes);
    }
  }

  /** The times the last termination reason reads OOMKilled (value 1). */
  oomSeries(series: readonly Series[]): void {
    for (const s of series) {
      this.samplesRead += s.times.length;
      const c = this.container(s.metric);
      if (c === undefined) { this.unjoined++; continue; }
      for (let i = 0; i < s.times.length; i++) if (s.values[i] >= 1) (c.oomTimes ??= new Set()).add(s.times[i]);
    }
  }

  /** Restart counts: each rise is a restart; one where the last reason reads OOMKilled is an OOM kill. */
  restartsSeries(series: readonly Series[]): void {
    for (const s of series) {
      this.samplesRead += s.times.length;
      const c = this.container(s.metric);
      if (c === undefined) { this.unjoined++; continue; }
      for (let i = 1; i < s.times.length; i++) {
        const rise = s.values[i] - s.values[i - 1];
        if (rise <= 0) continue;
        c.state.restarts += rise;
        if (c.oomTimes?.has(s.times[i])) this.recordOom(c, s.times[i] * 1000);
      }
    }
  }

  /** RecordOOM: the day's peak becomes what the container needed (the request is not known here). */
  private recordOom(c: ContainerState, timeMs: number): void {
    const day = Math.floor(timeMs / VPA.memoryAggregationIntervalMs);
    const used = c.peaks.get(day)?.bytes ?? 0;
    const needed = oomBump(used);
    c.peaks.set(day, { bytes: Math.max(used, needed), timeMs });
    c.state.ooms++;
    c.state.oomMemory = Math.max(c.state.oomMemory, used);
  }

  /** Adds every container's daily peaks to its group: call once, after every series is read. */
  finish(): void {
    for (const c of this.containers.values()) {
      for (const peak of c.peaks.values()) c.state.addMemoryPeak(peak.bytes, peak.timeMs);
      c.peaks.clear();
    }
  }
}
