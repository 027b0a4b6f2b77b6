/** Names and paths of a fleet's clusters (no cdk8s: testable without synthesis). */

import { entryOf } from '../util/maps';

/** The folder of a cluster's manifests, relative to the fleet's output root: `clusters/<name>`. */
export function defaultClusterFolder(clusterName: string): string {
  return `clusters/${clusterName}`;
}

/**
 * Problems with a folder given by hand: relative, `/`-separated, no `.`/`..` segments, no trailing
 * slash (Argo CD compares `source.path` literally, and the generator hands it over verbatim).
 */
export function folderProblems(folder: string): string[] {
  const segments = folder.split('/');
  if (folder.length === 0 || folder.startsWith('/') || folder.endsWith('/')
    || segments.some((s) => s === '' || s === '.' || s === '..' || !/^[A-Za-z0-9._-]+$/.test(s))) {
    return [`"${folder}" is not a relative folder path of [A-Za-z0-9._-] segments separated by '/'`];
  }
  return [];
}

/** Folders used by more than one cluster, with the clusters that share each (sorted). */
export function duplicateFolders(folders: ReadonlyArray<{ cluster: string; folder: string }>): Array<{ folder: string; clusters: string[] }> {
  const byFolder = new Map<string, string[]>();
  for (const { cluster, folder } of folders) {
    entryOf(byFolder, folder, () => []).push(cluster);
  }
  return [...byFolder.entries()]
    .filter(([, clusters]) => clusters.length > 1)
    .map(([folder, clusters]) => ({ folder, clusters: [...clusters].sort() }))
    .sort((a, b) => a.folder.localeCompare(b.folder));
}

/** Pairs of folders where one lies inside the other. */
export function nestedFolders(folders: readonly string[]): Array<{ outer: string; inner: string }> {
  const unique = [...new Set(folders)].sort();
  const nested: Array<{ outer: string; inner: string }> = [];
  for (const outer of unique) {
    for (const inner of unique) {
      if (inner !== outer && inner.startsWith(`${outer}/`)) nested.push({ outer, inner });
    }
  }
  return nested;
}
