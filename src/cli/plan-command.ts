import { flag, listValue, parse, requiredString, secondsValue, stringValue, UsageError } from './args';
import { CapacityFinding } from './capacity/check';
import { controlPlaneAtLeast } from './capacity/pod-level';
import { shutdownOrderFindings } from './capacity/shutdown-order';
import { capacityGate, COST_FLAG_HELP, costMarkdown, costText, KUBERNETES_VERSION_OPTION, loadPods, planCapacity, planCost, PODS_FLAG_HELP } from './capacity-hooks';
import { fitComment } from './comment';
import { analyzeCoverage } from './coverage/analysis';
import { loadManifests } from './coverage/load';
import { ManifestSet } from './coverage/manifests';
import { nodeFacts } from './coverage/nodes';
import { plural, shortList, table } from './format';
import { loadInventory } from './inventory';
import type { CliIo } from './io';
import { capPerKind } from './limits';
import { NODEPOOL_OPTIONS, nodePoolCheck, nodePoolFlags, nodePoolMarkdown, NODEPOOLS_FLAG_HELP, nodePoolText } from './nodepool-hooks';
import { DEFAULT_POD_SECONDS, formatDuration, Pace } from '../rollout/pace';
import { REPLACEMENTS_COUNTED_SINCE } from './estimate/rollout-model';
import { Finding } from './plan/finding';
import { AgentPlan, DaemonSetPlan, DaemonSetRolloutPlan, planChange, PlanReport } from './plan/plan';
import { markdownCode, markdownEscape, markdownHtmlEscape, terminalSafe } from '../util/output-escape';

