import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import { ApiObject, Chart, JsonPatch, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import * as yaml from 'yaml';
import { AgentEnvValue } from '../../src/agent/container-inputs';
import { NodeRequirement } from '../../src/agent/node-requirement';
import { HostPathType, MountPropagation, TaintEffect, TolerationOperator } from '../../src/agent/options';
import { UpdateStrategy } from '../../src/agent/update-strategy';
import {
  DriverReadinessCheck, GpuDriverDaemonSet, GpuDriverDaemonSetProps, GpuDriverShape, GpuDriverShapeKind, GpuNodeSelection,
} from '../../src/constructs/gpu-driver-daemon-set';
import { gpuResourceRequests } from '../../src/gpu/driver-checks';
import { startupBudgetSeconds } from '../../src/rollout/startup-budget';
import { termsMatch } from '../../src/scheduling/node-affinity';
import { Manifest, synthManifests, validateManifests } from '../util/manifests';
import { REPO } from '../util/paths';
import { upstreamObject } from '../util/upstream';

const MODULE_AND_DAEMONS = 'test -f /sys/module/nvidia/refcnt && { [ ! -f /run/nvidia/validations/.driver-daemons-status ] '
  + '|| [ "$(cat /run/nvidia/validations/.driver-daemons-status)" = Ready ]; }';
const DRIVER_IMAGE = 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04';
const INSTALLER_IMAGE = 'gcr.io/cos-cloud/cos-gpu-installer:v2.1.10';

function build(props: Partial<GpuDriverDaemonSetProps> = {}) {
  const chart = new Chart(Testing.app(), 'chart', { namespace: 'gpu-system' });
  const driver = new GpuDriverDaemonSet(chart, 'nvidia', { image: DRIVER_IMAGE, ...props });
  const manifests = synthManifests(chart);
  const ds = manifests.find((m: Manifest) => m.kind === 'DaemonSet');
  return { chart, driver, manifests, ds, pod: ds.spec.template.spec };
}

/** The last node-affinity term (with the default selection, the one on gpu-operator's nvidia.com/gpu.present). */
function expressions(pod: Manifest): Manifest[] {
  const terms = pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
  return terms[terms.length - 1].matchExpressions;
}

function allContainers(pod: Manifest): Manifest[] {
  return [...(pod.initContainers ?? []), ...pod.containers];
}

describe('driver-container shape (default)', () => {
  const { ds, pod, driver } = build();
  const driverContainer = pod.containers[0];

  test('one DaemonSet named gpu-driver in the chart namespace, one container after the driver manager', () => {
    expect(ds.metadata.name).toBe('gpu-driver');
    expect(ds.metadata.namespace).toBe('gpu-system');
    expect(pod.containers).toHaveLength(1);
    expect(pod.initContainers.map((c: Manifest) => c.name)).toEqual(['k8s-driver-manager']);
    expect(driverContainer.name).toBe('nvidia-driver');
    expect(driverContainer.image).toBe(DRIVER_IMAGE);
    expect(driver.shape).toBe(GpuDriverShapeKind.DRIVER_CONTAINER);
    expect(driver.agent.daemonSet).toBeDefined();
  });

  test('runs only on GPU nodes (NFD PCI labels or nvidia.com/gpu.present=true) and steps aside where the driver is managed elsewhere', () => {
    const terms = pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
    expect(terms.map((t: Manifest) => t.matchExpressions.at(-1))).toEqual([
      'feature.node.kubernetes.io/pci-10de.present', 'feature.node.kubernetes.io/pci-0300_10de.present',
      'feature.node.kubernetes.io/pci-0302_10de.present', 'nvidia.com/gpu.present',
    ].map((key) => ({ key, operator: 'In', values: ['true'] })));
    const exprs = expressions(pod);
    expect(exprs).toContainEqual({ key: 'nvidia.com/gpu.present', operator: 'In', values: ['true'] });
    expect(exprs).toContainEqual({ key: 'cloud.google.com/gke-gpu-driver-version', operator: 'DoesNotExist' });
    expect(exprs).toContainEqual({ key: 'nvidia.com/gpu.deploy.driver', operator: 'NotIn', values: ['false', 'pre-installed'] });
    expect(exprs.map((e: Manifest) => e.key)).not.toContain('feature.node.kubernetes.io/kernel-version.full');
  });

  test('tolerates nvidia.com/gpu NoSchedule plus the explicit control-plane taints, nothing wider', () => {
    expect(pod.tolerations).toEqual([
      { key: 'node-role.kubernetes.io/control-plane', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node-role.kubernetes.io/master', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
    ]);
  });

  test('system-node-critical, hostPID, privileged with allowPrivilegeEscalation true, root', () => {
    expect(pod.priorityClassName).toBe('system-node-critical');
    expect(pod.hostPID).toBe(true);
    expect(driverContainer.securityContext).toMatchObject({
      privileged: true, allowPrivilegeEscalation: true, runAsUser: 0, readOnlyRootFilesystem: false,
    });
    expect(driverContainer.securityContext.seLinuxOptions).toBeUndefined();
  });

  test('mounts exactly what gpu-operator gives nvidia-driver-ctr: no host /lib/modules, /usr/src or /dev', () => {
    // The stock driver image writes its own /lib/modules and /usr/src; host mounts there break it or wipe the host's tree.
    expect(driverContainer.volumeMounts).toEqual([
      { name: 'run-nvidia', mountPath: '/run/nvidia', mountPropagation: 'Bidirectional', readOnly: false },
      { name: 'run-nvidia-fabricmanager', mountPath: '/run/nvidia-fabricmanager', readOnly: false },
      { name: 'run-nvidia-topologyd', mountPath: '/run/nvidia-topologyd', readOnly: false },
      { name: 'var-log', mountPath: '/var/log', readOnly: false },
      { name: 'os-release', mountPath: '/host-etc/os-release', readOnly: true },
      { name: 'mlnx-ofed-usr-src', mountPath: '/run/mellanox/drivers/usr/src', mountPropagation: 'HostToContainer', readOnly: false },
      { name: 'run-mellanox-drivers', mountPath: '/run/mellanox/drivers', mountPropagation: 'HostToContainer', readOnly: false },
      { name: 'host-sys-devices-system', mountPath: '/sys/devices/system', readOnly: false },
      { name: 'firmware-search-path', mountPath: '/sys/module/firmware_class/parameters/path', readOnly: false },
      { name: 'nv-firmware', mountPath: '/lib/firmware', readOnly: false },
    ]);
    const hostPaths = pod.volumes.map((v: Manifest) => v.hostPath.path);
    for (const forbidden of ['/lib/modules', '/usr/src', '/dev']) expect(hostPaths).not.toContain(forbidden);
    const volumes = Object.fromEntries(pod.volumes.map((v: Manifest) => [v.name, v.hostPath]));
    expect(volumes['run-nvidia']).toEqual({ path: '/run/nvidia', type: 'DirectoryOrCreate' });
    expect(volumes['os-release']).toEqual({ path: '/etc/os-release', type: 'File' });
    expect(volumes['host-sys-devices-system']).toEqual({ path: '/sys/devices/system', type: 'Directory' });
    expect(volumes['nv-firmware']).toEqual({ path: '/run/nvidia/driver/lib/firmware', type: 'DirectoryOrCreate' });
    expect(volumes['firmware-search-path']).toEqual({ path: '/sys/module/firmware_class/parameters/path', type: 'File' });
  });

  test('never requests nvidia.com/gpu and sets NVIDIA_VISIBLE_DEVICES=void', () => {
    expect(gpuResourceRequests(pod)).toEqual([]);
    expect(Object.keys(driverContainer.resources.limits)).toEqual(['memory']);
    expect(driverContainer.env).toContainEqual({ name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' });
  });

  test('modest requests, a memory limit large enough for a build', () => {
    expect(driverContainer.resources).toEqual({ requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '4Gi' } });
  });

  test('OnDelete by default', () => {
    expect(ds.spec.updateStrategy).toEqual({ type: 'OnDelete' });
  });

  test('startupProbe budget covers 20 minutes of build and creates the ready marker', () => {
    const probe = driverContainer.startupProbe;
    const budget = startupBudgetSeconds({
      periodSeconds: probe.periodSeconds, failureThreshold: probe.failureThreshold, initialDelaySeconds: probe.initialDelaySeconds,
    });
    expect(budget).toBeGreaterThanOrEqual(1200);
    expect(budget - probe.periodSeconds).toBeLessThan(1200);
    expect(driver.startupBudgetSeconds).toBe(budget);
    // upstream's startup-probe.sh checks (assets/state-driver/0400_configmap.yaml): module loaded, daemons Ready, nvidia-smi
    expect(probe.exec.command).toEqual(['sh', '-c', `${MODULE_AND_DAEMONS} && nvidia-smi && mkdir -p /run/nvidia/validations && touch /run/nvidia/validations/.driver-ctr-ready`]);
  });

  test('readiness runs nvidia-smi; preStop clears the ready marker', () => {
    expect(driverContainer.readinessProbe.exec.command).toEqual(['sh', '-c', 'nvidia-smi']);
    expect(driverContainer.lifecycle.preStop.exec.command).toEqual(['rm', '-f', '/run/nvidia/validations/.driver-ctr-ready', '/run/nvidia/validations/.driver-daemons-status']);
  });

  test('a grace period for unloading the driver', () => {
    expect(pod.terminationGracePeriodSeconds).toBe(120);
  });
});

describe('driver manager (driver-container shape)', () => {
  const { pod, manifests } = build();
  const manager = pod.initContainers[0];

  test('runs k8s-driver-manager uninstall_driver, pinned, privileged, as gpu-operator does', () => {
    expect(manager.image).toBe('nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0');
    expect(manager.command).toEqual(['driver-manager']);
    expect(manager.args).toEqual(['uninstall_driver']);
    expect(manager.securityContext).toMatchObject({ privileged: true, runAsUser: 0 });
  });

  test('env: own node, void devices, never evicts nor drains (so never cordons), bounded drain timeout, own namespace, config digest', () => {
    const digest = pod.containers[0].env.find((e: Manifest) => e.name === 'DRIVER_CONFIG_DIGEST').value;
    expect(manager.env).toEqual([
      { name: 'DRAIN_DELETE_EMPTYDIR_DATA', value: 'false' },
      { name: 'DRAIN_POD_SELECTOR_LABEL', value: '' },
      { name: 'DRAIN_TIMEOUT_SECONDS', value: '300s' },
      { name: 'DRAIN_USE_FORCE', value: 'false' },
      { name: 'DRIVER_CONFIG_DIGEST', value: digest },
      { name: 'ENABLE_AUTO_DRAIN', value: 'false' },
      { name: 'ENABLE_GPU_POD_EVICTION', value: 'false' },
      { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
      { name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' },
      { name: 'OPERATOR_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ]);
  });

  test('mounts as gpu-operator: /run/nvidia Bidirectional, host root read-only at /host, /sys, MOFED root', () => {
    expect(manager.volumeMounts).toEqual([
      { name: 'run-nvidia', mountPath: '/run/nvidia', mountPropagation: 'Bidirectional', readOnly: false },
      { name: 'host-root', mountPath: '/host', mountPropagation: 'HostToContainer', readOnly: true },
      { name: 'host-sys', mountPath: '/sys', readOnly: false },
      { name: 'run-mellanox-drivers', mountPath: '/run/mellanox/drivers', mountPropagation: 'HostToContainer', readOnly: false },
    ]);
    const volumes = Object.fromEntries(pod.volumes.map((v: Manifest) => [v.name, v.hostPath]));
    expect(volumes['host-root']).toEqual({ path: '/', type: 'Directory' });
    expect(volumes['host-sys']).toEqual({ path: '/sys', type: 'Directory' });
    // The host root and /sys stay out of the driver container.
    const driverMounts = pod.containers[0].volumeMounts.map((m: Manifest) => m.name);
    expect(driverMounts).not.toContain('host-root');
    expect(driverMounts).not.toContain('host-sys');
  });

  test('RBAC: least privilege for relabelling its node and finding GPU holders (DRA claims), no eviction; token mounted', () => {
    const role = manifests.find((m: Manifest) => m.kind === 'ClusterRole');
    expect(role.rules).toEqual([
      { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['resource.k8s.io'], resources: ['resourceclaims'], verbs: ['get', 'list'] },
    ]);
    const binding = manifests.find((m: Manifest) => m.kind === 'ClusterRoleBinding');
    expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: 'gpu-driver', namespace: 'gpu-system' }]);
    expect(pod.automountServiceAccountToken).toBe(true);
  });

  // gpu-operator's assets/state-driver/0210_clusterrole.yaml, the role its k8s-driver-manager runs with: every
  // verb granted here is granted there too (ours leaves out cordons, evictions and drains, which it never does).
  test('RBAC: every verb is one gpu-operator grants its own driver manager', () => {
    const upstreamRules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] = upstreamObject('gpu-operator/0210_clusterrole.json', 'ClusterRole').rules;
    const granted = new Set(upstreamRules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}/${v}`)))));
    const ours = manifests.find((m: Manifest) => m.kind === 'ClusterRole').rules as typeof upstreamRules;
    const asked = ours.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.flatMap((res) => r.verbs.map((v) => `${g}/${res}/${v}`))));
    expect(asked.length).toBeGreaterThan(0);
    expect(asked.filter((a) => !granted.has(a))).toEqual([]);
    // what upstream grants beyond: the node's cordon (update, list, watch), evictions
    expect([...granted].filter((g) => !asked.includes(g))).toEqual(expect.arrayContaining(['/nodes/update', '/pods/eviction/create']));
  });

  test('driverManager: false drops the init container, its volumes and the RBAC; the image is overridable', () => {
    const off = build({ driverManager: false });
    expect(off.pod.initContainers).toBeUndefined();
    expect(off.manifests.map((m: Manifest) => m.kind)).not.toContain('ClusterRole');
    expect(off.pod.volumes.map((v: Manifest) => v.name)).not.toContain('host-root');
    expect(off.pod.automountServiceAccountToken).toBe(false);
    const pinned = build({ driverManagerImage: 'registry.example/k8s-driver-manager:v0.6.10' });
    expect(pinned.pod.initContainers[0].image).toBe('registry.example/k8s-driver-manager:v0.6.10');
    expect(() => build({ extraHostPaths: [{ name: 'host-sys', hostPath: '/sys/kernel' }] })).toThrow(/the volume name "host-sys" is used by the driver's own mounts/);
  });

  test('the installer shape runs no driver manager', () => {
    const { pod: installerPod, manifests: installerManifests } = build({ image: INSTALLER_IMAGE, shape: GpuDriverShape.installer() });
    expect(installerPod.initContainers.map((c: Manifest) => c.name)).toEqual(['nvidia-driver-installer']);
    expect(installerManifests.map((m: Manifest) => m.kind)).not.toContain('ClusterRole');
  });
});

describe('driver-container options', () => {
  test('MODULE_LOADED readiness checks /sys/module/nvidia/refcnt; custom marker', () => {
    const { pod, driver } = build({ shape: GpuDriverShape.driverContainer({ readinessCheck: DriverReadinessCheck.MODULE_LOADED, readyMarker: '/run/nvidia/ready' }) });
    expect(driver.runbook()).toContain('-c nvidia-driver -- cat /sys/module/nvidia/refcnt');
    const c = pod.containers[0];
    expect(c.readinessProbe.exec.command).toEqual(['sh', '-c', 'test -e /sys/module/nvidia/refcnt']);
    expect(c.startupProbe.exec.command[2]).toBe(`${MODULE_AND_DAEMONS} && mkdir -p /run/nvidia && touch /run/nvidia/ready`);
    expect(c.lifecycle.preStop.exec.command).toEqual(['rm', '-f', '/run/nvidia/ready', '/run/nvidia/validations/.driver-daemons-status']);
  });

  test('failureThreshold derived from the declared build time', () => {
    const shape = GpuDriverShape.driverContainer({ buildTimeSeconds: 3600, startupPeriodSeconds: 20, startupInitialDelaySeconds: 0 });
    const { pod, driver } = build({ shape });
    expect(pod.containers[0].startupProbe).toMatchObject({ periodSeconds: 20, failureThreshold: 180 });
    expect(driver.startupBudgetSeconds).toBe(3600);
  });

  test('an explicit budget shorter than the build time is an error naming the fix', () => {
    expect(() => build({ shape: GpuDriverShape.driverContainer({ startupFailureThreshold: 30 }) }))
      .toThrow(/GpuDriverDaemonSet chart\/nvidia: invalid props:[\s\S]*shape startupFailureThreshold: the startupProbe budget is 6m[\s\S]*Set failureThreshold to at least 114/);
  });

  test('an explicit budget that covers the build is kept', () => {
    const { pod } = build({ shape: GpuDriverShape.driverContainer({ startupFailureThreshold: 200 }) });
    expect(pod.containers[0].startupProbe.failureThreshold).toBe(200);
  });

  test.each([
    [{ buildTimeSeconds: 0 }, /shape buildTimeSeconds/],
    [{ startupPeriodSeconds: 1.5 }, /shape startupPeriodSeconds/],
    [{ readyMarker: 'relative/path' }, /shape readyMarker/],
    [{ readyMarker: '/run/nvidia/$(reboot)' }, /used in a shell command/],
  ])('rejects %o', (options, message) => {
    expect(() => build({ shape: GpuDriverShape.driverContainer(options) })).toThrow(message);
  });
});

describe('installer shape (GKE-style)', () => {
  const { pod, driver } = build({
    image: INSTALLER_IMAGE,
    shape: GpuDriverShape.installer({
      command: ['/cos-gpu-installer', 'install'],
      args: ['--version=latest'],
      extraInitContainers: [{ name: 'partition-gpus', image: 'gcr.io/example/partition:1.0', mounts: [{ volume: 'dev', mountPath: '/dev' }] }],
    }),
  });

  test('a privileged installer init container holds the driver mounts, then extra init containers', () => {
    expect(driver.shape).toBe(GpuDriverShapeKind.INSTALLER);
    expect(pod.initContainers.map((c: Manifest) => c.name)).toEqual(['nvidia-driver-installer', 'partition-gpus']);
    const installer = pod.initContainers[0];
    expect(installer).toMatchObject({ image: INSTALLER_IMAGE, command: ['/cos-gpu-installer', 'install'], args: ['--version=latest'] });
    expect(installer.securityContext).toMatchObject({ privileged: true, allowPrivilegeEscalation: true });
    expect(installer.volumeMounts).toContainEqual({ name: 'run-nvidia', mountPath: '/run/nvidia', mountPropagation: 'Bidirectional', readOnly: false });
    expect(installer.volumeMounts.map((m: Manifest) => m.mountPath)).toEqual(['/run/nvidia', '/dev', '/lib/modules', '/usr/src', '/host-etc/os-release', '/var/log']);
    expect(installer.resources).toEqual({ requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '4Gi' } });
  });

  test('the main container is an unprivileged pause container without mounts', () => {
    expect(pod.containers).toHaveLength(1);
    const pause = pod.containers[0];
    expect(pause.image).toBe('registry.k8s.io/pause:3.10');
    expect(pause.securityContext).toMatchObject({ privileged: false, allowPrivilegeEscalation: false, runAsNonRoot: true, runAsUser: 65535 });
    expect(pause.volumeMounts).toBeUndefined();
    expect(pause.startupProbe).toBeUndefined();
    expect(driver.startupBudgetSeconds).toBeUndefined();
  });

  test('no container requests a GPU; the installer and pause keep NVIDIA_VISIBLE_DEVICES=void', () => {
    expect(gpuResourceRequests(pod)).toEqual([]);
    for (const c of allContainers(pod)) {
      expect(Object.keys({ ...c.resources.requests, ...c.resources.limits }).sort()).toEqual(['cpu', 'memory']);
    }
    expect(pod.initContainers[0].env).toContainEqual({ name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' });
    expect(pod.containers[0].env).toContainEqual({ name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' });
  });

  test('the same scheduling and privileges as the driver container', () => {
    expect(pod.hostPID).toBe(true);
    expect(pod.priorityClassName).toBe('system-node-critical');
    expect(expressions(pod)).toContainEqual({ key: 'nvidia.com/gpu.present', operator: 'In', values: ['true'] });
  });

  test('pause image configurable; seLinuxLevel lands on the installer', () => {
    const { pod: custom } = build({ image: INSTALLER_IMAGE, seLinuxLevel: 's0', shape: GpuDriverShape.installer({ pauseImage: 'example.com/pause:3.9' }) });
    expect(custom.containers[0].image).toBe('example.com/pause:3.9');
    expect(custom.initContainers[0].securityContext.seLinuxOptions).toEqual({ level: 's0' });
  });

  test('a Bidirectional extra mount in the unprivileged pause container is an error', () => {
    expect(() => build({
      image: INSTALLER_IMAGE,
      shape: GpuDriverShape.installer(),
      extraHostPaths: [{ name: 'shared', hostPath: '/run/shared', readOnly: false, propagation: MountPropagation.BIDIRECTIONAL, mountInMainContainer: true }],
    })).toThrow(/Bidirectional/);
  });
});

describe('GPU-node selection', () => {
  test('the seeds\' forms: node-role.kubernetes.io/gpu Exists, gpu-type value', () => {
    const exists = expressions(build({ gpuNodes: GpuNodeSelection.labelExists('node-role.kubernetes.io/gpu') }).pod);
    expect(exists).toContainEqual({ key: 'node-role.kubernetes.io/gpu', operator: 'Exists' });
    expect(exists.map((e: Manifest) => e.key)).not.toContain('nvidia.com/gpu.present');
    const typed = expressions(build({ gpuNodes: GpuNodeSelection.labelIn('gpu-type', ['nvidia-a100', 'nvidia-h100']) }).pod);
    expect(typed).toContainEqual({ key: 'gpu-type', operator: 'In', values: ['nvidia-a100', 'nvidia-h100'] });
  });

  test('custom requirements are ANDed', () => {
    const exprs = expressions(build({ gpuNodes: GpuNodeSelection.custom([NodeRequirement.exists('nvidia.com/gpu.product'), NodeRequirement.gt('nvidia.com/gpu.count', 0)]) }).pod);
    expect(exprs).toContainEqual({ key: 'nvidia.com/gpu.product', operator: 'Exists' });
    expect(exprs).toContainEqual({ key: 'nvidia.com/gpu.count', operator: 'Gt', values: ['0'] });
  });

  test('no GPU-node selection at all is an error (opt-outs alone match every node)', () => {
    expect(() => build({ gpuNodes: GpuNodeSelection.custom([]) }))
      .toThrow(/GpuDriverDaemonSet chart\/nvidia: invalid props:[\s\S]*gpuNodes: the driver is not restricted to GPU nodes/);
    expect(() => build({ gpuNodes: GpuNodeSelection.custom([NodeRequirement.notIn('gpu', ['none'])]) })).toThrow(/not restricted to GPU nodes/);
  });

  describe('stepAsideWhen: the nodes that meet a condition get no driver, the others keep it (both directions)', () => {
    const GPU = { 'nvidia.com/gpu.present': 'true', 'kubernetes.io/os': 'linux' };
    const runsOn = (pod: Manifest, labels: Record<string, string>) => termsMatch(
      pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms, { name: 'gpu-1', labels: { ...GPU, ...labels } });
    const { pod } = build({ stepAsideWhen: [NodeRequirement.in('gpu-owner', ['gpu-operator'])] });

    test('a node labelled gpu-owner=gpu-operator gets no driver; one without the label, or with another owner, gets it', () => {
      expect(runsOn(pod, { 'gpu-owner': 'gpu-operator' })).toBe(false);
      expect(runsOn(pod, {})).toBe(true);
      expect(runsOn(pod, { 'gpu-owner': 'us' })).toBe(true);
    });

    test('the built-in opt-outs still apply beside the given conditions', () => {
      expect(runsOn(pod, { 'nvidia.com/gpu.deploy.driver': 'pre-installed' })).toBe(false);
      expect(runsOn(pod, { 'nvidia.com/gpu.deploy.driver': 'false' })).toBe(false);
      expect(runsOn(pod, { 'cloud.google.com/gke-gpu-driver-version': 'latest' })).toBe(false);
    });

    test('Exists steps aside where the label is set, DoesNotExist where it is missing', () => {
      const exists = build({ stepAsideWhen: [NodeRequirement.exists('example.com/managed-driver')] }).pod;
      expect(runsOn(exists, { 'example.com/managed-driver': 'yes' })).toBe(false);
      expect(runsOn(exists, {})).toBe(true);
      const missing = build({ stepAsideWhen: [NodeRequirement.doesNotExist('example.com/our-driver')] }).pod;
      expect(runsOn(missing, {})).toBe(false);
      expect(runsOn(missing, { 'example.com/our-driver': 'yes' })).toBe(true);
    });

    test('Gt and Lt are refused, naming the prop (their negation needs a second term)', () => {
      expect(() => build({ stepAsideWhen: [NodeRequirement.gt('gpu-count', 8)] }))
        .toThrow(/GpuDriverDaemonSet chart\/nvidia: invalid props:[\s\S]*stepAsideWhen\[0\]: Gt on "gpu-count" cannot be a condition to step aside on/);
    });

    test('the old optOutRequirements (requirements a node had to meet) is refused with the migration', () => {
      expect(() => build({ optOutRequirements: [NodeRequirement.in('gpu-owner', ['gpu-operator'])] }))
        .toThrow(/optOutRequirements is replaced by stepAsideWhen: despite its name it listed requirements a node had to meet[\s\S]*notIn\(k, v\) becomes in\(k, v\)/);
    });
  });

  test('kernel pinning for precompiled images', () => {
    const { pod, driver } = build({ kernelVersions: ['5.15.0-1048-aws', '6.8.0-1015-aws'] });
    expect(expressions(pod)).toContainEqual({ key: 'feature.node.kubernetes.io/kernel-version.full', operator: 'In', values: ['5.15.0-1048-aws', '6.8.0-1015-aws'] });
    expect(driver.nodeRequirements.map((r) => r.key)).toContain('feature.node.kubernetes.io/kernel-version.full');
  });

  test('kernelVersions empty or not a label value is an error', () => {
    expect(() => build({ kernelVersions: [] })).toThrow(/kernelVersions is empty/);
    expect(() => build({ kernelVersions: ['5.15 generic'] })).toThrow(/kernelVersions: "5.15 generic" is not a valid label value/);
  });
});

describe('tolerations, priority, names', () => {
  test('tolerations are added to the nvidia.com/gpu one, never replace it: the driver still runs on a GPU pool tainted so', () => {
    const notReady = { key: 'node-agents.cdk8s.io/logs-not-ready', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE };
    const { pod } = build({ tolerations: [notReady], tolerateControlPlane: false });
    expect(pod.tolerations).toEqual([
      { key: 'nvidia.com/gpu', operator: 'Exists', effect: 'NoSchedule' },
      { key: 'node-agents.cdk8s.io/logs-not-ready', operator: 'Exists', effect: 'NoSchedule' },
    ]);
    // listing the GPU toleration too (as the examples did when tolerations replaced it) does not repeat it
    const listed = build({ tolerations: [{ key: 'nvidia.com/gpu', operator: TolerationOperator.EXISTS, effect: TaintEffect.NO_SCHEDULE }, notReady], tolerateControlPlane: false });
    expect(listed.pod.tolerations.map((t: Manifest) => t.key)).toEqual(['nvidia.com/gpu', 'node-agents.cdk8s.io/logs-not-ready']);
  });

  test('tolerateGpuTaint: false tolerates only what tolerations lists; control-plane ones stay unless turned off', () => {
    const { pod } = build({
      tolerations: [{ key: 'example.com/gpu-pool', operator: TolerationOperator.EQUAL, value: 'a100', effect: TaintEffect.NO_SCHEDULE }],
      tolerateGpuTaint: false,
      tolerateControlPlane: false,
    });
    expect(pod.tolerations).toEqual([{ key: 'example.com/gpu-pool', operator: 'Equal', value: 'a100', effect: 'NoSchedule' }]);
  });

  test('name, namespace, priority class and created namespace', () => {
    const chart = new Chart(Testing.app(), 'chart');
    new GpuDriverDaemonSet(chart, 'nvidia', { image: DRIVER_IMAGE, name: 'nvidia-driver', namespace: 'gpu-operator', createNamespace: true, priorityClassName: 'gpu-critical' });
    const manifests = synthManifests(chart);
    const ds = manifests.find((m: Manifest) => m.kind === 'DaemonSet');
    expect(ds.metadata).toMatchObject({ name: 'nvidia-driver', namespace: 'gpu-operator' });
    expect(ds.spec.template.spec.priorityClassName).toBe('gpu-critical');
    const ns = manifests.find((m: Manifest) => m.kind === 'Namespace');
    expect(ns.metadata.labels['pod-security.kubernetes.io/enforce']).toBe('privileged');
  });
});

describe('security and resources', () => {
  test('seLinuxLevel on the driver container; a malformed level is an error', () => {
    expect(build({ seLinuxLevel: 's0:c123,c456' }).pod.containers[0].securityContext.seLinuxOptions).toEqual({ level: 's0:c123,c456' });
    expect(() => build({ seLinuxLevel: 'system_u' })).toThrow(/seLinuxLevel "system_u" is not an SELinux MLS level/);
  });

  test('resources are configurable', () => {
    const { pod } = build({ resources: { cpuRequest: '200m', memoryRequest: '512Mi', memoryLimit: '8Gi' } });
    expect(pod.containers[0].resources).toEqual({ requests: { cpu: '200m', memory: '512Mi' }, limits: { memory: '8Gi' } });
  });

  test('requesting nvidia.com/gpu is an error that explains the deadlock', () => {
    expect(() => build({ extendedResources: { 'nvidia.com/gpu': '1' } }))
      .toThrow(/GpuDriverDaemonSet chart\/nvidia: invalid props:[\s\S]*extendedResources requests "nvidia.com\/gpu"[\s\S]*needs the driver first[\s\S]*deadlock/);
    expect(() => build({ shape: GpuDriverShape.installer(), extendedResources: { 'nvidia.com/mig-1g.5gb': '1' } })).toThrow(/nvidia.com\/mig-1g.5gb/);
  });

  test('other extended resources are requested and limited equally', () => {
    const { pod } = build({ extendedResources: { 'hugepages-2Mi': '64Mi' } });
    expect(pod.containers[0].resources.requests['hugepages-2Mi']).toBe('64Mi');
    expect(pod.containers[0].resources.limits['hugepages-2Mi']).toBe('64Mi');
  });

  test('overriding NVIDIA_VISIBLE_DEVICES is an error; other env is passed', () => {
    expect(() => build({ env: { NVIDIA_VISIBLE_DEVICES: AgentEnvValue.fromValue('all') } })).toThrow(/env sets NVIDIA_VISIBLE_DEVICES/);
    const { pod } = build({ env: { DRIVER_VERSION: AgentEnvValue.fromValue('550.90.07') } });
    expect(pod.containers[0].env).toEqual([
      { name: 'DRIVER_CONFIG_DIGEST', value: expect.stringMatching(/^[0-9a-f]{16}$/) },
      { name: 'DRIVER_VERSION', value: '550.90.07' },
      { name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' },
    ]);
  });

  test('extra host paths mount into the driver container; reserved names are refused', () => {
    const { pod } = build({ extraHostPaths: [{ name: 'gridd', hostPath: '/etc/nvidia/gridd', type: HostPathType.DIRECTORY }] });
    expect(pod.containers[0].volumeMounts).toContainEqual({ name: 'gridd', mountPath: '/etc/nvidia/gridd', readOnly: true });
    expect(() => build({ extraHostPaths: [{ name: 'dev', hostPath: '/dev/shm' }] })).toThrow(/the volume name "dev" is used by the driver's own mounts/);
    expect(() => build({ extraHostPaths: [{ name: 'nv-firmware', hostPath: '/opt/fw' }] })).toThrow(/the volume name "nv-firmware" is used by the driver's own mounts/);
  });
});

describe('update strategy', () => {
  test('RollingUpdate when asked, without surge', () => {
    const { ds } = build({ updateStrategy: UpdateStrategy.oneAtATime() });
    expect(ds.spec.updateStrategy).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
  });

  test('RollingUpdate with surge is an error', () => {
    expect(() => build({ updateStrategy: UpdateStrategy.conservative() }))
      .toThrow(/GpuDriverDaemonSet chart\/nvidia: invalid props:[\s\S]*RollingUpdate with maxSurge 1 would start a second driver pod/);
  });
});

describe('late checks on the rendered DaemonSet', () => {
  test('a GPU request added through an escape hatch fails validation', () => {
    const clean = new GpuDriverDaemonSet(new Chart(Testing.app(), 'chart'), 'nvidia', { image: DRIVER_IMAGE });
    expect(clean.node.validate()).toEqual([]);
    // The late checks run once, on the first validation (at synthesis, after every patch): patch first.
    const chart = new Chart(Testing.app(), 'chart');
    const driver = new GpuDriverDaemonSet(chart, 'nvidia', { image: DRIVER_IMAGE });
    ApiObject.of(driver.agent.daemonSet).addJsonPatch(
      JsonPatch.add('/spec/template/spec/containers/0/resources/limits/nvidia.com~1gpu', kplus.k8s.Quantity.fromNumber(1)),
    );
    const errors = driver.node.validate();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('GpuDriverDaemonSet chart/nvidia (DaemonSet gpu-driver): container "nvidia-driver" requests "nvidia.com/gpu"');
  });

  test('dropping privileged or the GPU affinity through an escape hatch fails validation', () => {
    const chart = new Chart(Testing.app(), 'chart');
    const driver = new GpuDriverDaemonSet(chart, 'nvidia', { image: DRIVER_IMAGE });
    ApiObject.of(driver.agent.daemonSet).addJsonPatch(
      JsonPatch.replace('/spec/template/spec/containers/0/securityContext/privileged', false),
      JsonPatch.remove('/spec/template/spec/affinity'),
    );
    const errors = driver.node.validate();
    // one message for the mount: the rendered-fields rule every agent's patched DaemonSet goes through
    expect(errors.filter((e) => e.includes('Bidirectional'))).toEqual([
      'GpuDriverDaemonSet chart/nvidia: DaemonSet "gpu-driver": container "nvidia-driver" mounts string "run-nvidia" with Bidirectional propagation, '
      + 'which the API server allows only in a privileged container; set privileged or use HostToContainer',
    ]);
    expect(errors.join('\n')).toContain('not restricted to GPU nodes');
  });

  test('surge or visible GPUs set through an escape hatch fail validation', () => {
    const chart = new Chart(Testing.app(), 'chart');
    const driver = new GpuDriverDaemonSet(chart, 'nvidia', { image: DRIVER_IMAGE });
    ApiObject.of(driver.agent.daemonSet).addJsonPatch(
      JsonPatch.replace('/spec/updateStrategy', {
        type: 'RollingUpdate',
        rollingUpdate: { maxUnavailable: kplus.k8s.IntOrString.fromNumber(0), maxSurge: kplus.k8s.IntOrString.fromNumber(1) },
      }),
      JsonPatch.replace('/spec/template/spec/containers/0/env/1/value', 'all'),
    );
    const errors = driver.node.validate().join('\n');
    expect(errors).toContain('RollingUpdate with maxSurge 1 would start a second driver pod');
    expect(errors).toContain('container "nvidia-driver" sets NVIDIA_VISIBLE_DEVICES to "all"');
  });
});

describe('runbook', () => {
  test('Markdown with the exact commands for this DaemonSet', () => {
    const { driver } = build();
    const md = driver.runbook({ manifestFile: 'dist/chart.k8s.yaml' });
    const sel = 'app.kubernetes.io/instance=gpu-driver,app.kubernetes.io/name=gpu-driver,node-agents.cdk8s.io/rollout-group=fleet';
    expect(md).toContain('# Upgrade runbook: DaemonSet `gpu-system/gpu-driver`');
    expect(md).toContain(`kubectl delete pod -n gpu-system -l ${sel} --field-selector "spec.nodeName=$NODE" --wait=true`);
    expect(md).toContain(`--timeout=${driver.startupBudgetSeconds! + 300}s`);
    expect(md).toContain('-c nvidia-driver -- nvidia-smi');
    expect(md).toContain('kubectl apply -f dist/chart.k8s.yaml');
    // the GPU-node selector of the runbook is the DaemonSet's own selection
    expect(md).toContain("kubectl get nodes -l 'nvidia.com/gpu.present=true,!cloud.google.com/gke-gpu-driver-version,nvidia.com/gpu.deploy.driver notin (false,pre-installed)'");
    expect(md).not.toContain('Switch to OnDelete');
    expect(driver.runbook({ manifestFile: 'dist/chart.k8s.yaml' })).toBe(md);
  });

  test('installer: readiness is the check, 25 minute default timeout', () => {
    const { driver } = build({ shape: GpuDriverShape.installer() });
    const md = driver.runbook();
    expect(md).not.toContain('kubectl exec');
    expect(md).toContain('--timeout=1500s');
  });

  test('RollingUpdate adds the switch to OnDelete and back with the declared budget', () => {
    const { driver } = build({ updateStrategy: UpdateStrategy.steady() });
    const md = driver.runbook();
    expect(md).toContain('"type":"OnDelete","rollingUpdate":null');
    expect(md).toContain('"rollingUpdate":{"maxUnavailable":"25%","maxSurge":0}');
  });

  test('skip label and wait-for selector come from the props; options set timeouts', () => {
    const { driver } = build({ upgradeSkipNodeLabel: 'example.com/hold-driver', upgradeWaitForPodSelector: 'batch.kubernetes.io/job-name' });
    const md = driver.runbook({ readyTimeoutSeconds: 3600, evictionTimeoutSeconds: 60, completionTimeoutSeconds: 600 });
    expect(md).toContain('label `example.com/hold-driver`');
    expect(md).toContain('kubectl get pods -A -l batch.kubernetes.io/job-name --field-selector');
    expect(md).toContain('--timeout=3600s');
    expect(md).toContain('--timeout=60s');
    expect(md).toContain('up to 10m');
  });

  test('the script is valid bash for this DaemonSet', () => {
    const { driver } = build();
    const script = driver.runbookScript();
    expect(script).toContain('NAMESPACE=gpu-system');
    expect(script).toContain('DAEMONSET=gpu-driver');
    const check = spawnSync('bash', ['-n'], { input: script });
    expect(check.status).toBe(0);
  });
});

describe('example app (examples/gpu-driver)', () => {
  const dist = path.join(REPO, 'examples', 'gpu-driver', 'dist');

  test('its committed YAML is valid and its runbook sits next to it', () => {
    const documents = yaml.parseAllDocuments(fs.readFileSync(path.join(dist, 'gpu-driver.k8s.yaml'), 'utf8')).map((d) => d.toJSON());
    validateManifests(documents);
    expect(documents.map((d: Manifest) => d.kind)).toContain('DaemonSet');
    const md = fs.readFileSync(path.join(dist, 'gpu-driver-upgrade.md'), 'utf8');
    expect(md).toContain('# Upgrade runbook: DaemonSet `gpu-driver/gpu-driver`');
    expect(md).toContain('kubectl apply -f examples/gpu-driver/dist/gpu-driver.k8s.yaml');
    expect(spawnSync('bash', ['-n', path.join(dist, 'gpu-driver-upgrade.sh')]).status).toBe(0);
  });
});
