/**
 * Typed fluent-bit filters for custom pipelines (grep, modify, nest/lift, rewrite_tag,
 * record_modifier, throttle, Lua, multiline, parser).
 *
 * Every key written below is in the plugin's config_map in the fluent-bit 5.1.1 sources
 * (plugins/filter_<name>/*.c), and in 4.2.3's (input-filter-keys.ts); the tests check each
 * rendered filter against those lists.
 * Values that fluent-bit splits into tokens (modify `Set KEY VALUE`, rewrite_tag `Rule`) are
 * checked here so the split comes out as meant.
 *
 * Pure module: no cdk8s imports. Exported through the package index (jsii).
 */
import * as fs from 'fs';
import { ClassicEntry, onOff, writableEntryProblem } from './classic-format';
import { luaCallProblem, luaSyntaxProblem, parseLua } from './lua-check';
import { checkRegex, NAME_PATTERN } from './parser-checks';
import { FilterRenderContext, RenderedFilter } from './rendered-output';
import { brand } from '../validation/brand';
import { ValidationError } from '../validation/errors';
import { checkArgs } from '../validation/struct-check';

/** Options every filter shares. */
export interface FilterCommonOptions {
  /**
   * Tag pattern of the records the filter sees. Container logs are tagged `kube.*`, systemd
   * units `host.*`.
   * @default "kube.*"
   */
  readonly match?: string;
  /**
   * Alias of the filter (names its metrics and, for Lua, its script file). Letters, digits, `-`, `_`.
   * @default - the plugin name, suffixed with `_<n>` when a plugin repeats
   */
  readonly alias?: string;
}

/** One grep rule: a record key (top-level name or record accessor) and a regular expression. */
export interface GrepRule {
  /** Top-level key (`log`) or record accessor (`$kubernetes['namespace_name']`). */
  readonly key: string;
  /** Regular expression (Onigmo syntax) the value is matched against. */
  readonly regex: string;
}

/** How several grep rules combine. */
export enum GrepLogicalOp {
  /** fluent-bit's legacy mode: keep a record when every `regex` matches and no `exclude` does. */
  LEGACY = 'legacy',
  /** Keep (regex) or drop (exclude) a record when all rules match. */
  AND = 'AND',
  /** Keep (regex) or drop (exclude) a record when any rule matches. */
  OR = 'OR',
}

/** Options of a grep filter: keep or drop records by regular expressions. */
export interface GrepFilterOptions extends FilterCommonOptions {
  /**
   * Keep only records matching these rules.
   * @default - none
   */
  readonly regex?: GrepRule[];
  /**
   * Drop records matching these rules.
   * @default - none
   */
  readonly exclude?: GrepRule[];
  /**
   * How rules combine. AND and OR take either `regex` or `exclude` rules, not both (fluent-bit
   * refuses the mix).
   * @default GrepLogicalOp.LEGACY
   */
  readonly logicalOp?: GrepLogicalOp;
}

/** Options of a modify filter (top-level keys only). */
export interface ModifyFilterOptions extends FilterCommonOptions {
  /**
   * Set keys to values, replacing existing ones (`Set`).
   * @default - none
   */
  readonly set?: { [key: string]: string };
  /**
   * Add keys whose values are kept when the key already exists (`Add`).
   * @default - none
   */
  readonly add?: { [key: string]: string };
  /**
   * Remove keys (`Remove`).
   * @default - none
   */
  readonly remove?: string[];
  /**
   * Remove keys matching a wildcard prefix, e.g. `kubernetes_annotations_` (`Remove_wildcard`).
   * @default - none
   */
  readonly removeWildcard?: string[];
  /**
   * Rename keys when the target does not exist yet (`Rename`).
   * @default - none
   */
  readonly rename?: { [from: string]: string };
  /**
   * Copy keys when the target does not exist yet (`Copy`).
   * @default - none
   */
  readonly copy?: { [from: string]: string };
}

/** Options of a nest filter: move keys matching wildcards under a new map. */
export interface NestFilterOptions extends FilterCommonOptions {
  /** Wildcards of the keys to move, e.g. `['pod_*']`. */
  readonly wildcards: string[];
  /** Key of the new map. */
  readonly nestUnder: string;
  /**
   * Prefix removed from the moved keys.
   * @default - none
   */
  readonly removePrefix?: string;
}

