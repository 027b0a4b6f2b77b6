import { App, Chart, Testing } from 'cdk8s';
import { buildApp } from '../../examples/log-collector/main';
import { Promotion, RolloutWave } from '../../src/agent/rollout';
import { RolloutBudget, UpdateStrategy } from '../../src/agent/update-strategy';
import {
  FluentBitLogLevel,
  LogCollectorDaemonSet,
  LogCollectorDaemonSetProps,
  LogCollectorMonitorKind,
  NodeContainerRuntime,
} from '../../src/constructs/log-collector-daemon-set';
import { entryValue, entryValues, findSections, parseClassicConfig, ParsedClassicConfig } from '../../src/fluent-bit/classic-format';
import { CONFIG_DIR, FLUENT_BIT_IMAGE, HEALTH_PATH, LIVENESS_PATH, METRICS_PATH } from '../../src/fluent-bit/config';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { FluentBitMultilineParser, FluentBitParser } from '../../src/fluent-bit/parsers';
import { synthManifests, Manifest } from '../util/manifests';

const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });

function synth(props: Partial<LogCollectorDaemonSetProps> = {}): { manifests: Manifest[]; collector: LogCollectorDaemonSet } {
  const chart = new Chart(Testing.app(), 'test');
  const collector = new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], ...props });
  return { manifests: synthManifests(chart), collector };
}

function build(props: Partial<LogCollectorDaemonSetProps>): () => void {
  return () => new LogCollectorDaemonSet(new Chart(Testing.app(), 'test'), 'logs', { outputs: [LOKI], ...props });
}

function one(manifests: Manifest[], kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found).toHaveLength(1);
  return found[0];
}

const ds = (m: Manifest[]) => one(m, 'DaemonSet');
const pod = (m: Manifest[]) => ds(m).spec.template.spec;
const main = (m: Manifest[]) => pod(m).containers.find((c: Manifest) => c.name === 'fluent-bit');
const configOf = (m: Manifest[]): ParsedClassicConfig => parseClassicConfig(one(m, 'ConfigMap').data['fluent-bit.conf']);
const service = (m: Manifest[]) => findSections(configOf(m), 'SERVICE')[0];

