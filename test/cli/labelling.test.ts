import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import fc from 'fast-check';
import {
  assignWaves, emptyWaves, gpuRelabelSteps, labelCommands, LabellingOptions, nodePoolLabel, smallestClusterForWave, WaveAssignment, waveCounts,
  WaveFraction,
} from '../../src/cli/coverage/labelling';
import { NodeJson } from '../../src/scheduling/types';
import { DEFAULT_WAVE_LABEL_KEY } from '../../src/waves/partition';

const ZONE = 'topology.kubernetes.io/zone';
const TYPE = 'node.kubernetes.io/instance-type';
const CONTROL_PLANE = 'node-role.kubernetes.io/control-plane';
const KEY = DEFAULT_WAVE_LABEL_KEY;

function node(name: string, labels: Record<string, string> = {}): NodeJson {
  return { metadata: { name, labels } };
}

/** `count` nodes named `<prefix>-<i>`, spread round-robin over `zones`. */
function cluster(count: number, zones: readonly string[] = ['a', 'b', 'c'], prefix = 'node'): NodeJson[] {
  return Array.from({ length: count }, (_, i) => node(`${prefix}-${i}`, { [ZONE]: zones[i % zones.length] }));
}

const zoneOf = (nodes: readonly NodeJson[]) => new Map(nodes.map((n) => [n.metadata.name, n.metadata.labels?.[ZONE]]));
const STANDARD: WaveFraction[] = [{ name: 'canary', fraction: 0.02 }, { name: 'wave-1', fraction: 0.1 }, { name: 'wave-2', fraction: 0.3 }];

/** Existing nodes whose wave differs between two assignments. */
function moved(before: WaveAssignment, after: WaveAssignment): string[] {
  return Object.keys(after.byNode).filter((name) => name in before.byNode && before.byNode[name] !== after.byNode[name]);
}

