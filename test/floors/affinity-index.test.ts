/**
 * The nodeSelectorTerms index answers exactly as termsMatch (k8s.io/component-helpers/scheduling/corev1/nodeaffinity
 * nodeaffinity.go: NodeSelector.Match, terms ORed, requirements ANDed, matchFields metadata.name), which is pinned
 * by its own table tests; here every answer of the index is compared with it.
 */
import * as fc from 'fast-check';
import { AffinityIndex } from '../../src/scheduling/affinity-index';
import { fieldRequirementMatches, requirementMatches, termsMatch } from '../../src/scheduling/node-affinity';
import { NodeIdentity, NodeSelectorRequirementJson, NodeSelectorTermJson } from '../../src/scheduling/types';
import { SetIds } from '../../src/util/set-ids';

const KEYS = ['pool', 'zone', 'wave', 'gpus'];
const VALUES = ['a', 'b', 'c', '1', '5'];
const NAMES = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5'];

const nodeArb = (name: string) => fc.dictionary(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES), { maxKeys: 4 })
  .map((labels): { identity: NodeIdentity } => ({ identity: { name, labels } }));
const nodesArb = fc.tuple(...NAMES.map(nodeArb));

const requirementArb: fc.Arbitrary<NodeSelectorRequirementJson> = fc.record({
  key: fc.constantFrom(...KEYS),
  operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt', 'Bogus' as NodeSelectorRequirementJson['operator']),
  values: fc.array(fc.constantFrom(...VALUES), { maxLength: 3 }),
});
const fieldArb: fc.Arbitrary<NodeSelectorRequirementJson> = fc.record({
  key: fc.constantFrom('metadata.name', 'metadata.uid'),
  operator: fc.constantFrom('In', 'NotIn', 'Exists'),
  values: fc.array(fc.constantFrom(...NAMES, 'nope'), { maxLength: 2 }),
});
const termArb: fc.Arbitrary<NodeSelectorTermJson> = fc.record({
  matchExpressions: fc.array(requirementArb, { maxLength: 3 }),
  matchFields: fc.array(fieldArb, { maxLength: 2 }),
}, { requiredKeys: [] });
const termsArb = fc.array(termArb, { maxLength: 6 });

describe('AffinityIndex', () => {
  test('matching(terms) is the set of nodes termsMatch selects (fast-check)', () => {
    fc.assert(fc.property(nodesArb, termsArb, (nodes, terms) => {
      const index = new AffinityIndex(nodes);
      const got = index.matching(terms, 'ds');
      expect(nodes.map((n) => got.has(n))).toEqual(nodes.map((n) => termsMatch(terms, n.identity)));
    }), { numRuns: 500 });
  });

  test('matching(terms, what, key): some non-empty term fails only on requirements on that key', () => {
    fc.assert(fc.property(nodesArb, termsArb, (nodes, terms) => {
      const index = new AffinityIndex(nodes);
      const got = index.matching(terms, 'ds', 'wave');
      const onlyOnWave = (n: { identity: NodeIdentity }) => terms.some((term) => {
        const expressions = term.matchExpressions ?? [];
        const fields = term.matchFields ?? [];
        if (expressions.length === 0 && fields.length === 0) return false;
        return fields.every((r) => fieldRequirementMatches(r, n.identity.name))
          && expressions.every((r) => r.key === 'wave' || requirementMatches(r, n.identity.labels));
      });
      expect(nodes.map((n) => got.has(n))).toEqual(nodes.map(onlyOnWave));
    }), { numRuns: 500 });
  });

  test('an inventory repeating node names (malformed) is answered as termsMatch for every node, each one indexed', () => {
    const repeatingArb = fc.array(fc.constantFrom('n0', 'n1', 'n2').chain(nodeArb), { minLength: 1, maxLength: 8 });
    fc.assert(fc.property(repeatingArb, termsArb, (nodes, terms) => {
      const index = new AffinityIndex(nodes);
      const got = index.matching(terms, 'ds');
      expect(nodes.every((n) => index.has(n))).toBe(true);
      expect(nodes.map((n) => got.has(n))).toEqual(nodes.map((n) => termsMatch(terms, n.identity)));
      expect([...got]).toEqual(nodes.filter((n) => termsMatch(terms, n.identity)));
    }), { numRuns: 500 });
  });

  test('a repeated term is checked once, and the budget counts the nodes each distinct term is checked on', () => {
    const nodes = NAMES.map((name, i) => ({ identity: { name, labels: { pool: i % 2 === 0 ? 'a' : 'b' } } }));
    const term = { matchExpressions: [{ key: 'pool', operator: 'In', values: ['a'] }] };
    // 3 candidate nodes x 1 requirement, once: within a budget of 3
    expect([...new AffinityIndex(nodes, 3).matching(Array(1000).fill(term), 'ds')].map((n) => n.identity.name)).toEqual(['n0', 'n2', 'n4']);
    // a term without an In requirement is checked on all 6 nodes
    expect(() => new AffinityIndex(nodes, 5).matching([{ matchExpressions: [{ key: 'pool', operator: 'NotIn', values: ['a'] }] }], 'agents/x'))
      .toThrow('agents/x: its required node affinity (1 nodeSelectorTerms) on 6 nodes needs more than 5e+0 requirement checks even indexed');
  });
});

describe('SetIds', () => {
  test('slots holding the same members (each added in increasing number) share a number; the list comes back in order', () => {
    const sets = new SetIds<string>(4, 3);
    const holds: [number, number][] = [[0, 0], [0, 1], [1, 0], [1, 1], [2, 1], [3, 0], [3, 1], [3, 2]];
    for (const [slot, member] of holds) sets.add(slot, member, `m${member}`);
    expect([0, 1, 2, 3].map((slot) => sets.list(sets.of(slot)))).toEqual([['m0', 'm1'], ['m0', 'm1'], ['m1'], ['m0', 'm1', 'm2']]);
    expect(sets.of(0)).toBe(sets.of(1));
    expect(new Set([0, 1, 2, 3].map((slot) => sets.of(slot))).size).toBe(3);
    expect(sets.size(sets.of(3))).toBe(3);
    expect(sets.list(0)).toEqual([]);
  });
});
