/**
 * fluent-bit "classic mode" configuration text: a writer and a reader.
 *
 * The format: `[SECTION]` headers; below each, indented `Key Value` lines
 * (key = first whitespace-free token, value = the rest of the line, trimmed);
 * `#` comment lines; `@INCLUDE file` / `@SET k=v` directives at top level.
 * A key may repeat inside a section (e.g. systemd `Systemd_Filter`), so a
 * section is an ordered list of entries, not a map. Keys are case-insensitive
 * for fluent-bit.
 *
 * Pure module: no cdk8s imports.
 */

/** One `Key Value` line. */
export interface ClassicEntry {
  readonly key: string;
  readonly value: string;
}

/** One `[NAME]` block with its entries in order. */
export interface ClassicSection {
  readonly name: string;
  readonly entries: readonly ClassicEntry[];
}

/** A parsed section also remembers where it started, for error messages. */
export interface ParsedClassicSection extends ClassicSection {
  /** 1-based line number of the `[NAME]` header. */
  readonly line: number;
  /** 1-based line number of each entry, in the order of `entries`. */
  readonly entryLines: readonly number[];
}

export interface ParsedClassicConfig {
  readonly sections: readonly ParsedClassicSection[];
  /** `@INCLUDE` / `@SET` lines, verbatim (trimmed), in order. */
  readonly directives: readonly string[];
}

/** Section names fluent-bit's classic mode accepts. */
export const CLASSIC_SECTION_NAMES: readonly string[] = [
  'SERVICE', 'INPUT', 'FILTER', 'OUTPUT', 'PARSER', 'MULTILINE_PARSER', 'PLUGINS', 'UPSTREAM', 'NODE', 'CUSTOM',
];

/** Sections of a file named by `Parsers_File`, and refused in the main classic file. */
export const PARSER_SECTION_NAMES: readonly string[] = ['PARSER', 'MULTILINE_PARSER'];

/** Which file a text is: the main config, a parsers file, or either (no section check). */
export type ClassicFileKind = 'main' | 'parsers' | 'any';

/**
 * The tokens of a classic multiline `rule` value, as fluent-bit splits them (flb_slist.c
 * token_retrieve): space-separated; a token in double quotes ends at a `"` not preceded by `\`,
 * and `\"` in it stands for `"`.
 */
