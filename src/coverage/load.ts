import * as fs from 'fs';
import * as path from 'path';
import { compare, isObject, ManifestDocument, manifestSet, ManifestSet, parseManifestText } from './manifests';
import { parseNodeList } from './nodes';
import { NodeJson } from '../scheduling/types';
import { terminalSafe } from '../util/output-escape';

/** Extensions read when a directory is given (a cdk8s synth output directory holds `*.k8s.yaml`). */
const MANIFEST_EXTENSIONS = ['.yaml', '.yml', '.json'];

/**
 * Reads manifest files and directories (recursively, in name order; hidden entries and node_modules skipped).
 * A file given by name is read whatever its extension.
 */
export function loadManifests(paths: readonly string[], cwd: string): ManifestSet {
  const documents: ManifestDocument[] = [];
  for (const given of paths) {
    const absolute = path.resolve(cwd, given);
    const stat = statOrThrow(absolute, given);
    const files = stat.isDirectory() ? listManifestFiles(absolute) : [absolute];
    if (stat.isDirectory() && files.length === 0) {
      throw new Error(`${given}: the directory holds no ${MANIFEST_EXTENSIONS.join('/')} files`);
    }
    for (const file of files) {
      const label = path.relative(cwd, file) || file;
      documents.push(...parseManifestText(readOrThrow(file, label), label));
    }
  }
  return manifestSet(documents);
}

/** Reads a node inventory: the JSON `kubectl get nodes -o json` prints. */
export function loadNodeList(file: string, cwd: string): NodeJson[] {
  const text = readOrThrow(path.resolve(cwd, file), file);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file}: not valid JSON (${(error as Error).message}); pass the output of \`kubectl get nodes -o json\``);
  }
  checkNodeNames(value, file);
  return parseNodeList(value, file);
}

/** A node name as the API server takes it (ValidateNodeName: a DNS-1123 subdomain). */
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Refuses node names no cluster can hold, before anything prints them: the names go into kubectl
 * command lines (`--all` would be read as an option), comments and terminals. The message shows a
 * short, escaped form of the name, never its raw bytes.
 */
function checkNodeNames(value: unknown, file: string): void {
  if (!isObject(value) || !Array.isArray(value.items)) return; // parseNodeList says what is wrong
  value.items.forEach((item: unknown, index: number) => {
    const name = isObject(item) && isObject(item.metadata) ? item.metadata.name : undefined;
    if (typeof name !== 'string' || name === '') return;
    if (name.length > 253 || !NODE_NAME.test(name)) {
      const shown = JSON.stringify(terminalSafe(name.length > 40 ? `${name.slice(0, 40)}…` : name));
      throw new Error(`${file}: items[${index}]: node name ${shown} is not a valid Kubernetes node name (a DNS subdomain: `
        + 'lowercase letters, digits, "-" and ".", starting and ending with a letter or digit, at most 253 characters); '
        + 'the API server refuses such a node: fix or remove it in the inventory');
    }
  });
}

function listManifestFiles(dir: string): string[] {
  const result: string[] = [];
  const entries = fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => compare(a.name, b.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) result.push(...listManifestFiles(full));
    else if (MANIFEST_EXTENSIONS.includes(path.extname(entry.name))) result.push(full);
  }
  return result;
}

function statOrThrow(absolute: string, given: string): fs.Stats {
  try {
    return fs.statSync(absolute);
  } catch (error) {
    throw new Error(`${given}: cannot read (${describeFsError(error)})`);
  }
}

function readOrThrow(absolute: string, given: string): string {
  try {
    return fs.readFileSync(absolute, 'utf-8');
  } catch (error) {
    throw new Error(`${given}: cannot read (${describeFsError(error)})`);
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
