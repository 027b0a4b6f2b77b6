/**
 * Metric gates between rollout waves as synthesized: an Argo CD Sync hook Job per gated wave, in the
 * sync wave between the wave's DaemonSet and the next group's, locked down, with default checks
 * scoped to that wave.
 */
import { Testing } from 'cdk8s';
import {
  AgentRollout, ARGOCD_SYNC_WAVE, FluentBitOutput, GpuDriverDaemonSet, LogCollectorDaemonSet, NodeExporterDaemonSet, Promotion, RolloutWave,
  TaintEffect, UpdateStrategy,
} from '../../src';
import { GATE_SCRIPT } from '../../src/alerts/gate';
import { GATE_IMAGE } from '../../src/rollout/hook-shell';
import { warningsOf } from '../../src/validation/warnings';
import { Manifest, synthManifests } from '../util/manifests';

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
const PROM = 'http://prometheus-operated.monitoring.svc:9090';

function logCollector(rollout: Partial<AgentRollout>): Manifest[] {
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'logs',
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })],
    rollout: { waves: WAVES, promoted: Promotion.all(), argoCdSyncWaves: true, ...rollout },
  });
  return synthManifests(chart);
}

const jobs = (manifests: Manifest[]) => manifests.filter((m) => m.kind === 'Job');
const env = (job: Manifest): Record<string, string> =>
  Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: Manifest) => [e.name, e.value]));
const checks = (job: Manifest): Array<{ name: string; expr: string }> => {
  const e = env(job);
  return Array.from({ length: Number(e.CHECK_COUNT) }, (_, i) => ({ name: e[`CHECK_${i + 1}_NAME`], expr: e[`CHECK_${i + 1}_EXPR`] }));
};