export const PLAN_HELP = `Usage: node-agents plan --nodes NODES.json --before TREE --after TREE [flags]
       node-agents plan --nodes NODES.json --stages TREE TREE... [flags]

What applying a change of synthesized manifests does on every node, before it merges: a TREE is a
manifest file or directory (a cdk8s dist/, never the TypeScript that synthesizes it), e.g. the main
branch's and the pull request's. The
before-tree is taken as running; the DaemonSet controller and the scheduler are simulated on the
inventory with the coverage semantics (nodeSelector, affinity, taints and the controller's own
tolerations, host ports, pod anti-affinity), the update pace as \`estimate\` computes it
(maxUnavailable / maxSurge, percentages rounded up), minReadySeconds and the pod cycle.

Per agent: the DaemonSets created, changed and deleted; the nodes whose pod is replaced, moves to
another DaemonSet (a wave relabel), comes or goes, and the untouched ones; the batches in order and
the expected time. OnDelete DaemonSets replace nothing until their pods are deleted.

Findings (exit code 1), for the agents the change touches:
  two-pods-per-node   a node running two pods of one agent: a move between DaemonSets that no
                      anti-affinity (or shared host port) holds back, or two DaemonSets covering it,
                      or two agents running the same image on it (a chart's DaemonSet left beside)
  never-starts        a pod Pending for good: host port taken, pod anti-affinity, untolerated taint;
                      on new nodes, an agent not tolerating another agent's readiness taint, or a
                      readiness taint no agent removes any more while node pools still set it
                      (acknowledge with node-agents.cdk8s.io/retired-readiness-taints: KEY); a rollout
                      part way through enabling or dropping a readiness taint: held groups of a
                      release without it (readiness-taint-held) or promoted groups of one that
                      dropped it (readiness-taint-dropped), an error when nodes of theirs carry it or
                      the tree's NodePools list it; nodes carrying it that no DaemonSet of the agent
                      selects (readiness-taint-uncovered)
  stall               a rollout that stops or is not gated: NotReady or unreachable nodes
                      filling the update budget (a tolerated one's new pod never turns
                      available; an untolerated unreachable one's deleted pod stays Terminating),
                      or any under an Argo CD sync wave a later wave waits on (in the last
                      wave: a warning, Argo CD does not wait for it), an Argo CD sync wave
                      with zero nodes, OnDelete under sync waves, a strategy the API server
                      rejects or whose maxSurge deadlocks (host port, anti-affinity against its
                      own pods, an extended resource the node holds once), a changed spec.selector
                      (immutable: the update is rejected); a Ready=False node read as a live
                      kubelet is a warning naming that assumption
  loses-agent         nodes losing an agent that stays on other nodes: a DaemonSet of it deleted
                      (e.g. rollout.previous dropped before every wave is promoted) or narrowed;
                      a warning when acknowledged (--allow-narrowing), and while an untolerated
                      NotReady node's old pod is deleted by the rolling update
  held-wave-restart   a rollout group restarting with a release no promotion names, or a new
                      release reaching the first wave and later ones in one change: an error when
                      nothing orders them (no Argo CD sync waves), a warning with sync waves but no
                      gate (acknowledge with --allow-restart)
  missing-reference   a ConfigMap (or a Secret the before-tree had) the after-tree lacks;
                      a Secret neither tree holds is a warning (it may be created outside Git)
A finding the before-tree has too (same DaemonSets, same nodes) is a warning: the change does not
cause it (\`coverage\` reports the standing state).

Flags:
  --nodes FILE        node inventory: \`kubectl get nodes -o json\` output (required)
  --before TREE       the manifests running now
  --after TREE        the manifests after the change
  --stages TREE...    a sequence of trees, planned step by step (instead of --before/--after)
  --pod-seconds N     one pod's cycle: image pull + start + ready + old pod termination
                      (default ${DEFAULT_POD_SECONDS}, as in estimate)
  --allow-narrowing AGENT  the change takes AGENT off nodes on purpose: its loses-agent
                      findings are warnings (repeatable; or annotate a DaemonSet of the
                      agent node-agents.cdk8s.io/narrowing-acknowledged: "true"; an agent
                      removed altogether: node-agents.cdk8s.io/removed-agents on any object)
  --allow-restart AGENT  the change restarts or moves AGENT's pods outside a promotion on
                      purpose (waves reordered, added, dropped, enabled): those held-wave-restart
                      findings are warnings (repeatable; or annotate a DaemonSet of the agent
                      node-agents.cdk8s.io/restart-acknowledged: "true"); an AGENT no DaemonSet
                      of the trees belongs to is a usage error (exit 2)
${PODS_FLAG_HELP}                      shutdown-order: a workload on a node of the log collector taking longer
                      to stop than the collector's grace period (a warning)
${COST_FLAG_HELP}${NODEPOOLS_FLAG_HELP}  --markdown          a pull request comment: a summary table first, details folded
  --json              the plan as JSON (schema in the README)
  -h, --help          this help

Exit codes: 0 safe, 1 findings, 2 bad usage or input.
Example: node-agents plan --nodes nodes.json --before main/dist --after dist
`;

const OPTIONS = {
  'nodes': { type: 'string' },
  'before': { type: 'string' },
  'after': { type: 'string' },
  'stages': { type: 'string', multiple: true },
  'pod-seconds': { type: 'string' },
  'allow-narrowing': { type: 'string', multiple: true },
  'allow-restart': { type: 'string', multiple: true },
  'markdown': { type: 'boolean' },
  'json': { type: 'boolean' },
  'pods': { type: 'string' },
  ...KUBERNETES_VERSION_OPTION,
  'cost': { type: 'boolean' },
  ...NODEPOOL_OPTIONS,
  'help': { type: 'boolean', short: 'h' },
} as const;

/** One planned step: the two trees as given on the command line. */
export interface PlanStep {
  readonly before: string;
  readonly after: string;
  readonly report: PlanReport;
}

