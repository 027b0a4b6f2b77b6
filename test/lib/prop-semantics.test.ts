/**
 * Props whose mistakes reached the node, or whose error blamed the wrong prop: each case fails at
 * synth with a ValidationError naming the construct, the prop, the value and the fix, or is shown
 * harmless with the upstream fact that makes it so.
 */
import { Chart, Testing } from 'cdk8s';
import {
  AgentAdoption, AgentFleet, FleetStage, FluentBitOutput, GpuDriverDaemonSet, GpuDriverShape, HostPathType, LogCollectorDaemonSet, MountPropagation,
  NodeAgentDaemonSet, NodeAgentDaemonSetProps, Promotion, RolloutWave,
} from '../../src';
import { warningsOf } from '../../src/validation/warnings';
import { synthManifests } from '../util/manifests';

const IMAGE = 'ghcr.io/acme/scanner:1.2.3';
const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });
const DRIVER_IMAGE = 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04';

function agent(props: Partial<NodeAgentDaemonSetProps> = {}) {
  const chart = new Chart(Testing.app(), 'chart');
  new NodeAgentDaemonSet(chart, 'scanner', { image: IMAGE, ...props });
  return synthManifests(chart);
}

describe('memory quantities', () => {
  test('"512m" as a limit says m is milli (0.512 bytes) and names the prop, instead of blaming the request', () => {
    expect(() => agent({ resources: { memoryLimit: '512m' } })).toThrow(
      /NodeAgentDaemonSet chart\/scanner: invalid props:\n {2}- container "scanner" resources.memoryLimit "512m" is below 6Mi: for memory "m" means milli, a thousandth of a byte, so "512m" is 0.512 bytes; write "512Mi"/);
    expect(() => agent({ resources: { memoryLimit: '512m' } })).not.toThrow(/the request 128Mi is above the limit/);
  });

  test('64m / 512m as request and limit: both refused (runc: "container init was OOM-killed"), not synthesized', () => {
    const error = () => agent({ resources: { memoryRequest: '64m', memoryLimit: '512m' } });
    expect(error).toThrow(/resources.memoryRequest "64m" is below 6Mi[\s\S]*resources.memoryLimit "512m" is below 6Mi/);
  });

  test('the floor is dockerd\'s linuxMinMemory, 6 MiB (moby daemon/daemon_unix.go): 5Mi refused, 6Mi accepted', () => {
    expect(() => agent({ resources: { memoryRequest: '5Mi', memoryLimit: '5Mi' } })).toThrow(/memoryRequest "5Mi" is below 6Mi \(5242880 bytes\)/);
    expect(() => agent({ resources: { memoryRequest: '6Mi', memoryLimit: '6Mi' } })).not.toThrow();
  });

  test('the agent constructs\' own resources props get the same check', () => {
    const chart = new Chart(Testing.app(), 'chart');
    expect(() => new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], resources: { memoryLimit: '256m' } }))
      .toThrow(/LogCollectorDaemonSet chart\/logs: [\s\S]*resources.memoryLimit "256m" is below 6Mi: for memory "m" means milli/);
  });
});

describe('labels, annotations and map keys', () => {
  test('labels with app.kubernetes.io/name is refused instead of dropped, pointing to name', () => {
    expect(() => agent({ labels: { 'app.kubernetes.io/name': 'scanner-x' } }))
      .toThrow(/labels: "app.kubernetes.io\/name" is set by the agent itself and would be dropped without a word.*set the agent's "name" instead/);
    const chart = new Chart(Testing.app(), 'chart');
    expect(() => new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], labels: { 'app.kubernetes.io/version': '1' } }))
      .toThrow(/LogCollectorDaemonSet chart\/logs: [\s\S]*labels: "app.kubernetes.io\/version" is set by the agent itself/);
  });

  // cdk8s lib/_util.ts sanitizeValue: `if (obj.constructor.name !== 'Object') throw "can't render non-simple object"`.
  test.each<[string, Partial<NodeAgentDaemonSetProps>]>([
    ['labels', { labels: { constructor: 'x' } }],
    ['podLabels', { podLabels: { constructor: 'x' } }],
    ['podAnnotations', { podAnnotations: { constructor: 'x' } }],
    ['nodeSelector', { nodeSelector: { constructor: 'x' } }],
    ['serviceAccountAnnotations', { serviceAccountAnnotations: { constructor: 'x' } }],
  ])('"constructor" as a key of %s is refused with the reason, not "can\'t render non-simple object"', (prop, props) => {
    let message = '';
    try {
      agent(props);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(new RegExp(`NodeAgentDaemonSet chart/scanner: invalid props:[\\s\\S]*${prop}: the key "constructor" cannot be rendered`));
    expect(message).not.toMatch(/non-simple object/);
  });

  test('"constructor" as a key of configData renders: the ConfigMap takes such data as a patch after cdk8s\' renderer', () => {
    const manifests = agent({ configData: { constructor: 'x' } });
    expect(manifests.find((m) => m.kind === 'ConfigMap').data).toEqual({ constructor: 'x' });
  });

  test('"__proto__" (a valid ConfigMap key, which cdk8s would drop by assignment) is refused; "toString" and "valueOf" render', () => {
    expect(() => agent({ configData: JSON.parse('{"__proto__": "x"}') })).toThrow(/configData: the key "__proto__" would be dropped/);
    // sanitizeValue reads only `constructor`, and copies the other keys as they are: harmless.
    const manifests = agent({ podLabels: { toString: 'a', valueOf: 'b' }, configData: { toString: 'c' } });
    expect(manifests.find((m) => m.kind === 'DaemonSet').spec.template.metadata.labels).toMatchObject({ toString: 'a', valueOf: 'b' });
    expect(manifests.find((m) => m.kind === 'ConfigMap').data).toEqual({ toString: 'c' });
  });
});

