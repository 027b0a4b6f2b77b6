import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../src/cli/run';
import { REPO } from '../util/paths';

const ROOT = REPO;
const NODES = 'examples/inventories/mixed-cluster.json';
const CLUSTER = 'test/fixtures/coverage/cluster';
const FIXTURES = 'test/fixtures/coverage';

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    cwd: ROOT,
  });
  return { code, stdout, stderr };
}

/** A path inside a fresh temporary directory: never exists, whatever the working tree holds. */
const MISSING = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-missing-')), 'no-such-dir/');
afterAll(() => fs.rmSync(path.dirname(MISSING), { recursive: true, force: true }));

/** No error output may carry a stack trace. */
function expectNoStack(text: string) {
  expect(text).not.toMatch(/\n\s+at /);
}

describe('node-agents (no command, help, unknown command)', () => {
  test('no command: usage on stderr, exit 2', () => {
    const r = run();
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Usage: node-agents <command>');
  });

  test('--help: usage on stdout, exit 0', () => {
    const r = run('--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('coverage');
    expect(r.stdout).toContain('estimate');
    expect(r.stdout).toContain('label');
  });

  test.each(['coverage', 'label', 'estimate', 'plan'])('%s --help: the command\'s flags, exit 0', (command) => {
    const r = run(command, '--help');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: node-agents ${command}`);
    expect(r.stdout).toContain('--nodes FILE');
    expect(run(command, '-h').stdout).toBe(r.stdout);
  });

  test('unknown command: exit 2, lists the commands', () => {
    const r = run('cover');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('node-agents: unknown command "cover"; the commands are coverage, label, estimate, plan, doctor, size (node-agents --help)\n');
  });
});

describe('coverage', () => {
  test('the mixed cluster: problems found, exit 1, aligned tables', () => {
    const r = run('coverage', '--nodes', NODES, CLUSTER);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('Nodes: 23 from examples/inventories/mixed-cluster.json (3 control-plane, 2 non-linux, 1 virtual, 1 NotReady, 1 cordoned)');
    expect(r.stdout).toContain('Manifests: 9 DaemonSets in 5 agents; also ConfigMap 1, Service 1, ServiceAccount 1');
    expect(r.stdout).toContain('PROBLEMS (6)');
    expect(r.stdout).toContain('[gap] node-exporter is missing from 2 nodes (spot-a-1, spot-c-1): monitoring/node-exporter: taint spot=true:NoExecute not tolerated');
    expect(r.stdout).toContain('[gap] dcgm-exporter is missing from 2 nodes (gpu-a-1, gpu-b-1)');
    expect(r.stdout).toContain('[duplicate] promtail runs twice on 1 node (worker-a-1)');
    expect(r.stdout).toContain('[empty-wave] logging/fluent-bit-wave-2');
    expect(r.stdout).toContain('[host-port-clash] host port TCP/9100');
    expect(r.stdout).toContain('worker-c-4 cordoned: DaemonSet pods still run there');

    // the agent table: every row's columns start where the header's do
    const lines = r.stdout.split('\n');
    const header = lines.findIndex((l) => l.startsWith('AGENT '));
    const columns = ['DAEMONSETS', 'COVERED', 'DUPLICATE', 'GAP'].map((c) => lines[header].indexOf(c));
    for (const row of lines.slice(header + 1, header + 6)) {
      for (const column of columns) expect(row[column - 1]).toBe(' ');
      for (const column of columns) expect(row[column]).toMatch(/\d/);
    }
    expect(lines.slice(header + 1, header + 6).map((l) => l.split(/\s+/)[0])).toEqual(['dcgm-exporter', 'fluent-bit', 'node-exporter', 'nvidia-driver', 'promtail']);
    // the node table marks the spot gap and the Windows exclusion
    const spot = lines.find((l) => l.startsWith('spot-a-1 '))!;
    expect(spot.split(/\s+/)).toEqual(['spot-a-1', 'eu-west-1a', 'Ready', '-', 'fleet', 'GAP', '-', 'ok']);
    expect(lines.find((l) => l.startsWith('win-a-1 '))!.split(/\s+/).slice(3)).toEqual(['excluded', 'excluded', 'excluded', 'excluded', 'excluded']);
    expect(lines.every((l) => l === l.trimEnd())).toBe(true);
  });

  test('a clean agent: exit 0', () => {
    const r = run('coverage', '--nodes', NODES, `${FIXTURES}/clean/node-exporter.yaml`);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('No problems: every node each agent targets is covered exactly once.');
  });

  test('--json: the full report, same exit code', () => {
    const r = run('coverage', '--nodes', NODES, CLUSTER, '--json');
    expect(r.code).toBe(1);
    const json = JSON.parse(r.stdout);
    expect(json.summary).toEqual({ nodes: 23, daemonSets: 9, agents: 5, problems: 6, otherKinds: { ConfigMap: 1, Service: 1, ServiceAccount: 1 } });
    expect(json.problems.map((p: { kind: string }) => p.kind)).toEqual(['duplicate', 'empty-wave', 'gap', 'gap', 'host-port-clash', 'unsupported-node']);
    const exporter = json.agents.find((a: { agent: string }) => a.agent === 'node-exporter');
    const spot = exporter.nodes.find((n: { node: string }) => n.node === 'spot-a-1');
    expect(spot).toMatchObject({ status: 'gap', owners: [], placements: [{ daemonSet: 'monitoring/node-exporter', reasons: ['taint spot=true:NoExecute not tolerated'] }] });
    // the fix as a field of its own, on the node and on the problem, not only inside the message
    const fix = 'tolerate it in node-exporter: prop `tolerations` [{ key: "spot", operator: Exists, effect: NoExecute }] (or `tolerateAllTaints: true`); '
      + 'or, when the taint keeps the agent off these nodes on purpose, pass --allow-taint spot';
    expect(spot.fix).toBe(fix);
    expect(json.problems.find((p: { kind: string; agent: string }) => p.kind === 'gap' && p.agent === 'node-exporter').fix).toBe(fix);
    expect(json.daemonSets.find((d: { id: string }) => d.id === 'logging/fluent-bit-wave-2')).toMatchObject({ rolloutGroup: 'wave-2', coveredCount: 0 });
  });

  test('--node explains one node for every agent', () => {
    const r = run('coverage', '--nodes', NODES, CLUSTER, '--node', 'gpu-a-1');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('Node gpu-a-1: Ready, zone eu-west-1a');
    expect(r.stdout).toContain('taints: nvidia.com/gpu=present:NoSchedule');
    expect(r.stdout).toContain('dcgm-exporter: gap\n  gpu-operator/dcgm-exporter: taint nvidia.com/gpu=present:NoSchedule not tolerated');
    expect(r.stdout).toContain('nvidia-driver: covered (gpu-operator/nvidia-driver-daemonset)');
    // a gap's reason once, then its fix
    const spot = run('coverage', '--nodes', NODES, CLUSTER, '--node', 'spot-a-1').stdout;
    expect(spot).toContain('node-exporter: gap\n  monitoring/node-exporter: taint spot=true:NoExecute not tolerated\n'
      + '  fix: tolerate it in node-exporter: prop `tolerations` [{ key: "spot", operator: Exists, effect: NoExecute }]');
    expect(spot.split('monitoring/node-exporter: taint spot=true:NoExecute not tolerated')).toHaveLength(2);
    const json = JSON.parse(run('coverage', '--nodes', NODES, CLUSTER, '--node', 'gpu-a-1', '--json').stdout);
    expect(json.nodes.map((n: { name: string }) => n.name)).toEqual(['gpu-a-1']);
    expect(run('coverage', '--nodes', NODES, CLUSTER, '--node', 'nope')).toMatchObject({ code: 2, stderr: expect.stringContaining('--node nope: no such node') });
  });

  test('--agent restricts the report (problems touching the agent stay)', () => {
    const r = run('coverage', '--nodes', NODES, CLUSTER, '--agent', 'node-exporter', '--json');
    const json = JSON.parse(r.stdout);
    expect(json.agents.map((a: { agent: string }) => a.agent)).toEqual(['node-exporter']);
    expect(json.problems.map((p: { kind: string }) => p.kind)).toEqual(['gap', 'host-port-clash']);
    expect(run('coverage', '--nodes', NODES, CLUSTER, '--agent', 'fluent-bit', '--agent', 'nvidia-driver').code).toBe(1);
    expect(run('coverage', '--nodes', NODES, CLUSTER, '--agent', 'nvidia-driver').code).toBe(0);
    const bad = run('coverage', '--nodes', NODES, CLUSTER, '--agent', 'fluentbit');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--agent fluentbit: no such agent; the manifests hold dcgm-exporter, fluent-bit, node-exporter, nvidia-driver, promtail');
  });

  test('--allow-taint turns the spot gap into an intended exclusion', () => {
    const json = JSON.parse(run('coverage', '--nodes', NODES, CLUSTER, '--allow-taint', 'spot', '--json').stdout);
    expect(json.problems.filter((p: { kind: string; agent: string }) => p.kind === 'gap').map((p: { agent: string }) => p.agent)).toEqual(['dcgm-exporter']);
  });

  test.each([
    ['an unknown flag', ['--nodes', NODES, CLUSTER, '--frobnicate'], 'node-agents coverage: unknown flag --frobnicate\nRun `node-agents coverage --help` for usage.\n'],
    ['a flag without its value', ['--nodes'], 'node-agents coverage: flag --nodes needs a value\n'],
    ['a boolean flag with a value', ['--json=yes', '--nodes', NODES, CLUSTER], 'node-agents coverage: flag --json takes no value\n'],
    ['no --nodes', [CLUSTER], 'node-agents coverage: --nodes is required: the node inventory (kubectl get nodes -o json > nodes.json)\n'],
    ['no manifests', ['--nodes', NODES], 'no manifests given: pass YAML files or directories'],
    ['an unreadable node file', ['--nodes', 'missing.json', CLUSTER], 'node-agents coverage: missing.json: cannot read (no such file or directory)\n'],
    ['a node file that is not JSON', ['--nodes', `${FIXTURES}/not-json.json`, CLUSTER], `node-agents coverage: ${FIXTURES}/not-json.json: not valid JSON (it ends before the JSON does)`],
    ['a node file that is not a NodeList', ['--nodes', `${FIXTURES}/pod-list.json`, CLUSTER], `node-agents coverage: ${FIXTURES}/pod-list.json: not a NodeList: kind is "PodList"`],
    ['a node file that is a manifest', ['--nodes', `${FIXTURES}/clean/node-exporter.yaml`, CLUSTER], 'not valid JSON'],
    ['manifests without DaemonSets', ['--nodes', NODES, `${FIXTURES}/no-daemonsets.yaml`],
      `node-agents coverage: no DaemonSet in ${FIXTURES}/no-daemonsets.yaml (found only: ConfigMap 1); pass the synthesized manifests of your node agents\n`],
    ['invalid YAML', ['--nodes', NODES, `${FIXTURES}/invalid.yaml`], `node-agents coverage: ${FIXTURES}/invalid.yaml: not valid YAML (BLOCK_AS_IMPLICIT_KEY at line 4, column 9)`],
    ['an invalid --label-key', ['--nodes', NODES, CLUSTER, '--label-key', 'bad key!'], 'node-agents coverage: --label-key: "bad key!" is not a valid label key'],
    ['an invalid --allow-taint key', ['--nodes', NODES, CLUSTER, '--allow-taint', 'spot=true'], 'node-agents coverage: --allow-taint: "spot=true" is not a valid label key'],
    // a path made for the test, so the result never depends on which build outputs exist
    ['a missing manifest path', ['--nodes', NODES, MISSING], `node-agents coverage: ${MISSING}: cannot read (no such file or directory)\n`],
  ])('bad input: %s → exit 2, a clear message, no stack', (_name, argv, message) => {
    const r = run('coverage', ...argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(message);
    expectNoStack(r.stderr);
  });
});

describe('estimate', () => {
  let dir: string;
  beforeAll(() => {
    // 500 nodes, maxUnavailable 1, 30 s per pod: about 4 h 10 min
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-estimate-'));
    const items = Array.from({ length: 500 }, (_, i) => ({ kind: 'Node', metadata: { name: `node-${String(i).padStart(3, '0')}`, labels: { 'kubernetes.io/os': 'linux' } } }));
    fs.writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    fs.writeFileSync(path.join(dir, 'ds.yaml'), [
      'apiVersion: apps/v1', 'kind: DaemonSet', 'metadata: {name: log-collector, namespace: observability, labels: {app.kubernetes.io/name: log-collector}}',
      'spec:', '  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 1, maxSurge: 0}}',
      '  selector: {matchLabels: {app.kubernetes.io/name: log-collector}}',
      '  template: {metadata: {labels: {app.kubernetes.io/name: log-collector}}, spec: {containers: [{name: c, image: fluent/fluent-bit:2.2.2}]}}',
    ].join('\n'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('reproduces the seed: 500 nodes, maxUnavailable 1, 30 s → 4 h 10 min', () => {
    const r = run('estimate', '--nodes', path.join(dir, 'nodes.json'), path.join(dir, 'ds.yaml'), '--pod-seconds', '30');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('log-collector: 500 nodes, 1 wave with pods, total 4 h 10 min');
    const row = r.stdout.split('\n').find((l) => l.includes('observability/log-collector'))!;
    expect(row.trim().split(/\s{2,}/)).toEqual(['1', 'observability/log-collector', '-', '500', '100%', '100%', 'maxUnavailable 1', '1', '500', '30 s', '4 h 10 min']);
  });

  test('the pod cycle from its parts; --pod-seconds and the parts are exclusive', () => {
    const json = JSON.parse(run('estimate', '--nodes', path.join(dir, 'nodes.json'), path.join(dir, 'ds.yaml'), '--pull-seconds', '20', '--json').stdout);
    expect(json.podSeconds).toBe(20 + 5 + 10 + 5);
    expect(json.agents[0].totalSeconds).toBe(500 * 40);
    const both = run('estimate', '--nodes', NODES, CLUSTER, '--pod-seconds', '30', '--ready-seconds', '5');
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--pod-seconds is the sum of the parts: give either it or --ready-seconds');
  });

  test('the mixed cluster: waves with blast radius, OnDelete said so, bake between waves', () => {
    const r = run('estimate', '--nodes', NODES, CLUSTER, '--bake-seconds', '300');
    // promtail (maxUnavailable 1) covers the NotReady worker-b-5: its new pod never turns available and holds the
    // whole budget (update.go rollingUpdate), as plan says of the same DaemonSet
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('! logging/promtail: the stuck nodes fill the whole budget of 1: the controller replaces none of its 20 pods on Ready nodes');
    expect(r.stdout).toContain('fluent-bit: 19 nodes, 3 waves with pods, total 14 min 30 s (2 bakes of 5 min included)');
    expect(r.stdout).toContain('nvidia-driver: 2 nodes, 1 wave with pods, no automatic rollout\n');
    expect(r.stdout).toContain('gpu-operator/nvidia-driver-daemonset: OnDelete: no automatic rollout');
    const canary = r.stdout.split('\n').find((l) => l.includes('logging/fluent-bit-canary'))!;
    expect(canary.trim().split(/\s{2,}/)).toEqual(['1', 'logging/fluent-bit-canary', 'canary', '1', '5.3%', '5.3%', 'maxUnavailable 1', '1', '1', '30 s', '30 s']);
    const fleet = r.stdout.split('\n').find((l) => l.includes(' logging/fluent-bit '))!;
    // the untolerated NotReady worker-b-5's old pod goes in the first sync and counts in numUnavailable there (kubernetes#123233)
    expect(fleet.trim().split(/\s{2,}/)).toEqual(['4', 'logging/fluent-bit', 'fleet', '15', '78.9%', '100%', 'maxUnavailable 25%', '3, then 4', '4', '30 s', '2 min']);
  });

  test('--agent and --json', () => {
    const json = JSON.parse(run('estimate', '--nodes', NODES, CLUSTER, '--agent', 'node-exporter', '--json').stdout);
    expect(json.agents.map((a: { agent: string }) => a.agent)).toEqual(['node-exporter']);
    // 10% of 18 is 2 at once, and the NotReady worker-b-5 (tolerated) holds one of them for good: 17 batches of 1,
    // the figure plan gives for the same DaemonSet (one model: estimate/rollout-model.ts)
    expect(json.agents[0].waves[0]).toMatchObject({ nodes: 18, batches: 17, seconds: 510, pace: { batch: 2, maxUnavailable: '10%' } });
    expect(json.agents[0].waves[0].rollout).toMatchObject({ paced: 17, stuck: ['worker-b-5'], podsAtOnce: 1, firstBatchSize: 1 });
  });

  test.each([
    [['--pod-seconds', 'soon'], 'node-agents estimate: --pod-seconds "soon" is not a plain decimal number: write the number of seconds in decimal digits, such as 30 or 2.5 (no unit, sign, exponent or hex)\n'],
    [['--bake-seconds=-5'], '--bake-seconds "-5" is negative: give 0 or more seconds'],
    [['--pod-seconds', '0x10'], '--pod-seconds "0x10" is not a plain decimal number: write the number of seconds in decimal digits'],
    [['--bake-seconds', '1e308'], '--bake-seconds "1e308" is not a plain decimal number'],
    [['--bake-seconds', '1e3'], '--bake-seconds "1e3" is not a plain decimal number'],
    [['--pod-seconds', '30s'], '--pod-seconds "30s" has a unit: write the number of seconds in decimal digits'],
    [['--pod-seconds', ' 30'], '--pod-seconds " 30" has spaces around it'],
    [['--pod-seconds', ''], '--pod-seconds "" is empty'],
    [['--pod-seconds', '+30'], '--pod-seconds "+30" is not a plain decimal number'],
    [['--pod-seconds', '.5'], '--pod-seconds ".5" is not a plain decimal number'],
    [['--pod-seconds', 'Infinity'], '--pod-seconds "Infinity" is not a plain decimal number'],
    [['--bake-seconds', '604801'], '--bake-seconds "604801" is more than 7 days (604800 seconds), the most it takes; check the value is in seconds'],
    [['--pull-seconds', '99999999999999999999'], '--pull-seconds "99999999999999999999" is more than 7 days'],
    [['--bake-seconds', '-5'], 'flag --bake-seconds needs a value; to give one starting with "-", write --bake-seconds=VALUE'],
    [['--agent', 'nope'], '--agent nope: no such agent'],
    [['--max-surge', '1'], 'unknown flag --max-surge'],
  ])('bad usage %j → exit 2', (flags, message) => {
    const r = run('estimate', '--nodes', NODES, CLUSTER, ...flags);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expectNoStack(r.stderr);
  });

  test('plain decimal seconds up to 7 days are accepted', () => {
    const at = (flags: string[]) => JSON.parse(run('estimate', '--nodes', path.join(dir, 'nodes.json'), path.join(dir, 'ds.yaml'), ...flags, '--json').stdout);
    expect(at(['--pod-seconds', '2.5']).podSeconds).toBe(2.5);
    expect(at(['--pod-seconds', '0']).podSeconds).toBe(0);
    expect(at(['--pod-seconds', '030']).podSeconds).toBe(30);
    expect(at(['--pod-seconds', '604800']).podSeconds).toBe(604800);
  });

  test('a strategy the API server rejects: exit 1 with the reason', () => {
    const file = path.join(dir, 'surge-only.yaml');
    fs.writeFileSync(file, 'kind: DaemonSet\nmetadata: {name: x}\nspec: {updateStrategy: {rollingUpdate: {maxSurge: 1}}, template: {spec: {containers: []}}}\n');
    const r = run('estimate', '--nodes', NODES, file);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('! default/x: the API server rejects this updateStrategy: maxSurge is set but maxUnavailable defaults to 1');
  });
});

describe('label', () => {
  const base = ['label', '--nodes', NODES, '--wave', 'canary=0.1', '--wave', 'wave-1=20%'];

  test('kubectl label commands for every linux node; Windows and virtual nodes left out', () => {
    const r = run(...base);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^# 20 nodes: canary 2, wave-1 4, fleet 14; left out \(Windows\/virtual\): fargate-ip-/);
    expect(lines[1]).toBe('# kept in the fleet, out of every wave (the rollout of a wave would wait on them): spot-a-1 (NoExecute taint spot=true:NoExecute), '
      + 'spot-c-1 (NoExecute taint spot=true:NoExecute), worker-b-5 (NotReady (Ready=False)), worker-c-4 (cordoned (spec.unschedulable))');
    const commands = lines.slice(2);
    expect(commands).toHaveLength(20);
    expect(commands.filter((c) => c.startsWith('kubectl label node --overwrite -- ') && c.endsWith('=canary'))).toHaveLength(2);
    expect(commands.filter((c) => c.startsWith('kubectl label node --overwrite -- ') && c.endsWith('=wave-1'))).toHaveLength(4);
    expect(commands.filter((c) => c.endsWith(' node-agents.cdk8s.io/rollout-wave-'))).toHaveLength(14);
    expect(commands.some((c) => c.includes('win-a-1') || c.includes('fargate'))).toBe(false);
    // control-plane nodes are never canaries
    expect(commands.filter((c) => / -- cp-/.test(c)).every((c) => !c.includes('=canary'))).toBe(true);
    expect(run(...base).stdout).toBe(r.stdout);
  });

  test('--diff prints only the changes against the labels nodes carry', () => {
    const all = run(...base).stdout.trim().split('\n').filter((l) => !l.startsWith('#'));
    const diff = run(...base, '--diff').stdout.trim().split('\n').filter((l) => !l.startsWith('#'));
    const assigned: Record<string, string | null> = JSON.parse(run(...base, '--json').stdout).byNode;
    const inventory = JSON.parse(fs.readFileSync(path.join(ROOT, NODES), 'utf-8')).items as { metadata: { name: string; labels: Record<string, string> } }[];
    const current = new Map(inventory.map((n) => [n.metadata.name, n.metadata.labels['node-agents.cdk8s.io/rollout-wave'] ?? null]));
    const changed = Object.keys(assigned).filter((name) => assigned[name] !== current.get(name));
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThan(Object.keys(assigned).length);
    expect(diff).toEqual(all.filter((c) => changed.includes(c.split(' -- ')[1].split(' ')[0])));
  });

  test('--format json: the assignment', () => {
    const json = JSON.parse(run(...base, '--format', 'json').stdout);
    expect(json.labelKey).toBe('node-agents.cdk8s.io/rollout-wave');
    expect(json.waves.canary).toHaveLength(2);
    expect(json.fleet).toHaveLength(14);
    expect(Object.keys(json.byNode)).toHaveLength(20);
    expect(json.leftOut).toEqual(['fargate-ip-10-0-12-34.eu-west-1.compute.internal', 'win-a-1', 'win-b-1']);
    expect(JSON.parse(run(...base, '--all-nodes', '--json').stdout).leftOut).toEqual([]);
  });

  // 20 Linux nodes: 3 control-plane and 4 a rollout cannot count on (NotReady, cordoned, 2 spot NoExecute) stay out of the first wave
  test.each([['canary=100%', 13], ['canary=1', 13], ['canary=.5', 10], ['canary=50.0%', 10], ['canary=0.05', 1]])('the share %s is accepted (control-plane and unready nodes stay out of the first wave)', (wave, count) => {
    const r = run('label', '--nodes', NODES, '--wave', wave, '--json');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).waves.canary).toHaveLength(count);
  });

  test('valid label keys pass: a prefixed key at the length limits, a plain name', () => {
    const key = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}/${'N'.repeat(61)}_9`;
    expect(key.split('/')[0]).toHaveLength(253);
    for (const k of [key, 'wave', 'node.cluster.x-k8s.io/wave']) {
      const r = run(...base, '--label-key', k);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`--overwrite -- \\S+ ${k.replace(/\./g, '\\.')}=canary\n`));
    }
  });

  describe('the printed commands are safe to run in a shell', () => {
    let dir: string;
    let inventory: string;
    let canary: string;
    // odd but valid names (the API server refuses the others: see test/cli/cli-hostile-input.test.ts); the
    // commands must pass each one through intact
    const names = ['plain-1.example.com', 'a', '0', '0-0', 'x.y-z.9', 'ip-10-0-1-2.eu-west-1.compute.internal', 'constructor', 'tostring'];
    beforeAll(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-quote-'));
      canary = path.join(dir, 'pwned');
      const items = [
        ...names.map((name) => ({ kind: 'Node', metadata: { name, labels: { 'kubernetes.io/os': 'linux' } } })),
        // left out, so named in the summary comment
        { kind: 'Node', metadata: { name: 'win-1', labels: { 'kubernetes.io/os': 'windows' } } },
      ];
      inventory = path.join(dir, 'nodes.json');
      fs.writeFileSync(inventory, JSON.stringify({ apiVersion: 'v1', kind: 'List', items }));
    });
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    /** Runs the CLI's output in bash with kubectl replaced by a function printing its argv (NUL-separated, one record per call). */
    function runInBash(script: string): string[][] {
      const fake = 'kubectl() { printf \'%s\\0\' "$@"; printf \'\\1\'; }\n';
      const syntax = spawnSync('bash', ['-n'], { input: script, encoding: 'utf-8' });
      expect(syntax.stderr).toBe('');
      expect(syntax.status).toBe(0);
      const r = spawnSync('bash', ['-s'], { input: fake + script, encoding: 'utf-8', cwd: dir });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      return r.stdout.split('\u0001').slice(0, -1).map((record) => record.split('\0').slice(0, -1));
    }

    test.each([[[]], [['--label-key', 'example.com/wave']]])('every node gets exactly its argv, nothing else runs (%j)', (extra) => {
      const argv = ['label', '--nodes', inventory, '--wave', 'canary=0.2', '--wave', 'wave-1=30%', ...extra];
      const r = run(...argv);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const { byNode, labelKey } = JSON.parse(run(...argv, '--json').stdout) as { byNode: Record<string, string | null>; labelKey: string };
      const expected = Object.keys(byNode).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((name) => (byNode[name] === null
        ? ['label', 'node', '--', name, `${labelKey}-`]
        : ['label', 'node', '--overwrite', '--', name, `${labelKey}=${byNode[name]}`]));
      expect(expected).toHaveLength(names.length);
      expect(Object.values(byNode).filter((w) => w !== null).length).toBeGreaterThan(0);
      expect(runInBash(r.stdout)).toEqual(expected);
      expect(fs.existsSync(canary)).toBe(false);
      // --diff against nodes that carry no wave label: the wave nodes' commands, quoted alike
      expect(runInBash(run(...argv, '--diff').stdout)).toEqual(expected.filter((a) => a.length === 6));
      expect(fs.existsSync(canary)).toBe(false);
    });

    test('plain names and keys stay unquoted', () => {
      const r = run(...base);
      expect(r.stdout).not.toContain("'");
      expect(r.stdout).toMatch(/^kubectl label node (--overwrite )?-- worker-a-1 node-agents\.cdk8s\.io\/rollout-wave/m);
    });

    test('the quoting rule: nothing needs quotes in valid names; a node named constructor is labelled like any other', () => {
      const r = run('label', '--nodes', inventory, '--wave', 'canary=1');
      expect(r.stdout).toContain('kubectl label node --overwrite -- constructor node-agents.cdk8s.io/rollout-wave=canary\n');
      expect(r.stdout).toContain('kubectl label node --overwrite -- plain-1.example.com node-agents.cdk8s.io/rollout-wave=canary\n');
    });
  });

  test('--format nodepool: the label per wave for node-pool templates', () => {
    const r = run(...base, '--format', 'nodepool', '--label-key', 'node.cluster.x-k8s.io/wave');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('# wave canary: 2 nodes');
    expect(r.stdout).toContain('labels:\n  node.cluster.x-k8s.io/wave: canary\n');
    expect(r.stdout).toContain('# fleet: 14 nodes: node pools carry no node.cluster.x-k8s.io/wave label');
  });

  test.each([
    [['--nodes', NODES], '--wave is required'],
    [['--nodes', NODES, '--wave', 'canary'], '--wave canary: write NAME=FRACTION, e.g. canary=0.02 or canary=2%'],
    [['--nodes', NODES, '--wave', 'canary=0.6', '--wave', 'wave-1=0.6'], '--wave canary=0.6 --wave wave-1=0.6: the fractions add up to 1.2, more than 1 (all nodes)'],
    [['--nodes', NODES, '--wave', 'canary=60%', '--wave', 'wave-1=0.7'], '--wave canary=60% --wave wave-1=0.7: the fractions add up to 1.3, more than 1'],
    [['--nodes', NODES, '--wave', 'canary=0.1', '--wave', 'canary=0.2'], '--wave canary: the wave is given twice'],
    // the share: every message echoes what was typed and says what is allowed
    [['--nodes', NODES, '--wave', 'canary=150%'],
      'node-agents label: --wave canary=150%: 150% is more than 100%; give the share of nodes as a fraction more than 0 and at most 1, such as 0.02, or as a percentage such as 2%\n'],
    [['--nodes', NODES, '--wave', 'canary=-0.1'], '--wave canary=-0.1: -0.1 is negative; give the share of nodes as a fraction more than 0 and at most 1'],
    [['--nodes', NODES, '--wave', 'canary=1.5'], '--wave canary=1.5: 1.5 is more than 1 (all nodes); for 1.5 percent write canary=1.5%; give the share'],
    [['--nodes', NODES, '--wave', 'canary=250'], '--wave canary=250: 250 is more than 1 (all nodes); give the share'],
    [['--nodes', NODES, '--wave', 'canary=0'], '--wave canary=0: 0 leaves the wave without nodes; give the share'],
    [['--nodes', NODES, '--wave', 'canary=0%'], '--wave canary=0%: 0% leaves the wave without nodes'],
    [['--nodes', NODES, '--wave', 'canary=two'], '--wave canary=two: "two" is not a decimal fraction or a percentage; give the share'],
    [['--nodes', NODES, '--wave', 'canary=1e-2'], '--wave canary=1e-2: "1e-2" is not a decimal fraction or a percentage; give the share'],
    [['--nodes', NODES, '--wave', 'canary='], '--wave canary=: the share is missing; give the share'],
    [['--nodes', NODES, '--wave', '=0.1'], '--wave =0.1: the wave name is missing'],
    [['--nodes', NODES, '--wave', 'fleet=0.1'], '"fleet" is reserved'],
    [['--nodes', NODES, '--wave', 'canary=0.1', '--format', 'yaml'], '--format yaml: use one of commands, json, nodepool'],
    [['--nodes', NODES, '--wave', 'canary=0.1', 'extra'], 'unexpected argument "extra"'],
    [['--nodes', `${FIXTURES}/pod-list.json`, '--wave', 'canary=0.1'], 'not a NodeList'],
    // label keys: optional DNS-1123 subdomain prefix (at most 253) and "/", then a name of at most 63
    [['--nodes', NODES, '--wave', 'canary=0.1', '--label-key', 'bad key!'],
      'node-agents label: --label-key: "bad key!" is not a valid label key (optional DNS prefix and "/", then at most 63 letters, digits, "-", "_" or ".")\n'],
    [['--nodes', NODES, '--wave', 'canary=0.1', '--label-key', 'Example.com/wave'], '--label-key: "Example.com/wave" is not a valid label key'],
    [['--nodes', NODES, '--wave', 'canary=0.1', '--label-key', 'a/b/c'], '--label-key: "a/b/c" is not a valid label key'],
    [['--nodes', NODES, '--wave', 'canary=0.1', '--label-key', 'x/'], '--label-key: "x/" is not a valid label key'],
    [['--nodes', NODES, '--wave', 'canary=0.1', '--label-key', 'w'.repeat(64)], `--label-key: "${'w'.repeat(64)}" is not a valid label key`],
    [['--nodes', NODES, '--wave', 'canary=0.1', '--label-key', `${'p'.repeat(254)}/wave`], 'is not a valid label key'],
    [['--nodes', NODES, '--wave', 'canary=0.1', '--spread-by', 'zone;rm'], '--spread-by: "zone;rm" is not a valid label key'],
    // wave names become label values and DaemonSet name suffixes
    [['--nodes', NODES, '--wave', 'Bad_Wave!=0.1'], '--wave Bad_Wave!=0.1: "Bad_Wave!" is not a DNS-1123 label'],
    [['--nodes', NODES, '--wave', '$(touch x)=0.1'], '--wave $(touch x)=0.1: "$(touch x)" is not a DNS-1123 label'],
    [['--nodes', NODES, '--wave', `${'w'.repeat(64)}=0.1`], 'is not a DNS-1123 label'],
  ])('bad usage %j → exit 2', (flags, message) => {
    const r = run('label', ...flags);
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expectNoStack(r.stderr);
  });
});

