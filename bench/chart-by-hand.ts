/**
 * The hand-written side of bench/chart.bench.ts: the objects the library writes for its chart (a
 * log collector, node-exporter and a GPU driver, each with three rollout waves), written by hand
 * with cdk8s-plus-28 the way the library itself renders them: cdk8s-plus' DaemonSet, containers,
 * volumes, probes and RBAC, and JSON patches for the fields cdk8s-plus-28 does not model
 * (updateStrategy, hostPID, priorityClassName, affinity, tolerations, exact resources and security
 * contexts). Values are written out literally: no checks, no computed defaults. The benchmark
 * confirms, untimed, that both sides write the same objects.
 */
import { createHash } from 'crypto';
import { ApiObject, Chart, Duration, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';

const GROUP_LABEL = 'node-agents.cdk8s.io/rollout-group';
const WAVE_LABEL = 'node-agents.cdk8s.io/rollout-wave';
const POD = '/spec/template/spec';
const secs = (n: number) => Duration.seconds(n);
const q = (s: string) => kplus.k8s.Quantity.fromString(s);

interface HandContainer {
  readonly props: kplus.ContainerProps;
  /** [mount path, volume name, read only, propagation?] */
  readonly mounts: Array<[string, string, boolean, kplus.MountPropagation?]>;
  readonly resources: kplus.k8s.ResourceRequirements;
  readonly securityContext: kplus.k8s.SecurityContext;
}

interface AgentIdentity {
  readonly name: string;
  readonly namespace: string;
  readonly component: string;
  readonly version: string;
}

interface HandAgent extends AgentIdentity {
  readonly podAnnotations?: { [key: string]: string };
  readonly hostNetwork: boolean;
  readonly hostPid: boolean;
  readonly automount: boolean;
  readonly grace: number;
  readonly runAsNonRoot: boolean;
  readonly containers: HandContainer[];
  readonly initContainers: HandContainer[];
  /** [name, host path, type] */
  readonly hostPaths: Array<[string, string, kplus.HostPathVolumeType]>;
  readonly configMap?: kplus.ConfigMap;
  /** Each node selector term's requirements before the wave's. */
  readonly terms: kplus.k8s.NodeSelectorRequirement[][];
  readonly exclusive?: string[];
  readonly tolerations: kplus.k8s.Toleration[];
  readonly strategy: (group: string) => kplus.k8s.DaemonSetUpdateStrategy;
}

const BASE_TERM: kplus.k8s.NodeSelectorRequirement[] = [
  { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
  { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
];

function labels(agent: AgentIdentity, withVersion: boolean): { [key: string]: string } {
  return {
    'app.kubernetes.io/component': agent.component,
    'app.kubernetes.io/instance': agent.name,
    'app.kubernetes.io/managed-by': 'cdk8s',
    'app.kubernetes.io/name': agent.name,
    'app.kubernetes.io/part-of': 'node-agents',
    ...(withVersion ? { 'app.kubernetes.io/version': agent.version } : {}),
  };
}

function waveRequirements(waves: string[], group: string): kplus.k8s.NodeSelectorRequirement[] {
  if (group !== 'fleet') {
    const earlier = waves.slice(0, waves.indexOf(group));
    return [
      { key: WAVE_LABEL, operator: 'In', values: [group] },
      ...earlier.map((w) => ({ key: WAVE_LABEL, operator: 'NotIn', values: [w] })),
    ];
  }
  return waves.map((w) => ({ key: WAVE_LABEL, operator: 'NotIn', values: [w] }));
}

function daemonSet(chart: Chart, agent: HandAgent, sa: kplus.ServiceAccount, waves: string[], group: string): void {
  const identity = { 'app.kubernetes.io/instance': agent.name, 'app.kubernetes.io/name': agent.name };
  const ds = new kplus.DaemonSet(chart, `${agent.name}-${group}`, {
    metadata: {
      name: group === 'fleet' ? agent.name : `${agent.name}-${group}`,
      namespace: agent.namespace,
      labels: labels(agent, true),
      // the wave's place in the rollout order (the fleet's DaemonSet last), which plan and doctor read
      annotations: { 'node-agents.cdk8s.io/rollout-wave-index': String(group === 'fleet' ? waves.length : waves.indexOf(group)) },
    },
    podMetadata: { labels: { ...labels(agent, true), [GROUP_LABEL]: group }, annotations: agent.podAnnotations },
    select: false,
    minReadySeconds: 10,
    serviceAccount: sa,
    automountServiceAccountToken: agent.automount,
    hostNetwork: agent.hostNetwork,
    dns: agent.hostNetwork ? { policy: kplus.DnsPolicy.CLUSTER_FIRST_WITH_HOST_NET } : undefined,
    terminationGracePeriod: secs(agent.grace),
  });
  ds.select(kplus.LabelSelector.of({ labels: { ...identity, [GROUP_LABEL]: group } }));
  const volumes = new Map<string, kplus.Volume>();
  for (const [name, path, type] of agent.hostPaths) volumes.set(name, kplus.Volume.fromHostPath(ds, `HostPath-${name}`, name, { path, type }));
  if (agent.configMap) volumes.set('config', kplus.Volume.fromConfigMap(ds, 'ConfigVolume', agent.configMap, { name: 'config' }));
  const ops: JsonPatch[] = [
    JsonPatch.add('/spec/updateStrategy', agent.strategy(group)),
    JsonPatch.add('/spec/revisionHistoryLimit', 10),
    JsonPatch.add(`${POD}/securityContext`, { runAsNonRoot: agent.runAsNonRoot, seccompProfile: { type: 'RuntimeDefault' } }),
  ];
  if (agent.hostPid) ops.push(JsonPatch.add(`${POD}/hostPid`, true));
  const add = (c: HandContainer, index: number, init: boolean) => {
    const container = init ? ds.addInitContainer(c.props) : ds.addContainer(c.props);
    for (const [path, volume, readOnly, propagation] of c.mounts) container.mount(path, volumes.get(volume)!, { readOnly, propagation });
    const at = `${POD}/${init ? 'initContainers' : 'containers'}/${index}`;
    ops.push(JsonPatch.add(`${at}/resources`, c.resources), JsonPatch.add(`${at}/securityContext`, c.securityContext));
  };
  agent.containers.forEach((c, i) => add(c, i, false));
  agent.initContainers.forEach((c, i) => add(c, i, true));
  const antiAffinity: kplus.k8s.PodAffinityTerm[] = [
    { labelSelector: { matchLabels: identity, matchExpressions: [{ key: GROUP_LABEL, operator: 'NotIn', values: [group] }] }, topologyKey: 'kubernetes.io/hostname' },
  ];
  if (agent.exclusive) {
    antiAffinity.push({
      labelSelector: { matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: agent.exclusive }] },
      namespaceSelector: {},
      topologyKey: 'kubernetes.io/hostname',
    });
  }
  ops.push(
    JsonPatch.add(`${POD}/priorityClassName`, 'system-node-critical'),
    JsonPatch.add(`${POD}/nodeSelector`, { 'kubernetes.io/os': 'linux' }),
    JsonPatch.add(`${POD}/affinity`, {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: agent.terms.map((term) => ({ matchExpressions: [...BASE_TERM, ...term, ...waveRequirements(waves, group)] })),
        },
      },
      podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: antiAffinity },
    }),
    JsonPatch.add(`${POD}/tolerations`, agent.tolerations),
    JsonPatch.remove(`/spec/template/metadata/labels/${kplus.Pod.ADDRESS_LABEL.replace(/~/g, '~0').replace(/\//g, '~1')}`),
  );
  ApiObject.of(ds).addJsonPatch(...ops);
}

