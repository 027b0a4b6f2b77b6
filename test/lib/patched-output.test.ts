/**
 * The late checks run on what is finally written: a JSON patch on a library DaemonSet goes through
 * the API server's rules (k8s.io/kubernetes pkg/apis/apps/validation ValidateDaemonSetSpec,
 * pkg/apis/core/validation ValidateContainers and ValidateSecurityContext) and a patch value that
 * cdk8s-plus' converter drops is reported instead of silently lost.
 */
import { ApiObject, Chart, JsonPatch, Testing } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import * as api from '../../src';
import { validateManifests } from '../util/manifests';

function collector(...patches: JsonPatch[]): { chart: Chart; logs: api.LogCollectorDaemonSet } {
  const chart = new Chart(Testing.app(), 'chart');
  const logs = new api.LogCollectorDaemonSet(chart, 'logs', { outputs: [api.FluentBitOutput.stdout()] });
  for (const ds of logs.agent.daemonSets) ApiObject.of(ds).addJsonPatch(...patches);
  return { chart, logs };
}

test.each<[string, JsonPatch[], RegExp]>([
  ['a patched container name Fluent_Bit', [JsonPatch.replace('/spec/template/spec/containers/0/name', 'Fluent_Bit')], /container "Fluent_Bit" name "Fluent_Bit" must be a DNS-1123 label/],
  ['a selector that no longer matches the template', [JsonPatch.add('/spec/selector/matchLabels/extra', 'x')], /selector extra=x does not match the pod template's labels/],
  ['a memory limit "lots"', [JsonPatch.add('/spec/template/spec/containers/0/resources/limits/memory', 'lots')], /the JSON patch add \/spec\/template\/spec\/containers\/0\/resources\/limits\/memory is not in the rendered object/],
  ['privileged with allowPrivilegeEscalation false', [JsonPatch.add('/spec/template/spec/containers/0/securityContext/privileged', true)],
    /securityContext sets privileged: true with allowPrivilegeEscalation: false/],
  ['a plain number on the IntOrString maxSurge', [JsonPatch.add('/spec/updateStrategy/rollingUpdate/maxSurge', 1)],
    /the JSON patch add \/spec\/updateStrategy\/rollingUpdate\/maxSurge is not in the rendered object: "maxSurge" is an IntOrString, which cdk8s-plus' converter reads as k8s.IntOrString, dropping a plain value; set the pace with the updateStrategy prop/],
])('%s is refused at synthesis, naming the construct', (_what, patches, message) => {
  const { chart } = collector(...patches);
  let error: Error | undefined;
  try {
    Testing.synth(chart);
  } catch (e) {
    error = e as Error;
  }
  expect(error?.message).toMatch(/LogCollectorDaemonSet chart\/logs: /);
  expect(error?.message).toMatch(message);
});

test('an IntOrString patch in the typed form renders, and the output passes the manifest check', () => {
  const { chart } = collector(JsonPatch.add('/spec/updateStrategy/rollingUpdate/maxSurge', k8s.IntOrString.fromNumber(0)));
  const manifests = Testing.synth(chart);
  validateManifests(manifests);
  expect(manifests.find((m) => m.kind === 'DaemonSet').spec.updateStrategy.rollingUpdate.maxSurge).toBe(0);
});

test('the README\'s patch (shareProcessNamespace) still renders', () => {
  const { chart } = collector(JsonPatch.add('/spec/template/spec/shareProcessNamespace', true));
  validateManifests(Testing.synth(chart));
});