/** Options of a nest filter in lift mode: move the keys of a map to the top level. */
export interface LiftFilterOptions extends FilterCommonOptions {
  /** Key of the map to lift, e.g. `kubernetes`. */
  readonly nestedUnder: string;
  /**
   * Prefix added to the lifted keys, e.g. `kubernetes_`.
   * @default - none
   */
  readonly addPrefix?: string;
}

/** One rewrite_tag rule. */
export interface RewriteTagRule {
  /** Record accessor of the key to test, e.g. `$kubernetes['namespace_name']`. */
  readonly key: string;
  /** Regular expression without spaces (use `\s`); capture groups are `$0`, `$1`… in newTag. */
  readonly regex: string;
  /** The new tag; may use `$1`… and record accessors such as `$kubernetes['namespace_name']`. */
  readonly newTag: string;
  /**
   * Keep the record under its old tag as well.
   * @default false
   */
  readonly keep?: boolean;
}

/** Options of a rewrite_tag filter. */
export interface RewriteTagFilterOptions extends FilterCommonOptions {
  /** Rules, tried in order; the first match re-emits the record. */
  readonly rules: RewriteTagRule[];
}

/** Options of a record_modifier filter. */
export interface RecordModifierFilterOptions extends FilterCommonOptions {
  /**
   * Keys to append with fixed values (`Record`); values may use `${ENV}`.
   * @default - none
   */
  readonly records?: { [key: string]: string };
  /**
   * Keys to remove (`Remove_key`).
   * @default - none
   */
  readonly removeKeys?: string[];
  /**
   * Keep only these keys (`Allowlist_key`); not together with removeKeys.
   * @default - all keys
   */
  readonly allowlistKeys?: string[];
}

/** Options of a throttle filter: at most `rate` records per `interval`, averaged over `window` intervals. */
export interface ThrottleFilterOptions extends FilterCommonOptions {
  /** Records allowed per interval (averaged over the window), at least 1 (fluent-bit raises a lower rate to 1). */
  readonly rate: number;
  /**
   * Intervals in the sliding window, at least 2 (fluent-bit replaces 1 by 5).
   * @default 5
   */
  readonly window?: number;
  /**
   * Length of an interval: a fluent-bit time such as `1s` or `1m`, a whole number of seconds, at
   * least one (fluent-bit keeps the whole seconds; under one second its ticker spins on a CPU core).
   * @default "1s"
   */
  readonly interval?: string;
  /**
   * Log the throttle's state.
   * @default false
   */
  readonly printStatus?: boolean;
}

/** Options of a Lua filter whose script is a local file, read at synthesis. */
export interface LuaFileFilterOptions extends FilterCommonOptions {
  /** Path of the script (relative to the directory synthesis runs in); a missing file is an error. */
  readonly file: string;
  /** The Lua function fluent-bit calls for each record (`function cb(tag, timestamp, record)`). */
  readonly call: string;
  /**
   * Give the timestamp as a table with `sec` and `nsec` (`time_as_table`).
   * @default false
   */
  readonly timeAsTable?: boolean;
}

/** Options of a Lua filter with the script given inline. */
export interface LuaInlineFilterOptions extends FilterCommonOptions {
  /** The Lua source. */
  readonly code: string;
  /** The Lua function fluent-bit calls for each record. */
  readonly call: string;
  /**
   * Give the timestamp as a table with `sec` and `nsec` (`time_as_table`).
   * @default false
   */
  readonly timeAsTable?: boolean;
}

/** Options of a multiline filter: join lines that the tail input's own multiline parsing could not. */
export interface MultilineFilterOptions extends FilterCommonOptions {
  /**
   * Multiline parsers tried in order: built-in ones (`go`, `java`, `python`, `ruby`, …) or names of
   * the collector's `multilineParsers`.
   */
  readonly parsers: string[];
  /**
   * Record key holding the text to join.
   * @default "log"
   */
  readonly keyContent?: string;
  /**
   * Milliseconds a pending multiline message waits for more lines before it is flushed.
   * @default - the plugin's default (2000)
   */
  readonly flushMs?: number;
}

