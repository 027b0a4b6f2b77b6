/**
 * Checks of fluent-bit parser definitions and of the parser names config sections refer to
 * (internal: not exported from the package index).
 *
 * Pure module: no cdk8s imports.
 */
import { ClassicSection } from './classic-format';
import { RefusedBy, throwIfProblems, ValidationError } from '../validation/errors';

/**
 * Parsers fluent-bit 5.1.1 has without any file: the built-in multiline parsers, the names
 * src/multiline/flb_ml_parser.c flb_ml_parser_builtin_create registers through
 * src/multiline/flb_ml_parser_<name>.c (looked up case-insensitively). The same in 4.2.3.
 */
export const BUILTIN_MULTILINE_PARSERS: readonly string[] = ['cri', 'docker', 'go', 'java', 'python', 'ruby'];

/**
 * `[PARSER]` names of the image's `/fluent-bit/etc/parsers.conf`: the `Name` lines of
 * conf/parsers.conf at v5.1.1, which dockerfiles/Dockerfile copies there (the same at v4.2.3).
 */
export const STOCK_PARSERS: readonly string[] = [
  'apache', 'apache2', 'apache_error', 'nginx', 'k8s-nginx-ingress', 'json', 'logfmt', 'docker', 'docker-daemon',
  'syslog-rfc5424', 'syslog-rfc3164-local', 'syslog-rfc3164', 'mongodb', 'envoy', 'istio-envoy-proxy', 'cri',
  'kube-custom', 'kmsg-netfilter-log',
];

