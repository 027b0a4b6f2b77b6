/**
 * Typed fluent-bit parsers (`[PARSER]`) and multiline parsers (`[MULTILINE_PARSER]`).
 *
 * fluent-bit refuses both sections in the main classic-mode file (flb_config.c: "Sections
 * 'multiline_parser' and 'parser' are not valid in the main configuration file"), so they are
 * rendered into a separate parsers file that `[SERVICE]` names with `Parsers_File`.
 *
 * Pure module: no cdk8s imports. Exported through the package index (jsii).
 */
import { ClassicEntry, ClassicSection, onOff } from './classic-format';
import { checkFieldName, checkName, checkRegex, checkValue, regexGroupNames, STATE_PATTERN } from './parser-checks';
import { brand } from '../validation/brand';
import { RefusedBy, ValidationError } from '../validation/errors';
import { checkArgs } from '../validation/struct-check';

/** Type a parser casts a field to (`Types key:type`). */
export enum FluentBitFieldType {
  /** Kept as a string (the default of every field). */
  STRING = 'string',
  /** Whole number. */
  INTEGER = 'integer',
  /** Floating-point number. */
  FLOAT = 'float',
  /** Boolean (`true`/`false`). */
  BOOL = 'bool',
  /** Hexadecimal number, stored as an integer. */
  HEX = 'hex',
}

/** Decoder of a field (`Decode_Field` / `Decode_Field_As`). */
export enum FluentBitDecoder {
  /** The field holds JSON. */
  JSON = 'json',
  /** The field holds an escaped string. */
  ESCAPED = 'escaped',
  /** The field holds an escaped UTF-8 string. */
  ESCAPED_UTF8 = 'escaped_utf8',
  /** The field holds a MySQL-quoted string. */
  MYSQL_QUOTED = 'mysql_quoted',
}

/** What happens after a decoder ran. */
export enum FluentBitDecoderAction {
  /** Run the next decoder of the field only if this one failed. */
  TRY_NEXT = 'try_next',
  /** Run the next decoder of the field whatever this one did. */
  DO_NEXT = 'do_next',
}

/** One field decoder of a parser. */
export interface FluentBitFieldDecoder {
  /** The decoder. */
  readonly decoder: FluentBitDecoder;
  /** The field it decodes (a key of the parsed record, e.g. `log`). */
  readonly field: string;
  /**
   * Merge the decoded keys into the record (`Decode_Field`, only with the JSON decoder), or
   * replace the field's value by the decoded one (`Decode_Field_As`).
   * @default false (Decode_Field_As)
   */
  readonly merge?: boolean;
  /**
   * What happens after this decoder.
   * @default - nothing (the last decoder of the field)
   */
  readonly action?: FluentBitDecoderAction;
}

/** Options every `[PARSER]` format shares. */
export interface FluentBitParserOptions {
  /**
   * Name filters and inputs refer to (`Parser <name>`). Letters, digits, `_`, `-`, `.`; must not
   * be the name of a parser the image already ships in `/fluent-bit/etc/parsers.conf` (fluent-bit
   * refuses the second definition and stops loading the file).
   */
  readonly name: string;
  /**
   * Field holding the record's time (`Time_Key`).
   * @default - the time the record was read
   */
  readonly timeKey?: string;
  /**
   * strptime format of the time field (`Time_Format`), e.g. `%Y-%m-%dT%H:%M:%S.%L%z`.
   * @default - none (required with timeKey)
   */
  readonly timeFormat?: string;
  /**
   * Keep the time field in the record (`Time_Keep`).
   * @default false
   */
  readonly timeKeep?: boolean;
  /**
   * Fail a record whose time does not match the format exactly (`Time_Strict`).
   * @default true
   */
  readonly timeStrict?: boolean;
  /**
   * Fixed UTC offset of times without a zone (`Time_Offset`, e.g. `+0200`).
   * @default - UTC
   */
  readonly timeOffset?: string;
  /**
   * Types of fields (`Types`), e.g. `{ code: FluentBitFieldType.INTEGER }`.
   * @default - every field is a string
   */
  readonly types?: { [field: string]: FluentBitFieldType };
  /**
   * Field decoders, in order.
   * @default - none
   */
  readonly decoders?: FluentBitFieldDecoder[];
}

