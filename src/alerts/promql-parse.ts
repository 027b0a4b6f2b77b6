/**
 * PromQL parsed at synthesis, with Prometheus's own grammar: @prometheus-io/lezer-promql is the
 * Lezer grammar Prometheus maintains for its UI (prometheus/web/ui/module/lezer-promql), published
 * from the Prometheus repository. On top of the grammar, the checks Prometheus's parser makes once an
 * expression is read (promql/parser): string escapes (lex.go, lexEscape: "unknown escape sequence"),
 * regex matchers compiled as RE2 (labels.NewFastRegexMatcher: "error parsing regexp"), and a
 * selector without a metric name needing a matcher that does not match the empty string (parse.go,
 * checkAST: "vector selector must contain at least one non-empty matcher").
 *
 * The RE2 check compiles the regex as a JavaScript one after rewriting RE2's own syntax (`(?P<name>`,
 * flag groups such as `(?i)`, `\z`, `\Q…\E`) and refuses the Perl syntax RE2 lacks (look-arounds,
 * back references): JavaScript accepts a few patterns RE2 refuses (`\C`, an unknown `\p{…}` class),
 * which pass here.
 *
 * Pure module: no cdk8s imports.
 */
import { SyntaxNode, Tree } from '@lezer/common';
import { RefusedBy, ValidationError } from '../validation/errors';

