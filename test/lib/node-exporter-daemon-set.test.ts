import { App, Chart, Testing } from 'cdk8s';
import { NodeRequirement } from '../../src/agent/node-requirement';
import { RolloutBudget, UpdateStrategy } from '../../src/agent/update-strategy';
import { NodeAgentDaemonSet } from '../../src/constructs/node-agent-daemon-set';
import {
  NodeExporterCollector, NodeExporterDaemonSet, NodeExporterDaemonSetProps, NodeExporterListenAddress,
} from '../../src/constructs/node-exporter-daemon-set';
import { exporterArgs } from '../../src/node-exporter/args';
import { KNOWN_COLLECTORS } from '../../src/node-exporter/collectors';
import { Manifest, synthManifests } from '../util/manifests';

function synth(props?: NodeExporterDaemonSetProps): { manifests: Manifest[]; construct: NodeExporterDaemonSet } {
  const chart = Testing.chart();
  const construct = new NodeExporterDaemonSet(chart, 'metrics', props);
  return { manifests: synthManifests(chart), construct };
}

const ofKind = (manifests: Manifest[], kind: string): Manifest[] => manifests.filter((m) => m.kind === kind);
const one = (manifests: Manifest[], kind: string): Manifest => {
  const list = ofKind(manifests, kind);
  expect(list).toHaveLength(1);
  return list[0];
};
const podSpec = (manifests: Manifest[]) => one(manifests, 'DaemonSet').spec.template.spec;
const container = (manifests: Manifest[], name: string) => podSpec(manifests).containers.find((c: Manifest) => c.name === name);

