import { flag, listValue, parse, requiredString, stringValue, UsageError } from './args';
import { capacityGate, capacityText, COST_FLAG_HELP, costText, KUBERNETES_VERSION_OPTION, loadPods, PODS_FLAG_HELP, treeCapacity, treeCost } from './capacity-hooks';
import { AgentNode, analyzeCoverage, CoverageReport, coverageWarnings, describeBlocker, placementExplainer, Problem } from './coverage/analysis';
import { loadManifests } from './coverage/load';
import { ManifestSet } from './coverage/manifests';
import { formatTaint, impliedNote, NodeFacts, nodeFacts } from './coverage/nodes';
import { withReadinessTaintProblems } from './coverage/readiness-taints';
import { LazyArray, plural, shortList, table, writeJson } from './format';
import { loadInventory } from './inventory';
import type { CliIo } from './io';
import { capPerKind } from './limits';
import { entryOf } from '../util/maps';
import { terminalSafe as t } from '../util/output-escape';
import { checkLabelKey } from '../validation/values';
import { DEFAULT_WAVE_LABEL_KEY } from '../waves/partition';

export const COVERAGE_HELP = `Usage: node-agents coverage --nodes NODES.json MANIFESTS... [flags]

Which nodes each agent's DaemonSets cover, and for every node an agent misses, exactly why:
the untolerated taint, the failed nodeSelector entry or affinity requirement, the node's
NotReady/cordoned state, or a Windows/virtual node excluded on purpose. Agents are DaemonSets
grouped by the label app.kubernetes.io/name (else the DaemonSet name).

Problems (exit code 1):
  gap               a linux node an agent targets but no DaemonSet of it covers (untolerated
                    taint, or the node falls between rollout waves)
  duplicate         a node owned by two or more DaemonSets of one agent
  empty-wave        a rollout-wave DaemonSet that matches zero nodes (Argo CD counts it
                    Healthy at once: the wave gates nothing)
  unready-in-wave   a rollout-wave DaemonSet (not the fleet) on a NotReady or unreachable
                    node: its rollout waits on a pod that never gets Ready there (a cordoned
                    node is fine: DaemonSet pods tolerate node.kubernetes.io/unschedulable)
                    (node-agents label keeps such nodes out of the waves; a NoExecute taint
                    the wave does not tolerate is a gap)
  host-port-clash   two DaemonSets binding the same host port on one node
  unsupported-node  a DaemonSet landing on Windows/virtual nodes it did not select by label
  never-starts      an agent not tolerating another agent's readiness taint
                    (node-agents.cdk8s.io/readiness-taint): on a new node it gets no pod until
                    that agent is Ready there, and never when the two wait for each other

Arguments:
  MANIFESTS           YAML/JSON files or directories (e.g. a cdk8s dist/ directory)

Flags:
  --nodes FILE        node inventory: the output of \`kubectl get nodes -o json\` (required)
  --json              print the full report as JSON (with --node: also the structured reasons)
  --node NAME         explain one node: every agent, every DaemonSet, every reason
  --agent NAME        only these agents (repeatable)
${PODS_FLAG_HELP}${COST_FLAG_HELP}  --label-key KEY     wave label key of the partition (default ${DEFAULT_WAVE_LABEL_KEY})
  --allow-taint KEY   a taint key agents may leave untolerated on purpose (repeatable):
                      nodes kept out by it are intended exclusions, not gaps
  -h, --help          this help

Exit codes: 0 no problem, 1 problems found, 2 bad usage or input.
Example: node-agents coverage --nodes nodes.json dist/
`;

const OPTIONS = {
  'nodes': { type: 'string' },
  'json': { type: 'boolean' },
  'node': { type: 'string' },
  'pods': { type: 'string' },
  ...KUBERNETES_VERSION_OPTION,
  'cost': { type: 'boolean' },
  'agent': { type: 'string', multiple: true },
  'label-key': { type: 'string' },
  'allow-taint': { type: 'string', multiple: true },
  'help': { type: 'boolean', short: 'h' },
} as const;