function serviceAccount(chart: Chart, agent: HandAgent): kplus.ServiceAccount {
  return new kplus.ServiceAccount(chart, `${agent.name}-sa`, {
    metadata: { name: agent.name, namespace: agent.namespace, labels: labels(agent, false) },
    automountToken: agent.automount,
  });
}

/** The same rules as the library writes them: kplus.ClusterRole writes one rule per resource. */
function clusterRole(chart: Chart, agent: AgentIdentity, rules: kplus.k8s.PolicyRule[]): void {
  new kplus.k8s.KubeClusterRole(chart, `${agent.name}-role`, { metadata: { name: agent.name, labels: labels(agent, false) }, rules });
  new kplus.k8s.KubeClusterRoleBinding(chart, `${agent.name}-binding`, {
    metadata: { name: agent.name, labels: labels(agent, false) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: agent.name },
    subjects: [{ kind: 'ServiceAccount', name: agent.name, namespace: agent.namespace }],
  });
}

function quota(agent: AgentIdentity): kplus.k8s.KubeResourceQuotaProps {
  return {
    metadata: { name: `${agent.name}-system-node-critical`, namespace: agent.namespace, labels: labels(agent, false) },
    spec: {
      hard: { pods: q('1000000') },
      scopeSelector: { matchExpressions: [{ operator: 'In', scopeName: 'PriorityClass', values: ['system-node-critical'] }] },
    },
  };
}