describe('assignWaves', () => {
  test('counts follow the fractions and every node is in exactly one wave or the fleet', () => {
    const nodes = cluster(100);
    const result = assignWaves(nodes, { waves: STANDARD });
    expect(result.labelKey).toBe(KEY);
    expect(Object.values(result.byWave).map((members) => members.length)).toEqual([2, 10, 30]);
    expect(result.fleet).toHaveLength(58);
    const all = [...Object.values(result.byWave).flat(), ...result.fleet].sort();
    expect(all).toEqual(nodes.map((n) => n.metadata.name).sort());
    for (const [wave, members] of Object.entries(result.byWave)) {
      expect(members).toEqual([...members].sort());
      for (const name of members) expect(result.byNode[name]).toBe(wave);
    }
    for (const name of result.fleet) expect(result.byNode[name]).toBeUndefined();
    expect(Object.keys(result.byNode)).toEqual(Object.keys(result.byNode).sort());
  });

  test('the result is a golden value for a fixed input (sha256 of seed and name, not list order)', () => {
    const result = assignWaves(cluster(12), { waves: [{ name: 'canary', fraction: 0.25 }, { name: 'wave-1', fraction: 0.25 }] });
    // One node per zone in each wave (zones a, b, c are node-0/3/6/9, 1/4/7/10, 2/5/8/11).
    expect(result.byWave).toEqual({ 'canary': ['node-2', 'node-3', 'node-7'], 'wave-1': ['node-10', 'node-11', 'node-9'] });
    expect(result.fleet).toEqual(['node-0', 'node-1', 'node-4', 'node-5', 'node-6', 'node-8']);
  });

  test('the seed draws different canaries', () => {
    const nodes = cluster(300);
    const waves = [{ name: 'canary', fraction: 0.05 }];
    expect(assignWaves(nodes, { waves, seed: 'a' }).byWave.canary).not.toEqual(assignWaves(nodes, { waves, seed: 'b' }).byWave.canary);
    expect(assignWaves(nodes, { waves, seed: 'a' })).toEqual(assignWaves(nodes, { waves, seed: 'a' }));
  });

  test('a custom label key is carried to the commands', () => {
    const result = assignWaves(cluster(4), { waves: [{ name: 'canary', fraction: 0.25 }], labelKey: 'example.com/wave' });
    expect(result.labelKey).toBe('example.com/wave');
    expect(labelCommands(result)[0]).toMatch(/example\.com\/wave/);
  });

  describe('properties over random clusters', () => {
    const zones = fc.constantFrom('a', 'b', 'c', 'd');
    /** Nodes with unique names, a zone (sometimes missing), an instance type, one in ten control-plane. */
    const nodes = (minLength: number, maxLength: number) => fc.uniqueArray(fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/),
      zone: fc.option(zones, { nil: undefined, freq: 8 }),
      type: fc.constantFrom('m5', 'c5', 'r5'),
      controlPlane: fc.integer({ min: 0, max: 9 }).map((i) => i === 0),
    }), { selector: (n) => n.name, minLength, maxLength }).map((list) => list.map(toNode));
    const waves: fc.Arbitrary<WaveFraction[]> = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 })
      .map((percents) => {
        let left = 100;
        return percents.map((p, i) => {
          const percent = Math.max(1, Math.min(p, left - (percents.length - 1 - i)));
          left -= percent;
          return { name: `w${i}`, fraction: percent / 100 };
        });
      }).filter((list) => list.reduce((sum, w) => sum + w.fraction, 0) <= 1);

    function toNode(n: { name: string; zone?: string; type: string; controlPlane: boolean }): NodeJson {
      return node(n.name, {
        ...(n.zone === undefined ? {} : { [ZONE]: n.zone }),
        [TYPE]: n.type,
        ...(n.controlPlane ? { [CONTROL_PLANE]: '' } : {}),
      });
    }

    test('deterministic: a shuffled node list gives the same assignment', () => {
      fc.assert(fc.property(nodes(1, 60).chain((list) => fc.tuple(fc.constant(list), fc.shuffledSubarray(list, { minLength: list.length }))), waves,
        ([list, shuffled], w) => {
          expect(assignWaves(shuffled, { waves: w })).toEqual(assignWaves(list, { waves: w }));
        }), { numRuns: 100 });
    });

    test('counts: exactly waveCounts per wave, and at least one node per wave once there are more nodes than waves', () => {
      fc.assert(fc.property(nodes(1, 80), waves, (list, w) => {
        // (control-plane nodes may leave the first wave short: tested below)
        const result = assignWaves(list, { waves: w, includeControlPlane: true });
        const counts = waveCounts(w.map((x) => x.fraction), list.length);
        expect(w.map((x) => result.byWave[x.name].length)).toEqual(counts);
        if (list.length > w.length) expect(counts.every((count) => count >= 1)).toBe(true);
        const sum = w.reduce((s, x) => s + x.fraction, 0);
        const assigned = counts.reduce((s, c) => s + c, 0);
        if (list.length > w.length) expect(Math.abs(assigned - sum * list.length)).toBeLessThanOrEqual(w.length);
      }), { numRuns: 200 });
    });

    test('spread: the first wave spans every zone once it has as many nodes as there are zones', () => {
      fc.assert(fc.property(nodes(1, 80), waves, (list, w) => {
        const result = assignWaves(list, { waves: w });
        const zonesOf = zoneOf(list);
        // zones with a node the first wave may take (a zone of only control-plane nodes cannot be covered)
        const allZones = new Set(list.filter((n) => n.metadata.labels?.[CONTROL_PLANE] === undefined).map((n) => zonesOf.get(n.metadata.name)));
        const first = result.byWave[w[0].name];
        if (first.length >= allZones.size) {
          expect(new Set(first.map((name) => zonesOf.get(name)))).toEqual(allZones);
        }
      }), { numRuns: 300 });
    });

    test('spread: every wave holds a node of zone s once it has N/size(s) + zones nodes (and s has nodes left)', () => {
      fc.assert(fc.property(nodes(1, 120), waves, (list, w) => {
        const result = assignWaves(list, { waves: w });
        const zonesOf = zoneOf(list);
        const sizes = new Map<string | undefined, number>();
        for (const zone of zonesOf.values()) sizes.set(zone, (sizes.get(zone) ?? 0) + 1);
        const taken = new Set<string>();
        for (const wave of w) {
          const members = result.byWave[wave.name];
          for (const [zone, size] of sizes) {
            const left = list.some((n) => zonesOf.get(n.metadata.name) === zone && !taken.has(n.metadata.name));
            if (left && members.length >= list.length / size + sizes.size) {
              expect(members.some((name) => zonesOf.get(name) === zone)).toBe(true);
            }
          }
          members.forEach((name) => taken.add(name));
        }
      }), { numRuns: 300 });
    });

    test('stable: adding or removing one node moves at most 3 existing nodes per wave', () => {
      // Waves are consecutive segments of one spread order. One node joining stratum z shifts
      // the rank/size key of z's nodes by less than z's spacing, so at any cut z keeps or loses
      // one node, and the cut (moved by at most one by the rounding of the counts) absorbs the
      // difference with at most two more nodes: <= 3 crossings per cut, <= 3 per wave in total.
      // Removing a node is the same change seen backwards, so the same bound holds.
      fc.assert(fc.property(nodes(1, 100), waves, fc.boolean(), fc.nat(), fc.constantFrom('a', 'b', 'e'), (list, w, add, pick, zone) => {
        const changed = add
          ? [...list, node('zz-new-node', { [ZONE]: zone })]
          : list.filter((_, i) => i !== pick % list.length);
        fc.pre(changed.length > 0);
        const before = assignWaves(list, { waves: w });
        const after = assignWaves(changed, { waves: w });
        expect(moved(before, after).length).toBeLessThanOrEqual(3 * w.length);
      }), { numRuns: 500 });
    });

    test('stable with two spread labels: at most 3 per wave plus the number of strata', () => {
      fc.assert(fc.property(nodes(1, 100), waves, fc.boolean(), fc.nat(), (list, w, add, pick) => {
        const spreadBy = [ZONE, TYPE];
        const changed = add ? [...list, node('zz-new-node', { [ZONE]: 'a', [TYPE]: 'm5' })] : list.filter((_, i) => i !== pick % list.length);
        fc.pre(changed.length > 0);
        // The strata's first nodes are ordered greedily, so churn can reorder those (at most one per stratum).
        const strata = (of: NodeJson[]) => new Set(of.map((n) => `${n.metadata.labels?.[ZONE]}/${n.metadata.labels?.[TYPE]}`)).size;
        const before = assignWaves(list, { waves: w, spreadBy });
        const after = assignWaves(changed, { waves: w, spreadBy });
        expect(moved(before, after).length).toBeLessThanOrEqual(3 * w.length + Math.max(strata(list), strata(changed)));
      }), { numRuns: 500 });
    });

    test('control-plane nodes are never in the first wave', () => {
      const withControlPlane = fc.uniqueArray(fc.record({
        name: fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/), zone: fc.option(zones, { nil: undefined }), type: fc.constant('m5'), controlPlane: fc.boolean(),
      }), { selector: (n) => n.name, minLength: 1, maxLength: 40 }).map((list) => list.map(toNode));
      fc.assert(fc.property(withControlPlane, waves, (list, w) => {
        const result = assignWaves(list, { waves: w });
        const controlPlane = new Set(list.filter((n) => n.metadata.labels?.[CONTROL_PLANE] !== undefined).map((n) => n.metadata.name));
        expect(result.byWave[w[0].name].filter((name) => controlPlane.has(name))).toEqual([]);
        // and the canary is only short of its count when there are not enough other nodes
        const expected = waveCounts(w.map((x) => x.fraction), list.length)[0];
        expect(result.byWave[w[0].name].length).toBe(Math.min(expected, list.length - controlPlane.size));
      }), { numRuns: 300 });
    });
  });

  test('churn in a 1000-node cluster: 20 nodes added, 20 removed, one at a time', () => {
    let nodes = cluster(1000);
    const first = assignWaves(nodes, { waves: STANDARD });
    let previous = first;
    for (let i = 0; i < 20; i++) {
      nodes = [...nodes, node(`new-${i}`, { [ZONE]: ['a', 'b', 'c'][i % 3] })];
      nodes = nodes.filter((n) => n.metadata.name !== `node-${i * 7}`);
      const next = assignWaves(nodes, { waves: STANDARD });
      expect(moved(previous, next).length).toBeLessThanOrEqual(2 * 3 * STANDARD.length);
      previous = next;
    }
    // Over the whole churn, far fewer nodes changed wave than a reshuffle would move (~58%).
    expect(moved(first, previous).length).toBeLessThan(60);
  });

  test('spreads over zones in proportion: every wave of the standard plan spans all zones of a 3 x 100 cluster', () => {
    const nodes = cluster(300);
    const zones = zoneOf(nodes);
    const result = assignWaves(nodes, { waves: STANDARD });
    for (const members of Object.values(result.byWave)) {
      const perZone = ['a', 'b', 'c'].map((zone) => members.filter((name) => zones.get(name) === zone).length);
      expect(Math.max(...perZone) - Math.min(...perZone)).toBeLessThanOrEqual(1);
    }
  });

  test('an uneven zone still gets a canary node', () => {
    const nodes = [...cluster(97, ['a', 'b']), ...cluster(3, ['small'], 'small')];
    const zones = zoneOf(nodes);
    const result = assignWaves(nodes, { waves: [{ name: 'canary', fraction: 0.03 }] });
    expect(result.byWave.canary.map((name) => zones.get(name)).sort()).toEqual(['a', 'b', 'small']);
  });

  test('two spread labels: a canary of 3 spans 3 zones and 2 instance types although there are 6 combinations', () => {
    const nodes: NodeJson[] = [];
    for (const zone of ['a', 'b', 'c']) {
      for (const type of ['m5', 'c5']) {
        for (let i = 0; i < 10; i++) nodes.push(node(`${zone}-${type}-${i}`, { [ZONE]: zone, [TYPE]: type }));
      }
    }
    for (const seed of ['', 'x', 'y', 'z']) {
      const canary = assignWaves(nodes, { waves: [{ name: 'canary', fraction: 0.05 }], spreadBy: [ZONE, TYPE], seed }).byWave.canary;
      expect(canary).toHaveLength(3);
      expect(new Set(canary.map((name) => name.split('-')[0]))).toEqual(new Set(['a', 'b', 'c']));
      expect(new Set(canary.map((name) => name.split('-')[1]))).toEqual(new Set(['m5', 'c5']));
    }
  });

  test('nodes without the spread label form their own stratum', () => {
    const nodes = [...cluster(20, ['a']), node('bare-1'), node('bare-2')];
    const canary = assignWaves(nodes, { waves: [{ name: 'canary', fraction: 0.1 }] }).byWave.canary;
    expect(canary).toHaveLength(2);
    expect(canary.filter((name) => name.startsWith('bare-'))).toHaveLength(1);
  });

  test('control-plane nodes: ranked last, so they land in the fleet; includeControlPlane lets them in the canary', () => {
    const nodes = [
      ...cluster(8, ['a']),
      node('cp-1', { [ZONE]: 'a', [CONTROL_PLANE]: '' }),
      node('cp-2', { [ZONE]: 'a', 'node-role.kubernetes.io/master': '' }),
    ];
    const waves = [{ name: 'canary', fraction: 0.2 }, { name: 'wave-1', fraction: 0.2 }];
    const result = assignWaves(nodes, { waves });
    expect(result.byNode['cp-1']).toBeUndefined();
    expect(result.byNode['cp-2']).toBeUndefined();

    const onlyControlPlane = [node('cp-1', { [CONTROL_PLANE]: '' }), node('cp-2', { [CONTROL_PLANE]: '' }), node('cp-3', { [CONTROL_PLANE]: '' })];
    const held = assignWaves(onlyControlPlane, { waves }).byWave;
    expect(held.canary).toEqual([]);
    expect(held['wave-1']).toHaveLength(1);
    expect(assignWaves(onlyControlPlane, { waves, includeControlPlane: true }).byWave.canary).toHaveLength(1);
  });

  describe('nodes a rollout cannot count on join no wave', () => {
    const notReady = (name: string, zone = 'a'): NodeJson => ({ metadata: { name, labels: { [ZONE]: zone } }, status: { conditions: [{ type: 'Ready', status: 'False' }] } });
    const unknown = (name: string): NodeJson => ({ metadata: { name, labels: { [ZONE]: 'b' } }, status: { conditions: [{ type: 'Ready', status: 'Unknown' }] } });
    const unreachableTaint = (name: string): NodeJson => ({ metadata: { name, labels: { [ZONE]: 'c' } }, spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] } });
    const cordoned = (name: string): NodeJson => ({ metadata: { name, labels: { [ZONE]: 'a' } }, spec: { unschedulable: true } });
    const noExecute = (name: string): NodeJson => ({ metadata: { name, labels: { [ZONE]: 'b' } }, spec: { taints: [{ key: 'spot', value: 'true', effect: 'NoExecute' }] } });
    const noSchedule = (name: string): NodeJson => ({ metadata: { name, labels: { [ZONE]: 'c' } }, spec: { taints: [{ key: 'gpu', effect: 'NoSchedule' }] } });
    const broken = [notReady('bad-notready'), unknown('bad-unknown'), unreachableTaint('bad-unreachable'), cordoned('bad-cordoned'), noExecute('bad-noexecute')];

    test('each kind stays in the fleet, with its reason; a NoSchedule taint alone is no hazard', () => {
      // every wave wants all the nodes it can get: the broken ones would be drawn if they were allowed
      const nodes = [...broken, noSchedule('ok-noschedule'), ...cluster(4)];
      const result = assignWaves(nodes, { waves: [{ name: 'canary', fraction: 0.5 }, { name: 'wave-1', fraction: 0.5 }] });
      for (const n of broken) expect(result.byNode[n.metadata.name]).toBeUndefined();
      expect(result.byNode['ok-noschedule']).toBeDefined();
      expect(result.heldOut).toEqual({
        'bad-cordoned': ['cordoned (spec.unschedulable)'],
        'bad-noexecute': ['NoExecute taint spot=true:NoExecute'],
        'bad-notready': ['NotReady (Ready=False)'],
        'bad-unknown': ['unreachable (Ready=Unknown)'],
        'bad-unreachable': ['unreachable (taint node.kubernetes.io/unreachable)'],
      });
      expect(Object.keys(result.heldOut)).toEqual(Object.keys(result.heldOut).sort());
      // wave sizes count every node given: 10 nodes, 5 + 5 wanted, only 5 healthy ones to take
      expect(result.byWave.canary).toHaveLength(5);
      expect(result.byWave['wave-1']).toEqual([]);
    });

    test('unreadyInLaterWaves: into later waves, never into the first', () => {
      const nodes = [...broken, ...cluster(5)];
      const result = assignWaves(nodes, { waves: [{ name: 'canary', fraction: 0.5 }, { name: 'wave-1', fraction: 0.5 }], unreadyInLaterWaves: true });
      expect(result.byWave.canary).toEqual(cluster(5).map((n) => n.metadata.name).sort());
      expect(result.byWave['wave-1']).toEqual(broken.map((n) => n.metadata.name).sort());
      expect(result.heldOut).toEqual({});
    });

    test('property: no node with a hazard is ever in the first wave, nor in any wave by default', () => {
      const kinds = [notReady, unknown, unreachableTaint, cordoned, noExecute, (name: string) => node(name, { [ZONE]: 'a' })];
      const arb = fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,8}$/), fc.integer({ min: 0, max: kinds.length - 1 })),
        { selector: ([name]) => name, minLength: 1, maxLength: 40 });
      const wavesArb = fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 4 })
        .map((ps) => ps.map((p, i) => ({ name: `w${i}`, fraction: p / 100 })));
      fc.assert(fc.property(arb, wavesArb, fc.boolean(), (list, waves, later) => {
        const nodes = list.map(([name, kind]) => kinds[kind](name));
        const bad = new Set(list.filter(([, kind]) => kind < kinds.length - 1).map(([name]) => name));
        const result = assignWaves(nodes, { waves, unreadyInLaterWaves: later });
        expect(result.byWave.w0.filter((name) => bad.has(name))).toEqual([]);
        if (!later) expect(Object.values(result.byWave).flat().filter((name) => bad.has(name))).toEqual([]);
        // held-out nodes are exactly the bad nodes in the fleet that a wave passed over
        for (const name of Object.keys(result.heldOut)) {
          expect(bad.has(name)).toBe(true);
          expect(result.byNode[name]).toBeUndefined();
        }
      }), { numRuns: 300, seed: 11 });
    });
  });

  describe('errors', () => {
    const nodes = cluster(3);
    test.each<[string, readonly NodeJson[], LabellingOptions, RegExp]>([
      ['an empty node list', [], { waves: STANDARD }, /nodes: the node list is empty/],
      ['a node listed twice', [node('x'), node('x')], { waves: STANDARD }, /node "x" is listed twice/],
      ['no waves', nodes, { waves: [] }, /at least one wave is required/],
      ['a zero fraction', nodes, { waves: [{ name: 'canary', fraction: 0 }] }, /waves\[0\]\.fraction \("canary"\): 0 is not in \(0, 1\]/],
      ['a negative fraction', nodes, { waves: [{ name: 'canary', fraction: -0.1 }] }, /-0.1 is not in \(0, 1\]/],
      ['a fraction above 1', nodes, { waves: [{ name: 'canary', fraction: 2 }] }, /2 is not in \(0, 1\]; use the share of nodes, e.g. 0.02 for 2%/],
      ['a NaN fraction', nodes, { waves: [{ name: 'canary', fraction: Number.NaN }] }, /NaN is not in \(0, 1\]/],
      ['fractions adding up to more than 1', nodes, { waves: [{ name: 'a', fraction: 0.6 }, { name: 'b', fraction: 0.5 }] }, /the fractions add up to 1.1, more than 1/],
      ['duplicate wave names', nodes, { waves: [{ name: 'a', fraction: 0.1 }, { name: 'a', fraction: 0.1 }] }, /waves\[1\]\.name: duplicate wave name "a"/],
      ['the name fleet', nodes, { waves: [{ name: 'fleet', fraction: 0.1 }] }, /"fleet" is reserved/],
      ['a name that is no DNS label', nodes, { waves: [{ name: 'Canary', fraction: 0.1 }] }, /"Canary" is not a DNS-1123 label/],
      ['spreading by the wave label', nodes, { waves: STANDARD, spreadBy: [KEY] }, /cannot spread by the wave label/],
      ['an invalid label key', nodes, { waves: STANDARD, labelKey: 'bad key!' }, /^labelKey: "bad key!" is not a valid label key/],
      ['an invalid spreadBy key', nodes, { waves: STANDARD, spreadBy: ['topology.kubernetes.io/zone', '/zone'] }, /^spreadBy\[1\]: "\/zone" is not a valid label key/],
    ])('%s', (_, list, options, message) => {
      expect(() => assignWaves(list, options)).toThrow(message);
    });

    test('decimal fractions that add up to 1 in decimal are accepted', () => {
      const result = assignWaves(cluster(10), { waves: [{ name: 'a', fraction: 0.1 }, { name: 'b', fraction: 0.2 }, { name: 'c', fraction: 0.7 }] });
      expect(result.fleet).toEqual([]);
    });
  });
});

