/**
 * The selectors every alert and gate builds on: an agent's DaemonSet-name and pod-name regexes
 * match exactly its own DaemonSets (fleet and waves) and their pods, never another agent's whose
 * name starts the same. PromQL regexes are fully anchored RE2; these use only syntax JavaScript
 * reads the same way, anchored here.
 */
import * as fc from 'fast-check';
import { daemonSetNameRegex, kubeStateMetricsLabel, podNameRegex, promString, regexLiteral } from '../../src/alerts/promql';
import { nodeLabelMatcher } from '../../src/alerts/rules';

const anchored = (re: string) => new RegExp(`^(?:${re})$`);
const dnsLabel = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/);
/** The DaemonSet controller's pod name suffix alphabet (no vowels, no 0/1/3). */
const podSuffix = fc.stringMatching(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);

test('the DaemonSet regex matches the fleet and every wave, and no other name', () => {
  fc.assert(fc.property(dnsLabel, fc.uniqueArray(dnsLabel, { maxLength: 4 }), dnsLabel, (agent, waves, other) => {
    const re = anchored(daemonSetNameRegex(agent, waves));
    const own = [agent, ...waves.map((w) => `${agent}-${w}`)];
    for (const name of own) expect(re.test(name)).toBe(true);
    const stranger = `${agent}-${other}`;
    expect(re.test(stranger)).toBe(own.includes(stranger));
    expect(re.test(`x${agent}`)).toBe(false);
  }), { seed: 13, numRuns: 200 });
});

test('the pod regex matches the pods of exactly the agent\'s DaemonSets', () => {
  fc.assert(fc.property(dnsLabel, fc.uniqueArray(dnsLabel, { maxLength: 3 }), dnsLabel, podSuffix, (agent, waves, other, suffix) => {
    const re = anchored(podNameRegex(daemonSetNameRegex(agent, waves)));
    const own = [agent, ...waves.map((w) => `${agent}-${w}`)];
    for (const ds of own) expect(re.test(`${ds}-${suffix}`)).toBe(true);
    const foreign = `${agent}-${other}`;
    expect(re.test(`${foreign}-${suffix}`)).toBe(own.includes(foreign));
    // The DaemonSet itself (no suffix) or a longer suffix is not a pod of it.
    expect(re.test(agent)).toBe(false);
    expect(re.test(`${agent}-${suffix}x`)).toBe(false);
  }), { seed: 13, numRuns: 200 });
});

test('the wave pod regex does not match the fleet\'s pods and the other way round', () => {
  const fleet = anchored(podNameRegex(regexLiteral('logs')));
  const canary = anchored(podNameRegex(regexLiteral('logs-canary')));
  expect(fleet.test('logs-x7k2p')).toBe(true);
  expect(fleet.test('logs-canary-x7k2p')).toBe(false);
  expect(canary.test('logs-canary-x7k2p')).toBe(true);
  expect(canary.test('logs-x7k2p')).toBe(false);
});

test('PromQL strings escape quotes and backslashes; regex literals escape metacharacters', () => {
  expect(promString('a"b\\c')).toBe('"a\\"b\\\\c"');
  expect(regexLiteral('nvidia.com/gpu(1)')).toBe('nvidia\\.com/gpu\\(1\\)');
  fc.assert(fc.property(fc.string({ maxLength: 20 }), (value) => {
    expect(anchored(regexLiteral(value)).test(value)).toBe(true);
  }), { seed: 13, numRuns: 200 });
});

test('node requirements become kube-state-metrics label matchers', () => {
  expect(kubeStateMetricsLabel('nvidia.com/gpu.present')).toBe('label_nvidia_com_gpu_present');
  expect(nodeLabelMatcher({ key: 'nvidia.com/gpu.present', operator: 'In', values: ['true'] }, 'w')).toBe('label_nvidia_com_gpu_present=~"true"');
  expect(nodeLabelMatcher({ key: 'pool', operator: 'NotIn', values: ['a.b', 'c'] }, 'w')).toBe('label_pool!~"a\\\\.b|c"');
  expect(nodeLabelMatcher({ key: 'gpu', operator: 'Exists' }, 'w')).toBe('label_gpu!=""');
  expect(nodeLabelMatcher({ key: 'gpu', operator: 'DoesNotExist' }, 'w')).toBe('label_gpu=""');
  expect(() => nodeLabelMatcher({ key: 'gpus', operator: 'Gt', values: ['1'] }, 'GpuDriverDaemonSet x'))
    .toThrow(/GpuDriverDaemonSet x: the node requirement "gpus Gt" has no label matcher in PromQL/);
});