export function coverageCommand(argv: readonly string[], io: CliIo): number {
  const parsed = parse('coverage', argv, OPTIONS, true);
  if (flag(parsed, 'help')) {
    io.stdout.write(COVERAGE_HELP);
    return 0;
  }
  const nodesFile = requiredString(parsed, 'coverage', 'nodes', 'the node inventory (kubectl get nodes -o json > nodes.json)');
  if (parsed.positionals.length === 0) {
    throw new UsageError('no manifests given: pass YAML files or directories (e.g. dist/) after the flags', 'coverage');
  }
  const labelKey = stringValue(parsed, 'label-key');
  // taint keys have the label key syntax too: a typo here would silently allow nothing
  const keyProblems = [
    ...(labelKey === undefined ? [] : checkLabelKey('--label-key', labelKey)),
    ...listValue(parsed, 'allow-taint').flatMap((key) => checkLabelKey('--allow-taint', key)),
  ];
  if (keyProblems.length > 0) throw new UsageError(keyProblems.join('; '), 'coverage');
  const inventory = loadInventory(nodesFile, io.cwd);
  const nodes = nodeFacts(inventory);
  const manifests = loadManifests(parsed.positionals, io.cwd);
  requireDaemonSets(manifests, parsed.positionals);
  const podsFile = stringValue(parsed, 'pods');
  const gate = capacityGate(inventory, stringValue(parsed, 'kubernetes-version'), 'coverage');
  const pods = podsFile === undefined ? undefined : loadPods(podsFile, io.cwd, gate);

  // readiness taints: an agent that does not tolerate another's never starts on a new node (src/cli/coverage/readiness-taints.ts)
  const report = withReadinessTaintProblems(manifests, analyzeCoverage(manifests.daemonSets, nodes, {
    waveLabelKey: labelKey,
    intendedTaintKeys: listValue(parsed, 'allow-taint'),
  }));
  const view = selectAgents(report, listValue(parsed, 'agent'), 'coverage');
  const nodeName = stringValue(parsed, 'node');
  if (nodeName !== undefined && !nodes.some((n) => n.name === nodeName)) {
    throw new UsageError(`--node ${nodeName}: no such node in ${nodesFile}`, 'coverage');
  }

  // --pods / --cost (src/capacity): does each agent's pod fit where it is not running yet; the agents' tax
  const capacity = pods === undefined ? [] : treeCapacity(manifests, view, pods);
  const cost = flag(parsed, 'cost') ? treeCost(manifests, view, inventory, gate.enabled) : undefined;
  if (flag(parsed, 'json')) {
    // streamed: at 50k nodes the document as one string (and the objects behind it) took about 1 GB
    const extra = { ...(pods === undefined ? {} : { capacity }), ...(cost === undefined ? {} : { cost }) };
    writeJson({ ...coverageJson(view, manifests, nodeName), ...extra }, (text) => io.stdout.write(text));
  } else if (nodeName !== undefined) {
    io.stdout.write(explainNode(view, nodeName));
  } else {
    io.stdout.write(coverageText(view, manifests, nodesFile) + (pods === undefined ? '' : capacityText(capacity))
      + (cost === undefined ? '' : costText([{ label: 'now', rows: cost }])));
  }
  return view.problems.length > 0 || capacity.some((f) => f.severity === 'error') ? 1 : 0;
}

export function requireDaemonSets(manifests: ManifestSet, paths: readonly string[]): void {
  if (manifests.daemonSets.length === 0) {
    const other = Object.entries(manifests.otherKinds).map(([k, n]) => `${k} ${n}`).join(', ');
    throw new Error(`no DaemonSet in ${paths.join(', ')}${other ? ` (found only: ${other})` : ''}; pass the synthesized manifests of your node agents`);
  }
}

/** Restricts the report to some agents; problems are kept when they involve one of their DaemonSets. */
function selectAgents(report: CoverageReport, agents: readonly string[], command: string): CoverageReport {
  if (agents.length === 0) return report;
  const known = report.agents.map((a) => a.agent);
  const unknown = agents.filter((a) => !known.includes(a));
  if (unknown.length > 0) {
    throw new UsageError(`--agent ${unknown.join(', ')}: no such agent; the manifests hold ${known.join(', ')}`, command);
  }
  const ids = new Set(report.daemonSets.filter((d) => agents.includes(d.info.agent)).map((d) => d.info.id));
  return {
    ...report,
    daemonSets: report.daemonSets.filter((d) => ids.has(d.info.id)),
    agents: report.agents.filter((a) => agents.includes(a.agent)),
    problems: report.problems.filter((p) => p.daemonSets.some((id) => ids.has(id))),
  };
}

