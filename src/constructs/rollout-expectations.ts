import { ApiObject } from 'cdk8s';
import { IConstruct } from 'constructs';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { checkNumber } from '../alerts/promql';
import { AlertTarget } from '../alerts/rules';
import { expectedSecondsPromQL, UpdateStrategyJson } from '../rollout/pace';

/**
 * Each rendered DaemonSet's expected rollout time as PromQL of its desired count, from its rendered update strategy and
 * minReadySeconds through estimate's model (expectedSecondsPromQL), for NodeAgentRolloutOverdue. OnDelete DaemonSets
 * have none; `by` refuses a bad alerts.rolloutPodSeconds (the construct the user built). Read from the DaemonSets as rendered so far (a JSON patch added later to the strategy is not seen).
 */
export function rolloutExpectations(by: IConstruct, agent: NodeAgentDaemonSet, podSeconds: number | undefined): AlertTarget['expectedSeconds'] {
  // one pod's replacement: at least a second (a rollout expected to take no time would be overdue at once)
  if (podSeconds !== undefined) checkNumber(podSeconds, 'alerts.rolloutPodSeconds', by, 1, 86_400);
  // every DaemonSet of the agent: one per rollout group, and with resource profiles one per profile and group
  return agent.daemonSets.flatMap((ds) => {
    const object = ApiObject.of(ds);
    const spec = object.toJson().spec ?? {};
    const raw = spec.updateStrategy ?? {};
    const strategy: UpdateStrategyJson = raw.type === 'OnDelete' ? { type: 'OnDelete' }
      : { type: 'RollingUpdate', maxUnavailable: raw.rollingUpdate?.maxUnavailable, maxSurge: raw.rollingUpdate?.maxSurge };
    const minReady = typeof spec.minReadySeconds === 'number' ? spec.minReadySeconds : 0;
    if (expectedSecondsPromQL(strategy, minReady, 'x', podSeconds) === undefined) return [];
    const expr = (desired: string) => expectedSecondsPromQL(strategy, minReady, desired, podSeconds)!;
    return [{ daemonSet: object.name, expr }];
  });
}
