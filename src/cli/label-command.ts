import { flag, listValue, parse, Parsed, requiredString, stringValue, UsageError } from './args';
import { analyzeCoverage } from './coverage/analysis';
import {
  assignWaves, DEFAULT_SPREAD_BY, DriverTarget, EmptyWave, emptyWaves, gpuRelabelSteps, labelChanges, nodePoolLabel, WaveAssignment, WaveFraction,
} from './coverage/labelling';
import { loadManifests } from './coverage/load';
import { DaemonSetInfo, isObject, ManifestSet } from './coverage/manifests';
import { NodeFacts, nodeFacts } from './coverage/nodes';
import { profileOf, waveOfGroup } from './coverage/profiles';
import { plural, shortList } from './format';
import { loadInventory } from './inventory';
import type { CliIo } from './io';
import { podStartupBudgetSeconds, readyWaitSeconds } from '../rollout/startup-budget';
import { NodeJson } from '../scheduling/types';
import { terminalSafe } from '../util/output-escape';
import { checkLabelKey } from '../validation/values';
import { checkWaveName, DEFAULT_WAVE_LABEL_KEY, FLEET_GROUP } from '../waves/partition';

const FORMATS = ['commands', 'json', 'nodepool'];

export const LABEL_HELP = `Usage: node-agents label --nodes NODES.json --wave NAME=FRACTION... [flags]

Assigns nodes to rollout waves and prints the labels to apply. The draw is deterministic
(a hash of each node name, never the list order), spread across zones (or --spread-by labels),
stable when nodes come and go, and keeps control-plane nodes out of the first wave. Nodes in
no wave are the fleet: they carry no wave label. Windows and virtual (Fargate, virtual-kubelet)
nodes run no Linux agent and are left out unless --all-nodes; a wave label they still carry is
removed.

NotReady, unreachable (Ready=Unknown or taint node.kubernetes.io/unreachable), cordoned and
NoExecute-tainted nodes join no wave and stay in the fleet: a wave's rollout (maxUnavailable 1)
would wait on a pod that never gets Ready there, and with Argo CD gating every later wave would
wait too. Wave sizes still count them. --unready-in-later-waves lets them into the waves after
the first (never into the first).

A wave that gets no node (too few nodes for its share, or only held-out ones left) is a warning
on stderr with the smallest node count that gives it one; --strict makes it an error (exit 1,
nothing printed on stdout).

With --manifests, a GPU driver node (one a DaemonSet with pod label app.kubernetes.io/component
or app.kubernetes.io/name gpu-driver or nvidia-driver covers) whose driver pod moves to another
wave is relabelled through cordon, drain, label, wait for the new driver pod, uncordon: a driver
cannot be replaced under running GPU workloads.

Flags:
  --nodes FILE            node inventory: \`kubectl get nodes -o json\` output (required)
  --wave NAME=FRACTION    a wave and its share of the nodes, in rollout order (repeatable,
                          required): --wave canary=0.02 --wave wave-1=0.1 (or canary=2%)
  --label-key KEY         node label holding the wave (default ${DEFAULT_WAVE_LABEL_KEY})
  --spread-by LABEL       spread every wave across this label's values (repeatable;
                          default ${DEFAULT_SPREAD_BY.join(', ')})
  --include-control-plane
                          allow control-plane nodes in the first wave
  --seed TEXT             draw different canaries (default: none)
  --all-nodes             also assign Windows and virtual nodes
  --diff                  print only what changes against the labels the nodes carry now
  --unready-in-later-waves
                          let NotReady, unreachable, cordoned and NoExecute-tainted nodes
                          into the waves after the first
  --strict                a wave that gets no node is an error (exit 1), not a warning
  --manifests PATH        synthesized manifests (files or directories, repeatable): GPU
                          driver nodes that change wave get cordon/drain steps
  --format FORMAT         commands (kubectl label, default) | json | nodepool (node-pool labels)
  --json                  same as --format json
  -h, --help              this help

Exit codes: 0 ok, 1 a wave gets no node (with --strict), 2 bad usage or input.
Example: node-agents label --nodes nodes.json --wave canary=0.02 --wave wave-1=0.1 --diff
`;

