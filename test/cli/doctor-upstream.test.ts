/**
 * `node-agents doctor` against what the controller and the kubelet do (issue 35, cases 9-11), one fixture per case:
 * - who holds the update budget: kubernetes pkg/controller/daemon/update.go rollingUpdate and findUpdatedPodsOnNode,
 *   over every node with a pod of the DaemonSet (nodeToDaemonPods), targeted or not; kubernetes#123233 (an old pod
 *   not available counts in numUnavailable in the sync that replaces it); `case oldPod == nil:` under maxSurge;
 * - Terminating within the grace period: metadata.deletionTimestamp is the deadline (the API server sets it to the
 *   deletion's time plus the grace period: staging/src/k8s.io/apiserver/pkg/registry/rest/delete.go
 *   BeforeDelete), judged against the dump's own time or --now, never the wall clock;
 * - the kubelet's reasons: pkg/kubelet/images/types.go, pkg/kubelet/container/sync_result.go,
 *   pkg/kubelet/kuberuntime/kuberuntime_container.go.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { diagnose, DoctorReport } from '../../src/cli/doctor/diagnose';
import { StateBuilder } from '../../src/cli/doctor/state';
import { runCli } from '../../src/cli/run';
import { agentDaemonSet, agentPod, AgentPodOptions, event, list, node, NodeOptions, pod, revision } from '../util/cluster';
import { Manifest } from '../util/manifests';

function report(items: Manifest[], now?: string): DoctorReport {
  const builder = new StateBuilder();
  builder.addDocument(list(items), 'test');
  return diagnose(builder.finish('test'), { now });
}

const SURGE = { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } };

/** n1..n3 Ready unless overridden; the `logs` DaemonSet at revision v2; each node's pods as given. */
interface ClusterOptions {
  readonly nodes?: Record<string, NodeOptions>;
  readonly strategy?: Manifest;
  readonly extra?: Manifest[];
}

function cluster(pods: Record<string, AgentPodOptions[]>, o: ClusterOptions = {}): Manifest[] {
  const ds = agentDaemonSet('logs', { strategy: o.strategy });
  const items: Manifest[] = [ds, revision(ds, 'v1', 1), revision(ds, 'v2', 2), ...['n1', 'n2', 'n3'].map((n) => node(n, o.nodes?.[n]))];
  for (const [n, onNode] of Object.entries(pods)) onNode.forEach((p, i) => items.push(agentPod(ds, n, { name: `logs-${n}-${i}`, ...p })));
  return [...items, ...(o.extra ?? [])];
}

const causes = (r: DoctorReport) => r.findings.map((f) => [f.cause, f.node, f.severity]);
const oldRevision = (r: DoctorReport) => r.findings.find((f) => f.cause === 'old-revision')!;

describe('case 9: who holds the update budget (update.go rollingUpdate over nodeToDaemonPods)', () => {
  const unreachable = { n3: { ready: 'Unknown' as const } };

  test('maxUnavailable 1: an unreachable node the DaemonSet no longer targets, its old pod Terminating, holds the unit: n2 is blocked, not "waiting for its turn"', () => {
    // findUpdatedPodsOnNode skips the deleting pod: oldPod == nil && newPod == nil, numUnavailable++ on every sync
    const r = report(cluster({ n1: [{}], n2: [{ hash: 'v1' }], n3: [{ hash: 'v1', ready: false, deletionTimestamp: '2026-01-01T01:00:00Z' }] }, { nodes: unreachable }),
      '2026-01-01T05:00:00Z');
    expect(causes(r)).toEqual([['old-revision', 'n2', 'error'], ['terminating', 'n3', 'error']]);
    expect(oldRevision(r).message).toContain('the rollout is blocked: the update budget (maxUnavailable 1) is held by n3 (terminating)');
  });

  test('before n3\'s pod is deleted: its old pod is not available, replaced at once and counted in that same sync (kubernetes#123233): n2 is blocked by n3 then too', () => {
    const r = report(cluster({ n1: [{}], n2: [{ hash: 'v1' }], n3: [{ hash: 'v1', ready: false }] }, { nodes: unreachable }));
    expect(causes(r)).toEqual([['old-revision', 'n2', 'error'], ['node-not-ready', 'n3', 'error']]);
    expect(oldRevision(r).message).toContain('held by n3 (node-not-ready)');
    const n3 = r.findings[1].message;
    expect(n3).not.toContain('no longer counts');
    expect(n3).toContain('this old pod is not available, so it is deleted at once and counts against maxUnavailable in that sync, then stays Terminating while no kubelet confirms it');
  });

  test('maxUnavailable 1: an old pod crash-looping on a Ready node is replaced outside the budget and counts in it: n2 waits on n1', () => {
    const r = report(cluster({ n1: [{ hash: 'v1', waiting: { reason: 'CrashLoopBackOff' }, restartCount: 4 }], n2: [{ hash: 'v1' }], n3: [{}] }));
    expect(oldRevision(r)).toMatchObject({ severity: 'error', message: expect.stringContaining('held by n1 (crash-loop)') });
  });

  test('maxSurge 1: a node with only a new pod holds no surge unit (`case oldPod == nil:`): a crash-looping new pod on n1 does not block n2', () => {
    const r = report(cluster({ n1: [{ waiting: { reason: 'CrashLoopBackOff' }, restartCount: 5 }], n2: [{ hash: 'v1' }], n3: [{}] }, { strategy: SURGE }));
    expect(causes(r)).toEqual([['crash-loop', 'n1', 'error'], ['old-revision', 'n2', 'warning']]);
    expect(oldRevision(r).message).toContain('waiting for its turn (maxSurge 1)');
  });

  test('maxSurge 1: a new pod not available beside the old one holds the unit (numSurge++): n2 is blocked by n1', () => {
    const r = report(cluster({ n1: [{ hash: 'v1' }, { waiting: { reason: 'CrashLoopBackOff' }, restartCount: 5 }], n2: [{ hash: 'v1' }], n3: [{}] }, { strategy: SURGE }));
    expect(oldRevision(r)).toMatchObject({ severity: 'error', message: expect.stringContaining('the update budget (maxSurge 1) is held by n1 (crash-loop)') });
  });
});