describe('a gate after the canary', () => {
  const manifests = logCollector({ gates: [{ afterWave: 'canary', prometheusUrl: `${PROM}/` }] });
  const [job] = jobs(manifests);

  test('is an Argo CD Sync hook between the canary and the next wave', () => {
    expect(jobs(manifests)).toHaveLength(1);
    expect(job.metadata).toMatchObject({
      name: 'logs-gate-canary',
      namespace: 'observability',
      annotations: { 'argocd.argoproj.io/hook': 'Sync', 'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation', [ARGOCD_SYNC_WAVE]: '2' },
    });
    const waveOf = (name: string) => Number(manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === name).metadata.annotations[ARGOCD_SYNC_WAVE]);
    expect([waveOf('logs-canary'), waveOf('logs-wave-1'), waveOf('logs')]).toEqual([1, 3, 5]);
  });

  test('runs once, bounded in time, as non-root on a read-only root filesystem, in a pinned image', () => {
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.activeDeadlineSeconds).toBe(600 + 300);
    const pod = job.spec.template.spec;
    expect(pod).toMatchObject({
      restartPolicy: 'Never',
      serviceAccountName: 'logs-gate',
      automountServiceAccountToken: true,
      securityContext: { runAsNonRoot: true, runAsUser: 100, runAsGroup: 101, seccompProfile: { type: 'RuntimeDefault' } },
    });
    const [c] = pod.containers;
    expect(c.image).toBe(GATE_IMAGE);
    expect(GATE_IMAGE).toMatch(/^curlimages\/curl:\d+\.\d+\.\d+$/);
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true });
    expect(c.command).toEqual(['sh', '-c', GATE_SCRIPT]);
  });

  test('its token may only get and patch its own record ConfigMap, and create ConfigMaps (RBAC cannot restrict create by name)', () => {
    const [sa, role, binding] = ['ServiceAccount', 'Role', 'RoleBinding'].map((kind) => manifests.filter((m) => m.kind === kind && m.metadata.name === 'logs-gate'));
    expect([sa.length, role.length, binding.length]).toEqual([1, 1, 1]);
    expect(role[0].metadata.namespace).toBe('observability');
    expect(role[0].rules).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['logs-gate-canary'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    ]);
    expect(binding[0].roleRef).toEqual({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'logs-gate' });
    expect(binding[0].subjects).toEqual([{ kind: 'ServiceAccount', name: 'logs-gate', namespace: 'observability' }]);
    expect(env(job)).toMatchObject({
      GATE_NAMESPACE: 'observability',
      RECORD_NAME: 'logs-gate-canary',
      KUBERNETES_API: 'https://kubernetes.default.svc',
      SERVICE_ACCOUNT_DIR: '/var/run/secrets/kubernetes.io/serviceaccount',
    });
    expect(env(job).GATE_REVISION).toMatch(/^[0-9a-f]{16}$/);
    // Without gates, none of these.
    expect(logCollector({}).filter((m) => m.metadata.name === 'logs-gate')).toEqual([]);
  });

  test('the record\'s revision: the same for the same wave and checks; new when the wave\'s DaemonSet or the checks change', () => {
    const revision = (rollout: Partial<AgentRollout>, image?: string) => {
      const chart = Testing.chart();
      new LogCollectorDaemonSet(chart, 'logs', {
        name: 'logs',
        image,
        outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })],
        rollout: { waves: WAVES, promoted: Promotion.all(), argoCdSyncWaves: true, ...rollout },
      });
      return env(jobs(synthManifests(chart))[0]).GATE_REVISION;
    };
    const gates = [{ afterWave: 'canary', prometheusUrl: PROM }];
    expect(revision({ gates })).toBe(env(job).GATE_REVISION);
    expect(revision({ gates }, 'cr.fluentbit.io/fluent/fluent-bit:4.2.2')).not.toBe(env(job).GATE_REVISION);
    expect(revision({ gates: [{ ...gates[0], extraChecks: [{ name: 'x', expr: 'vector(1)' }] }] })).not.toBe(env(job).GATE_REVISION);
  });

  test('the gate pods are not selected by the agent\'s own selectors', () => {
    const ds = manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === 'logs-canary');
    const podLabels = job.spec.template.metadata.labels;
    const selected = Object.entries(ds.spec.selector.matchLabels as Record<string, string>).every(([k, v]) => podLabels[k] === v);
    expect(selected).toBe(false);
  });

  test('the default checks look at the canary DaemonSet and its pods only', () => {
    const e = env(job);
    expect(e).toMatchObject({ GATE_NAME: 'canary', PROMETHEUS_URL: PROM, BAKE_SECONDS: '600' });
    const list = checks(job);
    expect(list.map((c) => c.name)).toEqual([
      'daemonset-known', 'pods-unavailable', 'rollout-incomplete', 'generation-not-observed', 'container-restarts', 'records-dropped', 'retries-failed',
      'retries-without-delivery', 'read-not-delivered',
    ]);
    expect(list[1].expr).toBe('kube_daemonset_status_number_unavailable{job="kube-state-metrics",namespace="observability",daemonset="logs-canary"} > 0');
    expect(list[5].expr).toBe('sum by (namespace, pod, name) (increase(fluentbit_output_dropped_records_total'
      + '{namespace="observability",pod=~"(logs-canary)-[a-z0-9]{5}"}[10m])) > 0');
    for (const c of list) expect(c.expr).not.toMatch(/daemonset="logs"|logs-wave-1/);
  });
});

test('checks replace the defaults, extraChecks add to them, bakeMinutes and timeoutSeconds set the deadline', () => {
  const [job] = jobs(logCollector({
    gates: [{
      afterWave: 'wave-1',
      prometheusUrl: PROM,
      bakeMinutes: 30,
      timeoutSeconds: 120,
      checks: [{ name: 'errors', expr: 'sum(rate(fluentbit_output_errors_total[5m])) > 1' }],
      extraChecks: [{ name: 'drops', expr: 'sum(fluentbit_output_dropped_records_total) > 0' }],
    }],
  }));
  expect(job.metadata.annotations[ARGOCD_SYNC_WAVE]).toBe('4');
  expect(job.spec.activeDeadlineSeconds).toBe(1800 + 120);
  expect(checks(job)).toEqual([
    { name: 'errors', expr: 'sum(rate(fluentbit_output_errors_total[5m])) > 1' },
    { name: 'drops', expr: 'sum(fluentbit_output_dropped_records_total) > 0' },
  ]);
});

test('each agent kind adds its own default checks', () => {
  const chart = Testing.chart();
  const rollout = { waves: WAVES, promoted: Promotion.all(), argoCdSyncWaves: true, gates: [{ afterWave: 'canary', prometheusUrl: PROM }] };
  new NodeExporterDaemonSet(chart, 'ne', { rollout });
  new GpuDriverDaemonSet(chart, 'gpu', {
    image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', updateStrategy: UpdateStrategy.oneAtATime(), rollout,
  });
  const byName = Object.fromEntries(jobs(synthManifests(chart)).map((j) => [j.metadata.name, checks(j).map((c) => c.name)]));
  expect(byName['node-exporter-gate-canary'].slice(5)).toEqual(['exporter-down', 'collector-failed', 'textfile-error']);
  expect(byName['gpu-driver-gate-canary'].slice(5)).toEqual(['driver-not-ready']);
});

