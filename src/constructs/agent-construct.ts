/**
 * The steps every specialised agent construct (log collector, node exporter, GPU driver) takes, written
 * once: it starts by registering its kind and checking its props' types, builds its NodeAgentDaemonSet
 * from its own props, its defaults and its config (its rendered objects checked at synthesis by
 * render/late-checks.ts), and ends with its alerts and its rollout's gate Jobs. Each agent's file holds only what is particular to it.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { AgentAlerts } from './agent-alerts';
import { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { rolloutExpectations } from './rollout-expectations';
import { KindGateChecks, renderWaveGates } from './wave-gates';
import { AgentRollout } from '../agent/rollout';
import { AgentAlertsOptions, AlertRuleGroup } from '../alerts/options';
import { AlertTarget, daemonSetAlertGroup } from '../alerts/rules';
import { registerKind } from '../validation/owner';
import { checkStruct } from '../validation/struct-check';

/**
 * First step of an agent construct's constructor: records its kind (so errors raised by the constructs
 * it builds name it) and checks its props against their struct.
 */
export function startAgentConstruct(construct: Construct, kind: string, struct: string, props: unknown): void {
  registerKind(construct, kind);
  // Types first (JavaScript callers, props from parsed YAML): a message instead of a TypeError.
  checkStruct(construct, struct, props);
}

/** What an agent construct's alerts and gates are made of. */
export interface AgentFinish<A extends AgentAlertsOptions> {
  readonly agent: NodeAgentDaemonSet;
  readonly rollout?: AgentRollout;
  /** The alerts the user asked for, with the agent's defaults applied. */
  readonly alerts?: A;
  /** The agent's own rule groups, after the DaemonSet group every agent has. */
  readonly alertGroups: (target: AlertTarget, alerts: A) => AlertRuleGroup[];
  /** The agent's own checks in each wave's gate Job. */
  readonly gateChecks: KindGateChecks;
}

/** Last step of an agent construct's constructor: its alerts (if asked for) and the gate Jobs of its rollout. */
export function finishAgentConstruct<A extends AgentAlertsOptions>(
  construct: Construct, f: AgentFinish<A>,
): { alerts?: AgentAlerts; gates: ApiObject[] } {
  let alerts: AgentAlerts | undefined;
  if (f.alerts) {
    const waves = f.rollout?.waves.map((w) => w.name);
    const profiles = f.agent.resourceProfiles;
    const target = {
      agent: f.agent.name, namespace: f.agent.namespace, waves: waves ?? [], by: construct, ...(profiles.length > 0 ? { profiles } : {}),
    };
    alerts = new AgentAlerts(construct, 'Alerts', {
      ...f.alerts,
      agent: f.agent,
      waves,
      daemonSetAlerts: false,
      additionalGroups: [
        daemonSetAlertGroup({ ...target, expectedSeconds: rolloutExpectations(construct, f.agent, f.alerts.rolloutPodSeconds) }, f.alerts),
        ...f.alertGroups(target, f.alerts),
      ],
    });
  }
  return { alerts, gates: renderWaveGates(construct, f.agent, f.rollout, f.gateChecks) };
}
