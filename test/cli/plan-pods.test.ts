/**
 * `plan --pods` (and coverage/estimate --pods, --cost): an upgrade raising the memory request, checked on every node the
 * agent targets against the pods running there, as kube-scheduler's NodeResourcesFit filter counts them
 * (pkg/scheduler/framework/plugins/noderesources/fit.go fitsRequest), with the old pod counted as the DaemonSet
 * controller's rolling update leaves it (pkg/controller/daemon/update.go rollingUpdate: maxUnavailable deletes the
 * old pod first, maxSurge runs both), and preemption victims as defaultpreemption's SelectVictimsOnNode picks them.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../src/cli/run';
import { list, node, pod } from '../util/cluster';
import { Manifest, validateManifests } from '../util/manifests';
import { daemonSet } from '../util/plan';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-pods-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, value: unknown): string {
  fs.writeFileSync(path.join(dir, name), JSON.stringify(value));
  return name;
}

function logs(memory: string, o: { surge?: boolean; priorityClassName?: string } = {}): Manifest {
  const ds = daemonSet('logs', {
    image: `example.com/logs:${memory}`,
    strategy: o.surge ? { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } } : undefined,
  });
  const spec = ds.spec.template.spec;
  spec.containers[0].resources = { requests: { cpu: '100m', memory }, limits: { memory } };
  if (o.priorityClassName) spec.priorityClassName = o.priorityClassName;
  validateManifests([ds]);
  return ds;
}

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
  return { code, stdout, stderr };
}

const agentPod = (n: string) => pod(`logs-${n}`, { namespace: 'agents', node: n, memory: '200Mi', cpu: '100m', owner: 'logs', priority: 2000001000 });

/** n1 roomy; n2 full of a pod as important as the agent; n3 full of a low-priority batch pod; n4 has no agent pod yet. */
function cluster() {
  write('nodes.json', list(['n1', 'n2', 'n3', 'n4'].map((n) => node(n, { memory: '8Gi', labels: { 'node.kubernetes.io/instance-type': n === 'n4' ? 'm5.large' : 'm5.xlarge' } }))));
  write('pods.json', list([
    agentPod('n1'), agentPod('n2'), agentPod('n3'),
    pod('steady', { node: 'n1', memory: '7Gi', priority: 0 }),
    pod('critical-cache', { namespace: 'kube-system', node: 'n2', memory: '7680Mi', priority: 2000001000 }),
    pod('batch-job', { namespace: 'batch', node: 'n3', memory: '7680Mi', priority: 0 }),
    pod('critical-n4', { namespace: 'kube-system', node: 'n4', memory: '7680Mi', priority: 2000001000 }),
    pod('finished', { node: 'n1', memory: '7Gi', phase: 'Succeeded' }),
  ]));
}

