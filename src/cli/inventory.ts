import { loadNodeList } from './coverage/load';
import { NodeJson } from '../scheduling/types';

/**
 * The --nodes inventory, which must hold at least one node: every command exits 2 on an empty one.
 * Coverage of zero nodes would report nothing but empty waves, an estimate would be 0 s and there
 * is nothing to label: almost always the wrong context or a filtered `kubectl get nodes`.
 */
export function loadInventory(file: string, cwd: string): NodeJson[] {
  const nodes = loadNodeList(file, cwd);
  if (nodes.length === 0) {
    throw new Error(`${file}: the node list is empty (no items); pass the output of \`kubectl get nodes -o json\` for the cluster (check the kubectl context)`);
  }
  return nodes;
}