test('a gate after a wave a new agent does not render yet renders nothing', () => {
  const manifests = logCollector({ promoted: Promotion.through('canary'), gates: [{ afterWave: 'wave-1', prometheusUrl: PROM }] });
  expect(jobs(manifests)).toEqual([]);
});

test('bad gates name the construct, the prop and the fix', () => {
  const gate = { afterWave: 'canary', prometheusUrl: PROM };
  expect(() => logCollector({ argoCdSyncWaves: false, gates: [gate] }))
    .toThrow('LogCollectorDaemonSet test/logs: rollout.gates needs rollout.argoCdSyncWaves: true');
  expect(() => logCollector({ gates: [{ ...gate, afterWave: 'fleet' }] })).toThrow(/afterWave "fleet": nothing is applied after the fleet/);
  expect(() => logCollector({ gates: [{ ...gate, afterWave: 'wave-2' }] })).toThrow(/afterWave "wave-2" is not a wave; valid names are "canary", "wave-1"/);
  expect(() => logCollector({ gates: [gate, gate] })).toThrow(/two gates after wave "canary"/);
  expect(() => logCollector({ gates: [{ ...gate, prometheusUrl: 'prometheus:9090' }] })).toThrow(/prometheusUrl "prometheus:9090" is not an http\(s\) URL/);
  expect(() => logCollector({ gates: [{ ...gate, bakeMinutes: 2.5 }] })).toThrow(/bakeMinutes 2.5 must be a whole number/);
});

test('a Prometheus URL that curl would read as a glob, or that holds whitespace, is refused; its credentials are never shown', () => {
  const gate = { afterWave: 'canary', prometheusUrl: PROM };
  const refused = (prometheusUrl: string) => () => logCollector({ gates: [{ ...gate, prometheusUrl }] });
  expect(refused('http://prometheus-[1-40].monitoring.svc:9090')).toThrow('LogCollectorDaemonSet test/logs: rollout.gates ("canary") prometheusUrl '
    + '"http://prometheus-[1-40].monitoring.svc:9090" holds "[", "]", "{" or "}", which curl reads as a URL glob (several queries, their answers run together); '
    + 'percent-encode them (%5B %5D %7B %7D); brackets are for an IPv6 host only, e.g. "http://[fd00::1]:9090"');
  expect(refused('http://{prometheus-a,prometheus-b}.monitoring.svc:9090')).toThrow(/prometheusUrl "http:\/\/\{prometheus-a,prometheus-b\}\.monitoring\.svc:9090" holds "\["/);
  expect(refused('http://[fd00::1]:9090/prefix{a}')).toThrow(/which curl reads as a URL glob/);
  expect(refused('http://prometheus.monitoring.svc:9090/ ')).toThrow('rollout.gates ("canary") prometheusUrl "http://prometheus.monitoring.svc:9090/ " holds whitespace, '
    + 'which no request can carry; remove it, or percent-encode it (%20)');
  expect(refused('http://prometheus\t.svc')).toThrow(/holds whitespace/);
  // the userinfo is replaced in the message
  expect(refused('https://gate:s3cret@prometheus.example.com/[x]')).toThrow(/prometheusUrl "https:\/\/\*\*\*@prometheus\.example\.com\/\[x\]" holds/);
  expect(refused('gate:s3cret@prometheus:9090')).toThrow(/is not an http\(s\) URL/);
  expect(refused('gate:s3cret@prometheus:9090')).not.toThrow(/s3cret/);
  // an IPv6 host and credentials are fine
  expect(jobs(logCollector({ gates: [{ ...gate, prometheusUrl: 'http://[fd00::1]:9090' }] }))).toHaveLength(1);
  expect(jobs(logCollector({ gates: [{ ...gate, prometheusUrl: 'https://gate:s3cret@prometheus.example.com' }] }))).toHaveLength(1);
  expect(() => logCollector({ gates: [{ ...gate, checks: [{ name: 'has space', expr: 'up == 0' }] }] })).toThrow(/check name "has space"/);
});