export function planCommand(argv: readonly string[], io: CliIo): number {
  const parsed = parse('plan', argv, OPTIONS, true);
  if (flag(parsed, 'help')) {
    io.stdout.write(PLAN_HELP);
    return 0;
  }
  const nodesFile = requiredString(parsed, 'plan', 'nodes', 'the node inventory (kubectl get nodes -o json > nodes.json)');
  const before = stringValue(parsed, 'before');
  const after = stringValue(parsed, 'after');
  const stagesGiven = parsed.values.stages !== undefined;
  // `--stages a b c`: the first tree is the flag's value, the others follow as arguments (a shell glob works)
  const stages = [...listValue(parsed, 'stages'), ...(stagesGiven ? parsed.positionals : [])];
  if (!stagesGiven && parsed.positionals.length > 0) {
    throw new UsageError(`unexpected argument "${parsed.positionals[0]}"; give the trees with --before and --after, or a sequence with --stages`, 'plan');
  }
  if (stagesGiven && (before !== undefined || after !== undefined)) {
    throw new UsageError('--stages plans a sequence of trees: give either it or --before and --after', 'plan');
  }
  if (!stagesGiven && (before === undefined || after === undefined)) {
    const missing = before === undefined && after === undefined ? '--before and --after are' : before === undefined ? '--before is' : '--after is';
    throw new UsageError(`${missing} required: the manifests running now and after the change (files or directories), or --stages TREE TREE...`, 'plan');
  }
  if (stagesGiven && stages.length < 2) {
    throw new UsageError(`--stages ${stages.join(' ')}: give at least two trees, in rollout order`, 'plan');
  }
  if (flag(parsed, 'markdown') && flag(parsed, 'json')) throw new UsageError('--markdown and --json: give one output format', 'plan');
  const podSeconds = secondsValue(parsed, 'plan', 'pod-seconds') ?? DEFAULT_POD_SECONDS;
  const allowNarrowing = listValue(parsed, 'allow-narrowing');
  const allowRestart = listValue(parsed, 'allow-restart');
  const poolFlags = nodePoolFlags(parsed, 'plan');

  const inventory = loadInventory(nodesFile, io.cwd);
  const nodes = nodeFacts(inventory);
  const podsFile = stringValue(parsed, 'pods');
  const gate = capacityGate(inventory, stringValue(parsed, 'kubernetes-version'), 'plan');
  const pods = podsFile === undefined ? undefined : loadPods(podsFile, io.cwd, gate);
  const replacementsCounted = controlPlaneAtLeast(inventory, stringValue(parsed, 'kubernetes-version'), REPLACEMENTS_COUNTED_SINCE);
  const trees = stagesGiven ? stages : [before!, after!];
  const loaded: ManifestSet[] = trees.map((tree) => loadManifests([tree], io.cwd));
  if (loaded.every((set) => set.daemonSets.length === 0)) {
    throw new Error(`no DaemonSet in ${trees.join(', ')}; pass the synthesized manifests of your node agents`);
  }
  checkAllowedAgents('allow-restart', allowRestart, loaded);
  const steps: PlanStep[] = [];
  let lastCapacity: Finding[] | undefined;
  // each tree's coverage is computed once: a step's after-tree is the next step's before-tree, and --pods and
  // --cost read the same coverage the plan does
  const firstCoverage = analyzeCoverage(loaded[0].daemonSets, nodes);
  let beforeCoverage = firstCoverage;
  for (let i = 1; i < trees.length; i++) {
    const afterCoverage = analyzeCoverage(loaded[i].daemonSets, nodes);
    const coverage = { before: beforeCoverage, after: afterCoverage };
    const unavailable = pods?.unavailableDaemonPods;
    const options = { podSeconds, allowNarrowing, allowRestart, coverage, unavailable, replacementsCounted };
    const report = planChange(loaded[i - 1], loaded[i], nodes, options);
    // --pods: will the new pods fit (src/capacity); its findings join the plan's
    // and does the collector outlive the workloads on its nodes (src/cli/capacity/shutdown-order.ts)
    const capacity = pods === undefined ? [] : [...planCapacity(loaded[i - 1], loaded[i], nodes, pods, afterCoverage),
      ...shutdownOrderFindings(loaded[i], afterCoverage, pods)] as Finding[];
    lastCapacity = pods === undefined ? undefined : capacity;
    const withCapacity = capacity.length === 0 ? report : { ...report, findings: [...report.findings, ...capacity] };
    steps.push({ before: trees[i - 1], after: trees[i], report: withCapacity });
    beforeCoverage = afterCoverage;
  }
  const cost = flag(parsed, 'cost') ? [{ label: `before (${trees[0]})`, rows: planCost(loaded[0], nodes, inventory, firstCoverage, gate.enabled) },
    { label: `after (${trees[trees.length - 1]})`, rows: planCost(loaded[loaded.length - 1], nodes, inventory, beforeCoverage, gate.enabled) }] : undefined;

  // --nodepools: the after-tree's agents on the nodes the pools would launch (and on their nodes today)
  const pools = poolFlags === undefined ? undefined : nodePoolCheck(poolFlags, io.cwd, {
    tree: loaded[loaded.length - 1],
    before: loaded[loaded.length - 2],
    inventory,
    coverage: beforeCoverage,
    capacity: lastCapacity as CapacityFinding[] | undefined,
    podLevel: gate.enabled,
  });
  const withCost = flag(parsed, 'cost');
  if (flag(parsed, 'json')) {
    io.stdout.write(cost === undefined && pools === undefined ? planJson(steps)
      : JSON.stringify({ ...JSON.parse(planJson(steps)), ...(cost ? { cost } : {}), ...(pools ? { nodePools: pools } : {}) }, null, 2) + '\n');
  } else if (flag(parsed, 'markdown')) {
    io.stdout.write(fitComment(planMarkdown(steps) + (cost === undefined ? '' : costMarkdown(cost)) + (pools === undefined ? '' : nodePoolMarkdown(pools, withCost))));
  } else {
    io.stdout.write(planText(steps) + (cost === undefined ? '' : costText(cost)) + (pools === undefined ? '' : nodePoolText(pools, withCost)));
  }
  const poolErrors = (pools?.findings ?? []).some((f) => f.severity === 'error');
  return poolErrors || steps.some((s) => s.report.findings.some((f) => f.severity === 'error')) ? 1 : 0;
}

