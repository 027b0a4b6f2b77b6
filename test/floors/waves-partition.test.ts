import fc from 'fast-check';
import { requirementMatches, termsMatch } from '../../src/scheduling/node-affinity';
import { NodeIdentity, NodeSelectorRequirementJson, NodeSelectorTermJson } from '../../src/scheduling/types';
import {
  argoSyncWave, DEFAULT_WAVE_LABEL_KEY, FLEET_GROUP, gateSyncWave, groupResourceName, negateRequirement, partitionTerms,
  resolvePromotion, sharedSyncWave, validateWaves, WaveSpec,
} from '../../src/waves/partition';

const WAVE = DEFAULT_WAVE_LABEL_KEY;
const ZONE = 'topology.kubernetes.io/zone';

describe('negateRequirement', () => {
  test.each<[NodeSelectorRequirementJson, NodeSelectorRequirementJson]>([
    [{ key: 'k', operator: 'In', values: ['a', 'b'] }, { key: 'k', operator: 'NotIn', values: ['a', 'b'] }],
    [{ key: 'k', operator: 'NotIn', values: ['a'] }, { key: 'k', operator: 'In', values: ['a'] }],
    [{ key: 'k', operator: 'Exists' }, { key: 'k', operator: 'DoesNotExist' }],
    [{ key: 'k', operator: 'DoesNotExist' }, { key: 'k', operator: 'Exists' }],
  ])('%j -> %j', (req, expected) => {
    expect(negateRequirement(req)).toEqual(expected);
  });

  test.each(['Gt', 'Lt'] as const)('%s cannot be negated, and the error says why and what to use', (operator) => {
    expect(() => negateRequirement({ key: 'cores', operator, values: ['8'] }))
      .toThrow(new RegExp(`cannot negate the node requirement "cores ${operator} \\[8\\]".*without the label "cores".*cannot OR.*Use "In".*${WAVE}`));
  });

  test('the negation matches exactly the nodes the requirement does not, missing keys included', () => {
    const ops = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;
    fc.assert(fc.property(
      fc.constantFrom(...ops), fc.subarray(['a', 'b', 'c'], { minLength: 1 }), fc.option(fc.constantFrom('a', 'b', 'c', 'd'), { nil: undefined }),
      (operator, values, value) => {
        const req: NodeSelectorRequirementJson = operator === 'In' || operator === 'NotIn' ? { key: 'k', operator, values } : { key: 'k', operator };
        const labels: Record<string, string> = value === undefined ? {} : { k: value };
        expect(requirementMatches(negateRequirement(req), labels)).toBe(!requirementMatches(req, labels));
      }));
  });
});