describe('defaults', () => {
  const { manifests, collector } = synth();

  test('a DaemonSet log-collector in observability, running the pinned fluent-bit', () => {
    expect(ds(manifests).metadata).toMatchObject({ name: 'log-collector', namespace: 'observability' });
    expect(main(manifests).image).toBe(FLUENT_BIT_IMAGE);
    expect(FLUENT_BIT_IMAGE).toMatch(/^cr\.fluentbit\.io\/fluent\/fluent-bit:5\.\d+\.\d+$/);
    expect(main(manifests).imagePullPolicy).toBe('IfNotPresent');
    expect(main(manifests).args).toEqual(['-c', `${CONFIG_DIR}/fluent-bit.conf`]);
    expect(collector.agent.name).toBe('log-collector');
    expect(collector.namespace).toBe('observability');
    expect(collector.daemonSet).toBe(collector.agent.daemonSet);
    expect(collector.configMap).toBe(collector.agent.configMap);
    expect(collector.serviceAccount).toBe(collector.agent.serviceAccount);
    expect(manifests.filter((m) => m.kind === 'Namespace')).toHaveLength(0);
  });

  test('mounts: /var/log read-only, the state dir writable (DirectoryOrCreate), config read-only; no Docker path, no machine-id', () => {
    const mounts = Object.fromEntries(main(manifests).volumeMounts.map((v: Manifest) => [v.mountPath, v.readOnly]));
    expect(mounts).toEqual({
      '/var/log': true,
      '/var/lib/log-collector': false,
      [CONFIG_DIR]: true,
    });
    const volumes = Object.fromEntries(pod(manifests).volumes
      .filter((v: Manifest) => v.hostPath)
      .map((v: Manifest) => [v.hostPath.path, v.hostPath.type]));
    expect(volumes).toEqual({ '/var/log': 'Directory', '/var/lib/log-collector': 'DirectoryOrCreate' });
  });

  test('security: root by default, drop ALL, no privilege escalation, RuntimeDefault seccomp, read-only root filesystem', () => {
    expect(main(manifests).securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsUser: 0,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(main(manifests).securityContext.capabilities.add).toBeUndefined();
    expect(pod(manifests).hostNetwork).toBe(false);
  });

  test('tolerates every taint', () => {
    expect(pod(manifests).tolerations).toEqual([{ operator: 'Exists' }]);
  });

  test('update pace 25% / 0', () => {
    expect(ds(manifests).spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: 0 } });
  });

  test('resources 100m / 128Mi, limit 512Mi', () => {
    expect(main(manifests).resources).toEqual({ requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } });
  });

  test('terminationGracePeriodSeconds 60 and fluent-bit Grace below it', () => {
    expect(pod(manifests).terminationGracePeriodSeconds).toBe(60);
    const grace = Number(entryValue(service(manifests), 'Grace'));
    expect(grace).toBe(collector.graceSeconds);
    expect(grace).toBeLessThan(pod(manifests).terminationGracePeriodSeconds);
    expect(grace).toBeGreaterThanOrEqual(Number(entryValue(service(manifests), 'Flush')) + 5);
  });

  test('readiness on the health endpoint (with Health_Check On), lenient liveness on uptime, both on the HTTP port', () => {
    const c = main(manifests);
    expect(c.ports).toEqual([{ containerPort: 2020, name: 'http' }]);
    expect(c.readinessProbe.httpGet).toMatchObject({ path: HEALTH_PATH, port: 2020 });
    expect(HEALTH_PATH).toBe('/api/v1/health');
    expect(entryValue(service(manifests), 'Health_Check')).toBe('On');
    expect(entryValue(service(manifests), 'HTTP_Port')).toBe('2020');
    expect(c.livenessProbe.httpGet).toMatchObject({ path: LIVENESS_PATH, port: 2020 });
    // lenient: a minute of silence before a restart, and not tied to output health
    expect(c.livenessProbe.failureThreshold * c.livenessProbe.periodSeconds).toBeGreaterThanOrEqual(60);
    expect(c.livenessProbe.httpGet.path).not.toBe(HEALTH_PATH);
  });

  /**
   * fluent-bit's health check as src/http_server/api/v1/health.c (5.1.1 flb_hs_health_state_get) computes it: the
   * output errors and failed retries counted within HC_Period, each compared with `>` to its limit.
   */
  function ready(m: Manifest[], counted: { errors: number; retriesFailed: number }): boolean {
    const s = service(m);
    expect(entryValue(s, 'Health_Check')).toBe('On');
    return !(counted.errors > Number(entryValue(s, 'HC_Errors_Count')) || counted.retriesFailed > Number(entryValue(s, 'HC_Retry_Failure_Count')));
  }

  test('readiness during an output outage: retries and failed retries keep pods ready, refused records make them unready', () => {
    // A destination outage: out_loki returns FLB_RETRY for a refused connection and for 5xx, so
    // neither errors nor (without Retry_Limit) failed retries rise: ready, on every node at once.
    expect(ready(manifests, { errors: 0, retriesFailed: 0 })).toBe(true);
    // With a retryLimit the outage ends in failed retries (one per chunk and flush): still ready,
    // or every collector would leave ready together.
    const limited = synth({ outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc', retryLimit: 1 })] }).manifests;
    expect(ready(limited, { errors: 0, retriesFailed: 60 })).toBe(true);
    expect(Number(entryValue(service(limited), 'HC_Retry_Failure_Count'))).toBeLessThanOrEqual(2 ** 31 - 1);
    // Records refused (Loki's 400, a bad credential: FLB_ERROR) more than 5 times in 60 s: unready.
    expect(entryValue(service(manifests), 'HC_Period')).toBe('60');
    expect(ready(manifests, { errors: 5, retriesFailed: 0 })).toBe(true);
    expect(ready(manifests, { errors: 6, retriesFailed: 0 })).toBe(false);
  });

  test('a node booting before DNS answers: the probes allow the kubernetes filter its whole DNS wait', () => {
    // plugins/filter_kubernetes/kube_meta.c (wait_for_dns): up to DNS_Retries lookups DNS_Wait_Time
    // seconds apart (config_map defaults 6 and 30 in kubernetes.c), before src/flb_engine.c
    // (flb_engine_start) starts the HTTP server the probes ask.
    const k8s = findSections(configOf(manifests), 'FILTER', 'kubernetes')[0];
    const wait = Number(entryValue(k8s, 'DNS_Retries') ?? 6) * Number(entryValue(k8s, 'DNS_Wait_Time') ?? 30);
    const c = main(manifests);
    // The kubelet runs liveness only once the startup probe succeeded; without one, from the start.
    const first = c.startupProbe ?? c.livenessProbe;
    const budget = (first.initialDelaySeconds ?? 0) + first.periodSeconds * first.failureThreshold;
    expect(budget).toBeGreaterThanOrEqual(wait + 60);
    expect(wait).toBeLessThanOrEqual(120);
    expect(c.startupProbe.httpGet).toMatchObject({ path: LIVENESS_PATH, port: 2020 });
  });

  test('RBAC: get/list/watch on pods and namespaces only, token mounted', () => {
    expect(one(manifests, 'ClusterRole').rules).toEqual([
      { apiGroups: [''], resources: ['namespaces', 'pods'], verbs: ['get', 'list', 'watch'] },
    ]);
    const binding = one(manifests, 'ClusterRoleBinding');
    expect(binding.roleRef.name).toBe(one(manifests, 'ClusterRole').metadata.name);
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'log-collector', namespace: 'observability' }]);
    expect(pod(manifests).serviceAccountName).toBe('log-collector');
    expect(pod(manifests).automountServiceAccountToken).toBe(true);
    expect(one(manifests, 'ServiceAccount').automountServiceAccountToken).toBe(true);
  });

  test('the config is mounted from the ConfigMap and rolls the pods through checksum/config', () => {
    const cm = one(manifests, 'ConfigMap');
    expect(pod(manifests).volumes.find((v: Manifest) => v.configMap)?.configMap.name).toBe(cm.metadata.name);
    expect(ds(manifests).spec.template.metadata.annotations['checksum/config']).toMatch(/^[0-9a-f]{64}$/);
    expect(cm.data['fluent-bit.conf']).toBe(collector.configText);
  });

  test('no monitor and no Service unless asked', () => {
    expect(manifests.filter((m) => ['Service', 'ServiceMonitor', 'PodMonitor'].includes(m.kind))).toEqual([]);
  });
});