/** Options of a parser filter: parse a key of each record with `[PARSER]`s. */
export interface ParserFilterOptions extends FilterCommonOptions {
  /** Top-level key holding the text to parse (`Key_Name`), e.g. `log`. */
  readonly keyName: string;
  /**
   * Parsers tried in order until one matches (`Parser`, one line each): stock parsers of the image
   * (`json`, `docker`, `apache`, …) or names of the collector's `parsers`. Checked at synthesis.
   */
  readonly parsers: string[];
  /**
   * Keep `keyName` in the parsed record (`Preserve_Key`).
   * @default false
   */
  readonly preserveKey?: boolean;
  /**
   * Keep the record's other keys (`Reserve_Data`). fluent-bit's own default (off) replaces the whole
   * record by what the parser read, the kubernetes metadata included; hence on here.
   * @default true
   */
  readonly reserveData?: boolean;
}

type Field = [key: string, value: string | number | boolean | undefined];
type FieldsFn = (alias: string, context: FilterRenderContext) => { fields: Field[]; files?: { [name: string]: string }; extraAliases?: string[] };

/** A fluent-bit filter of a custom pipeline. Create one with the static factories. */
export class FluentBitFilter {
  /** Keep or drop records by regular expressions on their keys. */
  public static grep(options: GrepFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.grep', [options]);
    const by = 'FluentBitFilter.grep';
    const regex = options.regex ?? [];
    const exclude = options.exclude ?? [];
    const op = options.logicalOp ?? GrepLogicalOp.LEGACY;
    if (regex.length + exclude.length === 0) {
      throw new ValidationError(by, 'give at least one regex or exclude rule.');
    }
    if (op !== GrepLogicalOp.LEGACY && regex.length > 0 && exclude.length > 0) {
      throw new ValidationError(by, `logicalOp ${op} takes either regex or exclude rules, not both (fluent-bit refuses the mix); use two grep filters.`);
    }
    const rule = (r: GrepRule, prop: string): string => {
      checkKey(by, 'grep', prop, r.key);
      if (r.regex.trim() === '' || r.regex.trim() !== r.regex) {
        throw new ValidationError(by, `${prop} regex ${JSON.stringify(r.regex)} must be non-empty without leading or trailing spaces.`);
      }
      // Compiled by Onigmo at start (plugins/filter_grep/grep.c, set_rules: flb_regex_create), like a parser's
      // regex: a bad one stops fluent-bit on every node.
      checkRegex(by, undefined, `${prop} rule for key ${r.key}: regex`, r.regex);
      return `${r.key} ${r.regex}`;
    };
    const fields: Field[] = [
      ...regex.map((r): Field => ['Regex', rule(r, 'regex')]),
      ...exclude.map((r): Field => ['Exclude', rule(r, 'exclude')]),
    ];
    return new FluentBitFilter(by, 'grep', options, () => ({
      fields: [
        ...fields,
        ['Logical_Op', op === GrepLogicalOp.LEGACY ? undefined : op],
      ],
    }));
  }

  /** Set, add, remove, rename or copy top-level keys. */
  public static modify(options: ModifyFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.modify', [options]);
    const by = 'FluentBitFilter.modify';
    const pairs = (op: string, record: { [key: string]: string } | undefined): Field[] => Object.keys(record ?? {}).sort().map((k) => {
      checkTopLevelKey(by, 'modify', op, k);
      const v = record![k];
      if (op === 'Rename' || op === 'Copy') {checkTopLevelKey(by, 'modify', op, v);} else if (v.trim() === '' || v.trim() !== v || /[\r\n]/.test(v)) {
        throw new ValidationError(by, `${op} ${k} value ${JSON.stringify(v)} must be one non-empty line without leading or trailing spaces.`);
      }
      return [op, `${k} ${v}`];
    });
    const list = (op: string, keys: string[] | undefined): Field[] => (keys ?? []).map((k) => {
      checkTopLevelKey(by, 'modify', op, k);
      return [op, k];
    });
    const fields = [
      ...pairs('Set', options.set), ...pairs('Add', options.add), ...list('Remove', options.remove),
      ...list('Remove_wildcard', options.removeWildcard), ...pairs('Rename', options.rename), ...pairs('Copy', options.copy),
    ];
    if (fields.length === 0) {
      throw new ValidationError(by, 'give at least one of set, add, remove, removeWildcard, rename, copy.');
    }
    return new FluentBitFilter(by, 'modify', options, () => ({ fields }));
  }