test('memory raised: the full node is a finding naming it and the shortfall; the lower-priority pod is named as evicted', () => {
  cluster();
  write('before.json', list([logs('200Mi', { priorityClassName: 'system-node-critical' })]));
  write('after.json', list([logs('1Gi', { priorityClassName: 'system-node-critical' })]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--pods', 'pods.json', '--json');
  expect(r.stderr).toBe('');
  expect(r.code).toBe(1);
  const findings = JSON.parse(r.stdout).steps[0].findings;
  const short = findings.find((f: any) => f.cause === 'insufficient-resources');
  expect(short).toMatchObject({ kind: 'never-starts', severity: 'error', daemonSets: ['agents/logs'], nodes: ['n2', 'n4'] });
  expect(short.message).toContain('n2 (memory: needs 1Gi, 512Mi free of 8Gi allocatable (short 512Mi))');
  // n4 runs no agent pod today: an upgrade is checked on every node the agent targets
  expect(short.message).toContain('n4 (memory: needs 1Gi, 512Mi free');
  const evicts = findings.find((f: any) => f.kind === 'preemption');
  expect(evicts).toMatchObject({ severity: 'warning', cause: 'evicts', nodes: ['n3'] });
  expect(evicts.message).toContain('n3 (evicts batch/batch-job (priority 0))');
  // n1: 7Gi used + 1Gi = 8Gi: the old pod is deleted first (maxUnavailable), the Succeeded pod is not counted
  expect(findings.flatMap((f: any) => f.nodes)).not.toContain('n1');
});

test('maxSurge: the old and the new pod together must fit', () => {
  cluster();
  write('before.json', list([logs('200Mi', { surge: true })]));
  write('after.json', list([logs('1Gi', { surge: true })]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--pods', 'pods.json', '--json');
  const short = JSON.parse(r.stdout).steps[0].findings.find((f: any) => f.cause === 'insufficient-resources');
  // n1 fits with maxUnavailable (previous test) but not beside the old pod
  expect(short.nodes).toEqual(['n1', 'n2', 'n3', 'n4']);
  expect(short.message).toContain('next to the old pod (maxSurge');
  expect(short.message).toContain('n1 (memory: needs 1Gi, 824Mi free of 8Gi allocatable (short 200Mi))');
});

test('without a priority class (priority 0) nothing is preempted: the low-priority node is a finding too', () => {
  cluster();
  write('before.json', list([logs('200Mi')]));
  write('after.json', list([logs('1Gi')]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--pods', 'pods.json');
  expect(r.code).toBe(1);
  expect(r.stdout).toContain('[never-starts insufficient-resources] agents/logs: the new pod does not fit on 3 nodes');
  expect(r.stdout).toContain('or give the agent a priority class that may preempt (system-node-critical)');
  expect(r.stdout).not.toContain('[preemption');
});

test('an unchanged tree checks nothing: running pods stay', () => {
  cluster();
  write('before.json', list([logs('200Mi')]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'before.json', '--pods', 'pods.json');
  expect(r.stdout).not.toContain('insufficient-resources');
});

test('a host port held by another pod keeps the new pod off', () => {
  cluster();
  const withPort = (memory: string) => {
    const ds = logs(memory);
    ds.spec.template.spec.containers[0].ports = [{ containerPort: 9100, hostPort: 9100 }];
    return ds;
  };
  write('pods.json', list([agentPod('n1'), pod('exporter', { namespace: 'monitoring', node: 'n1', hostPort: 9100 })]));
  write('before.json', list([withPort('100Mi')]));
  write('after.json', list([withPort('150Mi')]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--pods', 'pods.json', '--json');
  const port = JSON.parse(r.stdout).steps[0].findings.find((f: any) => f.cause === 'host-port');
  expect(port.nodes).toEqual(['n1']);
  expect(port.message).toContain('TCP/9100 held by monitoring/exporter');
});

test('--cost: per instance type, allocatable, the agents\' requests and limits and their share, before and after', () => {
  cluster();
  write('before.json', list([logs('200Mi')]));
  write('after.json', list([logs('1Gi')]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--cost', '--json');
  const cost = JSON.parse(r.stdout).cost;
  expect(cost.map((c: any) => c.label)).toEqual(['before (before.json)', 'after (after.json)']);
  expect(cost[1].rows).toEqual([
    expect.objectContaining({ instanceType: 'm5.large', nodes: 1, requests: { cpu: 100, memory: 2 ** 30 }, limits: { cpu: 0, memory: 2 ** 30 }, memoryShare: 12.5, cpuShare: 2.5, unlimitedPods: 1 }),
    expect.objectContaining({ instanceType: 'm5.xlarge', nodes: 3, memoryShare: 12.5 }),
  ]);
  expect(cost[0].rows[0].memoryShare).toBe(2.4);
  const text = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--cost').stdout;
  expect(text).toContain('AGENTS\' COST PER INSTANCE TYPE');
  expect(text).toMatch(/m5\.xlarge\s+3\s+4\s+100m \(2\.5%\)\s+-?0?\s+8Gi\s+1Gi \(12\.5%\)/);
});

test('--pods input: a regular file, a pod list; errors name the file, not its content', () => {
  cluster();
  write('before.json', list([logs('200Mi')]));
  fs.writeFileSync(path.join(dir, 'bad.json'), '{"kind": "List", "items": [\u001b[31m');
  const bad = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'before.json', '--pods', 'bad.json');
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('bad.json: not valid JSON');
  expect(bad.stderr).not.toContain('\u001b');
  const notPods = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'before.json', '--pods', 'nodes.json');
  expect(notPods.stderr).toContain('nodes.json: items[0] is not a Pod');
  const folder = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'before.json', '--pods', '.');
  expect(folder.stderr).toContain('.: not a regular file');
});

test('coverage --pods and estimate --pods: the tree as it is, on nodes where the agent runs no pod yet', () => {
  cluster();
  write('tree.json', list([logs('1Gi')]));
  const coverage = run('coverage', '--nodes', 'nodes.json', '--pods', 'pods.json', 'tree.json');
  // n1..n3 run the agent (their pods stay); n4 has none and no room for it
  expect(coverage.code).toBe(1);
  expect(coverage.stdout).toContain('CAPACITY (--pods): 1 error, 0 warnings');
  expect(coverage.stdout).toContain('agents/logs: the new pod does not fit on 1 node and stays Pending (FailedScheduling: Insufficient ...): n4 (memory: needs 1Gi');
  const json = JSON.parse(run('coverage', '--nodes', 'nodes.json', '--pods', 'pods.json', '--cost', '--json', 'tree.json').stdout);
  expect(json.capacity.map((f: any) => f.nodes)).toEqual([['n4']]);
  expect(json.cost.map((c: any) => c.instanceType)).toEqual(['m5.large', 'm5.xlarge']);
  const estimate = run('estimate', '--nodes', 'nodes.json', '--pods', 'pods.json', 'tree.json');
  expect(estimate.code).toBe(1);
  expect(estimate.stdout).toContain('[never-starts insufficient-resources] agents/logs');
  expect(run('coverage', '--nodes', 'nodes.json', 'tree.json').stdout).not.toContain('CAPACITY');
});

test('a node without status.allocatable is a warning naming it, not checked; each node is read by its own listing', () => {
  const bare = node('n0');
  delete (bare.status as Record<string, unknown>).allocatable;
  // n5 lists its memory as a list (no quantity: the node offers none), n6 the same text as a quantity: two listings
  // that print alike must not be read as one
  const odd = node('n5');
  (odd.status as any).allocatable.memory = ['8Gi'];
  write('nodes.json', list([bare, odd, node('n6')]));
  write('pods.json', list([]));
  write('before.json', list([logs('200Mi')]));
  write('after.json', list([logs('1Gi')]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--pods', 'pods.json', '--json');
  expect(r.stderr).toBe('');
  const findings = JSON.parse(r.stdout).steps[0].findings;
  expect(findings.find((f: any) => f.cause === 'no-allocatable')).toMatchObject({ kind: 'never-starts', severity: 'warning', nodes: ['n0'] });
  const short = findings.find((f: any) => f.cause === 'insufficient-resources');
  expect(short.nodes).toEqual(['n5']);
  expect(short.message).toContain('n5 (memory: needs 1Gi, 0 free of 0 allocatable');
});

test('the new pod is checked on the nodes the after-tree targets, not those the before-tree did (the trees cover different nodes)', () => {
  cluster();
  // before: only n1 (pool=a); after: every node, with more memory
  const before = logs('200Mi');
  before.spec.template.spec.nodeSelector = { pool: 'a' };
  write('nodes.json', list(['n1', 'n2', 'n3', 'n4'].map((n) => node(n, { memory: '8Gi', labels: n === 'n1' ? { pool: 'a' } : {} }))));
  write('before.json', list([before]));
  write('after.json', list([logs('1Gi')]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--pods', 'pods.json', '--json');
  const findings = JSON.parse(r.stdout).steps[0].findings;
  // n2..n4 run no pod of the before-tree: the after-tree's coverage puts the new pod there, and n2, n4 are full
  expect(findings.find((f: any) => f.cause === 'insufficient-resources').nodes).toEqual(['n2', 'n3', 'n4']);
  // and the cost of each tree counts the agent's pods on the nodes that tree covers
  const cost = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--cost', '--json');
  const [was, will] = JSON.parse(cost.stdout).cost;
  expect(was.rows.reduce((sum: number, row: any) => sum + row.agentPods, 0)).toBe(1);
  expect(will.rows.reduce((sum: number, row: any) => sum + row.agentPods, 0)).toBe(4);
});