export function splitRuleTokens(value: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (value[i] === ' ') i++;
    if (i >= value.length) break;
    if (value[i] === '"') {
      let j = i + 1;
      while (j < value.length && !(value[j] === '"' && value[j - 1] !== '\\')) j++;
      tokens.push(value.slice(i + 1, j).replace(/\\"/g, '"'));
      i = j + 1;
    } else {
      let j = i;
      while (j < value.length && value[j] !== ' ') j++;
      tokens.push(value.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

/** Wire value of a boolean, in fluent-bit's spelling. */
export function onOff(value: boolean): string {
  return value ? 'On' : 'Off';
}

const KEY_PATTERN = /^[A-Za-z0-9_.\-]+$/;

/** Throws when a key or value cannot be written as one classic-mode line. */
function assertWritableEntry(section: string, key: string, value: string): void {
  const problem = writableEntryProblem(section, key, value);
  if (problem !== undefined) throw new Error(problem);
}

/** What keeps `key value` from being one classic-mode line, or undefined. */
export function writableEntryProblem(section: string, key: string, value: string): string | undefined {
  if (!KEY_PATTERN.test(key)) return `fluent-bit [${section}]: key '${key}' must match ${KEY_PATTERN} (no spaces, no '#').`;
  if (/[\r\n]/.test(value)) return `fluent-bit [${section}] ${key}: value ${JSON.stringify(value)} contains a line break; classic mode values are single lines.`;
  if (value.trim() === '') return `fluent-bit [${section}] ${key}: empty value; omit the key instead.`;
  if (value.trim() !== value) return `fluent-bit [${section}] ${key}: value ${JSON.stringify(value)} has leading/trailing whitespace, which fluent-bit would drop.`;
  return undefined;
}

/**
 * Render sections as classic-mode text. Keys are padded to one column per
 * section so the file reads like fluent-bit's own examples; output is a pure
 * function of the input (deterministic).
 */
export function renderClassicConfig(sections: readonly ClassicSection[], header?: readonly string[]): string {
  const blocks: string[] = [];
  if (header && header.length > 0) {
    blocks.push(header.map((h) => `# ${h}`.trimEnd()).join('\n'));
  }
  for (const section of sections) {
    if (!CLASSIC_SECTION_NAMES.includes(section.name)) {
      throw new Error(`fluent-bit: unknown section [${section.name}]; expected one of ${CLASSIC_SECTION_NAMES.join(', ')}.`);
    }
    const width = Math.max(0, ...section.entries.map((e) => e.key.length));
    const lines = [`[${section.name}]`];
    for (const { key, value } of section.entries) {
      assertWritableEntry(section.name, key, value);
      lines.push(`    ${key.padEnd(width)} ${value}`);
    }
    blocks.push(lines.join('\n'));
  }
  return blocks.join('\n\n') + '\n';
}

/**
 * Parse classic-mode text back into sections. Strict where fluent-bit is:
 * an entry outside a section, an unindented entry, a key without a value or
 * an unknown section name is an error (with the line number). With `file`
 * 'main', parser sections are refused as fluent-bit refuses them; with
 * 'parsers', everything else is.
 */
export function parseClassicConfig(text: string, file: ClassicFileKind = 'any'): ParsedClassicConfig {
  const sections: { name: string; line: number; entries: ClassicEntry[]; entryLines: number[] }[] = [];
  const directives: string[] = [];
  let current: { name: string; line: number; entries: ClassicEntry[]; entryLines: number[] } | undefined;

  text.split(/\r?\n/).forEach((raw, index) => {
    const lineNo = index + 1;
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith('#')) {
      return;
    }
    const header = /^\[([A-Za-z_]+)\]$/.exec(trimmed);
    if (header) {
      if (raw !== trimmed) {
        throw new Error(`fluent-bit config line ${lineNo}: section header '${trimmed}' must not be indented.`);
      }
      const name = header[1].toUpperCase();
      if (!CLASSIC_SECTION_NAMES.includes(name)) {
        throw new Error(`fluent-bit config line ${lineNo}: unknown section [${header[1]}].`);
      }
      if (file === 'main' && PARSER_SECTION_NAMES.includes(name)) {
        // flb_config.c refuses these in the main classic file: fluent-bit exits at start.
        throw new Error(`fluent-bit config line ${lineNo}: [${name}] is not valid in the main configuration file; it belongs in a Parsers_File.`);
      }
      if (file === 'parsers' && !PARSER_SECTION_NAMES.includes(name)) {
        // A parsers file is read for these sections only; anything else would be silently ignored.
        throw new Error(`fluent-bit parsers file line ${lineNo}: [${name}] is not a parser section (only ${PARSER_SECTION_NAMES.join(', ')}).`);
      }
      current = { name, line: lineNo, entries: [], entryLines: [] };
      sections.push(current);
      return;
    }
    if (trimmed.startsWith('@')) {
      if (raw !== trimmed) {
        throw new Error(`fluent-bit config line ${lineNo}: directive '${trimmed}' must not be indented.`);
      }
      if (!/^@(INCLUDE|SET)\s+\S/i.test(trimmed)) {
        throw new Error(`fluent-bit config line ${lineNo}: unknown directive '${trimmed}'.`);
      }
      directives.push(trimmed);
      return;
    }
    if (!current) {
      throw new Error(`fluent-bit config line ${lineNo}: entry '${trimmed}' is outside any [SECTION].`);
    }
    if (!/^\s/.test(raw)) {
      throw new Error(`fluent-bit config line ${lineNo}: entry '${trimmed}' must be indented under [${current.name}].`);
    }
    const kv = /^(\S+)\s+(.*)$/.exec(trimmed);
    if (!kv) {
      throw new Error(`fluent-bit config line ${lineNo}: key '${trimmed}' has no value.`);
    }
    current.entries.push({ key: kv[1], value: kv[2].trim() });
    current.entryLines.push(lineNo);
  });

  return { sections, directives };
}

/** All values of `key` (case-insensitive) in a section, in order. */
export function entryValues(section: ClassicSection, key: string): string[] {
  const k = key.toLowerCase();
  return section.entries.filter((e) => e.key.toLowerCase() === k).map((e) => e.value);
}

/** The single value of `key` (case-insensitive), undefined when absent; throws when repeated. */
export function entryValue(section: ClassicSection, key: string): string | undefined {
  const values = entryValues(section, key);
  if (values.length > 1) {
    throw new Error(`fluent-bit [${section.name}]: key '${key}' appears ${values.length} times.`);
  }
  return values[0];
}

/** Sections of one kind whose `Name` (plugin) matches, e.g. findSections(cfg, 'INPUT', 'tail'). */
export function findSections(config: ParsedClassicConfig, kind: string, plugin?: string): ParsedClassicSection[] {
  return config.sections.filter((s) => s.name === kind.toUpperCase()
    && (plugin === undefined || entryValue(s, 'Name')?.toLowerCase() === plugin.toLowerCase()));
}