describe('an empty node list: every command exits 2 with the same message', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-empty-'));
    fs.writeFileSync(path.join(dir, 'empty.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [] }));
    const windows = (name: string) => ({ kind: 'Node', metadata: { name, labels: { 'kubernetes.io/os': 'windows' } } });
    fs.writeFileSync(path.join(dir, 'windows.json'), JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [windows('win-2'), windows('win-1')] }));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test.each([
    ['coverage', [CLUSTER]],
    ['label', ['--wave', 'canary=0.1']],
    ['estimate', [CLUSTER]],
  ])('%s', (command, rest) => {
    const file = path.join(dir, 'empty.json');
    const r = run(command, '--nodes', file, ...rest);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`node-agents ${command}: ${file}: the node list is empty (no items); pass the output of \`kubectl get nodes -o json\` for the cluster (check the kubectl context)\n`);
  });

  test('label: only Windows/virtual nodes is nothing to label, exit 2; --all-nodes labels them', () => {
    const file = path.join(dir, 'windows.json');
    const r = run('label', '--nodes', file, '--wave', 'canary=0.5');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`node-agents label: ${file}: all 2 nodes are Windows or virtual; nothing to label (win-1, win-2); --all-nodes assigns them too\n`);
    expect(run('label', '--nodes', file, '--wave', 'canary=0.5', '--all-nodes')).toMatchObject({ code: 0, stderr: '' });
    const one = path.join(dir, 'one.json');
    fs.writeFileSync(one, JSON.stringify({ kind: 'List', items: [{ kind: 'Node', metadata: { name: 'fg-1', labels: { 'eks.amazonaws.com/compute-type': 'fargate' } } }] }));
    expect(run('label', '--nodes', one, '--wave', 'canary=0.5')).toMatchObject({
      code: 2, stdout: '', stderr: `node-agents label: ${one}: the only node (fg-1) is Windows or virtual; nothing to label; --all-nodes assigns it too\n`,
    });
  });
});

