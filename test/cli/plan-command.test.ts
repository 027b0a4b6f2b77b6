/** The `node-agents plan` command: flags, output formats, exit codes. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { loadManifests } from '../../src/cli/coverage/load';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { loadInventory } from '../../src/cli/inventory';
import { planChange } from '../../src/cli/plan/plan';
import { planJson } from '../../src/cli/plan-command';
import { runCli } from '../../src/cli/run';
import { REPO } from '../util/paths';

const ROOT = REPO;
const NODES = 'examples/inventories/mixed-cluster.json';
const DIST = 'examples/log-collector-rollout/dist';

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

test('--before/--after on the canary stage: text, exit 0', () => {
  const r = run('plan', '--nodes', NODES, '--before', `${DIST}/0-before`, '--after', `${DIST}/1-canary`);
  expect(r).toMatchObject({ code: 0, stderr: '' });
  expect(r.stdout).toContain(`Plan: ${DIST}/0-before -> ${DIST}/1-canary on 23 nodes`);
  // 40 s of rollout plus the canary gate's 10 min bake (read from the rendered Job): the sync runs the gate hook
  expect(r.stdout).toContain('logs: 1 replaced, 19 untouched; expected 10 min 40 s, including the gate\'s bake (10 min)');
  expect(r.stdout).toContain('replaced by observability/logs-canary: worker-a-1');
  expect(r.stdout).toContain('batches observability/logs-canary: 1 batch of 1 (maxUnavailable 1), 40 s each (old pod\'s grace period up to 1 min): 40 s');
  // the new release's Secret lives outside the tree: a warning, not a failure
  expect(r.stdout).toContain('FINDINGS (0 errors, 1 warning)');
  expect(r.stdout.split('\n').every((l) => l === l.trimEnd())).toBe(true);
});

test('--stages: one plan per step, in order; --pod-seconds as in estimate', () => {
  const r = run('plan', '--nodes', NODES, '--pod-seconds', '50', '--stages', `${DIST}/0-before`, `${DIST}/1-canary`, `${DIST}/2-wave-1`);
  expect(r.code).toBe(0);
  const headers = r.stdout.split('\n').filter((l) => l.startsWith('Plan: '));
  expect(headers).toEqual([
    `Plan: ${DIST}/0-before -> ${DIST}/1-canary on 23 nodes (pod cycle 50 s + each DaemonSet's minReadySeconds)`,
    `Plan: ${DIST}/1-canary -> ${DIST}/2-wave-1 on 23 nodes (pod cycle 50 s + each DaemonSet's minReadySeconds)`,
  ]);
  expect(r.stdout).toContain('logs: 3 replaced, 17 untouched; expected 13 min, including the gate\'s bake (10 min)');
});

test('--json: the documented shape', () => {
  const r = run('plan', '--nodes', NODES, '--json', '--stages', `${DIST}/1-canary`, `${DIST}/2-wave-1`);
  expect(r.code).toBe(0);
  const json = JSON.parse(r.stdout);
  expect(Object.keys(json)).toEqual(['podSeconds', 'nodes', 'safe', 'steps']);
  expect(json).toMatchObject({ podSeconds: 30, nodes: 23, safe: true });
  const [step] = json.steps;
  expect(step).toMatchObject({ before: `${DIST}/1-canary`, after: `${DIST}/2-wave-1`, safe: true });
  // one warning for the Secret both new-release waves read (issue 35, case 8), naming both
  expect(step.findings.map((f: { kind: string; severity: string; daemonSets: string[] }) => [f.kind, f.severity, f.daemonSets])).toEqual([
    ['missing-reference', 'warning', ['observability/logs-canary', 'observability/logs-wave-1']],
  ]);
  const wave = step.agents[0].daemonSets.find((d: { id: string }) => d.id === 'observability/logs-wave-1');
  expect(wave).toMatchObject({
    change: 'changed',
    podTemplateChanged: true,
    versionBefore: '4.1.1',
    versionAfter: '4.2.3',
    replaced: ['worker-a-4', 'worker-b-2', 'worker-c-3'],
    rollout: {
      nodes: 3, podsAtOnce: 1, batches: 3, batchSize: 1, lastBatchSize: 1, cycleSeconds: 40, seconds: 120, terminationGracePeriodSeconds: 60,
    },
  });
});

test('findings: exit 1, named in every format', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-'));
  try {
    // the after-tree drops the ConfigMap every pod template mounts
    const text = fs.readFileSync(path.join(ROOT, DIST, '1-canary', 'log-collector.k8s.yaml'), 'utf8');
    // the held waves' ConfigMap: 0-before's, kept by the held groups
    const HELD_CONFIG_HASH = /name: logs-config-([0-9a-f]{10})/.exec(fs.readFileSync(path.join(ROOT, DIST, '0-before', 'log-collector.k8s.yaml'), 'utf8'))![1];
    const docs = text.split(/^---\n/m).filter((d) => !/^kind: ConfigMap$/m.test(d));
    fs.writeFileSync(path.join(dir, 'after.yaml'), docs.join('---\n'));
    const argv = ['plan', '--nodes', NODES, '--before', `${DIST}/0-before`, '--after', path.join(dir, 'after.yaml')];
    const text1 = run(...argv);
    expect(text1.code).toBe(1);
    // one finding per missing ConfigMap: the fleet and wave-1 share the held release's (issue 35, case 8)
    expect(text1.stdout).toContain('FINDINGS (2 errors, 1 warning)');
    expect(text1.stdout).toMatch(/! \[missing-reference ConfigMap\] observability\/logs-canary needs ConfigMap observability\/logs-config-[0-9a-f]{10} \(volumes\[config\]\), which the after-tree does not hold: its new pods on 1 node \(worker-a-1\) stay in ContainerCreating/);
    const md = run(...argv, '--markdown');
    expect(md.code).toBe(1);
    expect(md.stdout).toContain('**2 findings** on 23 nodes (and 1 warning).');
    expect(text1.stdout).toContain(`ConfigMap observability/logs-config-${HELD_CONFIG_HASH}, which the after-tree deletes, is needed by 2 DaemonSets: `
      + 'observability/logs (volumes[config]), observability/logs-wave-1 (volumes[config]): the running pods of observability/logs, observability/logs-wave-1 '
      + 'on 19 nodes (cp-1, cp-2, cp-3, gpu-a-1, gpu-b-1, … 14 more) keep running, but one restarted or on a new node stays in ContainerCreating');
    const json = JSON.parse(run(...argv, '--json').stdout);
    expect(json.safe).toBe(false);
    expect(json.steps[0].findings.map((f: { kind: string; severity: string; daemonSets: string[] }) => [f.kind, f.severity, f.daemonSets])).toEqual([
      ['missing-reference', 'error', ['observability/logs', 'observability/logs-wave-1']],
      ['missing-reference', 'error', ['observability/logs-canary']],
      ['missing-reference', 'warning', ['observability/logs-canary']],
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.each([
  [['--before', `${DIST}/0-before`], '--after is required: the manifests running now and after the change (files or directories), or --stages TREE TREE...'],
  [[], '--before and --after are required'],
  [['--stages', `${DIST}/0-before`], `--stages ${DIST}/0-before: give at least two trees, in rollout order`],
  [['--stages', `${DIST}/0-before`, `${DIST}/1-canary`, '--before', `${DIST}/0-before`], '--stages plans a sequence of trees: give either it or --before and --after'],
  [['--before', 'a', '--after', 'b', 'c'], 'unexpected argument "c"'],
  [['--before', `${DIST}/0-before`, '--after', `${DIST}/1-canary`, '--json', '--markdown'], '--markdown and --json: give one output format'],
  [['--before', `${DIST}/0-before`, '--after', `${DIST}/1-canary`, '--pod-seconds', '30s'], '--pod-seconds "30s" has a unit'],
])('bad usage %j: exit 2 with one message', (args, message) => {
  const r = run('plan', '--nodes', NODES, ...args);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe('');
  expect(r.stderr).toContain(`node-agents plan: ${message}`);
  expect(r.stderr).toContain('Run `node-agents plan --help` for usage.');
});

test('bad input: a missing tree or inventory, exit 2 without a stack trace', () => {
  const missing = run('plan', '--nodes', NODES, '--before', 'no-such-dir', '--after', `${DIST}/1-canary`);
  expect(missing).toMatchObject({ code: 2, stderr: 'node-agents plan: no-such-dir: cannot read (no such file or directory)\n' });
  expect(run('plan', '--before', `${DIST}/0-before`, '--after', `${DIST}/1-canary`)).toMatchObject({ code: 2, stderr: expect.stringContaining('--nodes is required') });
});

test('--stages: each tree\'s coverage is computed once and shared by the steps; the plans are those of each pair planned alone', () => {
  // a tree without the canary DaemonSet between the canary and wave 1: the trees' coverages differ
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-stages-'));
  const canary = fs.readFileSync(path.join(ROOT, DIST, '1-canary/log-collector.k8s.yaml'), 'utf-8').split(/^---$/m);
  const kept = canary.filter((doc) => !/kind: DaemonSet\n(.*\n)*?  name: logs-canary\n/.test(doc));
  expect(kept.length).toBe(canary.length - 1);
  fs.writeFileSync(path.join(dir, 'tree.yaml'), kept.join('---'));
  const stages = [`${DIST}/0-before`, `${DIST}/1-canary`, path.relative(ROOT, dir), `${DIST}/2-wave-1`, `${DIST}/3-fleet`];
  const r = run('plan', '--nodes', NODES, '--json', '--stages', ...stages);
  const nodes = nodeFacts(loadInventory(NODES, ROOT));
  const trees = stages.map((tree) => loadManifests([tree], ROOT));
  const alone = trees.slice(1).map((after, i) => ({ before: stages[i], after: stages[i + 1], report: planChange(trees[i], after, nodes) }));
  expect(JSON.parse(r.stdout)).toEqual(JSON.parse(planJson(alone)));
  expect(r.stdout).toContain('observability/logs-canary');
  fs.rmSync(dir, { recursive: true });
});