describe('host paths and mounts', () => {
  test('HostPathType.FILE on /dev/kmsg (a character device) is refused: the kubelet\'s type check fails the pod (pkg/volume/hostpath checkType)', () => {
    expect(() => agent({ hostPaths: [{ name: 'kmsg', hostPath: '/dev/kmsg', type: HostPathType.FILE }] }))
      .toThrow(/hostPaths\["kmsg"\].type "File" does not match \/dev\/kmsg, which is a character device on every node.*use HostPathType.CHAR_DEVICE/);
    // Untyped, the library's default is Directory: refused the same way.
    expect(() => agent({ hostPaths: [{ name: 'kmsg', hostPath: '/dev/kmsg' }] })).toThrow(/type "Directory" does not match \/dev\/kmsg/);
    expect(() => agent({ hostPaths: [{ name: 'kmsg', hostPath: '/dev/kmsg', type: HostPathType.CHAR_DEVICE }] })).not.toThrow();
    expect(() => agent({ hostPaths: [{ name: 'log', hostPath: '/dev/log', type: HostPathType.FILE }] })).toThrow(/\/dev\/log, which is a socket/);
  });

  test('a Bidirectional mount left read-only is refused, naming readOnly', () => {
    const hostPath = { name: 'run', hostPath: '/run/scanner', propagation: MountPropagation.BIDIRECTIONAL };
    expect(() => agent({ privileged: true, runAsRoot: true, hostPaths: [hostPath] }))
      .toThrow(/container "scanner" mounts "run" with Bidirectional propagation but read-only \(readOnly defaults to true\).*set readOnly: false/);
    expect(() => agent({ privileged: true, runAsRoot: true, hostPaths: [{ ...hostPath, readOnly: false }] })).not.toThrow();
  });
});

describe('adoption and namespaces', () => {
  test('adopt plus createNamespace is refused: the namespace exists and belongs to the adopted install', () => {
    const chart = new Chart(Testing.app(), 'chart');
    expect(() => new LogCollectorDaemonSet(chart, 'logs', {
      outputs: [LOKI], createNamespace: true, adopt: AgentAdoption.fluentBitChart({ namespace: 'logging' }),
    })).toThrow(/LogCollectorDaemonSet chart\/logs: [\s\S]*createNamespace with adopt: the adopted DaemonSet runs in "logging", which exists[\s\S]*Drop createNamespace/);
  });
});

describe('images', () => {
  test('a fluentd image in LogCollectorDaemonSet is refused: the container runs /fluent-bit/bin/fluent-bit with a fluent-bit config', () => {
    for (const image of ['fluent/fluentd:v1.17-1', 'fluent/fluentd-kubernetes-daemonset:v1.17-debian-elasticsearch8-1', 'timberio/vector:0.40.0-debian']) {
      const chart = new Chart(Testing.app(), 'chart');
      expect(() => new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], image }))
        .toThrow(new RegExp(`LogCollectorDaemonSet chart/logs: [\\s\\S]*image "${image.replace(/[.]/g, '\\.')}" is a .* image, but the log collector runs fluent-bit`));
    }
    const chart = new Chart(Testing.app(), 'chart');
    expect(() => new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], image: 'registry.example.com/mirror/fluent-bit:5.1.1' })).not.toThrow();
  });
});

describe('rollout', () => {
  test('labelKey "rollout wave" is blamed on rollout.labelKey, not on a wave\'s requirement', () => {
    expect(() => agent({ rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all(), labelKey: 'rollout wave' } }))
      .toThrow(/rollout.labelKey: "rollout wave" is not a valid label key/);
    expect(() => agent({ rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all(), labelKey: 'rollout wave' } }))
      .not.toThrow(/waves\[0\]/);
  });
});

