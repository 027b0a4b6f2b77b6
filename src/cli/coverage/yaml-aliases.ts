import * as YAML from 'yaml';

/**
 * The bytes a file's aliases may add beyond doubling its documents, all documents of the file together: room
 * for a small document that reuses one block a few times, while the whole file still reads to at most twice
 * its size and this much.
 */
export const ALIAS_SLACK_BYTES = 64 * 1024;

/** What is left of a file's ALIAS_SLACK_BYTES as its documents are read. */
export interface AliasAllowance {
  slack: number;
}

type Slot = { readonly parent: YAML.Document.Parsed; readonly key: 'contents' }
| { readonly parent: YAML.Pair; readonly key: 'key' | 'value' }
| { readonly parent: YAML.YAMLSeq | YAML.YAMLMap; readonly key: number };

/** An alias, the node it names (the last anchor of that name before it, in document order) and where it sits. */
interface AliasUse {
  readonly alias: YAML.Alias;
  readonly target: YAML.Node;
  readonly slot: Slot;
}

/**
 * Resolves a parsed document's aliases in one pass and refuses what would blow up once they are expanded;
 * then puts each anchored node where its aliases were, so the yaml package's toJS expands them without
 * looking each alias up (its lookup scans every earlier anchor and alias, and a merge key's resolution walked
 * the whole document per alias: n merges took n² steps).
 *
 * The size that counts is in bytes (the JSON the document becomes), not nodes: one 1 MB string aliased 600
 * times is 600 MB whatever its node count. A document whose aliases would more than double it is refused,
 * but for ALIAS_SLACK_BYTES per file. go-yaml, which kubectl and Argo CD read manifests with, refuses
 * "excessive aliasing" by node count (yaml.v2 decode.go allowedAliasRatio): it lets a small document take 99%
 * of its nodes from aliases, so a manifest refused here can be one kubectl applies; the fix is the same, write
 * the values out.
 *
 * Also refused, as sigs.k8s.io/yaml's conversion to JSON refuses them (convertToJSONableObject: "unsupported
 * map key"): a mapping key that is a mapping or a list (the yaml package would turn it into a string and print
 * a warning of its own), and an anchor whose value holds an alias of itself ("anchor 'a' value contains itself").
 */
export function expandAliases(doc: YAML.Document.Parsed, text: string, source: string, allowance: AliasAllowance): void {
  const fail = (why: string, node: unknown) => {
    const offset = YAML.isNode(node) || YAML.isPair(node) ? rangeStart(node) : undefined;
    const line = offset === undefined ? '' : `, line ${text.slice(0, offset).split('\n').length}`;
    throw new Error(`${source}: not valid YAML (${why}${line})`);
  };
  const uses: AliasUse[] = [];
  const anchors = new Map<string, YAML.Node>();
  const own = walk(doc, anchors, uses, fail);
  if (uses.length === 0) return;
  const targets = new Map(uses.map((u) => [u.alias, u.target]));
  for (const { target, alias, slot } of uses) {
    // an alias used as a key: checked once it is known what it names
    if (slot.key === 'key' && YAML.isCollection(target)) fail('a mapping key is a mapping or a list; the API server reads string keys only', alias);
  }
  const expanded = expandedBytes(doc.contents, targets, fail);
  const excess = expanded - 2 * own;
  if (excess > 0) {
    allowance.slack -= excess;
    if (allowance.slack < 0) {
      fail(`its aliases expand ${own} bytes to ${expanded}, more than double: refused as an alias amplification; write the values out`, doc.contents);
    }
  }
  for (const { target, slot } of uses) place(slot, target);
}

function rangeStart(node: YAML.Node | YAML.Pair): number | undefined {
  if (YAML.isPair(node)) return YAML.isNode(node.key) ? node.key.range?.[0] : undefined;
  return node.range?.[0];
}

/** JSON bytes of a scalar: a string's length and its quotes, else its text (`true`, `12`, `null`). */
function scalarBytes(node: YAML.Scalar): number {
  const value = node.value;
  if (typeof value === 'string') return value.length + 2;
  if (value instanceof Uint8Array) return value.length + 2;
  if (value === null || value === undefined) return 4;
  return typeof value === 'symbol' ? 2 : String(value).length;
}

/**
 * One pass in document order (the order the yaml package resolves aliases in: the last anchor of a name
 * before the alias, an anchored node before its children): the anchors, each alias's target and slot, and
 * the document's own size in bytes (an alias counts as its own text, `*name`).
 */
function walk(doc: YAML.Document.Parsed, anchors: Map<string, YAML.Node>, uses: AliasUse[], fail: (why: string, node: unknown) => never): number {
  let own = 0;
  const visit = (node: unknown, slot: Slot): void => {
    if (YAML.isAlias(node)) {
      const target = anchors.get(node.source);
      if (target === undefined) fail('an alias without an anchor of its name before it', node);
      uses.push({ alias: node, target, slot });
      own += node.source.length + 1;
      return;
    }
    if (YAML.isNode(node) && node.anchor !== undefined) anchors.set(node.anchor, node);
    if (YAML.isScalar(node)) {
      own += scalarBytes(node);
    } else if (YAML.isMap(node) || YAML.isSeq(node)) {
      own += 2;
      const items = node.items as unknown[];
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (YAML.isPair(item)) {
          own += 2;
          if (YAML.isCollection(item.key)) fail('a mapping key is a mapping or a list; the API server reads string keys only', item);
          if (YAML.isScalar(item.key) && typeof item.key.value === 'object' && item.key.value !== null) {
            fail('a mapping key is binary data; the API server reads string keys only', item);
          }
          visit(item.key, { parent: item, key: 'key' });
          visit(item.value, { parent: item, key: 'value' });
        } else {
          own += 1;
          visit(item, { parent: node, key: i });
        }
      }
    } else {
      own += 4; // an empty value: null
    }
  };
  visit(doc.contents, { parent: doc, key: 'contents' });
  return own;
}

/** The document's size in bytes with every alias expanded: each anchored node measured once (memoized), so linear. */
function expandedBytes(root: unknown, targets: ReadonlyMap<YAML.Alias, YAML.Node>, fail: (why: string, node: unknown) => never): number {
  const IN_PROGRESS = -1;
  const sizes = new Map<unknown, number>();
  const size = (node: unknown): number => {
    if (YAML.isAlias(node)) return size(targets.get(node));
    if (YAML.isScalar(node)) return scalarBytes(node);
    if (!YAML.isMap(node) && !YAML.isSeq(node)) return 4;
    const known = sizes.get(node);
    if (known === IN_PROGRESS) fail(`the anchor ${JSON.stringify(shortName(node.anchor))} holds an alias of itself`, node);
    if (known !== undefined) return known;
    sizes.set(node, IN_PROGRESS);
    let total = 2;
    for (const item of node.items as unknown[]) total += YAML.isPair(item) ? 2 + size(item.key) + size(item.value) : 1 + size(item);
    sizes.set(node, total);
    return total;
  };
  return size(root);
}

function shortName(name: string | undefined): string {
  const text = name ?? '';
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

/** Puts the anchored node where its alias was: the yaml package converts it there as it converts any node. */
function place(slot: Slot, target: YAML.Node): void {
  if (slot.key === 'contents') slot.parent.contents = target as YAML.Document.Parsed['contents'];
  else if (slot.key === 'key' || slot.key === 'value') slot.parent[slot.key] = target;
  else if (YAML.isCollection(slot.parent)) (slot.parent.items as unknown[])[slot.key] = target;
}
