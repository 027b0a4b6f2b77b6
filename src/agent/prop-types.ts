/**
 * The type checks of the node agent's props. The shapes come from the jsii assembly (see
 * ./struct-check): there is no second, hand-written description of the props to keep in step.
 */
import { throwIfProblems } from './checks';
import { checkStruct, typeProblems } from './struct-check';

export { throwIfProblems } from './checks';
export { checkArgs, checkStruct, propsProblems, structProblems, typeProblems } from './struct-check';

/**
 * Checks NodeAgentDaemonSetProps (and its rollout) for wrong types and unknown keys; throws an
 * Error starting with `where` ("NodeAgentDaemonSet <path>") naming every such prop.
 */
export function checkAgentPropTypes(where: string, props: unknown): void {
  checkStruct(where, 'NodeAgentDaemonSetProps', props);
}

/** Checks an AgentRollout alone (a construct's `rollout` prop); problems name `rollout.…`. */
export function checkRolloutPropTypes(where: string, rollout: unknown): void {
  throwIfProblems(where, typeProblems('rollout', rollout, { ref: 'AgentRollout' }));
}