describe('state directory', () => {
  test.each([
    [{}],
    [{ systemdInput: true }],
    [{ name: 'logs', stateDir: '/data/fluent-bit-state', systemdInput: true, containerRuntime: NodeContainerRuntime.DOCKER }],
  ])('DB and storage paths sit in the writable state mount and nowhere else is writable (%p)', (props: Partial<LogCollectorDaemonSetProps>) => {
    const { manifests, collector } = synth(props);
    const writable = main(manifests).volumeMounts.filter((v: Manifest) => v.readOnly === false);
    expect(writable).toHaveLength(1);
    const stateMount = writable[0].mountPath;
    expect(stateMount).toBe(collector.stateDir);
    const stateVolume = pod(manifests).volumes.find((v: Manifest) => v.name === writable[0].name);
    expect(stateVolume.hostPath).toEqual({ path: collector.stateDir, type: 'DirectoryOrCreate' });
    expect(main(manifests).securityContext.readOnlyRootFilesystem).toBe(true);
    for (const c of [...pod(manifests).containers, ...(pod(manifests).initContainers ?? [])]) {
      for (const m of c.volumeMounts ?? []) {
        if (m.mountPath !== stateMount) expect(m.readOnly).toBe(true);
      }
    }
    const written = configOf(manifests).sections.flatMap((s) => s.entries)
      .filter((e) => ['db', 'storage.path'].includes(e.key.toLowerCase()))
      .map((e) => e.value);
    expect(written.length).toBe(props.systemdInput ? 3 : 2);
    for (const p of written) {
      expect(p.startsWith(stateMount + '/')).toBe(true);
    }
  });

  test('the default state dir follows the name', () => {
    expect(synth({ name: 'fb' }).collector.stateDir).toBe('/var/lib/fb');
  });
});

