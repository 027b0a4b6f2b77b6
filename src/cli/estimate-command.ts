import { flag, listValue, parse, requiredString, secondsValue, stringValue, UsageError } from './args';
import { controlPlaneAtLeast } from './capacity/pod-level';
import { capacityGate, capacityText, KUBERNETES_VERSION_OPTION, loadPods, treeCapacity } from './capacity-hooks';
import { analyzeCoverage } from './coverage/analysis';
import { loadManifests } from './coverage/load';
import { nodeFacts } from './coverage/nodes';
import { waveOfGroup } from './coverage/profiles';
import { requireDaemonSets } from './coverage-command';
import { AgentEstimate, DEFAULT_BAKE_SECONDS, estimateRollout, unreachableStalls, WaveEstimate } from './estimate/estimate';
import { REPLACEMENTS_COUNTED_SINCE } from './estimate/rollout-model';
import { percent, plural, table } from './format';
import { loadInventory } from './inventory';
import type { CliIo } from './io';
import { DEFAULT_POD_SECONDS, formatDuration, Pace } from '../rollout/pace';
import { gateAfter, renderedGates } from './plan/gates';
import { terminalSafe as t } from '../util/output-escape';

/** Default split of the 30 s pod cycle when only some of its parts are given. */
const DEFAULT_PARTS = { 'pull-seconds': 10, 'start-seconds': 5, 'ready-seconds': 10, 'termination-seconds': 5 } as const;

export const ESTIMATE_HELP = `Usage: node-agents estimate --nodes NODES.json MANIFESTS... [flags]

How long each agent's rollout takes on this inventory. For every DaemonSet (one wave of the
agent, in Argo CD sync-wave order, the fleet last): the nodes it covers (desiredNumberScheduled),
its update pace (maxUnavailable or maxSurge; percentages are scaled against the desired count and
ROUNDED UP, like the DaemonSet controller), pods replaced at once, batches, and time; then the
agent's total with a bake between waves, and each wave's blast radius (its share of the agent's
nodes). OnDelete DaemonSets do not roll out by themselves: pods change only when deleted.

Time of a wave = batches x (pod cycle + the DaemonSet's minReadySeconds), where
batches = ceil(nodes / pods at once). Example: 500 nodes, maxUnavailable 1, 30 s -> 4 h 10 min.
The batches are the DaemonSet controller's (the model plan uses, so both give one answer): a
NotReady or unreachable node the wave covers holds one of the pods at once for good, and an old
pod that is not available (read with --pods) is replaced at once in the first batch, outside the
budget (AT ONCE then reads "30, then 2").

Arguments:
  MANIFESTS                YAML/JSON files or directories (e.g. a cdk8s dist/ directory)

Flags:
  --nodes FILE             node inventory: \`kubectl get nodes -o json\` output (required)
  --pod-seconds N          one pod's cycle: image pull + start + ready + old pod termination
                           (default ${DEFAULT_POD_SECONDS})
  --pull-seconds N         or give the parts (defaults ${DEFAULT_PARTS['pull-seconds']}, ${DEFAULT_PARTS['start-seconds']}, ${DEFAULT_PARTS['ready-seconds']}, ${DEFAULT_PARTS['termination-seconds']}; worst-case
  --start-seconds N        termination is the DaemonSet's terminationGracePeriodSeconds)
  --ready-seconds N
  --termination-seconds N
                           a DaemonSet whose image a pull-only DaemonSet of the tree pulls first
                           (rollout.prePull) rolls without the pull: its cycle is the rest
  --bake-seconds N         wait after each wave before the next (default ${DEFAULT_BAKE_SECONDS}); a wave
                           followed by a rendered gate Job bakes as long as the Job does (its
                           BAKE_SECONDS), since Argo CD waits for the Job on every sync
  --agent NAME             only these agents (repeatable)
  --json                   print the estimates as JSON
  --pods FILE              \`kubectl get pods -A -o json\` output: check each agent's pod fits on
                           every node it targets (as coverage --pods does)
  --kubernetes-version MAJOR.MINOR
                           the control plane's version for --pods (as coverage --pods takes it),
                           and whether the DaemonSet controller counts the old pods it replaces
                           outside the budget in that same sync (1.31 on; without it, a kubelet of
                           1.31 or later in --nodes tells, else a note names what an older one does)
  -h, --help               this help

A wave (not the fleet) holding a NotReady or unreachable node is a problem naming the node: its
rollout waits on a pod that never gets Ready there. So is any DaemonSet whose maxUnavailable budget
is filled by unreachable nodes it does not tolerate: their old pods are deleted and stay Terminating. A cordoned node is not: DaemonSet pods
tolerate node.kubernetes.io/unschedulable and run there.

Exit codes: 0 ok, 1 a wave the API server would reject, that deadlocks (maxSurge with a host port
or a required hostname anti-affinity against its own pods) or that stalls on a node,
2 bad usage or input.
`;

