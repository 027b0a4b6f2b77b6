/**
 * One realistic chart through App.synth(): a log collector, node-exporter and a GPU driver, each
 * with three rollout waves (so four DaemonSets each), against the same kind of objects written by
 * hand with cdk8s-plus-28 (a DaemonSet per wave and agent with its container, host paths,
 * tolerations and node affinity; ServiceAccounts, the collector's ConfigMap and RBAC, the
 * exporter's Service and ServiceMonitor). A benchmark that prints figures, not a test.
 * Goal: library ≤ 1.3× the hand-written chart.
 *
 *   npm run bench -- chart          (BENCH_RUNS, default 15 pairs)
 *
 * The hand-written side has fewer checks and fewer objects than the library writes (no
 * PrometheusRule, PriorityClass quota or per-wave ConfigMap naming): the object counts are printed
 * beside the times. Each timed run follows an untimed run of its own kind; library and hand-written
 * runs alternate, and the ratio is the median of the pair-by-pair ratios.
 */
import * as fs from 'fs';
import { performance } from 'perf_hooks';
import { ApiObject, App, Chart, Duration, Size, YamlOutputType } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import {
  FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeExporterDaemonSet, Promotion, RolloutWave,
} from '../src';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const WAVES = ['canary', 'wave-1', 'wave-2'];
const OUT = '.tmp/bench-chart';

