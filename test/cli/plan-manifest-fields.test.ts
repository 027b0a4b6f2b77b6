/** What plan reads from a DaemonSet beyond coverage: references, anti-affinity, hashes; and the pod selector rules. */
import { canonicalHash, daemonSetInfo, DaemonSetInfo } from '../../src/cli/coverage/manifests';
import { antiAffinitySeparates, selectorMatches } from '../../src/cli/coverage/pod-affinity';
import { Manifest } from '../util/manifests';
import { daemonSet } from '../util/plan';

function info(object: Manifest): DaemonSetInfo {
  return daemonSetInfo(object, 'test');
}

test('references: volumes, projected sources, envFrom, env, imagePullSecrets; optional ones and duplicates left out', () => {
  const ds = daemonSet('agent', {
    volumes: [
      { name: 'config', configMap: { name: 'cm-a' } },
      { name: 'maybe', configMap: { name: 'cm-optional', optional: true } },
      { name: 'token', secret: { secretName: 'secret-a' } },
      { name: 'bundle', projected: { sources: [{ configMap: { name: 'cm-b' } }, { secret: { name: 'secret-b' } }, { configMap: { name: 'cm-a' } }] } },
    ],
  });
  const main = ds.spec.template.spec.containers[0];
  main.envFrom = [{ configMapRef: { name: 'cm-env' } }, { secretRef: { name: 'secret-env', optional: true } }];
  main.env = [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'secret-key', key: 't' } } }];
  ds.spec.template.spec.imagePullSecrets = [{ name: 'pull' }];
  expect(info(ds).references).toEqual([
    { kind: 'ConfigMap', name: 'cm-a', from: 'volumes[config]' },
    { kind: 'ConfigMap', name: 'cm-b', from: 'volumes[bundle]' },
    { kind: 'ConfigMap', name: 'cm-env', from: 'containers[main].envFrom' },
    { kind: 'Secret', name: 'pull', from: 'imagePullSecrets' },
    { kind: 'Secret', name: 'secret-a', from: 'volumes[token]' },
    { kind: 'Secret', name: 'secret-b', from: 'volumes[bundle]' },
    { kind: 'Secret', name: 'secret-key', from: 'containers[main].env[TOKEN]' },
  ]);
});

test('the template hash ignores key order and changes with any field; the object hash also covers the strategy', () => {
  expect(canonicalHash({ a: 1, b: { c: [1, 2], d: 'x' } })).toBe(canonicalHash({ b: { d: 'x', c: [1, 2] }, a: 1 }));
  expect(canonicalHash({ a: [1, 2] })).not.toBe(canonicalHash({ a: [2, 1] }));
  const one = info(daemonSet('agent'));
  const image = info(daemonSet('agent', { image: 'example.com/agent:2' }));
  const strategy = info(daemonSet('agent', { strategy: { type: 'OnDelete' } }));
  expect(image.templateHash).not.toBe(one.templateHash);
  expect([strategy.templateHash, strategy.objectHash === one.objectHash]).toEqual([one.templateHash, false]);
});

test('label selectors: a missing selector matches nothing, an empty one everything; expressions ANDed', () => {
  const labels = { app: 'logs', group: 'canary' };
  expect(selectorMatches(undefined, labels)).toBe(false);
  expect(selectorMatches({}, labels)).toBe(true);
  expect(selectorMatches({ matchLabels: { app: 'logs' }, matchExpressions: [{ key: 'group', operator: 'NotIn', values: ['canary'] }] }, labels)).toBe(false);
  expect(selectorMatches({ matchExpressions: [{ key: 'group', operator: 'In', values: ['canary', 'wave-1'] }, { key: 'zone', operator: 'DoesNotExist' }] }, labels)).toBe(true);
  expect(selectorMatches({ matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, labels)).toBe(false);
});

test('anti-affinity separates in either direction, on kubernetes.io/hostname, within the term\'s namespaces', () => {
  const term = (namespaces?: string[], topologyKey = 'kubernetes.io/hostname') => [{ labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'other' } }, topologyKey, namespaces }];
  const other = info(daemonSet('other', { namespace: 'agents' }));
  const otherElsewhere = info(daemonSet('other', { namespace: 'kube-system' }));
  const guarded = info(daemonSet('agent', { antiAffinity: term() }));
  expect([antiAffinitySeparates(guarded, other), antiAffinitySeparates(other, guarded)]).toEqual([true, true]);
  // the term's own namespace by default; a zone-wide term is not evaluated
  expect(antiAffinitySeparates(guarded, otherElsewhere)).toBe(false);
  expect(antiAffinitySeparates(info(daemonSet('agent', { antiAffinity: term(['kube-system']) })), otherElsewhere)).toBe(true);
  expect(antiAffinitySeparates(info(daemonSet('agent', { antiAffinity: term(undefined, 'topology.kubernetes.io/zone') })), other)).toBe(false);
});