/** Options of a regex parser. */
export interface FluentBitRegexParserOptions extends FluentBitParserOptions {
  /**
   * Onigmo (Ruby syntax) regular expression with named groups: each group becomes a field,
   * e.g. `^(?<time>[^ ]+) (?<level>[A-Z]+) (?<message>.*)$`.
   */
  readonly regex: string;
  /**
   * Drop fields whose group matched an empty string (`Skip_Empty_Values`).
   * @default true
   */
  readonly skipEmptyValues?: boolean;
}

/** Options of a logfmt parser. */
export interface FluentBitLogfmtParserOptions extends FluentBitParserOptions {
  /**
   * Reject lines with keys that have no value (`Logfmt_No_Bare_Keys`).
   * @default false
   */
  readonly noBareKeys?: boolean;
}

/**
 * A regex parser's fields are its named groups and nothing else (src/flb_parser_regex.c,
 * flb_parser_regex_do: onig_foreach_name), so a regex without one never yields a field: every line
 * stays unparsed, silently (seen with the built 5.1.1 binary, from a tail input and a parser
 * filter alike). Its time is read from the group `timeKey` names, so a timeKey naming no group is
 * never found: every record keeps the time it was read.
 */
function checkRegexFields(by: RefusedBy, options: FluentBitRegexParserOptions): void {
  const names = regexGroupNames(options.regex);
  if (names === undefined) return;
  const what = `parser ${JSON.stringify(options.name)}`;
  if (names.length === 0) {
    throw new ValidationError(by, `${what}: regex ${JSON.stringify(options.regex)} has no named group; fluent-bit takes the fields from the named groups `
      + 'only, so this parser would never yield one and every line would stay unparsed. Name the groups, e.g. ^(?<time>[^ ]+) (?<message>.*)$.');
  }
  if (options.timeKey !== undefined && !names.includes(options.timeKey)) {
    throw new ValidationError(by, `${what}: timeKey ${JSON.stringify(options.timeKey)} names no group of the regex (its groups: ${names.join(', ')}); `
      + 'fluent-bit would never find the time and every record would keep the time it was read. Name the group (?<' + options.timeKey + '>...) '
      + 'or set timeKey to one of them.');
  }
}

/** A custom `[PARSER]`, rendered into the collector's parsers file. Create one with the static factories. */
export class FluentBitParser {
  /** A regex parser. */
  public static regex(options: FluentBitRegexParserOptions): FluentBitParser {
    checkArgs('FluentBitParser.regex', [options]);
    const by = 'FluentBitParser.regex';
    checkRegex(by, `parser '${options.name}'`, 'regex', options.regex);
    checkRegexFields(by, options);
    return new FluentBitParser(by, 'regex', options, [
      ['Regex', options.regex],
      ['Skip_Empty_Values', options.skipEmptyValues === undefined ? undefined : onOff(options.skipEmptyValues)],
    ]);
  }

  /** A JSON parser (each line is one JSON object). */
  public static json(options: FluentBitParserOptions): FluentBitParser {
    checkArgs('FluentBitParser.json', [options]);
    return new FluentBitParser('FluentBitParser.json', 'json', options, []);
  }

  /** A logfmt parser (`key=value key2="value 2"`). */
  public static logfmt(options: FluentBitLogfmtParserOptions): FluentBitParser {
    checkArgs('FluentBitParser.logfmt', [options]);
    return new FluentBitParser('FluentBitParser.logfmt', 'logfmt', options, [
      ['Logfmt_No_Bare_Keys', options.noBareKeys === undefined ? undefined : onOff(options.noBareKeys)],
    ]);
  }

  /** An LTSV parser (tab-separated `label:value`). */
  public static ltsv(options: FluentBitParserOptions): FluentBitParser {
    checkArgs('FluentBitParser.ltsv', [options]);
    return new FluentBitParser('FluentBitParser.ltsv', 'ltsv', options, []);
  }