  /** Move keys matching wildcards under a new map (nest filter, `Operation nest`). */
  public static nest(options: NestFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.nest', [options]);
    const by = 'FluentBitFilter.nest';
    if (options.wildcards.length === 0) {
      throw new ValidationError(by, 'wildcards is empty; name the keys to move, e.g. [\'pod_*\'].');
    }
    options.wildcards.forEach((w) => checkTopLevelKey(by, 'nest', 'wildcards', w));
    checkTopLevelKey(by, 'nest', 'nestUnder', options.nestUnder);
    if (options.removePrefix !== undefined) checkTopLevelKey(by, 'nest', 'removePrefix', options.removePrefix);
    return new FluentBitFilter(by, 'nest', options, () => ({
      fields: [
        ['Operation', 'nest'],
        ...options.wildcards.map((w): Field => ['Wildcard', w]),
        ['Nest_under', options.nestUnder],
        ['Remove_prefix', options.removePrefix],
      ],
    }));
  }

  /** Move the keys of a map to the top level (nest filter, `Operation lift`). */
  public static lift(options: LiftFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.lift', [options]);
    const by = 'FluentBitFilter.lift';
    checkTopLevelKey(by, 'nest', 'nestedUnder', options.nestedUnder);
    if (options.addPrefix !== undefined) checkTopLevelKey(by, 'nest', 'addPrefix', options.addPrefix);
    return new FluentBitFilter(by, 'nest', options, () => ({
      fields: [
        ['Operation', 'lift'],
        ['Nested_under', options.nestedUnder],
        ['Add_prefix', options.addPrefix],
      ],
    }));
  }

  /**
   * Re-emit matching records under a new tag (rewrite_tag). The re-emitted records enter the
   * pipeline again from the start, through an emitter buffered on the filesystem like the inputs;
   * a new tag that the kubernetes filter matches (`kube.*`) is enriched again, so choose another prefix.
   */
  public static rewriteTag(options: RewriteTagFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.rewriteTag', [options]);
    const by = 'FluentBitFilter.rewriteTag';
    if (options.rules.length === 0) {
      throw new ValidationError(by, 'rules is empty.');
    }
    const rules = options.rules.map((r, i): Field => {
      if (!r.key.startsWith('$')) {
        throw new ValidationError(by, `rules[${i}].key ${JSON.stringify(r.key)} must be a record accessor such as $log or $kubernetes['namespace_name'].`);
      }
      for (const [prop, value] of [['key', r.key], ['regex', r.regex], ['newTag', r.newTag]] as const) {
        if (!/^\S+$/.test(value)) {
          throw new ValidationError(by, `rules[${i}].${prop} ${JSON.stringify(value)} must be non-empty without spaces `
            + '(the rule is split on spaces; write \\s in a regex).');
        }
      }
      // Compiled by Onigmo at start (plugins/filter_rewrite_tag/rewrite_tag.c, process_config: flb_regex_create).
      checkRegex(by, undefined, `rules[${i}].regex`, r.regex);
      if (/^kube\./.test(r.newTag)) {
        throw new ValidationError(by, `rules[${i}].newTag ${JSON.stringify(r.newTag)} starts with kube.: the re-emitted record would pass the kubernetes filter again, `
          + 'which reads pod names from kube.var.log.containers.* tags only. Use another prefix, e.g. \'app.\'.');
      }
      return ['Rule', `${r.key} ${r.regex} ${r.newTag} ${r.keep ? 'true' : 'false'}`];
    });
    return new FluentBitFilter(by, 'rewrite_tag', options, (alias) => ({
      fields: [
        ...rules,
        ['Emitter_Name', `${alias}_emitter`],
        // Like the inputs: re-emitted records wait on the filesystem, not only in memory.
        ['Emitter_Storage.type', 'filesystem'],
      ],
      extraAliases: [`${alias}_emitter`],
    }));
  }