const FLUENT_BIT_CONF = `# fluent-bit configuration generated by cdk8s-node-agents (LogCollectorDaemonSet).
# State (tail DB, filesystem buffer): /var/lib/log-collector.

[SERVICE]
    Flush                     1
    Grace                     55
    scheduler.cap             60
    scheduler.base            5
    Daemon                    Off
    Log_Level                 info
    Parsers_File              /fluent-bit/etc/parsers.conf
    HTTP_Server               On
    HTTP_Listen               0.0.0.0
    HTTP_Port                 2020
    Health_Check              On
    HC_Errors_Count           5
    HC_Retry_Failure_Count    2147483647
    HC_Period                 60
    storage.path              /var/lib/log-collector/flb-storage/
    storage.sync              normal
    storage.checksum          off
    storage.backlog.mem_limit 5M
    storage.max_chunks_up     64
    storage.metrics           on

[INPUT]
    Name                              tail
    Alias                             tail_containers
    Tag                               kube.*
    Path                              /var/log/containers/*.log
    Exclude_Path                      /var/log/containers/log-collector-*_observability_*.log
    multiline.parser                  docker, cri
    DB                                /var/lib/log-collector/tail-containers.db
    DB.locking                        true
    Read_from_Head                    On
    storage.type                      filesystem
    storage.pause_on_chunks_overlimit Off
    Skip_Long_Lines                   On
    Refresh_Interval                  10

[FILTER]
    Name                kubernetes
    Alias               kubernetes_metadata
    Match               kube.*
    Kube_URL            https://kubernetes.default.svc:443
    Kube_CA_File        /var/run/secrets/kubernetes.io/serviceaccount/ca.crt
    Kube_Token_File     /var/run/secrets/kubernetes.io/serviceaccount/token
    Kube_Tag_Prefix     kube.var.log.containers.
    DNS_Retries         24
    DNS_Wait_Time       5
    Merge_Log           On
    Keep_Log            Off
    K8S-Logging.Parser  On
    K8S-Logging.Exclude On

[OUTPUT]
    Name                     loki
    Alias                    loki
    Match                    *
    Host                     loki-gateway.monitoring.svc
    Port                     80
    tls                      Off
    Labels                   container=$kubernetes['container_name'], job=fluent-bit, namespace=$kubernetes['namespace_name']
    Auto_Kubernetes_Labels   Off
    Line_Format              json
    Retry_Limit              no_limits
    storage.total_limit_size 1G
`;
/** The config's checksum, as a team would compute it: sha256 of the ConfigMap's data (a new name per config: immutable). */
const CONFIG_HASH = createHash('sha256').update(JSON.stringify({ 'fluent-bit.conf': FLUENT_BIT_CONF })).digest('hex');

