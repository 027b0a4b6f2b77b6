/**
 * Alert rules as Prometheus rule-file JSON: the `spec` of a PrometheusRule, and what
 * `promtool check rules` reads. Pure module (no cdk8s); keys sorted, so output is deterministic.
 */
import { AgentAlertsOptions, AlertRuleGroup } from './options';
import { checkDuration } from './promql';
import { checkPromQL, RULE_REFUSED } from './promql-parse';
import { DEFAULT_RUNBOOK_URL } from './rules';
import { RefusedBy, throwIfProblems, ValidationError } from '../validation/errors';
import { checkRenderableKey } from '../validation/values';

/** The label every alert of an agent carries: its name, for routing and for telling agents apart. */
export const NODE_AGENT_ALERT_LABEL = 'node_agent';

export interface RuleJson {
  readonly alert: string;
  readonly annotations: { [key: string]: string };
  readonly expr: string;
  readonly for?: string;
  readonly labels: { [key: string]: string };
}

export interface RuleGroupJson {
  readonly name: string;
  readonly rules: RuleJson[];
}

const ALERT_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Rule groups with labels (severity, node_agent, the user's) and annotations (summary, description, runbook_url). */
export function renderRuleGroups(agent: string, groups: readonly AlertRuleGroup[], options: AgentAlertsOptions, by: RefusedBy): RuleGroupJson[] {
  const names = new Set<string>();
  const alerts = new Set(groups.flatMap((g) => g.rules.map((r) => r.alert)));
  for (const [prop, record] of [['alerts.runbookUrls', options.runbookUrls], ['alerts.severities', options.severities]] as const) {
    for (const alert of Object.keys(record ?? {})) {
      if (!alerts.has(alert)) {
        throw new ValidationError(by, `${prop} names "${alert}", which is not an alert of this agent; valid names are ${[...alerts].sort().join(', ')}`);
      }
    }
  }
  for (const key of Object.keys(options.labels ?? {})) {
    if (!LABEL_NAME.test(key) || key.startsWith('__')) {
      throw new ValidationError(by, `alerts.labels key "${key}" is not a Prometheus label name (letters, digits and "_", not starting with a digit or "__")`);
    }
    if (key === 'severity' || key === NODE_AGENT_ALERT_LABEL) {
      throw new ValidationError(by, `alerts.labels sets "${key}", which every alert sets itself; use alerts.severities to change a severity`);
    }
    // "constructor" is a valid Prometheus label name that cdk8s cannot render (see checkRenderableKey).
    throwIfProblems(by, checkRenderableKey('alerts.labels', key));
  }
  return groups.map((group) => {
    if (names.has(group.name)) throw new ValidationError(by, `two alert rule groups are named "${group.name}"; rename one`);
    names.add(group.name);
    return {
      name: group.name,
      rules: group.rules.map((rule) => {
        if (!ALERT_NAME.test(rule.alert)) {
          throw new ValidationError(by, `alert name "${rule.alert}" is not a Prometheus metric name; use letters, digits and "_"`);
        }
        throwIfProblems(by, Object.keys(rule.labels ?? {}).flatMap((key) => checkRenderableKey(`alert ${rule.alert} labels`, key)));
        if (rule.forDuration !== undefined) checkDuration(rule.forDuration, `for of alert ${rule.alert}`, by);
        checkPromQL(rule.expr, `alert ${rule.alert} (group "${group.name}") expr`, by, RULE_REFUSED);
        const labels = sortedRecord({
          ...rule.labels,
          ...options.labels,
          [NODE_AGENT_ALERT_LABEL]: agent,
          severity: options.severities?.[rule.alert] ?? rule.severity,
        });
        return {
          alert: rule.alert,
          annotations: sortedRecord({
            description: rule.description,
            runbook_url: options.runbookUrls?.[rule.alert] ?? options.runbookUrl ?? DEFAULT_RUNBOOK_URL,
            summary: rule.summary,
          }),
          expr: rule.expr,
          ...(rule.forDuration !== undefined ? { for: rule.forDuration } : {}),
          labels,
        };
      }),
    };
  });
}

function sortedRecord(record: { [key: string]: string }): { [key: string]: string } {
  const out: { [key: string]: string } = {};
  for (const key of Object.keys(record).sort()) out[key] = record[key];
  return out;
}
