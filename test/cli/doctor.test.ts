/**
 * `node-agents doctor`: one small state per cause, where exactly that cause holds on node n2 and nothing else is
 * reported; a 200-node state mixing them; the CLI's formats, exit codes and escaping. Placement follows coverage
 * (the DaemonSet controller's nodeShouldRunDaemonPod, pkg/controller/daemon/daemon_controller.go); a Pending pod's
 * resources and host ports follow kube-scheduler's Fit and NodePorts filters (pkg/scheduler/framework/plugins/
 * noderesources/fit.go fitsRequest, nodeports/node_ports.go); the current revision is the newest ControllerRevision
 * and its controller-revision-hash label (pkg/controller/daemon/update.go constructHistory).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { diagnose, DoctorReport } from '../../src/cli/doctor/diagnose';
import { StateBuilder } from '../../src/cli/doctor/state';
import { runCli } from '../../src/cli/run';
import { agentDaemonSet, agentPod, AgentPodOptions, event, list, node, NodeOptions, pod, revision } from '../util/cluster';
import { Manifest } from '../util/manifests';

function report(items: Manifest[], agent?: string, now?: string): DoctorReport {
  const builder = new StateBuilder();
  builder.addDocument(list(items), 'test');
  return diagnose(builder.finish('test'), { agent, now });
}

/** Three ready nodes, the `logs` agent Ready at revision v2 on each, except what `n2` overrides. */
function state(o: { ds?: Manifest; n2?: NodeOptions; n2Pod?: AgentPodOptions | null; extra?: (ds: Manifest) => Manifest[] } = {}): Manifest[] {
  const ds = o.ds ?? agentDaemonSet('logs');
  const items: Manifest[] = [node('n1'), node('n2', o.n2), node('n3'), ds, revision(ds, 'v1', 1), revision(ds, 'v2', 2),
    agentPod(ds, 'n1'), agentPod(ds, 'n3')];
  if (o.n2Pod !== null) items.push(agentPod(ds, 'n2', o.n2Pod));
  return [...items, ...(o.extra?.(ds) ?? [])];
}

function only(r: DoctorReport) {
  expect(r.findings).toHaveLength(1);
  return r.findings[0];
}

test('a healthy state: no finding; the rollout waits on nothing', () => {
  const r = report(state());
  expect(r.findings).toEqual([]);
  expect(r.daemonSets).toEqual([expect.objectContaining({ daemonSet: 'agents/logs', desired: 3, current: 3, updated: 3, ready: 3, available: 3 })]);
  expect(r.daemonSets[0].waitsOn).toMatch(/^nothing/);
});

