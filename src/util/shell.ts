/**
 * Words the shell takes literally, left bare so the usual commands stay readable. A word starting
 * with `-` is never bare: from the input it would read as an option, and quoting it makes that
 * visible (quotes alone do not stop a program reading it as one: commands put `--` before input words).
 */
const PLAIN_WORD = /^[A-Za-z0-9_./:=,@%+][A-Za-z0-9_./:=,@%+-]*$/;

/**
 * One argument for a POSIX shell (sh, bash, zsh): bare when plainly safe, otherwise in single
 * quotes, inside which nothing expands; a `'` is written `'\''` (close, escaped quote, reopen).
 * Options of our own are written as literal text, not through here.
 */
export function shellWord(word: string): string {
  return PLAIN_WORD.test(word) ? word : `'${word.replace(/'/g, "'\\''")}'`;
}

/** A command line from its arguments, each quoted as `shellWord` does. */
export function shellLine(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ');
}
