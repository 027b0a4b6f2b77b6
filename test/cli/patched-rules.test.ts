/**
 * JSON patches go through every rule: each rendered DaemonSet of each agent (every wave's and the
 * fleet's) is patched with each case and the synthesis must fail with an error naming the
 * construct and the fault (the patch op and its path for a patch that cannot apply or is dropped).
 * The API server's rules follow k8s.io/kubernetes pkg/apis/core/validation (validateContainers:
 * "image: Required value", validatePullPolicy, ValidateVolumeMounts) and pkg/apis/apps/validation
 * (ValidateDaemonSetUpdateStrategy); the agent's own rules are the props' (surge, host ports, mounts,
 * the hostPath type the kubelet's checkType enforces, pkg/volume/hostpath/host_path.go).
 */
import { ApiObject, Chart, JsonPatch, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { k8s } from 'cdk8s-plus-28';
import * as api from '../../src';
import { planChange } from '../../src/cli/plan/plan';
import { checkRenderedPodFields } from '../../src/validation/rendered-fields';
import { Manifest, synthManifests } from '../util/manifests';
import { inventory, tree } from '../util/plan';

const POD = '/spec/template/spec';
const LOKI = api.FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });
const DRIVER_IMAGE = 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04';
const WAVES = [api.RolloutWave.labelled('canary'), api.RolloutWave.labelled('wave-1')];
const ROLLOUT = { waves: WAVES, promoted: api.Promotion.all() };

type Build = (chart: Chart) => kplus.DaemonSet[];
const AGENTS: Array<[string, Build]> = [
  ['NodeAgentDaemonSet', (c) => new api.NodeAgentDaemonSet(c, 'agent', {
    image: 'ghcr.io/acme/scanner:1.2.3', rollout: ROLLOUT, hostPaths: [{ name: 'proc', hostPath: '/proc', mountPath: '/host/proc' }],
  }).daemonSets],
  ['LogCollectorDaemonSet', (c) => new api.LogCollectorDaemonSet(c, 'agent', { outputs: [LOKI], rollout: ROLLOUT }).agent.daemonSets],
  ['NodeExporterDaemonSet', (c) => new api.NodeExporterDaemonSet(c, 'agent', { rollout: ROLLOUT }).agent.daemonSets],
  ['GpuDriverDaemonSet', (c) => new api.GpuDriverDaemonSet(c, 'agent', { image: DRIVER_IMAGE, rollout: ROLLOUT }).agent.daemonSets],
];