describe('defaults: new NodeExporterDaemonSet(chart, "metrics")', () => {
  const { manifests } = synth();
  const ds = one(manifests, 'DaemonSet');
  const pod = ds.spec.template.spec;
  const exporter = container(manifests, 'node-exporter');

  test('named node-exporter in monitoring, one exporter container with the pinned image', () => {
    expect(ds.metadata.name).toBe('node-exporter');
    expect(ds.metadata.namespace).toBe('monitoring');
    expect(pod.containers.map((c: Manifest) => c.name)).toEqual(['node-exporter']);
    expect(exporter.image).toBe('quay.io/prometheus/node-exporter:v1.12.1');
    expect(exporter.imagePullPolicy).toBe('IfNotPresent');
  });

  test('host network and PID, the exporter args the pure builder makes, node IP from the downward API', () => {
    expect(pod.hostNetwork).toBe(true);
    expect(pod.hostPID).toBe(true);
    expect(pod.dnsPolicy).toBe('ClusterFirstWithHostNet');
    expect(exporter.args).toEqual(exporterArgs({ port: 9100, listen: 'node-ip' }));
    expect(exporter.args).toContain('--web.listen-address=[$(HOST_IP)]:9100');
    expect(exporter.env).toEqual([{ name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }]);
  });

  test('port 9100 declared as hostPort = containerPort', () => {
    expect(exporter.ports).toEqual([{ name: 'metrics', containerPort: 9100, hostPort: 9100, protocol: 'TCP' }]);
  });

  test('/proc, /sys and / mounted read-only; / and /sys with HostToContainer', () => {
    const volumes = Object.fromEntries(pod.volumes.map((v: Manifest) => [v.name, v.hostPath?.path]));
    expect(volumes).toEqual({ proc: '/proc', sys: '/sys', root: '/' });
    const mounts = Object.fromEntries(exporter.volumeMounts.map((m: Manifest) => [m.mountPath, m]));
    expect(Object.keys(mounts).sort()).toEqual(['/host/proc', '/host/root', '/host/sys']);
    for (const m of Object.values(mounts) as Manifest[]) expect(m.readOnly).toBe(true);
    expect(mounts['/host/root']).toMatchObject({ name: 'root', mountPropagation: 'HostToContainer' });
    expect(mounts['/host/sys']).toMatchObject({ name: 'sys', mountPropagation: 'HostToContainer' });
    expect(mounts['/host/proc'].name).toBe('proc');
  });

  test('non-root 65534, drop ALL, no privilege escalation, RuntimeDefault seccomp, read-only root fs', () => {
    expect(exporter.securityContext).toMatchObject({
      runAsUser: 65534,
      runAsGroup: 65534,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
    });
    expect(exporter.securityContext.capabilities.add).toBeUndefined();
    const seccomp = exporter.securityContext.seccompProfile ?? pod.securityContext?.seccompProfile;
    expect(seccomp).toEqual({ type: 'RuntimeDefault' });
    expect(pod.securityContext.runAsNonRoot).toBe(true);
  });

  test('tolerates every taint and keeps off virtual nodes and non-linux nodes', () => {
    expect(pod.tolerations).toEqual([{ operator: 'Exists' }]);
    expect(pod.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });
    const expressions = pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms
      .flatMap((t: Manifest) => t.matchExpressions);
    expect(expressions).toEqual(expect.arrayContaining([
      { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
      { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
    ]));
  });

  test('readiness and liveness probe the exporter over HTTP on its port', () => {
    for (const probe of [exporter.readinessProbe, exporter.livenessProbe]) {
      expect(probe.httpGet).toEqual({ path: '/', port: 9100, scheme: 'HTTP' });
    }
    expect(exporter.startupProbe).toBeUndefined();
  });

  test('update pace 10% / 0', () => {
    expect(ds.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%', maxSurge: 0 } });
  });

  test('requests 100m / 180Mi with memory limit = request and no CPU limit', () => {
    expect(exporter.resources).toEqual({ requests: { cpu: '100m', memory: '180Mi' }, limits: { memory: '180Mi' } });
  });

  test('ServiceAccount without a token, no RBAC', () => {
    const sa = one(manifests, 'ServiceAccount');
    expect(sa.metadata).toMatchObject({ name: 'node-exporter', namespace: 'monitoring' });
    expect(sa.automountServiceAccountToken).toBe(false);
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(pod.serviceAccountName).toBe('node-exporter');
    expect(ofKind(manifests, 'ClusterRole')).toEqual([]);
  });

  test('priorityClassName comes from the base', () => {
    expect(pod.priorityClassName).toBe('system-node-critical');
  });

  test('a headless Service whose selector matches the pods and whose port targets the exporter', () => {
    const svc = one(manifests, 'Service');
    expect(svc.metadata).toMatchObject({ name: 'node-exporter', namespace: 'monitoring' });
    expect(svc.spec.clusterIP).toBe('None');
    expect(svc.spec.ports).toEqual([{ name: 'metrics', port: 9100, targetPort: 'metrics', protocol: 'TCP' }]);
    const podLabels = ds.spec.template.metadata.labels;
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(podLabels[k]).toBe(v);
    expect(Object.keys(svc.spec.selector).length).toBeGreaterThan(0);
  });

  test('no ServiceMonitor unless asked for', () => {
    expect(ofKind(manifests, 'ServiceMonitor')).toEqual([]);
  });

  test('snapshot (second net)', () => {
    expect(manifests).toMatchSnapshot();
  });
});

test('the collector enum lists exactly the known collectors', () => {
  expect(Object.values(NodeExporterCollector).sort()).toEqual([...KNOWN_COLLECTORS]);
});

describe('options', () => {
  test('ALL_INTERFACES listens on :port and needs no HOST_IP', () => {
    const { manifests } = synth({ listenAddress: NodeExporterListenAddress.ALL_INTERFACES });
    const exporter = container(manifests, 'node-exporter');
    expect(exporter.args).toContain('--web.listen-address=:9100');
    expect(exporter.env ?? []).toEqual([]);
  });

  test('another port moves the args, the host port, the probes and the Service', () => {
    const { manifests, construct } = synth({ port: 9200 });
    const exporter = container(manifests, 'node-exporter');
    expect(construct.port).toBe(9200);
    expect(exporter.args).toContain('--web.listen-address=[$(HOST_IP)]:9200');
    expect(exporter.ports).toEqual([{ name: 'metrics', containerPort: 9200, hostPort: 9200, protocol: 'TCP' }]);
    expect(exporter.readinessProbe.httpGet.port).toBe(9200);
    expect(one(manifests, 'Service').spec.ports[0].port).toBe(9200);
  });

  test('collectors are enabled and disabled through the typed list', () => {
    const { manifests } = synth({
      enableCollectors: [NodeExporterCollector.SYSTEMD, NodeExporterCollector.PROCESSES],
      disableCollectors: [NodeExporterCollector.ZFS],
    });
    const args: string[] = container(manifests, 'node-exporter').args;
    expect(args.filter((a) => /^--(no-)?collector\.[a-z_]+$/.test(a))).toEqual([
      '--collector.processes', '--collector.systemd', '--no-collector.zfs',
    ]);
  });

  test('name, namespace, image, excludes, extraArgs and resources', () => {
    const { manifests } = synth({
      name: 'host-metrics',
      namespace: 'obs',
      image: 'prom/node-exporter:v1.9.1',
      netDevicesExclude: '^(veth.*|cali.*)$',
      extraArgs: ['--collector.textfile.directory=/host/root/var/lib/node_exporter'],
      resources: { cpuRequest: '50m', memoryRequest: '64Mi' },
    });
    const ds = one(manifests, 'DaemonSet');
    expect(ds.metadata).toMatchObject({ name: 'host-metrics', namespace: 'obs' });
    const exporter = container(manifests, 'node-exporter');
    expect(exporter.image).toBe('prom/node-exporter:v1.9.1');
    expect(exporter.args).toContain('--collector.netdev.device-exclude=^(veth.*|cali.*)$');
    expect(exporter.args[exporter.args.length - 1]).toBe('--collector.textfile.directory=/host/root/var/lib/node_exporter');
    expect(exporter.resources).toEqual({ requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '64Mi' } });
    expect(one(manifests, 'Service').metadata).toMatchObject({ name: 'host-metrics', namespace: 'obs' });
  });

  test('tolerateAllTaints false falls back to the base tolerations plus the given ones', () => {
    const { manifests } = synth({ tolerateAllTaints: false, tolerations: [{ key: 'nvidia.com/gpu', operator: 'Exists' as never, effect: 'NoSchedule' as never }] });
    const keys = podSpec(manifests).tolerations.map((t: Manifest) => t.key);
    expect(keys).toContain('node-role.kubernetes.io/control-plane');
    expect(keys).toContain('nvidia.com/gpu');
    expect(podSpec(manifests).tolerations).not.toContainEqual({ operator: 'Exists' });
  });

  test('a custom update pace without surge is kept', () => {
    const { manifests } = synth({ updateStrategy: UpdateStrategy.oneAtATime() });
    expect(one(manifests, 'DaemonSet').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: 1, maxSurge: 0 });
  });

  test('priorityClassName is passed to the base', () => {
    const { manifests } = synth({ priorityClassName: 'system-cluster-critical' });
    expect(podSpec(manifests).priorityClassName).toBe('system-cluster-critical');
  });
});