const OPTIONS = {
  'nodes': { type: 'string' },
  'pod-seconds': { type: 'string' },
  'pull-seconds': { type: 'string' },
  'start-seconds': { type: 'string' },
  'ready-seconds': { type: 'string' },
  'termination-seconds': { type: 'string' },
  'bake-seconds': { type: 'string' },
  'agent': { type: 'string', multiple: true },
  'json': { type: 'boolean' },
  'pods': { type: 'string' },
  ...KUBERNETES_VERSION_OPTION,
  'help': { type: 'boolean', short: 'h' },
} as const;

export function estimateCommand(argv: readonly string[], io: CliIo): number {
  const parsed = parse('estimate', argv, OPTIONS, true);
  if (flag(parsed, 'help')) {
    io.stdout.write(ESTIMATE_HELP);
    return 0;
  }
  const nodesFile = requiredString(parsed, 'estimate', 'nodes', 'the node inventory (kubectl get nodes -o json > nodes.json)');
  if (parsed.positionals.length === 0) {
    throw new UsageError('no manifests given: pass YAML files or directories (e.g. dist/) after the flags', 'estimate');
  }
  const podSecondsFlag = secondsValue(parsed, 'estimate', 'pod-seconds');
  const parts = Object.keys(DEFAULT_PARTS).map((name) => [name, secondsValue(parsed, 'estimate', name)] as const);
  const givenParts = parts.filter(([, v]) => v !== undefined);
  if (podSecondsFlag !== undefined && givenParts.length > 0) {
    throw new UsageError(`--pod-seconds is the sum of the parts: give either it or ${givenParts.map(([n]) => `--${n}`).join(', ')}`, 'estimate');
  }
  const podSeconds = podSecondsFlag ?? (givenParts.length === 0 ? DEFAULT_POD_SECONDS
    : parts.reduce((sum, [name, v]) => sum + (v ?? DEFAULT_PARTS[name as keyof typeof DEFAULT_PARTS]), 0));
  const bakeSeconds = secondsValue(parsed, 'estimate', 'bake-seconds') ?? DEFAULT_BAKE_SECONDS;

  const inventory = loadInventory(nodesFile, io.cwd);
  const nodes = nodeFacts(inventory);
  const manifests = loadManifests(parsed.positionals, io.cwd);
  requireDaemonSets(manifests, parsed.positionals);
  const agentsWanted = listValue(parsed, 'agent');
  const known = [...new Set(manifests.daemonSets.map((d) => d.agent))].sort();
  const unknown = agentsWanted.filter((a) => !known.includes(a));
  if (unknown.length > 0) {
    throw new UsageError(`--agent ${unknown.join(', ')}: no such agent; the manifests hold ${known.join(', ')}`, 'estimate');
  }
  const daemonSets = manifests.daemonSets.filter((d) => agentsWanted.length === 0 || agentsWanted.includes(d.agent));
  const report = analyzeCoverage(daemonSets, nodes);
  // a wave holding a node a rollout cannot count on (NotReady, unreachable) stalls: the coverage problem says which
  const stalls = new Map(report.problems.filter((p) => p.kind === 'unready-in-wave').map((p) => [p.daemonSets[0], p.message]));
  for (const [id, why] of unreachableStalls(report)) stalls.set(id, stalls.has(id) ? `${stalls.get(id)}; and ${why}` : why);
  // the bake of each gate Job the tree renders after a wave, read from the rendered Job
  const gates = renderedGates(manifests);
  const gateBakes = new Map(daemonSets.flatMap((d) => {
    const gate = gateAfter(gates, d);
    return gate === undefined ? [] : [[d.id, gate.bakeSeconds] as const];
  }));
  // a wave whose image a pull-only DaemonSet pulled beforehand: the pull is not in its per-node time
  const pull = Math.min(secondsValue(parsed, 'estimate', 'pull-seconds') ?? DEFAULT_PARTS['pull-seconds'], podSeconds);
  const prePulled = new Map((manifests.prePulls ?? []).map((p) => [p.for, pull]));
  // --pods (src/capacity): a pod that never starts stalls its wave; an old pod not available is replaced outside the budget
  const podsFile = stringValue(parsed, 'pods');
  const pods = podsFile === undefined ? undefined : loadPods(podsFile, io.cwd, capacityGate(inventory, stringValue(parsed, 'kubernetes-version'), 'estimate'));
  const unavailable = pods?.unavailableDaemonPods;
  const replacementsCounted = controlPlaneAtLeast(inventory, stringValue(parsed, 'kubernetes-version'), REPLACEMENTS_COUNTED_SINCE);
  const estimates = estimateRollout(report.daemonSets, {
    podSeconds, bakeSeconds, stalls, gateBakes, report, unavailable, replacementsCounted, prePulled,
  });
  const problems = estimates.flatMap((a) => a.waves.filter((w) => w.problem !== undefined));
  const capacity = pods === undefined ? [] : treeCapacity(manifests, report, pods);

  if (flag(parsed, 'json')) {
    io.stdout.write(JSON.stringify({ podSeconds, bakeSeconds, agents: estimates, ...(podsFile === undefined ? {} : { capacity }) }, null, 2) + '\n');
  } else {
    io.stdout.write(estimateText(estimates, podSeconds, bakeSeconds, nodes.length) + (podsFile === undefined ? '' : capacityText(capacity)));
  }
  return problems.length > 0 || capacity.some((f) => f.severity === 'error') ? 1 : 0;
}