/**
 * The hook Jobs bake for minutes (gates) or watch for hours (watchers): a node consolidated or scaled down under them
 * evicts the pod mid-verdict. Karpenter skips voluntary disruption of a node running a pod annotated
 * `karpenter.sh/do-not-disrupt: "true"` (kubernetes-sigs/karpenter pkg/apis/v1 labels.go DoNotDisruptAnnotationKey;
 * pkg/utils/pod IsDisruptable); the cluster autoscaler keeps a node whose pod says
 * `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"` (kubernetes/autoscaler cluster-autoscaler/utils/drain
 * SafeToEvictKey).
 */
describe('the hook Jobs are safe from disruption by default, and placeable', () => {
  const hookPods = (rollout: Partial<AgentRollout>) => jobs(logCollector(rollout)).map((j) => j.spec.template);
  const WATCH = { restartBudget: 3 };

  test('gate and watcher pods ask Karpenter and the cluster autoscaler not to disrupt their node, and run on Linux', () => {
    const pods = hookPods({ gates: [{ afterWave: 'canary', prometheusUrl: PROM }], watch: WATCH });
    expect(pods.length).toBeGreaterThanOrEqual(2);
    for (const pod of pods) {
      expect(pod.metadata.annotations).toEqual({ 'karpenter.sh/do-not-disrupt': 'true', 'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false' });
      expect(pod.spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
      expect(pod.spec.tolerations).toBeUndefined();
      expect(pod.spec.priorityClassName).toBeUndefined();
    }
  });

  test('rollout.hookPod adds tolerations, node labels, annotations and a priority class to gates and watchers', () => {
    const pod = {
      tolerations: [{ key: 'dedicated', value: 'system', effect: TaintEffect.NO_SCHEDULE }],
      nodeSelector: { 'node-role': 'system' },
      podAnnotations: { 'example.com/team': 'platform' },
      priorityClassName: 'platform-high',
    };
    const pods = hookPods({ gates: [{ afterWave: 'canary', prometheusUrl: PROM }], watch: WATCH, hookPod: pod });
    expect(pods.length).toBeGreaterThanOrEqual(2);
    for (const p of pods) {
      expect(p.metadata.annotations).toMatchObject({ 'karpenter.sh/do-not-disrupt': 'true', 'example.com/team': 'platform' });
      expect(p.spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', 'node-role': 'system' });
      expect(p.spec.tolerations).toEqual([{ key: 'dedicated', operator: 'Equal', value: 'system', effect: 'NoSchedule' }]);
      expect(p.spec.priorityClassName).toBe('platform-high');
    }
  });
});

test('rollout.hookPod with neither gates nor watch renders no hook pod: a warning says it changes nothing', () => {
  const warnings = (rollout: Partial<AgentRollout>) => {
    const chart = Testing.chart();
    const collector = new LogCollectorDaemonSet(chart, 'logs', {
      name: 'logs',
      outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })],
      rollout: { waves: WAVES, promoted: Promotion.all(), argoCdSyncWaves: true, ...rollout },
    });
    synthManifests(chart);
    return warningsOf(collector).filter((w) => w.includes('rollout.hookPod'));
  };
  const hookPod = { priorityClassName: 'platform-high' };
  expect(warnings({ hookPod })).toEqual([
    'LogCollectorDaemonSet test/logs: rollout.hookPod is set but no hook pod runs (no rollout.gates, no rollout.watch): it changes nothing. '
    + 'Add a gate or rollout.watch: {}, or remove rollout.hookPod.',
  ]);
  expect(warnings({ hookPod, watch: {} })).toEqual([]);
  expect(warnings({ hookPod, gates: [{ afterWave: 'canary', prometheusUrl: PROM }] })).toEqual([]);
  expect(warnings({})).toEqual([]);
});

test('a hookPod the API server would refuse is refused naming the prop', () => {
  const make = (hookPod: object) => () => logCollector({ gates: [{ afterWave: 'canary', prometheusUrl: PROM }], hookPod });
  expect(make({ nodeSelector: { 'bad key!': 'x' } })).toThrow(/rollout.hookPod.nodeSelector/);
  expect(make({ priorityClassName: 'Not_A_Name' })).toThrow(/rollout.hookPod.priorityClassName/);
});