const DROP_ALL_RUNTIME_DEFAULT = { capabilities: { drop: ['ALL'] }, seccompProfile: { type: 'RuntimeDefault' } };
const PRIVILEGED: kplus.k8s.SecurityContext = {
  privileged: true,
  allowPrivilegeEscalation: true,
  readOnlyRootFilesystem: false,
  runAsNonRoot: false,
  runAsUser: 0,
  seccompProfile: { type: 'Unconfined' },
};

function logCollector(chart: Chart, waves: string[]): void {
  const agent0 = { name: 'log-collector', namespace: 'observability', component: 'log-collector', version: '5.1.1' };
  new kplus.k8s.KubeResourceQuota(chart, 'log-collector-quota', quota(agent0));
  const sa = new kplus.ServiceAccount(chart, 'log-collector-sa', {
    metadata: { name: agent0.name, namespace: agent0.namespace, labels: labels(agent0, false) },
    automountToken: true,
  });
  clusterRole(chart, agent0, [{ apiGroups: [''], resources: ['namespaces', 'pods'], verbs: ['get', 'list', 'watch'] }]);
  const configMap = new kplus.ConfigMap(chart, 'log-collector-config', {
    metadata: { name: `log-collector-config-${CONFIG_HASH.slice(0, 10)}`, namespace: agent0.namespace, labels: labels(agent0, false) },
    data: { 'fluent-bit.conf': FLUENT_BIT_CONF },
    immutable: true,
  });
  const agent: HandAgent = {
    ...agent0,
    podAnnotations: { 'checksum/config': CONFIG_HASH },
    hostNetwork: false,
    hostPid: false,
    automount: true,
    grace: 60,
    runAsNonRoot: false,
    containers: [{
      props: {
        name: 'fluent-bit',
        image: 'cr.fluentbit.io/fluent/fluent-bit:5.1.1',
        imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
        command: ['/fluent-bit/bin/fluent-bit'],
        args: ['-c', '/fluent-bit/etc/conf/fluent-bit.conf'],
        ports: [{ name: 'http', number: 2020 }],
        readiness: kplus.Probe.fromHttpGet('/api/v1/health', {
          port: 2020, initialDelaySeconds: secs(5), periodSeconds: secs(10), timeoutSeconds: secs(5), failureThreshold: 3,
        }),
        liveness: kplus.Probe.fromHttpGet('/api/v1/uptime', {
          port: 2020, initialDelaySeconds: secs(10), periodSeconds: secs(10), timeoutSeconds: secs(5), failureThreshold: 6,
        }),
        startup: kplus.Probe.fromHttpGet('/api/v1/uptime', { port: 2020, periodSeconds: secs(5), timeoutSeconds: secs(5), failureThreshold: 36 }),
      },
      mounts: [['/var/log', 'varlog', true], ['/var/lib/log-collector', 'state', false], ['/fluent-bit/etc/conf', 'config', true]],
      resources: { requests: { cpu: q('100m'), memory: q('128Mi') }, limits: { memory: q('512Mi') } },
      securityContext: {
        privileged: false,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: false,
        runAsUser: 0,
        runAsGroup: 0,
        ...DROP_ALL_RUNTIME_DEFAULT,
      },
    }],
    initContainers: [],
    hostPaths: [
      ['varlog', '/var/log', kplus.HostPathVolumeType.DIRECTORY],
      ['state', '/var/lib/log-collector', kplus.HostPathVolumeType.DIRECTORY_OR_CREATE],
    ],
    configMap,
    terms: [[]],
    tolerations: [{ operator: 'Exists' }],
    strategy: (group) => ({
      type: 'RollingUpdate',
      rollingUpdate: {
        maxUnavailable: group === 'canary' ? kplus.k8s.IntOrString.fromNumber(1) : kplus.k8s.IntOrString.fromString('25%'),
        maxSurge: kplus.k8s.IntOrString.fromNumber(0),
      },
    }),
  };
  for (const group of [...waves, 'fleet']) daemonSet(chart, agent, sa, waves, group);
}