describe('one cause on n2, nothing else', () => {
  test('pending-resources: the shortfall as the Fit filter counts it, and the scheduler\'s words', () => {
    const ds = agentDaemonSet('logs', { memory: '1Gi' });
    const f = only(report(state({
      ds,
      n2Pod: { bound: false },
      extra: (d) => [pod('cache', { node: 'n2', memory: '7680Mi' }), event(agentPod(d, 'n2'), 'FailedScheduling', '0/3 nodes are available: 1 Insufficient memory.')],
    })));
    expect(f).toMatchObject({ cause: 'pending-resources', severity: 'error', daemonSet: 'agents/logs', node: 'n2', pod: 'agents/logs-n2' });
    expect(f.message).toContain('memory: needs 1Gi, 512Mi free of 8Gi allocatable (short 512Mi)');
    expect(f.message).toContain('the scheduler: "0/3 nodes are available: 1 Insufficient memory."');
  });
  test('pending-taint: a NoSchedule taint the pod does not tolerate (its pod stays Pending)', () => {
    const f = only(report(state({ n2: { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] }, n2Pod: { bound: false } })));
    expect(f).toMatchObject({ cause: 'pending-taint', node: 'n2' });
    expect(f.message).toContain('taint dedicated=db:NoSchedule not tolerated');
  });
  test('pending-host-port: another pod holds the host port', () => {
    const ds = agentDaemonSet('logs', { hostPort: 9100 });
    const f = only(report(state({ ds, n2Pod: { bound: false }, extra: () => [pod('exporter', { namespace: 'monitoring', node: 'n2', hostPort: 9100 })] })));
    expect(f).toMatchObject({ cause: 'pending-host-port', node: 'n2' });
    expect(f.message).toContain('host port TCP/9100 is held by monitoring/exporter');
  });
  test('pending-affinity: the scheduler says (anti-)affinity', () => {
    const f = only(report(state({
      n2Pod: { bound: false },
      extra: (d) => [event(agentPod(d, 'n2'), 'FailedScheduling', '0/3 nodes are available: 1 node(s) didn\'t match pod anti-affinity rules.')],
    })));
    expect(f).toMatchObject({ cause: 'pending-affinity', node: 'n2' });
  });
  test('image-pull', () => {
    const f = only(report(state({ n2Pod: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "example.com/agent:2"' } } })));
    expect(f).toMatchObject({ cause: 'image-pull', node: 'n2', pod: 'agents/logs-n2' });
    expect(f.message).toContain('ImagePullBackOff for image example.com/agent:2');
  });
  test('crash-loop: with the last termination reason and exit code', () => {
    const f = only(report(state({ n2Pod: { waiting: { reason: 'CrashLoopBackOff' }, lastTerminated: { reason: 'Error', exitCode: 3 }, restartCount: 7 } })));
    expect(f).toMatchObject({ cause: 'crash-loop', node: 'n2' });
    expect(f.message).toContain('CrashLoopBackOff, 7 restarts; last terminated: Error, exit code 3');
  });
  test('config-error: a missing Secret', () => {
    const f = only(report(state({ n2Pod: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "logs-token" not found' } } })));
    expect(f).toMatchObject({ cause: 'config-error', node: 'n2' });
    expect(f.message).toContain('secret "logs-token" not found');
  });
  test('not-ready: running, the readiness probe failing', () => {
    const f = only(report(state({
      n2Pod: { ready: false },
      extra: (d) => [event(agentPod(d, 'n2'), 'Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503')],
    })));
    expect(f).toMatchObject({ cause: 'not-ready', node: 'n2' });
    expect(f.message).toContain('Readiness probe failed');
  });
  test('node-not-ready', () => {
    const f = only(report(state({ n2: { ready: 'False' }, n2Pod: { ready: false } })));
    expect(f).toMatchObject({ cause: 'node-not-ready', node: 'n2' });
  });
  test('no-pod: the node should run the agent and has none', () => {
    const f = only(report(state({ n2Pod: null })));
    expect(f).toMatchObject({ cause: 'no-pod', node: 'n2' });
    expect(f.pod).toBeUndefined();
  });
  test('misscheduled: a pod on a node the DaemonSet no longer selects', () => {
    const ds = agentDaemonSet('logs', { nodeSelector: { role: 'worker' } });
    const items = [node('n1', { labels: { role: 'worker' } }), node('n2'), ds, revision(ds, 'v2', 2), agentPod(ds, 'n1'), agentPod(ds, 'n2')];
    const f = only(report(items));
    expect(f).toMatchObject({ cause: 'misscheduled', node: 'n2' });
    expect(f.message).toContain('nodeSelector role=worker (node has no role label)');
  });
  test('old-revision: waiting for its turn is a warning', () => {
    const f = only(report(state({ n2Pod: { hash: 'v1' } })));
    expect(f).toMatchObject({ cause: 'old-revision', severity: 'warning', node: 'n2' });
    expect(f.message).toContain('waiting for its turn (maxUnavailable 1)');
  });
  test('terminating: stuck past its grace period on an unreachable node (not reported as node-not-ready too)', () => {
    const f = only(report(state({ n2: { ready: 'Unknown' }, n2Pod: { deletionTimestamp: '2026-01-01T01:00:00Z', ready: false } }), undefined, '2026-01-01T05:00:00Z'));
    expect(f).toMatchObject({ cause: 'terminating', node: 'n2' });
    expect(f.message).toContain('still terminating at 2026-01-01T05:00:00Z (--now), past its grace period (it ended at 2026-01-01T01:00:00Z), on a node that is unreachable');
  });
});

test('old-revision blocked: names the nodes holding the update budget', () => {
  const ds = agentDaemonSet('logs');
  const r = report([node('n1'), node('n2'), node('n3'), ds, revision(ds, 'v2', 2),
    agentPod(ds, 'n1', { hash: 'v1' }), agentPod(ds, 'n2', { waiting: { reason: 'CrashLoopBackOff' }, restartCount: 9 }), agentPod(ds, 'n3')]);
  expect(r.findings.map((f) => [f.cause, f.node, f.severity])).toEqual([['old-revision', 'n1', 'error'], ['crash-loop', 'n2', 'error']]);
  expect(r.findings[0].message).toContain('the rollout is blocked: the update budget (maxUnavailable 1) is held by n2 (crash-loop)');
  expect(r.daemonSets[0].waitsOn).toBe('1 crash-loop, 1 old-revision');
});

test('--agent: all DaemonSets of one agent (waves included), no other', () => {
  const canary = agentDaemonSet('logs-canary', { agent: 'logs', nodeSelector: { wave: 'canary' } });
  const fleet = agentDaemonSet('logs', { agent: 'logs' });
  const other = agentDaemonSet('exporter');
  const items = [node('n1', { labels: { wave: 'canary' } }), canary, fleet, other, revision(canary, 'v2', 1), revision(fleet, 'v2', 1), revision(other, 'v2', 1)];
  expect(report(items, 'logs').daemonSets.map((d) => d.daemonSet)).toEqual(['agents/logs', 'agents/logs-canary']);
});

/** 200 nodes, two agents, causes on named nodes, unrelated pods and events around them. */
test('a realistic 200-node state: every cause on its node, nothing else', () => {
  const logs = agentDaemonSet('logs', { memory: '1Gi', strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%' } } });
  const exporter = agentDaemonSet('node-exporter', { namespace: 'monitoring', hostPort: 9100, nodeSelector: { 'kubernetes.io/os': 'linux' } });
  const names = Array.from({ length: 200 }, (_, i) => `node-${String(i).padStart(3, '0')}`);
  const expected: [string, string, string][] = [];
  const special: Record<string, NodeOptions> = {
    'node-010': { ready: 'False' },
    'node-020': { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] },
    'node-030': { ready: 'Unknown' },
    'node-190': { labels: { 'kubernetes.io/os': 'windows' } },
  };
  const items: Manifest[] = [logs, exporter, revision(logs, 'v1', 1), revision(logs, 'v2', 2), revision(exporter, 'v2', 1)];
  for (const name of names) {
    items.push(node(name, special[name]));
    items.push(pod(`app-${name}`, { node: name, memory: '2Gi', cpu: '500m' }), pod(`job-${name}`, { node: name, memory: '6Gi', phase: 'Succeeded' }));
  }
  const logsPod: Record<string, AgentPodOptions | null> = {
    'node-001': { bound: false }, // plus a 6.5Gi pod below: pending-resources
    'node-002': { waiting: { reason: 'ErrImagePull' } },
    'node-003': { waiting: { reason: 'CrashLoopBackOff' }, lastTerminated: { reason: 'OOMKilled', exitCode: 137 }, restartCount: 4 },
    'node-004': { waiting: { reason: 'CreateContainerConfigError', message: 'couldn\'t find key token in Secret agents/logs' } },
    'node-005': { ready: false },
    'node-006': null,
    'node-007': { hash: 'v1' },
    'node-008': { hash: 'v1' },
    'node-010': { ready: false },
    'node-020': { bound: false },
    'node-030': { deletionTimestamp: '2026-01-01T02:00:00Z', ready: false },
  };
  expected.push(['pending-resources', 'agents/logs', 'node-001'], ['image-pull', 'agents/logs', 'node-002'], ['crash-loop', 'agents/logs', 'node-003'],
    ['config-error', 'agents/logs', 'node-004'], ['not-ready', 'agents/logs', 'node-005'], ['no-pod', 'agents/logs', 'node-006'],
    ['old-revision', 'agents/logs', 'node-007'], ['old-revision', 'agents/logs', 'node-008'], ['node-not-ready', 'agents/logs', 'node-010'],
    ['pending-taint', 'agents/logs', 'node-020'], ['terminating', 'agents/logs', 'node-030']);
  items.push(pod('big', { node: 'node-001', memory: '5Gi' }));
  for (const name of names) {
    if (name === 'node-190') continue; // windows: logs has no OS selector... but it is a test of exporter's selector below
    const o = logsPod[name];
    if (o !== null) items.push(agentPod(logs, name, o));
  }
  // logs targets the windows node too (no selector): it runs there, Ready, like anywhere else
  items.push(agentPod(logs, 'node-190'));
  for (const name of names) {
    if (name === 'node-190' || name === 'node-020') continue; // the exporter is not selected on windows; n020's taint keeps it off
    if (name === 'node-100') {
      items.push(agentPod(exporter, name, { bound: false }), pod('other-9100', { namespace: 'apps', node: name, hostPort: 9100 }));
      expected.push(['pending-host-port', 'monitoring/node-exporter', name]);
    } else if (name === 'node-010' || name === 'node-030') {
      items.push(agentPod(exporter, name, { ready: false }));
      expected.push(['node-not-ready', 'monitoring/node-exporter', name]);
    } else {
      items.push(agentPod(exporter, name));
    }
  }
  items.push(agentPod(exporter, 'node-190', { name: 'node-exporter-stale' }));
  expected.push(['misscheduled', 'monitoring/node-exporter', 'node-190']);
  // node-020: the exporter has no pod and the taint keeps it out of the targets: nothing to report
  // node-030's pod was to be gone at 02:00: judged at 05:00 it is stuck
  const r = report(items, undefined, '2026-01-01T05:00:00Z');
  const got = r.findings.map((f) => [f.cause, f.daemonSet, f.node]);
  expect(new Set(got.map((g) => g.join(' ')))).toEqual(new Set(expected.map((e) => e.join(' '))));
  expect(got).toHaveLength(expected.length);
  // 9 of 199 logs nodes unavailable < 10% of 200 rounded up (20): the old pods wait their turn
  expect(r.findings.filter((f) => f.cause === 'old-revision').every((f) => f.severity === 'warning')).toBe(true);
});

describe('the command', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
    return { code, stdout, stderr };
  };
  const write = (name: string, items: Manifest[]) => fs.writeFileSync(path.join(dir, name), JSON.stringify(list(items)));

  test('exit 0 healthy, 1 findings, 2 bad input; text, --json in the issue\'s shape, --markdown', () => {
    write('ok.json', state());
    expect(run('doctor', '--state', 'ok.json')).toMatchObject({ code: 0, stderr: '' });
    write('bad.json', state({ n2Pod: { waiting: { reason: 'CrashLoopBackOff' }, lastTerminated: { reason: 'Error', exitCode: 1 }, restartCount: 2 } }));
    const text = run('doctor', '--state', 'bad.json');
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('! [crash-loop] agents/logs n2: pod agents/logs-n2, container main: CrashLoopBackOff');
    const json = JSON.parse(run('doctor', '--state', 'bad.json', '--json').stdout);
    expect(Object.keys(json)).toEqual(['daemonSets', 'findings']);
    expect(Object.keys(json.findings[0])).toEqual(['cause', 'severity', 'daemonSet', 'node', 'pod', 'message', 'fix']);
    expect(run('doctor', '--state', 'bad.json', '--markdown').stdout).toContain('| ❌ | crash-loop | agents\\/logs | n2 |');
    expect(run('doctor', '--state', 'missing.json').code).toBe(2);
    expect(run('doctor', '--state', 'ok.json', '--agent', 'nope').code).toBe(2);
    fs.writeFileSync(path.join(dir, 'garbage.json'), '{"kind":"List","items":[ \u001b]0;owned\u0007');
    const garbage = run('doctor', '--state', 'garbage.json');
    expect(garbage.code).toBe(2);
    expect(garbage.stderr).not.toContain('\u001b');
  });

  test('a directory of dumps is read as one state', () => {
    const items = state({ n2Pod: null });
    fs.mkdirSync(path.join(dir, 'dump'));
    fs.writeFileSync(path.join(dir, 'dump', 'a.json'), JSON.stringify(list(items.slice(0, 3))));
    fs.writeFileSync(path.join(dir, 'dump', 'b.json'), JSON.stringify(list(items.slice(3))));
    const json = JSON.parse(run('doctor', '--state', 'dump', '--json').stdout);
    expect(json.findings.map((f: any) => [f.cause, f.node])).toEqual([['no-pod', 'n2']]);
  });

  test('untrusted text from the dump: no terminal escape in text, no markup in markdown', () => {
    const evil = '\u001b[2J\u202eEvil <img src=x onerror=alert(1)> | @team #1';
    write('evil.json', state({ n2Pod: { waiting: { reason: 'CreateContainerConfigError', message: evil } } }));
    const text = run('doctor', '--state', 'evil.json').stdout;
    expect(text).not.toMatch(/[\u001b\u202e]/);
    const md = run('doctor', '--state', 'evil.json', '--markdown').stdout;
    // `\<` is a literal `<` in GFM: only an unescaped `<` could open a tag
    expect(md).not.toMatch(/(?<!\\)<img|[\u001b\u202e]| @team| #1/);
    expect(md.split('\n').filter((l) => l.startsWith('| ❌')).every((l) => l.split(/(?<!\\)\|/).length === 8)).toBe(true);
  });
});
