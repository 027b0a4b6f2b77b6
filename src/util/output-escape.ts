/**
 * The one place where text from the input (manifests, inventories, file names) is made safe for an
 * output: a terminal or a job log (`terminalSafe`), a GitHub-flavoured markdown comment
 * (`markdownEscape`). Shell words are quoted in `shell.ts`.
 *
 * What the CLI reads is attacker-controlled in a pull-request job: a name can carry terminal escape
 * sequences (clear the screen, set the window title, write the clipboard, paint a fake verdict), bidi
 * overrides that reorder what a reviewer reads, newlines that forge lines of their own, and markdown
 * that rewrites a comment's structure or mentions people.
 */

/**
 * Characters never written raw: C0 controls (ESC, BEL, CR, newline...), DEL, C1 controls (8-bit CSI
 * and OSC), zero-width and bidi formatting characters (U+061C, U+200B-U+200F, U+202A-U+202E,
 * U+2060-U+2069), line and paragraph separators, the byte order mark, and lone surrogates.
 */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The same set minus the newline: for whole outputs whose newlines the CLI wrote itself. */
// eslint-disable-next-line no-control-regex
const UNSAFE_KEEP_NEWLINE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** `\n`, `\x1b`, `\u202e`: the character's code, visible, never its effect. */
function visible(char: string): string {
  const code = char.charCodeAt(0);
  if (char === '\n') return '\\n';
  if (char === '\r') return '\\r';
  if (char === '\t') return '\\t';
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * One value for a terminal or a log line: printable characters only. Every control character
 * (newlines included: only the caller's own formatting breaks lines), escape sequence introducer,
 * bidi override and zero-width character is written as its code (`\x1b`, `\u202e`), so the text
 * shows what the input holds and does nothing.
 */
export function terminalSafe(s: string): string {
  return s.replace(UNSAFE, visible);
}

/**
 * `visible` for a whole output, where the text may be a JSON document: DEL and the C1 controls are written
 * `\u009b`, not `\x9b`. JSON.stringify escapes C0 controls and lone surrogates itself and leaves DEL, C1, bidi
 * and zero-width characters raw, and only inside strings; there `\u009b` is the same character, escaped (a
 * valid JSON document, whose values are unchanged), where `\x9b` would make the document invalid.
 */
function visibleInOutput(char: string): string {
  const code = char.charCodeAt(0);
  return code >= 0x7f && code <= 0x9f ? `\\u${code.toString(16).padStart(4, '0')}` : visible(char);
}

/**
 * A whole output the CLI formatted (its own newlines kept): every other control, escape, bidi or
 * zero-width character is written as its code. The last net under the per-value `terminalSafe`, and
 * what keeps a JSON output valid JSON with no raw control in it (visibleInOutput).
 */
export function terminalSafeLines(s: string): string {
  return s.replace(UNSAFE_KEEP_NEWLINE, visibleInOutput);
}

/** ASCII punctuation: CommonMark lets a backslash escape each of them, making it a literal character. */
const MARKDOWN_PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g;

/** A zero-width space, as an entity: breaks `@team` and `#123` for GitHub's reference filters, invisible to a reader. */
const BREAK = '&#8203;';

/**
 * One value for a GitHub-flavoured markdown comment, inline text or a table cell: it renders as the
 * literal text and cannot change the structure around it. Every ASCII punctuation character is
 * backslash-escaped (no emphasis, code span, link, HTML, entity, heading, list or `|` cell break),
 * control characters and newlines are written as their codes (`\n`: a cell or a line never ends
 * inside a value), and `@mentions`, `#123` and `GH-123` references get a zero-width space so
 * GitHub neither notifies a team nor links an issue. Not for inside a code span (backslashes are
 * literal there): use `markdownCode`.
 */
export function markdownEscape(s: string): string {
  return terminalSafe(s)
    .replace(MARKDOWN_PUNCTUATION, (c) => `\\${c}`)
    // GitHub turns @name, #123, owner/repo#123 and GH-123 into mentions and links after the markdown is rendered
    .replace(/\\([@#])/g, `\\$1${BREAK}`)
    .replace(/\b(GH)(?=\\-)/gi, `$1${BREAK}`);
}

/**
 * One value inside an HTML block of a markdown comment (`<details><summary>...</summary>`): there
 * the markdown parser passes text through as HTML, so backslash escapes do nothing. The HTML
 * specials become entities, controls and newlines their codes (a blank line would end the block),
 * and mentions and references are broken as in `markdownEscape`.
 */
export function markdownHtmlEscape(s: string): string {
  const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  return terminalSafe(s)
    .replace(/[&<>"']/g, (c) => entities[c])
    .replace(/([@#])/g, `$1${BREAK}`)
    .replace(/\b(GH)(?=-)/gi, `$1${BREAK}`);
}

/** A value in code font for markdown: `<code>` around the escaped text (a backtick span cannot hold escapes). */
export function markdownCode(s: string): string {
  return `<code>${markdownEscape(s)}</code>`;
}
