/**
 * The tools read readiness taints (the node-agents.cdk8s.io/readiness-taint annotation on an agent's DaemonSets):
 * - coverage and plan: an agent that does not tolerate another agent's readiness taint gets no pod on a new node
 *   until that agent removes it (the DaemonSet controller's NodeShouldRunDaemonPod refuses a node with an
 *   untolerated NoSchedule taint), and never when the two wait for each other: never-starts;
 * - plan: a change that leaves a readiness taint nobody removes while node pools still set it: never-starts;
 * - doctor: a node still carrying the taint, and the agent's pod there that should remove it.
 * Fixtures in test/fixtures/readiness-taint/ (the before-tree: a log collector with a readiness taint, a CNI agent
 * tolerating it, node-exporter tolerating every taint; n2 joined with the taint).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../src/cli/run';
import { agentDaemonSet, agentPod, list, node } from '../util/cluster';
import { Manifest } from '../util/manifests';
import { FIXTURES as FIXTURE_ROOT, REPO } from '../util/paths';

const FIXTURES = path.join(FIXTURE_ROOT, 'readiness-taint');
const KEY = 'node-agents.cdk8s.io/logs-not-ready';

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: FIXTURES });
  return { code, stdout, stderr };
}

describe('coverage', () => {
  test('every agent tolerates the collector\'s readiness taint: no problem', () => {
    const r = run('coverage', '--nodes', 'nodes.json', 'before.yaml', '--json');
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).problems.filter((p: Manifest) => p.kind === 'never-starts')).toEqual([]);
  });

  test('an agent that does not tolerate it never starts on a new node: never-starts, exit 1, with the toleration to add', () => {
    const r = run('coverage', '--nodes', 'nodes.json', 'after-cni-waits.yaml', '--json');
    expect(r.code).toBe(1);
    const problems = JSON.parse(r.stdout).problems.filter((p: Manifest) => p.kind === 'never-starts');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ agent: 'cni', daemonSets: ['kube-system/cni'], nodes: ['n1', 'n2'] });
    expect(problems[0].message).toContain(`does not tolerate log-collector's readiness taint ${KEY}:NoSchedule`);
    expect(problems[0].message).toContain(`tolerations [{ key: "${KEY}", operator: Exists, effect: NoSchedule }]`);
    const text = run('coverage', '--nodes', 'nodes.json', 'after-cni-waits.yaml').stdout;
    expect(text).toContain('never-starts');
  });
});

describe('plan', () => {
  const findings = (after: string) => {
    const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', after, '--json');
    expect(r.stderr).toBe('');
    return { code: r.code, findings: JSON.parse(r.stdout).steps[0].findings.filter((f: Manifest) => f.cause.startsWith('readiness-taint')) };
  };

  test('a change that drops the CNI\'s toleration of the collector\'s taint: never-starts (readiness-taint), an error', () => {
    const { code, findings: f } = findings('after-cni-waits.yaml');
    expect(code).toBe(1);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ kind: 'never-starts', cause: 'readiness-taint', severity: 'error', agent: 'cni', nodes: ['n1', 'n2'] });
  });

  test('the wait already in the before-tree is a standing warning', () => {
    const r = run('plan', '--nodes', 'nodes.json', '--before', 'after-cni-waits.yaml', '--after', 'after-cni-waits.yaml', '--json');
    const f = JSON.parse(r.stdout).steps[0].findings.filter((x: Manifest) => x.cause === 'readiness-taint');
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ severity: 'warning', standing: true });
  });

  test('deleting the collector while node pools still set its taint: new nodes stay unschedulable, an error naming the nodes that carry it', () => {
    const { code, findings: f } = findings('after-logs-removed.yaml');
    expect(code).toBe(1);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ kind: 'never-starts', cause: 'readiness-taint-orphaned', severity: 'error', agent: 'log-collector', nodes: ['n2'] });
    expect(f[0].message).toContain(`no agent removes the readiness taint ${KEY}:NoSchedule`);
    expect(f[0].fix).toContain(`kubectl taint nodes NODE ${KEY}:NoSchedule-`);
  });

  test('the after-tree\'s Karpenter NodePool still lists it: an error naming the NodePool; a NodePool without it: no finding', () => {
    const listed = findings('after-logs-removed-pool.yaml').findings;
    expect(listed).toHaveLength(1);
    expect(listed[0].message).toContain('the NodePools general still list it');
    expect(findings('after-logs-removed-pool-retired.yaml').findings).toEqual([]);
  });

  test('acknowledged with node-agents.cdk8s.io/retired-readiness-taints: a warning', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'retired-'));
    try {
      const text = fs.readFileSync(path.join(FIXTURES, 'after-logs-removed.yaml'), 'utf-8').replace('name: cni\n',
        `name: cni\n  annotations:\n    node-agents.cdk8s.io/retired-readiness-taints: ${KEY}\n`);
      expect(text).toContain('retired-readiness-taints');
      fs.writeFileSync(path.join(dir, 'after.yaml'), text);
      const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', path.join(dir, 'after.yaml'), '--json');
      const f = JSON.parse(r.stdout).steps[0].findings.filter((x: Manifest) => x.cause === 'readiness-taint-orphaned');
      expect(f[0].severity).toBe('warning');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('doctor', () => {
  const TAINT = [{ key: KEY, effect: 'NoSchedule' }];
  function state(): Manifest {
    const logs = agentDaemonSet('log-collector', { namespace: 'observability', tolerations: [{ operator: 'Exists' }] });
    logs.metadata.annotations = { 'node-agents.cdk8s.io/readiness-taint': `${KEY}:NoSchedule` };
    // the release with readinessTaint runs the remover beside the agent: the kubelet reports its status too
    const withRemover = (pod: Manifest) => {
      pod.status.containerStatuses.push({ name: 'readiness-taint-remover', image: 'curl:1', ready: true, restartCount: 0, state: { running: {} } });
      return pod;
    };
    return list([
      node('n1'), node('n2', { taints: TAINT }), node('n3', { taints: TAINT }), node('n4', { taints: TAINT, labels: { 'kubernetes.io/os': 'windows' } }),
      logs, ...[agentPod(logs, 'n1'), agentPod(logs, 'n2'), agentPod(logs, 'n3', { ready: false })].map(withRemover),
    ]);
  }

  test('names each node still carrying the taint and the agent pod that should have removed it', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-readiness-'));
    try {
      fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(state()));
      const r = run('doctor', '--state', path.join(dir, 'state.json'), '--json');
      const f = JSON.parse(r.stdout).findings.filter((x: Manifest) => x.cause === 'readiness-taint');
      expect(f.map((x: Manifest) => [x.node, x.pod, x.severity])).toEqual([
        ['n2', 'observability/log-collector-n2', 'error'],
        ['n3', 'observability/log-collector-n3', 'warning'],
        ['n4', undefined, 'error'],
      ]);
      expect(f[0].message).toContain('though pod observability/log-collector-n2 is Ready there: its remover did not remove it');
      expect(f[0].fix).toContain('kubectl -n observability logs log-collector-n2 -c readiness-taint-remover');
      expect(f[1].message).toContain('is not Ready: the taint stays');
      expect(f[2].message).toContain('no pod of log-collector runs there to remove it');
      expect(r.code).toBe(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

test('doctor: a Ready pod without the remover (a held wave of a release without readinessTaint) is named as such, not as a failed remover', () => {
  const logs = agentDaemonSet('log-collector', { namespace: 'observability', tolerations: [{ operator: 'Exists' }] });
  logs.metadata.annotations = { 'node-agents.cdk8s.io/readiness-taint': `${KEY}:NoSchedule` };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-readiness-'));
  try {
    fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(list([node('n1', { taints: [{ key: KEY, effect: 'NoSchedule' }] }), logs, agentPod(logs, 'n1')])));
    const r = run('doctor', '--state', path.join(dir, 'state.json'), '--json');
    const [f] = JSON.parse(r.stdout).findings.filter((x: Manifest) => x.cause === 'readiness-taint');
    expect(f.severity).toBe('error');
    expect(f.message).toContain('has no remover container: it runs a release without readinessTaint');
    expect(f.message).not.toContain('its remover did not remove it');
    expect(f.fix).toContain(`kubectl taint nodes n1 ${KEY}:NoSchedule-`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the node-start-order example: every agent tolerates the others\' readiness taints, so none waits (coverage on the mixed inventory)', () => {
  const example = path.join(REPO, 'examples', 'node-start-order', 'dist');
  const inventory = path.join(REPO, 'examples', 'inventories', 'mixed-cluster.json');
  const r = run('coverage', '--nodes', inventory, example, '--json');
  expect(r.stderr).toBe('');
  const report = JSON.parse(r.stdout);
  expect(report.problems).toEqual([]);
  // the three agents declare their taints for the tools
  const text = fs.readFileSync(path.join(example, 'node-agents.k8s.yaml'), 'utf-8');
  expect(text.match(/node-agents\.cdk8s\.io\/readiness-taint: /g)).toHaveLength(3);
});
