import { flag, listValue, parse, requiredString, stringValue, UsageError } from './args';
import { plural, shortList } from './format';
import { loadInventory } from './inventory';
import type { CliIo } from './run';
import { checkLabelKey } from '../agent/checks';
import { nodeFacts } from '../coverage/nodes';
import { NodeJson } from '../scheduling/types';
import { assignWaves, DEFAULT_SPREAD_BY, labelCommands, nodePoolLabel, WaveFraction } from '../waves/labelling';
import { checkWaveName, DEFAULT_WAVE_LABEL_KEY } from '../waves/partition';

const FORMATS = ['commands', 'json', 'nodepool'];

export const LABEL_HELP = `Usage: node-agents label --nodes NODES.json --wave NAME=FRACTION... [flags]

Assigns nodes to rollout waves and prints the labels to apply. The draw is deterministic
(a hash of each node name, never the list order), spread across zones (or --spread-by labels),
stable when nodes come and go, and keeps control-plane nodes out of the first wave. Nodes in
no wave are the fleet: they carry no wave label. Windows and virtual (Fargate, virtual-kubelet)
nodes run no Linux agent and are left out unless --all-nodes.

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
  --format FORMAT         commands (kubectl label, default) | json | nodepool (node-pool labels)
  --json                  same as --format json
  -h, --help              this help

Exit codes: 0 ok, 2 bad usage or input.
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
  'format': { type: 'string' },
  'json': { type: 'boolean' },
  'help': { type: 'boolean', short: 'h' },
} as const;

export function labelCommand(argv: readonly string[], io: CliIo): number {
  const parsed = parse('label', argv, OPTIONS, false);
  if (flag(parsed, 'help')) {
    io.stdout.write(LABEL_HELP);
    return 0;
  }
  const nodesFile = requiredString(parsed, 'label', 'nodes', 'the node inventory (kubectl get nodes -o json > nodes.json)');
  const waves = listValue(parsed, 'wave').map(parseWave);
  if (waves.length === 0) throw new UsageError('--wave is required: e.g. --wave canary=0.02 --wave wave-1=0.1', 'label');
  const given = listValue(parsed, 'wave');
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
  // Checked here, in the CLI's terms, before any command line is printed: a bad key would make kubectl fail half-way.
  const keyProblems = [
    ...(labelKey === undefined ? [] : checkLabelKey('--label-key', labelKey)),
    ...(spreadBy ?? []).flatMap((key) => checkLabelKey('--spread-by', key)),
  ];
  if (keyProblems.length > 0) throw new UsageError(keyProblems.join('; '), 'label');
  const format = flag(parsed, 'json') ? 'json' : stringValue(parsed, 'format') ?? 'commands';
  if (!FORMATS.includes(format)) throw new UsageError(`--format ${format}: use one of ${FORMATS.join(', ')}`, 'label');

  const all = loadInventory(nodesFile, io.cwd);
  const facts = new Map(nodeFacts(all).map((n) => [n.name, n]));
  const left = flag(parsed, 'all-nodes') ? [] : all.filter((n) => facts.get(n.metadata.name)!.platform !== 'linux');
  const nodes: NodeJson[] = all.filter((n) => !left.includes(n));
  if (nodes.length === 0) {
    throw new Error(`${nodesFile}: no node to label: all ${plural(all.length, 'node')} run no Linux agent (Windows or virtual: ${commentList(left.map((n) => n.metadata.name).sort())}); `
      + '--all-nodes assigns them too');
  }

  let assignment;
  try {
    assignment = assignWaves(nodes, {
      waves,
      labelKey,
      spreadBy,
      includeControlPlane: flag(parsed, 'include-control-plane'),
      seed: stringValue(parsed, 'seed'),
    });
  } catch (error) {
    // the waves module names the bad option in its terms (waves[0].fraction...): say it in the CLI's.
    throw new UsageError((error as Error).message, 'label');
  }
  const diff = flag(parsed, 'diff');
  const commands = labelCommands(assignment, diff ? nodes : undefined);
  const leftNames = left.map((n) => n.metadata.name).sort();

  if (format === 'json') {
    io.stdout.write(JSON.stringify({
      labelKey: assignment.labelKey,
      waves: assignment.byWave,
      fleet: assignment.fleet,
      // JSON drops undefined values: the fleet is written as null so every node is listed.
      byNode: Object.fromEntries(Object.entries(assignment.byNode).map(([name, wave]) => [name, wave ?? null])),
      leftOut: leftNames,
      // nodes a wave passed over because a rollout cannot count on them → why
      heldOut: assignment.heldOut,
      ...(diff ? { changes: commands } : {}),
    }, null, 2) + '\n');
    return 0;
  }

  const summary = [
    ...waves.map((w) => `${w.name} ${assignment.byWave[w.name].length}`),
    `fleet ${assignment.fleet.length}`,
  ].join(', ');
  let out = `# ${plural(nodes.length, 'node')}: ${summary}${leftNames.length > 0 ? `; left out (Windows/virtual): ${commentList(leftNames)}` : ''}\n`;
  const held = Object.entries(assignment.heldOut);
  if (held.length > 0) {
    out += `# kept in the fleet, out of every wave (a wave's rollout would wait on them): ${commentList(held.map(([name, why]) => `${name} (${why.join(', ')})`))}\n`;
  }
  if (format === 'nodepool') {
    for (const wave of waves) {
      const members = assignment.byWave[wave.name];
      out += `\n# wave ${wave.name}: ${plural(members.length, 'node')}${members.length > 0 ? ` (${commentList(members)})` : ''}\n`;
      out += '# put this label on the template of the node pool(s) that make up this wave:\n';
      for (const [key, value] of Object.entries(nodePoolLabel(assignment.labelKey, wave.name))) out += `labels:\n  ${key}: ${value}\n`;
    }
    out += `\n# fleet: ${plural(assignment.fleet.length, 'node')}: node pools carry no ${assignment.labelKey} label\n`;
    out += '# (Cluster API copies only labels under node.cluster.x-k8s.io/ to nodes: pick such a --label-key there)\n';
  } else {
    if (diff && commands.length === 0) out += '# nothing to change: every node already carries its wave label\n';
    out += commands.map((c) => `${c}\n`).join('');
  }
  io.stdout.write(out);
  return 0;
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
  // eslint-disable-next-line no-control-regex
  return shortList(names.map((name) => name.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1))));
}