const OPTIONS = {
  'nodes': { type: 'string' },
  'wave': { type: 'string', multiple: true },
  'label-key': { type: 'string' },
  'spread-by': { type: 'string', multiple: true },
  'include-control-plane': { type: 'boolean' },
  'seed': { type: 'string' },
  'all-nodes': { type: 'boolean' },
  'diff': { type: 'boolean' },
  'unready-in-later-waves': { type: 'boolean' },
  'strict': { type: 'boolean' },
  'manifests': { type: 'string', multiple: true },
  'format': { type: 'string' },
  'json': { type: 'boolean' },
  'help': { type: 'boolean', short: 'h' },
} as const;

interface LabelOptions {
  readonly nodesFile: string;
  readonly waves: readonly WaveFraction[];
  readonly labelKey?: string;
  readonly spreadBy?: readonly string[];
  readonly format: string;
  readonly allNodes: boolean;
  readonly diff: boolean;
  readonly strict: boolean;
  readonly manifestPaths: readonly string[];
}

export function labelCommand(argv: readonly string[], io: CliIo): number {
  const parsed = parse('label', argv, OPTIONS, false);
  if (flag(parsed, 'help')) {
    io.stdout.write(LABEL_HELP);
    return 0;
  }
  const options = labelOptions(parsed);
  const all = loadInventory(options.nodesFile, io.cwd);
  const facts = nodeFacts(all);
  const factsByName = new Map(facts.map((n) => [n.name, n]));
  // a Set: `left.includes` per node made this step quadratic on big clusters
  const leftSet = new Set(options.allNodes ? [] : facts.filter((n) => n.platform !== 'linux').map((n) => n.name));
  const left = all.filter((n) => leftSet.has(n.metadata.name));
  const nodes: NodeJson[] = all.filter((n) => !leftSet.has(n.metadata.name));
  if (nodes.length === 0) {
    const names = commentList(left.map((n) => n.metadata.name).sort());
    throw new Error(all.length === 1
      ? `${options.nodesFile}: the only node (${names}) is Windows or virtual; nothing to label; --all-nodes assigns it too`
      : `${options.nodesFile}: all ${all.length} nodes are Windows or virtual; nothing to label (${names}); --all-nodes assigns them too`);
  }
  const manifests = options.manifestPaths.length === 0 ? undefined : loadManifests(options.manifestPaths, io.cwd);

  let assignment: WaveAssignment;
  try {
    assignment = assignWaves(nodes, {
      waves: options.waves,
      labelKey: options.labelKey,
      spreadBy: options.spreadBy,
      includeControlPlane: flag(parsed, 'include-control-plane'),
      seed: stringValue(parsed, 'seed'),
      unreadyInLaterWaves: flag(parsed, 'unready-in-later-waves'),
    });
  } catch (error) {
    // the waves module names the bad option in its terms (waves[0].fraction...): say it in the CLI's.
    throw new UsageError((error as Error).message, 'label');
  }
  const empty = emptyWaves(assignment, options.waves, nodes.length);
  const warnings = empty.map((e) => emptyWaveMessage(e, assignment, options.allNodes));
  if (options.strict && warnings.length > 0) {
    io.stderr.write(warnings.map((w) => `node-agents label: error (--strict): ${terminalSafe(w)}\n`).join(''));
    return 1;
  }
  io.stderr.write(warnings.map((w) => `node-agents label: warning: ${terminalSafe(w)}\n`).join(''));

  const gpu = manifests === undefined ? undefined : gpuMoves(manifests, assignment, nodes, factsByName);
  const moving = new Set(gpu?.moves.map((m) => m.node) ?? []);
  const commands = labelChanges(assignment, options.diff ? nodes : undefined, left).filter((c) => !moving.has(c.node)).map((c) => c.command);
  const labelled: Labelled = { options, assignment, nodes, leftNames: left.map((n) => n.metadata.name).sort(), warnings, gpu, commands, moving };
  io.stdout.write(options.format === 'json' ? labelJson(labelled) : labelText(labelled));
  return 0;
}