/**
 * An acknowledgement flag naming an agent no DaemonSet of the trees belongs to acknowledges nothing (a typo, or
 * the DaemonSet's name instead of its agent's): a usage error naming it and the agents the trees have.
 */
function checkAllowedAgents(name: string, given: readonly string[], trees: readonly ManifestSet[]): void {
  const agents = new Set(trees.flatMap((tree) => tree.daemonSets.map((d) => d.agent)));
  const unknown = [...new Set(given)].filter((agent) => !agents.has(agent));
  if (unknown.length === 0) return;
  const known = [...agents].sort();
  const list = (names: readonly string[]) => names.slice(0, 20).map((n) => `"${terminalSafe(n)}"`).join(', ') + (names.length > 20 ? `, … ${names.length - 20} more` : '');
  throw new UsageError(`--${name} ${list(unknown)}: no DaemonSet of the trees belongs to ${unknown.length === 1 ? 'that agent' : 'those agents'} `
    + `(app.kubernetes.io/name); the trees have the agent${known.length === 1 ? '' : 's'} ${list(known)}`, 'plan');
}

/** The JSON document (schema in the README): one entry per step, `--before/--after` being one step. */
export function planJson(steps: readonly PlanStep[]): string {
  return JSON.stringify({
    podSeconds: steps[0].report.podSeconds,
    nodes: steps[0].report.nodes,
    safe: steps.every((s) => s.report.findings.every((f) => f.severity !== 'error')),
    steps: steps.map((s) => ({
      before: s.before,
      after: s.after,
      safe: s.report.findings.every((f) => f.severity !== 'error'),
      agents: s.report.agents,
      findings: s.report.findings,
      ...(s.report.prePulls.length > 0 ? { prePulls: s.report.prePulls } : {}),
    })),
  }, null, 2) + '\n';
}

function changed(agent: AgentPlan): boolean {
  return agent.daemonSets.some((d) => d.change !== 'unchanged') || agent.moved.length + agent.gained.length + agent.lost.length > 0;
}

function paceText(pace: Pace): string {
  if (pace.type === 'OnDelete') return 'OnDelete';
  return pace.mode === 'surge' ? `maxSurge ${pace.maxSurge}` : `maxUnavailable ${pace.maxUnavailable}`;
}

/** `1.12.1` and `v1.12.1` are one version (charts label without the "v", image tags often carry it). */
function sameVersion(a: string | undefined, b: string | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.replace(/^v(?=\d)/, '') === b.replace(/^v(?=\d)/, ''));
}