/** The cases: each patch, and what the error must say. */
const CASES: Array<[string, JsonPatch[], RegExp]> = [
  ['the main container\'s image removed', [JsonPatch.remove(`${POD}/containers/0/image`)], /container "[a-z-]+": image is required/],
  ['imagePullPolicy "Sometimes"', [JsonPatch.replace(`${POD}/containers/0/imagePullPolicy`, 'Sometimes')],
    /imagePullPolicy string "Sometimes" is not one the API server accepts \(supported values: "Always", "IfNotPresent", "Never"\)/],
  ['a typo in a patched path (hostNetwrok)', [JsonPatch.add(`${POD}/hostNetwrok`, true)],
    /the JSON patch add \/spec\/template\/spec\/hostNetwrok is not in the rendered object: "hostNetwrok" is no field of PodSpec \(did you mean "hostNetwork"\?\)/],
  ['an add under a parent that does not exist', [JsonPatch.add(`${POD}/foo/bar`, 1)],
    /the JSON patch add \/spec\/template\/spec\/foo\/bar needs \/spec\/template\/spec\/foo, which does not exist/],
  ['a remove of a path that does not exist (it would remove nothing)', [JsonPatch.remove(`${POD}/containers/0/imag`)],
    /the JSON patch remove \/spec\/template\/spec\/containers\/0\/imag targets .*, which does not exist, so it would remove nothing \(did you mean "image"\?\)/],
  ['the JSON name hostIPC instead of the typed hostIpc', [JsonPatch.add(`${POD}/hostIPC`, true)], /"hostIPC" is the field's JSON name.*patch "hostIpc"/],
  ['updateStrategy type "Rolling"', [JsonPatch.replace('/spec/updateStrategy/type', 'Rolling')], /updateStrategy.type string "Rolling" is not one the API server accepts/],
  ['a hostPath volume File on /dev/kmsg', [JsonPatch.add(`${POD}/volumes/-`, { name: 'kmsg', hostPath: { path: '/dev/kmsg', type: 'File' } })],
    /volume "kmsg" hostPath.type "File" does not match \/dev\/kmsg, which is a character device/],
  ['a mount of a volume the pod does not have', [JsonPatch.add(`${POD}/containers/0/volumeMounts/-`, { name: 'nope', mountPath: '/nope' })],
    /mounts volume string "nope", which is not a volume of the pod/],
];

describe.each(AGENTS)('%s: every rendered DaemonSet, patched', (kind, build) => {
  test.each(CASES)('%s is refused at synthesis, naming the construct', (_what, patches, message) => {
    // Each DaemonSet in turn (canary, wave-1, fleet): the rules cover every one, not only the fleet's.
    for (let i = 0; i < 3; i++) {
      const chart = new Chart(Testing.app(), 'chart');
      const daemonSets = build(chart);
      expect(daemonSets).toHaveLength(3);
      ApiObject.of(daemonSets[i]).addJsonPatch(...patches);
      let error: Error | undefined;
      try {
        Testing.synth(chart);
      } catch (e) {
        error = e as Error;
      }
      expect(error?.message).toMatch(new RegExp(`${kind} chart/agent: DaemonSet "${daemonSets[i].name}"`));
      expect(error?.message).toMatch(message);
      expect(error?.message).not.toMatch(/TypeError|Cannot set properties/);
    }
  });

  test('an unpatched synthesis passes every rule (no false alarm)', () => {
    const chart = new Chart(Testing.app(), 'chart');
    build(chart);
    expect(() => synthManifests(chart)).not.toThrow();
  });
});

describe('agent rules on the patched object', () => {
  function collector(...patches: JsonPatch[]) {
    const chart = new Chart(Testing.app(), 'chart');
    const logs = new api.LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI] });
    ApiObject.of(logs.agent.daemonSet).addJsonPatch(...patches);
    return chart;
  }
  const surging = JsonPatch.replace('/spec/updateStrategy/rollingUpdate', { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) });

  test('a typed maxSurge 1 on the log collector (two collectors on one tail DB) is refused, as the props refuse it', () => {
    expect(() => Testing.synth(collector(surging)))
      .toThrow(/LogCollectorDaemonSet chart\/logs: DaemonSet "log-collector": updateStrategy maxSurge 1: the new pod would start beside the old one on each node, two fluent-bit processes on one tail database/);
  });

  test('the advice for a plain maxSurge does not lead to a surge: it points to the updateStrategy prop', () => {
    let message = '';
    try {
      Testing.synth(collector(JsonPatch.add('/spec/updateStrategy/rollingUpdate/maxSurge', 1)));
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/"maxSurge" is an IntOrString.*set the pace with the updateStrategy prop \(e.g. UpdateStrategy.oneAtATime\(\)\)/);
    expect(message).not.toMatch(/IntOrString.fromNumber\(1\)/);
  });

  test('hostNetwork patched on the collector beside node-exporter on port 2020: the cross-agent host-port check sees it', () => {
    const chart = new Chart(Testing.app(), 'chart');
    new api.NodeExporterDaemonSet(chart, 'metrics', { port: 2020 });
    const logs = new api.LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI] });
    ApiObject.of(logs.agent.daemonSet).addJsonPatch(JsonPatch.add(`${POD}/hostNetwork`, true));
    expect(() => Testing.synth(chart)).toThrow(/LogCollectorDaemonSet chart\/logs and NodeExporterDaemonSet chart\/metrics both bind host port 2020\/TCP/);
  });

  test('a privileged container patched into a namespace the agent creates as baseline: PodSecurity admission would refuse every pod', () => {
    const chart = new Chart(Testing.app(), 'chart');
    const agent = new api.NodeAgentDaemonSet(chart, 'agent', { image: 'ghcr.io/acme/scanner:1.2.3', createNamespace: true, namespace: 'scanner' });
    ApiObject.of(agent.daemonSet).addJsonPatch(JsonPatch.add(`${POD}/containers/0/securityContext/privileged`, true),
      JsonPatch.add(`${POD}/containers/0/securityContext/allowPrivilegeEscalation`, true));
    expect(() => Testing.synth(chart)).toThrow(/the pods need more than the Pod Security level "(baseline|restricted)" the agent's Namespace enforces \(privileged container "agent"/);
  });

  test('a Bidirectional mount patched onto a non-privileged container is refused (the API server allows it only privileged)', () => {
    const chart = new Chart(Testing.app(), 'chart');
    const agent = new api.NodeAgentDaemonSet(chart, 'agent', { image: 'ghcr.io/acme/scanner:1.2.3', hostPaths: [{ name: 'run', hostPath: '/run/scanner' }] });
    ApiObject.of(agent.daemonSet).addJsonPatch(JsonPatch.add(`${POD}/containers/0/volumeMounts/0/mountPropagation`, 'Bidirectional'));
    expect(() => Testing.synth(chart)).toThrow(/mounts string "run" with Bidirectional propagation, which the API server allows only in a privileged container/);
  });

  test('Bidirectional is refused in any unprivileged container, init containers too, and only there (pkg/apis/core/validation validateMountPropagation)', () => {
    const mount = { name: 'run-nvidia', mountPath: '/run/nvidia', mountPropagation: 'Bidirectional' };
    const volumes = [{ name: 'run-nvidia', hostPath: { path: '/run/nvidia' } }];
    const bidirectional = (pod: Manifest) => checkRenderedPodFields({ ...pod, volumes }).filter((p) => p.includes('Bidirectional'));
    expect(bidirectional({ containers: [{ name: 'driver', image: 'x', securityContext: { privileged: false }, volumeMounts: [mount] }] })).toHaveLength(1);
    expect(bidirectional({ initContainers: [{ name: 'i', image: 'x', volumeMounts: [mount] }], containers: [{ name: 'c', image: 'x' }] })).toHaveLength(1);
    expect(bidirectional({ containers: [{ name: 'driver', image: 'x', securityContext: { privileged: true }, volumeMounts: [mount] }] })).toEqual([]);
    expect(bidirectional({
      initContainers: [{ name: 'i', image: 'x', volumeMounts: [{ ...mount, mountPropagation: 'HostToContainer' }] }],
      containers: [{ name: 'c', image: 'x' }],
    })).toEqual([]);
  });
});