/** The flags, checked in the CLI's terms before any node is read or any command line printed. */
function labelOptions(parsed: Parsed): LabelOptions {
  const nodesFile = requiredString(parsed, 'label', 'nodes', 'the node inventory (kubectl get nodes -o json > nodes.json)');
  const given = listValue(parsed, 'wave');
  const waves = given.map(parseWave);
  if (waves.length === 0) throw new UsageError('--wave is required: e.g. --wave canary=0.02 --wave wave-1=0.1', 'label');
  const twice = waves.find((w, i) => waves.findIndex((v) => v.name === w.name) !== i);
  if (twice !== undefined) throw new UsageError(`--wave ${twice.name}: the wave is given twice; give every wave a different name`, 'label');
  const sum = waves.reduce((total, w) => total + w.fraction, 0);
  // the same slack as the waves module: decimal shares that add up to 1 need not do so in binary
  if (sum > 1 + 1e-9) {
    throw new UsageError(`${given.map((g) => `--wave ${g}`).join(' ')}: the fractions add up to ${+sum.toFixed(6)}, more than 1 (all nodes); `
      + 'the waves share the nodes and the fleet gets the rest', 'label');
  }
  const labelKey = stringValue(parsed, 'label-key');
  const spreadBy = parsed.values['spread-by'] === undefined ? undefined : listValue(parsed, 'spread-by');
  // a bad key would make kubectl fail half-way
  const keyProblems = [
    ...(labelKey === undefined ? [] : checkLabelKey('--label-key', labelKey)),
    ...(spreadBy ?? []).flatMap((key) => checkLabelKey('--spread-by', key)),
  ];
  if (keyProblems.length > 0) throw new UsageError(keyProblems.join('; '), 'label');
  const format = flag(parsed, 'json') ? 'json' : stringValue(parsed, 'format') ?? 'commands';
  if (!FORMATS.includes(format)) throw new UsageError(`--format ${format}: use one of ${FORMATS.join(', ')}`, 'label');
  return {
    nodesFile,
    waves,
    labelKey,
    spreadBy,
    format,
    allNodes: flag(parsed, 'all-nodes'),
    diff: flag(parsed, 'diff'),
    strict: flag(parsed, 'strict'),
    manifestPaths: listValue(parsed, 'manifests'),
  };
}

/** What the label command decided, for its two outputs. */
interface Labelled {
  readonly options: LabelOptions;
  readonly assignment: WaveAssignment;
  readonly nodes: readonly NodeJson[];
  readonly leftNames: readonly string[];
  readonly warnings: readonly string[];
  readonly gpu?: GpuPlan;
  readonly commands: readonly string[];
  readonly moving: ReadonlySet<string>;
}

function labelJson(l: Labelled): string {
  const { assignment, gpu } = l;
  return JSON.stringify({
    labelKey: assignment.labelKey,
    waves: assignment.byWave,
    fleet: assignment.fleet,
    // JSON drops undefined values: the fleet is written as null so every node is listed.
    byNode: Object.fromEntries(Object.entries(assignment.byNode).map(([name, wave]) => [name, wave ?? null])),
    leftOut: l.leftNames,
    // nodes a wave passed over because a rollout cannot count on them → why
    heldOut: assignment.heldOut,
    warnings: l.warnings,
    ...(gpu === undefined ? {} : {
      gpuDriverMoves: gpu.moves.map((m) => ({ node: m.node, from: m.from ?? null, to: m.to ?? null, steps: m.steps })),
    }),
    ...(l.options.diff ? { changes: l.commands } : {}),
  }, null, 2) + '\n';
}