function versionText(ds: DaemonSetPlan): string {
  if (sameVersion(ds.versionBefore, ds.versionAfter)) return ds.versionAfter ?? '-';
  return `${ds.versionBefore ?? '-'} -> ${ds.versionAfter ?? '-'}`;
}

function changeText(ds: DaemonSetPlan): string {
  return ds.change === 'changed' && !ds.podTemplateChanged ? 'changed (no pod restart)' : ds.change;
}

function batchText(ds: DaemonSetPlan): string {
  const r = ds.rollout!;
  if (r.pace.type === 'OnDelete') return `${ds.id}: ${r.note}`;
  const sizes = batchRuns(r);
  const time = r.seconds === undefined ? 'no automatic rollout' : formatDuration(r.seconds);
  // the pod cycle includes the old pod's termination; its grace period is how long that may take at worst
  const grace = r.terminationGracePeriodSeconds === undefined ? '' : ` (old pod's grace period up to ${formatDuration(r.terminationGracePeriodSeconds)})`;
  return `${ds.id}: ${sizes} (${paceText(r.pace)}), ${formatDuration(r.cycleSeconds)} each${grace}: ${time}${r.note !== undefined ? `; ${r.note}` : ''}`;
}

/**
 * `4 batches of 4, then 1 of 3`; `1 batch of 30, then 9 batches of 2`: the first batch (the old pods not available
 * go in it, outside the budget), the batches of the budget after it, the last.
 */
function batchRuns(r: DaemonSetRolloutPlan): string {
  const later = r.batches - (r.firstBatchSize > 0 ? 1 : 0);
  const sizes = [
    ...(r.firstBatchSize > 0 ? [r.firstBatchSize] : []),
    ...Array<number>(Math.max(0, later - 1)).fill(r.batchSize),
    ...(later > 0 ? [r.lastBatchSize] : []),
  ];
  if (sizes.length === 0) return `0 batches of ${r.batchSize}`;
  const runs: [number, number][] = [];
  for (const size of sizes) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last[1] === size) last[0]++;
    else runs.push([1, size]);
  }
  return runs.map(([count, size], i) => (i === 0 ? `${count} batch${count === 1 ? '' : 'es'} of ${size}` : `then ${count === 1 ? '1' : `${count} batches`} of ${size}`)).join(', ');
}

/** A one-line summary of what an agent's nodes go through. */
function nodeSummary(agent: AgentPlan): string {
  const parts = [
    agent.replaced.length > 0 ? `${agent.replaced.length} replaced` : '',
    agent.moved.length > 0 ? `${agent.moved.length} moved` : '',
    agent.gained.length > 0 ? `${agent.gained.length} gain the agent` : '',
    agent.lost.length > 0 ? `${agent.lost.length} lose it` : '',
    `${agent.untouched} untouched`,
  ].filter((p) => p !== '');
  return parts.join(', ');
}

/** How the agent's DaemonSets roll: in parallel, or one sync wave after the other (gated after which waves). */
function rolloutOrder(agent: AgentPlan): string {
  if (!agent.sequential) return ', DaemonSets in parallel';
  const gated = agent.gates.map((g) => g.afterWave).filter((w): w is string => w !== undefined);
  return gated.length > 0
    ? `, waves one after the other (Argo CD sync waves), gated after ${gated.join(', ')}: a failed gate stops the later waves`
    : ', waves one after the other (Argo CD sync waves, each once the one before is Healthy; no gate)';
}

function timeText(agent: AgentPlan): string {
  if (!changed(agent) && agent.replaced.length === 0) return 'nothing happens';
  const manual = agent.manual.length > 0 ? `; ${plural(agent.manual.length, 'DaemonSet')} with no automatic rollout (${agent.manual.join(', ')})` : '';
  const how = agent.daemonSets.filter((d) => d.rollout !== undefined).length > 1 ? rolloutOrder(agent) : '';
  const gates = agent.gateSeconds > 0 ? `, including ${agent.gates.length === 1 ? 'the gate\'s bake' : `${agent.gates.length} gates' bakes`} (${formatDuration(agent.gateSeconds)})` : '';
  return `expected ${formatDuration(agent.seconds)}${how}${gates}${manual}`;
}

