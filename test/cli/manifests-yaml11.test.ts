/**
 * Manifests are read as kubectl and Argo CD read them: sigs.k8s.io/yaml on go-yaml v2, which
 * follows YAML 1.1. Pinned against go-yaml v2's `resolve.go` (resolveTable and resolve(): the
 * y/yes/on/n/no/off booleans, base-0 integers such as 0755) and `decode.go` (d.merge: `<<` merge
 * keys, explicit keys winning over merged ones). Timestamps stay strings as sigs.k8s.io/yaml's
 * JSON conversion leaves them.
 */
import { manifestSet, parseManifestText } from '../../src/cli/coverage/manifests';

const DS = (podSpec: string) => `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: ops}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
${podSpec.split('\n').map((l) => `      ${l}`).join('\n')}
`;

function info(text: string) {
  return manifestSet(parseManifestText(text, 'ds.yaml')).daemonSets[0];
}

describe('YAML 1.1 as go-yaml v2 reads it', () => {
  test('a nodeSelector added through a merge key is seen; an explicit key wins (decode.go merge)', () => {
    const text = DS(`nodeSelector:
  <<: {kubernetes.io/os: linux, disktype: hdd}
  disktype: ssd
containers: [{name: a, image: a:1}]`);
    expect(info(text).nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', 'disktype': 'ssd' });
  });

  test('a merge key through an alias, within a document', () => {
    const text = DS(`affinity: {}
nodeSelector:
  <<: &base {kubernetes.io/os: linux}
  pool: gpu
containers: [{name: a, image: a:1}]`);
    expect(info(text).nodeSelector).toEqual({ 'kubernetes.io/os': 'linux', 'pool': 'gpu' });
  });

  test.each([['yes'], ['Yes'], ['on'], ['ON'], ['y'], ['true']])('hostNetwork: %s is true (resolve.go resolveTable)', (word) => {
    const text = DS(`hostNetwork: ${word}
containers: [{name: a, image: a:1, ports: [{containerPort: 9100}]}]`);
    expect(info(text).hostNetwork).toBe(true);
    expect(info(text).hostPorts.map((p) => p.port)).toEqual([9100]);
  });

  test.each([['no'], ['off'], ['n'], ['false']])('hostNetwork: %s is false', (word) => {
    expect(info(DS(`hostNetwork: ${word}\ncontainers: [{name: a, image: a:1}]`)).hostNetwork).toBe(false);
  });

  test('0755 is octal (493), timestamps and 1:30 stay strings', () => {
    const [doc] = parseManifestText('kind: X\nmode: 0755\nwhen: 2001-12-14\nclock: 1:30\n', 'x.yaml');
    expect(doc.object).toMatchObject({ mode: 493, when: '2001-12-14', clock: '1:30' });
  });
});