function labelText(l: Labelled): string {
  const { assignment, gpu, options } = l;
  const summary = [
    ...options.waves.map((w) => `${w.name} ${assignment.byWave[w.name].length}`),
    `fleet ${assignment.fleet.length}`,
  ].join(', ');
  let out = `# ${plural(l.nodes.length, 'node')}: ${summary}${l.leftNames.length > 0 ? `; left out (Windows/virtual): ${commentList(l.leftNames)}` : ''}\n`;
  const held = Object.entries(assignment.heldOut);
  if (held.length > 0) {
    // every one of them, not a short list: these are the nodes the operator must look at
    out += `# kept in the fleet, out of every wave (the rollout of a wave would wait on them): ${held.map(([name, why]) => commentText(`${name} (${why.join(', ')})`)).join(', ')}\n`;
  }
  out += l.warnings.map((w) => `# warning: ${commentText(w)}\n`).join('');
  if (options.format === 'nodepool') return out + nodePoolText(options.waves, assignment, gpu);
  if (options.diff && l.commands.length === 0 && l.moving.size === 0) out += '# nothing to change: every node already carries its wave label\n';
  out += l.commands.map((c) => `${c}\n`).join('');
  if (gpu !== undefined) out += gpuText(gpu);
  return out;
}

function nodePoolText(waves: readonly WaveFraction[], assignment: WaveAssignment, gpu: GpuPlan | undefined): string {
  let out = '';
  for (const wave of waves) {
    const members = assignment.byWave[wave.name];
    out += `\n# wave ${wave.name}: ${plural(members.length, 'node')}${members.length > 0 ? ` (${commentList(members)})` : ''}\n`;
    out += '# put this label on the template of the node pool(s) that make up this wave:\n';
    for (const [key, value] of Object.entries(nodePoolLabel(assignment.labelKey, wave.name))) out += `labels:\n  ${key}: ${value}\n`;
  }
  out += `\n# fleet: ${plural(assignment.fleet.length, 'node')}: node pools carry no ${assignment.labelKey} label\n`;
  out += '# (Cluster API copies only labels under node.cluster.x-k8s.io/ to nodes: pick such a --label-key there)\n';
  if (gpu !== undefined && gpu.moves.length > 0) {
    out += `# GPU driver nodes change wave (${commentList(gpu.moves.map((m) => m.node))}): replace them through cordon and drain, one node at a time\n`;
  }
  return out;
}

/** One line on a wave with no node: why, and what gives it one. */
function emptyWaveMessage(empty: EmptyWave, assignment: WaveAssignment, allNodes: boolean): string {
  const share = `${+(empty.fraction * 100).toFixed(4)}%`;
  const counted = allNodes ? 'nodes' : 'nodes, Windows and virtual ones not counted';
  if (empty.smallestCluster !== undefined) {
    return `wave "${empty.wave}" (${share}) gets 0 of ${plural(empty.total, 'node')}: ${share} of ${empty.total} rounds to 0; `
      + `the smallest cluster that gives it a node has ${empty.smallestCluster} ${counted}. Its DaemonSet would gate nothing `
      + '(Argo CD counts a DaemonSet with no node Healthy at once): raise its share, use fewer waves, or drop it';
  }
  const held = Object.keys(assignment.heldOut);
  return `wave "${empty.wave}" (${share}) gets 0 nodes although ${share} of ${empty.total} is ${empty.count}: `
    + `every node left for it is control-plane${held.length > 0 ? ` or kept out because a rollout cannot count on it (${shortList(held)})` : ''}; `
    + 'its DaemonSet would gate nothing. Fix or replace those nodes, or raise its share';
}

export interface GpuMove {
  readonly node: string;
  /** wave now (undefined: fleet) and after */
  readonly from?: string;
  readonly to?: string;
  readonly driver: string;
  readonly steps: readonly string[];
}

