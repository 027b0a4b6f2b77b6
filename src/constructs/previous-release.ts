/**
 * Releases of the agent constructs built on NodeAgentDaemonSet. A release is that construct's own
 * props; its NodeAgentDaemonSet props come from building the construct with them in a scratch app
 * (never synthesized), so the previous version is derived, and checked, by the very code that
 * derives the current one.
 */
import { App, Chart } from 'cdk8s';
import { Construct } from 'constructs';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import type { NodeAgentDaemonSetProps } from '../agent/props';
import { AgentRelease, ReleaseContext } from '../agent/release';
import { AgentRollout } from '../agent/rollout';
import { ValidationError } from '../validation/errors';
import { kindOf } from '../validation/owner';

/** The id of the scratch chart a previous release is built in; it shows in that release's errors. */
const SCRATCH_CHART = 'rollout.previous';

/** A release of `kind`, whose construct `build` creates in the scope and id given. */
export function constructRelease(kind: string, build: (scope: Construct, id: string) => { readonly agent: NodeAgentDaemonSet }): AgentRelease {
  return AgentRelease._of(kind, (context: ReleaseContext): NodeAgentDaemonSetProps => {
    const chart = new Chart(new App(), SCRATCH_CHART, { namespace: context.chartNamespace });
    return build(chart, context.id).agent._props;
  });
}

/**
 * The rollout prop for the construct's NodeAgentDaemonSet: `previous` turned into the props of
 * that NodeAgentDaemonSet, and no gates (the construct renders them). Refuses a release of another construct kind, and reports the previous
 * release's own errors under this construct's path.
 */
export function agentRollout(scope: Construct, rollout: AgentRollout | undefined): AgentRollout | undefined {
  // The agent construct renders the gates itself, with its own kind's checks.
  const previous = rollout?.previous;
  if (!rollout || !previous) return rollout ? { ...rollout, gates: undefined } : undefined;
  const kind = kindOf(scope);
  if (previous.kind !== kind) {
    throw new ValidationError(scope, `rollout.previous was made by ${previous.kind === 'NodeAgentDaemonSet' ? 'AgentRelease.fromProps' : `${previous.kind}.release`}(); `
      + `a ${kind}'s previous release is ${kind}.release(previousProps), with the props the previous version gave this construct`);
  }
  let props: NodeAgentDaemonSetProps;
  try {
    props = previous._agentProps({ id: scope.node.id, chartNamespace: Chart.of(scope).namespace });
  } catch (e) {
    // The scratch construct's own prefix goes; paths below it read as this construct's.
    const message = (e as Error).message
      .replace(`${kind} ${SCRATCH_CHART}/${scope.node.id}: `, '')
      .split(`${SCRATCH_CHART}/${scope.node.id}`).join(scope.node.path);
    throw new ValidationError(scope, `rollout.previous: ${message}`);
  }
  return { ...rollout, gates: undefined, previous: AgentRelease.fromProps(props) };
}
