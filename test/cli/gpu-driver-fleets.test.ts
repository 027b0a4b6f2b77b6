/**
 * Issue 23: the driver on real fleets, with or without gpu-operator, beside a pre-installed driver.
 *
 * Node labels and their sources, as upstream writes them:
 * - NFD (node-feature-discovery) `feature.node.kubernetes.io/pci-<class>_10de.present` (default
 *   `deviceLabelFields: [class, vendor]`) or `pci-10de.present` (gpu-operator's and the device
 *   plugin chart's NFD config, `deviceLabelFields: [vendor]`).
 * - gpu-operator's node-labelling controller (controllers/nodelabeling_controller.go
 *   `reconcileCommonGPULabel`, state_manager.go `gpuNodeLabels`): `nvidia.com/gpu.present=true` on a
 *   node with one of those NFD labels, and `nvidia.com/gpu.deploy.driver=true` (state labels).
 * - k8s-driver-manager (cmd/driver-manager/main.go `disableContainerizedDriver`):
 *   `nvidia.com/gpu.deploy.driver=pre-installed` where the host has a driver.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import * as yaml from 'yaml';
import { NodeRequirement } from '../../src/agent/node-requirement';
import { NodeAgentDaemonSetProps } from '../../src/agent/props';
import { Promotion, RolloutWave } from '../../src/agent/rollout';
import { daemonSetInfo } from '../../src/cli/coverage/manifests';
import { antiAffinitySeparates } from '../../src/cli/coverage/pod-affinity';
import { runCli } from '../../src/cli/run';
import { GpuDriverDaemonSet, GpuDriverDaemonSetProps, GpuDriverShape, GpuNodeSelection } from '../../src/constructs/gpu-driver-daemon-set';
import { NodeAgentDaemonSet } from '../../src/constructs/node-agent-daemon-set';
import { DEFAULT_DRIVER_MANAGER_IMAGE, driverManagerHasFastPath, managerTouchesCordon } from '../../src/gpu/driver-manager';
import { podStartupBudgetSeconds, READY_WAIT_SLACK_SECONDS, readyWaitSeconds } from '../../src/rollout/startup-budget';
import { termsMatch } from '../../src/scheduling/node-affinity';
import { Manifest, synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';
import { upstreamObject } from '../util/upstream';

const DRIVER_IMAGE = 'nvcr.io/nvidia/driver:595.91.07-ubuntu22.04';

function build(props: Partial<GpuDriverDaemonSetProps> = {}) {
  const chart = new Chart(Testing.app(), 'chart', { namespace: 'gpu-system' });
  const driver = new GpuDriverDaemonSet(chart, 'nvidia', { image: DRIVER_IMAGE, ...props });
  const manifests = synthManifests(chart);
  const ds = manifests.find((m: Manifest) => m.kind === 'DaemonSet');
  return { chart, driver, manifests, ds, pod: ds.spec.template.spec };
}

function schedulable(pod: Manifest, labels: Record<string, string>): boolean {
  const terms = pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
  const selector: Record<string, string> = pod.nodeSelector ?? {};
  const all: Record<string, string> = { 'kubernetes.io/os': 'linux', ...labels };
  return Object.entries(selector).every(([k, v]) => all[k] === v) && termsMatch(terms, { name: 'n', labels: all });
}

const GPU_OPERATOR_NODE = {
  'feature.node.kubernetes.io/pci-10de.present': 'true', 'nvidia.com/gpu.present': 'true', 'nvidia.com/gpu.deploy.driver': 'true',
};

describe('point 2: nodes whose driver is pre-installed or opted out', () => {
  const { pod } = build();

  test('a gpu-operator-labelled node gets the driver', () => {
    expect(schedulable(pod, GPU_OPERATOR_NODE)).toBe(true);
  });

  // k8s-driver-manager v0.12.0 cmd/driver-manager/main.go uninstallDriver: isHostDriver → label
  // gpu.deploy.driver=pre-installed, sleep 60 s, return an error (exit 1): the init container would fail forever.
  test('nvidia.com/gpu.deploy.driver=pre-installed keeps the pod off the node', () => {
    expect(schedulable(pod, { ...GPU_OPERATOR_NODE, 'nvidia.com/gpu.deploy.driver': 'pre-installed' })).toBe(false);
  });

  test('nvidia.com/gpu.deploy.driver=false keeps the pod off the node', () => {
    expect(schedulable(pod, { ...GPU_OPERATOR_NODE, 'nvidia.com/gpu.deploy.driver': 'false' })).toBe(false);
  });
});

describe('point 4: never two driver pods on one node, gpu-operator\'s included', () => {
  // gpu-operator's own driver DaemonSet, as it ships it, in its own namespace.
  const upstream = upstreamObject('gpu-operator/0500_daemonset.json', 'DaemonSet');
  const operatorDriver = daemonSetInfo({ ...upstream, metadata: { ...upstream.metadata, namespace: 'gpu-operator' } }, 'upstream');
  const { manifests } = build();
  const ours = daemonSetInfo(manifests.find((m: Manifest) => m.kind === 'DaemonSet'), 'ours');

  test('the anti-affinity term looks in every namespace (empty namespaceSelector)', () => {
    const terms = manifests.find((m: Manifest) => m.kind === 'DaemonSet').spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    expect(terms).toContainEqual({
      labelSelector: { matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: ['gpu-driver', 'nvidia-driver'] }] },
      namespaceSelector: {},
      topologyKey: 'kubernetes.io/hostname',
    });
  });

  // The scheduler's InterPodAffinity filter (pkg/scheduler/framework/plugins/interpodaffinity/filtering.go:
  // satisfyPodAntiAffinity for the incoming pod's terms, satisfyExistingPodsAntiAffinity for the existing pods'),
  // as src/cli/coverage/pod-affinity.ts models it.
  test('gpu-operator\'s driver pod in another namespace and ours exclude each other, whichever comes first', () => {
    expect(ours.namespace).not.toBe(operatorDriver.namespace);
    expect(antiAffinitySeparates(ours, operatorDriver)).toBe(true);
    expect(antiAffinitySeparates(operatorDriver, ours)).toBe(true);
  });
});

describe('point 6: generated scripts wait at least the startup budget the manifests give the driver pod', () => {
  // A driver whose build may take 30 minutes: the startupProbe budget is 60 + 10 × 174 = 1800 s.
  const props: Partial<GpuDriverDaemonSetProps> = {
    shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 30 * 60 }),
    rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all() },
  };
  const { driver, manifests } = build(props);
  const budget = driver.startupBudgetSeconds!;

  test('the budget is the one the manifests carry', () => {
    expect(budget).toBe(1800);
    for (const ds of manifests.filter((m: Manifest) => m.kind === 'DaemonSet')) {
      expect(podStartupBudgetSeconds(ds.spec.template.spec)).toBe(budget);
    }
  });

  test('the runbook script waits the budget plus the slack', () => {
    expect(driver.runbookScript()).toContain(`READY_TIMEOUT=${budget + READY_WAIT_SLACK_SECONDS}`);
  });

  test('node-agents label --manifests: the relabel steps wait for the new driver pod at least the budget', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpu-driver-waves-'));
    try {
      fs.writeFileSync(path.join(dir, 'driver.yaml'), manifests.map((m: Manifest) => yaml.stringify(m)).join('---\n'));
      let stdout = '';
      const code = runCli(['label', '--nodes', 'test/fixtures/label/gpu-cluster.json', '--wave', 'canary=0.3', '--manifests', dir], {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: () => undefined },
        cwd: REPO,
      });
      expect(code).toBe(0);
      const waits = [...stdout.matchAll(/kubectl wait pod --for=condition=Ready .* --timeout=(\d+)s/g)].map((m) => Number(m[1]));
      expect(waits.length).toBeGreaterThan(0);
      for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(budget);
      expect(waits).toContain(budget + READY_WAIT_SLACK_SECONDS);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('podStartupBudgetSeconds: the slowest container, kubelet defaults for unset fields, undefined without a startupProbe', () => {
    expect(podStartupBudgetSeconds({ containers: [{ name: 'a' }] })).toBeUndefined();
    expect(podStartupBudgetSeconds({ containers: [{ name: 'a', startupProbe: {} }] })).toBe(30);
    expect(podStartupBudgetSeconds({
      containers: [
        { name: 'a', startupProbe: { initialDelaySeconds: 60, periodSeconds: 10, failureThreshold: 120 } },
        { name: 'b', startupProbe: { periodSeconds: 10, failureThreshold: 12 } },
      ],
    })).toBe(1260);
    expect(podStartupBudgetSeconds({ containers: [{ name: 'a', startupProbe: { periodSeconds: 'x' } }] })).toBeUndefined();
    expect(readyWaitSeconds(undefined)).toBe(1500);
  });
});

describe('point 3: one owner of cordon state (the runbook), on the current and older driver managers', () => {
  // Cases of NVIDIA/k8s-driver-manager v0.12.0 cmd/driver-manager/main.go isGPUPodEvictionEnabled /
  // isAutoDrainEnabled / isDriverAutoUpgradePolicyEnabled (every CordonNode / UncordonNode call is behind them).
  test.each([
    ['upstream defaults (both unset), no annotation', {}, undefined, true],
    ['gpu-operator\'s DaemonSet env, no annotation', { ENABLE_GPU_POD_EVICTION: 'true', ENABLE_AUTO_DRAIN: 'false' }, undefined, true],
    ['gpu-operator\'s DaemonSet env, upgrade controller in charge', { ENABLE_GPU_POD_EVICTION: 'true', ENABLE_AUTO_DRAIN: 'false' }, 'true', false],
    ['annotation not exactly "true"', { ENABLE_GPU_POD_EVICTION: 'true' }, 'false', true],
    ['auto drain alone', { ENABLE_GPU_POD_EVICTION: 'false', ENABLE_AUTO_DRAIN: 'true' }, undefined, true],
    ['both off', { ENABLE_GPU_POD_EVICTION: 'false', ENABLE_AUTO_DRAIN: 'false' }, undefined, false],
  ])('managerTouchesCordon: %s', (_name, env, annotation, expected) => {
    expect(managerTouchesCordon(env as Record<string, string>, annotation)).toBe(expected);
  });

  const envOf = (c: Manifest) => Object.fromEntries(c.env.filter((e: Manifest) => 'value' in e).map((e: Manifest) => [e.name, e.value]));

  test.each([
    ['the default manager (v0.12.0)', {}],
    ['an older pinned manager (v0.6.10)', { driverManagerImage: 'nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.6.10' }],
  ])('%s never cordons or uncordons, annotated node or not', (_name, props) => {
    const { pod } = build(props);
    const env = envOf(pod.initContainers[0]);
    expect(managerTouchesCordon(env, undefined)).toBe(false);
    expect(managerTouchesCordon(env, 'true')).toBe(false);
  });

  test('no infinite drain wait: DRAIN_TIMEOUT_SECONDS is bounded (upstream "0s" waits forever)', () => {
    const env = envOf(build().pod.initContainers[0]);
    expect(env.DRAIN_TIMEOUT_SECONDS).toBe('300s');
  });

  test('current pins: k8s-driver-manager v0.12.0, with the fast path (DRIVER_CONFIG_DIGEST on manager and driver, equal)', () => {
    const { pod } = build();
    expect(pod.initContainers[0].image).toBe(DEFAULT_DRIVER_MANAGER_IMAGE);
    expect(DEFAULT_DRIVER_MANAGER_IMAGE).toBe('nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.12.0');
    expect(driverManagerHasFastPath(DEFAULT_DRIVER_MANAGER_IMAGE)).toBe(true);
    expect(driverManagerHasFastPath('nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.6.10')).toBe(false);
    expect(driverManagerHasFastPath('nvcr.io/nvidia/cloud-native/k8s-driver-manager:v0.10.0')).toBe(true);
    expect(driverManagerHasFastPath('registry.example/k8s-driver-manager@sha256:0123')).toBeUndefined();
    const digest = envOf(pod.initContainers[0]).DRIVER_CONFIG_DIGEST;
    expect(digest).toMatch(/^[0-9a-f]{16}$/);
    expect(envOf(pod.containers[0]).DRIVER_CONFIG_DIGEST).toBe(digest);
    // a new driver image is a new digest (the manager reloads); the same props the same digest (a restart keeps the driver)
    expect(envOf(build({ image: 'nvcr.io/nvidia/driver:595.58.03-ubuntu22.04' }).pod.initContainers[0]).DRIVER_CONFIG_DIGEST).not.toBe(digest);
    expect(envOf(build().pod.initContainers[0]).DRIVER_CONFIG_DIGEST).toBe(digest);
  });
});

describe('point 1: GPU nodes as a cluster without gpu-operator labels them, and as gpu-operator does', () => {
  const { pod } = build();

  test.each([
    ['NFD with gpu-operator\'s / the device plugin chart\'s config (deviceLabelFields [vendor])', { 'feature.node.kubernetes.io/pci-10de.present': 'true' }, true],
    ['NFD\'s default config, 3D controller', { 'feature.node.kubernetes.io/pci-0302_10de.present': 'true' }, true],
    ['NFD\'s default config, VGA controller', { 'feature.node.kubernetes.io/pci-0300_10de.present': 'true' }, true],
    ['gpu-operator\'s label alone (or set by hand)', { 'nvidia.com/gpu.present': 'true' }, true],
    ['gpu-operator after the GPU is gone', { 'nvidia.com/gpu.present': 'false' }, false],
    ['a CPU node with NFD labels', { 'feature.node.kubernetes.io/pci-1d0f.present': 'true' }, false],
    ['an NFD-only GPU node opted out', { 'feature.node.kubernetes.io/pci-10de.present': 'true', 'nvidia.com/gpu.deploy.driver': 'false' }, false],
  ])('%s', (_name, labels, expected) => {
    expect(schedulable(pod, labels)).toBe(expected);
  });

  test('GpuNodeSelection.gpuOperatorLabel() keeps the old selection (gpu-operator\'s label only)', () => {
    const only = build({ gpuNodes: GpuNodeSelection.gpuOperatorLabel() }).pod;
    expect(schedulable(only, { 'feature.node.kubernetes.io/pci-10de.present': 'true' })).toBe(false);
    expect(schedulable(only, { 'nvidia.com/gpu.present': 'true' })).toBe(true);
  });

  test('the alert on GPU nodes without a driver ORs the same labels; the runbook lists nodes per selector', () => {
    const { driver, manifests } = build({ alerts: {} });
    const rules = manifests.find((m: Manifest) => m.kind === 'PrometheusRule').spec.groups.flatMap((g: Manifest) => g.rules);
    const expr: string = rules.find((r: Manifest) => r.alert === 'GpuNodeWithoutReadyDriver').expr;
    expect(expr).toContain('label_feature_node_kubernetes_io_pci_10de_present=~"true"');
    expect(expr).toContain('label_nvidia_com_gpu_present=~"true"');
    expect(expr.match(/\nor\n/g)).toHaveLength(3);
    const md = driver.runbook();
    expect(md).toContain("kubectl get nodes -l 'feature.node.kubernetes.io/pci-10de.present=true,!cloud.google.com/gke-gpu-driver-version,nvidia.com/gpu.deploy.driver notin (false,pre-installed)'");
    expect(md).toContain("kubectl get nodes -l 'nvidia.com/gpu.present=true,!cloud.google.com/gke-gpu-driver-version,nvidia.com/gpu.deploy.driver notin (false,pre-installed)'");
  });
});

describe('NodeAgentDaemonSet nodeRequirementAlternatives (the base the GPU selection uses)', () => {
  function agentPod(props: Partial<NodeAgentDaemonSetProps>) {
    const chart = new Chart(Testing.app(), 'chart', { namespace: 'ns' });
    new NodeAgentDaemonSet(chart, 'a', { image: 'registry.example/agent:1.0.0', ...props });
    return synthManifests(chart).find((m: Manifest) => m.kind === 'DaemonSet').spec.template.spec;
  }

  test('one term per alternative, each with the common requirements; ORed by the scheduler', () => {
    const pod = agentPod({
      excludeVirtualNodes: false,
      nodeRequirements: [NodeRequirement.notIn('pool', ['spot'])],
      nodeRequirementAlternatives: [[NodeRequirement.in('a', ['1'])], [NodeRequirement.exists('b')]],
    });
    expect(pod.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['spot'] }, { key: 'a', operator: 'In', values: ['1'] }] },
      { matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['spot'] }, { key: 'b', operator: 'Exists' }] },
    ]);
    expect(schedulable(pod, { b: 'x' })).toBe(true);
    expect(schedulable(pod, { a: '1', pool: 'spot' })).toBe(false);
    expect(schedulable(pod, {})).toBe(false);
  });

  test('an empty alternative is refused (every node meets it)', () => {
    expect(() => agentPod({ nodeRequirementAlternatives: [[]] })).toThrow(/nodeRequirementAlternatives\[0\] is empty/);
  });
});

describe('done when: node-agents coverage of the GPU example on a mixed GPU fleet', () => {
  // cpu-1 (no GPU), gpu-nfd-1 (a: NFD only), gpu-operator-1 (b: gpu-operator's labels),
  // gpu-preinstalled-1 (c: deploy.driver=pre-installed), gpu-optout-1 (d: deploy.driver=false).
  test('covers exactly the NFD-only and the gpu-operator-labelled node', () => {
    let stdout = '';
    const code = runCli(['coverage', '--nodes', 'test/fixtures/gpu/fleet-inventory.json', 'examples/gpu-driver/dist/gpu-driver.k8s.yaml', '--json'], {
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: () => undefined },
      cwd: REPO,
    });
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    const driver = report.agents.find((a: Manifest) => a.agent === 'gpu-driver');
    const covered = driver.nodes.filter((n: Manifest) => n.status === 'covered').map((n: Manifest) => n.node).sort();
    expect(covered).toEqual(['gpu-nfd-1', 'gpu-operator-1']);
    expect(report.problems).toEqual([]);
  });
});

describe('point 5: rank-2 differences from gpu-operator\'s driver DaemonSet', () => {
  const { pod } = build();
  const driverContainer = pod.containers[0];
  const volumes = Object.fromEntries(pod.volumes.map((v: Manifest) => [v.name, v.hostPath]));

  test('privileged containers ask for no dropped capabilities and no RuntimeDefault seccomp (upstream: privileged only)', () => {
    for (const c of [...pod.initContainers, ...pod.containers]) {
      expect(c.securityContext.privileged).toBe(true);
      expect(c.securityContext.capabilities).toBeUndefined();
      expect(c.securityContext.seccompProfile).toEqual({ type: 'Unconfined' });
    }
  });

  test('memory hotplug: /sys/devices/system as a Directory (upstream host-sys-devices-system), not a File that some kernels lack', () => {
    expect(volumes['host-sys-devices-system']).toEqual({ path: '/sys/devices/system', type: 'Directory' });
    expect(Object.values(volumes).map((v: Manifest) => v.path)).not.toContain('/sys/devices/system/memory/auto_online_blocks');
  });

  test('no Socket-typed /dev/log: a node without syslog would reject the pod', () => {
    expect(Object.values(volumes).filter((v: Manifest) => v.type === 'Socket')).toEqual([]);
    expect(Object.values(volumes).map((v: Manifest) => v.path)).not.toContain('/dev/log');
  });

  test('the startup probe checks the module refcount and .driver-daemons-status, as upstream\'s startup-probe.sh', () => {
    const command = driverContainer.startupProbe.exec.command[2];
    expect(command).toContain('test -f /sys/module/nvidia/refcnt');
    expect(command).toContain('[ "$(cat /run/nvidia/validations/.driver-daemons-status)" = Ready ]');
    expect(driverContainer.lifecycle.preStop.exec.command).toContain('/run/nvidia/validations/.driver-daemons-status');
  });

  test('the runbook\'s GPU-pod listing includes pods with DRA ResourceClaims', () => {
    const script = build().driver.runbookScript();
    const fn = /gpu_pods\(\) \{\n {2}kubectl[^\n]*\\\n {2}(\| jq [^\n]*)\n\}/.exec(script);
    expect(fn).not.toBeNull();
    const jq = fn![1].replace(/^\| /, '');
    const pods = {
      items: [
        { metadata: { namespace: 'ml', name: 'dra-job' }, spec: { resourceClaims: [{ name: 'gpu', resourceClaimName: 'gpu-claim' }], containers: [{ name: 'c' }] } },
        { metadata: { namespace: 'ml', name: 'classic' }, spec: { containers: [{ name: 'c', resources: { limits: { 'nvidia.com/gpu': '1' } } }] } },
        { metadata: { namespace: 'web', name: 'nginx' }, spec: { containers: [{ name: 'c' }] } },
      ],
    };
    const out = spawnSync('bash', ['-c', jq], { input: JSON.stringify(pods) }).stdout.toString();
    expect(out.trim().split('\n')).toEqual(['ml dra-job', 'ml classic']);
  });
});

describe('point 6: no unbounded wait in the runbook script', () => {
  test('the wait for the new driver pod to appear gives up after READY_TIMEOUT', () => {
    const script = build().driver.runbookScript();
    expect(script).toContain('local deadline=$((SECONDS + READY_TIMEOUT))');
    expect(script).toContain('no driver pod was created on $node within ${READY_TIMEOUT}s"; return 1; fi');
    expect(script).not.toMatch(/until kubectl get pods[^\n]*; do sleep 5; done/);
    expect(spawnSync('bash', ['-n'], { input: script }).status).toBe(0);
  });
});
