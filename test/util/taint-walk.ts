/**
 * A rollout walked step by step for the readiness taint suites: at each step, `plan`'s readiness taint findings and
 * the nodes the model (test/util/taint-model.ts) leaves closed after it.
 */
import { Manifest } from './manifests';
import { inventory, TestNode, WAVE_KEY } from './plan';
import { closedNodes, ModelNode } from './taint-model';
import { ManifestSet } from '../../src/coverage/manifests';
import { Finding, planChange } from '../../src/plan/plan';

/** One stage's tree, as plan reads it, and its manifests, as the model reads them. */
export interface WalkStage {
  readonly manifests: Manifest[];
  readonly set: ManifestSet;
}

/** The inventory's nodes as the model reads them. */
export function modelNodes(nodes: readonly TestNode[]): ModelNode[] {
  return nodes.map((n) => ({
    name: n.name,
    labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': n.name, ...(n.wave ? { [WAVE_KEY]: n.wave } : {}), ...n.labels },
    taints: n.taints ?? [],
  }));
}

export const readinessFindings = (findings: readonly Finding[]) => findings.filter((f) => f.cause.startsWith('readiness-taint'));
export const summary = (f: Finding) => [f.cause, f.severity, [...f.daemonSets], [...f.nodes]];

/** Every step of a sequence: plan's readiness taint findings, and the nodes the model says stay closed after it. */
export function walk(stages: readonly WalkStage[], nodes: readonly TestNode[]) {
  const facts = inventory(nodes);
  return stages.slice(1).map((after, i) => {
    const report = planChange(stages[i].set, after.set, facts);
    return { findings: readinessFindings(report.findings), all: report.findings, closed: closedNodes(modelNodes(nodes), after.manifests) };
  });
}