  /** Append fixed keys, remove keys or keep only some (record_modifier). */
  public static recordModifier(options: RecordModifierFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.recordModifier', [options]);
    const by = 'FluentBitFilter.recordModifier';
    const records = options.records ?? {};
    if (options.removeKeys && options.allowlistKeys) {
      throw new ValidationError(by, 'removeKeys and allowlistKeys exclude each other; give one.');
    }
    const fields: Field[] = [
      ...Object.keys(records).sort().map((k): Field => {
        checkTopLevelKey(by, 'record_modifier', 'records', k);
        if (records[k].trim() === '' || records[k].trim() !== records[k] || /[\r\n]/.test(records[k])) {
          throw new ValidationError(by, `records.${k} value ${JSON.stringify(records[k])} must be one non-empty line without leading or trailing spaces.`);
        }
        return ['Record', `${k} ${records[k]}`];
      }),
      ...(options.removeKeys ?? []).map((k): Field => ['Remove_key', checkTopLevelKey(by, 'record_modifier', 'removeKeys', k)]),
      ...(options.allowlistKeys ?? []).map((k): Field => ['Allowlist_key', checkTopLevelKey(by, 'record_modifier', 'allowlistKeys', k)]),
    ];
    if (fields.length === 0) {
      throw new ValidationError(by, 'give records, removeKeys or allowlistKeys.');
    }
    return new FluentBitFilter(by, 'record_modifier', options, () => ({ fields }));
  }

  /** Drop records above a rate (throttle). */
  public static throttle(options: ThrottleFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.throttle', [options]);
    const by = 'FluentBitFilter.throttle';
    if (!(options.rate > 0) || !Number.isFinite(options.rate)) {
      throw new ValidationError(by, `rate ${options.rate} must be a positive number of records per interval.`);
    }
    const window = options.window ?? 5;
    if (!Number.isInteger(window) || window < 1) {
      throw new ValidationError(by, `window ${window} must be a whole number >= 1.`);
    }
    const interval = options.interval ?? '1s';
    if (!/^[0-9]+(\.[0-9]+)?[smhd]?$/.test(interval)) {
      throw new ValidationError(by, `interval ${JSON.stringify(interval)} must be a fluent-bit time such as '1s' or '1m'.`);
    }
    const problem = throttleValueProblem(options.rate, window, interval);
    if (problem !== undefined) throw new ValidationError(by, problem);
    return new FluentBitFilter(by, 'throttle', options, () => ({
      fields: [
        ['Rate', options.rate],
        ['Window', window],
        ['Interval', interval],
        ['Print_Status', onOff(options.printStatus ?? false)],
      ],
    }));
  }

  /**
   * Parse a key of each record with `[PARSER]`s (the parser filter): the parsed fields join the
   * record. Parser names are checked against the image's stock parsers and the collector's `parsers`
   * at synthesis.
   */
  public static parser(options: ParserFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.parser', [options]);
    const by = 'FluentBitFilter.parser';
    checkTopLevelKey(by, 'parser', 'keyName', options.keyName);
    if (options.parsers.length === 0) {
      throw new ValidationError(by, 'parsers is empty; name at least one, e.g. [\'json\'] or a parser of the collector\'s parsers.');
    }
    options.parsers.forEach((p, i) => {
      if (!NAME_PATTERN.test(p)) {
        throw new ValidationError(by, `parsers[${i}] ${JSON.stringify(p)} is not a parser name (${NAME_PATTERN}).`);
      }
    });
    return new FluentBitFilter(by, 'parser', options, () => ({
      fields: [
        ['Key_Name', options.keyName],
        ...options.parsers.map((p): Field => ['Parser', p]),
        ['Preserve_Key', onOff(options.preserveKey ?? false)],
        ['Reserve_Data', onOff(options.reserveData ?? true)],
      ],
    }), [], options.parsers);
  }

  /**
   * A Lua filter whose script is read from a local file now (a missing or unreadable file is an
   * error at synthesis). The script goes into the ConfigMap, so editing it rolls the pods.
   */
  public static luaFile(options: LuaFileFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.luaFile', [options]);
    let code: string;
    try {
      code = fs.readFileSync(options.file, 'utf8');
    } catch (e) {
      throw new ValidationError('FluentBitFilter.luaFile', `cannot read the Lua script ${JSON.stringify(options.file)} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); `
        + `the path is relative to the directory synthesis runs in (${process.cwd()}). Fix the path or use FluentBitFilter.luaInline.`);
    }
    return FluentBitFilter.lua('luaFile', options.file, code, options);
  }

  /** A Lua filter with an inline script (written to the ConfigMap as a file). */
  public static luaInline(options: LuaInlineFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.luaInline', [options]);
    return FluentBitFilter.lua('luaInline', 'code', options.code, options);
  }