describe('GPU driver', () => {
  function driver(props: Partial<ConstructorParameters<typeof GpuDriverDaemonSet>[2]> = {}) {
    const chart = new Chart(Testing.app(), 'chart');
    return new GpuDriverDaemonSet(chart, 'nvidia', { image: DRIVER_IMAGE, ...props });
  }

  test('buildTimeSeconds under 5 minutes warns (minutes written as seconds); the default does not', () => {
    const emit = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const short = driver({ shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 25 }) });
      expect(warningsOf(short)).toEqual([expect.stringMatching(/^GpuDriverDaemonSet chart\/nvidia: shape buildTimeSeconds 25 is under 5 minutes.*if you meant 25 minutes, write 1500/)]);
      expect(emit).toHaveBeenCalledTimes(1);
      expect(warningsOf(driver())).toEqual([]);
      expect(warningsOf(driver({ shape: GpuDriverShape.driverContainer({ buildTimeSeconds: 300 }) }))).toEqual([]);
    } finally {
      emit.mockRestore();
    }
  });

  test('runbookScript() with nothing promoted says so instead of group "undefined"', () => {
    const d = driver({
      rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.none(), previous: GpuDriverDaemonSet.release({ image: 'nvcr.io/nvidia/driver:535.183.01-ubuntu22.04' }) },
    });
    expect(() => d.runbookScript()).toThrow(/GpuDriverDaemonSet chart\/nvidia: runbookScript: no rollout group runs the new version yet.*Promotion.through\("canary"\)/);
    expect(() => d.runbookScript()).not.toThrow(/undefined/);
    expect(d.runbook()).toMatch(/No rollout group runs the new version yet/);
  });

  test('upgradeWaitForPodSelector is checked at construction (a line break failed only in runbook())', () => {
    expect(() => driver({ upgradeWaitForPodSelector: 'app=batch\nrm -rf /' }))
      .toThrow(/GpuDriverDaemonSet chart\/nvidia: invalid props:[\s\S]*upgradeWaitForPodSelector "app=batch\\nrm -rf \/" contains a line break/);
    expect(() => driver({ upgradeWaitForPodSelector: 'app=batch;reboot' })).toThrow(/upgradeWaitForPodSelector value: "batch;reboot" is not a valid label value/);
    expect(() => driver({ upgradeWaitForPodSelector: 'app=batch,job-type in (training, etl),!preemptible' }).runbook()).not.toThrow();
    // The prop's documented `key=value` form is accepted.
    expect(() => driver({ upgradeSkipNodeLabel: 'example.com/skip-upgrade=true' })).not.toThrow();
  });
});

describe('AgentFleet', () => {
  const agents = { addAgents() {} };
  const cluster = (name: string, wave?: string) => ({ name, environment: 'prod', region: 'eu-west-1', wave });
  const fleet = (props: Partial<ConstructorParameters<typeof AgentFleet>[0]>) => new AgentFleet({ repoUrl: 'https://git.example.com/fleet.git', agents, ...props });

  test('a wave "canry" lists the valid waves (the defaults) and the nearest', () => {
    expect(() => fleet({ clusters: [cluster('a', 'canary'), cluster('b', 'canry')] }).synthFiles())
      .toThrow(/cluster "b" is in wave "canry", which is not a cluster wave of the fleet.*The cluster waves are "canary", "early", "rest" \(the defaults, as clusterWaves is unset\); did you mean "canary"\?/);
  });

  test('a cluster named "constructor" renders; "toString" and "__proto__" get the DNS-label error, not "already a Construct"', () => {
    const paths = fleet({ clusters: [cluster('constructor')] }).synthFiles().map((f) => f.path);
    expect(paths).toContain('clusters/constructor/node-agents.k8s.yaml');
    for (const name of ['toString', '__proto__']) {
      expect(() => fleet({ clusters: [cluster(name)] })).toThrow(new RegExp(`invalid props:\\n {2}- name "${name}" must be a DNS-1123 label`));
    }
  });

  test('a setting named "constructor" is the cluster\'s own or the fallback, never Object\'s', () => {
    const f = fleet({ clusters: [cluster('a')] });
    expect(f.clusters[0].setting('constructor', 'fallback')).toBe('fallback');
  });

  test.each(['deploy/x?', 'deploy/[x', 'deploy/*'])('repoPath %s is refused: Argo CD reads it as a glob in the git files generator', (repoPath) => {
    expect(() => fleet({ clusters: [cluster('a')], repoPath })).toThrow(/AgentFleet: invalid props:\n {2}- repoPath: ".*" is not a relative folder path/);
  });

  test('a fleet stage that holds a cluster, for an agent without rollout.previous, names rollout.previous', () => {
    expect(() => fleet({
      clusters: [cluster('a', 'canary'), cluster('b')],
      agents: {
        addAgents(c, chart) {
          new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], rollout: { waves: [RolloutWave.labelled('canary')], promoted: c.promotion(FleetStage.through('canary', 'canary')) } });
        },
      },
    })).toThrow(/LogCollectorDaemonSet b\/node-agents\/logs: rollout.previous is unset while rollout.promoted promotes no wave.*LogCollectorDaemonSet.release\(previousProps\)/);
  });
});
