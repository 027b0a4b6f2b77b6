/** Small text helpers for the CLI: aligned tables, counts, percentages. */

/** Columns padded to their widest cell; the last column is not padded (no trailing spaces). */
export function table(headers: readonly string[], rows: readonly (readonly string[])[], indent = ''): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) => indent + cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]))).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}

export function plural(count: number, word: string, many = `${word}s`): string {
  return `${count} ${count === 1 ? word : many}`;
}

export function percent(value: number): string {
  return `${Number.isInteger(value) ? value : value.toFixed(1)}%`;
}

/** A list shortened for a table cell or a line: `a, b, c, … 12 more`. */
export function shortList(items: readonly string[], max = 5): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')}, … ${items.length - max} more`;
}

/**
 * A JSON array whose items are made while it is written, one at a time: a report on 50k nodes is
 * never held as one document. Its items hold no LazyArray (they are written whole).
 */
export class LazyArray<T> {
  constructor(readonly length: number, readonly item: (index: number) => T) {}
}

/** Text handed to `write` at a time: large enough to keep the calls few, small enough to never matter. */
const CHUNK = 64 * 1024;

/**
 * Writes `value` exactly as `JSON.stringify(value, null, 2) + '\n'` would, in chunks, without building
 * the whole text: objects and arrays are written member by member, LazyArray items as they are made.
 * (Plain data only: no toJSON, Map or Date.)
 */
export function writeJson(value: unknown, write: (text: string) => unknown): void {
  let buffer: string[] = [];
  let size = 0;
  const put = (text: string) => {
    buffer.push(text);
    size += text.length;
    if (size >= CHUNK) {
      write(buffer.join(''));
      buffer = [];
      size = 0;
    }
  };
  // a value written whole (a LazyArray item, or a leaf), indented to its depth
  const whole = (item: unknown, indent: string) => {
    const text = JSON.stringify(item, null, 2);
    put(text === undefined ? 'null' : text.includes('\n') ? text.replace(/\n/g, `\n${indent}`) : text);
  };
  const emit = (item: unknown, indent: string): void => {
    const inner = `${indent}  `;
    if (item instanceof LazyArray) {
      if (item.length === 0) return put('[]');
      put('[');
      for (let i = 0; i < item.length; i++) {
        put(i === 0 ? `\n${inner}` : `,\n${inner}`);
        whole(item.item(i), inner);
      }
      return put(`\n${indent}]`);
    }
    if (Array.isArray(item)) {
      if (item.length === 0) return put('[]');
      put('[');
      item.forEach((element, i) => {
        put(i === 0 ? `\n${inner}` : `,\n${inner}`);
        // JSON.stringify writes null for what it cannot represent in an array
        if (element === undefined || typeof element === 'function' || typeof element === 'symbol') put('null');
        else emit(element, inner);
      });
      return put(`\n${indent}]`);
    }
    if (item !== null && typeof item === 'object') {
      const entries = Object.entries(item).filter(([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol');
      if (entries.length === 0) return put('{}');
      put('{');
      entries.forEach(([key, v], i) => {
        put(`${i === 0 ? '' : ','}\n${inner}${JSON.stringify(key)}: `);
        emit(v, inner);
      });
      return put(`\n${indent}}`);
    }
    return whole(item, indent);
  };
  emit(value, '');
  put('\n');
  if (buffer.length > 0) write(buffer.join(''));
}
