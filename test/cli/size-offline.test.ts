/**
 * `node-agents size --series FILE`: offline, on saved query_range answers of a synthetic fleet whose collector
 * memory grows with the node's size (pods per node), with an OOM-killing group, a group with too few pods, and a
 * NodePool mixing sizes.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { MAX_MARKDOWN_CHARS } from '../../src/cli/comment';
import { runCli } from '../../src/cli/run';
import { oomBump } from '../../src/cli/size/recommender';
import { profileProblems } from '../../src/waves/profiles';
import { REPO } from '../util/paths';
import { EXAMPLE_TREE, exampleFleet, inventoryOf, MIB, savedAnswers } from '../util/size-fleet';

const TYPE = 'node.kubernetes.io/instance-type';

const fleet = exampleFleet;

const START = 1_760_000_000 - (1_760_000_000 % 86400);
let dir: string;

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => { stdout += t; } }, stderr: { write: (t: string) => { stderr += t; } }, cwd: dir });
  return { code, stdout, stderr };
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'size-'));
  // 3 days at a 5-minute step
  fs.writeFileSync(path.join(dir, 'series.json'), JSON.stringify(savedAnswers({ nodes: fleet(), start: START, samples: 864, stepSeconds: 300 })));
  fs.writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify(inventoryOf(fleet())));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('size --series: instance-size groups', () => {
  let report: any;
  beforeAll(() => {
    const r = run('size', '--series', 'series.json', '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    report = JSON.parse(r.stdout);
  });

  test('one agent, every group with its distribution; the 96 vCPU group is too thin (1 pod)', () => {
    expect(report.agents.map((a: any) => a.agent)).toEqual(['logging/fluent-bit']);
    const groups = report.agents[0].groups;
    expect(groups.map((g: any) => g.value)).toEqual(['4', '8', '16', '32', '48', '96']);
    expect(groups.find((g: any) => g.value === '96').thin).toBe('1 pod (fewer than 3)');
    expect(report.agents[0].supported).toBe(5);
    const g16 = groups.find((g: any) => g.value === '16');
    expect(g16.memory.max).toBeGreaterThan(700 * MIB);
    expect(g16.memory.p50).toBeGreaterThan(600 * MIB);
  });

  test('the recommendation grows with the node size; 4 and 8 vCPU share a profile (within 10%)', () => {
    const a = report.agents[0];
    const mem = (v: string) => a.groups.find((g: any) => g.value === v).sizing.memoryMiB;
    expect(mem('4')).toBeLessThan(mem('16'));
    expect(mem('16')).toBeLessThan(mem('32'));
    const names = a.profiles.map((p: any) => p.spec.name);
    expect(a.groups.find((g: any) => g.value === '4').profile).toBe(a.groups.find((g: any) => g.value === '8').profile);
    expect(names[0]).toBe('cpu-upto-15');
    expect(profileProblems(a.profiles.map((p: any) => p.spec))).toEqual([]);
    // the thin group is sized by the last range, which has no upper bound
    expect(a.groups.find((g: any) => g.value === '96').profile).toBe(names[names.length - 1]);
  });

  test('the OOM-killing group gets a limit above what the killed container needed', () => {
    const g48 = report.agents[0].groups.find((g: any) => g.value === '48');
    expect(g48.ooms).toBe(3);
    expect(g48.sizing.memoryLimitMiB * MIB).toBeGreaterThanOrEqual(oomBump(1500 * MIB));
  });

  test('text: the table, the thin group said, and the props to paste', () => {
    const r = run('size', '--series', 'series.json');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('agent logging/fluent-bit: grouped by karpenter.k8s.aws/instance-cpu; 5 of 6 groups with enough data');
    expect(r.stdout).toContain('too thin: 96: 1 pod (fewer than 3); sized by cpu-');
    expect(r.stdout).toMatch(/resourceProfiles: \[\n\s+\{ name: 'cpu-upto-15', nodes: ResourceProfileNodes\.instanceCpu\(\{ max: 15 \}\), resources: \{ cpuRequest: '\d+m'/);
  });

  test('the output is the same on every run', () => {
    expect(run('size', '--series', 'series.json').stdout).toBe(run('size', '--series', 'series.json').stdout);
  });
});

describe('size --series: other groupings', () => {
  test('--group-by nodepool: the general pool mixes sizes, and its profile is sized by its largest', () => {
    const r = run('size', '--series', 'series.json', '--group-by', 'nodepool', '--json');
    expect(r.code).toBe(0);
    const a = JSON.parse(r.stdout).agents[0];
    const general = a.groups.find((g: any) => g.value === 'general');
    expect(general.pods).toBe(12);
    expect(general.memory.max).toBeGreaterThan(700 * MIB);
    expect(a.profiles.map((p: any) => p.spec.values)).toEqual([['general'], ['large']]);
  });

  test('--group-by label=KEY with the inventory (--nodes) instead of kube_node_labels', () => {
    const r = run('size', '--series', 'series.json', '--group-by', `label=${TYPE}`, '--nodes', 'nodes.json');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ResourceProfileNodes.instanceTypes([');
  });
});

describe('size --markdown', () => {
  test('a comment within the limit, explaining each group in words', () => {
    const r = run('size', '--series', 'series.json', '--markdown');
    expect(r.code).toBe(0);
    expect(r.stdout.length).toBeLessThanOrEqual(MAX_MARKDOWN_CHARS);
    expect(r.stdout).toContain('memory request');
    expect(r.stdout).toContain('daily peaks from 4 pods');
    expect(r.stdout).toContain('too thin \\(1 pod \\(fewer than 3\\)\\)');
    expect(r.stdout).toContain('```ts\n// logging/fluent-bit');
  });
});

describe('docs/cli-size.md', () => {
  test('the worked example is what the command prints on the example fleet', () => {
    fs.writeFileSync(path.join(dir, 'tree.yaml'), EXAMPLE_TREE);
    const r = run('size', '--series', 'series.json', '--nodes', 'nodes.json', '--tree', 'tree.yaml');
    const doc = fs.readFileSync(path.join(REPO, 'docs', 'cli-size.md'), 'utf8');
    const shown = /\$ node-agents size --series usage\.json --nodes nodes\.json --tree dist\/\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(shown).toBe(r.stdout.trimEnd());
  });
});

describe('size --tree: what the change does', () => {
  test('nodes replaced and memory reserved before and after, per NodePool and instance type', () => {
    fs.writeFileSync(path.join(dir, 'tree.yaml'), EXAMPLE_TREE);
    const r = run('size', '--series', 'series.json', '--nodes', 'nodes.json', '--tree', 'tree.yaml');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/today \(--tree\): 20 nodes run it; the change replaces 20 pods \(requests or limit differ\); memory requested across the fleet 10\.0Gi → /);
    expect(r.stdout).toContain('logging/fluent-bit → profile cpu-upto-15: 100m/512Mi limit 1024Mi becomes');
    expect(r.stdout).toMatch(/general \/ m7i\.4xlarge: 4 nodes, memory requested per node 512Mi \(3\.1% of allocatable\) → \d+Mi/);
  });

  test('--nodepools: the agents\' overhead per NodePool and instance type, before → after, by the check plan --nodepools runs', () => {
    const pool = (name: string, cpus: string[]) => [
      'apiVersion: karpenter.sh/v1', 'kind: NodePool', `metadata: { name: ${name} }`, 'spec:', '  template:', '    spec:',
      '      nodeClassRef: { group: karpenter.k8s.aws, kind: EC2NodeClass, name: default }', '      requirements:',
      `      - { key: karpenter.k8s.aws/instance-cpu, operator: In, values: [${cpus.map((c) => `'${c}'`).join(', ')}] }`, '---',
    ].join('\n');
    const types = [[4, 'xlarge'], [8, '2xlarge'], [16, '4xlarge'], [32, '8xlarge'], [48, '12xlarge'], [96, '24xlarge']] as const;
    const catalog = ['apiVersion: node-agents.cdk8s.io/v1alpha1', 'kind: InstanceTypeCatalog', 'instanceTypes:',
      ...types.map(([cpu, size]) => `- { name: m7i.${size}, vcpu: ${cpu}, memoryMiB: ${cpu * 4096}, maxPods: 110 }`)].join('\n');
    fs.writeFileSync(path.join(dir, 'pools.yaml'), [pool('general', ['4', '8', '16']), pool('large', ['32', '48', '96']),
      'apiVersion: karpenter.k8s.aws/v1\nkind: EC2NodeClass\nmetadata: { name: default }\nspec: { role: r }\n---', catalog].join('\n'));
    fs.writeFileSync(path.join(dir, 'tree.yaml'), EXAMPLE_TREE);
    const r = run('size', '--series', 'series.json', '--nodes', 'nodes.json', '--tree', 'tree.yaml', '--nodepools', 'pools.yaml');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('NODE POOLS (--nodepools), every agent of the tree, before → after:');
    expect(r.stdout).toMatch(/NodePool general \/ m7i\.xlarge: the agents request 100m \(\d+(\.\d+)?%\) → 139m \(\d+(\.\d+)?%\) cpu, 512Mi \(\d+(\.\d+)?%\) → 423Mi/);
    expect(r.stdout).toMatch(/NodePool large \/ m7i\.24xlarge: the agents request 100m \(2\.5%\) → 677m \(16\.9%\) cpu, 512Mi \(3\.1%\) → 3\.8Gi \(23\.\d%\) memory/);
    expect(run('size', '--series', 'series.json', '--nodepools', 'pools.yaml').stderr).toContain('--nodepools goes with --tree');
  });

  test('--tree without --nodes is a usage error', () => {
    expect(run('size', '--series', 'series.json', '--tree', 'tree.yaml').code).toBe(2);
  });
});

describe('size: bounded and safe input', () => {
  const errorOf = (...argv: string[]) => {
    const r = run('size', ...argv);
    expect(r.code).toBe(2);
    return r.stderr;
  };

  test('usage errors', () => {
    expect(errorOf()).toContain('give --prometheus URL or --series FILE');
    expect(errorOf('--series', 'series.json', '--prometheus', 'http://127.0.0.1:1')).toContain('one of them');
    expect(errorOf('--series', 'series.json', '--window', '90d')).toContain('not a duration from 1m to 31d');
    expect(errorOf('--series', 'series.json', '--step', '1', '--window', '7d')).toContain('more than the 11000 Prometheus answers');
    expect(errorOf('--series', 'series.json', '--group-by', 'zone')).toContain('choose instance-size');
    expect(errorOf('--prometheus', 'file:///etc/hosts')).toContain('must be an http:// or https:// URL');
    expect(errorOf('--prometheus', 'http://u:p@127.0.0.1:1')).toContain('must not hold credentials');
    expect(errorOf('--series', 'series.json', '--save', 'x.json')).toContain('--save goes with --prometheus');
    expect(errorOf('--series', 'series.json', '--agent', 'logging/nope')).toContain('no such agent in the data; the agents are logging/fluent-bit');
  });

  test('a directory, a FIFO, bad JSON, an unknown key, a failed query, a missing query', () => {
    expect(errorOf('--series', '.')).toContain('not a regular file');
    fs.writeFileSync(path.join(dir, 'bad.json'), '{"memory": [1, 2');
    expect(errorOf('--series', 'bad.json')).toContain('bad.json: not valid JSON');
    fs.writeFileSync(path.join(dir, 'key.json'), '{"\\u001b[31mevil": {}}');
    const key = errorOf('--series', 'key.json');
    expect(key).toContain('unknown key');
    expect(key).not.toContain('\u001b');
    fs.writeFileSync(path.join(dir, 'failed.json'), '{"memory": {"status": "error", "errorType": "bad_data"}}');
    expect(errorOf('--series', 'failed.json')).toContain('memory: the query did not succeed: status is not "success" (bad_data)');
    fs.writeFileSync(path.join(dir, 'missing.json'), '{"memory": {"status": "success", "data": {"resultType": "matrix", "result": []}}}');
    expect(errorOf('--series', 'missing.json')).toContain('no pods, cpu query');
    fs.writeFileSync(path.join(dir, 'values.json'), '{"memory": {"status": "success", "data": {"resultType": "matrix", "result": [{"metric": {}, "values": [[1, 2]]}]}}}');
    expect(errorOf('--series', 'values.json')).toContain('values[0] must be [unix seconds, "value"]');
    const empty = '{"status": "success", "data": {"resultType": "matrix", "result": []}}';
    fs.writeFileSync(path.join(dir, 'empty.json'), `{"pods": ${empty}, "memory": ${empty}, "cpu": ${empty}}`);
    expect(errorOf('--series', 'empty.json')).toContain('no usage of a DaemonSet pod on a known node (0 series not joined)');
  });

  test('names from the input are escaped for the terminal and for markdown', () => {
    const nodes = fleet().slice(0, 4).map((n) => ({ ...n, labels: { ...n.labels, team: 'a\u001b[2J<b>@org/team</b>' } }));
    fs.writeFileSync(path.join(dir, 'hostile.json'), JSON.stringify(savedAnswers({ nodes, start: START, samples: 300, stepSeconds: 300 })));
    const text = run('size', '--series', 'hostile.json', '--group-by', 'label=team');
    expect(text.code).toBe(0);
    expect(text.stdout).not.toContain('\u001b');
    const md = run('size', '--series', 'hostile.json', '--group-by', 'label=team', '--markdown');
    expect(md.stdout).not.toContain('<b>');
    expect(md.stdout).not.toMatch(/(^|[^\\])@org/);
  });
});