export interface GpuPlan {
  /** GPU driver DaemonSets in the manifests (ids) */
  readonly drivers: readonly string[];
  /** whether the drivers are split into rollout waves (else a relabel leaves their pods alone) */
  readonly waved: boolean;
  readonly moves: readonly GpuMove[];
}

/** `app.kubernetes.io/component` (or `name`) of GPU driver pods: this library's and gpu-operator's. */
const DRIVER_COMPONENTS = ['gpu-driver', 'nvidia-driver'];

/**
 * GPU driver nodes whose wave label changes. A node runs a driver when a driver DaemonSet of the
 * manifests covers it (coverage semantics). Only drivers split into waves move pods on a relabel.
 */
function gpuMoves(manifests: ManifestSet, assignment: WaveAssignment, nodes: readonly NodeJson[], facts: ReadonlyMap<string, NodeFacts>): GpuPlan {
  const selectors = new Map<string, string>();
  const readyWaits = new Map<string, number>();
  const drivers = new Set<string>();
  for (const doc of manifests.documents) {
    const object = doc.object;
    if (object.kind !== 'DaemonSet') continue;
    const spec = isObject(object.spec) ? object.spec : {};
    const template = isObject(spec.template) && isObject(spec.template.metadata) ? spec.template.metadata : {};
    const podLabels = isObject(template.labels) ? template.labels : {};
    const id = `${object.metadata?.namespace ?? 'default'}/${object.metadata?.name}`;
    if (DRIVER_COMPONENTS.includes(podLabels['app.kubernetes.io/component']) || DRIVER_COMPONENTS.includes(podLabels['app.kubernetes.io/name'])) {
      drivers.add(id);
    }
    const matchLabels = isObject(spec.selector) && isObject(spec.selector.matchLabels) ? spec.selector.matchLabels : {};
    // the wait for the new driver pod covers the startup budget the manifests give it
    readyWaits.set(id, readyWaitSeconds(podStartupBudgetSeconds(isObject(spec.template) ? spec.template.spec : undefined)));
    selectors.set(id, Object.entries(matchLabels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `${k}=${v}`).join(','));
  }
  const driverSets = manifests.daemonSets.filter((d) => drivers.has(d.id));
  const waved = driverSets.some((d) => d.rolloutGroup !== undefined && waveOfGroup(d.rolloutGroup) !== FLEET_GROUP);
  const report = analyzeCoverage(driverSets, nodes.map((n) => facts.get(n.metadata.name)!), { waveLabelKey: assignment.labelKey });
  const driverOf = new Map<string, DaemonSetInfo>();
  for (const ds of report.daemonSets) for (const name of ds.covered) if (!driverOf.has(name)) driverOf.set(name, ds.info);
  const moves: GpuMove[] = [];
  if (!waved) return { drivers: [...drivers].sort(), waved, moves };
  for (const node of nodes) {
    const name = node.metadata.name;
    const driver = driverOf.get(name);
    const from = node.metadata.labels?.[assignment.labelKey];
    const to = assignment.byNode[name];
    if (driver === undefined || from === to) continue;
    // the DaemonSet of the node's new group; a wave value the driver does not know falls to its fleet
    // (of the node's resource profile: a relabel changes its wave, not its profile)
    const sameAgent = driverSets.filter((d) => d.agent === driver.agent && profileOf(d) === profileOf(driver));
    const inWave = (wave: string) => sameAgent.find((d) => waveOfGroup(d.rolloutGroup) === wave);
    const target = inWave(to ?? FLEET_GROUP) ?? inWave(FLEET_GROUP);
    if (target?.id === driver.id) continue; // the pod stays with its DaemonSet: nothing restarts
    const driverTarget: DriverTarget | undefined = target === undefined ? undefined
      : { namespace: target.namespace, podSelector: selectors.get(target.id)!, readyTimeoutSeconds: readyWaits.get(target.id) };
    moves.push({ node: name, from, to, driver: driver.id, steps: gpuRelabelSteps(assignment.labelKey, name, to, driverTarget) });
  }
  return { drivers: [...drivers].sort(), waved, moves: moves.sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)) };
}

