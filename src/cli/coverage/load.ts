import * as fs from 'fs';
import * as path from 'path';
import { compare, isObject, ManifestDocument, manifestSet, ManifestSet, parseManifestText } from './manifests';
import { checkNodeName, parseNodeList } from './nodes';
import { NodeJson } from '../../scheduling/types';

/** Extensions read when a directory is given (a cdk8s synth output directory holds `*.k8s.yaml`). */
const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

/**
 * The most bytes read from one file, and from all the manifests of one tree: input beyond this is
 * refused (exit 2) rather than read into memory. A synthesized tree of node agents is kilobytes;
 * `kubectl get nodes -o json` of a very large cluster is some hundreds of megabytes.
 */
export const MAX_FILE_BYTES = 256 * 1024 * 1024;

/**
 * Reads manifest files and directories (recursively, in name order; hidden entries and node_modules skipped).
 * A file given by name is read whatever its extension.
 */
export function loadManifests(paths: readonly string[], cwd: string): ManifestSet {
  const documents: ManifestDocument[] = [];
  let total = 0;
  for (const given of paths) {
    const absolute = path.resolve(cwd, given);
    const stat = statOrThrow(absolute, given);
    const files = stat.isDirectory() ? listManifestFiles(absolute, cwd) : [absolute];
    if (stat.isDirectory() && files.length === 0) {
      throw new Error(`${given}: the directory holds no ${MANIFEST_EXTENSIONS.join('/')} files`);
    }
    for (const file of files) {
      const label = path.relative(cwd, file) || file;
      if (SOURCE_EXTENSIONS.test(file)) throw new Error(`${label}: a TypeScript or JavaScript source file, not manifests; ${SYNTH_HINT}`);
      const text = readOrThrow(file, label);
      total += text.length;
      if (total > MAX_FILE_BYTES) {
        throw new Error(`${given}: the manifests are more than ${MAX_FILE_BYTES / 1024 / 1024} MiB in all, the most read; pass the synthesized manifests of your node agents`);
      }
      // one by one: a spread of 200k documents would overflow the call stack
      for (const document of parseSource(text, label)) documents.push(document);
    }
  }
  return manifestSet(documents);
}

/** Source files given where manifests go: `plan --after main.ts`. */
const SOURCE_EXTENSIONS = /\.(ts|tsx|mts|cts|js|jsx|mjs|cjs)$/i;
const SYNTH_HINT = 'pass the synthesized YAML folder (cdk8s synth\'s dist/)';