describe('partitionTerms', () => {
  const canary: WaveSpec = { name: 'canary', requirement: { key: WAVE, operator: 'In', values: ['canary'] } };
  const zoneA: WaveSpec = { name: 'zone-a', requirement: { key: ZONE, operator: 'In', values: ['a'] } };
  const linux: NodeSelectorTermJson = { matchExpressions: [{ key: 'kubernetes.io/os', operator: 'In', values: ['linux'] }] };

  test('wave k = base AND wave k AND NOT earlier waves; fleet = base AND NOT every wave, in that order', () => {
    expect(partitionTerms([canary, zoneA], [linux])).toEqual([
      {
        name: 'canary',
        index: 0,
        terms: [{
          matchExpressions: [
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            { key: WAVE, operator: 'In', values: ['canary'] },
          ],
        }],
      },
      {
        name: 'zone-a',
        index: 1,
        terms: [{
          matchExpressions: [
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            { key: ZONE, operator: 'In', values: ['a'] },
            { key: WAVE, operator: 'NotIn', values: ['canary'] },
          ],
        }],
      },
      {
        name: FLEET_GROUP,
        index: 2,
        terms: [{
          matchExpressions: [
            { key: 'kubernetes.io/os', operator: 'In', values: ['linux'] },
            { key: WAVE, operator: 'NotIn', values: ['canary'] },
            { key: ZONE, operator: 'NotIn', values: ['a'] },
          ],
        }],
      },
    ]);
  });

  test('without base terms the wave requirements stand alone', () => {
    const groups = partitionTerms([{ name: 'gpu', requirement: { key: 'nvidia.com/gpu.present', operator: 'Exists' } }], []);
    expect(groups.map((group) => group.terms)).toEqual([
      [{ matchExpressions: [{ key: 'nvidia.com/gpu.present', operator: 'Exists' }] }],
      [{ matchExpressions: [{ key: 'nvidia.com/gpu.present', operator: 'DoesNotExist' }] }],
    ]);
  });

  test('every base term (ORed) gets the wave requirements', () => {
    const amd = { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In' as const, values: ['amd64'] }] };
    const arm = { matchExpressions: [{ key: 'kubernetes.io/arch', operator: 'In' as const, values: ['arm64'] }] };
    const [wave, fleet] = partitionTerms([canary], [amd, arm]);
    expect(wave.terms).toHaveLength(2);
    expect(fleet.terms.map((term) => term.matchExpressions?.[0].values)).toEqual([['amd64'], ['arm64']]);
    expect(fleet.terms.every((term) => term.matchExpressions?.[1].operator === 'NotIn')).toBe(true);
  });

  test('a hostname wave uses matchFields with one value per requirement (the API server rejects more)', () => {
    const hosts: WaveSpec = { name: 'pinned', field: true, requirement: { key: 'metadata.name', operator: 'In', values: ['node-1', 'node-2'] } };
    const [wave, next, fleet] = partitionTerms([hosts, canary], [linux]);
    expect(wave.terms).toEqual([
      { ...linux, matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-1'] }] },
      { ...linux, matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-2'] }] },
    ]);
    expect(next.terms).toEqual([{
      matchExpressions: [...linux.matchExpressions!, { key: WAVE, operator: 'In', values: ['canary'] }],
      matchFields: [
        { key: 'metadata.name', operator: 'NotIn', values: ['node-1'] },
        { key: 'metadata.name', operator: 'NotIn', values: ['node-2'] },
      ],
    }]);
    expect(fleet.terms[0].matchFields).toHaveLength(2);
  });

  test('does not share arrays with its inputs', () => {
    const waves: WaveSpec[] = [{ name: 'canary', requirement: { key: WAVE, operator: 'In', values: ['canary'] } }];
    const groups = partitionTerms(waves, [linux]);
    (groups[0].terms[0].matchExpressions![1].values as string[]).push('x');
    (groups[0].terms[0].matchExpressions![0].values as string[]).push('x');
    expect(waves[0].requirement.values).toEqual(['canary']);
    expect(linux.matchExpressions![0].values).toEqual(['linux']);
  });

  test('an empty base term is an error (it matches no node, but would match once requirements are added)', () => {
    expect(() => partitionTerms([canary], [linux, {}])).toThrow(/base node-affinity term 1 is empty.*Remove the empty term/);
    expect(() => partitionTerms([canary], [{ matchExpressions: [] }])).toThrow(/term 0 is empty/);
  });

  describe('property: exactly one group owns each node of the base eligibility, none owns the others', () => {
    const KEYS = ['k1', 'k2', 'k3'];
    const VALUES = ['1', '2', '3', 'x'];
    const HOSTS = ['h1', 'h2', 'h3', 'h4'];

    const node: fc.Arbitrary<NodeIdentity> = fc.record({
      name: fc.constantFrom(...HOSTS),
      // Partial records: keys are often missing, which is where NotIn/DoesNotExist matter.
      labels: fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 3 }),
    });

    const someValues = fc.subarray(VALUES, { minLength: 1 });
    const labelRequirement: fc.Arbitrary<NodeSelectorRequirementJson> = fc.oneof(
      fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constantFrom('In' as const, 'NotIn' as const), values: someValues }),
      fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constantFrom('Exists' as const, 'DoesNotExist' as const) }),
      fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constantFrom('Gt' as const, 'Lt' as const), values: fc.tuple(fc.constantFrom('0', '1', '2', '3')) }),
    );
    const fieldRequirement: fc.Arbitrary<NodeSelectorRequirementJson> = fc.record({
      key: fc.constant('metadata.name'), operator: fc.constantFrom('In' as const, 'NotIn' as const), values: fc.tuple(fc.constantFrom(...HOSTS)),
    });
    const baseTerm: fc.Arbitrary<NodeSelectorTermJson> = fc.record({
      matchExpressions: fc.array(labelRequirement, { maxLength: 3 }),
      matchFields: fc.array(fieldRequirement, { maxLength: 1 }),
    }).filter((term) => term.matchExpressions.length + term.matchFields.length > 0);

    const waveRequirement: fc.Arbitrary<Omit<WaveSpec, 'name'>> = fc.oneof(
      fc.record({ requirement: fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constant('In' as const), values: someValues }) }),
      fc.record({ requirement: fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constant('Exists' as const) }) }),
      fc.record({
        field: fc.constant(true),
        requirement: fc.record({ key: fc.constant('metadata.name'), operator: fc.constant('In' as const), values: fc.subarray(HOSTS, { minLength: 1 }) }),
      }),
    );
    const waves: fc.Arbitrary<WaveSpec[]> = fc.array(waveRequirement, { minLength: 1, maxLength: 4 })
      .map((specs) => specs.map((spec, i) => ({ name: `w${i}`, ...spec })))
      .filter((specs) => {
        try {
          validateWaves(specs);
          return true;
        } catch {
          return false;
        }
      });

    /** The group a node belongs to by definition: the first wave it matches, else the fleet. */
    function expectedGroup(specs: readonly WaveSpec[], n: NodeIdentity): string {
      const wave = specs.find((spec) => spec.field
        ? (spec.requirement.values ?? []).includes(n.name)
        : requirementMatches(spec.requirement, n.labels));
      return wave?.name ?? FLEET_GROUP;
    }

    test('for random waves, base terms and nodes', () => {
      fc.assert(fc.property(waves, fc.array(baseTerm, { maxLength: 3 }), fc.array(node, { minLength: 1, maxLength: 6 }), (specs, base, nodes) => {
        const groups = partitionTerms(specs, base);
        expect(groups.map((group) => group.name)).toEqual([...specs.map((spec) => spec.name), FLEET_GROUP]);
        for (const n of nodes) {
          const eligible = base.length === 0 || termsMatch(base, n);
          const owners = groups.filter((group) => termsMatch(group.terms, n)).map((group) => group.name);
          expect(owners).toEqual(eligible ? [expectedGroup(specs, n)] : []);
        }
      }), { numRuns: 500 });
    });

    test('every rendered term is non-empty and every matchFields requirement has exactly one value', () => {
      fc.assert(fc.property(waves, fc.array(baseTerm, { maxLength: 3 }), (specs, base) => {
        for (const group of partitionTerms(specs, base)) {
          expect(group.terms.length).toBeGreaterThan(0);
          for (const term of group.terms) {
            expect((term.matchExpressions ?? []).length + (term.matchFields ?? []).length).toBeGreaterThan(0);
            for (const field of term.matchFields ?? []) {
              expect(field.key).toBe('metadata.name');
              expect(['In', 'NotIn']).toContain(field.operator);
              expect(field.values).toHaveLength(1);
            }
          }
        }
      }), { numRuns: 200 });
    });
  });
});