  /** The parser's name. */
  public readonly name: string;
  /** The parser's format (`regex`, `json`, `logfmt`, `ltsv`). */
  public readonly format: string;
  private readonly entries: ClassicEntry[];

  private constructor(by: string, format: string, options: FluentBitParserOptions, extra: [string, string | undefined][]) {
    const what = `parser ${JSON.stringify(options.name)}`;
    checkName(by, 'parser', options.name);
    this.name = options.name;
    this.format = format;
    if ((options.timeKey === undefined) !== (options.timeFormat === undefined)) {
      throw new ValidationError(by, `${what}: ` + 'timeKey and timeFormat go together (fluent-bit cannot read a time without its format); set both or neither.');
    }
    if (options.timeKey !== undefined) checkFieldName(by, what, 'timeKey', options.timeKey);
    if (options.timeFormat !== undefined) checkValue(by, what, 'timeFormat', options.timeFormat);
    if (options.timeOffset !== undefined && !/^[+-][0-9]{4}$/.test(options.timeOffset)) {
      throw new ValidationError(by, `${what}: timeOffset ${JSON.stringify(options.timeOffset)} must be a UTC offset such as '+0200' or '-0500'.`);
    }
    const types = options.types ?? {};
    const typePairs = Object.keys(types).sort().map((field) => {
      checkFieldName(by, what, 'types', field);
      return `${field}:${types[field]}`;
    });
    const pairs: [string, string | undefined][] = [
      ['Name', options.name],
      ['Format', format],
      ...extra,
      ['Time_Key', options.timeKey],
      ['Time_Format', options.timeFormat],
      ['Time_Keep', options.timeKeep === undefined ? undefined : onOff(options.timeKeep)],
      ['Time_Strict', options.timeStrict === undefined ? undefined : onOff(options.timeStrict)],
      ['Time_Offset', options.timeOffset],
      ['Types', typePairs.length > 0 ? typePairs.join(' ') : undefined],
    ];
    for (const d of options.decoders ?? []) {
      checkFieldName(by, what, 'decoders[].field', d.field);
      if (d.merge && d.decoder !== FluentBitDecoder.JSON) {
        throw new ValidationError(by, `${what}: decoder ${d.decoder} on '${d.field}' cannot merge (Decode_Field merges JSON only); remove merge or use FluentBitDecoder.JSON.`);
      }
      pairs.push([d.merge ? 'Decode_Field' : 'Decode_Field_As', [d.decoder, d.field, d.action].filter((x) => x !== undefined).join(' ')]);
    }
    this.entries = pairs.filter((p): p is [string, string] => p[1] !== undefined).map(([key, value]) => ({ key, value }));
  }

  /** @internal */
  public _section(): ClassicSection {
    return { name: 'PARSER', entries: this.entries };
  }
}
brand(FluentBitParser, 'FluentBitParser');

/** One rule of a regex multiline parser: in state `state`, a line matching `regex` moves to `nextState`. */
export interface FluentBitMultilineRule {
  /** The state this rule applies in; the first rule's is `start_state` (a line that starts a record). */
  readonly state: string;
  /** Onigmo regular expression a line must match. */
  readonly regex: string;
  /** The state after a match; must be the `state` of some rule (a continuation, e.g. `cont`). */
  readonly nextState: string;
}

/** Options of a regex multiline parser. */
export interface FluentBitMultilineRegexParserOptions {
  /**
   * Name inputs and filters refer to (`multiline.parser <name>`); must not be a built-in one
   * (docker, cri, go, java, python, ruby), which fluent-bit would use instead without a word.
   */
  readonly name: string;
  /** The rules, the first one in `start_state`. */
  readonly rules: FluentBitMultilineRule[];
  /**
   * Milliseconds a pending multiline record waits for its next line before it is flushed (`flush_timeout`).
   * @default - fluent-bit's default (4000)
   */
  readonly flushTimeoutMs?: number;
  /**
   * Field that holds the text to concatenate (`key_content`), e.g. `log`.
   * @default - the plugin's choice (the whole line for tail; required by the multiline filter)
   */
  readonly keyContent?: string;
  /**
   * A `[PARSER]` applied to each line before the rules (`parser`): a custom one defined in
   * `parsers` or a stock one.
   * @default - none
   */
  readonly parser?: string;
}

