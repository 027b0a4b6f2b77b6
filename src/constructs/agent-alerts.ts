import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { rolloutExpectations } from './rollout-expectations';
import { AgentAlertsOptions, AlertRuleGroup } from '../alerts/options';
import { checkPromQL, RULE_REFUSED } from '../alerts/promql-parse';
import { renderRuleGroups, RuleGroupJson } from '../alerts/render';
import { daemonSetAlertGroup } from '../alerts/rules';
import { brand } from '../validation/brand';
import { throwIfProblems, ValidationError } from '../validation/errors';
import { builtByLibrary, registerKind } from '../validation/owner';
import { checkStruct } from '../validation/struct-check';
import { checkLabels } from '../validation/values';
import { FLEET_GROUP } from '../waves/partition';

/** Props of `AgentAlerts`. */
export interface AgentAlertsProps extends AgentAlertsOptions {
  /** The agent whose DaemonSets the alerts watch. */
  readonly agent: NodeAgentDaemonSet;

  /**
   * Names of the agent's rollout waves: the alerts cover the DaemonSets `<agent>` and `<agent>-<wave>`.
   * Give every wave of the rollout, so the rule does not change while waves are promoted.
   * @default - the waves the agent renders now
   */
  readonly waves?: string[];

  /**
   * Render the DaemonSet alerts (kube-state-metrics) every agent gets.
   * @default true
   */
  readonly daemonSetAlerts?: boolean;

  /**
   * More rule groups (the specialised agents pass their own here).
   * @default - none
   */
  readonly additionalGroups?: AlertRuleGroup[];
}

/**
 * A PrometheusRule (monitoring.coreos.com/v1) with the alerts of one node agent: its DaemonSets from
 * kube-state-metrics, summed over every rollout wave, plus any groups given. Every alert carries
 * `severity` and `node_agent` labels, the `labels` given, and `summary`, `description` and
 * `runbook_url` annotations.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/gates-watchers-alerts.md#alerts
 */
export class AgentAlerts extends Construct {
  /** The PrometheusRule object. */
  public readonly prometheusRule: ApiObject;
  /** The rule groups as rendered (the PrometheusRule's `spec.groups`). */
  public readonly ruleGroups: AlertRuleGroup[];

  private readonly renderedGroups: RuleGroupJson[];

  public constructor(scope: Construct, id: string, props: AgentAlertsProps) {
    super(scope, id);
    registerKind(this, 'AgentAlerts');
    // The agent constructs pass their own, already checked, alert options; a user's props are checked here.
    if (!builtByLibrary(this)) {
      checkStruct(this, 'AgentAlertsProps', props);
      (props.additionalGroups ?? []).forEach((g, i) => g.rules.forEach((r, j) => checkPromQL(r.expr, `additionalGroups[${i}].rules[${j}].expr`, this, RULE_REFUSED)));
    }
    const agent = props.agent;
    const waves = props.waves ?? agent.rolloutGroups.filter((g) => g !== FLEET_GROUP);
    const profiles = agent.resourceProfiles;
    const expectedSeconds = rolloutExpectations(this, agent, props.rolloutPodSeconds);
    const target = { agent: agent.name, namespace: agent.namespace, waves, by: this, expectedSeconds, ...(profiles.length > 0 ? { profiles } : {}) };
    this.ruleGroups = [
      ...(props.daemonSetAlerts ?? true ? [daemonSetAlertGroup(target, props)] : []),
      ...(props.additionalGroups ?? []),
    ];
    if (this.ruleGroups.length === 0) {
      throw new ValidationError(this, 'no alert rule groups: daemonSetAlerts is false and no additionalGroups were given');
    }
    // The PrometheusRule's labels: the API server refuses an invalid key or value.
    throwIfProblems(this, checkLabels('alerts.ruleLabels', props.ruleLabels));
    this.renderedGroups = renderRuleGroups(agent.name, this.ruleGroups, props, this);
    const name = `${agent.name}-alerts`;
    this.prometheusRule = new ApiObject(this, 'PrometheusRule', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: {
        name,
        namespace: agent.namespace,
        labels: sortedRecord({
          'app.kubernetes.io/instance': agent.name,
          'app.kubernetes.io/name': agent.name,
          'app.kubernetes.io/component': 'alerts',
          ...props.ruleLabels,
        }),
      },
      spec: { groups: this.renderedGroups },
    });
  }

  /** The rules as a Prometheus rule file (YAML-compatible JSON), e.g. for `promtool check rules`. */
  public toRuleFile(): string {
    return JSON.stringify({ groups: this.renderedGroups }, undefined, 2);
  }
}
brand(AgentAlerts, 'AgentAlerts');

function sortedRecord(record: { [key: string]: string }): { [key: string]: string } {
  const out: { [key: string]: string } = {};
  for (const key of Object.keys(record).sort()) out[key] = record[key];
  return out;
}
