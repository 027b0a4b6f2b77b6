/**
 * Which tags reach which outputs. fluent-bit routes a record to every output whose `Match` pattern
 * matches the record's tag (src/flb_router.c, router_match): `*` matches any run of characters
 * (also none), every other character itself, case-sensitively. An output whose pattern matches no
 * tag any input gives receives nothing, silently: a typo in `match` loses that destination's logs.
 *
 * The tags the collector's records can carry are patterns too: a tail input's `Tag kube.*` expands
 * the `*` into the file's path, a systemd input's into the unit, a rewrite_tag rule's `$1` or
 * record accessor into whatever the record holds. So the check is whether two patterns can match
 * one string (patternsOverlap). Inputs whose tags come from their clients or their records (forward,
 * http, opentelemetry, ...: every network server input, a tail input with Tag_Regex) can bring any
 * tag, and then no output is refused.
 *
 * Pure module: no cdk8s imports.
 */
import { ClassicSection, parseClassicConfig, ParsedClassicSection, splitRuleTokens } from './classic-format';
import { NETWORK_SERVER_INPUTS } from './input-filter-keys';

/** Whether fluent-bit's router matches `tag` with `pattern` (router_match without Match_Regex). */
export function tagMatches(pattern: string, tag: string): boolean {
  return patternsOverlap(pattern, tag.replace(/\*/g, '\u0000'));
}

/** Whether some tag matches both patterns (`*`: any run of characters). */
export function patternsOverlap(a: string, b: string): boolean {
  const memo = new Map<number, boolean>();
  const go = (i: number, j: number): boolean => {
    const id = i * (b.length + 1) + j;
    const known = memo.get(id);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === a.length && j === b.length) {
      result = true;
    } else if (i < a.length && a[i] === '*') {
      // a's star matches nothing more, or takes b's next character (or b's star's run).
      result = go(i + 1, j) || (j < b.length && go(i, j + 1));
    } else if (j < b.length && b[j] === '*') {
      result = go(i, j + 1) || (i < a.length && go(i + 1, j));
    } else {
      result = i < a.length && j < b.length && a[i] === b[j] && go(i + 1, j + 1);
    }
    memo.set(id, result);
    return result;
  };
  return go(0, 0);
}

/** A record accessor or `$N` in a rewrite_tag new tag: any text at run time. */
const DYNAMIC_TAG_PART = /\$[A-Za-z0-9_]+(\[[^\]]*\])*/g;

/** The value of `key` (case-insensitive) in a section, undefined when absent. */
function valueOf(section: ClassicSection, key: string): string | undefined {
  return section.entries.find((e) => e.key.toLowerCase() === key)?.value;
}

/**
 * The tag patterns records can carry, from the generated sections and extraConfig's: each input's
 * Tag (its `*` expanded by the input), each rewrite_tag rule's new tag, a log_to_metrics filter's
 * tag; `*` for an input that takes its tags from its clients or records.
 */
export function tagSources(sections: readonly ClassicSection[]): string[] {
  const tags: string[] = [];
  for (const s of sections) {
    const plugin = (valueOf(s, 'name') ?? '').toLowerCase();
    if (s.name === 'INPUT') {
      const tag = valueOf(s, 'tag');
      if (NETWORK_SERVER_INPUTS.includes(plugin) || valueOf(s, 'tag_regex') !== undefined || tag?.includes('${')) tags.push('*');
      // Without a Tag, an input's records are tagged with its instance name, `<plugin>.<id>` (flb_input_new).
      else tags.push(tag ?? `${plugin}.*`);
    } else if (s.name === 'FILTER' && plugin === 'rewrite_tag') {
      for (const e of s.entries.filter((x) => x.key.toLowerCase() === 'rule')) {
        const newTag = splitRuleTokens(e.value)[2];
        tags.push(newTag === undefined ? '*' : newTag.replace(DYNAMIC_TAG_PART, '*'));
      }
    } else if (s.name === 'FILTER' && plugin === 'log_to_metrics') {
      tags.push(valueOf(s, 'tag') ?? '*');
    }
  }
  return [...new Set(tags)];
}

/** An output to check: who it is (for the message) and its pattern. */
export interface RoutedOutput {
  readonly what: string;
  readonly prop: string;
  readonly match: string;
}

/**
 * Every output (the typed ones as given, extraConfig's `[OUTPUT]`s with a `Match`) whose pattern
 * matches none of the tags; none when some input can bring any tag.
 */
export function routingProblems(generated: readonly ClassicSection[], extraConfig: string | undefined, typed: readonly RoutedOutput[]): string[] {
  // extraConfig was parsed once already: it is valid here.
  const extra: readonly ParsedClassicSection[] = extraConfig !== undefined && extraConfig.trim() !== '' ? parseClassicConfig(extraConfig).sections : [];
  const tags = tagSources([...generated, ...extra]);
  if (tags.some((t) => t.replace(/\*+/g, '*') === '*')) return [];
  const outputs: RoutedOutput[] = [
    ...typed,
    ...extra.filter((s) => s.name === 'OUTPUT' && valueOf(s, 'match') !== undefined && !valueOf(s, 'match')!.includes('${'))
      .map((s) => ({ what: `extraConfig [OUTPUT] at line ${s.line}`, prop: 'Match', match: valueOf(s, 'match')! })),
  ];
  return outputs.filter((o) => !tags.some((t) => patternsOverlap(o.match, t))).map((o) => `${o.what}: ${o.prop} ${JSON.stringify(o.match)} matches no tag `
    + `the collector's inputs give (${tags.join(', ')}); fluent-bit would route nothing to it. Match one of them (a pattern with * such as `
    + `'${tags[0]}'), or give the input that should feed it.`);
}
