import * as fs from 'fs';
import * as path from 'path';

/**
 * The most bytes one input file may hold: 512 MiB, about what one JavaScript string can hold (a larger
 * dump cannot be parsed in one piece anyway; `doctor --state DIR` takes a dump split into files).
 */
export const MAX_INPUT_BYTES = 512 * 2 ** 20;
/** The most files `--state DIR` reads. */
export const MAX_INPUT_FILES = 10_000;

/**
 * Reads one JSON input (a `kubectl get ... -o json` dump): a regular file (a FIFO, device or directory is
 * refused, so a read never blocks or runs unbounded), at most MAX_INPUT_BYTES. Errors name the file and what
 * is wrong, never the file's content (a dump from a cluster may hold anything).
 */
export function readJsonFile(given: string, cwd: string, expected: string, maxBytes = MAX_INPUT_BYTES): unknown {
  const absolute = path.resolve(cwd, given);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(absolute);
  } catch (error) {
    throw new Error(`${given}: cannot read (${fsReason(error)})`);
  }
  if (!stat.isFile()) {
    throw new Error(`${given}: not a regular file (${stat.isDirectory() ? 'a directory' : 'a device, FIFO or socket'}); pass ${expected} saved to a file`);
  }
  if (stat.size > maxBytes) {
    throw new Error(`${given}: ${stat.size} bytes, more than the ${maxBytes} a file may hold; split the dump into several files`);
  }
  let text: string;
  try {
    text = fs.readFileSync(absolute, 'utf-8');
  } catch (error) {
    throw new Error(`${given}: cannot read (${fsReason(error)})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    // JSON.parse quotes the text around the error: say where, not what
    const at = /position (\d+)/.exec((error as Error).message)?.[1];
    const yaml = looksLikeYaml(text) ? ' (it looks like YAML: write it with `-o json`, not `-o yaml`)' : '';
    throw new Error(`${given}: not valid JSON${at === undefined ? '' : ` (at byte ${at})`}${yaml}; pass ${expected}`);
  }
}

/** A YAML document rather than JSON: it opens with `---`, a comment or a `key:` line (JSON opens with `{` or `[`). */
function looksLikeYaml(text: string): boolean {
  return /^\s*(---|#|[A-Za-z_][-\w.]*:(\s|$))/.test(text.slice(0, 200));
}

/** The regular `.json` files of a directory, in name order (hidden files skipped), at most MAX_INPUT_FILES. */
export function jsonFilesIn(given: string, cwd: string): string[] {
  const absolute = path.resolve(cwd, given);
  const names = fs.readdirSync(absolute).filter((n) => !n.startsWith('.') && n.endsWith('.json')).sort();
  if (names.length > MAX_INPUT_FILES) throw new Error(`${given}: ${names.length} files, more than the ${MAX_INPUT_FILES} read at most`);
  return names.map((n) => path.join(given, n));
}

export function isDirectory(given: string, cwd: string): boolean {
  try {
    return fs.statSync(path.resolve(cwd, given)).isDirectory();
  } catch {
    return false;
  }
}

function fsReason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT': return 'no such file or directory';
    case 'EACCES': return 'permission denied';
    default: return code ?? 'unknown error';
  }
}
