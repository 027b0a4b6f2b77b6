import { daemonSetInfo, DaemonSetInfo, ROLLOUT_GROUP_LABEL } from '../../src/cli/coverage/manifests';
import { estimateRollout } from '../../src/cli/estimate/estimate';
import { formatDuration, paceOf, scaledValue } from '../../src/rollout/pace';

/** A DaemonSet covering `nodes` synthetic nodes. */
function covered(name: string, nodes: number, spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}, group?: string, agent = 'agent') {
  const info: DaemonSetInfo = daemonSetInfo({
    kind: 'DaemonSet',
    metadata: { name, namespace: 'ns', labels: { 'app.kubernetes.io/name': agent } },
    spec: { template: { metadata: { labels: group ? { [ROLLOUT_GROUP_LABEL]: group } : {} }, spec: { containers: [], ...podSpec } }, ...spec },
  }, 'test.yaml');
  return { info, covered: Array.from({ length: nodes }, (_, i) => `${name}-node-${i}`) };
}
const rolling = (maxUnavailable?: number | string, maxSurge?: number | string) =>
  ({ updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable, maxSurge } } });

describe('500 nodes, maxUnavailable 1, 30 s per pod', () => {
  test('takes 500 batches of one pod: 15000 s = 250 min = 4 h 10 min', () => {
    const [agent] = estimateRollout([covered('log-collector', 500, rolling(1, 0))], { podSeconds: 30, bakeSeconds: 600 });
    const wave = agent.waves[0];
    expect(wave.pace).toMatchObject({ type: 'RollingUpdate', mode: 'unavailable', batch: 1 });
    expect(wave.batches).toBe(500);
    expect(wave.seconds).toBe(15000);
    expect(agent.totalSeconds).toBe(250 * 60);
    expect(formatDuration(agent.totalSeconds)).toBe('4 h 10 min');
  });

  test('the defaults (no updateStrategy) are the same pace: maxUnavailable 1, maxSurge 0', () => {
    const [agent] = estimateRollout([covered('log-collector', 500)], { podSeconds: 30 });
    expect(agent.waves[0].pace).toMatchObject({ maxUnavailable: 1, maxSurge: 0, batch: 1 });
    expect(agent.totalSeconds).toBe(15000);
  });
});

describe('percentages are scaled against the desired count and ROUNDED UP (the DaemonSet controller)', () => {
  test.each([
    ['25%', 50, 13], // 12 if rounded down: the DaemonSet controller rounds up
    ['25%', 4, 1],
    ['25%', 3, 1],
    ['10%', 18, 2],
    ['50%', 7, 4],
    ['100%', 7, 7],
    ['1%', 1, 1],
    ['0%', 10, 0],
    ['25%', 0, 0],
    [3, 50, 3],
  ])('%s of %i → %i', (value, total, expected) => {
    expect(scaledValue(value, total, 'maxUnavailable')).toBe(expected);
  });

  test('25% of 50 nodes: 13 pods at once, 4 batches', () => {
    const [agent] = estimateRollout([covered('a', 50, rolling('25%', 0))], { podSeconds: 30 });
    expect(agent.waves[0].pace).toMatchObject({ batch: 13 });
    expect(agent.waves[0].batches).toBe(4);
    expect(agent.waves[0].seconds).toBe(120);
  });

  test('a value that is neither an int nor a percentage is an error naming the DaemonSet', () => {
    expect(() => scaledValue('two', 10, 'maxUnavailable')).toThrow('maxUnavailable "two" is neither an integer nor a percentage like "25%"');
    expect(() => estimateRollout([covered('a', 5, rolling('1.5', 0))])).toThrow('test.yaml: DaemonSet ns/a: updateStrategy.rollingUpdate.maxUnavailable "1.5"');
  });
});

describe('paces', () => {
  test('surge: maxSurge sets the pods at once', () => {
    expect(paceOf({ type: 'RollingUpdate', maxUnavailable: 0, maxSurge: '10%' }, 25)).toMatchObject({ mode: 'surge', batch: 3, invalid: undefined });
  });

  test('never more pods at once than nodes', () => {
    expect(paceOf({ type: 'RollingUpdate', maxUnavailable: 10 }, 4)).toMatchObject({ batch: 4 });
  });

  test.each([
    ['maxSurge alone (maxUnavailable defaults to 1)', { maxSurge: 1 }, 'maxSurge is set but maxUnavailable defaults to 1'],
    ['both non-zero', { maxUnavailable: 1, maxSurge: 1 }, 'maxSurge may not be set when maxUnavailable is non-zero'],
    ['both zero', { maxUnavailable: 0, maxSurge: 0 }, 'maxUnavailable may not be 0 when maxSurge is 0'],
    ['above 100%', { maxUnavailable: '150%', maxSurge: 0 }, 'a percentage above 100%'],
  ])('the API server rejects %s', (_name, rollingUpdate, message) => {
    const pace = paceOf({ type: 'RollingUpdate', ...rollingUpdate }, 10);
    expect(pace.type === 'RollingUpdate' && pace.invalid).toContain(message);
    const [agent] = estimateRollout([covered('a', 10, { updateStrategy: { type: 'RollingUpdate', rollingUpdate } })]);
    expect(agent.waves[0].seconds).toBeUndefined();
    expect(agent.waves[0].problem).toContain(message);
    expect(agent.manualWaves).toEqual(['ns/a']);
  });

  test('a percentage that scales to 0 with pods to run falls back to one at a time (the controller)', () => {
    expect(paceOf({ type: 'RollingUpdate', maxUnavailable: '1%', maxSurge: 0 }, 10)).toMatchObject({ batch: 1 });
  });

  test('OnDelete: no automatic rollout, said so', () => {
    const [agent] = estimateRollout([covered('driver', 8, { updateStrategy: { type: 'OnDelete' } })]);
    expect(agent.waves[0]).toMatchObject({ pace: { type: 'OnDelete' }, batches: 0 });
    expect(agent.waves[0].seconds).toBeUndefined();
    expect(agent.waves[0].note).toContain('OnDelete: no automatic rollout');
    expect(agent.manualWaves).toEqual(['ns/driver']);
    expect(agent.totalSeconds).toBe(0);
  });

  test('surge with a host port deadlocks (kubernetes#106417): a problem, no time', () => {
    const hostPort = { containers: [{ name: 'c', ports: [{ containerPort: 9100, hostPort: 9100 }] }] };
    const [agent] = estimateRollout([covered('exporter', 10, rolling(0, 1), hostPort)]);
    expect(agent.waves[0].problem).toContain('maxSurge with host port 9100');
    expect(agent.waves[0].seconds).toBeUndefined();
  });
});