describe('validateWaves errors', () => {
  const inWave = (name: string, ...values: string[]): WaveSpec => ({ name, requirement: { key: WAVE, operator: 'In', values } });

  test('accepts a typical definition', () => {
    expect(() => validateWaves([
      inWave('canary', 'canary'),
      { name: 'zone-a', requirement: { key: ZONE, operator: 'In', values: ['a'] } },
      { name: 'gpu', requirement: { key: 'nvidia.com/gpu.present', operator: 'Exists' } },
      { name: 'pinned', field: true, requirement: { key: 'metadata.name', operator: 'In', values: ['n1'] } },
    ])).not.toThrow();
  });

  test.each<[string, WaveSpec[], RegExp]>([
    ['no waves', [], /at least one wave is required/],
    ['duplicate names', [inWave('canary', 'a'), inWave('canary', 'b')], /waves\[1\]\.name: duplicate wave name "canary"/],
    ['duplicate requirements (values in any order)', [inWave('one', 'a', 'b'), inWave('two', 'b', 'a')],
      /waves\[1\] \("two"\): its requirement ".* In \[b, a\]" duplicates wave "one"/],
    ['a wave shadowed by an earlier Exists', [{ name: 'any', requirement: { key: ZONE, operator: 'Exists' } }, { name: 'a', requirement: { key: ZONE, operator: 'In', values: ['a'] } }],
      /waves\[1\] \("a"\): every node .* is already owned by the earlier wave "any"/],
    ['a wave shadowed by an earlier In superset', [inWave('wide', 'a', 'b'), inWave('narrow', 'b')], /already owned by the earlier wave "wide"/],
    ['the reserved name fleet', [inWave('fleet', 'a')], /waves\[0\]\.name: "fleet" is reserved for the nodes that match no wave/],
    ['an upper-case name', [inWave('Canary', 'a')], /"Canary" is not a DNS-1123 label/],
    ['a name with a dot', [inWave('wave.1', 'a')], /"wave.1" is not a DNS-1123 label/],
    ['a name ending in -', [inWave('wave-', 'a')], /not a DNS-1123 label/],
    ['a 64-character name', [inWave('w'.repeat(64), 'a')], /not a DNS-1123 label.*at most 63/],
    ['a Gt wave', [{ name: 'big', requirement: { key: 'cores', operator: 'Gt', values: ['8'] } }],
      /waves\[0\]\.requirement \("big"\): cannot negate the node requirement "cores Gt \[8\]"/],
    ['a Lt wave', [{ name: 'small', requirement: { key: 'cores', operator: 'Lt', values: ['8'] } }], /cannot negate/],
    ['a NotIn wave', [{ name: 'w', requirement: { key: ZONE, operator: 'NotIn', values: ['a'] } }],
      /selects nodes by the absence of a label, so brand-new unlabelled nodes would join this wave/],
    ['a DoesNotExist wave', [{ name: 'w', requirement: { key: ZONE, operator: 'DoesNotExist' } }], /absence of a label/],
    ['In without values', [inWave('canary')], /"In" needs at least one value/],
    ['Exists with values', [{ name: 'w', requirement: { key: ZONE, operator: 'Exists', values: ['a'] } }], /"Exists" takes no values \(got \["a"\]\)/],
    ['an empty key', [{ name: 'w', requirement: { key: '', operator: 'Exists' } }], /needs a label key/],
    ['a field wave on another key', [{ name: 'w', field: true, requirement: { key: 'spec.unschedulable', operator: 'In', values: ['x'] } }],
      /a field wave must be "metadata.name In \[hostnames\]"/],
    ['a field wave with NotIn', [{ name: 'w', field: true, requirement: { key: 'metadata.name', operator: 'NotIn', values: ['x'] } }], /a field wave must be/],
    ['a field wave without hostnames', [{ name: 'w', field: true, requirement: { key: 'metadata.name', operator: 'In', values: [] } }], /needs at least one value/],
  ])('%s', (_, waves, message) => {
    expect(() => validateWaves(waves)).toThrow(message);
    if (waves.length > 0) expect(() => partitionTerms(waves, [])).toThrow(message);
  });

  test('the same label values on different keys are not duplicates, nor a label wave and a field wave', () => {
    expect(() => validateWaves([
      { name: 'a', requirement: { key: 'x', operator: 'In', values: ['n1'] } },
      { name: 'b', requirement: { key: 'y', operator: 'In', values: ['n1'] } },
      { name: 'c', requirement: { key: 'metadata.name', operator: 'In', values: ['n1'] } },
      { name: 'd', field: true, requirement: { key: 'metadata.name', operator: 'In', values: ['n1'] } },
    ])).not.toThrow();
  });

  test('an In wave before an Exists wave on the same key is fine (the Exists wave takes the other values)', () => {
    expect(() => validateWaves([inWave('a', 'a'), { name: 'rest', requirement: { key: WAVE, operator: 'Exists' } }])).not.toThrow();
  });
});

