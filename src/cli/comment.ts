/** GitHub refuses an issue or pull request comment longer than this many characters. */
export const GITHUB_COMMENT_LIMIT = 65_536;

/**
 * The most characters a command's `--markdown` writes: under GitHub's limit with room for what a workflow adds
 * around it (a header, a marker to find its comment again). Counted in UTF-16 code units, never fewer than the
 * characters GitHub counts.
 */
export const MAX_MARKDOWN_CHARS = 60_000;

/** The room kept at the end of a cut comment for the closing tags and the note saying what was cut. */
const NOTE_ROOM = 1_000;

/**
 * The markdown as it fits in one comment: unchanged when it does; else cut at the end of a line before
 * MAX_MARKDOWN_CHARS, every `<details>` block left open closed (the commands write those tags on lines of their
 * own; values from the input are escaped, so they hold none), and a last line saying how much was left out and
 * where the whole report is. The findings come first in every command's markdown, so what a cut drops is detail.
 */
export function fitComment(markdown: string, max = MAX_MARKDOWN_CHARS): string {
  if (markdown.length <= max) return markdown;
  const end = markdown.lastIndexOf('\n', max - NOTE_ROOM);
  const kept = markdown.slice(0, end < 0 ? max - NOTE_ROOM : end + 1);
  const open = (kept.match(/^<details>/gm) ?? []).length - (kept.match(/^<\/details>/gm) ?? []).length;
  const left = markdown.length - kept.length;
  return `${kept}${'\n</details>\n'.repeat(Math.max(0, open))}\n---\n\n**Cut here**: ${left} more characters would not fit in one comment `
    + `(GitHub takes at most ${GITHUB_COMMENT_LIMIT}); the whole report is in the command's \`--json\` output.\n`;
}
