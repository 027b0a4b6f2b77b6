/**
 * Synthetic fleets for `node-agents size`: nodes with labels, one log collector pod per node whose memory grows
 * with the pods on the node, optional OOM kills; written as the saved query_range answers (`--series`) or as
 * OpenMetrics for `promtool tsdb create-blocks-from openmetrics`.
 */
export interface FleetNode {
  readonly name: string;
  readonly labels: Record<string, string>;
  /** working set of the collector, bytes (a daily sine ±10% around it) */
  readonly memory: number;
  /** CPU cores */
  readonly cpu: number;
  /** OOM kills at these sample indexes */
  readonly oomAt?: readonly number[];
}

export interface FleetOptions {
  readonly nodes: readonly FleetNode[];
  /** Unix seconds of the first sample */
  readonly start: number;
  readonly samples: number;
  readonly stepSeconds: number;
  readonly namespace?: string;
  readonly container?: string;
}

export const MIB = 1024 * 1024;

type Sample = [number, string];

function pod(n: FleetNode): string {
  return `collector-${n.name.replace(/[^a-z0-9]/g, '')}`;
}

/** Every series of the fleet, by query name, as (metric, samples). */
export function fleetSeries(o: FleetOptions): Record<string, { metric: Record<string, string>; values: Sample[] }[]> {
  const namespace = o.namespace ?? 'logging';
  const container = o.container ?? 'fluent-bit';
  const times = Array.from({ length: o.samples }, (_, i) => o.start + i * o.stepSeconds);
  const constant = (v: number): Sample[] => times.map((t) => [t, String(v)]);
  const out: Record<string, { metric: Record<string, string>; values: Sample[] }[]> = {
    pods: [], nodes: [], memory: [], cpu: [], oom: [], restarts: [],
  };
  for (const n of o.nodes) {
    const id = { namespace, pod: pod(n), container };
    out.pods.push({ metric: { namespace, pod: pod(n), node: n.name }, values: constant(1) });
    const nodeLabels: Record<string, string> = { node: n.name };
    for (const [k, v] of Object.entries(n.labels)) nodeLabels[`label_${k.replace(/[^a-zA-Z0-9_]/g, '_')}`] = v;
    out.nodes.push({ metric: nodeLabels, values: constant(1) });
    out.memory.push({ metric: id, values: times.map((t, i) => [t, String(Math.round(n.memory * (1 + 0.1 * Math.sin(i / 37))))]) });
    out.cpu.push({ metric: id, values: times.map((t, i) => [t, (n.cpu * (1 + 0.2 * Math.sin(i / 11))).toFixed(4)]) });
    let restarts = 0;
    const kills = new Set(n.oomAt ?? []);
    out.restarts.push({ metric: id, values: times.map((t, i) => { if (kills.has(i)) restarts++; return [t, String(restarts)]; }) });
    if (kills.size > 0) {
      const first = Math.min(...kills);
      out.oom.push({ metric: id, values: times.map((t, i) => [t, i >= first ? '1' : '0']) });
    }
  }
  return out;
}

/** The saved file `--series` reads: each query's answer as Prometheus returns it. */
export function savedAnswers(o: FleetOptions): Record<string, unknown> {
  const series = fleetSeries(o);
  return Object.fromEntries(Object.entries(series).map(([name, result]) => [name, { status: 'success', data: { resultType: 'matrix', result } }]));
}