describe('waves, bake time, blast radius', () => {
  const waves = [
    covered('agent-canary', 2, { ...rolling(1, 0), minReadySeconds: 30 }, {}, 'canary'),
    covered('agent-wave-1', 10, rolling('50%', 0), {}, 'wave-1'),
    covered('agent', 88, rolling('25%', 0), {}, 'fleet'),
  ];

  test('time per wave: batches × (pod cycle + minReadySeconds); total adds a bake between waves', () => {
    const [agent] = estimateRollout([...waves].reverse(), { podSeconds: 30, bakeSeconds: 600 });
    expect(agent.waves.map((w) => [w.daemonSet, w.nodes, w.pace.type === 'RollingUpdate' && w.pace.batch, w.batches, w.cycleSeconds, w.seconds])).toEqual([
      ['ns/agent-canary', 2, 1, 2, 60, 120],
      ['ns/agent-wave-1', 10, 5, 2, 30, 60],
      ['ns/agent', 88, 22, 4, 30, 120],
    ]);
    expect(agent.bakes).toBe(2);
    expect(agent.totalSeconds).toBe(120 + 60 + 120 + 2 * 600);
  });

  test('blast radius: each wave\'s nodes as a share of the agent\'s nodes, and cumulative', () => {
    const [agent] = estimateRollout(waves);
    expect(agent.nodes).toBe(100);
    expect(agent.waves.map((w) => [w.blastRadiusPercent, w.cumulativeNodes, w.cumulativePercent])).toEqual([[2, 2, 2], [10, 12, 12], [88, 100, 100]]);
  });

  test('a wave with no nodes takes no time and no bake', () => {
    const [agent] = estimateRollout([...waves, covered('agent-wave-2', 0, {}, {}, 'wave-2')], { podSeconds: 30, bakeSeconds: 600 });
    expect(agent.waves.map((w) => w.daemonSet)).toEqual(['ns/agent-canary', 'ns/agent-wave-1', 'ns/agent-wave-2', 'ns/agent']);
    expect(agent.bakes).toBe(2);
    expect(agent.waves[2].note).toContain('no nodes');
  });

  test('Argo CD sync-wave annotations order the waves', () => {
    const annotated = (name: string, wave: string) => {
      const c = covered(name, 1);
      return { ...c, info: { ...c.info, syncWave: Number(wave) } };
    };
    const [agent] = estimateRollout([annotated('z-first', '1'), annotated('a-second', '2')]);
    expect(agent.waves.map((w) => w.daemonSet)).toEqual(['ns/z-first', 'ns/a-second']);
  });

  test('agents are estimated separately, in name order', () => {
    const result = estimateRollout([covered('b', 1, {}, {}, undefined, 'beta'), covered('a', 1, {}, {}, undefined, 'alpha')]);
    expect(result.map((a) => a.agent)).toEqual(['alpha', 'beta']);
  });

  test('negative inputs are rejected', () => {
    expect(() => estimateRollout(waves, { podSeconds: -1 })).toThrow('podSeconds is -1; it must be a number of seconds, 0 or more');
  });
});

test.each([
  [0, '0 s'], [45, '45 s'], [60, '1 min'], [750, '12 min 30 s'], [15000, '4 h 10 min'], [3601, '1 h 1 s'],
])('formatDuration(%i) = %s', (seconds, text) => {
  expect(formatDuration(seconds)).toBe(text);
});

test('an agent\'s nodes are its distinct nodes, whether its one DaemonSet lists them in name order or not', () => {
  const ds = covered('a', 0);
  for (const names of [['n1', 'n1', 'n2'], ['n2', 'n1', 'n1'], ['n1', 'n2', 'n2']]) {
    const [agent] = estimateRollout([{ info: ds.info, covered: names }], { podSeconds: 30 });
    expect(agent.nodes).toBe(2);
    expect(agent.waves[0]).toMatchObject({ nodes: 3, cumulativeNodes: 2, cumulativePercent: 100 });
  }
});