describe('case 10: Terminating is normal within the grace period (deletionTimestamp is the deadline)', () => {
  // deleted at 00:10:00 with a 30 s grace period: deletionTimestamp 00:10:30
  const deleting: AgentPodOptions = { hash: 'v1', deletionTimestamp: '2026-01-01T00:10:30Z' };
  const seenAt = (time: string) => {
    const e = event(pod('other', { node: 'n1' }), 'Pulled', 'Successfully pulled image', 'Normal');
    return { ...e, lastTimestamp: time };
  };

  test('on a Ready node, within its grace period by the dump\'s newest event: a warning, and no force-deletion advised (exit 0)', () => {
    const r = report(cluster({ n1: [{}], n2: [deleting], n3: [{}] }, { extra: [seenAt('2026-01-01T00:10:05Z')] }));
    expect(causes(r)).toEqual([['terminating', 'n2', 'warning']]);
    expect(r.findings[0].message).toContain('terminating within its grace period (its grace period ends at 2026-01-01T00:10:30Z; now 2026-01-01T00:10:05Z (the dump\'s newest timestamp))');
    expect(r.findings[0].fix).not.toMatch(/force|Node object/);
  });

  test('on a Ready node, past its deadline: an error whose fix says not to force-delete while the node is reachable', () => {
    const r = report(cluster({ n1: [{}], n2: [deleting], n3: [{}] }), '2026-01-01T01:00:00Z');
    expect(causes(r)).toEqual([['terminating', 'n2', 'error']]);
    expect(r.findings[0].message).toContain('on a node that is Ready: its kubelet has not confirmed the deletion');
    expect(r.findings[0].fix).toContain('do not force-delete it while the node is reachable');
  });

  test('on an unreachable node, past its deadline: force-deletion (or deleting the Node) is the fix', () => {
    const r = report(cluster({ n1: [{}], n2: [{ ...deleting, ready: false }], n3: [{}] }, { nodes: { n2: { ready: 'Unknown' } } }), '2026-01-01T01:00:00Z');
    expect(causes(r)).toEqual([['terminating', 'n2', 'error']]);
    expect(r.findings[0].fix).toContain('force-delete the pod');
  });

  test('a pod the controller deleted from a node it no longer targets, within its grace period: a warning, not misscheduled', () => {
    const ds = agentDaemonSet('logs', { nodeSelector: { role: 'worker' } });
    const items = [ds, revision(ds, 'v2', 1), node('n1', { labels: { role: 'worker' } }), node('n2'), agentPod(ds, 'n1'),
      agentPod(ds, 'n2', { deletionTimestamp: '2026-01-01T00:10:30Z' }), seenAt('2026-01-01T00:10:05Z')];
    expect(causes(report(items))).toEqual([['terminating', 'n2', 'warning']]);
    expect(causes(report(items, '2026-01-01T00:20:00Z'))).toEqual([['terminating', 'n2', 'error']]);
  });

  test('judged against the dump, not the wall clock: a dump of 2026 read years later still sees the pod within its grace period', () => {
    const r = report(cluster({ n1: [{}], n2: [deleting], n3: [{}] }, { extra: [seenAt('2026-01-01T00:10:05Z')] }));
    expect(r.findings[0].severity).toBe('warning');
    expect(Date.now()).toBeGreaterThan(Date.parse('2026-01-01T00:10:30Z'));
  });

  test('a dump with no timestamp at all: a warning naming what cannot be told, and --now as the fix', () => {
    const items = cluster({ n1: [{}], n2: [deleting], n3: [{}] }).map((m) => (m.kind === 'Pod' ? { ...m, metadata: { ...m.metadata, creationTimestamp: undefined } } : m));
    const r = report(items);
    expect(causes(r)).toEqual([['terminating', 'n2', 'warning']]);
    expect(r.findings[0].message).toContain('the dump holds no timestamp to judge that against');
    expect(r.findings[0].fix).toContain('give --now');
  });

  test('doctor --now: taken as the dump\'s time; a value that is not an RFC 3339 time is bad usage (exit 2)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-now-'));
    try {
      fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(list(cluster({ n1: [{}], n2: [deleting], n3: [{}] }, { extra: [seenAt('2026-01-01T00:10:05Z')] }))));
      const run = (...argv: string[]) => {
        let stdout = '';
        let stderr = '';
        const code = runCli(['doctor', '--state', 'state.json', ...argv], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
        return { code, stdout, stderr };
      };
      expect(run().code).toBe(0);
      const late = run('--now', '2026-01-01T00:15:00Z');
      expect(late.code).toBe(1);
      expect(late.stdout).toContain('still terminating at 2026-01-01T00:15:00Z (--now)');
      const bad = run('--now', 'yesterday');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--now "yesterday": not an RFC 3339 time');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('case 11: causes by the kubelet\'s reasons', () => {
  const one = (n2: AgentPodOptions, extra: (ds: Manifest) => Manifest[] = () => []) => {
    const ds = agentDaemonSet('logs', { memory: '1Gi' });
    const n2Pod = agentPod(ds, 'n2', n2);
    const r = report([ds, revision(ds, 'v2', 1), node('n1'), node('n2'), agentPod(ds, 'n1'), n2Pod, ...extra(n2Pod)]);
    expect(r.findings).toHaveLength(1);
    return r.findings[0];
  };

  test.each([
    ['RunContainerError (sync_result.go ErrRunContainer)', 'RunContainerError', 'failed to start containerd task "main": exec: "fluent-bitt": executable file not found in $PATH'],
    ['CreateContainerError (kuberuntime ErrCreateContainer)', 'CreateContainerError', 'failed to generate container spec: seccomp profile "profiles/agent.json" not found'],
    ['PostStartHookError (kuberuntime ErrPostStartHook)', 'PostStartHookError', 'Exec lifecycle hook ([/bin/init]) for Container "main" failed'],
  ])('%s: start-error, not "create the missing Secret"', (_name, reason, message) => {
    const f = one({ waiting: { reason, message } });
    expect(f).toMatchObject({ cause: 'start-error', node: 'n2' });
    expect(f.message).toContain(message);
    expect(f.fix).not.toContain('Secret');
  });

  test('CreateContainerConfigError: a missing Secret keeps the Secret fix; runAsNonRoot gets the configuration fix', () => {
    expect(one({ waiting: { reason: 'CreateContainerConfigError', message: 'secret "logs-token" not found' } }).fix).toContain('create the missing Secret or ConfigMap');
    const f = one({ waiting: { reason: 'CreateContainerConfigError', message: 'container has runAsNonRoot and image will run as root' } });
    expect(f.cause).toBe('config-error');
    expect(f.fix).toContain('runAsNonRoot');
  });

  test('only the waiting reason CrashLoopBackOff is a crash loop: a running, unready container with one old restart is not-ready', () => {
    const f = one({ ready: false, restartCount: 1, lastTerminated: { reason: 'Error', exitCode: 1 } });
    expect(f.cause).toBe('not-ready');
    expect(f.message).toContain('container main restarted 1 time and runs now (not a crash loop)');
  });

  test('ImageInspectError (images/types.go ErrImageInspect) is an image problem with its own fix', () => {
    const f = one({ waiting: { reason: 'ImageInspectError', message: 'Failed to inspect image "example.com/agent:2": rpc error' } });
    expect(f.cause).toBe('image-pull');
    expect(f.fix).toContain('cannot read the image already on the node');
  });

  test('a pull error\'s real cause from the kubelet\'s event (HTTP 429) is kept over the back-off message', () => {
    const f = one({ waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "example.com/agent:2"' } }, (p) => [
      event(p, 'Failed', 'Failed to pull image "example.com/agent:2": failed to copy: httpReadSeeker: failed open: unexpected status code 429 Too Many Requests'),
    ]);
    expect(f.message).toContain('429 Too Many Requests');
    expect(f.message).not.toContain('Back-off pulling image');
    expect(f.fix).toContain('limits the pull rate (HTTP 429)');
  });

  test('an OOMKilled crash loop: raise the memory limit', () => {
    const f = one({ waiting: { reason: 'CrashLoopBackOff' }, lastTerminated: { reason: 'OOMKilled', exitCode: 137 }, restartCount: 6 });
    expect(f.cause).toBe('crash-loop');
    expect(f.fix).toContain('raise the memory limit');
  });

  test('pending-resources: no system-node-critical suggestion to a pod that has it', () => {
    const f = one({ bound: false }, (p) => {
      p.spec.priorityClassName = 'system-node-critical';
      p.spec.priority = 2000001000;
      return [pod('cache', { node: 'n2', memory: '7680Mi', priority: 2000001000 })];
    });
    expect(f.cause).toBe('pending-resources');
    expect(f.fix).toContain('has the system-node-critical priority class already');
    expect(f.fix).not.toContain('give the agent the system-node-critical priority class');
  });
});