function estimateText(estimates: readonly AgentEstimate[], podSeconds: number, bakeSeconds: number, nodeCount: number): string {
  let out = `Inventory: ${plural(nodeCount, 'node')}. Pod cycle ${formatDuration(podSeconds)} (+ each DaemonSet's minReadySeconds), `
    + `bake ${formatDuration(bakeSeconds)} between waves.\n`;
  for (const agent of estimates) {
    const waves = agent.waves.filter((w) => w.nodes > 0).length;
    const automatic = waves - agent.manualWaves.length;
    const manual = agent.manualWaves.length === 0 ? ''
      : automatic === 0 ? '' : `; plus ${plural(agent.manualWaves.length, 'wave')} with no automatic rollout`;
    const total = automatic === 0 && waves > 0 ? 'no automatic rollout' : `total ${formatDuration(agent.totalSeconds)}`;
    // resource profiles: a wave's DaemonSets of every profile roll together, one step
    const steps = new Set(agent.waves.filter((w) => w.nodes > 0).map((w) => waveOfGroup(w.rolloutGroup) ?? w.daemonSet)).size;
    const withPods = steps === waves ? `${plural(waves, 'wave')} with pods` : `${plural(waves, 'DaemonSet')} with pods in ${plural(steps, 'wave')}`;
    out += `\n${t(agent.agent)}: ${plural(agent.nodes, 'node')}, ${withPods}, ${total}`
      + `${agent.bakes > 0 ? ` (${plural(agent.bakes, 'bake')} of ${formatDuration(agent.bakeSeconds)} included)` : ''}`
      + `${agent.gateSeconds > 0 ? ` (gate Jobs' bake of ${formatDuration(agent.gateSeconds)} included)` : ''}${manual}\n`;
    out += table(['#', 'DAEMONSET', 'GROUP', 'NODES', 'BLAST', 'CUMULATIVE', 'PACE', 'AT ONCE', 'BATCHES', 'CYCLE', 'TIME'],
      agent.waves.map((w, i) => [
        String(i + 1), t(w.daemonSet), t(w.rolloutGroup ?? '-'), String(w.nodes), percent(round(w.blastRadiusPercent)),
        percent(round(w.cumulativePercent)), paceText(w.pace), atOnceText(w),
        String(w.batches), formatDuration(w.cycleSeconds), w.seconds === undefined ? (w.rollout?.stalled === true ? 'stalls' : 'manual') : formatDuration(w.seconds),
      ]), '  ');
    for (const w of agent.waves) {
      if (w.problem !== undefined) out += `  ! ${t(w.daemonSet)}: ${t(w.problem)}\n`;
      else if (w.note !== undefined) out += `  - ${t(w.daemonSet)}: ${t(w.note)}\n`;
    }
  }
  return out;
}

/** `5`; `30, then 4`: the first batch when it differs (old pods not available go outside the budget, stuck nodes hold units). */
function atOnceText(w: WaveEstimate): string {
  if (w.pace.type === 'OnDelete') return '-';
  const r = w.rollout;
  if (r === undefined || r.batches === 0) return String(w.pace.batch);
  if (r.batches === 1 || r.firstBatchSize === r.podsAtOnce) return String(r.firstBatchSize);
  return `${r.firstBatchSize}, then ${r.podsAtOnce}`;
}

function paceText(pace: Pace): string {
  if (pace.type === 'OnDelete') return 'OnDelete';
  return pace.mode === 'surge' ? `maxSurge ${pace.maxSurge}` : `maxUnavailable ${pace.maxUnavailable}`;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