/** The same fleet as raw metrics in OpenMetrics text (what promtool turns into TSDB blocks). */
export function openMetrics(o: FleetOptions): string {
  const namespace = o.namespace ?? 'logging';
  const container = o.container ?? 'fluent-bit';
  const esc = (v: string) => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  const lines: Record<string, string[]> = {
    kube_pod_info: [],
    kube_node_labels: [],
    container_memory_working_set_bytes: [],
    container_cpu_usage_seconds_total: [],
    kube_pod_container_status_last_terminated_reason: [],
    kube_pod_container_status_restarts_total: [],
  };
  const types: Record<string, string> = { container_cpu_usage_seconds_total: 'counter' };
  for (const n of o.nodes) {
    const id = `namespace="${namespace}",pod="${pod(n)}",container="${container}"`;
    const nodeLabels = Object.entries(n.labels).map(([k, v]) => `,label_${k.replace(/[^a-zA-Z0-9_]/g, '_')}="${esc(v)}"`).join('');
    const kills = new Set(n.oomAt ?? []);
    const first = kills.size > 0 ? Math.min(...kills) : Infinity;
    let cpuTotal = 0;
    let restarts = 0;
    for (let i = 0; i < o.samples; i++) {
      const t = o.start + i * o.stepSeconds;
      cpuTotal += n.cpu * (1 + 0.2 * Math.sin(i / 11)) * o.stepSeconds;
      if (kills.has(i)) restarts++;
      lines.kube_pod_info.push(`kube_pod_info{namespace="${namespace}",pod="${pod(n)}",node="${n.name}",created_by_kind="DaemonSet"} 1 ${t}`);
      lines.kube_node_labels.push(`kube_node_labels{node="${n.name}"${nodeLabels}} 1 ${t}`);
      lines.container_memory_working_set_bytes.push(`container_memory_working_set_bytes{${id}} ${Math.round(n.memory * (1 + 0.1 * Math.sin(i / 37)))} ${t}`);
      lines.container_cpu_usage_seconds_total.push(`container_cpu_usage_seconds_total{${id}} ${cpuTotal.toFixed(3)} ${t}`);
      lines.kube_pod_container_status_restarts_total.push(`kube_pod_container_status_restarts_total{${id}} ${restarts} ${t}`);
      if (i >= first) lines.kube_pod_container_status_last_terminated_reason.push(`kube_pod_container_status_last_terminated_reason{${id},reason="OOMKilled"} 1 ${t}`);
    }
  }
  let text = '';
  for (const [name, samples] of Object.entries(lines)) {
    if (samples.length === 0) continue;
    const family = types[name] === 'counter' ? name.replace(/_total$/, '') : name;
    text += `# TYPE ${family} ${types[name] ?? 'unknown'}\n${samples.join('\n')}\n`;
  }
  return `${text}# EOF\n`;
}

/** A node inventory (`kubectl get nodes -o json`) of the fleet. */
export function inventoryOf(nodes: readonly FleetNode[], allocatableMemory = '16Gi'): unknown {
  return { apiVersion: 'v1', kind: 'List', items: nodes.map((n) => ({ metadata: { name: n.name, labels: n.labels }, status: { allocatable: { cpu: '4', memory: allocatableMemory, pods: '110' } } })) };
}

const CPU = 'karpenter.k8s.aws/instance-cpu';
const POOL = 'karpenter.sh/nodepool';
const TYPE = 'node.kubernetes.io/instance-type';
/** cpu → [nodes, collector memory MiB]: memory grows with the pods a bigger node runs */
const SIZES: [number, number, number][] = [[4, 4, 300], [8, 4, 330], [16, 4, 700], [32, 4, 1400], [48, 3, 1500], [96, 1, 3000]];
const TYPES: Record<number, string> = { 4: 'm7i.xlarge', 8: 'm7i.2xlarge', 16: 'm7i.4xlarge', 32: 'm7i.8xlarge', 48: 'm7i.12xlarge', 96: 'm7i.24xlarge' };

/**
 * The fleet of docs/cli-size.md's worked example: 20 nodes, the general pool mixing 4, 8 and 16 vCPUs, the 48 vCPU
 * nodes' collector OOM-killed three times on one node, a single 96 vCPU node (too thin).
 */
export function exampleFleet(): FleetNode[] {
  const nodes: FleetNode[] = [];
  for (const [cpu, count, memory] of SIZES) {
    for (let i = 0; i < count; i++) {
      nodes.push({
        name: `node-${cpu}-${i}`,
        labels: { [CPU]: String(cpu), [POOL]: cpu <= 16 ? 'general' : 'large', [TYPE]: TYPES[cpu] },
        memory: memory * MIB,
        cpu: cpu <= 8 ? 0.1 : cpu / 200,
        oomAt: cpu === 48 && i === 0 ? [100, 400, 700] : undefined,
      });
    }
  }
  return nodes;
}

/** The example's window: 3 days at a 5-minute step, from a whole day. */
export const EXAMPLE_WINDOW = { start: 1_760_000_000 - (1_760_000_000 % 86400), samples: 864, stepSeconds: 300 };

/** The manifests running today in the example: one DaemonSet, 100m/512Mi, limit 1Gi. */
export const EXAMPLE_TREE = [
  'apiVersion: apps/v1', 'kind: DaemonSet', 'metadata: { name: fluent-bit, namespace: logging }',
  'spec:', '  selector: { matchLabels: { app: fb } }', '  template:', '    metadata: { labels: { app: fb } }', '    spec:',
  '      containers:', '      - name: fluent-bit', '        image: fluent/fluent-bit:3.0',
  '        resources: { requests: { cpu: 100m, memory: 512Mi }, limits: { memory: 1Gi } }', '',
].join('\n');