describe('waveCounts', () => {
  test.each<[number[], number, number[]]>([
    [[0.02, 0.1, 0.3], 100, [2, 10, 30]],
    [[0.02, 0.1, 0.3], 50, [1, 5, 15]],
    [[0.02, 0.1, 0.3], 10, [1, 1, 2]], // at least one each, taken from later cuts
    [[0.02, 0.1, 0.3], 4, [1, 1, 1]],
    [[0.02, 0.1, 0.3], 3, [0, 0, 1]], // not more nodes than waves: plain rounding
    [[0.5, 0.5], 3, [2, 1]],
    [[1], 7, [7]],
    [[0.1], 1, [0]],
  ])('%j of %d nodes', (fractions, total, expected) => {
    expect(waveCounts(fractions, total)).toEqual(expected);
  });
});

describe('labelCommands', () => {
  const assignment: WaveAssignment = {
    labelKey: KEY,
    byNode: { 'n-a': 'canary', 'n-b': undefined, 'n-c': 'wave-1', 'n-d': undefined },
    byWave: { 'canary': ['n-a'], 'wave-1': ['n-c'] },
    fleet: ['n-b', 'n-d'],
    heldOut: {},
  };

  test('without current state: label every wave node, unlabel every fleet node, sorted by node', () => {
    expect(labelCommands(assignment)).toEqual([
      `kubectl label node --overwrite -- n-a ${KEY}=canary`,
      `kubectl label node -- n-b ${KEY}-`,
      `kubectl label node --overwrite -- n-c ${KEY}=wave-1`,
      `kubectl label node -- n-d ${KEY}-`,
    ]);
  });

  test('with current state: only the changes', () => {
    const current = [
      node('n-a', { [KEY]: 'canary' }), // already right
      node('n-b', { [KEY]: 'canary' }), // must leave the wave
      node('n-c', { [KEY]: 'canary' }), // moves to wave-1
      node('n-d'), // fleet already
      node('n-z', { [KEY]: 'canary' }), // not in the assignment: left alone
    ];
    expect(labelCommands(assignment, current)).toEqual([
      `kubectl label node -- n-b ${KEY}-`,
      `kubectl label node --overwrite -- n-c ${KEY}=wave-1`,
    ]);
    expect(labelCommands(assignment, [])).toEqual([
      `kubectl label node --overwrite -- n-a ${KEY}=canary`,
      `kubectl label node --overwrite -- n-c ${KEY}=wave-1`,
    ]);
  });

  test('applying the commands yields labels from which the diff is empty', () => {
    const nodes = cluster(40);
    const result = assignWaves(nodes, { waves: STANDARD });
    const labelled = nodes.map((n) => node(n.metadata.name, {
      ...n.metadata.labels,
      ...(result.byNode[n.metadata.name] ? { [KEY]: result.byNode[n.metadata.name]! } : {}),
    }));
    expect(labelCommands(result, nodes)).toHaveLength(Object.values(result.byWave).flat().length);
    expect(labelCommands(result, labelled)).toEqual([]);
  });
});