/** Lines only program source opens with: an import, an export, a declaration, a comment, a call ending in `;`. */
function looksLikeCode(text: string): boolean {
  return /^\s*(import\s|export\s|(const|let|var|function|class|interface)\s|\/\/|\/\*|#!|require\(|new\s+\w+\().*$/m.test(text.slice(0, 4096))
    || /^[^#\n]*\);\s*$/m.test(text.slice(0, 4096));
}

/** parseManifestText, saying to pass the synthesized manifests when a file that fails to parse looks like program source. */
function parseSource(text: string, label: string): ManifestDocument[] {
  try {
    return parseManifestText(text, label);
  } catch (error) {
    if (error instanceof Error && /not valid YAML/.test(error.message) && looksLikeCode(text)) {
      throw new Error(`${error.message}: it looks like program source, not manifests; ${SYNTH_HINT}`);
    }
    throw error;
  }
}

/** Reads a node inventory: the JSON `kubectl get nodes -o json` prints. */
export function loadNodeList(file: string, cwd: string): NodeJson[] {
  const text = readOrThrow(path.resolve(cwd, file), file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // JSON.parse's message quotes the text around the error: the file's content stays out of the job log
    const message = (error as Error).message;
    const position = /position (\d+)/.exec(message)?.[1];
    const where = position !== undefined ? ` (at character ${position})` : /end of JSON/.test(message) ? ' (it ends before the JSON does)' : '';
    throw new Error(`${file}: not valid JSON${where}; pass the output of \`kubectl get nodes -o json\``);
  }
  checkNodeNames(value, file);
  return parseNodeList(value, file);
}

/**
 * The fields of a Node the tools read, with the API's types: a field of another type is refused
 * here (exit 2) rather than failing, or being misread, further on.
 */
function checkNodeShape(item: Record<string, any>, where: string): void {
  const fail = (what: string) => {
    throw new Error(`${where}: ${what}; pass the output of \`kubectl get nodes -o json\``);
  };
  const optionalObject = (value: unknown, what: string) => {
    if (value !== undefined && value !== null && !isObject(value)) fail(`${what} must be an object`);
  };
  optionalObject(item.spec, 'spec');
  optionalObject(item.status, 'status');
  const spec = isObject(item.spec) ? item.spec : {};
  if (spec.unschedulable !== undefined && spec.unschedulable !== null && typeof spec.unschedulable !== 'boolean') fail('spec.unschedulable must be true or false');
  if (Array.isArray(spec.taints)) {
    spec.taints.forEach((taint: unknown, i: number) => {
      if (isObject(taint) && taint.value !== undefined && taint.value !== null && typeof taint.value !== 'string') fail(`spec.taints[${i}].value must be a string`);
    });
  }
  const status = isObject(item.status) ? item.status : {};
  if (status.conditions !== undefined && status.conditions !== null) {
    if (!Array.isArray(status.conditions)) fail('status.conditions must be a list');
    status.conditions.forEach((condition: unknown, i: number) => {
      if (!isObject(condition) || typeof condition.type !== 'string' || typeof condition.status !== 'string') {
        fail(`status.conditions[${i}] must have a type and a status (strings)`);
      }
    });
  }
}

/**
 * Refuses node names no cluster can hold (checkNodeName, which parseNodeList applies too) and fields of the wrong
 * type, before anything prints them.
 */
function checkNodeNames(value: unknown, file: string): void {
  if (!isObject(value) || !Array.isArray(value.items)) return; // parseNodeList says what is wrong
  value.items.forEach((item: unknown, index: number) => {
    const name = isObject(item) && isObject(item.metadata) ? item.metadata.name : undefined;
    if (typeof name !== 'string' || name === '') return;
    checkNodeName(name, `${file}: items[${index}]`);
    checkNodeShape(item as Record<string, any>, `${file}: items[${index}] (node ${name})`);
  });
}

/**
 * The manifest files of a directory, recursively. Entries that are neither directories nor regular
 * files (FIFOs, devices, sockets, symlinks to them) are refused: reading one would hang or never end.
 * Symlinked directories are not followed (no loops).
 */
function listManifestFiles(dir: string, cwd: string): string[] {
  const result: string[] = [];
  const entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => compare(a.name, b.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      for (const file of listManifestFiles(full, cwd)) result.push(file);
    } else if (MANIFEST_EXTENSIONS.includes(path.extname(entry.name))) {
      const label = path.relative(cwd, full) || full;
      if (!entry.isFile() && !(entry.isSymbolicLink() && statOrThrow(full, label).isFile())) {
        throw new Error(`${label}: ${kindOf(entry)}, not a regular file; the manifests are read from regular files only`);
      }
      result.push(full);
    }
  }
  return result;
}

function kindOf(entry: fs.Dirent | fs.Stats): string {
  return entry.isSymbolicLink() ? 'a symbolic link to something other than a regular file'
    : entry.isFIFO() ? 'a named pipe (FIFO)'
      : entry.isCharacterDevice() || entry.isBlockDevice() ? 'a device'
        : entry.isSocket() ? 'a socket' : entry.isDirectory() ? 'a directory' : 'a special file';
}

function statOrThrow(absolute: string, given: string): fs.Stats {
  try {
    return fs.statSync(absolute);
  } catch (error) {
    throw new Error(`${given}: cannot read (${describeFsError(error)})`);
  }
}

/**
 * Reads a regular file of at most MAX_FILE_BYTES. Opened without blocking (a FIFO would wait for a
 * writer), then checked on the open descriptor: a device, FIFO or socket is refused, whatever link
 * led to it. Errors name the file and what is wrong, never its content.
 */
function readOrThrow(absolute: string, given: string): string {
  let fd: number;
  try {
    // eslint-disable-next-line no-bitwise
    fd = fs.openSync(absolute, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    throw new Error(`${given}: cannot read (${describeFsError(error)})`);
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) throw new Error(`${given}: ${kindOf(stat)}, not a regular file; pass a regular file`);
    if (stat.size > MAX_FILE_BYTES) {
      throw new Error(`${given}: ${Math.ceil(stat.size / 1024 / 1024)} MiB, more than the ${MAX_FILE_BYTES / 1024 / 1024} MiB read from one file`);
    }
    const buffer = Buffer.alloc(stat.size);
    let read = 0;
    while (read < stat.size) {
      const n = fs.readSync(fd, buffer, read, stat.size - read, read);
      if (n === 0) break; // the file shrank while being read
      read += n;
    }
    return buffer.toString('utf-8', 0, read);
  } catch (error) {
    if (error instanceof Error && !('code' in error)) throw error;
    throw new Error(`${given}: cannot read (${describeFsError(error)})`);
  } finally {
    fs.closeSync(fd);
  }
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT': return 'no such file or directory';
    case 'EACCES': return 'permission denied';
    case 'EISDIR': return 'is a directory, expected a file';
    default: return code ?? String(error);
  }
}
