/**
 * A rollout walked step by step for the readiness taint suites: at each step, `plan`'s readiness taint findings and
 * the nodes the model (test/util/taint-model.ts) leaves closed after it.
 */
import { Chart, Testing } from 'cdk8s';
import { Manifest, synthManifests } from './manifests';
import { inventory, TestNode, tree, WAVE_KEY } from './plan';
import { closedNodes, ModelNode } from './taint-model';
import { NodeAgentDaemonSet, NodeAgentDaemonSetProps, Promotion, RolloutWave } from '../../src';
import { ManifestSet } from '../../src/cli/coverage/manifests';
import { Finding } from '../../src/cli/plan/finding';
import { planChange } from '../../src/cli/plan/plan';

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

/** A new agent's tree, installed wave by wave: only the groups `promoted` names are rendered. */
export function freshInstall(props: NodeAgentDaemonSetProps, waves: RolloutWave[], promoted: Promotion): WalkStage {
  const chart = new Chart(Testing.app(), 'new');
  new NodeAgentDaemonSet(chart, 'scanner', { ...props, rollout: { waves, promoted } });
  const manifests = synthManifests(chart);
  return { manifests, set: tree(manifests) };
}

/** The tree before the agent is installed. */
export const EMPTY_STAGE: WalkStage = { manifests: [], set: tree([]) };