describe('container runtime and systemd', () => {
  test('Docker nodes get /var/lib/docker/containers read-only', () => {
    const { manifests } = synth({ containerRuntime: NodeContainerRuntime.DOCKER });
    expect(main(manifests).volumeMounts).toContainEqual(expect.objectContaining({ mountPath: '/var/lib/docker/containers', readOnly: true }));
  });

  test.each([NodeContainerRuntime.CONTAINERD, NodeContainerRuntime.CRI_O])('%s nodes do not mount the Docker path', (runtime) => {
    const { manifests } = synth({ containerRuntime: runtime });
    expect(main(manifests).volumeMounts.map((v: Manifest) => v.mountPath)).not.toContain('/var/lib/docker/containers');
  });

  test.each([
    [NodeContainerRuntime.CONTAINERD, 'containerd.service'],
    [NodeContainerRuntime.CRI_O, 'crio.service'],
    [NodeContainerRuntime.DOCKER, 'docker.service'],
  ])('systemd input on %s reads kubelet and %s, with /etc/machine-id read-only', (runtime, unit) => {
    const { manifests } = synth({ containerRuntime: runtime, systemdInput: true });
    const systemd = findSections(configOf(manifests), 'INPUT', 'systemd');
    expect(systemd).toHaveLength(1);
    expect(systemd[0].entries.filter((e) => e.key === 'Systemd_Filter').map((e) => e.value).sort())
      .toEqual([`_SYSTEMD_UNIT=${unit}`, '_SYSTEMD_UNIT=kubelet.service'].sort());
    expect(main(manifests).volumeMounts).toContainEqual(expect.objectContaining({ mountPath: '/etc/machine-id', readOnly: true }));
    expect(pod(manifests).volumes.find((v: Manifest) => v.hostPath?.path === '/etc/machine-id').hostPath.type).toBe('File');
  });

  test('custom units', () => {
    const { manifests } = synth({ systemdInput: true, systemdUnits: ['kubelet.service'] });
    expect(findSections(configOf(manifests), 'INPUT', 'systemd')[0].entries.filter((e) => e.key === 'Systemd_Filter'))
      .toEqual([{ key: 'Systemd_Filter', value: '_SYSTEMD_UNIT=kubelet.service' }]);
  });
});

describe('config changes', () => {
  test('a config change changes the checksum and the ConfigMap name, and nothing in the selector', () => {
    const a = synth();
    const b = synth({ flushSeconds: 2 });
    const annotations = (m: Manifest[]) => ds(m).spec.template.metadata.annotations['checksum/config'];
    expect(annotations(a.manifests)).not.toBe(annotations(b.manifests));
    expect(one(a.manifests, 'ConfigMap').metadata.name).not.toBe(one(b.manifests, 'ConfigMap').metadata.name);
    expect(ds(a.manifests).spec.selector).toEqual(ds(b.manifests).spec.selector);
    const selector = ds(a.manifests).spec.selector.matchLabels;
    for (const value of Object.values(selector)) {
      expect(value).not.toContain(annotations(a.manifests).slice(0, 10));
    }
    for (const [k, v] of Object.entries(selector)) {
      expect(ds(b.manifests).spec.template.metadata.labels[k]).toBe(v);
    }
  });

  test('the same props synthesize byte-identical manifests', () => {
    expect(synth().manifests).toEqual(synth().manifests);
  });
});

describe('credentials', () => {
  const outputs = [
    FluentBitOutput.loki({ host: 'loki', httpUser: 'fb', httpPassword: { secretName: 'loki-credentials', key: 'loki-password' } }),
    FluentBitOutput.elasticsearch({ host: 'es', httpUser: 'fb', httpPassword: { secretName: 'es-credentials', key: 'es-password' } }),
    FluentBitOutput.forward({ host: 'agg', sharedKey: { secretName: 'forward-key', key: 'shared-key' } }),
  ];

  test('never appear in the ConfigMap: only ${ENV} references, filled from Secrets through env vars', () => {
    const { manifests } = synth({ outputs });
    const text = one(manifests, 'ConfigMap').data['fluent-bit.conf'];
    for (const word of ['loki-credentials', 'loki-password', 'es-credentials', 'es-password', 'forward-key', 'shared-key']) {
      expect(text).not.toContain(word);
    }
    const env = main(manifests).env;
    const fromSecrets = env.filter((e: Manifest) => e.valueFrom?.secretKeyRef);
    expect(fromSecrets).toEqual([
      { name: 'FLB_ES_HTTP_PASSWD', valueFrom: { secretKeyRef: { name: 'es-credentials', key: 'es-password' } } },
      { name: 'FLB_FORWARD_SHARED_KEY', valueFrom: { secretKeyRef: { name: 'forward-key', key: 'shared-key' } } },
      { name: 'FLB_LOKI_HTTP_PASSWD', valueFrom: { secretKeyRef: { name: 'loki-credentials', key: 'loki-password' } } },
    ]);
    expect(env.filter((e: Manifest) => e.value !== undefined)).toEqual([]);
    const referenced = [...text.matchAll(/\$\{([A-Z0-9_]+)\}/g)].map((m) => m[1]).sort();
    expect(referenced).toEqual(fromSecrets.map((e: Manifest) => e.name));
    // no Secret object is emitted: the Secret is referenced, never created with a value
    expect(manifests.filter((m) => m.kind === 'Secret')).toEqual([]);
  });
});