function coverageText(report: CoverageReport, manifests: ManifestSet, nodesFile: string): string {
  const nodes = report.nodes;
  const count = (pred: (n: NodeFacts) => boolean) => nodes.filter(pred).length;
  const facets = [
    [count((n) => n.controlPlane), 'control-plane'],
    [count((n) => n.platform === 'non-linux'), 'non-linux'],
    [count((n) => n.platform === 'virtual'), 'virtual'],
    [count((n) => n.ready === 'False' || n.ready === 'Unknown'), 'NotReady'],
    [count((n) => n.unschedulable), 'cordoned'],
  ].filter(([n]) => n as number > 0).map(([n, what]) => `${n} ${what}`);
  const other = Object.entries(manifests.otherKinds).sort().map(([k, n]) => `${t(k)} ${n}`).join(', ');
  let out = `Nodes: ${nodes.length} from ${t(nodesFile)}${facets.length > 0 ? ` (${facets.join(', ')})` : ''}\n`;
  out += `Manifests: ${plural(report.daemonSets.length, 'DaemonSet')} in ${plural(report.agents.length, 'agent')}${other ? `; also ${other}` : ''}\n\n`;

  out += table(['AGENT', 'DAEMONSETS', 'COVERED', 'DUPLICATE', 'GAP', 'EXCLUDED', 'NOT SELECTED', 'NODE CONDITION'],
    report.agents.map((a) => [t(a.agent), String(a.daemonSets.length), String(a.counts.covered), String(a.counts.duplicate), String(a.counts.gap),
      String(a.counts.excluded), String(a.counts['not-selected']), String(a.counts['node-condition'])]));
  out += '\n';
  out += table(['DAEMONSET', 'AGENT', 'GROUP', 'NODES'],
    report.daemonSets.map((d) => [t(d.info.id), t(d.info.agent), t(d.info.rolloutGroup ?? '-'), String(d.covered.length)]));

  if (nodes.length <= 100) {
    out += '\n';
    out += table(['NODE', 'ZONE', 'STATE', ...report.agents.map((a) => t(a.agent))], nodes.map((node, i) => [
      t(node.name), t(node.zone ?? '-'), nodeState(node),
      ...report.agents.map((a) => t(cell(a.nodes[i], report))),
    ]));
    out += '  cell: the owning DaemonSet\'s rollout group (or "ok"), GAP, DUPLICATE, excluded, not-ready, "-" = not selected\n';
  } else {
    out += `\n(node table omitted for ${nodes.length} nodes: use --node NAME or --json)\n`;
  }

  out += '\n';
  const warnings = coverageWarnings(report);
  if (warnings.length > 0) out += `WARNINGS (${warnings.length})\n${warnings.map((w) => `  ${t(w)}\n`).join('')}\n`;
  if (report.problems.length === 0) {
    out += 'No problems: every node each agent targets is covered exactly once.\n';
  } else {
    out += `PROBLEMS (${report.problems.length})\n`;
    const { shown, hidden } = capPerKind(report.problems, (p) => p.kind);
    out += shown.map((p) => `  [${p.kind}] ${t(p.message)}\n`).join('');
    out += hidden.map(([kind, left]) => `  [${kind}] … ${left} more (all in --json)\n`).join('');
  }
  const notes = conditionNotes(report);
  if (notes.length > 0) out += `\nNOTES\n${notes.map((n) => `  ${t(n)}\n`).join('')}`;
  return out;
}

function nodeState(node: NodeFacts): string {
  const parts = [node.ready === 'False' || node.ready === 'Unknown' ? 'NotReady' : 'Ready'];
  if (node.unschedulable) parts.push('cordoned');
  if (node.platform !== 'linux') parts.push(node.platform);
  if (node.controlPlane) parts.push('control-plane');
  return parts.join(',');
}

function cell(entry: AgentNode, report: CoverageReport): string {
  switch (entry.status) {
    case 'covered': {
      const ds = report.daemonSets.find((d) => d.info.id === entry.owners[0]);
      return ds?.info.rolloutGroup ?? 'ok';
    }
    case 'duplicate': return 'DUPLICATE';
    case 'gap': return 'GAP';
    case 'excluded': return 'excluded';
    case 'node-condition': return 'not-ready';
    case 'not-selected': return '-';
  }
}