describe('plan: a surging log collector', () => {
  /** The library's log collector DaemonSet as written, with its update strategy edited as a patch (or an older library) would leave it. */
  function collectorDaemonSet(image: string, surge: boolean): Manifest {
    const chart = new Chart(Testing.app(), 'chart');
    new api.LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], image });
    const manifests = Testing.synth(chart);
    const ds = manifests.find((m) => m.kind === 'DaemonSet');
    if (surge) ds.spec.updateStrategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } };
    return manifests;
  }

  test('maxSurge on a log collector is an error finding, and no fix suggests raising maxSurge', () => {
    const nodes = inventory([{ name: 'a' }, { name: 'b' }]);
    const before = collectorDaemonSet('cr.fluentbit.io/fluent/fluent-bit:5.1.0', false);
    const after = collectorDaemonSet('cr.fluentbit.io/fluent/fluent-bit:5.1.1', true);
    const report = planChange(tree(before as unknown as Manifest[]), tree(after as unknown as Manifest[]), nodes);
    const surgeFinding = report.findings.find((f) => f.cause === 'strategy');
    expect(surgeFinding).toMatchObject({ severity: 'error', kind: 'stall' });
    expect(surgeFinding!.message).toMatch(/is a log collector with maxSurge: on each node the new pod starts beside the old one/);
    expect(report.findings.map((f) => f.fix).join('\n')).not.toMatch(/raise maxSurge/);
  });

  test('maxUnavailable on the same collector: no such finding', () => {
    const nodes = inventory([{ name: 'a' }, { name: 'b' }]);
    const report = planChange(tree(collectorDaemonSet('cr.fluentbit.io/fluent/fluent-bit:5.1.0', false) as unknown as Manifest[]),
      tree(collectorDaemonSet('cr.fluentbit.io/fluent/fluent-bit:5.1.1', false) as unknown as Manifest[]), nodes);
    expect(report.findings.filter((f) => f.cause === 'strategy')).toEqual([]);
  });
});
