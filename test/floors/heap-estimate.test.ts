/**
 * HeapEstimate: the bytes a value parsed from JSON holds in V8, by the model its doc comment states (the figures
 * measured against the live heap are in the doctor bench, never here). Each shape's figure is derived from the
 * model's rules, so a change of a rule fails the shape it governs.
 */
import * as fc from 'fast-check';
import { HeapEstimate, objectBytes, stringBytes } from '../../src/util/heap-estimate';

const NAME = 32; // a name's record when first met
const CLASS = 160; // a new hidden class

describe('HeapEstimate on a few shapes', () => {
  test('strings: a 16-byte header and one byte a character (two past U+00FF), to 8; up to 10 characters, one copy', () => {
    const e = new HeapEstimate();
    expect(e.of('x'.repeat(11))).toBe(32); // 16 + 11 = 27, to 32
    expect(e.of('x'.repeat(11))).toBe(32); // longer strings are not shared
    expect(e.of('é'.repeat(11))).toBe(32); // U+00E9: one byte
    expect(e.of('€'.repeat(11))).toBe(40); // 16 + 22 = 38, to 40
    expect(e.of('short')).toBe(24 + NAME); // 16 + 5 = 21, to 24, and its record
    expect(e.of('short')).toBe(0); // internalized: one copy
    expect(stringBytes('')).toBe(16);
  });

  test('numbers: small integers none, others a 16-byte heap number; null, booleans none', () => {
    const e = new HeapEstimate();
    expect([0, 1, -5, 2 ** 31 - 1].map((n) => e.of(n))).toEqual([0, 0, 0, 0]);
    expect([1.5, 2 ** 31, -0, 1e300].map((n) => e.of(n))).toEqual([16, 16, 16, 16]);
    expect([null, true, false, undefined].map((v) => e.of(v))).toEqual([0, 0, 0, 0]);
  });

  test('arrays: 32 bytes, and when not empty a 16-byte store and 8 a slot, plus their items', () => {
    const e = new HeapEstimate();
    expect(e.of([])).toBe(32);
    expect(e.of([1, 2, 3])).toBe(32 + 16 + 3 * 8);
    expect(e.of([1.5, [], 'x'.repeat(11)])).toBe(32 + 16 + 3 * 8 + 16 + 32 + 32);
  });

  test('objects in fast mode: 24 bytes and 8 a property; a hidden class per new step of their keys\' order, names once', () => {
    const e = new HeapEstimate();
    expect(e.of({ a: 1, b: 2 })).toBe(24 + 2 * 8 + 2 * (24 + NAME) + 2 * CLASS);
    // the same keys in the same order share both hidden classes and the names
    expect(e.of({ a: 3, b: 4 })).toBe(24 + 2 * 8);
    // in another order, they do not: two new hidden classes, the names still shared
    expect(e.of({ b: 1, a: 2 })).toBe(24 + 2 * 8 + 2 * CLASS);
    // a prefix of a path taken shares it; one more key is one more class
    expect(e.of({ a: 1 })).toBe(24 + 8);
    expect(e.of({ a: 1, b: 2, c: 3 })).toBe(24 + 3 * 8 + (24 + NAME) + CLASS);
  });

  test('objects of 128 properties or more (dictionary mode): 56 bytes and 24 an entry of a power-of-two table at 1.5 times; no hidden class', () => {
    expect(objectBytes(127)).toBe(24 + 127 * 8);
    expect(objectBytes(128)).toBe(56 + 24 * 256); // 1.5 × 128 = 192, to 256
    expect(objectBytes(200)).toBe(56 + 24 * 512); // 300, to 512
    const big = Object.fromEntries(Array.from({ length: 128 }, (_, i) => [`key-${i}`, 'x'.repeat(20)]));
    const e = new HeapEstimate();
    const names = Object.keys(big).reduce((sum, k) => sum + stringBytes(k) + NAME, 0);
    expect(e.of(big)).toBe(objectBytes(128) + names + 128 * stringBytes('x'.repeat(20)));
    expect(e.of(big)).toBe(objectBytes(128) + 128 * stringBytes('x'.repeat(20)));
  });

  test('once: a value many holders share counts the first time only', () => {
    const e = new HeapEstimate();
    const shared = { cpu: 0.1, memory: 2 ** 33 };
    const first = e.once(shared);
    expect(first).toBeGreaterThan(0);
    expect(e.once(shared)).toBe(0);
    expect(e.once({ ...shared })).toBe(NAME + 24 + 2 * 8 + 2 * 16); // another object with the same shape: its own bytes
  });

  test('for any JSON value: never negative, and the same value met again never costs more (what it met is shared)', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const e = new HeapEstimate();
      const first = e.of(value);
      const again = e.of(JSON.parse(JSON.stringify(value)));
      expect(first).toBeGreaterThanOrEqual(0);
      expect(again).toBeLessThanOrEqual(first);
    }), { numRuns: 300 });
  });
});
