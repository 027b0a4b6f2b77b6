/**
 * The files an extraConfig tail input reads must be inside the collector's container: fluent-bit
 * globs each `Path` in its own mount namespace (plugins/in_tail/tail_scan_glob.c), so a path under
 * no mount matches no file, and the input reads nothing, on every node, without an error.
 *
 * Pure module: no cdk8s imports.
 */
import { ClassicSection, parseClassicConfig } from './classic-format';

/** The directory part of a path before its first wildcard, e.g. /var/log/audit for /var/log/audit/*.log. */
export function staticDir(path: string): string {
  const wild = path.search(/[*?[{]/);
  const head = wild < 0 ? path : path.slice(0, wild);
  const dir = head.slice(0, head.lastIndexOf('/'));
  return dir === '' ? '/' : dir;
}

/** Whether `dir` is `mount` or below it. */
function under(dir: string, mount: string): boolean {
  const m = mount.replace(/\/+$/, '');
  return m === '' || dir === m || dir.startsWith(m + '/');
}

/**
 * One problem per extraConfig tail `Path` (a comma list of globs) whose directory lies under none of
 * `mounts` (the container's mount paths). A path taken from an environment variable is not checked.
 */
export function extraTailPathProblems(extraConfig: string | undefined, mounts: readonly string[]): string[] {
  if (extraConfig === undefined || extraConfig.trim() === '') return [];
  // extraConfig was parsed once already: it is valid here.
  const sections = parseClassicConfig(extraConfig).sections;
  const isTail = (s: ClassicSection) => s.name === 'INPUT' && s.entries.some((e) => e.key.toLowerCase() === 'name' && e.value.trim().toLowerCase() === 'tail');
  return sections.filter(isTail).flatMap((s) => s.entries.flatMap((e, i) => {
    if (e.key.toLowerCase() !== 'path' || e.value.includes('${')) return [];
    return e.value.split(',').map((p) => p.trim()).filter((p) => p !== '' && !mounts.some((m) => under(staticDir(p), m)))
      .map((p) => `extraConfig [INPUT] at line ${s.line}: tail Path ${JSON.stringify(p)} (line ${s.entryLines[i]}) lies under no mount of the collector `
        + `(${mounts.join(', ')}): fluent-bit would find no file and read nothing on every node. Tail it with inputs: `
        + `[FluentBitInput.tail({ tag, paths: [${JSON.stringify(p)}] })], which mounts its directory read-only, or mount the directory with volumes and mounts.`);
  }));
}