export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
export const STATE_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const FIELD_PATTERN = /^[^\s:,"]+$/;

/*
 * The checks below are refused by the factory the user called (`by`, e.g. "FluentBitParser.regex"),
 * about `what` when the value belongs to a part of it (a parser "x").
 */

export function checkName(by: RefusedBy, kind: string, name: string): void {
  if (!NAME_PATTERN.test(name) || name.length > 128) {
    throw new ValidationError(by, `${kind} name ${JSON.stringify(name)} must match ${NAME_PATTERN} (at most 128 characters).`);
  }
}

export function checkFieldName(by: RefusedBy, what: string, prop: string, field: string): void {
  if (!FIELD_PATTERN.test(field)) {
    throwIfProblems(by, [`${prop} field ${JSON.stringify(field)} must be a record key without spaces, ':', ',' or '"'.`], { at: what });
  }
}

export function checkValue(by: RefusedBy, what: string | undefined, prop: string, value: string, envTranslated = true): void {
  if (value.trim() !== value || value === '' || /[\r\n]/.test(value)) {
    throwIfProblems(by, [`${prop} ${JSON.stringify(value)} must be one line without leading or trailing whitespace.`], { at: what });
  }
  // fluent-bit replaces ${NAME} in parser values with the environment variable (get_parser_key).
  if (envTranslated && value.includes('${')) {
    throwIfProblems(by, [`${prop} ${JSON.stringify(value)} contains '\${', which fluent-bit replaces by an environment variable; write '\\$\\{' in a regex.`], { at: what });
  }
}

/**
 * Checks a regex fluent-bit compiles with Onigmo (Ruby syntax, UTF-8; `/pattern/imx` delimiters
 * allowed, flb_regex.c). Onigmo itself is not available here, so the pattern is compiled as a
 * JavaScript RegExp after rewriting the Onigmo-only syntax that has a neutral equivalent (atomic
 * groups, possessive quantifiers, inline options, comments, `\A \z \Z \h \H \K \R \X`, POSIX
 * brackets, `(?'name')`). That catches unbalanced groups and classes, a quantifier with nothing to
 * repeat, reversed ranges and intervals, bad named groups and back references to undefined
 * names. It cannot catch what only Onigmo refuses: a look-behind of unbounded length, an unknown
 * `\p{...}` property, a class range ending in a class escape (`[a-\d]`); and patterns in extended
 * (`x`) mode, with conditionals or subexpression calls (`\g<name>`) are not checked at all.
 * A repeated interval (`a{2}{3}`), which Onigmo accepts, is refused.
 */
export function checkRegex(by: RefusedBy, what: string | undefined, prop: string, pattern: string, envTranslated = true): void {
  checkValue(by, what, prop, pattern, envTranslated);
  let body = pattern;
  let flags = '';
  const delimited = /^\/(.*)\/([imxo]*)$/s.exec(pattern);
  if (delimited) {
    body = delimited[1];
    flags = delimited[2];
  }
  if (flags.includes('x') || /\(\?[imx-]*x|\(\?\(|\\g[<']/.test(body)) {
    return; // see above: not checkable as a JS RegExp
  }
  try {
    new RegExp(toJsPattern(body).js);
  } catch (e) {
    throwIfProblems(by, [`${prop} ${JSON.stringify(pattern)} is not a valid regular expression (${(e as Error).message.replace(/^Invalid regular expression: /, '')}); `
      + 'fluent-bit would refuse to start.'], { at: what });
  }
}

/**
 * The named groups of a regex fluent-bit compiles with Onigmo (`(?<name>…)` or `(?'name'…)`), in
 * order, each once: the fields a regex parser gives (src/flb_parser_regex.c: the record is built
 * from the named groups only, onig_foreach_name). Undefined for what checkRegex does not read (the
 * extended mode, conditionals, subexpression calls).
 */
export function regexGroupNames(pattern: string): string[] | undefined {
  const delimited = /^\/(.*)\/([imxo]*)$/s.exec(pattern);
  const body = delimited ? delimited[1] : pattern;
  if ((delimited?.[2] ?? '').includes('x') || /\(\?[imx-]*x|\(\?\(|\\g[<']/.test(body)) return undefined;
  try {
    return toJsPattern(body).names;
  } catch {
    return undefined;
  }
}

/** Rewrites Onigmo-only tokens into JS equivalents, walking escapes and character classes; the named groups found on the way. */
function toJsPattern(src: string): { js: string; names: string[] } {
  let out = '';
  let inClass = false;
  const names = new Map<string, number>();
  const refs: string[] = [];
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === '\\') {
      const n = src[i + 1] ?? '';
      i++;
      if (n === '') {
        out += '\\'; // a trailing backslash: JS refuses it as Onigmo does
      } else if (!inClass && n === 'k' && /^<[A-Za-z_][A-Za-z0-9_]*>/.test(src.slice(i + 1))) {
        const ref = /^<([A-Za-z_][A-Za-z0-9_]*)>/.exec(src.slice(i + 1))![1];
        refs.push(ref);
        out += '(?:)';
        i += ref.length + 2;
      } else if (!inClass && 'AzZKRXG'.includes(n)) {
        out += '(?:)';
      } else if ('hH'.includes(n)) {
        out += n === 'h' ? '[0-9a-fA-F]' : '[^0-9a-fA-F]';
      } else {
        out += '\\' + n;
      }
      continue;
    }
    if (inClass) {
      if (c === '[' && src[i + 1] === ':') {
        const end = src.indexOf(':]', i + 2);
        if (end > 0) {
          out += 'a';
          i = end + 1;
          continue;
        }
      }
      if (c === ']') inClass = false;
      out += c;
      continue;
    }
    if (c === '[') {
      inClass = true;
      out += c;
      if (src[i + 1] === '^') {
        out += '^';
        i++;
      }
      if (src[i + 1] === ']') { // a leading ']' is literal in Onigmo
        out += '\\]';
        i++;
      }
      continue;
    }
    if (c === '(' && src[i + 1] === '?') {
      const rest = src.slice(i);
      const comment = /^\(\?#[^)]*\)/.exec(rest);
      const atomic = /^\(\?>/.exec(rest);
      const options = /^\(\?[imx]*(-[imx]*)?(:|\))/.exec(rest);
      const named = /^\(\?(<([A-Za-z_][A-Za-z0-9_]*)>|'([A-Za-z_][A-Za-z0-9_]*)')/.exec(rest);
      if (comment) {
        i += comment[0].length - 1;
        continue;
      }
      if (atomic) {
        out += '(?:';
        i += 1;
        continue;
      }
      if (options && options[0] !== '(?:') {
        out += options[2] === ':' ? '(?:' : '';
        i += options[0].length - 1;
        continue;
      }
      if (named) {
        // Onigmo allows a name twice; JS does not.
        const name = named[2] ?? named[3];
        const seen = names.get(name) ?? 0;
        names.set(name, seen + 1);
        out += `(?<${seen === 0 ? name : `${name}_${seen}`}>`;
        i += named[0].length - 1;
        continue;
      }
    }
    if ((c === '+' || c === '*') && /[*+?}]$/.test(out) && !out.endsWith('\\' + out[out.length - 1])) {
      continue; // possessive quantifier (a++) or a nested repeat Onigmo only warns about (a**)
    }
    out += c;
  }
  const undefinedRef = refs.find((r) => !names.has(r));
  if (undefinedRef !== undefined) {
    throw new SyntaxError(`\\k<${undefinedRef}> refers to no named group`);
  }
  return { js: out, names: [...names.keys()] };
}

/** Names `Parser`-like keys of sections may refer to. */
export interface ParserCatalog {
  readonly parsers: ReadonlySet<string>;
  readonly multilineParsers: ReadonlySet<string>;
}

/** The parsers a config can name: stock + built-in + the custom ones. */
export function parserCatalog(parsers: readonly { readonly name: string }[], multilineParsers: readonly { readonly name: string }[]): ParserCatalog {
  return {
    parsers: new Set([...STOCK_PARSERS, ...parsers.map((p) => p.name)]),
    multilineParsers: new Set([...BUILTIN_MULTILINE_PARSERS, ...multilineParsers.map((p) => p.name.toLowerCase())]),
  };
}

/**
 * The parser names a section refers to: `Parser` (filter parser, tail, syslog…; repeatable),
 * `Parser_Firstline` / `Parser_N` (tail's old multiline mode) and `multiline.parser` (tail,
 * multiline filter; a comma list).
 */
export function parserReferences(section: ClassicSection): { key: string; name: string; multiline: boolean }[] {
  const refs: { key: string; name: string; multiline: boolean }[] = [];
  for (const { key, value } of section.entries) {
    const k = key.toLowerCase();
    if (k === 'parser' || k === 'parser_firstline' || /^parser_[0-9]+$/.test(k)) {
      refs.push({ key, name: value, multiline: false });
    } else if (k === 'multiline.parser') {
      for (const name of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
        refs.push({ key, name, multiline: true });
      }
    }
  }
  return refs;
}