describe('kubelet mode', () => {
  test('adds exactly get on nodes/proxy and NODE_IP from the downward API, without hostNetwork', () => {
    const { manifests } = synth({ useKubelet: true, kubernetesTlsVerify: true });
    expect(one(manifests, 'ClusterRole').rules).toEqual([
      { apiGroups: [''], resources: ['namespaces', 'pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'] },
    ]);
    expect(main(manifests).env).toContainEqual({ name: 'NODE_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } });
    expect(pod(manifests).hostNetwork).toBe(false);
    const k8s = findSections(configOf(manifests), 'FILTER', 'kubernetes')[0];
    expect(entryValue(k8s, 'Use_Kubelet')).toBe('On');
    expect(entryValue(k8s, 'Kubelet_Host')).toBe('${NODE_IP}');
  });
});

describe('rollout waves', () => {
  test("every wave's pods are the collector's own logs and excluded from tailing", () => {
    const { manifests } = synth({ rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all() } });
    const names = manifests.filter((m) => m.kind === 'DaemonSet').map((m) => m.metadata.name);
    expect(names).toEqual(['log-collector-canary', 'log-collector']);
    const pattern = entryValue(findSections(configOf(manifests), 'INPUT', 'tail')[0], 'Exclude_Path')!;
    const glob = new RegExp('^' + pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*') + '$');
    for (const dsName of names) {
      // pod <ds>-<5 chars>, container fluent-bit
      expect(glob.test(`/var/log/containers/${dsName}-ab12c_observability_fluent-bit-${'0'.repeat(64)}.log`)).toBe(true);
    }
  });

  test('an image-only upgrade leaves the config and its ConfigMap unchanged', () => {
    const configMap = (image: string) => JSON.stringify(one(synth({ image }).manifests, 'ConfigMap'));
    expect(configMap('cr.fluentbit.io/fluent/fluent-bit:4.1.1')).toBe(configMap('cr.fluentbit.io/fluent/fluent-bit:4.2.3'));
  });

  test('a settings change rolls out too: held waves keep the previous config byte for byte', () => {
    const waves = [RolloutWave.labelled('canary')];
    const previousProps: LogCollectorDaemonSetProps = { outputs: [LOKI], image: 'cr.fluentbit.io/fluent/fluent-bit:4.1.1', flushSeconds: 5 };
    const before = synth({ ...previousProps, rollout: { waves, promoted: Promotion.all() } }).manifests;
    const during = synth({
      flushSeconds: 1,
      rollout: { waves, promoted: Promotion.through('canary'), previous: LogCollectorDaemonSet.release(previousProps) },
    }).manifests;
    const fleet = (m: Manifest[]) => JSON.stringify(m.find((x) => x.kind === 'DaemonSet' && x.metadata.name === 'log-collector'));
    expect(fleet(during)).toBe(fleet(before));
    const configs = during.filter((m) => m.kind === 'ConfigMap').map((m) => parseClassicConfig(m.data['fluent-bit.conf']));
    expect(configs.map((c) => entryValue(findSections(c, 'SERVICE')[0], 'Flush')).sort()).toEqual(['1', '5']);
  });
});

describe('scheduling', () => {
  test('tolerateAllTaints: false gives the explicit control-plane tolerations plus extras', () => {
    const { manifests } = synth({ tolerateAllTaints: false, tolerations: [{ key: 'nvidia.com/gpu' }] });
    const tolerations = pod(manifests).tolerations;
    expect(tolerations).not.toContainEqual({ operator: 'Exists' });
    expect(tolerations).toContainEqual(expect.objectContaining({ key: 'node-role.kubernetes.io/control-plane', effect: 'NoSchedule' }));
    expect(tolerations).toContainEqual(expect.objectContaining({ key: 'nvidia.com/gpu' }));
  });

  test('a slower or faster pace is accepted', () => {
    expect(ds(synth({ updateStrategy: UpdateStrategy.oneAtATime() }).manifests).spec.updateStrategy.rollingUpdate)
      .toEqual({ maxUnavailable: 1, maxSurge: 0 });
  });
});

describe('options', () => {
  test('name, namespace and createNamespace', () => {
    const { manifests } = synth({ name: 'fluent-bit', namespace: 'logging', createNamespace: true });
    const ns = one(manifests, 'Namespace');
    expect(ns.metadata.name).toBe('logging');
    // hostPath volumes are outside the baseline Pod Security level
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('privileged');
    expect(ds(manifests).metadata).toMatchObject({ name: 'fluent-bit', namespace: 'logging' });
    const exclude = entryValue(findSections(configOf(manifests), 'INPUT', 'tail')[0], 'Exclude_Path');
    expect(exclude).toBe('/var/log/containers/fluent-bit-*_logging_*.log');
  });

  test('HTTP port, grace period, log level and resources', () => {
    const { manifests } = synth({
      httpPort: 2021,
      terminationGracePeriodSeconds: 120,
      logLevel: FluentBitLogLevel.WARN,
      resources: { cpuRequest: '50m', memoryRequest: '64Mi', memoryLimit: '256Mi' },
    });
    expect(main(manifests).ports).toEqual([{ containerPort: 2021, name: 'http' }]);
    expect(main(manifests).readinessProbe.httpGet.port).toBe(2021);
    expect(pod(manifests).terminationGracePeriodSeconds).toBe(120);
    expect(entryValue(service(manifests), 'Grace')).toBe('115');
    expect(entryValue(service(manifests), 'Log_Level')).toBe('warn');
    expect(main(manifests).resources).toEqual({ requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } });
  });

  test('forward input port is declared on the container', () => {
    const { manifests } = synth({ forwardInputPort: 24224 });
    expect(main(manifests).ports).toEqual([{ containerPort: 2020, name: 'http' }, { containerPort: 24224, name: 'forward' }]);
  });

  test('non-root option', () => {
    const { manifests } = synth({ runAsUser: 10001, runAsGroup: 4 });
    expect(main(manifests).securityContext).toMatchObject({ runAsUser: 10001, runAsGroup: 4, runAsNonRoot: true });
  });

  test('extraConfig is appended and read back by the parser', () => {
    const { manifests } = synth({ extraConfig: '[FILTER]\n    Name  grep\n    Match kube.*\n    Exclude log healthz' });
    expect(entryValue(findSections(configOf(manifests), 'FILTER', 'grep')[0], 'Exclude')).toBe('log healthz');
  });

  test('the parser reads every section and key of the synthesized ConfigMap back', () => {
    const { manifests, collector } = synth({
      systemdInput: true, useKubelet: true, kubernetesTlsVerify: true, forwardInputPort: 24224, outputs: [LOKI, FluentBitOutput.stdout()],
    });
    const parsed = configOf(manifests);
    expect(parsed.sections.map((s) => `${s.name}:${entryValue(s, 'Name') ?? ''}`)).toEqual([
      'SERVICE:', 'INPUT:tail', 'INPUT:systemd', 'INPUT:forward', 'FILTER:kubernetes', 'OUTPUT:loki', 'OUTPUT:stdout',
    ]);
    const lines = collector.configText.split('\n').filter((l) => /^\s+\S/.test(l) && !l.trim().startsWith('#'));
    expect(parsed.sections.reduce((n, s) => n + s.entries.length, 0)).toBe(lines.length);
  });
});

describe('parsers and buffering', () => {
  const parsers = [FluentBitParser.regex({ name: 'app', regex: '^(?<level>[A-Z]+) (?<message>.*)$' })];
  const multilineParsers = [FluentBitMultilineParser.regex({ name: 'stack', rules: [{ state: 'start_state', regex: '/^\\S/', nextState: 'cont' }, { state: 'cont', regex: '/^\\s/', nextState: 'cont' }] })];

  test('custom parsers are a second file of the ConfigMap, mounted beside fluent-bit.conf and named by Parsers_File', () => {
    const { manifests } = synth({ parsers, multilineParsers, extraConfig: '[FILTER]\n    Name parser\n    Match kube.*\n    Key_Name log\n    Parser app' });
    const data = one(manifests, 'ConfigMap').data;
    expect(Object.keys(data).sort()).toEqual(['fluent-bit.conf', 'parsers.conf']);
    const file = parseClassicConfig(data['parsers.conf'], 'parsers');
    expect(file.sections.map((s) => s.name)).toEqual(['PARSER', 'MULTILINE_PARSER']);
    expect(entryValues(service(manifests), 'Parsers_File')).toEqual(['/fluent-bit/etc/parsers.conf', `${CONFIG_DIR}/parsers.conf`]);
    expect(main(manifests).volumeMounts).toContainEqual(expect.objectContaining({ mountPath: CONFIG_DIR }));
    // the main file is one fluent-bit accepts: no parser section in it
    expect(() => parseClassicConfig(data['fluent-bit.conf'], 'main')).not.toThrow();
  });

  test('without custom parsers the ConfigMap keeps its single file', () => {
    expect(Object.keys(one(synth().manifests, 'ConfigMap').data)).toEqual(['fluent-bit.conf']);
  });

  test('a [PARSER] in extraConfig fails synthesis, pointing at the parsers prop', () => {
    expect(build({ extraConfig: '[PARSER]\n    Name app\n    Format json' }))
      .toThrow(/LogCollectorDaemonSet test\/logs: extraConfig must not contain a \[PARSER\] section .*Use the parsers prop/);
  });

  test('memory is bounded by storage.max_chunks_up; the deprecated memBufLimit still lands on every input', () => {
    const { manifests } = synth({ storageMaxChunksUp: 32, storagePauseOnChunksOverlimit: true, memBufLimit: '20MB', systemdInput: true });
    expect(entryValue(service(manifests), 'storage.max_chunks_up')).toBe('32');
    for (const input of findSections(configOf(manifests), 'INPUT')) {
      expect(entryValue(input, 'Mem_Buf_Limit')).toBe('20MB');
      expect(entryValue(input, 'storage.pause_on_chunks_overlimit')).toBe('On');
    }
    expect(entryValue(findSections(configOf(synth().manifests), 'INPUT', 'tail')[0], 'Mem_Buf_Limit')).toBeUndefined();
  });
});

describe('metrics', () => {
  test('ServiceMonitor (default kind) with a headless Service, labels to match the Prometheus selector', () => {
    const { manifests, collector } = synth({ metrics: { labels: { release: 'kube-prometheus-stack' }, interval: '15s' } });
    const sm = one(manifests, 'ServiceMonitor');
    const svc = one(manifests, 'Service');
    expect(sm.metadata.labels.release).toBe('kube-prometheus-stack');
    expect(sm.metadata.namespace).toBe('observability');
    expect(sm.spec.endpoints).toEqual([expect.objectContaining({ port: 'http', path: METRICS_PATH, interval: '15s' })]);
    expect(METRICS_PATH).toBe('/api/v2/metrics/prometheus');
    expect(sm.spec.namespaceSelector).toEqual({ matchNames: ['observability'] });
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) expect(svc.metadata.labels[k]).toBe(v);
    expect(svc.spec.clusterIP).toBe('None');
    expect(svc.spec.ports).toEqual([{ name: 'http', port: 2020, targetPort: 'http', protocol: 'TCP' }]);
    const podLabels = ds(manifests).spec.template.metadata.labels;
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(podLabels[k]).toBe(v);
    expect(collector.monitor).toBeDefined();
    expect(collector.metricsService).toBeDefined();
  });

  test('PodMonitor selects the pods directly, no Service', () => {
    const { manifests } = synth({ metrics: { kind: LogCollectorMonitorKind.POD_MONITOR, labels: { prometheus: 'main' } } });
    const pm = one(manifests, 'PodMonitor');
    expect(manifests.filter((m) => m.kind === 'Service')).toEqual([]);
    expect(pm.metadata.labels.prometheus).toBe('main');
    expect(pm.spec.podMetricsEndpoints).toEqual([expect.objectContaining({ port: 'http', path: METRICS_PATH, interval: '30s' })]);
    const podLabels = ds(manifests).spec.template.metadata.labels;
    for (const [k, v] of Object.entries(pm.spec.selector.matchLabels)) expect(podLabels[k]).toBe(v);
  });

  test('a bad interval is an error', () => {
    expect(build({ metrics: { interval: '30 seconds' } })).toThrow(/LogCollectorDaemonSet test\/logs: metrics.interval "30 seconds"/);
  });
});