/**
 * The grammar's parser. The package is an ES module with a CommonJS build (its `require` export,
 * dist/index.cjs), which this CommonJS library loads; its type declarations are ESM-only, so the
 * parser is typed here by the one method used, with @lezer/common's (CommonJS-compatible) Tree.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { parser } = require('@prometheus-io/lezer-promql') as { parser: { parse(input: string): Tree } };

/** "line L, column C" of an offset (1-based). */
function position(text: string, offset: number): string {
  const before = text.slice(0, offset).split('\n');
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

/** ` (near "…")` when there is text at the offset. */
function near(text: string, offset: number): string {
  const rest = text.slice(offset, offset + 12).split('\n')[0];
  return rest.trim() === '' ? ' (at the end)' : ` (near ${JSON.stringify(rest)})`;
}

/**
 * Go's unquoting of a PromQL string literal (lexEscape's escapes, then strconv.Unquote): its value,
 * or the problem. Backquoted strings are raw.
 */
export function unquotePromString(literal: string): { value: string } | { problem: string } {
  const quote = literal[0];
  const body = literal.slice(1, -1);
  if (quote === '`') return { value: body };
  let value = '';
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== '\\') {
      value += body[i];
      continue;
    }
    const c = body[++i] ?? '';
    const simple: { [c: string]: string } = { 'a': '\x07', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v', '\\': '\\' };
    const hex = (n: number) => /^[0-9a-fA-F]+$/.test(body.slice(i + 1, i + 1 + n)) && body.slice(i + 1, i + 1 + n).length === n;
    if (simple[c] !== undefined) {
      value += simple[c];
    } else if (c === quote) {
      value += c;
    } else if (/[0-7]/.test(c) && /^[0-7]{3}$/.test(body.slice(i, i + 3))) {
      value += String.fromCharCode(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else if ((c === 'x' && hex(2)) || (c === 'u' && hex(4)) || (c === 'U' && hex(8))) {
      const n = c === 'x' ? 2 : c === 'u' ? 4 : 8;
      value += String.fromCodePoint(parseInt(body.slice(i + 1, i + 1 + n), 16));
      i += n;
    } else {
      return { problem: `unknown escape sequence \\${c} in ${literal} (write \\\\${c} for a backslash, as in a regex \\\\d)` };
    }
  }
  return { value };
}

/** Why RE2 (which Prometheus compiles `=~` and `!~` matchers with, fully anchored) would refuse `re`, if it would. */
export function re2Problem(re: string): string | undefined {
  const perl = /\(\?<?[=!]|\\[1-9]|\\k</.exec(re);
  if (perl) return `${JSON.stringify(re)} is not an RE2 regular expression: RE2 has no ${JSON.stringify(perl[0])} (look-arounds and back references)`;
  const js = re
    .replace(/\\Q(.*?)(\\E|$)/gs, (_m, lit: string) => lit.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .replace(/\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/g, '(?<$1>')
    .replace(/\(\?[imsU]*(-[imsU]*)?\)/g, '')
    .replace(/\(\?[imsU]*(-[imsU]*)?:/g, '(?:')
    .replace(/\\z/g, '$')
    .replace(/\\A/g, '^');
  try {
    new RegExp(`^(?:${js})$`);
    return undefined;
  } catch (e) {
    return `${JSON.stringify(re)} is not an RE2 regular expression (${(e as Error).message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')})`;
  }
}

/** A matcher's operator and value, or the problem of its string. */
function matcherOf(node: SyntaxNode, text: string): { op: string; value: string } | { problem: string } | undefined {
  const op = node.getChild('MatchOp');
  const literal = node.getChild('StringLiteral');
  if (op === null || literal === null) return undefined;
  const unquoted = unquotePromString(text.slice(literal.from, literal.to));
  if ('problem' in unquoted) return { problem: `${unquoted.problem} at ${position(text, literal.from)}` };
  return { op: text.slice(op.from, op.to), value: unquoted.value };
}

/** Whether a matcher matches a series without the label (the empty string). */
function matchesEmpty(op: string, value: string): boolean {
  const anchored = (): RegExp | undefined => {
    try {
      return new RegExp(`^(?:${value.replace(/\(\?[imsU]*(-[imsU]*)?\)/g, '')})$`);
    } catch {
      return undefined;
    }
  };
  switch (op) {
    case '=': return value === '';
    case '!=': return value !== '';
    case '=~': return anchored()?.test('') ?? true;
    case '!~': return !(anchored()?.test('') ?? false);
    default: return true;
  }
}

/** The problem of one node beyond the grammar (strings, regexes, empty selectors), if any. */
function nodeProblem(node: SyntaxNode, text: string): string | undefined {
  if (node.name === 'StringLiteral' && node.parent?.name !== 'UnquotedLabelMatcher' && node.parent?.name !== 'QuotedLabelMatcher') {
    const unquoted = unquotePromString(text.slice(node.from, node.to));
    return 'problem' in unquoted ? `${unquoted.problem} at ${position(text, node.from)}` : undefined;
  }
  if (node.name === 'UnquotedLabelMatcher' || node.name === 'QuotedLabelMatcher') {
    const m = matcherOf(node, text);
    if (m !== undefined && 'problem' in m) return m.problem;
    if (m !== undefined && (m.op === '=~' || m.op === '!~')) {
      const problem = re2Problem(m.value);
      if (problem !== undefined) return `the regex ${problem} at ${position(text, node.from)}`;
    }
    return undefined;
  }
  if (node.name === 'VectorSelector') {
    const matchers = node.getChild('LabelMatchers');
    const named = node.getChild('Identifier') !== null || (matchers?.getChild('QuotedLabelName') ?? null) !== null;
    if (named) return undefined;
    const all = matchers === null ? [] : [...matchers.getChildren('UnquotedLabelMatcher'), ...matchers.getChildren('QuotedLabelMatcher')];
    const nonEmpty = all.some((n) => {
      const m = matcherOf(n, text);
      return m !== undefined && !('problem' in m) && !matchesEmpty(m.op, m.value);
    });
    return nonEmpty ? undefined : `the selector ${JSON.stringify(text.slice(node.from, node.to))} at ${position(text, node.from)} needs a metric name or one `
      + 'matcher that does not match the empty string (Prometheus: "vector selector must contain at least one non-empty matcher")';
  }
  return undefined;
}

/** Why Prometheus would not parse `expr`, or undefined when it parses. */
export function promqlProblem(expr: string): string | undefined {
  if (expr.trim() === '') return 'is empty';
  let problem: string | undefined;
  parser.parse(expr).iterate({
    enter: (ref) => {
      if (problem !== undefined) return false;
      if (ref.type.isError) {
        problem = `does not parse at ${position(expr, ref.from)}${near(expr, ref.from)}`;
        return false;
      }
      problem = nodeProblem(ref.node, expr);
      return problem === undefined;
    },
  });
  return problem;
}

/**
 * Why label matchers written without braces (the selector props: `job="kube-state-metrics"`) are
 * not PromQL label matchers, or undefined when they are. They must read as the braces of one
 * selector and nothing else: `job="x"} or vector(1) or up{a="b"` parses, but not as matchers.
 */
export function selectorProblem(selector: string): string | undefined {
  if (selector.trim() === '') return undefined;
  const expr = `up{${selector}}`;
  const tree = parser.parse(expr);
  const top = tree.topNode.firstChild;
  const matchers = top?.name === 'VectorSelector' ? top.getChild('LabelMatchers') : null;
  const whole = top !== null && top.from === 0 && top.to === expr.length && top.nextSibling === null && matchers !== null && matchers.from === 2;
  const problem = promqlProblem(expr);
  if (whole && problem === undefined) return undefined;
  const detail = problem !== undefined && !problem.startsWith('does not parse') ? `: ${problem.replace(/line 1, column (\d+)/g, (_m, c) => `column ${Number(c) - 3}`)}` : '';
  return `is not PromQL label matchers${detail} (write them as inside the braces of a selector, comma-separated, e.g. `
    + 'job="kube-state-metrics",namespace=~"kube-.*"; Prometheus does not expand environment variables in rules)';
}

/**
 * Throws unless `expr` parses as PromQL, naming the prop and the value; `consequence` says what
 * Prometheus (or the gate) would do with it.
 */
export function checkPromQL(expr: string, prop: string, by: RefusedBy, consequence: string): void {
  const problem = promqlProblem(expr);
  if (problem !== undefined) throw new ValidationError(by, `${prop} ${JSON.stringify(expr)} ${problem}; ${consequence}. Fix the expression.`);
}

/** Throws unless `selector` (when set) is PromQL label matchers, naming the prop and the value. */
export function checkSelector(selector: string | undefined, prop: string, by: RefusedBy): void {
  if (selector === undefined) return;
  const problem = selectorProblem(selector);
  if (problem !== undefined) throw new ValidationError(by, `${prop} ${JSON.stringify(selector)} ${problem}.`);
}

/** What Prometheus does with a rule file holding an expression it cannot parse. */
export const RULE_REFUSED = 'Prometheus (and prometheus-operator\'s admission webhook) would refuse the whole rule file, so none of its alerts would run';
/** What a gate does with a check Prometheus cannot parse. */
export const GATE_FAILS = 'Prometheus would answer the query with an error, so the gate would fail closed on every run';