  /**
   * Join multiline messages (stack traces) in records, with built-in or custom multiline parsers.
   * Parser names are checked against the collector's parsers at synthesis.
   */
  public static multiline(options: MultilineFilterOptions): FluentBitFilter {
    checkArgs('FluentBitFilter.multiline', [options]);
    const by = 'FluentBitFilter.multiline';
    if (options.parsers.length === 0) {
      throw new ValidationError(by, 'parsers is empty; name at least one, e.g. [\'java\'].');
    }
    options.parsers.forEach((p) => {
      if (!/^[A-Za-z0-9_.-]+$/.test(p)) throw new ValidationError(by, `parser ${JSON.stringify(p)} is not a parser name.`);
    });
    const key = options.keyContent ?? 'log';
    checkTopLevelKey(by, 'multiline', 'keyContent', key);
    if (options.flushMs !== undefined && (!Number.isInteger(options.flushMs) || options.flushMs < 1)) {
      throw new ValidationError(by, `flushMs ${options.flushMs} must be a whole number >= 1.`);
    }
    return new FluentBitFilter(by, 'multiline', options, (alias) => ({
      fields: [
        ['multiline.key_content', key],
        ['multiline.parser', options.parsers.join(', ')],
        ['flush_ms', options.flushMs],
        ['Emitter_Name', `${alias}_emitter`],
        ['Emitter_Storage.type', 'filesystem'],
      ],
      extraAliases: [`${alias}_emitter`],
    }), options.parsers);
  }

