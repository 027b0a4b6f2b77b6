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

/**
 * sh lines defining `printable TEXT` (prints TEXT on one line with nothing a terminal takes for a control) and
 * `shell_word WORD` (prints WORD as one sh word, as `shellWord` writes it: a name in a command to paste), for the rendered scripts that log what the API
 * server or Prometheus answered. `printable`: tabs, newlines and carriage returns become spaces; the other C0
 * controls and DEL, the C1 controls encoded in UTF-8 (U+0080-U+009F, bytes C2 80-C2 9F), and raw bytes 0x80-0x9F
 * where no UTF-8 sequence holds them (at the start, or after an ASCII byte; a run as one) become "?"; should sed
 * refuse those byte patterns (a libc whose C locale is not byte-based), every byte 0x80-0x9F becomes "?". The
 * bytes are made at run time by printf, so the script itself stays ASCII. Busybox tr and sed (the curl image's)
 * run it.
 */
export const SHELL_FUNCTIONS = String.raw`c1_lead=$(printf '\302'); c1_bytes=$(printf '\200-\237'); ascii_bytes=$(printf '\001-\177')
printable() {
  printable_c0=$(printf '%s' "$1" | LC_ALL=C tr '\011\012\015' '   ' | LC_ALL=C tr '\000-\037\177' '?')
  printf '%s' "$printable_c0" \
    | LC_ALL=C sed -e "s/$c1_lead[$c1_bytes]/?/g" -e "s/^[$c1_bytes][$c1_bytes]*/?/" -e "s/\([$ascii_bytes]\)[$c1_bytes][$c1_bytes]*/\1?/g" 2>/dev/null \
    || printf '%s' "$printable_c0" | LC_ALL=C tr '\200-\237' '?'
}
shell_word() {
  case "$1" in
    '' | -* | *[!A-Za-z0-9_./:=,@%+-]*) set -- "$(printf '%s_' "$1" | sed "s/'/'\\\\''/g")"; printf "'%s'" "${'$'}{1%_}" ;;
    *) printf '%s' "$1" ;;
  esac
}
`;