/** What is not a problem but worth knowing: nodes kept out by their state, cordoned nodes. */
function conditionNotes(report: CoverageReport): string[] {
  const notes: string[] = [];
  for (const agent of report.agents) {
    const byWhy = new Map<string, string[]>();
    for (const entry of agent.nodes) {
      if (entry.status === 'node-condition') entryOf(byWhy, entry.why, () => []).push(entry.node);
    }
    for (const [why, names] of byWhy) notes.push(`${agent.agent} on ${shortList(names)}: ${why}`);
  }
  const cordoned = report.nodes.filter((n) => n.unschedulable).map((n) => n.name);
  if (cordoned.length > 0) {
    notes.push(`${shortList(cordoned)} cordoned: DaemonSet pods still run there (the controller tolerates node.kubernetes.io/unschedulable)`);
  }
  return notes;
}

function explainNode(report: CoverageReport, name: string): string {
  const index = report.nodes.findIndex((n) => n.name === name);
  const node = report.nodes[index];
  const placementsOf = placementExplainer(report);
  let out = `Node ${t(node.name)}: ${nodeState(node)}${node.zone ? `, zone ${t(node.zone)}` : ''}\n`;
  out += `  taints: ${node.taints.length === 0 ? 'none' : t(node.taints.map((taint) => formatTaint(taint) + impliedNote(taint)).join(', '))}\n`;
  for (const agent of report.agents) {
    const entry = agent.nodes[index];
    out += `\n${t(agent.agent)}: ${entry.status}${entry.owners.length > 0 ? ` (${t(entry.owners.join(', '))})` : ''}\n`;
    const why = entry.why && entry.status !== 'not-selected' ? entry.why : undefined;
    if (why) out += `  ${t(why)}\n`;
    if (entry.fix) out += `  fix: ${t(entry.fix)}\n`;
    for (const placement of placementsOf(agent.agent, index)) {
      const line = `${placement.daemonSet}: ${placement.blockers.map(describeBlocker).join('; ')}`;
      // a gap's why is the closest DaemonSet's reasons: said once
      if (line !== why) out += `  ${t(line)}\n`;
    }
  }
  return out;
}

function coverageJson(report: CoverageReport, manifests: ManifestSet, nodeName?: string) {
  const index = nodeName === undefined ? -1 : report.nodes.findIndex((n) => n.name === nodeName);
  const indices = index < 0 ? report.nodes.map((_, i) => i) : [index];
  const placementsOf = placementExplainer(report);
  return {
    waveLabelKey: report.waveLabelKey,
    summary: {
      nodes: report.nodes.length,
      daemonSets: report.daemonSets.length,
      agents: report.agents.length,
      problems: report.problems.length,
      otherKinds: manifests.otherKinds,
    },
    problems: report.problems.map((p: Problem) => ({ ...p })),
    warnings: coverageWarnings(report),
    agents: report.agents.map((a) => ({
      agent: a.agent,
      daemonSets: a.daemonSets,
      counts: a.counts,
      nodes: new LazyArray(indices.length, (k) => {
        const n = a.nodes[indices[k]];
        return {
          node: n.node,
          status: n.status,
          owners: n.owners,
          why: n.why || undefined,
          fix: n.fix,
          existingPodKeepsRunning: n.existingPodKeepsRunning,
          // the reasons of every DaemonSet that does not own the node (covered nodes: none needed)
          placements: n.status === 'covered' ? [] : placementsOf(a.agent, indices[k]).map((p) => ({
            daemonSet: p.daemonSet,
            reasons: p.blockers.map(describeBlocker),
            // the structured blockers only when one node is asked for: on a big cluster they would multiply the output
            ...(index >= 0 ? { blockers: p.blockers } : {}),
          })),
        };
      }),
    })),
    daemonSets: report.daemonSets.map((d) => ({
      id: d.info.id,
      agent: d.info.agent,
      rolloutGroup: d.info.rolloutGroup,
      source: d.info.source,
      coveredCount: d.covered.length,
      covered: d.covered,
    })),
    nodes: new LazyArray(indices.length, (k) => {
      const n = report.nodes[indices[k]];
      return {
        name: n.name,
        zone: n.zone,
        platform: n.platform,
        ready: n.ready,
        unschedulable: n.unschedulable,
        controlPlane: n.controlPlane,
        // why a rollout cannot count on the node (NotReady, unreachable, cordoned, NoExecute taint); [] when it can
        rolloutHazards: n.rolloutHazards,
        taints: n.taints.map((taint) => ({ ...taint })),
      };
    }),
  };
}