function nodeExporter(chart: Chart, waves: string[]): void {
  const agent: HandAgent = {
    name: 'node-exporter',
    namespace: 'monitoring',
    component: 'exporter',
    version: 'v1.12.1',
    podAnnotations: { 'kubectl.kubernetes.io/default-container': 'node-exporter' },
    hostNetwork: true,
    hostPid: true,
    automount: false,
    grace: 30,
    runAsNonRoot: true,
    containers: [{
      props: {
        name: 'node-exporter',
        image: 'quay.io/prometheus/node-exporter:v1.12.1',
        imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
        args: [
          '--path.procfs=/host/proc',
          '--path.sysfs=/host/sys',
          '--path.rootfs=/host/root',
          '--path.udev.data=/host/root/run/udev/data',
          '--web.listen-address=[$(HOST_IP)]:9100',
          '--collector.filesystem.mount-points-exclude=^/(dev|proc|sys|run/credentials/.+|run/k3s/containerd/.+|var/lib/containers/storage/.+|var/lib/docker/.+|var/lib/kubelet/pods/.+)($|/)',
          '--collector.filesystem.fs-types-exclude=^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|erofs|sysfs|tracefs)$',
          '--collector.netclass.ignored-devices=^(veth.*|[a-f0-9]{15})$',
          '--collector.netdev.device-exclude=^(veth.*|[a-f0-9]{15})$',
          '--no-collector.btrfs',
          '--no-collector.hwmon',
          '--no-collector.wifi',
        ],
        envVariables: { HOST_IP: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.NODE_IP) },
        ports: [{ name: 'metrics', number: 9100, hostPort: 9100, protocol: kplus.Protocol.TCP }],
        readiness: kplus.Probe.fromHttpGet('/', {
          port: 9100, initialDelaySeconds: secs(0), periodSeconds: secs(10), timeoutSeconds: secs(5), failureThreshold: 3,
        }),
        liveness: kplus.Probe.fromHttpGet('/', {
          port: 9100, initialDelaySeconds: secs(0), periodSeconds: secs(10), timeoutSeconds: secs(5), failureThreshold: 3,
        }),
      },
      mounts: [
        ['/host/proc', 'proc', true],
        ['/host/sys', 'sys', true, kplus.MountPropagation.HOST_TO_CONTAINER],
        ['/host/root', 'root', true, kplus.MountPropagation.HOST_TO_CONTAINER],
      ],
      resources: { requests: { cpu: q('100m'), memory: q('180Mi') }, limits: { memory: q('180Mi') } },
      securityContext: {
        privileged: false,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        runAsUser: 65534,
        runAsGroup: 65534,
        ...DROP_ALL_RUNTIME_DEFAULT,
      },
    }],
    initContainers: [],
    hostPaths: [
      ['proc', '/proc', kplus.HostPathVolumeType.DIRECTORY],
      ['sys', '/sys', kplus.HostPathVolumeType.DIRECTORY],
      ['root', '/', kplus.HostPathVolumeType.DIRECTORY],
    ],
    terms: [[]],
    tolerations: [{ operator: 'Exists' }],
    strategy: (group) => ({
      type: 'RollingUpdate',
      rollingUpdate: {
        maxUnavailable: group === 'canary' ? kplus.k8s.IntOrString.fromNumber(1) : kplus.k8s.IntOrString.fromString('10%'),
        maxSurge: kplus.k8s.IntOrString.fromNumber(0),
      },
    }),
  };
  new kplus.k8s.KubeResourceQuota(chart, `${agent.name}-quota`, quota(agent));
  const sa = serviceAccount(chart, agent);
  for (const group of [...waves, 'fleet']) daemonSet(chart, agent, sa, waves, group);
  const identity = { 'app.kubernetes.io/instance': agent.name, 'app.kubernetes.io/name': agent.name };
  new kplus.k8s.KubeService(chart, 'node-exporter-svc', {
    metadata: { name: agent.name, namespace: agent.namespace, labels: { 'app.kubernetes.io/component': agent.component, ...identity } },
    spec: {
      clusterIp: 'None',
      ports: [{ name: 'metrics', port: 9100, targetPort: kplus.k8s.IntOrString.fromString('metrics'), protocol: 'TCP' }],
      selector: identity,
    },
  });
}

