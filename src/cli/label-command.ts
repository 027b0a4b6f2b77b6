import { flag, listValue, parse, requiredString, stringValue, UsageError } from './args';
import { plural, shortList } from './format';
import type { CliIo } from './run';
import { checkLabelKey } from '../agent/checks';
import { loadNodeList } from '../coverage/load';
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

  const all = loadNodeList(nodesFile, io.cwd);
  const facts = new Map(nodeFacts(all).map((n) => [n.name, n]));
  const left = flag(parsed, 'all-nodes') ? [] : all.filter((n) => facts.get(n.metadata.name)!.platform !== 'linux');
  const nodes: NodeJson[] = all.filter((n) => !left.includes(n));

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
      ...(diff ? { changes: commands } : {}),
    }, null, 2) + '\n');
    return 0;
  }

  const summary = [
    ...waves.map((w) => `${w.name} ${assignment.byWave[w.name].length}`),
    `fleet ${assignment.fleet.length}`,
  ].join(', ');
  let out = `# ${plural(nodes.length, 'node')}: ${summary}${leftNames.length > 0 ? `; left out (Windows/virtual): ${commentList(leftNames)}` : ''}\n`;
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

function parseWave(text: string): WaveFraction {
  const match = /^([^=]+)=(\d+(?:\.\d+)?|\.\d+)(%?)$/.exec(text.trim());
  if (match === null) {
    throw new UsageError(`--wave ${text}: write NAME=FRACTION, e.g. canary=0.02 or canary=2%`, 'label');
  }
  const name = match[1];
  try {
    // the wave name becomes the label value (and a DaemonSet name suffix): a DNS-1123 label is both
    checkWaveName(name, `--wave ${text}`);
  } catch (error) {
    throw new UsageError((error as Error).message, 'label');
  }
  const value = Number(match[2]);
  return { name, fraction: match[3] === '%' ? value / 100 : value };
}

/**
 * Node names for a `#` comment line. The output is meant to be piped to a shell, so a control
 * character (a newline in a crafted inventory) is written escaped instead of ending the comment.
 */
function commentList(names: readonly string[]): string {
  // eslint-disable-next-line no-control-regex
  return shortList(names.map((name) => name.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1))));
}
