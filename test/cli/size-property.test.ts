/**
 * Property (fast-check, fixed seed): on any usage, the profiles `size` recommends partition the nodes exactly once.
 * The profiles are rendered into node-affinity terms by the code the constructs use (src/waves/profiles.ts
 * profileTerms), and every node, whatever its labels, matches the terms of exactly one profile (or the default's):
 * the one `size` sized it by.
 */
import fc from 'fast-check';
import { groupReports, GroupBy, planProfiles } from '../../src/cli/size/groups';
import { ABSENT } from '../../src/cli/size/ingest';
import { UsageState } from '../../src/cli/size/recommender';
import { termsMatch } from '../../src/scheduling/node-affinity';
import { profileTerms } from '../../src/waves/profiles';

const DAY = 86_400_000;
const KEY = 'example.com/group';

const group = fc.record({
  memoryMiB: fc.integer({ min: 1, max: 4000 }),
  cpuMilli: fc.integer({ min: 1, max: 4000 }),
  pods: fc.integer({ min: 1, max: 6 }),
  days: fc.integer({ min: 0, max: 4 }),
});

function state(g: { memoryMiB: number; cpuMilli: number; days: number }): UsageState {
  const s = new UsageState();
  for (let m = 0; m <= g.days * 24 * 4; m++) s.addCpu(g.cpuMilli / 1000, m * 15 * 60_000, 15);
  for (let d = 0; d <= g.days; d++) s.addMemoryPeak(g.memoryMiB * 1024 * 1024, d * DAY);
  return s;
}

const input = fc.record({
  kind: fc.constantFrom<'range' | 'values'>('range', 'values'),
  groups: fc.dictionary(fc.oneof(fc.integer({ min: -3, max: 200 }).map(String), fc.constantFrom('a', 'b.c', 'x-1', 'Z', ABSENT, '1.5')), group, { maxKeys: 14 }),
  nodes: fc.array(fc.option(fc.oneof(fc.integer({ min: -5, max: 250 }).map(String), fc.constantFrom('a', 'b.c', 'q', '1.5')), { nil: undefined }), { minLength: 1, maxLength: 30 }),
});

test('the recommended profiles partition any nodes exactly once, as sized', () => {
  fc.assert(fc.property(input, ({ kind, groups, nodes }) => {
    const by: GroupBy = { kind, key: KEY, name: 'label' };
    const states = new Map(Object.entries(groups).map(([v, g]) => [v, state(g)]));
    const pods = new Map(Object.entries(groups).map(([v, g]) => [v, new Set(Array.from({ length: g.pods }, (_, i) => `p${i}`))]));
    const sizing = planProfiles('ns/agent', groupReports(states, pods, by), by, states);
    const rendered = profileTerms(sizing.profiles.map((p) => p.spec), []);
    for (const value of [...nodes, ...Object.keys(groups)]) {
      const labels: Record<string, string> = value === undefined || value === ABSENT ? {} : { [KEY]: value };
      const matching = rendered.filter((g) => termsMatch(g.terms, { name: 'n', labels }));
      // a non-integer value of a range label matches no profile's terms, not even the default's (profiles.ts)
      const nonInteger = kind === 'range' && labels[KEY] !== undefined && !/^-?\d+$/.test(labels[KEY]);
      const expected = sizing.profiles.length === 0 ? 0 : nonInteger ? 0 : 1;
      expect(matching.length).toBe(expected);
      const report = sizing.groups.find((g) => g.value === (value ?? ABSENT));
      if (report !== undefined && expected === 1) expect(matching[0].name).toBe(report.profile);
    }
  }), { seed: 51, numRuns: 150 });
});