function gpuDriver(chart: Chart, waves: string[]): void {
  const digest = kplus.EnvValue.fromValue('89c6712c5a945dcd');
  const noDevices = kplus.EnvValue.fromValue('void');
  const marker = '/run/nvidia/validations/.driver-ctr-ready';
  const status = '/run/nvidia/validations/.driver-daemons-status';
  const gpuTerm = (label: string): kplus.k8s.NodeSelectorRequirement[] => [
    { key: 'cloud.google.com/gke-gpu-driver-version', operator: 'DoesNotExist' },
    { key: 'nvidia.com/gpu.deploy.driver', operator: 'NotIn', values: ['false', 'pre-installed'] },
    { key: label, operator: 'In', values: ['true'] },
  ];
  const bidirectional = kplus.MountPropagation.BIDIRECTIONAL;
  const hostToContainer = kplus.MountPropagation.HOST_TO_CONTAINER;
  const agent: HandAgent = {
    name: 'gpu-driver',
    namespace: 'kube-system',
    component: 'gpu-driver',
    version: '550.127.08-ubuntu22.04',
    hostNetwork: false,
    hostPid: true,
    automount: true,
    grace: 120,
    runAsNonRoot: false,
    containers: [{
      props: {
        name: 'nvidia-driver',
        image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04',
        imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
        envVariables: { DRIVER_CONFIG_DIGEST: digest, NVIDIA_VISIBLE_DEVICES: noDevices },
        startup: kplus.Probe.fromCommand(['sh', '-c', `test -f /sys/module/nvidia/refcnt && { [ ! -f ${status} ] || [ "$(cat ${status})" = Ready ]; } `
          + `&& nvidia-smi && mkdir -p /run/nvidia/validations && touch ${marker}`], {
          initialDelaySeconds: secs(60), periodSeconds: secs(10), failureThreshold: 114, timeoutSeconds: secs(60),
        }),
        readiness: kplus.Probe.fromCommand(['sh', '-c', 'nvidia-smi'], { periodSeconds: secs(60), failureThreshold: 3, timeoutSeconds: secs(60) }),
        lifecycle: { preStop: kplus.Handler.fromCommand(['rm', '-f', marker, status]) },
      },
      mounts: [
        ['/run/nvidia', 'run-nvidia', false, bidirectional],
        ['/run/nvidia-fabricmanager', 'run-nvidia-fabricmanager', false],
        ['/run/nvidia-topologyd', 'run-nvidia-topologyd', false],
        ['/var/log', 'var-log', false],
        ['/host-etc/os-release', 'os-release', true],
        ['/run/mellanox/drivers/usr/src', 'mlnx-ofed-usr-src', false, hostToContainer],
        ['/run/mellanox/drivers', 'run-mellanox-drivers', false, hostToContainer],
        ['/sys/devices/system', 'host-sys-devices-system', false],
        ['/sys/module/firmware_class/parameters/path', 'firmware-search-path', false],
        ['/lib/firmware', 'nv-firmware', false],
      ],
      resources: { requests: { cpu: q('100m'), memory: q('256Mi') }, limits: { memory: q('4Gi') } },
      securityContext: PRIVILEGED,
    }],
    initContainers: [{
      props: {
        name: 'k8s-driver-manager',
        image: 'nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0',
        imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
        command: ['driver-manager'],
        args: ['uninstall_driver'],
        envVariables: {
          DRAIN_DELETE_EMPTYDIR_DATA: kplus.EnvValue.fromValue('false'),
          DRAIN_POD_SELECTOR_LABEL: kplus.EnvValue.fromValue(''),
          DRAIN_TIMEOUT_SECONDS: kplus.EnvValue.fromValue('300s'),
          DRAIN_USE_FORCE: kplus.EnvValue.fromValue('false'),
          DRIVER_CONFIG_DIGEST: digest,
          ENABLE_AUTO_DRAIN: kplus.EnvValue.fromValue('false'),
          ENABLE_GPU_POD_EVICTION: kplus.EnvValue.fromValue('false'),
          NODE_NAME: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.NODE_NAME),
          NVIDIA_VISIBLE_DEVICES: noDevices,
          OPERATOR_NAMESPACE: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAMESPACE),
        },
      },
      mounts: [
        ['/run/nvidia', 'run-nvidia', false, bidirectional],
        ['/host', 'host-root', true, hostToContainer],
        ['/sys', 'host-sys', false],
        ['/run/mellanox/drivers', 'run-mellanox-drivers', false, hostToContainer],
      ],
      resources: { requests: { cpu: q('100m'), memory: q('128Mi') }, limits: { memory: q('512Mi') } },
      securityContext: PRIVILEGED,
    }],
    hostPaths: [
      ['run-nvidia', '/run/nvidia', kplus.HostPathVolumeType.DIRECTORY_OR_CREATE],
      ['run-nvidia-fabricmanager', '/run/nvidia-fabricmanager', kplus.HostPathVolumeType.DIRECTORY_OR_CREATE],
      ['run-nvidia-topologyd', '/run/nvidia-topologyd', kplus.HostPathVolumeType.DIRECTORY_OR_CREATE],
      ['var-log', '/var/log', kplus.HostPathVolumeType.DIRECTORY],
      ['os-release', '/etc/os-release', kplus.HostPathVolumeType.FILE],
      ['mlnx-ofed-usr-src', '/run/mellanox/drivers/usr/src', kplus.HostPathVolumeType.DIRECTORY_OR_CREATE],
      ['run-mellanox-drivers', '/run/mellanox/drivers', kplus.HostPathVolumeType.DIRECTORY_OR_CREATE],
      ['host-sys-devices-system', '/sys/devices/system', kplus.HostPathVolumeType.DIRECTORY],
      ['firmware-search-path', '/sys/module/firmware_class/parameters/path', kplus.HostPathVolumeType.FILE],
      ['nv-firmware', '/run/nvidia/driver/lib/firmware', kplus.HostPathVolumeType.DIRECTORY_OR_CREATE],
      ['host-root', '/', kplus.HostPathVolumeType.DIRECTORY],
      ['host-sys', '/sys', kplus.HostPathVolumeType.DIRECTORY],
    ],
    terms: [
      gpuTerm('feature.node.kubernetes.io/pci-10de.present'),
      gpuTerm('feature.node.kubernetes.io/pci-0300_10de.present'),
      gpuTerm('feature.node.kubernetes.io/pci-0302_10de.present'),
      gpuTerm('nvidia.com/gpu.present'),
    ],
    exclusive: ['gpu-driver', 'nvidia-driver'],
    tolerations: [
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ],
    strategy: () => ({ type: 'OnDelete' }),
  };
  const sa = serviceAccount(chart, agent);
  clusterRole(chart, agent, [
    { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['resource.k8s.io'], resources: ['resourceclaims'], verbs: ['get', 'list'] },
  ]);
  for (const group of [...waves, 'fleet']) daemonSet(chart, agent, sa, waves, group);
}

/** The library chart's objects, written by hand into `chart`. */
export function handWrittenAgents(chart: Chart, waves: string[]): void {
  logCollector(chart, waves);
  nodeExporter(chart, waves);
  gpuDriver(chart, waves);
}
