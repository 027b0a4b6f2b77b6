/**
 * The reusable checkers: every one refuses a wrong type with the same kind of message as a wrong
 * value (prop, value, fix), and accepts exactly what the API server (or the agent) accepts.
 */
import { Chart, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import { AgentEnvFieldPath } from '../../src/agent/container-inputs';
import { NodeRequirement } from '../../src/agent/node-requirement';
import { Promotion } from '../../src/agent/rollout';
import { UpdateStrategy } from '../../src/agent/update-strategy';
import { NodeAgentDaemonSet } from '../../src/constructs/node-agent-daemon-set';
import { checkObjectSize, CONFIG_MAP_MAX_BYTES } from '../../src/validation/object-size';
import { checkStruct, structProblems } from '../../src/validation/struct-check';
import {
  checkBoolean, checkConfigKey, checkDnsLabel, checkDnsSubdomain, checkEnvName, checkFluentBitSize, checkInt32, checkInt64, checkLabelKey,
  checkLabelValue, checkMountPropagation, checkPort, checkPrometheusDuration, checkQuantity, checkResources, checkSubPath,
  checkTolerations, checkTolerationValue, describeValue, INT32_MAX,
} from '../../src/validation/values';

/** The node agent's props against their generated shape. */
const checkAgentPropTypes = (where: string, props: unknown): void => checkStruct(where, 'NodeAgentDaemonSetProps', props);

describe('wrong types get a message, never a TypeError', () => {
  const checkers: Array<[string, (prop: string, value: unknown) => string[]]> = [
    ['checkDnsLabel', checkDnsLabel], ['checkDnsSubdomain', checkDnsSubdomain], ['checkLabelKey', checkLabelKey],
    ['checkLabelValue', checkLabelValue], ['checkEnvName', checkEnvName], ['checkConfigKey', checkConfigKey],
    ['checkSubPath', checkSubPath], ['checkQuantity', checkQuantity], ['checkPort', checkPort], ['checkInt32', checkInt32],
    ['checkInt64', checkInt64], ['checkMountPropagation', checkMountPropagation], ['checkPrometheusDuration', checkPrometheusDuration],
    ['checkFluentBitSize', checkFluentBitSize], ['checkBoolean', checkBoolean], ['checkTolerationValue', checkTolerationValue],
  ];
  test.each(checkers)('%s', (_name, check) => {
    const anyValue = fc.oneof(fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.object(), fc.array(fc.anything()), fc.string());
    fc.assert(fc.property(anyValue, (value) => {
      const problems = check('the.prop', value);
      for (const p of problems) expect(p).toMatch(/^the\.prop/);
    }), { seed: 16, numRuns: 200 });
  });
});

test('describeValue shows the type and the value', () => {
  expect(describeValue('80')).toBe('string "80"');
  expect(describeValue(1.5)).toBe('number 1.5');
  expect(describeValue(null)).toBe('null');
  expect(describeValue({ a: 1 })).toBe('object {"a":1}');
  const cyclic: { self?: unknown } = {};
  cyclic.self = cyclic;
  expect(describeValue(cyclic)).toBe('object [object Object]');
});

test.each<[string, string[], string]>([
  ['a string port', checkPort('port', '80'), 'port must be a number, got string "80"'],
  ['port 0', checkPort('port', 0), 'port 0 is outside 1-65535'],
  ['port 2^53', checkPort('port', 2 ** 53), 'port 9007199254740992 is outside 1-65535'],
  ['a fractional port', checkPort('port', 1.03e-266), 'is outside 1-65535'],
  ['revisionHistoryLimit above int32', checkInt32('revisionHistoryLimit', 2 ** 31), `revisionHistoryLimit 2147483648 must be a whole number from 0 to ${INT32_MAX}`],
  ['runAsUser 1.5', checkInt32('runAsUser', 1.5), 'runAsUser 1.5 must be a whole number'],
  ['grace period 1e20', checkInt64('terminationGracePeriodSeconds', 1e20), 'terminationGracePeriodSeconds 100000000000000000000 must be a whole number'],
  ['a non-ASCII env name', checkEnvName('fieldEnv', 'NÄME'), 'fieldEnv: "NÄME" is not a valid environment variable name'],
  ['an empty env name', checkEnvName('env', ''), 'env: "" is not a valid environment variable name'],
  ['an env name with "="', checkEnvName('env', 'A=B'), 'is not a valid environment variable name'],
  ['an env name ".."', checkEnvName('env', '..A'), 'is not a valid environment variable name'],
  ['config key ".."', checkConfigKey('configData', '..'), 'configData: ".." is not a valid ConfigMap key ("." and names starting with ".." are reserved)'],
  ['config key "bad/key"', checkConfigKey('configData', 'bad/key'), '"bad/key" is not a valid ConfigMap key'],
  ['subPath ../etc', checkSubPath('mounts[0].subPath', '../etc'), 'must not contain ".."'],
  ['an absolute subPath', checkSubPath('mounts[0].subPath', '/etc'), 'must be a path relative to the volume'],
  ['toleration value "bad value!"', checkTolerationValue('tolerations[0].value', 'bad value!'), 'is not a valid label value'],
  ['a quantity with a leading space', checkQuantity('resources.memoryRequest', ' 128Mi'), 'resources.memoryRequest " 128Mi" has leading or trailing spaces; write it without them, e.g. "128Mi"'],
  ['a number as quantity', checkQuantity('extendedResources["example.com/dev"]', 1), 'must be a string such as "100m", got number 1'],
  ['an unknown mountPropagation', checkMountPropagation('hostPaths[0].propagation', 'Sideways'), 'must be one of MountPropagation.NONE'],
  ['priorityClassName a..b', checkDnsSubdomain('priorityClassName', 'a..b'), 'priorityClassName "a..b" must be a DNS-1123 subdomain'],
  ['priorityClassName over 253', checkDnsSubdomain('priorityClassName', 'a'.repeat(254)), 'must be a DNS-1123 subdomain of at most 253 characters'],
  ['label key "]%"', checkLabelKey('metrics.labels', ']%'), 'metrics.labels: "]%" is not a valid label key'],
  ['null label value', checkLabelValue('labels["a"]', null), 'labels["a"] must be a string such as "v1", got null'],
  ['a Prometheus duration "30"', checkPrometheusDuration('metrics.interval', '30'), 'is not a Prometheus duration'],
  ['a fluent-bit size "5 MB"', checkFluentBitSize('memBufLimit', '5 MB'), 'is not a fluent-bit size'],
  ['a request above its limit', checkResources('resources', { memoryRequest: '1Gi', memoryLimit: '512Mi' }), 'the request 1Gi is above the limit 512Mi'],
  ['tolerationSeconds 1.5', checkTolerations('tolerations', [{ key: 'k', tolerationSeconds: 1.5 }]), 'tolerations[0].tolerationSeconds 1.5 must be a whole number'],
  ['a toleration key "bad key"', checkTolerations('tolerations', [{ key: 'bad key' }]), 'tolerations[0].key: "bad key" is not a valid label key'],
])('%s is refused', (_what, problems, message) => {
  expect(problems).toHaveLength(1);
  expect(problems[0]).toContain(message);
});

test.each<[string, string[]]>([
  ['port 65535', checkPort('p', 65535)],
  ['int32 max', checkInt32('p', INT32_MAX)],
  ['env name my.env-name', checkEnvName('p', 'my.env-name')],
  ['env name _A1', checkEnvName('p', '_A1')],
  ['config key .hidden', checkConfigKey('p', '.hidden')],
  ['subPath conf.d/a', checkSubPath('p', 'conf.d/a')],
  ['subPath a..b (not a ".." element)', checkSubPath('p', 'a..b')],
  ['empty toleration value', checkTolerationValue('p', '')],
  ['quantity 1e3', checkQuantity('p', '1e3')],
  ['duration 1m30s', checkPrometheusDuration('p', '1m30s')],
  ['size 50MB', checkFluentBitSize('p', '50MB')],
  ['priorityClassName a.b-c', checkDnsSubdomain('p', 'a.b-c')],
])('%s is accepted', (_what, problems) => {
  expect(problems).toEqual([]);
});

describe('node requirements', () => {
  test('an invalid key or value is a problem, a wrong type too', () => {
    expect(NodeRequirement.in('bad key!', ['a']).problems()).toEqual([expect.stringContaining('"bad key!" is not a valid label key')]);
    expect(NodeRequirement.in('zone', ['a b']).problems()).toEqual([expect.stringContaining('"a b" is not a valid label value')]);
    expect(NodeRequirement.in(5 as unknown as string, ['a']).problems()).toEqual(['the key must be a string such as "topology.kubernetes.io/zone", got number 5']);
    expect(NodeRequirement.in('zone', 'a' as unknown as string[]).problems()).toEqual(['the values of "zone" must be an array of strings, got string "a"']);
    expect(NodeRequirement.gt('cpus', 1e21).problems()).toEqual([expect.stringContaining('needs exactly one integer value')]);
  });
});

describe('prop shapes', () => {
  test('the issue\'s example: a number where a quantity string belongs', () => {
    expect(() => checkAgentPropTypes('NodeAgentDaemonSet agents/npd', { image: 'npd:1.0', resources: { cpuRequest: 1 } }))
      .toThrow('NodeAgentDaemonSet agents/npd: prop resources.cpuRequest must be a string, got number 1');
  });

  test.each<[string, unknown, string]>([
    ['props null', null, 'props must be an object, got null'],
    ['image missing', {}, 'prop image is required (a string)'],
    ['a string port', { image: 'a:1', ports: [{ name: 'http', containerPort: '80' }] }, 'prop ports[0].containerPort must be a number, got string "80"'],
    ['a plain object as strategy', { image: 'a:1', updateStrategy: { type: 'RollingUpdate' } }, 'prop updateStrategy must be made with UpdateStrategy.conservative(), fast(), onDelete(), oneAtATime(), rollingUpdate() or steady()'],
    ['a sidecar mount without volume', { image: 'a:1', sidecars: [{ name: 's', image: 's:1', mounts: [{ mountPath: '/x' }] }] }, 'prop sidecars[0].mounts[0].volume is required'],
    ['an unknown field path', { image: 'a:1', fieldEnv: { HOST_IP: 'status.nope' } }, 'prop fieldEnv["HOST_IP"] must be one of AgentEnvFieldPath.POD_NAME, POD_NAMESPACE,'],
    ['a null label', { image: 'a:1', labels: { team: null } }, 'prop labels["team"] must be a string, got null'],
    ['rollout waves as strings', { image: 'a:1', rollout: { waves: ['canary'], promoted: 1 } }, 'prop rollout.waves[0] must be a RolloutWave, e.g. RolloutWave.labelled(\'canary\') (made with RolloutWave.hostnames(), labelled() or matching()), got string "canary"'],
    ['a previous release that is a plain object', { image: 'a:1', rollout: { waves: [], promoted: Promotion.all(), previous: { sidecars: [5] } } },
      'prop rollout.previous must be made with AgentRelease.fromProps(), GpuDriverDaemonSet.release(), LogCollectorDaemonSet.release() or NodeExporterDaemonSet.release(), got object'],
    ['a plain object as wave pace', { image: 'a:1', rollout: { waves: [], promoted: 0, wavePace: { constructor: {} } } }, 'prop rollout.wavePace["constructor"] must be made with UpdateStrategy'],
  ])('%s', (_what, props, message) => {
    expect(() => checkAgentPropTypes('NodeAgentDaemonSet a/b', props)).toThrow(message);
  });

  test('a well-typed prop object passes; an undeclared field is refused with the nearest declared name', () => {
    expect(() => checkAgentPropTypes('NodeAgentDaemonSet a/b', {
      image: 'a:1', updateStrategy: UpdateStrategy.steady(), resources: { cpuRequest: '1' },
    })).not.toThrow();
    expect(() => checkAgentPropTypes('NodeAgentDaemonSet a/b', { image: 'a:1', resources: { memoryLimt: '1Gi' } }))
      .toThrow('NodeAgentDaemonSet a/b: prop resources.memoryLimt is not a prop of AgentResources; did you mean memoryLimit?');
  });

  test('a field named like an Object.prototype member is looked up as an own field only', () => {
    // Required fields are own fields: the prototype's "name"-like members never satisfy them.
    expect(structProblems('p', {}, 'SecretKeyRefOptions')).toEqual([
      'prop p.key is required (a string)', 'prop p.secretName is required (a string)',
    ]);
    expect(structProblems('p', { toString: 'x' }, 'AgentResources')).toEqual([
      'prop p.toString is not a prop of AgentResources; the known props are cpuLimit, cpuRequest, memoryLimit, memoryRequest',
    ]);
  });
});

describe('object size', () => {
  test('a ConfigMap over 1 MiB is refused; one below passes', () => {
    const configMap = (bytes: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { f: 'x'.repeat(bytes) } });
    expect(checkObjectSize(configMap(CONFIG_MAP_MAX_BYTES)).problems[0]).toContain('above the API server\'s ConfigMap limit of 1048576 bytes');
    expect(checkObjectSize(configMap(1000))).toEqual({ problems: [], warnings: [] });
  });

  test('an object too large for last-applied-configuration is refused (or warned about) with server-side apply as the fix', () => {
    const big = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { f: 'x'.repeat(300 * 1024) } };
    const refused = checkObjectSize(big);
    expect(refused.problems).toEqual([expect.stringMatching(/ConfigMap "c" is \d+ bytes of JSON: .*262144-byte .*kubectl apply --server-side/)]);
    const warned = checkObjectSize(big, 'warn');
    expect(warned.problems).toEqual([]);
    expect(warned.warnings).toHaveLength(1);
  });

  test('multi-byte characters count as bytes, not characters', () => {
    const data = { f: 'é'.repeat(CONFIG_MAP_MAX_BYTES / 2 + 1) };
    expect(checkObjectSize({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data }, 'warn').problems).toHaveLength(1);
  });
});

test('env names of fieldEnv are value-checked by the construct (the type check takes any key)', () => {
  const chart = new Chart(Testing.app(), 'c');
  expect(() => new NodeAgentDaemonSet(chart, 'x', { image: 'a:1', fieldEnv: { 'MY VAR': AgentEnvFieldPath.NODE_IP } }))
    .toThrow('fieldEnv: "MY VAR" is not a valid environment variable name');
});