function nodeMoves(agent: AgentPlan, list: (names: readonly string[]) => string = (names) => shortList(names.map(terminalSafe), 8), arrow = '->',
  text: (s: string) => string = terminalSafe): string[] {
  const lines: string[] = [];
  const group = <T extends { node: string }>(items: readonly T[], key: (item: T) => string) => {
    const map = new Map<string, string[]>();
    for (const item of items) {
      const names = map.get(key(item));
      if (names === undefined) map.set(key(item), [item.node]);
      else names.push(item.node);
    }
    return [...map.entries()];
  };
  const markdown = text !== terminalSafe;
  const word = (w: string) => (markdown ? w[0].toUpperCase() + w.slice(1) : w);
  for (const [key, names] of group(agent.moved, (m) => `${m.from} ${arrow} ${m.to}`)) lines.push(`${word('moved')} ${text(key)}: ${list(names)}`);
  for (const [key, names] of group(agent.gained, (g) => g.to)) lines.push(`${word('gain')} the agent (${text(key)}): ${list(names)}`);
  for (const [key, names] of group(agent.lost, (l) => l.from)) lines.push(`${word('lose')} the agent (${text(key)} no longer covers them): ${list(names)}`);
  return lines;
}

function findingLines(finding: Finding): string {
  const mark = finding.severity === 'error' ? '!' : '~';
  const t = terminalSafe;
  return `${mark} [${t(finding.kind)}${finding.cause ? ` ${t(finding.cause)}` : ''}] ${t(finding.message)}\n    fix: ${t(finding.fix)}\n`;
}

/** The terminal text: every value from the input through terminalSafe (a name never writes a line of its own). */
export function planText(steps: readonly PlanStep[]): string {
  const t = terminalSafe;
  let out = '';
  for (const step of steps) {
    const report = step.report;
    if (out !== '') out += '\n';
    out += `Plan: ${t(step.before)} -> ${t(step.after)} on ${plural(report.nodes, 'node')} (pod cycle ${formatDuration(report.podSeconds)} + each DaemonSet's minReadySeconds)\n`;
    for (const agent of report.agents) {
      out += `\n${t(agent.agent)}: ${nodeSummary(agent)}; ${t(timeText(agent))}\n`;
      if (!changed(agent)) continue;
      out += table(['DAEMONSET', 'GROUP', 'CHANGE', 'VERSION', 'NODES', 'REPLACED', 'PACE'], agent.daemonSets.map((d) => [
        t(d.id), t(d.rolloutGroup ?? '-'), changeText(d), t(versionText(d)), d.nodesBefore === d.nodesAfter ? String(d.nodesAfter) : `${d.nodesBefore} -> ${d.nodesAfter}`,
        String(d.replaced.length), d.rollout === undefined ? '-' : paceText(d.rollout.pace),
      ]), '  ');
      for (const d of agent.daemonSets.filter((x) => x.rollout !== undefined)) {
        out += `  replaced by ${t(d.id)}: ${shortList(d.replaced.map(t), 8)}\n  batches ${t(batchText(d))}\n`;
      }
      for (const line of nodeMoves(agent)) out += `  ${line}\n`;
    }
    for (const p of report.prePulls ?? []) {
      out += `\nimage pre-pull ${t(p.id)} (for ${t(p.for)}, ${t(p.image)}): ${p.change}; pulls only, no agent pod moves\n`;
    }
    const errors = report.findings.filter((f) => f.severity === 'error').length;
    const warnings = report.findings.length - errors;
    if (report.findings.length === 0) {
      out += '\nNo findings: safe to apply.\n';
    } else {
      out += `\nFINDINGS (${plural(errors, 'error')}, ${plural(warnings, 'warning')})\n`;
      const { shown, hidden } = capPerKind(report.findings, (f) => `${f.kind} ${f.severity}`);
      for (const finding of shown) out += findingLines(finding);
      for (const [kind, count] of hidden) out += `${kind.endsWith('error') ? '!' : '~'} … ${plural(count, `more ${kind}`, `more ${kind}s`)} (all in --json)\n`;
    }
  }
  return out;
}