describe('kube-rbac-proxy', () => {
  const { manifests } = synth({ kubeRbacProxy: {}, serviceMonitor: {} });
  const pod = podSpec(manifests);
  const exporter = container(manifests, 'node-exporter');
  const proxy = container(manifests, 'kube-rbac-proxy');

  test('the exporter listens on 127.0.0.1:9101 (kube-prometheus\'s node-exporter DaemonSet) and declares it; the proxy serves TLS on the host port 9100', () => {
    expect(exporter.args).toContain('--web.listen-address=127.0.0.1:9101');
    expect(exporter.ports).toEqual([{ name: 'upstream', containerPort: 9101, hostPort: 9101, protocol: 'TCP' }]);
    expect(exporter.env ?? []).toEqual([]);
    expect(proxy.image).toBe('quay.io/brancz/kube-rbac-proxy:v0.21.0');
    expect(proxy.args).toEqual(['--secure-listen-address=[$(HOST_IP)]:9100', '--upstream=http://127.0.0.1:9101/']);
    expect(proxy.env).toEqual([{ name: 'HOST_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } }]);
    expect(proxy.ports).toEqual([{ name: 'https', containerPort: 9100, hostPort: 9100, protocol: 'TCP' }]);
    expect(proxy.securityContext).toMatchObject({ runAsUser: 65532, runAsGroup: 65532, runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(proxy.readinessProbe.tcpSocket.port).toBe(9100);
  });

  test('the exporter probes go to 127.0.0.1, where it listens', () => {
    expect(exporter.readinessProbe.httpGet).toEqual({ host: '127.0.0.1', path: '/', port: 9101, scheme: 'HTTP' });
    expect(exporter.livenessProbe.httpGet.host).toBe('127.0.0.1');
  });

  test('the ServiceAccount token is mounted and may create TokenReviews and SubjectAccessReviews', () => {
    expect(pod.automountServiceAccountToken).toBe(true);
    const role = one(manifests, 'ClusterRole');
    expect(role.rules).toEqual([
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    const binding = one(manifests, 'ClusterRoleBinding');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'node-exporter', namespace: 'monitoring' }]);
  });

  test('Service and ServiceMonitor use https with the Prometheus token and skip verifying the self-signed certificate', () => {
    expect(one(manifests, 'Service').spec.ports).toEqual([{ name: 'https', port: 9100, targetPort: 'https', protocol: 'TCP' }]);
    const endpoint = one(manifests, 'ServiceMonitor').spec.endpoints[0];
    expect(endpoint).toMatchObject({
      port: 'https',
      scheme: 'https',
      bearerTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      tlsConfig: { insecureSkipVerify: true },
    });
  });

  test('a TLS Secret is mounted into the proxy and verified by the ServiceMonitor', () => {
    const r = synth({ kubeRbacProxy: { tlsSecretName: 'node-exporter-tls', requireTlsSecret: true }, serviceMonitor: {} });
    const p = container(r.manifests, 'kube-rbac-proxy');
    expect(p.args).toEqual([
      '--secure-listen-address=[$(HOST_IP)]:9100', '--upstream=http://127.0.0.1:9101/',
      '--tls-cert-file=/etc/kube-rbac-proxy/tls/tls.crt', '--tls-private-key-file=/etc/kube-rbac-proxy/tls/tls.key',
    ]);
    expect(p.volumeMounts).toEqual([{ name: 'proxy-tls', mountPath: '/etc/kube-rbac-proxy/tls', readOnly: true }]);
    expect(podSpec(r.manifests).volumes).toContainEqual(expect.objectContaining({ name: 'proxy-tls', secret: expect.objectContaining({ secretName: 'node-exporter-tls' }) }));
    // The exporter does not see the key.
    expect(container(r.manifests, 'node-exporter').volumeMounts.map((m: Manifest) => m.name)).not.toContain('proxy-tls');
    expect(one(r.manifests, 'ServiceMonitor').spec.endpoints[0].tlsConfig).toEqual({
      ca: { secret: { name: 'node-exporter-tls', key: 'ca.crt' } }, serverName: 'node-exporter.monitoring.svc',
    });
  });

  test('ALL_INTERFACES with a distinct upstream port: the exporter declares its loopback port', () => {
    const r = synth({ listenAddress: NodeExporterListenAddress.ALL_INTERFACES, kubeRbacProxy: { upstreamPort: 9101 } });
    expect(container(r.manifests, 'node-exporter').args).toContain('--web.listen-address=127.0.0.1:9101');
    expect(container(r.manifests, 'node-exporter').ports).toEqual([{ name: 'upstream', containerPort: 9101, hostPort: 9101, protocol: 'TCP' }]);
    expect(container(r.manifests, 'kube-rbac-proxy').args).toEqual(['--secure-listen-address=:9100', '--upstream=http://127.0.0.1:9101/']);
    expect(container(r.manifests, 'kube-rbac-proxy').env ?? []).toEqual([]);
  });
});

describe('ServiceMonitor', () => {
  const { manifests } = synth({ serviceMonitor: { interval: '15s', scrapeTimeout: '10s', labels: { release: 'kube-prometheus-stack' } } });
  const sm = one(manifests, 'ServiceMonitor');
  const svc = one(manifests, 'Service');

  test('monitoring.coreos.com/v1 in the agent namespace, with the labels the Prometheus selects', () => {
    expect(sm.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(sm.metadata).toMatchObject({ name: 'node-exporter', namespace: 'monitoring' });
    expect(sm.metadata.labels.release).toBe('kube-prometheus-stack');
  });

  test('selects the Service (its labels, its namespace) and scrapes its port over http', () => {
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) expect(svc.metadata.labels[k]).toBe(v);
    expect(sm.spec.namespaceSelector).toEqual({ matchNames: ['monitoring'] });
    expect(sm.spec.endpoints).toHaveLength(1);
    expect(sm.spec.endpoints[0]).toMatchObject({ port: 'metrics', scheme: 'http', interval: '15s', scrapeTimeout: '10s' });
    expect(sm.spec.endpoints[0].bearerTokenFile).toBeUndefined();
  });

  test('relabels instance to the node name', () => {
    expect(sm.spec.endpoints[0].relabelings).toEqual([{
      action: 'replace', sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'instance', regex: '(.*)', replacement: '$1',
    }]);
  });

  test('interval defaults to 30s', () => {
    expect(one(synth({ serviceMonitor: {} }).manifests, 'ServiceMonitor').spec.endpoints[0].interval).toBe('30s');
  });

  test('a bad interval and a timeout above the interval are errors', () => {
    expect(() => synth({ serviceMonitor: { interval: '30 seconds' } })).toThrow(/serviceMonitor\.interval "30 seconds" is not a Prometheus duration/);
    expect(() => synth({ serviceMonitor: { interval: '10s', scrapeTimeout: '1m' } })).toThrow(/scrapeTimeout 1m exceeds the interval 10s/);
  });
});

describe('checks at synth', () => {
  test.each([0, -1, 65536, 100000])('port %p is outside 1–65535', (port) => {
    expect(() => synth({ port })).toThrow(/NodeExporterDaemonSet .*metrics: port must be an integer between 1 and 65535, got/);
  });

  test('kubeRbacProxy.upstreamPort out of range', () => {
    expect(() => synth({ kubeRbacProxy: { upstreamPort: 70000 } })).toThrow(/kubeRbacProxy\.upstreamPort must be an integer between 1 and 65535/);
  });

  test('a port used by two containers of the pod', () => {
    expect(() => synth({ sidecars: [{ name: 'textfile', image: 'busybox:1.36', ports: [{ name: 'x', containerPort: 9100 }] }] }))
      .toThrow(/port 9100\/TCP is used by two containers, "node-exporter" and "textfile"/);
    expect(() => synth({ kubeRbacProxy: { upstreamPort: 9101 }, sidecars: [{ name: 'textfile', image: 'busybox:1.36', ports: [{ name: 'x', containerPort: 9101 }] }] }))
      .toThrow(/port 9101\/TCP is used by two containers, "node-exporter" and "textfile"/);
  });

  test('the exporter on the proxy\'s port is refused (they race for it on the host network); the default 9101 works on every interface too', () => {
    expect(() => synth({ kubeRbacProxy: { upstreamPort: 9100 } }))
      .toThrow(/kubeRbacProxy.upstreamPort 9100 is the proxy's own port.*Leave upstreamPort unset \(9101, as kube-prometheus\)/);
    expect(() => synth({ listenAddress: NodeExporterListenAddress.ALL_INTERFACES, kubeRbacProxy: { upstreamPort: 9100 } })).toThrow(/race/);
    const args = container(synth({ listenAddress: NodeExporterListenAddress.ALL_INTERFACES, kubeRbacProxy: {} }).manifests, 'node-exporter').args;
    expect(args).toContain('--web.listen-address=127.0.0.1:9101');
  });

  test('surge is an error', () => {
    expect(() => synth({ updateStrategy: UpdateStrategy.conservative() }))
      .toThrow(/NodeExporterDaemonSet test\/metrics: invalid props:[\s\S]*updateStrategy: maxSurge 1 with host port\(s\) 9100\/TCP.*deadlocks/);
    const surge10 = UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(0), maxSurge: RolloutBudget.percent(10) });
    expect(() => synth({ updateStrategy: surge10 }))
      .toThrow(/maxSurge 10% with host port\(s\) 9100\/TCP/);
  });

  test('kube-rbac-proxy without TLS material when TLS is required', () => {
    expect(() => synth({ kubeRbacProxy: { requireTlsSecret: true } })).toThrow(/requireTlsSecret is true but kubeRbacProxy\.tlsSecretName is not set/);
  });

  test('an unknown collector', () => {
    expect(() => synth({ enableCollectors: ['gpu' as NodeExporterCollector] }))
      .toThrow(/metrics: prop enableCollectors\[0\] must be a NodeExporterCollector value such as NodeExporterCollector.ARP \("arp"\), got string "gpu"/);
    expect(() => synth({ disableCollectors: ['filesytem' as NodeExporterCollector] })).toThrow(/did you mean "filesystem"\?/);
  });

  test('an unknown listen address', () => {
    expect(() => synth({ listenAddress: 'everywhere' as NodeExporterListenAddress })).toThrow(/prop listenAddress must be one of NodeExporterListenAddress.NODE_IP or ALL_INTERFACES \("node-ip", "all-interfaces"\), got string "everywhere"/);
  });
});

describe('two agents binding one host port in one app', () => {
  test('two NodeExporterDaemonSets on overlapping nodes: an error naming both', () => {
    const app = Testing.app();
    const a = new Chart(app, 'a');
    const b = new Chart(app, 'b');
    new NodeExporterDaemonSet(a, 'metrics');
    new NodeExporterDaemonSet(b, 'metrics', { name: 'node-exporter-2' });
    expect(() => app.synth()).toThrow(/a\/metrics\/Agent.*b\/metrics\/Agent.*host port 9100\/TCP/s);
  });

  test('different ports, or node sets that exclude each other, are fine', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'c');
    new NodeExporterDaemonSet(chart, 'one');
    new NodeExporterDaemonSet(chart, 'two', { name: 'node-exporter-2', port: 9200 });
    expect(() => synthManifests(app)).not.toThrow();

    const app2 = Testing.app();
    const chart2 = new Chart(app2, 'c');
    new NodeExporterDaemonSet(chart2, 'gpu', { nodeSelector: { 'kubernetes.io/os': 'linux', 'pool': 'gpu' } });
    new NodeExporterDaemonSet(chart2, 'cpu', { name: 'node-exporter-cpu', nodeSelector: { 'kubernetes.io/os': 'linux', 'pool': 'cpu' } });
    expect(() => synthManifests(app2)).not.toThrow();
  });

  test('a node-exporter behind kube-rbac-proxy and another kind of agent on the same host port', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'c');
    const exporter = new NodeExporterDaemonSet(chart, 'metrics', { kubeRbacProxy: {} });
    expect(exporter.agent.hostPorts).toEqual([{ port: 9101, protocol: 'TCP', container: 'node-exporter' }, { port: 9100, protocol: 'TCP', container: 'kube-rbac-proxy' }]);
    new NodeAgentDaemonSet(chart, 'other', {
      image: 'example.com/other-agent:1.0.0', hostNetwork: true, ports: [{ name: 'http', containerPort: 9100 }],
    });
    expect(() => app.synth()).toThrow(/c\/metrics\/Agent.*c\/other.*9100\/TCP/s);
  });

  test('node requirements that exclude each other keep two exporters on one port apart', () => {
    const app = Testing.app();
    const chart = new Chart(app, 'c');
    new NodeExporterDaemonSet(chart, 'a', { nodeRequirements: [NodeRequirement.exists('metrics-a')] });
    new NodeExporterDaemonSet(chart, 'b', { name: 'node-exporter-b', nodeRequirements: [NodeRequirement.doesNotExist('metrics-a')] });
    expect(() => synthManifests(app)).not.toThrow();
  });
});

test('output is deterministic', () => {
  const render = () => {
    const app = new App();
    const chart = new Chart(app, 'c');
    new NodeExporterDaemonSet(chart, 'metrics', { kubeRbacProxy: {}, serviceMonitor: { labels: { z: '1', a: '2' } } });
    return JSON.stringify(synthManifests(chart));
  };
  expect(render()).toBe(render());
});