/** A custom `[MULTILINE_PARSER]`, rendered into the collector's parsers file. */
export class FluentBitMultilineParser {
  /** A regex (state machine) multiline parser. */
  public static regex(options: FluentBitMultilineRegexParserOptions): FluentBitMultilineParser {
    checkArgs('FluentBitMultilineParser.regex', [options]);
    return new FluentBitMultilineParser('FluentBitMultilineParser.regex', options);
  }

  /** The parser's name. */
  public readonly name: string;
  /** The `[PARSER]` it applies first, if any. */
  public readonly parser?: string;
  private readonly entries: ClassicEntry[];

  private constructor(by: string, options: FluentBitMultilineRegexParserOptions) {
    const what = `multiline parser ${JSON.stringify(options.name)}`;
    checkName(by, 'multiline parser', options.name);
    this.name = options.name;
    this.parser = options.parser;
    if (options.rules.length === 0) {
      throw new ValidationError(by, `${what}: ` + 'rules is empty; a regex multiline parser needs at least a \'start_state\' rule.');
    }
    // flb_ml_rule.c: the first rule must be a start_state, every next state must be a rule's state.
    if (options.rules[0].state !== 'start_state') {
      throw new ValidationError(by, `${what}: the first rule's state is '${options.rules[0].state}'; fluent-bit requires 'start_state' there.`);
    }
    const states = new Set(options.rules.map((r) => r.state));
    const entries: [string, string][] = [['name', options.name], ['type', 'regex']];
    if (options.flushTimeoutMs !== undefined) {
      if (!Number.isInteger(options.flushTimeoutMs) || options.flushTimeoutMs < 1) {
        throw new ValidationError(by, `${what}: flushTimeoutMs ${options.flushTimeoutMs} must be a whole number of milliseconds >= 1.`);
      }
      entries.push(['flush_timeout', String(options.flushTimeoutMs)]);
    }
    if (options.keyContent !== undefined) {
      checkFieldName(by, what, 'keyContent', options.keyContent);
      entries.push(['key_content', options.keyContent]);
    }
    if (options.parser !== undefined) {
      checkName(by, 'parser', options.parser);
      entries.push(['parser', options.parser]);
    }
    options.rules.forEach((rule, i) => {
      for (const [prop, state] of [['state', rule.state], ['nextState', rule.nextState]]) {
        if (!STATE_PATTERN.test(state)) {
          throw new ValidationError(by, `${what}: rules[${i}].${prop} ${JSON.stringify(state)} must match ${STATE_PATTERN}.`);
        }
      }
      if (!states.has(rule.nextState)) {
        throw new ValidationError(by, `${what}: rules[${i}].nextState '${rule.nextState}' is no rule's state (fluent-bit: "to_state is not registered"); `
          + `add a rule in state '${rule.nextState}' or use one of ${[...states].join(', ')}.`);
      }
      // Rule values are read raw: no ${VAR} replacement there (multiline_load_regex_rules).
      checkRegex(by, what, `rules[${i}].regex`, rule.regex, false);
      // Classic rules are quoted tokens; fluent-bit ends a token at a '"' not preceded by '\'
      // and turns '\"' into '"' (flb_slist.c), so a '"' is written '\"' and a final '\' cannot be.
      if (rule.regex.endsWith('\\')) {
        throw new ValidationError(by, `${what}: rules[${i}].regex ends with '\\', which would escape the closing quote of the rule; end it otherwise (e.g. '[\\\\]').`);
      }
      entries.push(['rule', [rule.state, rule.regex, rule.nextState].map((t) => `"${t.replace(/"/g, '\\"')}"`).join(' ')]);
    });
    this.entries = entries.map(([key, value]) => ({ key, value }));
  }

  /** @internal */
  public _section(): ClassicSection {
    return { name: 'MULTILINE_PARSER', entries: this.entries };
  }
}
brand(FluentBitMultilineParser, 'FluentBitMultilineParser');

