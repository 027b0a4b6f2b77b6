import { termMatches } from './node-affinity';
import { NodeIdentity, NodeSelectorTermJson } from './types';
import { ValidationError } from '../validation/errors';

/**
 * Requirement checks one coverage run may make on node affinity after indexing. Terms with an `In`
 * requirement (or a matchFields metadata.name In) are checked only on the nodes carrying one of its
 * values; a term without one is checked on every node. Past this budget the run stops with a clear error.
 */
export const MAX_AFFINITY_EVALUATIONS = 50_000_000;

/**
 * Which nodes a list of nodeSelectorTerms selects, with the semantics of termsMatch
 * (k8s.io/component-helpers/scheduling/corev1/nodeaffinity: terms ORed, requirements ANDed, matchFields
 * metadata.name), without checking every term on every node: 100,000 terms on 20,000 nodes were 2e9
 * checks. Nodes are indexed by label key and value and by name; each distinct term is checked only on
 * the nodes its most selective `In` requirement allows (all nodes when it has none), and a node already
 * selected by an earlier term is skipped.
 */
export class AffinityIndex<N extends { readonly identity: NodeIdentity }> {
  private byLabel?: Map<string, Map<string, number[]>>;
  private byName?: Map<string, number>;
  /** nodes whose name an earlier or later node repeats, but the last one, by object; and every position of such a name */
  private repeated?: Map<N, number>;
  private repeatedByName?: Map<string, number[]>;
  private used = 0;

  /** `what` names the input in the error past the budget (e.g. the DaemonSet id). */
  constructor(private readonly nodes: readonly N[], private readonly budget = MAX_AFFINITY_EVALUATIONS) {}

  /** Whether `node` is one of the indexed nodes (others are checked with termsMatch directly). */
  public has(node: N): boolean {
    return this.position(node) >= 0;
  }

  /**
   * The node's position in the indexed list, -1 for a node not in it. Found through the node's name (a
   * string-keyed map the index keeps anyway), then checked to be the same object: no map keyed by node
   * objects (hashing 40,000 objects cost more than the matching itself), except for the nodes of a name the
   * list repeats.
   */
  public position(node: N): number {
    const at = this.names().get(node.identity.name);
    if (at !== undefined && this.nodes[at] === node) return at;
    return this.repeated?.get(node) ?? -1;
  }

  /**
   * The indexed nodes some term selects. `strip` drops requirements on a label key before matching (the
   * wave key: "fails only on the wave requirement"); a term left with no requirement by it selects every node,
   * while a term empty as written selects none.
   */
  public matching(terms: readonly NodeSelectorTermJson[], what: string, strip?: string): IndexedNodes<N> {
    // the distinct terms and the nodes each is checked on, and the cost, before any check
    const planned: { term: NodeSelectorTermJson; candidates?: readonly number[] }[] = [];
    const seen = new Set<string>();
    let everyNode = false;
    let cost = 0;
    for (const written of terms) {
      const expressions = written.matchExpressions ?? [];
      const fields = written.matchFields ?? [];
      if (expressions.length === 0 && fields.length === 0) continue;
      const kept = strip === undefined ? expressions : expressions.filter((r) => r.key !== strip);
      if (kept.length === 0 && fields.length === 0) {
        everyNode = true;
        break;
      }
      const term: NodeSelectorTermJson = { matchExpressions: kept, matchFields: fields };
      const key = JSON.stringify([kept, fields]);
      if (seen.has(key)) continue;
      seen.add(key);
      const candidates = this.candidates(term);
      cost += (candidates === undefined ? this.nodes.length : candidates.length) * (kept.length + fields.length);
      planned.push({ term, candidates });
    }
    if (everyNode) return new IndexedNodes(this, this.nodes, undefined);
    this.used += cost;
    if (this.used > this.budget) {
      throw new ValidationError(what, `its required node affinity (${terms.length} nodeSelectorTerms) on ${this.nodes.length} nodes needs more than `
        + `${this.budget.toExponential(0)} requirement checks even indexed (a term without an In requirement is checked on every node): `
        + 'merge repeated terms, or give each term an In requirement on a node label');
    }
    const marked = new Uint8Array(this.nodes.length);
    for (const { term, candidates } of planned) {
      const check = (i: number) => {
        if (marked[i] === 0 && termMatches(term, this.nodes[i].identity)) marked[i] = 1;
      };
      if (candidates === undefined) for (let i = 0; i < this.nodes.length; i++) check(i);
      else for (const i of candidates) check(i);
    }
    return new IndexedNodes(this, this.nodes, marked);
  }

