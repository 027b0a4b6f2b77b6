/**
 * `node-agents doctor --live --wait NS/NAME`: the watcher's conditions for a rollout applied without Argo CD. The
 * judge it runs (judgePods) and the watcher Job's awk judge give the same verdict on the same shapes (every shape of
 * test/util/watcher-shapes.ts, run through the awk program with grep's tokens); the command reads a fake kubectl on
 * PATH that answers each `get --raw` from the views of a rollout, one view per read of the DaemonSet.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../src/cli/run';
import { fixFor } from '../../src/rollout/stuck-causes';
import { defaultWatchBudgets, judgePods, WATCH_PROGRAMS } from '../../src/rollout/watch-script';
import { ClusterView } from '../util/fake-watch-api';
import {
  containerCreating, crashLoop, daemonSet, event, imagePull, initImagePull, missingSecretEnv, oomKilled, pod, prePullPod, running,
  TEMPLATE_GENERATION, unschedulable,
} from '../util/watcher-shapes';

let dir: string;
let savedPath: string | undefined;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-wait-'));
  savedPath = process.env.PATH;
  process.env.PATH = `${path.join(dir, 'bin')}${path.delimiter}${savedPath}`;
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.mkdirSync(path.join(dir, 'views'));
});
afterEach(() => {
  process.env.PATH = savedPath;
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A fake kubectl: each read of the DaemonSet moves to the next view (the last one stays); pods and events come from the current view. */
function fakeKubectl(views: ClusterView[]): void {
  views.forEach((v, i) => {
    fs.writeFileSync(path.join(dir, 'views', `daemonsets-${i}.json`), JSON.stringify(v.daemonSet));
    fs.writeFileSync(path.join(dir, 'views', `pods-${i}.json`), JSON.stringify({ kind: 'PodList', items: v.pods }));
    fs.writeFileSync(path.join(dir, 'views', `events-${i}.json`), JSON.stringify({ kind: 'EventList', items: v.events ?? [] }));
  });
  const script = [
    '#!/bin/sh',
    `views="${path.join(dir, 'views')}"; last=${views.length - 1}`,
    `printf '%s\\n' "$*" >> "${path.join(dir, 'calls.log')}"`,
    'raw=""; for a in "$@"; do case "$a" in --raw=*) raw="${a#--raw=}";; esac; done',
    'n=$(cat "$views/n" 2>/dev/null || echo -1)',
    'case "$raw" in',
    '  */daemonsets/*) n=$((n + 1)); [ "$n" -gt "$last" ] && n=$last; echo "$n" > "$views/n"; cat "$views/daemonsets-$n.json" ;;',
    '  */pods\\?*) cat "$views/pods-$n.json" ;;',
    '  */events\\?*) cat "$views/events-$n.json" ;;',
    '  *) echo "error: unexpected $raw" >&2; exit 1 ;;',
    'esac',
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'bin', 'kubectl'), script, { mode: 0o755 });
}

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
  return { code, stdout, stderr };
}

const now = () => Math.floor(Date.now() / 1000);