/** The GPU driver section of the commands: every value from the inventory or the manifests escaped for its `#` comment. */
export function gpuText(gpu: GpuPlan): string {
  if (gpu.drivers.length === 0) {
    return `# --manifests holds no GPU driver DaemonSet (pod label app.kubernetes.io/component or name ${DRIVER_COMPONENTS.join(' or ')}): no node needs draining\n`;
  }
  if (!gpu.waved) {
    return `# GPU driver ${commentList(gpu.drivers)}: not split into rollout waves, so relabelling leaves its pods alone\n`;
  }
  if (gpu.moves.length === 0) return '';
  let out = '\n# GPU driver nodes that change wave: their driver pod moves to another DaemonSet, and a driver cannot be\n'
    + '# replaced under running GPU workloads. Cordon, drain, relabel, wait for the new driver pod, uncordon,\n'
    + '# one node at a time; set -e stops at a failed step and leaves that node cordoned.\n'
    + 'set -e\n';
  for (const move of gpu.moves) {
    out += `\n# ${commentText(move.node)}: ${commentText(move.from ?? FLEET_GROUP)} -> ${commentText(move.to ?? FLEET_GROUP)} (GPU driver ${commentText(move.driver)})\n`;
    out += move.steps.map((step) => `${step}\n`).join('');
  }
  return out;
}

const SHARE_HINT = 'give the share of nodes as a fraction more than 0 and at most 1, such as 0.02, or as a percentage such as 2%';

/** `NAME=FRACTION` or `NAME=PERCENT%`. Every message quotes the flag as typed and says what it takes. */
function parseWave(text: string): WaveFraction {
  const at = text.indexOf('=');
  if (at < 0) throw new UsageError(`--wave ${text}: write NAME=FRACTION, e.g. canary=0.02 or canary=2%`, 'label');
  const name = text.slice(0, at).trim();
  const share = text.slice(at + 1).trim();
  const fail = (why: string) => new UsageError(`--wave ${text}: ${why}`, 'label');
  if (name === '') throw fail('the wave name is missing: write NAME=FRACTION, e.g. canary=0.02 or canary=2%');
  try {
    // the wave name becomes the label value (and a DaemonSet name suffix): a DNS-1123 label is both
    checkWaveName(name, `--wave ${text}`);
  } catch (error) {
    throw new UsageError((error as Error).message, 'label');
  }
  const number = /^(\d+(\.\d+)?|\.\d+)(%?)$/.exec(share);
  if (number === null) {
    if (share === '') throw fail(`the share is missing; ${SHARE_HINT}`);
    if (/^-/.test(share)) throw fail(`${share} is negative; ${SHARE_HINT}`);
    throw fail(`"${share}" is not a decimal fraction or a percentage; ${SHARE_HINT}`);
  }
  const value = Number(number[1]);
  const percent = number[3] === '%';
  if (value === 0) throw fail(`${share} leaves the wave without nodes; ${SHARE_HINT}`);
  if (percent && value > 100) throw fail(`${share} is more than 100%; ${SHARE_HINT}`);
  if (!percent && value > 1) {
    throw fail(`${share} is more than 1 (all nodes)${value <= 100 ? `; for ${share} percent write ${name}=${share}%` : ''}; ${SHARE_HINT}`);
  }
  return { name, fraction: percent ? value / 100 : value };
}

/**
 * Node names for a `#` comment line. The output is meant to be piped to a shell, so a control
 * character (a newline in a crafted inventory) is written escaped instead of ending the comment.
 */
function commentList(names: readonly string[]): string {
  return shortList(names.map(commentText));
}

function commentText(text: string): string {
  return terminalSafe(text);
}
