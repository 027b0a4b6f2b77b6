/** The value of `key` in `map`, set to `make()` first when the map has none (a group, a bucket, an index entry). */
export function entryOf<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
