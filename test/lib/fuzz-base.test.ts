/**
 * Fuzz tests of the base construct and its rollout prop (seed 16, bounded runs): every run either
 * synthesizes manifests the shared check accepts, or throws an Error starting with the construct
 * kind and path. A failure outside KNOWN_BASE_FAILURES (now empty) fails the test; the classes the
 * fuzz once found are plain regression tests below.
 */
import { Chart, Duration, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import { HostPathType, NodeAgentDaemonSet, NodeRequirement, Promotion, RolloutWave, UpdateStrategy } from '../../src';
import { AgentEnvFieldPath, AgentEnvValue, AgentHandler, AgentProbe } from '../../src/agent/container-inputs';
import { checkStruct } from '../../src/validation/struct-check';
import {
  env, envName, failureClass, fuzzProps, fuzzRun, ints, labels, maybe, nodeRequirements, Outcome, pick, port, priorityClassName,
  probe, propagation, Props, rarely, resources, rollout, sidecar, thrownClass, tolerations, updateStrategy,
} from '../util/fuzz';
import { synthManifests } from '../util/manifests';

/** The node agent's props against their generated shape. */
const checkAgentPropTypes = (where: string, props: unknown): void => checkStruct(where, 'NodeAgentDaemonSetProps', props);

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = 16;
const KIND = 'NodeAgentDaemonSet';

const build = (chart: Chart, props: Props) => new NodeAgentDaemonSet(chart, 'agent', props);

const baseProps = fc.record({
  image: pick('registry.example.com/agent:1.2.3', 'agent:latest', ''),
  name: maybe(pick('agent', '1agent', 'Bad_Name')),
  containerName: rarely(pick('main', 'Bad')),
  args: maybe(fc.array(pick('--v=2', ''), { maxLength: 2 })),
  env: maybe(env),
  ports: maybe(fc.array(fc.record({ name: pick('metrics', 'http', 'BAD'), containerPort: port, hostPort: rarely(port) }, { requiredKeys: ['name', 'containerPort'] }), { maxLength: 2 })),
  resources: maybe(resources),
  runAsUser: maybe(ints(1000)),
  runAsGroup: maybe(ints(1000)),
  readiness: maybe(probe),
  liveness: maybe(probe),
  preStop: rarely(pick(AgentHandler.fromCommand(['sleep', '5']), AgentHandler.fromCommand([]))),
  hostPaths: maybe(fc.array(fc.record({
    name: pick('logs', 'state', 'Bad'),
    hostPath: pick('/var/log', '/var/lib/agent', 'rel'),
    type: maybe(pick(HostPathType.DIRECTORY, HostPathType.DIRECTORY_OR_CREATE)),
    mountPath: maybe(pick('/host/logs', 'rel')),
    readOnly: maybe(fc.boolean()),
    propagation: maybe(propagation),
  }, { requiredKeys: ['name', 'hostPath'] }), { maxLength: 2 })),
  configData: maybe(fc.dictionary(pick('agent.conf', 'bad/key', '..'), pick('x = 1', ''), { maxKeys: 2 })),
  sidecars: maybe(fc.array(sidecar, { maxLength: 2 })),
  initContainers: rarely(fc.array(sidecar, { maxLength: 1 })),
  fieldEnv: maybe(fc.dictionary(envName, pick(AgentEnvFieldPath.NODE_IP, AgentEnvFieldPath.POD_NAME), { maxKeys: 2 })),
  updateStrategy: maybe(updateStrategy),
  minReadySeconds: maybe(ints(10)),
  revisionHistoryLimit: maybe(ints(10)),
  nodeSelector: maybe(labels),
  os: maybe(pick('linux', 'windows', 'Linux OS', '')),
  nodeRequirements: maybe(nodeRequirements),
  tolerations: maybe(tolerations),
  priorityClassName: maybe(priorityClassName),
  hostNetwork: maybe(fc.boolean()),
  terminationGracePeriodSeconds: maybe(ints(30)),
  labels: maybe(labels),
  rollout: rarely(rollout),
}, { requiredKeys: ['image'] });

const BASE_PATHS = ['image', 'name', 'env', 'ports', 'resources', 'resources.cpuRequest', 'hostPaths', 'configData', 'sidecars', 'fieldEnv',
  'updateStrategy', 'nodeSelector', 'tolerations', 'labels', 'rollout', 'rollout.waves', 'rollout.previous', 'rollout.wavePace', 'minReadySeconds'];

/**
 * Failures the fuzz may still find, as [pattern on the reason, what it is]. Empty: every class it
 * found once (wrong types, probe fields, ids, env names, priority class names, os, preStop, host
 * ports, subPath, tolerations, the previous release) is refused with the path now, and has a
 * regression test below.
 */
const KNOWN_BASE_FAILURES: Array<[RegExp, string]> = [];

function collect(arb: fc.Arbitrary<Props>, builder = build): Map<string, { count: number; reason: string }> {
  const found = new Map<string, { count: number; reason: string }>();
  fc.assert(fc.property(arb, (props) => {
    const outcome: Outcome = fuzzRun(KIND, builder, props);
    if (outcome.kind !== 'failure') return;
    const cls = failureClass(outcome.reason);
    const entry = found.get(cls) ?? { count: 0, reason: outcome.reason };
    entry.count++;
    found.set(cls, entry);
  }), { seed: SEED, numRuns: RUNS });
  return found;
}

test('fuzz NodeAgentDaemonSet and its rollout: no failure outside the known base problems', () => {
  const found = collect(fuzzProps(baseProps, BASE_PATHS));
  const unknown = [...found.entries()].filter(([cls]) => !KNOWN_BASE_FAILURES.some(([pattern]) => pattern.test(cls)));
  if (process.env.FUZZ_REPORT) console.log([...found.entries()].map(([c, e]) => `${e.count}x ${c}`).join('\n'));
  expect(unknown.map(([cls]) => cls)).toEqual([]);
});

/** The base behind an explicit checkAgentPropTypes (the base also calls it on entry): no wrong type gets past it. */
const typeCheckedBuild = (chart: Chart, props: Props) => {
  checkAgentPropTypes(`${KIND} ${chart.node.path}/agent`, props);
  return new NodeAgentDaemonSet(chart, 'agent', props);
};

test('fuzz: with checkAgentPropTypes on entry, no wrong type reaches the base as a TypeError', () => {
  const found = collect(fuzzProps(baseProps, BASE_PATHS), typeCheckedBuild);
  if (process.env.FUZZ_REPORT) console.log(['type-checked:', ...[...found.entries()].map(([c, e]) => `${e.count}x ${c}`)].join('\n'));
  expect([...found.keys()].filter((cls) => /^(TypeError|RangeError)/.test(cls))).toEqual([]);
});

const rolloutProps = fc.record({
  image: pick('registry.example.com/agent:1.2.3'),
  configData: maybe(fc.constant({ 'agent.conf': 'x = 1' })),
  rollout,
}, { requiredKeys: ['image', 'rollout'] });
const ROLLOUT_PATHS = ['rollout', 'rollout.waves', 'rollout.promoted', 'rollout.previous', 'rollout.labelKey', 'rollout.wavePace', 'rollout.canaryPace'];

test('fuzz the rollout prop: no failure outside the known base problems', () => {
  const found = collect(fuzzProps(rolloutProps, ROLLOUT_PATHS));
  const unknown = [...found.entries()].filter(([cls]) => !KNOWN_BASE_FAILURES.some(([pattern]) => pattern.test(cls)));
  if (process.env.FUZZ_REPORT) console.log(['rollout:', ...[...found.entries()].map(([c, e]) => `${e.count}x ${c}`)].join('\n'));
  expect(unknown.map(([cls]) => cls)).toEqual([]);
});

// ---- regressions: the shrunk counterexamples --------------------------------------------------

const IMAGE = 'registry.example.com/agent:1.2.3';
const SIDECAR = { name: 'proxy', image: IMAGE };

function synthBase(props: Props): void {
  const chart = new Chart(Testing.app(), 'chart', { namespace: 'agents' });
  new NodeAgentDaemonSet(chart, 'agent', { image: IMAGE, ...props });
  synthManifests(chart);
}

/** The refusal the base should give: a ValidationError naming the construct and path. */
function expectRefused(props: Props, message: RegExp = /./): void {
  let error: unknown;
  try {
    synthBase(props);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(Error);
  expect(thrownClass(error)).toBe('ValidationError');
  expect((error as Error).message).toMatch(/^NodeAgentDaemonSet chart\/agent: /);
  expect((error as Error).message).toMatch(message);
}

describe('fixed: rollout lookups and wave syntax', () => {
  test('a wave named "constructor" with its own pace synthesizes (paces are looked up in a Map)', () => {
    expect(() => synthBase({ rollout: { waves: [RolloutWave.labelled('constructor')], promoted: Promotion.all(), wavePace: { constructor: UpdateStrategy.oneAtATime() } } }))
      .not.toThrow();
  });

  test('RolloutWave.matching with an invalid key is refused with the path', () => {
    expectRefused({ rollout: { waves: [RolloutWave.matching('canary', NodeRequirement.in('bad key!', ['a']))], promoted: Promotion.all() } }, /not a valid label key/);
  });

  test('a hostname wave "Bad_Host!" is refused with the path', () => {
    expectRefused({ rollout: { waves: [RolloutWave.hostnames('canary', ['Bad_Host!'])], promoted: Promotion.all() } }, /"Bad_Host!" must be a DNS-1123 subdomain/);
  });

  // checkWholeNumber bounds its value by int32 unless told otherwise.
  test.each<[string, Props]>([
    ['revisionHistoryLimit 2^31', { revisionHistoryLimit: 2 ** 31 }],
    ['minReadySeconds 2^31', { minReadySeconds: 2 ** 31 }],
    ['terminationGracePeriodSeconds 1e20', { terminationGracePeriodSeconds: 1e20 }],
  ])('%s is refused with the path', (_what, props) => {
    expectRefused(props, /must be a whole number of at most 2147483647/);
  });

  test('rollout.labelKey "bad key!" is refused with the path', () => {
    expectRefused({ rollout: { waves: [RolloutWave.labelled('canary')], promoted: Promotion.all(), labelKey: 'bad key!' } }, /not a valid label key/);
  });
});

/** Base problems the fuzz found, fixed: each is refused before anything is built, with the construct path. */
describe('fixed base problems', () => {
  test.each(([
    ['an init container with a readiness probe (cdk8s-plus message without path)', { initContainers: [{ ...SIDECAR, readiness: AgentProbe.fromTcpSocket({ port: 80 }) }] }],
    ['a duplicate port in one container (cdk8s-plus message without path)', { ports: [{ name: 'a', containerPort: 1033 }, { name: 'b', containerPort: 1033 }] }],
    ['a fractional probe period (cdk8s message at synthesis)', { readiness: AgentProbe.fromTcpSocket({ port: 80, periodSeconds: Duration.seconds(1.5) }) }],
    ['probe port 0', { liveness: AgentProbe.fromTcpSocket({ port: 0 }) }],
    ['probe port 2^53', { readiness: AgentProbe.fromHttpGet('/', { port: 2 ** 53 }) }],
    ['a negative probe threshold', { readiness: AgentProbe.fromHttpGet('/', { port: 80, failureThreshold: -1 }) }],
    ['a sidecar runAsUser 1.5', { sidecars: [{ ...SIDECAR, runAsUser: 1.5 }] }],
    ['runAsUser -1', { runAsUser: -1 }],
    ['runAsGroup -5', { runAsUser: 1000, runAsGroup: -5 }],
    ['priorityClassName a..b', { priorityClassName: 'a..b' }],
    ['os "Linux OS"', { os: 'Linux OS' }],
    ['preStop with an empty command', { preStop: AgentHandler.fromCommand([]) }],
    ['the same host port twice via a sidecar', { hostNetwork: true, ports: [{ name: 'a', containerPort: 9000 }], sidecars: [{ ...SIDECAR, ports: [{ name: 'b', containerPort: 9000 }] }] }],
    ['a sidecar subPath ../etc', { configData: { 'a.conf': 'x' }, sidecars: [{ ...SIDECAR, mounts: [{ volume: 'config', mountPath: '/etc/x', subPath: '../etc' }] }] }],
    ['a toleration value "bad value!"', { tolerations: [{ key: 'k', value: 'bad value!' }] }],
    ['sidecars not an array (TypeError)', { sidecars: 5 }],
    ['a plain object as updateStrategy (TypeError)', { updateStrategy: { type: 'RollingUpdate' } }],
    ['tolerations a string (TypeError)', { tolerations: 'all' }],
    ['resources.cpuRequest a number (TypeError text.trim)', { resources: { cpuRequest: 1 } }, /prop resources.cpuRequest must be a string, got number 1/],
    ['a non-ASCII fieldEnv name', { fieldEnv: { NÄME: AgentEnvFieldPath.NODE_IP } }],
    ['an empty env name', { env: { '': AgentEnvValue.fromValue('x') } }],
  ] as Array<[string, Props, RegExp?]>).map(([what, props, message]): [string, Props, RegExp] => [what, props, message ?? /./]))('%s', (_what, props, message) => {
    // every row has three elements: with two, jest would take the third argument as a done callback
    expectRefused(props, message);
  });
});