describe('bad props give clear errors', () => {
  test('empty output list', () => {
    expect(build({ outputs: [] })).toThrow(/^LogCollectorDaemonSet test\/logs: outputs is empty/);
  });

  test('port clash between the HTTP server and the forward input', () => {
    expect(build({ httpPort: 24224, forwardInputPort: 24224 }))
      .toThrow(/LogCollectorDaemonSet test\/logs: forwardInputPort 24224 clashes with the HTTP server port 24224/);
  });

  test('a grace period below the flush time', () => {
    expect(build({ terminationGracePeriodSeconds: 8 }))
      .toThrow(/LogCollectorDaemonSet test\/logs: fluent-bit Grace would be 3s, below one flush \(1s\) plus a 5s margin; raise terminationGracePeriodSeconds to at least 11 \(now 8\)/);
    expect(build({ terminationGracePeriodSeconds: 20, flushSeconds: 15 })).toThrow(/at least 25 \(now 20\)/);
  });

  test.each([
    ['conservative() (0 / 1)', UpdateStrategy.conservative()],
    ['a 10% surge', UpdateStrategy.rollingUpdate({ maxSurge: RolloutBudget.percent(10) })],
  ])('surge requested: %s', (_what, strategy) => {
    expect(strategy.surges).toBe(true);
    expect(build({ updateStrategy: strategy }))
      .toThrow(/LogCollectorDaemonSet test\/logs: updateStrategy RollingUpdate maxUnavailable=0 maxSurge=(1|10%) surges: .* one tail database/);
  });

  test('systemdUnits without the systemd input', () => {
    expect(build({ systemdUnits: ['kubelet.service'] })).toThrow(/systemdUnits is set but systemdInput is off/);
  });

  test('runAsGroup with root, a negative uid, a privileged port as non-root', () => {
    expect(build({ runAsGroup: 5 })).toThrow(/runAsGroup is only used with a non-root runAsUser/);
    expect(build({ runAsUser: -1 })).toThrow(/runAsUser -1 must be a whole number/);
    expect(build({ runAsUser: 1000, forwardInputPort: 514 })).toThrow(/port 514 \(forward\) is below 1024/);
  });
});