describe('the built executable', () => {
  const bin = path.join(ROOT, 'lib', 'cli', 'main.js');
  const built = fs.existsSync(bin);
  (built ? test : test.skip)(built ? 'lib/cli/main.js runs as the node-agents bin'
    : 'SKIPPED: lib/cli/main.js is not built yet (npx projen compile builds it)', () => {
    expect(fs.readFileSync(bin, 'utf-8').startsWith('#!/usr/bin/env node')).toBe(true);
    const r = spawnSync(process.execPath, [bin, 'coverage', '--nodes', NODES, CLUSTER], { cwd: ROOT, encoding: 'utf-8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('PROBLEMS (6)');
    const bad = spawnSync(process.execPath, [bin, 'coverage', '--nodes', 'missing.json', CLUSTER], { cwd: ROOT, encoding: 'utf-8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe('node-agents coverage: missing.json: cannot read (no such file or directory)\n');
  });
});

describe('label: nodes that must not gate a wave, empty waves, stale labels, GPU driver nodes', () => {
  const GPU_NODES = 'test/fixtures/label/gpu-cluster.json';
  const GPU_DRIVER = 'test/fixtures/label/gpu-driver-waves.yaml';
  const KEY = 'node-agents.cdk8s.io/rollout-wave';
  const commandsOf = (stdout: string) => stdout.split('\n').filter((l) => l !== '' && !l.startsWith('#'));

  test('NotReady and cordoned nodes join no wave; a wave label they carry is removed', () => {
    const r = run('label', '--nodes', GPU_NODES, '--wave', 'canary=100%', '--json');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.stdout);
    expect(json.heldOut).toEqual({ 'gpu-c-2': ['NotReady (Ready=False)'], 'worker-b-1': ['cordoned (spec.unschedulable)'] });
    expect(json.byNode['gpu-c-2']).toBeNull();
    expect(json.byNode['worker-b-1']).toBeNull();
    expect(json.waves.canary).toHaveLength(7);
    const diff = commandsOf(run('label', '--nodes', GPU_NODES, '--wave', 'canary=100%', '--diff').stdout);
    expect(diff).toContain(`kubectl label node -- worker-b-1 ${KEY}-`);
  });

  test('--unready-in-later-waves: into wave-1, never into the canary', () => {
    const argv = ['label', '--nodes', GPU_NODES, '--wave', 'canary=50%', '--wave', 'wave-1=50%', '--json'];
    const held = JSON.parse(run(...argv).stdout);
    expect(held.waves['wave-1']).not.toContain('gpu-c-2');
    const later = JSON.parse(run(...argv, '--unready-in-later-waves').stdout);
    expect(later.waves.canary).not.toContain('gpu-c-2');
    expect(later.waves.canary).not.toContain('worker-b-1');
    expect(later.waves['wave-1']).toEqual(expect.arrayContaining(['gpu-c-2', 'worker-b-1']));
    expect(later.heldOut).toEqual({});
  });

  test('--diff removes the stale wave label of an excluded (Windows) node, quoted for the shell', () => {
    const r = run('label', '--nodes', GPU_NODES, '--wave', 'canary=0.3', '--diff');
    expect(commandsOf(r.stdout)).toContain(`kubectl label node -- win-a-1 ${KEY}-`);
    // a key that needs quoting is quoted in the removal too
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-stale-'));
    try {
      const file = path.join(dir, 'nodes.json');
      const items = [
        { kind: 'Node', metadata: { name: 'constructor', labels: { 'kubernetes.io/os': 'windows', [KEY]: 'canary' } } },
        { kind: 'Node', metadata: { name: 'win-2', labels: { 'kubernetes.io/os': 'windows' } } },
        { kind: 'Node', metadata: { name: 'linux-1', labels: { 'kubernetes.io/os': 'linux' } } },
      ];
      fs.writeFileSync(file, JSON.stringify({ kind: 'List', items }));
      const diff = commandsOf(run('label', '--nodes', file, '--wave', 'canary=1', '--diff').stdout);
      // a Windows node named constructor: its stale label is removed (not mistaken for an inherited property)
      expect(diff).toEqual([`kubectl label node -- constructor ${KEY}-`, `kubectl label node --overwrite -- linux-1 ${KEY}=canary`]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a wave of 0 nodes: a warning with the smallest cluster that gives it one; --strict makes it exit 1', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-small-'));
    try {
      const file = path.join(dir, 'nodes.json');
      const items = ['n-1', 'n-2'].map((name) => ({ kind: 'Node', metadata: { name, labels: { 'kubernetes.io/os': 'linux' } } }));
      fs.writeFileSync(file, JSON.stringify({ kind: 'List', items }));
      // 2 nodes, 3 waves: the rounding gives canary (2% of 2 = 0.04) nothing; at 4 nodes every wave gets one
      const argv = ['label', '--nodes', file, '--wave', 'canary=2%', '--wave', 'wave-1=30%', '--wave', 'wave-2=30%'];
      const r = run(...argv);
      expect(r.code).toBe(0);
      const warning = 'wave "canary" (2%) gets 0 of 2 nodes: 2% of 2 rounds to 0; the smallest cluster that gives it a node has 4 nodes, '
        + 'Windows and virtual ones not counted.';
      expect(r.stderr).toContain(`node-agents label: warning: ${warning}`);
      expect(r.stdout).toContain(`# warning: ${warning}`);
      // wave-2 too: 30% of 2 rounds to 0 after wave-1's node; 3 nodes give it one
      const warnings = JSON.parse(run(...argv, '--json').stdout).warnings;
      expect(warnings).toHaveLength(2);
      expect(warnings[1]).toMatch(/^wave "wave-2" \(30%\) gets 0 of 2 nodes: 30% of 2 rounds to 0; the smallest cluster that gives it a node has 3 nodes/);
      const strict = run(...argv, '--strict');
      expect(strict.code).toBe(1);
      expect(strict.stdout).toBe('');
      expect(strict.stderr).toContain(`node-agents label: error (--strict): ${warning}`);
      // enough nodes: no warning, --strict passes
      expect(run('label', '--nodes', NODES, '--wave', 'canary=2%', '--strict')).toMatchObject({ code: 0, stderr: '' });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a wave whose candidates are all held out says so (its count is not 0)', () => {
    // 9 Linux nodes, 7 a rollout can count on: the canary's 7 (80%) take them all, wave-1's 2 have none left
    const r = run('label', '--nodes', GPU_NODES, '--wave', 'canary=80%', '--wave', 'wave-1=20%', '--strict');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('wave "wave-1" (20%) gets 0 nodes although 20% of 9 is 2: every node left for it is control-plane or kept out because a rollout cannot count on it (gpu-c-2, worker-b-1)');
  });

  test('--manifests with a waved GPU driver: a GPU node that changes wave goes through cordon, drain, label, wait, uncordon', () => {
    const r = run('label', '--nodes', GPU_NODES, '--wave', 'canary=0.3', '--diff', '--manifests', GPU_DRIVER);
    expect(r.code).toBe(0);
    const json = JSON.parse(run('label', '--nodes', GPU_NODES, '--wave', 'canary=0.3', '--manifests', GPU_DRIVER, '--json').stdout);
    const moved = json.gpuDriverMoves.map((m: { node: string }) => m.node);
    // the GPU nodes whose wave changes: every GPU node whose label differs from its assignment
    const inventory = JSON.parse(fs.readFileSync(path.join(ROOT, GPU_NODES), 'utf-8')).items as { metadata: { name: string; labels: Record<string, string> } }[];
    const expected = inventory.filter((n) => n.metadata.name.startsWith('gpu-') && (n.metadata.labels[KEY] ?? null) !== json.byNode[n.metadata.name])
      .map((n) => n.metadata.name);
    expect(moved).toEqual(expected);
    expect(moved.length).toBeGreaterThan(0);
    expect(r.stdout).toContain('# GPU driver nodes that change wave: their driver pod moves to another DaemonSet');
    for (const name of moved) {
      const to = json.byNode[name];
      const selector = `app.kubernetes.io/instance=gpu-driver,app.kubernetes.io/name=gpu-driver,node-agents.cdk8s.io/rollout-group=${to ?? 'fleet'}`;
      const block = [
        `was_cordoned=$(kubectl get node -o 'jsonpath={.spec.unschedulable}' -- ${name})`,
        `kubectl cordon -- ${name}`,
        `kubectl drain --ignore-daemonsets --delete-emptydir-data --timeout=600s -- ${name}`,
        to === null ? `kubectl label node -- ${name} ${KEY}-` : `kubectl label node --overwrite -- ${name} ${KEY}=${to}`,
        `tries=0; until kubectl get pods --namespace=gpu-driver --selector=${selector} --field-selector=spec.nodeName=${name} -o name | grep -q .; `
          + `do tries=$((tries+1)); if [ "$tries" -ge 300 ]; then echo 'no driver pod on ${name} after 1500s; the node stays cordoned' >&2; exit 1; fi; sleep 5; done`,
        `kubectl wait pod --for=condition=Ready --namespace=gpu-driver --selector=${selector} --field-selector=spec.nodeName=${name} --timeout=1500s`,
        `if [ "$was_cordoned" != true ]; then kubectl uncordon -- ${name}; fi`,
      ].join('\n');
      expect(r.stdout).toContain(block);
      // its plain label command is not printed as well
      expect(commandsOf(r.stdout).filter((c) => c.includes(` -- ${name} `))).toHaveLength(1);
    }
    // without --manifests: plain label commands only
    expect(run('label', '--nodes', GPU_NODES, '--wave', 'canary=0.3', '--diff').stdout).not.toContain('kubectl cordon');
  });

  test('--manifests with a GPU driver that has no waves: relabelling leaves its pods alone, and the output says so', () => {
    const r = run('label', '--nodes', GPU_NODES, '--wave', 'canary=0.3', '--manifests', 'examples/gpu-driver/dist');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('# GPU driver gpu-driver/gpu-driver: not split into rollout waves, so relabelling leaves its pods alone');
    expect(r.stdout).not.toContain('kubectl cordon');
  });

  test('--manifests without a GPU driver: the output says no node needs draining', () => {
    const r = run('label', '--nodes', GPU_NODES, '--wave', 'canary=0.3', '--manifests', `${FIXTURES}/clean`);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('# --manifests holds no GPU driver DaemonSet (pod label app.kubernetes.io/component or name gpu-driver or nvidia-driver): '
      + 'no node needs draining');
    // gpu-operator's driver found by its name label: not split into waves
    expect(run('label', '--nodes', GPU_NODES, '--wave', 'canary=0.3', '--manifests', CLUSTER).stdout)
      .toContain('# GPU driver gpu-operator/nvidia-driver-daemonset: not split into rollout waves, so relabelling leaves its pods alone');
    expect(r.stdout).not.toContain('kubectl cordon');
  });

  test.each([
    [['--manifests', 'no-such-dir/'], 'no-such-dir/'],
  ])('bad --manifests %j → exit 2 naming the path', (flags, message) => {
    const r = run('label', '--nodes', GPU_NODES, '--wave', 'canary=0.3', ...flags);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expectNoStack(r.stderr);
  });
});

describe('coverage and estimate: a wave holding a node a rollout cannot count on is a problem naming it', () => {
  let dir: string;
  let file: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-agents-unready-'));
    const inventory = JSON.parse(fs.readFileSync(path.join(ROOT, NODES), 'utf-8'));
    const wave: Record<string, string> = { 'worker-b-5': 'canary', 'worker-c-4': 'wave-1', 'spot-a-1': 'wave-1' };
    for (const item of inventory.items) {
      if (wave[item.metadata.name]) item.metadata.labels['node-agents.cdk8s.io/rollout-wave'] = wave[item.metadata.name];
    }
    file = path.join(dir, 'nodes.json');
    fs.writeFileSync(file, JSON.stringify(inventory));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  test('coverage: one problem per wave DaemonSet, naming the node and its state; a NoExecute taint or a cordon is not one (tolerated: runs; else a gap)', () => {
    const r = run('coverage', '--nodes', file, CLUSTER);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('[unready-in-wave] logging/fluent-bit-canary (rollout group "canary") holds 1 node a rollout cannot count on '
      + '(worker-b-5: NotReady (Ready=False)): its rolling update waits on a pod that never gets Ready there');
    // worker-c-4 is cordoned: DaemonSet pods tolerate node.kubernetes.io/unschedulable (daemonset_util.go
    // AddOrUpdateDaemonPodTolerations), so its pod runs and turns Ready: no problem for fluent-bit-wave-1
    expect(r.stdout).not.toContain('fluent-bit-wave-1 (rollout group "wave-1") holds');
    // fluent-bit-wave-1 tolerates spot=true:NoExecute: spot-a-1 runs its pod fine
    const json = JSON.parse(run('coverage', '--nodes', file, CLUSTER, '--json').stdout);
    const unready = json.problems.filter((p: { kind: string }) => p.kind === 'unready-in-wave');
    expect(unready.map((p: { nodes: string[] }) => p.nodes)).toEqual([['worker-b-5']]);
    // the inventory as committed: those nodes are in no wave, no such problem
    expect(run('coverage', '--nodes', NODES, CLUSTER).stdout).not.toContain('unready-in-wave');
  });

  test('estimate: the stalling wave is a problem (exit 1) naming the node', () => {
    const r = run('estimate', '--nodes', file, CLUSTER, '--agent', 'fluent-bit');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('  ! logging/fluent-bit-canary: logging/fluent-bit-canary (rollout group "canary") holds 1 node a rollout cannot count on (worker-b-5: NotReady');
    const json = JSON.parse(run('estimate', '--nodes', file, CLUSTER, '--agent', 'fluent-bit', '--json').stdout);
    const waves = json.agents[0].waves as { daemonSet: string; problem?: string }[];
    // the cordoned worker-c-4 in wave-1 is no stall: its DaemonSet pod tolerates node.kubernetes.io/unschedulable
    expect(waves.filter((w) => w.problem !== undefined).map((w) => w.daemonSet)).toEqual(['logging/fluent-bit-canary']);
    expect(run('estimate', '--nodes', NODES, CLUSTER, '--agent', 'fluent-bit').code).toBe(0);
  });
});
