/**
 * Numbers for the sets of members each slot (e.g. a node) gathers, when each slot gets its members in increasing
 * member number: slots holding the same members get the same number. Each addition is
 * one map lookup (a trie over the member order), where joining each slot's member list into a key cost the
 * list's length per slot, and the list of a set is rebuilt once, on demand. Set 0 is the empty set.
 */
export class SetIds<T> {
  private readonly children = new Map<number, number>();
  private readonly parents: number[] = [-1];
  private readonly members: (T | undefined)[] = [undefined];
  private readonly sizes: number[] = [0];
  private readonly slots: Int32Array;

  constructor(slotCount: number, private readonly memberCount: number) {
    this.slots = new Int32Array(slotCount);
  }

  /** Adds member number `index` (above those `slot` holds), `member` itself, to `slot`. */
  public add(slot: number, index: number, member: T): void {
    const parent = this.slots[slot];
    const key = parent * this.memberCount + index;
    let id = this.children.get(key);
    if (id === undefined) {
      id = this.parents.length;
      this.parents.push(parent);
      this.members.push(member);
      this.sizes.push(this.sizes[parent] + 1);
      this.children.set(key, id);
    }
    this.slots[slot] = id;
  }

  /** The number of the set `slot` holds. */
  public of(slot: number): number {
    return this.slots[slot];
  }

  public size(id: number): number {
    return this.sizes[id];
  }

  /** The members of set `id`, in the order they were added. */
  public list(id: number): T[] {
    const result: T[] = new Array(this.sizes[id]);
    for (let at = id, k = this.sizes[id] - 1; at > 0; at = this.parents[at], k--) result[k] = this.members[at]!;
    return result;
  }
}