describe('snapshot', () => {
  test('defaults plus systemd, kubelet mode and a ServiceMonitor', () => {
    const { manifests } = synth({
      systemdInput: true,
      useKubelet: true,
      kubernetesTlsVerify: true,
      metrics: { labels: { release: 'prom' } },
      outputs: [FluentBitOutput.loki({ host: 'loki', httpUser: 'fluent-bit', httpPassword: { secretName: 'loki', key: 'password' } })],
    });
    expect(manifests).toMatchSnapshot();
  });
});

describe('example app', () => {
  test('synthesizes valid manifests shipping to Loki, with the password from a Secret', () => {
    const app: App = buildApp('/tmp/log-collector-example-test');
    const manifests = synthManifests(app);
    const loki = findSections(configOf(manifests), 'OUTPUT', 'loki');
    expect(loki).toHaveLength(1);
    expect(entryValue(loki[0], 'HTTP_Passwd')).toBe('${FLB_LOKI_HTTP_PASSWD}');
    expect(main(manifests).env).toContainEqual({
      name: 'FLB_LOKI_HTTP_PASSWD', valueFrom: { secretKeyRef: { name: 'loki-credentials', key: 'password' } },
    });
    expect(one(manifests, 'ServiceMonitor').metadata.labels.release).toBe('kube-prometheus-stack');
    // the kubernetes filter nests annotations under `kubernetes`: a top-level name would remove nothing
    expect(entryValue(loki[0], 'Remove_Keys')).toBe("$kubernetes['annotations']");
  });
});