function libraryApp(): App {
  const app = new App({ outdir: `${OUT}/library`, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const chart = new Chart(app, 'agents');
  const rollout = { waves: WAVES.map((w) => RolloutWave.labelled(w)), promoted: Promotion.all() };
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', port: 80 })], rollout });
  new NodeExporterDaemonSet(chart, 'metrics', { namespace: 'monitoring', rollout });
  new GpuDriverDaemonSet(chart, 'gpu', { image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04', rollout });
  return app;
}

interface HandAgent {
  readonly name: string;
  readonly namespace: string;
  readonly image: string;
  readonly args: string[];
  readonly hostPaths: Array<[string, string]>;
  readonly port?: number;
  readonly privileged?: boolean;
}

const HAND_AGENTS: HandAgent[] = [
  {
    name: 'log-collector',
    namespace: 'observability',
    image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.3',
    args: ['-c', '/fluent-bit/etc/fluent-bit.conf'],
    hostPaths: [['varlog', '/var/log'], ['state', '/var/lib/log-collector'], ['machine-id', '/etc/machine-id']],
    port: 2020,
  },
  {
    name: 'node-exporter',
    namespace: 'monitoring',
    image: 'quay.io/prometheus/node-exporter:v1.9.1',
    args: ['--path.procfs=/host/proc', '--path.sysfs=/host/sys', '--path.rootfs=/host/root', '--web.listen-address=$(HOST_IP):9100'],
    hostPaths: [['proc', '/proc'], ['sys', '/sys'], ['root', '/']],
    port: 9100,
  },
  {
    name: 'gpu-driver',
    namespace: 'gpu-system',
    image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04',
    args: ['init'],
    hostPaths: [['run-nvidia', '/run/nvidia'], ['dev', '/dev'], ['var-log', '/var/log'], ['host-os-release', '/etc/os-release']],
    privileged: true,
  },
];

/** The same agents as a platform team would write them with cdk8s-plus-28 alone. */
function handApp(): App {
  const app = new App({ outdir: `${OUT}/hand`, yamlOutputType: YamlOutputType.FILE_PER_CHART });
  const chart = new Chart(app, 'agents');
  for (const agent of HAND_AGENTS) {
    const sa = new kplus.ServiceAccount(chart, `${agent.name}-sa`, { metadata: { name: agent.name, namespace: agent.namespace } });
    const config = agent.name === 'log-collector'
      ? new kplus.ConfigMap(chart, `${agent.name}-config`, { metadata: { namespace: agent.namespace }, data: { 'fluent-bit.conf': '[SERVICE]\n    Flush 1\n' } })
      : undefined;
    if (agent.name === 'log-collector') {
      const role = new kplus.ClusterRole(chart, `${agent.name}-role`);
      role.allowRead(kplus.ApiResource.PODS, kplus.ApiResource.NAMESPACES);
      role.bind(sa);
    }
    for (const group of [...WAVES, 'fleet']) {
      const ds = new kplus.DaemonSet(chart, `${agent.name}-${group}`, {
        metadata: { name: group === 'fleet' ? agent.name : `${agent.name}-${group}`, namespace: agent.namespace, labels: { 'app.kubernetes.io/name': agent.name } },
        serviceAccount: sa,
        automountServiceAccountToken: agent.name === 'log-collector',
        hostNetwork: agent.name === 'node-exporter',
        terminationGracePeriod: Duration.seconds(30),
        isolate: false,
        securityContext: { ensureNonRoot: false },
      });
      ds.scheduling.attract(kplus.Node.labeled(kplus.NodeLabelQuery.notIn('eks.amazonaws.com/compute-type', ['fargate'])));
      ds.scheduling.tolerate(kplus.Node.tainted(kplus.NodeTaintQuery.any()));
      const container = ds.addContainer({
        name: agent.name,
        image: agent.image,
        args: agent.args,
        portNumber: agent.port,
        envVariables: { HOST_IP: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.NODE_IP) },
        resources: {
          cpu: { request: kplus.Cpu.millis(100), limit: kplus.Cpu.millis(500) },
          memory: { request: Size.mebibytes(128), limit: Size.mebibytes(512) },
        },
        securityContext: {
          privileged: agent.privileged ?? false,
          allowPrivilegeEscalation: agent.privileged ?? false,
          readOnlyRootFilesystem: true,
          ensureNonRoot: false,
        },
        readiness: agent.port ? kplus.Probe.fromHttpGet('/', { port: agent.port }) : undefined,
      });
      for (const [name, hostPath] of agent.hostPaths) {
        container.mount(`/host${hostPath}`, kplus.Volume.fromHostPath(ds, `${name}-${group}`, name, { path: hostPath }), { readOnly: !agent.privileged });
      }
      if (config) container.mount('/fluent-bit/etc', kplus.Volume.fromConfigMap(ds, `config-${group}`, config), { readOnly: true });
    }
    if (agent.name === 'node-exporter') {
      new kplus.Service(chart, 'node-exporter-svc', {
        metadata: { name: agent.name, namespace: agent.namespace },
        clusterIP: 'None',
        selector: kplus.Pods.select(chart, 'exporter-pods', { labels: { 'app.kubernetes.io/name': agent.name } }),
        ports: [{ port: 9100, name: 'metrics' }],
      });
      new ApiObject(chart, 'node-exporter-monitor', {
        apiVersion: 'monitoring.coreos.com/v1',
        kind: 'ServiceMonitor',
        metadata: { name: agent.name, namespace: agent.namespace },
        spec: { selector: { matchLabels: { 'app.kubernetes.io/name': agent.name } }, endpoints: [{ port: 'metrics', interval: '30s' }] },
      });
    }
  }
  return app;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function objectCount(app: App): number {
  return app.charts.reduce((n, chart) => n + chart.toJson().length, 0);
}

function main(): void {
  fs.rmSync(OUT, { recursive: true, force: true });
  const library = () => libraryApp().synth();
  const hand = () => handApp().synth();
  const timed = (run: () => void): number => {
    run();
    const start = performance.now();
    run();
    return performance.now() - start;
  };
  const libs: number[] = [];
  const hands: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    let l: number;
    let h: number;
    if (i % 2 === 0) {
      l = timed(library);
      h = timed(hand);
    } else {
      h = timed(hand);
      l = timed(library);
    }
    libs.push(l);
    hands.push(h);
    ratios.push(l / h);
  }
  console.log('one chart through App.synth() (build + synth), median ms; library/hand the median of the pair-by-pair ratios');
  console.log('               objects    median ms');
  console.log(`library      ${String(objectCount(libraryApp())).padStart(9)}  ${median(libs).toFixed(1).padStart(11)}`);
  console.log(`hand-written ${String(objectCount(handApp())).padStart(9)}  ${median(hands).toFixed(1).padStart(11)}`);
  console.log(`library/hand: ${median(ratios).toFixed(2)}× (goal ≤ 1.30×)`);
}

main();
