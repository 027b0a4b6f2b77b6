/**
 * Escaping for text taken from untrusted input (pod, node and event text of a cluster dump, names from
 * manifests) before it reaches a terminal or a markdown comment.
 */

// C0 controls but tab and newline handled by the caller, DEL, C1 controls, and the bidi overrides/isolates
// (Trojan Source) plus zero-width joiners that can hide text.
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * Text safe to print on a terminal: every C0/C1 control (ESC included, so no escape sequence survives),
 * DEL and bidi control is replaced by `?`; newlines and tabs become spaces (one finding stays one line).
 */
export function terminalSafe(s: string): string {
  return s.replace(/[\n\r\t]/g, ' ').replace(CONTROLS, '?');
}

/**
 * Text safe inside a GitHub-flavoured markdown paragraph or table cell: controls removed as for a terminal,
 * markdown and HTML metacharacters backslash-escaped, `|` escaped for tables, newlines flattened, and `@` and
 * `#` escaped so a name never pings a user or links an issue.
 */
export function markdownEscape(s: string): string {
  return terminalSafe(s).replace(/[\\`*_{}[\]()<>#+\-.!|~@&:"']/g, (c) => (c === '<' ? '&lt;' : c === '>' ? '&gt;' : c === '&' ? '&amp;' : `\\${c}`));
}
