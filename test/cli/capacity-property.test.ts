/**
 * Properties of the capacity model for all inputs: the victims SelectVictimsOnNode picks
 * (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go) are all of lower priority and make
 * the pod fit (fit.go fitsRequest), and none is picked when evicting every lower-priority pod would not do;
 * output escaping leaves no control character in any text.
 */
import fc from 'fast-check';
import { checkFit, fits, selectVictims } from '../../src/cli/capacity/fit';
import { displayName } from '../../src/cli/capacity/names';
import { PodRecord } from '../../src/cli/capacity/pods';
import { markdownEscape, terminalSafe } from '../../src/util/output-escape';

const podArb = fc.record({
  name: fc.string({ minLength: 1, maxLength: 8 }),
  memory: fc.integer({ min: 0, max: 10 }),
  cpu: fc.integer({ min: 0, max: 10 }),
  priority: fc.integer({ min: 0, max: 5 }),
  start: fc.integer({ min: 0, max: 9 }),
}).map((p): PodRecord => ({
  namespace: 'ns',
  name: p.name,
  node: 'n',
  phase: 'Running',
  terminal: false,
  deleting: false,
  priority: p.priority,
  requests: { memory: p.memory, cpu: p.cpu },
  hostPorts: [],
  startTime: `2026-01-0${p.start}`,
}));

test('victims: lower priority only, the pod fits without them, and none when no eviction can make room', () => {
  fc.assert(fc.property(fc.array(podArb, { maxLength: 8 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }),
    fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 6 }), (pods, memory, cpu, need, priority) => {
      const alloc = { memory, cpu, pods: 110 };
      const request = { memory: need, cpu: 1 };
      const victims = selectVictims(request, [], priority, alloc, [...pods]);
      if (victims === undefined) {
        const lower = pods.filter((p) => p.priority < priority);
        const kept = pods.filter((p) => p.priority >= priority);
        expect(lower.length === 0 || !fits(checkFit(request, [], alloc, kept))).toBe(true);
      } else {
        expect(victims.every((v) => v.priority < priority)).toBe(true);
        expect(fits(checkFit(request, [], alloc, pods.filter((p) => !victims.includes(p))))).toBe(true);
      }
    }));
});

test('escaped text holds no control character, bidi override or markdown metacharacter unescaped', () => {
  fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => {
    expect(terminalSafe(text)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(markdownEscape(text)).not.toMatch(/(^|[^\\])[|<>`*_[\]@#]/);
    expect(displayName(text)).toMatch(/^[A-Za-z0-9._?-]*$/);
  }));
});
