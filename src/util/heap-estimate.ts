/**
 * An estimate of the heap a value read from JSON takes in V8 (Node's 64-bit heap, full pointers), counted as it is
 * kept, so a reader can stop before it holds more than a budget: the bytes a server sends say little about it (a
 * node's labels cost 1.5 times their JSON in memory, many empty arrays 13 times). The model takes each V8 layout's
 * worst case measured on Node 20 (heapUsed after a full GC, 100,000 to 200,000 values of each shape, parsed with
 * JSON.parse), so it errs high:
 * - a string: a 16-byte header and its characters, one byte each (two when one is past U+00FF), to 8 bytes;
 * - a number outside the small integers: a 16-byte heap number;
 * - an array: 32 bytes, and when not empty a 16-byte backing store and 8 bytes a slot;
 * - an object of fewer than 128 properties (V8 keeps those in fast mode): 24 bytes and 8 a property (its slot), and
 *   a hidden class for each step of its keys' order no object took before (objects with the same keys in the
 *   same order share them; in other orders, they do not);
 * - an object of 128 properties or more (dictionary mode): 56 bytes and a hash table of 24 bytes an entry, its
 *   capacity the power of two at or above one and a half times the properties;
 * - a hidden class: 104 bytes (a Map, its descriptor and transition entries), and 56 for this estimate's record of
 *   it;
 * - a property name, or a string of up to 10 characters, the estimate has not met before: the string, and 32
 *   bytes for its record; met again, nothing (V8 internalizes them: one copy however many values hold it).
 * A value kept in many places (an interned list) is counted once through `once`.
 */
export class HeapEstimate {
  private readonly names = new Set<string>();
  /** the hidden classes met: for each (by index), its transitions by property name to the next one */
  private readonly transitions: (Map<string, number> | undefined)[] = [undefined];
  private readonly shared = new Set<object>();

  /** The bytes `value` holds, the names and hidden classes not met before included (they are remembered). */
  of(value: unknown): number {
    switch (typeof value) {
      case 'string':
        // V8's JSON parser internalizes strings of up to 10 characters (measured: one copy however many values hold it)
        return value.length <= SHORT_STRING ? this.name(value) : stringBytes(value);
      case 'number':
        return isSmallInteger(value) ? 0 : HEAP_NUMBER;
      case 'object':
        if (value === null) return 0;
        return Array.isArray(value) ? this.array(value) : this.object(value as Record<string, unknown>);
      default:
        return 0;
    }
  }

  /** A property name's bytes the first time it is met (V8 internalizes names: one copy each), then 0. */
  name(key: string): number {
    if (this.names.has(key)) return 0;
    this.names.add(key);
    return stringBytes(key) + ENTRY;
  }

  /** The bytes of a value many holders share (the same object): counted the first time, then 0. */
  once(value: object): number {
    if (this.shared.has(value)) return 0;
    this.shared.add(value);
    return ENTRY + this.of(value);
  }

  private array(value: readonly unknown[]): number {
    let bytes = ARRAY + (value.length === 0 ? 0 : ELEMENTS + SLOT * value.length);
    for (const item of value) bytes += this.of(item);
    return bytes;
  }

  private object(value: Record<string, unknown>): number {
    const keys = Object.keys(value);
    let bytes = objectBytes(keys.length);
    let shape = 0;
    for (const key of keys) {
      bytes += this.name(key) + this.of(value[key]);
      if (keys.length >= FAST_PROPERTIES) continue;
      // the hidden class this property leads to from the object's so far: shared when another object took the same path
      let next = this.transitions[shape];
      if (next === undefined) this.transitions[shape] = next = new Map();
      const to = next.get(key);
      if (to === undefined) {
        next.set(key, this.transitions.length);
        shape = this.transitions.length;
        this.transitions.push(undefined);
        bytes += HIDDEN_CLASS;
      } else {
        shape = to;
      }
    }
    return bytes;
  }
}

const HEAP_NUMBER = 16;
const SHORT_STRING = 10;
const ARRAY = 32;
const ELEMENTS = 16;
/** a pointer's slot in an array, an object or a list */
export const SLOT = 8;
/** a new hidden class: V8's Map, its descriptor and transition entries, and this estimate's record of it */
const HIDDEN_CLASS = 160;
/** an entry of a Map or Set (this estimate's record of a name met, an interner's of a string) */
export const ENTRY = 32;
/** V8's JSON parser keeps objects of fewer properties in fast mode. */
const FAST_PROPERTIES = 128;

/** A string's bytes: header and characters, rounded up to 8. */
export function stringBytes(text: string): number {
  // eslint-disable-next-line no-control-regex
  const width = /[^\u0000-\u00ff]/.test(text) ? 2 : 1;
  return Math.ceil((16 + width * text.length) / 8) * 8;
}

/** An object's own bytes (not its values') for `count` properties. */
export function objectBytes(count: number): number {
  if (count < FAST_PROPERTIES) return 24 + 8 * count;
  let capacity = 1;
  while (capacity < Math.ceil(1.5 * count)) capacity *= 2;
  return 56 + 24 * capacity;
}

function isSmallInteger(n: number): boolean {
  return Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 && !Object.is(n, -0);
}