test('a crash-looping canary: exit 1 with the pod, the node, the reason, the newest warning event and doctor\'s fix', () => {
  const t = now();
  fakeKubectl([{
    daemonSet: daemonSet({ desired: 3, updated: 1, available: 2 }),
    pods: [pod({ name: 'logs-canary-x7k2p', node: 'worker-a-1', ageSeconds: 600, status: crashLoop(t, 4) })],
    events: [event('logs-canary-x7k2p', t, 'Warning', 'BackOff', 'Back-off restarting failed container fluent-bit')],
  }]);
  const r = run('doctor', '--live', '--wait', 'observability/logs-canary', '--interval', '1');
  expect(r.stdout).toContain('wait observability/logs-canary: FAILED: pod observability/logs-canary-x7k2p on node worker-a-1: CrashLoopBackOff: container fluent-bit restarted 4 times (budget 3); last terminated: Error, exit code 1');
  expect(r.stdout).toContain('wait observability/logs-canary:   newest warning event: BackOff Back-off restarting failed container fluent-bit');
  expect(r.stdout).toContain(`cause crash-loop; fix: ${fixFor('crash-loop')}`);
  expect(r.code).toBe(1);
  // read-only: get --raw only, the pods of the new template generation
  const calls = fs.readFileSync(path.join(dir, 'calls.log'), 'utf8');
  expect(calls).toContain(`--raw=/api/v1/namespaces/observability/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/instance=logs,app.kubernetes.io/name=logs,node-agents.cdk8s.io/rollout-group=canary,pod-template-generation=${TEMPLATE_GENERATION}`)}`);
  expect(calls.split('\n').filter((l) => l !== '').every((l) => / get --raw=/.test(l))).toBe(true);
});

test('a slow healthy rollout: progress lines, exit 0 once every pod is updated and available', () => {
  const t = now();
  const views: ClusterView[] = [
    { daemonSet: daemonSet({ desired: 2, updated: 0, available: 2, observedGeneration: 4 }), pods: [] },
    { daemonSet: daemonSet({ desired: 2, updated: 1, available: 1 }), pods: [pod({ name: 'logs-canary-h0', node: 'worker-a-1', ageSeconds: 20, status: containerCreating(t) })] },
    { daemonSet: daemonSet({ desired: 2, updated: 2, available: 2 }), pods: [pod({ name: 'logs-canary-h0', node: 'worker-a-1', ageSeconds: 20, status: running(t) }), pod({ name: 'logs-canary-h1', node: 'worker-a-2', ageSeconds: 5, status: running(t, 1) })] },
  ];
  fakeKubectl(views);
  const r = run('doctor', '--live', '--wait', 'observability/logs-canary', '--interval', '1');
  expect(r.stdout).toContain('waiting for the DaemonSet controller to observe generation 5');
  expect(r.stdout).toContain('1 of 2 updated, 1 available; new revision (template generation 3): 1 pods, 0 ready');
  expect(r.stdout).toContain('wait observability/logs-canary: rollout complete: every desired pod updated and available');
  expect(r.code).toBe(0);
});

test('usage: --wait needs --live and NAMESPACE/NAME; budgets are whole numbers', () => {
  expect(run('doctor', '--wait', 'observability/logs-canary').stderr).toContain('--live');
  expect(run('doctor', '--live', '--wait', 'logs-canary').stderr).toContain('give NAMESPACE/DAEMONSET');
  expect(run('doctor', '--live', '--wait', 'observability/logs-canary', '--restart-budget', '-1').code).toBe(2);
  // the whole-read bounds do nothing under --wait: refused rather than ignored
  for (const flag of ['--live-timeout', '--live-max-bytes', '--live-max-objects']) {
    const r = run('doctor', '--live', '--wait', 'observability/logs-canary', flag, '100');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${flag} bounds the one-time live read, not --wait: its time is --timeout, and each of its reads is bounded by 512 MiB and --live-max-kept`);
  }
});

describe('the same conditions as the watcher Job: judgePods and the Job\'s awk judge agree on every shape', () => {
  const t = now();
  const budgets = { ...defaultWatchBudgets(120), failureGraceSeconds: 0 };
  const shapes: Array<[string, unknown]> = [
    ['crash loop', pod({ name: 'a', node: 'n1', ageSeconds: 600, status: crashLoop(t, 4) }, t)],
    ['crash loop within budget', pod({ name: 'b', node: 'n1', ageSeconds: 600, status: crashLoop(t, 2) }, t)],
    ['OOM kill', pod({ name: 'c', node: 'n1', ageSeconds: 200, status: oomKilled(t) }, t)],
    ['image pull', pod({ name: 'd', node: 'n1', ageSeconds: 90, status: imagePull(t, 'ImagePullBackOff') }, t)],
    ['missing Secret env', pod({ name: 'e', node: 'n1', ageSeconds: 90, status: missingSecretEnv(t) }, t)],
    ['missing Secret volume', pod({ name: 'f', node: 'n1', ageSeconds: 3600, status: containerCreating(t) }, t)],
    ['unschedulable', pod({ name: 'g', target: 'n2', ageSeconds: 900, status: unschedulable(t) }, t)],
    ['young unschedulable', pod({ name: 'h', target: 'n2', ageSeconds: 60, status: unschedulable(t) }, t)],
    ['healthy', pod({ name: 'i', node: 'n1', ageSeconds: 60, status: running(t, 1) }, t)],
  ];
  const agree = (shape: unknown, b: typeof budgets) => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'judge-'));
    try {
      fs.writeFileSync(path.join(work, 'pods.json'), JSON.stringify({ kind: 'PodList', items: [shape] }));
      const command = `${WATCH_PROGRAMS.tokenize} pods.json | awk -v now=${t} -v budget=${b.restartBudget} -v deadline=${b.pendingDeadlineSeconds} `
        + `-v grace=${b.failureGraceSeconds} -v seenfile=seen -v newseen=seen.new '${WATCH_PROGRAMS.judge}'`;
      const awk = spawnSync('sh', ['-c', command], { cwd: work, encoding: 'utf8' });
      const fail = awk.stdout.split('\n').find((l) => l.startsWith('FAIL'))?.split('\t');
      const ts = judgePods([shape], t, new Map(), b, new Map());
      expect(fail === undefined ? undefined : { cause: fail[1], pod: fail[2], node: fail[3], reason: fail[4], detail: fail[5] }).toEqual(ts.failure);
      expect(awk.stdout).toContain(`PODS ${ts.pods} ${ts.ready}`);
      return ts;
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  };
  test.each(shapes)('%s', (_name, shape) => {
    agree(shape, budgets);
  });

  test('a pod past the Pending deadline whose init container is in a pull error first seen now: the grace decides, not the deadline (no not-ready verdict)', () => {
    const late = prePullPod({ name: 'p', node: 'n1', ageSeconds: 3600, status: initImagePull(t, 'ImagePullBackOff') }, t);
    expect(agree(late, { ...budgets, failureGraceSeconds: 120 }).failure).toBeUndefined();
    expect(agree(late, budgets).failure).toMatchObject({ cause: 'image-pull', reason: 'ImagePullBackOff' });
  });
});