  /** The nodes the term's most selective `In` requirement allows; undefined when it has none. */
  private candidates(term: NodeSelectorTermJson): readonly number[] | undefined {
    let best: number[] | undefined;
    for (const field of term.matchFields ?? []) {
      // fieldRequirementMatches: only metadata.name In with one value selects a node
      if (field.key !== 'metadata.name' || field.operator !== 'In' || (field.values ?? []).length !== 1) continue;
      const at = this.names().get(field.values![0]);
      best = this.repeatedByName?.get(field.values![0]) ?? (at === undefined ? [] : [at]);
    }
    for (const requirement of term.matchExpressions ?? []) {
      if (requirement.operator !== 'In') continue;
      const values = this.labelValues(requirement.key);
      const lists = [...new Set(requirement.values ?? [])].map((v) => values?.get(v) ?? []);
      const size = lists.reduce((sum, list) => sum + list.length, 0);
      if (best === undefined || size < best.length) best = lists.length === 1 ? lists[0] : lists.flat();
    }
    return best;
  }

  /** The nodes by their value of one label key, indexed on first use (only the keys some term asks about). */
  private labelValues(key: string): Map<string, number[]> {
    this.byLabel ??= new Map();
    let values = this.byLabel.get(key);
    if (values === undefined) {
      values = new Map();
      for (let i = 0; i < this.nodes.length; i++) {
        const labels = this.nodes[i].identity.labels;
        // own labels only: a key such as `constructor` must not read the object's prototype
        if (!Object.prototype.hasOwnProperty.call(labels, key)) continue;
        const value = labels[key];
        const list = values.get(value);
        if (list === undefined) values.set(value, [i]);
        else list.push(i);
      }
      this.byLabel.set(key, values);
    }
    return values;
  }

  private names(): Map<string, number> {
    if (this.byName === undefined) {
      const byName = new Map<string, number>();
      this.nodes.forEach((node, i) => {
        const earlier = byName.get(node.identity.name);
        if (earlier !== undefined) {
          // a repeated name (a malformed inventory): every node carrying it stays findable
          this.repeated ??= new Map();
          this.repeated.set(this.nodes[earlier], earlier);
          const all = (this.repeatedByName ??= new Map()).get(node.identity.name);
          if (all === undefined) this.repeatedByName.set(node.identity.name, [earlier, i]);
          else all.push(i);
        }
        byName.set(node.identity.name, i);
      });
      this.byName = byName;
    }
    return this.byName;
  }
}

/** The indexed nodes a matching selects: membership by position in the indexed list, no set of node objects. */
export class IndexedNodes<N extends { readonly identity: NodeIdentity }> implements Iterable<N> {
  /** `marked` undefined: every node. */
  constructor(private readonly index: AffinityIndex<N>, private readonly nodes: readonly N[], private readonly marked: Uint8Array | undefined) {}

  public has(node: N): boolean {
    const at = this.index.position(node);
    return at >= 0 && (this.marked === undefined || this.marked[at] === 1);
  }

  public* [Symbol.iterator](): Iterator<N> {
    for (let i = 0; i < this.nodes.length; i++) {
      if (this.marked === undefined || this.marked[i] === 1) yield this.nodes[i];
    }
  }
}