  private static lua(factory: string, source: string, code: string, options: LuaInlineFilterOptions | LuaFileFilterOptions): FluentBitFilter {
    const by = `FluentBitFilter.${factory}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.call)) {
      throw new ValidationError(by, `call ${JSON.stringify(options.call)} must be a Lua function name.`);
    }
    const what = factory === 'luaFile' ? `file ${JSON.stringify(source)}` : 'code';
    const parsed = parseLua(code);
    if ('problem' in parsed) throw new ValidationError(by, luaSyntaxProblem(what, code)!);
    const callProblem = luaCallProblem(parsed.chunk, options.call, `the script (${source})`);
    if (callProblem !== undefined) throw new ValidationError(by, callProblem);
    return new FluentBitFilter(by, 'lua', options, (alias, context) => ({
      fields: [
        ['script', `${context.configDir}/${alias}.lua`],
        ['call', options.call],
        ['time_as_table', onOff(options.timeAsTable ?? false)],
      ],
      files: { [`${alias}.lua`]: code.endsWith('\n') ? code : code + '\n' },
    }));
  }

  /** The fluent-bit plugin (`Name`). */
  public readonly pluginName: string;
  /** The alias given in the options, if any. */
  public readonly alias?: string;
  /** Tag pattern of the records it sees. */
  public readonly match: string;

  private readonly fields: FieldsFn;
  private readonly multilineParserNames: string[];
  private readonly parserNames: string[];

  /** `by`: the factory that builds it, which refuses a bad option. */
  private constructor(
    by: string, pluginName: string, common: FilterCommonOptions, fields: FieldsFn, multilineParsers: string[] = [], parsers: string[] = [],
  ) {
    this.pluginName = pluginName;
    this.fields = fields;
    this.alias = common.alias;
    this.match = common.match ?? 'kube.*';
    this.multilineParserNames = multilineParsers;
    this.parserNames = parsers;
    if (!/^\S+$/.test(this.match)) {
      throw new ValidationError(by, `${pluginName} filter: match ${JSON.stringify(this.match)} must be a non-empty tag pattern without spaces.`);
    }
    if (common.alias !== undefined && !/^[A-Za-z0-9]([A-Za-z0-9_-]*[A-Za-z0-9])?$/.test(common.alias)) {
      throw new ValidationError(by, `${pluginName} filter: alias ${JSON.stringify(common.alias)} must be letters, digits, '-' and '_' (it names metrics and files).`);
    }
    // Every value must be one classic-mode line: checked now, so the error names the factory (the
    // fields are pure: rendering them with a placeholder alias finds every problem).
    for (const [key, value] of fields(common.alias ?? pluginName, { configDir: '/fluent-bit/etc/conf' }).fields) {
      if (value === undefined) continue;
      const problem = writableEntryProblem('FILTER', key, typeof value === 'boolean' ? onOff(value) : String(value));
      if (problem !== undefined) throw new ValidationError(by, `${pluginName} filter: ${problem}`);
    }
  }

  /**
   * The `[FILTER]` entries under `alias`, and what they need.
   * @internal
   */
  public _render(alias: string, context: FilterRenderContext): RenderedFilter {
    const rendered = this.fields(alias, context);
    const fields: Field[] = [['Name', this.pluginName], ['Alias', alias], ['Match', this.match], ...rendered.fields];
    const entries: ClassicEntry[] = [];
    for (const [key, value] of fields) {
      if (value !== undefined) entries.push({ key, value: typeof value === 'boolean' ? onOff(value) : String(value) });
    }
    return {
      entries,
      files: rendered.files ?? {},
      multilineParsers: this.multilineParserNames,
      parsers: this.parserNames,
      extraAliases: rendered.extraAliases ?? [],
    };
  }
}
brand(FluentBitFilter, 'FluentBitFilter');

/** Seconds per suffix of a throttle interval (plugins/filter_throttle/throttle.c, apply_suffix; none means seconds). */
const THROTTLE_SUFFIX_SECONDS: { readonly [suffix: string]: number } = { '': 1, 's': 1, 'm': 60, 'h': 3600, 'd': 86400 };

/**
 * What fluent-bit 5.1.1's throttle filter would change silently (plugins/filter_throttle/throttle.c):
 * `configure` replaces a rate of 1 or less by 1 and a window of 1 or less by 5; `parse_duration`
 * returns the interval's seconds as an int, so 1.5s becomes 1 s, and an interval under one second
 * becomes 0, which `time_ticker` sleeps between ticks: a thread spinning on a CPU core for as long as
 * the collector runs (seen with the built binary: 29,139 status lines in 5 s with 0.5s, one a second with 1s).
 */
function throttleValueProblem(rate: number, window: number, interval: string): string | undefined {
  if (rate < 1) {
    return `rate ${rate} is below 1: fluent-bit replaces a rate of 1 or less by 1 (plugins/filter_throttle/throttle.c, configure), so it would let `
      + `${1 / rate > 1 ? `${Math.round(1 / rate)} times ` : ''}more records through than asked. Give a rate of at least 1 per interval, and a longer interval for a lower rate (e.g. rate 1, interval '10s').`;
  }
  if (window < 2) {
    return `window ${window} is below 2: fluent-bit replaces a window of 1 or less by its default 5 (plugins/filter_throttle/throttle.c, configure). `
      + 'Give a window of at least 2 intervals, or leave it unset for 5.';
  }
  const [, number, suffix] = /^([0-9.]+)([smhd]?)$/.exec(interval)!;
  const seconds = Number(number) * THROTTLE_SUFFIX_SECONDS[suffix];
  if (seconds < 1) {
    return `interval ${JSON.stringify(interval)} is under one second: fluent-bit keeps whole seconds of it (throttle.c, parse_duration returns an int), `
      + 'so its ticker would sleep 0 s and spin on a CPU core for as long as the collector runs. Give at least \'1s\'.';
  }
  if (!Number.isInteger(seconds)) {
    return `interval ${JSON.stringify(interval)} is ${seconds} seconds: fluent-bit keeps whole seconds of it (throttle.c, parse_duration returns an int) `
      + `and would tick every ${Math.floor(seconds)} s. Give a whole number of seconds, e.g. '${Math.floor(seconds)}s' or '${Math.ceil(seconds)}s'.`;
  }
  return undefined;
}

const RECORD_ACCESSOR = /^\$[_A-Za-z][A-Za-z0-9_.\-/]*(\[('([^',]|'')*'|[0-9]+)\])*$/;

function checkKey(by: string, plugin: string, prop: string, key: string): string {
  if (key.startsWith('$') ? !RECORD_ACCESSOR.test(key) : !/^[^\s$]+$/.test(key)) {
    throw new ValidationError(by, `FluentBitFilter ${plugin}: ${prop} key ${JSON.stringify(key)} must be a top-level key (log) or a record accessor ($kubernetes['namespace_name']).`);
  }
  return key;
}

function checkTopLevelKey(by: string, plugin: string, prop: string, key: string): string {
  if (!/^[^\s$]+$/.test(key)) {
    throw new ValidationError(by, `FluentBitFilter ${plugin}: ${prop} key ${JSON.stringify(key)} must be a top-level key without spaces (${plugin} takes no record accessors).`);
  }
  return key;
}