describe('empty waves', () => {
  test('smallestClusterForWave: the first node count above the current one at which the rounding gives the wave a node', () => {
    expect(smallestClusterForWave([0.02, 0.3, 0.3], 0, 2)).toBe(4);
    expect(smallestClusterForWave([0.02, 0.3, 0.3], 2, 2)).toBe(3);
    expect(smallestClusterForWave([0.02], 0, 1)).toBe(2);
  });

  test('property: the answer gives the wave a node and no smaller count above the current one does', () => {
    const shares = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 5 });
    fc.assert(fc.property(shares, fc.integer({ min: 1, max: 8 }), (percents, total) => {
      const fractions = percents.map((p) => p / 100);
      fractions.forEach((_, i) => {
        if (waveCounts(fractions, total)[i] > 0) return;
        const n = smallestClusterForWave(fractions, i, total);
        expect(waveCounts(fractions, n)[i]).toBeGreaterThan(0);
        expect(n).toBeLessThanOrEqual(fractions.length + 1);
        for (let m = total + 1; m < n; m++) expect(waveCounts(fractions, m)[i]).toBe(0);
      });
    }), { numRuns: 300, seed: 12 });
  });

  test('emptyWaves names each wave with no node: rounded to 0, or its nodes held out', () => {
    const waves = [{ name: 'canary', fraction: 0.02 }, { name: 'wave-1', fraction: 0.5 }];
    expect(emptyWaves(assignWaves(cluster(2), { waves }), waves, 2)).toEqual([{ wave: 'canary', fraction: 0.02, total: 2, count: 0, smallestCluster: 3 }]);
    const cordoned: NodeJson[] = cluster(4).map((n, i) => (i < 2 ? n : { ...n, spec: { unschedulable: true } }));
    const half = [{ name: 'canary', fraction: 0.5 }, { name: 'wave-1', fraction: 0.5 }];
    expect(emptyWaves(assignWaves(cordoned, { waves: half }), half, 4)).toEqual([{ wave: 'wave-1', fraction: 0.5, total: 4, count: 2 }]);
    expect(emptyWaves(assignWaves(cluster(100), { waves: STANDARD }), STANDARD, 100)).toEqual([]);
  });
});