test('a read doctor would keep more of than --live-max-kept (pods with 450 labels each): exit 2 naming the read, the limit and the flag', () => {
  const t = now();
  const labels = Object.fromEntries(Array.from({ length: 450 }, (_, j) => [`example.com/label-${j}`, 'v'.repeat(40)]));
  const pods = Array.from({ length: 200 }, (_, i) => {
    const p = pod({ name: `logs-canary-${i}`, node: `worker-${i}`, ageSeconds: 20, status: running(t) });
    return { ...p, metadata: { ...p.metadata, labels: { ...p.metadata.labels, ...labels } } };
  });
  fakeKubectl([{ daemonSet: daemonSet({ desired: 200, updated: 200, available: 200 }), pods }]);
  const r = run('doctor', '--live', '--wait', 'observability/logs-canary', '--interval', '1', '--live-max-kept', '5Mi');
  expect(r.code).toBe(2);
  expect(r.stderr).toMatch(/^node-agents doctor: kubectl get --raw \/api\/v1\/namespaces\/observability\/pods\?labelSelector=\S+: what doctor keeps of the objects read is estimated at more than 5Mi, the limit of one read of --wait \(--live-max-kept\); raise it with --live-max-kept \(default (3Gi|\d+Mi)\)/);
  // within the default, the same pods pass: every desired pod is updated and available
  expect(run('doctor', '--live', '--wait', 'observability/logs-canary', '--interval', '1')).toMatchObject({ code: 0 });
}, 60_000);

describe('issue #52: --timeout bounds each read; a status count that is not a number is unknown, never 0', () => {
  test('a kubectl answering in 30 s: --timeout 2 stops the read at the deadline (the child killed), not after it', () => {
    fakeKubectl([{ daemonSet: daemonSet({ desired: 2, updated: 0, available: 0 }), pods: [] }]);
    // the fake's answer, 30 s late: exec, so the process killed is the one that holds the read
    const slow = path.join(dir, 'bin', 'kubectl');
    fs.renameSync(slow, `${slow}-fast`);
    fs.writeFileSync(slow, `#!/bin/sh\nexec sh -c 'sleep 30; exec "$0" "$@"' "${slow}-fast" "$@"\n`, { mode: 0o755 });
    const started = Date.now();
    const r = run('doctor', '--live', '--wait', 'observability/logs-canary', '--interval', '1', '--timeout', '2');
    const seconds = (Date.now() - started) / 1000;
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/cannot read daemonset observability\/logs-canary: kubectl did not answer within \d s \(stopped\)/);
    expect(r.stdout).toContain('wait observability/logs-canary: FAILED: the rollout is not complete after 2 s');
    // it was checked only between reads: a read of 30 s ran to its end (and --timeout 5 took 90 s)
    expect(seconds).toBeLessThan(10);
  }, 60_000);

  test('desiredNumberScheduled "3" (a string): not done, said, until --timeout (it was read as 0 and passed)', () => {
    const ds = daemonSet({ desired: 3, updated: 0, available: 0 });
    ds.status.desiredNumberScheduled = '3';
    fakeKubectl([{ daemonSet: ds, pods: [] }]);
    const r = run('doctor', '--live', '--wait', 'observability/logs-canary', '--interval', '1', '--timeout', '2');
    expect(r.code).toBe(1);
    expect(r.stdout).not.toContain('rollout complete');
    expect(r.stdout).toContain('wait observability/logs-canary: status.desiredNumberScheduled is missing or not a whole number: the rollout is not counted as done');
    expect(r.stdout).toContain('FAILED: the rollout is not complete after 2 s');
  }, 30_000);
});