/** Node names for a markdown cell or line: each escaped (markdownCode), so a name never breaks the table. */
function mdList(names: readonly string[], max = 20): string {
  return names.length <= max ? names.map(markdownCode).join(', ')
    : `${names.slice(0, max).map(markdownCode).join(', ')}, … ${names.length - max} more`;
}

/**
 * The pull-request comment. Every value from the trees, the inventory or the command line goes
 * through `markdownEscape` (or `markdownCode`): a name cannot end a code span, a table cell or a
 * line, add HTML, or mention anyone; only this function's own markup structures the comment.
 */
export function planMarkdown(steps: readonly PlanStep[]): string {
  const md = markdownEscape;
  let out = '';
  for (const step of steps) {
    const report = step.report;
    const errors = report.findings.filter((f) => f.severity === 'error');
    const warnings = report.findings.filter((f) => f.severity === 'warning');
    if (out !== '') out += '\n';
    out += `### node-agents plan: ${markdownCode(step.before)} → ${markdownCode(step.after)}\n\n`;
    out += errors.length === 0 ? `**Safe**: no findings on ${plural(report.nodes, 'node')}${warnings.length > 0 ? ` (${plural(warnings.length, 'warning')})` : ''}.\n\n`
      : `**${plural(errors.length, 'finding')}** on ${plural(report.nodes, 'node')}${warnings.length > 0 ? ` (and ${plural(warnings.length, 'warning')})` : ''}.\n\n`;
    out += '| agent | DaemonSets changed | replaced | moved | gain | lose | untouched | time |\n|---|---:|---:|---:|---:|---:|---:|---|\n';
    for (const agent of report.agents) {
      const touched = agent.daemonSets.filter((d) => d.change !== 'unchanged').length;
      out += `| ${md(agent.agent)} | ${touched} of ${agent.daemonSets.length} | ${agent.replaced.length} | ${agent.moved.length} | ${agent.gained.length} | ${agent.lost.length} | ${agent.untouched} | ${md(timeText(agent))} |\n`;
    }
    const { shown, hidden } = capPerKind(report.findings, (f) => `${f.kind} ${f.severity}`);
    for (const finding of shown) {
      out += `\n- ${finding.severity === 'error' ? '❌' : '⚠️'} **${md(finding.kind)}** (${md(finding.cause)}): ${md(finding.message)}  \n  Fix: ${md(finding.fix)}\n`;
    }
    for (const [kind, count] of hidden) out += `\n- … ${md(plural(count, `more ${kind}`, `more ${kind}s`))} (all in \`--json\`)\n`;
    for (const p of report.prePulls ?? []) {
      out += `\n- Image pre-pull ${markdownCode(p.id)} (for ${markdownCode(p.for)}, ${markdownCode(p.image)}): ${md(p.change)}; pulls only, no agent pod moves\n`;
    }
    for (const agent of report.agents.filter(changed)) {
      out += `\n<details><summary>${markdownHtmlEscape(`${agent.agent}: ${nodeSummary(agent)}`)}</summary>\n\n`;
      out += '| DaemonSet | group | change | version | nodes | replaced | pace |\n|---|---|---|---|---:|---:|---|\n';
      for (const d of agent.daemonSets) {
        out += `| ${markdownCode(d.id)} | ${md(d.rolloutGroup ?? '-')} | ${md(changeText(d))} | ${md(versionText(d).replace('->', '→'))} | ${d.nodesBefore === d.nodesAfter ? d.nodesAfter : `${d.nodesBefore} → ${d.nodesAfter}`} | ${d.replaced.length} | ${d.rollout === undefined ? '-' : md(paceText(d.rollout.pace))} |\n`;
      }
      out += '\n';
      for (const d of agent.daemonSets.filter((x) => x.rollout !== undefined)) {
        out += `- Batches of ${markdownCode(d.id)}: ${md(batchText(d).slice(d.id.length + 2))}  \n  Replaced: ${mdList(d.replaced)}\n`;
      }
      for (const line of nodeMoves(agent, (names) => mdList(names), '→', md)) out += `- ${line}\n`;
      out += '\n</details>\n';
    }
  }
  return out;
}