describe('labelCommands: excluded nodes', () => {
  test('an excluded node carrying a wave label gets it removed; one without is left alone', () => {
    const result = assignWaves(cluster(3), { waves: [{ name: 'canary', fraction: 0.34 }] });
    const excluded = [node('win-1', { [KEY]: 'canary' }), node('win-2')];
    const commands = labelCommands(result, cluster(3), excluded);
    expect(commands).toContain(`kubectl label node -- win-1 ${KEY}-`);
    expect(commands.some((c) => c.includes('win-2'))).toBe(false);
  });
});

describe('gpuRelabelSteps', () => {
  test('cordon, drain, label, wait for the new driver pod, uncordon; every argument quoted', () => {
    expect(gpuRelabelSteps(KEY, "gpu's", 'canary', { namespace: 'gpu-driver', podSelector: 'app=d,g=canary' })).toEqual([
      "was_cordoned=$(kubectl get node -o 'jsonpath={.spec.unschedulable}' -- 'gpu'\\''s')",
      "kubectl cordon -- 'gpu'\\''s'",
      "kubectl drain --ignore-daemonsets --delete-emptydir-data --timeout=600s -- 'gpu'\\''s'",
      `kubectl label node --overwrite -- 'gpu'\\''s' ${KEY}=canary`,
      "tries=0; until kubectl get pods --namespace=gpu-driver --selector=app=d,g=canary --field-selector='spec.nodeName=gpu'\\''s' -o name | grep -q .; "
        + "do tries=$((tries+1)); if [ \"$tries\" -ge 300 ]; then echo 'no driver pod on gpu'\\''s after 1500s; the node stays cordoned' >&2; exit 1; fi; sleep 5; done",
      "kubectl wait pod --for=condition=Ready --namespace=gpu-driver --selector=app=d,g=canary --field-selector='spec.nodeName=gpu'\\''s' --timeout=1500s",
      "if [ \"$was_cordoned\" != true ]; then kubectl uncordon -- 'gpu'\\''s'; fi",
    ]);
    // to the fleet: the label is removed; no DaemonSet known: no wait
    expect(gpuRelabelSteps(KEY, 'gpu-1', undefined)).toEqual([
      "was_cordoned=$(kubectl get node -o 'jsonpath={.spec.unschedulable}' -- gpu-1)",
      'kubectl cordon -- gpu-1',
      'kubectl drain --ignore-daemonsets --delete-emptydir-data --timeout=600s -- gpu-1',
      `kubectl label node -- gpu-1 ${KEY}-`,
      'if [ "$was_cordoned" != true ]; then kubectl uncordon -- gpu-1; fi',
    ]);
  });

  // gpu-operator keeps a node cordoned before an upgrade cordoned after it (upgrade controller,
  // k8s-operator-libs pkg/upgrade: it uncordons only nodes it cordoned); the steps do the same
  describe.each([
    ['a node cordoned before stays cordoned', 'true', false],
    ['a schedulable node is uncordoned after', '', true],
  ])('run with a fake kubectl: %s', (_name, unschedulable, uncordoned) => {
    test('the steps, run by sh', () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relabel-'));
      try {
        const log = path.join(dir, 'log');
        const kubectl = path.join(dir, 'kubectl');
        fs.writeFileSync(kubectl, [
          '#!/bin/sh',
          `echo "$*" >> ${log}`,
          `case "$1 $2" in "get node") printf '%s' '${unschedulable}' ;; "get pods") echo pod/driver-x ;; esac`,
        ].join('\n'), { mode: 0o755 });
        const script = ['set -e', ...gpuRelabelSteps(KEY, 'gpu-1', 'canary', { namespace: 'd', podSelector: 'a=b' })].join('\n');
        execFileSync('sh', ['-c', script], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } });
        const calls = fs.readFileSync(log, 'utf8');
        expect(calls).toContain('cordon -- gpu-1');
        expect(calls.includes('uncordon -- gpu-1')).toBe(uncordoned);
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  test('the wait for the new driver pod to appear is bounded: it fails and leaves the node cordoned', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'relabel-'));
    try {
      const log = path.join(dir, 'log');
      fs.writeFileSync(path.join(dir, 'kubectl'), `#!/bin/sh\necho "$*" >> ${log}\n`, { mode: 0o755 });
      const script = ['set -e', ...gpuRelabelSteps(KEY, 'gpu-1', 'canary', { namespace: 'd', podSelector: 'a=b', readyTimeoutSeconds: 5 })].join('\n');
      const run = spawnSync('sh', ['-c', script], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` }, encoding: 'utf8', timeout: 20_000 });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain('no driver pod on gpu-1 after 5s');
      expect(fs.readFileSync(log, 'utf8')).not.toContain('uncordon');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a node name starting with "-" is quoted and after "--": kubectl never reads it as an option', () => {
    for (const step of gpuRelabelSteps(KEY, '--selector=kubernetes.io/os=linux', 'canary')) {
      expect(step).toMatch(/ -- '--selector=kubernetes\.io\/os=linux'( |\)|;|$)/);
    }
  });
});

describe('nodePoolLabel', () => {
  test('the wave label for a node-pool template', () => {
    expect(nodePoolLabel(KEY, 'canary')).toEqual({ [KEY]: 'canary' });
  });
  test('fleet pools carry no label; bad names are rejected', () => {
    expect(() => nodePoolLabel(KEY, 'fleet')).toThrow(/"fleet" node pools carry no ".*" label: a node is in the fleet because it lacks the label/);
    expect(() => nodePoolLabel(KEY, 'Canary')).toThrow(/not a DNS-1123 label/);
  });
});