describe('resolvePromotion', () => {
  const waves = [{ name: 'canary' }, { name: 'wave-1' }];

  test.each<[string | number, number]>([
    [0, 0], [1, 1], [3, 3],
    ['canary', 1], ['wave-1', 2], ['fleet', 3], ['all', 3],
  ])('%p promotes %p groups', (promoted, count) => {
    expect(resolvePromotion(waves, promoted)).toBe(count);
  });

  test('an unknown wave lists the valid names', () => {
    expect(() => resolvePromotion(waves, 'wave-2'))
      .toThrow('promoted: "wave-2" is not a wave; valid names are "canary", "wave-1", "fleet", "all" (or a count)');
  });

  test.each([-1, 4, 1.5, Number.NaN])('count %p is out of range', (count) => {
    expect(() => resolvePromotion(waves, count)).toThrow(/is not a valid count of promoted groups: use an integer from 0 \(nothing promoted\) to 3/);
  });
});

describe('Argo CD sync waves', () => {
  test('shared objects first, then each group in order, the fleet last', () => {
    expect(sharedSyncWave()).toBe(0);
    expect([0, 1, 2].map((i) => argoSyncWave(i))).toEqual([1, 3, 5]);
    expect(sharedSyncWave({ base: -5 })).toBe(-5);
    expect(argoSyncWave(2, { base: 10 })).toBe(15);
  });

  test('a gate after wave k sits between wave k and the next group', () => {
    expect([0, 1].map((i) => gateSyncWave(i))).toEqual([2, 4]);
    expect(gateSyncWave(1, { base: 10 })).toBe(14);
    for (const k of [0, 1, 2, 7]) {
      expect(gateSyncWave(k)).toBeGreaterThan(argoSyncWave(k));
      expect(gateSyncWave(k)).toBeLessThan(argoSyncWave(k + 1));
    }
  });

  test('bad input', () => {
    expect(() => argoSyncWave(-1)).toThrow(/group index -1 must be an integer >= 0/);
    expect(() => argoSyncWave(0.5)).toThrow(/group index 0.5/);
    expect(() => argoSyncWave(0, { base: 1.5 })).toThrow(/base: 1.5 is not an integer/);
  });
});

test('groupResourceName: the fleet keeps the plain name, waves get a suffix', () => {
  expect(groupResourceName('fluent-bit', FLEET_GROUP)).toBe('fluent-bit');
  expect(groupResourceName('fluent-bit', 'canary')).toBe('fluent-bit-canary');
});
