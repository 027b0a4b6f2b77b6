/**
 * The rollout watcher Job's script, run as is with `sh -c` and the Job's own environment, against a local fake of
 * the API server (test/util/fake-watch-api.ts, authorizing each request with the rendered Role) serving the shapes a
 * bad version takes (test/util/watcher-shapes.ts): a crash loop, an OOM kill, an image pull failure, a missing
 * Secret (env and volume), an unschedulable pod, and a slow but healthy rollout. Only the API server's URL, the
 * token's directory, the work directory and the poll interval (and, where a shape must last, the grace) are
 * changed. Each run goes through the host's sh (dash) and, where installed, through busybox's sh, awk, grep and
 * sed, which the Job's Alpine image runs.
 */
import { spawn, spawnSync } from 'child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { FluentBitOutput, LogCollectorDaemonSet, Promotion, RolloutWave, RolloutWatch } from '../../src';
import { UNFINISHED_ATTEMPTS } from '../../src/rollout/hook-shell';
import { fixFor } from '../../src/rollout/stuck-causes';
import { WATCHER_SCRIPT } from '../../src/rollout/watch-script';
import { ClusterView, FakeWatchApi, TOKEN } from '../util/fake-watch-api';
import { Manifest, synthManifests } from '../util/manifests';
import {
  containerCreating, crashLoop, daemonSet, event, imagePull, initImagePull, missingSecretEnv, NAMESPACE, oomKilled, pod, prePullCanaryManifests,
  prePullDaemonSet, prePullPod,
  running, TEMPLATE_GENERATION, unschedulable,
} from '../util/watcher-shapes';

const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];

export function watcherObjects(watch: RolloutWatch = {}, image?: string): Manifest[] {
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'logs',
    image,
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })],
    rollout: { waves: WAVES, promoted: Promotion.all(), argoCdSyncWaves: true, watch },
  });
  return synthManifests(chart);
}

const manifests = watcherObjects();
const canaryJob = manifests.find((m) => m.kind === 'Job' && m.metadata.name === 'logs-watch-canary');
const role = manifests.find((m) => m.kind === 'Role' && m.metadata.name === 'logs-watch');
const envOf = (job: Manifest): Record<string, string> =>
  Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: Manifest) => [e.name, e.value]));
const RECORD = 'logs-watch-canary';
const REVISION = envOf(canaryJob).WATCH_REVISION;

const BUSYBOX = spawnSync('busybox', ['--help'], { stdio: 'ignore' }).error === undefined ? 'busybox' : undefined;
if (BUSYBOX === undefined && process.env.CI === 'true') throw new Error('busybox is not installed: apt-get install busybox (the watcher image\'s shell and tools)');

const api = new FakeWatchApi(NAMESPACE);
const dir = mkdtempSync(path.join(tmpdir(), 'watcher-'));
const serviceAccountDir = path.join(dir, 'serviceaccount');
/** busybox's applets, and the host's curl (the image's is curl too) */
const busyboxBin = path.join(dir, 'busybox-bin');

beforeAll(async () => {
  mkdirSync(serviceAccountDir);
  writeFileSync(path.join(serviceAccountDir, 'token'), TOKEN);
  writeFileSync(path.join(serviceAccountDir, 'ca.crt'), '');
  if (BUSYBOX) {
    mkdirSync(busyboxBin);
    for (const applet of ['sh', 'awk', 'grep', 'sed', 'tr', 'cut', 'head', 'tail', 'date', 'cat', 'mv', 'sleep']) {
      symlinkSync(spawnSync('which', ['busybox'], { encoding: 'utf8' }).stdout.trim(), path.join(busyboxBin, applet));
    }
    symlinkSync(spawnSync('which', ['curl'], { encoding: 'utf8' }).stdout.trim(), path.join(busyboxBin, 'curl'));
  }
  api.rules = role.rules;
  await api.start();
});

afterAll(async () => {
  await api.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly output: string;
}

let runs = 0;
/** Runs the Job's container command with the Job's env, changing only what is given; with busybox's tools when `shell` is 'busybox'. */
function runWatcher(job: Manifest, shell: 'sh' | 'busybox', overrides: Record<string, string> = {}): Promise<Run> {
  const work = path.join(dir, `work-${runs++}`);
  mkdirSync(work);
  const container = job.spec.template.spec.containers[0];
  const jobEnv = Object.fromEntries(container.env.map((e: Manifest) => [e.name, e.value]));
  const env = { ...jobEnv, KUBERNETES_API: api.url, SERVICE_ACCOUNT_DIR: serviceAccountDir, WORK_DIR: work, POLL_SECONDS: '1', ...overrides };
  const [command, ...args] = container.command as string[];
  const binary = shell === 'busybox' ? path.join(busyboxBin, command) : command;
  return new Promise((resolve) => {
    const child = spawn(binary, args, { env: { PATH: shell === 'busybox' ? busyboxBin : process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (c) => (output += c));
    child.stderr.on('data', (c) => (output += c));
    const timer = setTimeout(() => child.kill('SIGTERM'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const SHELLS: Array<'sh' | 'busybox'> = BUSYBOX ? ['sh', 'busybox'] : ['sh'];
const steady = (view: (now: number) => ClusterView) => (_read: number, now: number) => view(now);

describe.each(SHELLS)('the watcher script (%s) on the shapes of a bad version', (shell) => {
  test('a crash loop past the restart budget fails, naming the pod, the node, the reason and doctor\'s fix', async () => {
    api.reset(steady((now) => ({
      daemonSet: daemonSet({ desired: 3, updated: 1, available: 2 }),
      pods: [
        pod({ name: 'logs-canary-x7k2p', node: 'worker-a-1', ageSeconds: 600, status: crashLoop(now, 4) }),
        // a pod of the previous template generation is not the new version's: never judged
        pod({ name: 'logs-canary-old01', node: 'worker-a-2', ageSeconds: 86400, generation: TEMPLATE_GENERATION - 1, status: crashLoop(now, 40) }),
      ],
      events: [event('logs-canary-x7k2p', now, 'Warning', 'BackOff', 'Back-off restarting failed container fluent-bit in pod logs-canary-x7k2p_observability(uid)')],
    })));
    const run = await runWatcher(canaryJob, shell);
    expect(run.output).toContain('watch canary: FAILED: pod observability/logs-canary-x7k2p on node worker-a-1: CrashLoopBackOff: container fluent-bit restarted 4 times (budget 3); last terminated: Error, exit code 1');
    expect(run.output).toContain('watch canary:   newest warning event: BackOff Back-off restarting failed container fluent-bit');
    expect(run.output).toContain(`watch canary:   cause crash-loop; fix: ${fixFor('crash-loop')}`);
    expect(run.output).not.toContain('logs-canary-old01');
    expect(run.output).toContain(`kubectl -n observability patch configmap ${RECORD} --type merge -p '{"data":{"override":"${REVISION}"}}'`);
    expect(run.code).toBe(1);
    expect(api.configMaps.get(RECORD)?.data.state).toBe(`${REVISION} failed`);
    expect(api.refused).toEqual([]);
  }, 70_000);

  test('a crash loop within the restart budget is not a failure yet', async () => {
    let reads = 0;
    api.reset((read, now) => {
      reads = read;
      return read < 2
        ? { daemonSet: daemonSet({ desired: 1, updated: 1, available: 0 }), pods: [pod({ name: 'logs-canary-x7k2p', node: 'worker-a-1', ageSeconds: 100, status: crashLoop(now, 2) })] }
        : { daemonSet: daemonSet({ desired: 1, updated: 1, available: 1 }), pods: [pod({ name: 'logs-canary-x7k2p', node: 'worker-a-1', ageSeconds: 100, status: running(now, 2) })] };
    });
    const run = await runWatcher(canaryJob, shell);
    expect(reads).toBeGreaterThanOrEqual(2);
    expect(run.output).toContain('watch canary: rollout complete: every desired pod (1) updated and available');
    expect(run.code).toBe(0);
  }, 70_000);

  test('an OOM kill fails at once, with the exit code', async () => {
    api.reset(steady((now) => ({
      daemonSet: daemonSet({ desired: 2, updated: 1, available: 1 }),
      pods: [pod({ name: 'logs-canary-m2q9d', node: 'worker-b-3', ageSeconds: 200, status: oomKilled(now) })],
    })));
    const run = await runWatcher(canaryJob, shell);
    expect(run.output).toContain('watch canary: FAILED: pod observability/logs-canary-m2q9d on node worker-b-3: OOMKilled: container fluent-bit was OOMKilled (exit code 137, 1 restarts)');
    expect(run.output).toContain(`cause crash-loop; fix: ${fixFor('crash-loop')}`);
    expect(run.code).toBe(1);
  }, 70_000);

  test('an image pull failure fails once it lasts the grace; a pull error that clears within it does not', async () => {
    api.reset(steady((now) => ({
      daemonSet: daemonSet({ desired: 2, updated: 1, available: 1 }),
      pods: [pod({ name: 'logs-canary-p4v8n', node: 'worker-a-1', ageSeconds: 90, status: imagePull(now, 'ImagePullBackOff') })],
    })));
    const run = await runWatcher(canaryJob, shell, { FAILURE_GRACE_SECONDS: '2' });
    expect(run.output).toMatch(/watch canary: FAILED: pod observability\/logs-canary-p4v8n on node worker-a-1: ImagePullBackOff: container fluent-bit image cr\.fluentbit\.io\/fluent\/fluent-bit:4\.2\.33: Back-off pulling image "cr\.fluentbit\.io\/fluent\/fluent-bit:4\.2\.33"/);
    expect(run.output).toContain(`cause image-pull; fix: ${fixFor('image-pull')}`);
    expect(run.code).toBe(1);

    api.reset((read, now) => (read === 0
      ? { daemonSet: daemonSet({ desired: 1, updated: 1, available: 0 }), pods: [pod({ name: 'logs-canary-p4v8n', node: 'worker-a-1', ageSeconds: 30, status: imagePull(now, 'ErrImagePull') })] }
      : { daemonSet: daemonSet({ desired: 1, updated: 1, available: 1 }), pods: [pod({ name: 'logs-canary-p4v8n', node: 'worker-a-1', ageSeconds: 30, status: running(now) })] }));
    const transient = await runWatcher(canaryJob, shell, { FAILURE_GRACE_SECONDS: '30' });
    expect(transient.code).toBe(0);
  }, 70_000);

  test('a missing Secret: as env (CreateContainerConfigError) and as a volume (Pending, FailedMount), both config-error', async () => {
    api.reset(steady((now) => ({
      daemonSet: daemonSet({ desired: 2, updated: 1, available: 1 }),
      pods: [pod({ name: 'logs-canary-s3cr7', node: 'worker-a-1', ageSeconds: 90, status: missingSecretEnv(now) })],
    })));
    const env = await runWatcher(canaryJob, shell, { FAILURE_GRACE_SECONDS: '1' });
    expect(env.output).toContain('watch canary: FAILED: pod observability/logs-canary-s3cr7 on node worker-a-1: CreateContainerConfigError: container fluent-bit: secret "es-credentials" not found');
    expect(env.output).toContain(`cause config-error; fix: ${fixFor('config-error')}`);
    expect(env.code).toBe(1);

    api.reset(steady((now) => ({
      daemonSet: daemonSet({ desired: 2, updated: 1, available: 1 }),
      pods: [pod({ name: 'logs-canary-v0l1m', node: 'worker-a-1', ageSeconds: 3600, status: containerCreating(now) })],
      events: [
        event('logs-canary-v0l1m', now, 'Normal', 'Scheduled', 'Successfully assigned observability/logs-canary-v0l1m to worker-a-1', 3600),
        event('logs-canary-v0l1m', now, 'Warning', 'FailedMount', 'MountVolume.SetUp failed for volume "es-tls" : secret "es-tls" not found', 20),
      ],
    })));
    const volume = await runWatcher(canaryJob, shell);
    expect(volume.output).toMatch(/watch canary: FAILED: pod observability\/logs-canary-v0l1m on node worker-a-1: Pending: pod bound to the node but its containers not started after (359\d|36\d\d) s \(deadline 480 s\)/);
    expect(volume.output).toContain('newest warning event: FailedMount MountVolume.SetUp failed for volume "es-tls" : secret "es-tls" not found');
    expect(volume.output).toContain(`cause config-error; fix: ${fixFor('config-error')}`);
    expect(volume.code).toBe(1);
  }, 70_000);

  test('a pod the scheduler cannot place fails past the pending deadline, with the scheduler\'s words', async () => {
    api.reset(steady((now) => ({
      daemonSet: daemonSet({ desired: 2, updated: 1, available: 1 }),
      pods: [pod({ name: 'logs-canary-q1w2e', target: 'worker-c-2', ageSeconds: 900, status: unschedulable(now) })],
    })));
    const run = await runWatcher(canaryJob, shell);
    expect(run.output).toMatch(/FAILED: pod observability\/logs-canary-q1w2e on node worker-c-2: Unschedulable: pod Pending for (899|9\d\d) s \(deadline 480 s\); the scheduler: 0\/12 nodes are available: 1 Insufficient memory/);
    expect(run.output).toContain(`cause pending-resources; fix: ${fixFor('pending-resources')}`);
    expect(run.code).toBe(1);
  }, 70_000);

  test('a slow but healthy rollout: pods created, pulled, started one at a time, one restart within budget; passes once complete', async () => {
    const nodes = ['worker-a-1', 'worker-a-2', 'worker-a-3'];
    api.reset((read, now) => {
      // read 0: generation not observed yet; then one node every two reads
      if (read === 0) return { daemonSet: daemonSet({ desired: 3, updated: 0, available: 3, observedGeneration: 4 }), pods: [] };
      const done = Math.min(3, Math.floor((read - 1) / 2));
      const pods = nodes.slice(0, Math.min(3, done + 1)).map((node, i) => pod({
        name: `logs-canary-h${i}`, node, ageSeconds: 30, status: i < done ? running(now, i === 1 ? 1 : 0) : containerCreating(now),
      }));
      return { daemonSet: daemonSet({ desired: 3, updated: Math.min(3, done + 1), available: done === 3 ? 3 : 2 }), pods };
    });
    const run = await runWatcher(canaryJob, shell);
    expect(run.output).toContain('watch canary: waiting for the DaemonSet controller to observe generation 5');
    expect(run.output).toContain(`watch canary: 1 of 3 updated, 2 available; new revision (template generation ${TEMPLATE_GENERATION}): 1 pods, 0 ready`);
    expect(run.output).toContain('watch canary: rollout complete: every desired pod (3) updated and available: promoting past this wave');
    expect(run.output).not.toContain('FAILED');
    expect(run.code).toBe(0);
    expect(api.configMaps.get(RECORD)?.data.state).toBe(`${REVISION} passed`);
    // the pods of the new template generation only, selected by the DaemonSet's labels
    expect(api.requests).toContainEqual(expect.stringMatching(/^GET \/api\/v1\/namespaces\/observability\/pods\?labelSelector=app\.kubernetes\.io%2Finstance%3Dlogs%2C.*%2Cpod-template-generation%3D3$/));
    expect(api.refused).toEqual([]);
  }, 70_000);
});

describe.each(SHELLS)('the watcher script (%s) on what it cannot take as is', (shell) => {
  /** Any character a terminal may take for a control, but the newline ending each log line; U+FFFD: a byte that was no UTF-8. */
  const CONTROL = /[\x00-\x09\x0b-\x1f\x7f-\x9f\ufffd]/;

  test('a template generation that is not a whole number fails closed, never splits into the other numbers', async () => {
    const withTemplate = (template: string) => steady(() => {
      const ds = daemonSet({ desired: 3, updated: 1, available: 2 });
      ds.metadata.annotations['deprecated.daemonset.template.generation'] = template;
      return { daemonSet: ds, pods: [] };
    });
    // read as six words, "9 9 0 0 0" made observed 9, desired, updated and available 0: the rollout complete
    api.reset(withTemplate('9 9 0 0 0'));
    const split = await runWatcher(canaryJob, shell, { WATCH_TIMEOUT_SECONDS: '5' });
    expect(split.output).toContain('watch canary: FAILED: daemonset observability/logs-canary has template generation (annotation '
      + 'deprecated.daemonset.template.generation) \'9 9 0 0 0\', not a whole number; the watcher fails closed');
    expect(split.output).not.toContain('rollout complete');
    expect(split.code).toBe(1);
    expect(api.configMaps.get(RECORD)?.data.state).toBe(`${REVISION} failed`);
    // a glob: the files of the working directory
    api.reset(withTemplate('*'));
    const glob = await runWatcher(canaryJob, shell, { WATCH_TIMEOUT_SECONDS: '5' });
    expect(glob.output).toContain('has template generation (annotation deprecated.daemonset.template.generation) \'*\', not a whole number');
    expect(glob.code).toBe(1);
    api.reset(steady(() => ({ daemonSet: { ...daemonSet({ desired: 3, updated: 3, available: 3 }), status: { desiredNumberScheduled: '3e0', observedGeneration: 5 } }, pods: [] })));
    const number = await runWatcher(canaryJob, shell, { WATCH_TIMEOUT_SECONDS: '5' });
    expect(number.output).toContain('has desiredNumberScheduled 3e0, not a whole number');
    expect(number.code).toBe(1);
  }, 70_000);

  test('a DaemonSet answer that is not one whole JSON document (a proxy\'s page quoting a complete one) is no answer: fails closed', async () => {
    api.reset(steady(() => ({ daemonSet: daemonSet({ desired: 1, updated: 1, available: 1 }), pods: [] })));
    api.rawAnswer = (_method, p) => (p.includes('/daemonsets/')
      ? { code: 200, body: Buffer.from(`<html><body><pre>${JSON.stringify(daemonSet({ desired: 1, updated: 1, available: 1 }))}</pre></body></html>`) }
      : undefined);
    const run = await runWatcher(canaryJob, shell);
    expect(run.output).toContain('watch canary: cannot read daemonset observability/logs-canary (HTTP 200): not JSON (a stray <html><body><pre>): <html><body><pre>{');
    expect(run.output).toContain('FAILED: 5 reads in a row failed; the watcher fails closed');
    expect(run.output).not.toContain('rollout complete');
    expect(run.code).toBe(1);
    expect(api.configMaps.get(RECORD)?.data.state).toBe(`${REVISION} failed`);
  }, 70_000);

  test('a failing pod whose name is no DNS subdomain: not put in a URL, and quoted in the command to paste', async () => {
    const name = 'logs-canary-x7k2p&limit=1;$(id)';
    api.reset(steady((now) => ({
      daemonSet: daemonSet({ desired: 3, updated: 1, available: 2 }),
      pods: [pod({ name, node: 'worker-a-1', ageSeconds: 600, status: crashLoop(now, 4) })],
    })));
    const run = await runWatcher(canaryJob, shell);
    expect(run.output).toContain('watch canary: the failing pod\'s name is not a DNS subdomain: its events are not read');
    expect(run.output).toContain('watch canary:   look: kubectl -n observability describe pod \'logs-canary-x7k2p&limit=1;$(id)\'; '
      + 'kubectl -n observability logs \'logs-canary-x7k2p&limit=1;$(id)\' --all-containers --previous');
    expect(api.requests.filter((r) => r.includes('/events'))).toEqual([]);
    expect(run.code).toBe(1);
  }, 70_000);

  test('what the API server answers reaches the log without a byte a terminal takes for a control', async () => {
    api.reset(steady((now) => {
      // C1 controls (U+009B CSI, U+0085) in a status message, as JSON carries them: raw, in UTF-8
      const status = imagePull(now, 'ImagePullBackOff');
      status.containerStatuses[0].state.waiting.message = 'Back-off \u009b2J\u0085 pulling';
      return { daemonSet: daemonSet({ desired: 2, updated: 1, available: 1 }), pods: [pod({ name: 'logs-canary-p4v8n', node: 'worker-a-1', ageSeconds: 90, status })] };
    }));
    // the events answer with raw ESC and BEL bytes in a message
    api.rawAnswer = (_method, p) => (p.endsWith('/events') ? {
      code: 200,
      body: Buffer.from('{"items":[{"type":"Warning","reason":"Failed","message":"pull \x1b[31mred\x1b]0;title\x07 \x9b end","lastTimestamp":"2026-01-01T00:00:00Z","involvedObject":{"name":"logs-canary-p4v8n"}}]}', 'latin1'),
    } : undefined);
    const run = await runWatcher(canaryJob, shell, { FAILURE_GRACE_SECONDS: '0' });
    expect(run.output).toContain('ImagePullBackOff: container fluent-bit image cr.fluentbit.io/fluent/fluent-bit:4.2.33: Back-off ?2J? pulling');
    expect(run.output).toContain('newest warning event: Failed pull ?[31mred?]0;title? ? end');
    expect(run.output).not.toMatch(CONTROL);
    expect(run.code).toBe(1);
    // an error page with terminal controls, five times: the watcher fails closed, and its log holds none of them
    api.reset(steady(() => ({ daemonSet: daemonSet({ desired: 1, updated: 1, available: 1 }), pods: [] })));
    api.rawAnswer = (_method, p) => (p.includes('/daemonsets/') ? { code: 400, body: Buffer.from('<h1>\x1b[2J\x1bc bad gateway \x9b\x07</h1>', 'latin1') } : undefined);
    const refused = await runWatcher(canaryJob, shell);
    expect(refused.output).toContain('cannot read daemonset observability/logs-canary (HTTP 400): <h1>?[2J?c bad gateway ??</h1>');
    expect(refused.output).toContain('FAILED: 5 reads in a row failed; the watcher fails closed');
    expect(refused.output).not.toMatch(CONTROL);
  }, 70_000);
});

describe('Argo CD retries a failed sync (argo-cd controller/appcontroller.go: automated operations retry 5 times by default), '
  + 'and BeforeHookCreation deletes the failed watcher Job before each retry creates it again', () => {
  test('a failed watcher stays failed on every retry, also once the pods look healthy, without watching again', async () => {
    api.reset(steady((now) => ({ daemonSet: daemonSet({ desired: 1, updated: 1, available: 0 }), pods: [pod({ name: 'logs-canary-m2q9d', node: 'worker-b-3', ageSeconds: 200, status: oomKilled(now) })] })));
    expect((await runWatcher(canaryJob, 'sh')).code).toBe(1);
    // Someone restarted the pod by hand; it runs now. A retry of the same sync must not pass.
    const healthy = steady((now) => ({ daemonSet: daemonSet({ desired: 1, updated: 1, available: 1 }), pods: [pod({ name: 'logs-canary-n3w00', node: 'worker-b-3', ageSeconds: 10, status: running(now) })] }));
    const record = api.configMaps.get(RECORD)!;
    for (let retry = 1; retry <= 5; retry++) {
      api.reset(healthy);
      api.configMaps.set(RECORD, record);
      const run = await runWatcher(canaryJob, 'sh');
      expect(run.output).toContain(`watch canary: FAILED before for revision ${REVISION} (configmap observability/${RECORD}); not watching again`);
      expect(run.output).not.toContain('watching daemonset');
      expect(run.code).toBe(1);
    }
    // deleting the record (a person: watch again) lets the same revision be watched, and pass
    api.reset(healthy);
    expect((await runWatcher(canaryJob, 'sh')).code).toBe(0);
  }, 120_000);

  test('an attempt that ended without a verdict is watched again, up to UNFINISHED_ATTEMPTS; an override passes the revision; a new revision is watched again', async () => {
    api.reset(steady((now) => ({ daemonSet: daemonSet({ desired: 1, updated: 1, available: 1 }), pods: [pod({ name: 'logs-canary-n3w00', node: 'worker-b-3', ageSeconds: 10, status: running(now) })] })));
    api.configMaps.set(RECORD, { data: { state: `${REVISION} running` } });
    const evicted = await runWatcher(canaryJob, 'sh');
    expect(evicted.output).toContain(`ended without a verdict (pod deleted or evicted, or the deadline passed): not a verdict, watching again (attempt 2 of ${UNFINISHED_ATTEMPTS})`);
    expect(evicted.code).toBe(0);
    expect(api.configMaps.get(RECORD)!.data.state).toBe(`${REVISION} passed`);
    api.configMaps.set(RECORD, { data: { state: `${REVISION} running ${UNFINISHED_ATTEMPTS}` } });
    const interrupted = await runWatcher(canaryJob, 'sh');
    expect(interrupted.output).toContain(`FAILED: ${UNFINISHED_ATTEMPTS} attempts for revision ${REVISION} ended without a verdict`);
    expect(interrupted.code).toBe(1);
    expect(api.configMaps.get(RECORD)!.data.state).toBe(`${REVISION} failed`);
    api.configMaps.get(RECORD)!.data.override = REVISION;
    const overridden = await runWatcher(canaryJob, 'sh');
    expect(overridden.output).toContain(`has override ${REVISION}, this revision passes without watching`);
    expect(overridden.code).toBe(0);
    const next = watcherObjects({}, 'cr.fluentbit.io/fluent/fluent-bit:4.2.4').find((m) => m.kind === 'Job' && m.metadata.name === RECORD);
    expect(envOf(next).WATCH_REVISION).not.toBe(REVISION);
    const watched = await runWatcher(next, 'sh');
    expect(watched.output).toContain('watching daemonset observability/logs-canary');
    expect(watched.code).toBe(0);
  }, 120_000);

  test('the record read whole: a label quoting an override is none, an answer that is not JSON fails closed', async () => {
    const healthy = steady((now: number) => ({ daemonSet: daemonSet({ desired: 1, updated: 1, available: 1 }), pods: [pod({ name: 'logs-canary-n3w00', node: 'worker-b-3', ageSeconds: 10, status: running(now) })] }));
    const recordPath = `/api/v1/namespaces/observability/configmaps/${RECORD}`;
    const answer = (body: string) => (method: string, p: string) => (method === 'GET' && p === recordPath ? { code: 200, body: Buffer.from(body) } : undefined);
    api.reset(healthy);
    api.rawAnswer = answer(JSON.stringify({ kind: 'ConfigMap', metadata: { name: RECORD, labels: { override: REVISION } }, data: { state: `${REVISION} failed`, note: 'x' } }));
    const labelled = await runWatcher(canaryJob, 'sh');
    expect(labelled.output).not.toContain('overridden');
    expect(labelled.output).toContain(`FAILED before for revision ${REVISION}`);
    expect(labelled.code).toBe(1);
    api.reset(healthy);
    api.rawAnswer = answer(`<html>${JSON.stringify({ kind: 'ConfigMap', data: { override: REVISION } })}</html>`);
    const page = await runWatcher(canaryJob, 'sh');
    expect(page.output).toContain(`watch canary: FAILED: cannot read the watcher's record, configmap observability/${RECORD} (invalid: not JSON: a stray <html>), the watcher fails closed`);
    expect(page.code).toBe(1);
  }, 70_000);

  test('the API server refusing or unreachable: the watcher fails closed', async () => {
    api.reset(steady(() => ({ daemonSet: daemonSet({ desired: 1, updated: 1, available: 1 }), pods: [] })));
    const saved = api.rules;
    api.rules = saved.filter((r: Manifest) => !r.resources.includes('pods'));
    try {
      const run = await runWatcher(canaryJob, 'sh');
      expect(run.output).toContain('cannot read the pods of daemonset observability/logs-canary (HTTP 403)');
      expect(run.output).toContain('FAILED: 5 reads in a row failed; the watcher fails closed');
      expect(run.code).toBe(1);
    } finally {
      api.rules = saved;
    }
  }, 70_000);
});

describe.each(SHELLS)('the pull-only DaemonSet\'s watcher (%s): the pull fails in the init container', (shell) => {
  const objects = prePullCanaryManifests();
  const prePullJob = objects.find((m) => m.kind === 'Job' && m.metadata.name === 'logs-watch-prepull-canary');
  const prePullRole = objects.find((m) => m.kind === 'Role' && m.metadata.name === 'logs-watch');
  beforeEach(() => (api.rules = prePullRole.rules));
  afterEach(() => (api.rules = role.rules));

  test('ImagePullBackOff lasting the grace fails, naming the pod, the node, the init container, the image and doctor\'s fix', async () => {
    api.reset(steady((now) => ({
      daemonSet: prePullDaemonSet({ desired: 2, updated: 2, available: 1 }),
      pods: [
        prePullPod({ name: 'logs-prepull-canary-k8w2d', node: 'worker-a-1', ageSeconds: 300, status: initImagePull(now, 'ImagePullBackOff') }),
        prePullPod({ name: 'logs-prepull-canary-h5n7q', node: 'worker-a-2', ageSeconds: 300, status: running(now) }),
      ],
    })));
    const run = await runWatcher(prePullJob, shell, { FAILURE_GRACE_SECONDS: '2' });
    expect(run.output).toContain('watch canary pre-pull: watching daemonset observability/logs-prepull-canary');
    expect(run.output).toContain('watch canary pre-pull: FAILED: pod observability/logs-prepull-canary-k8w2d on node worker-a-1: ImagePullBackOff: init container pull image cr.fluentbit.io/fluent/fluent-bit:4.2.33: Back-off pulling image "cr.fluentbit.io/fluent/fluent-bit:4.2.33"');
    expect(run.output).toContain(`watch canary pre-pull:   cause image-pull; fix: ${fixFor('image-pull')}`);
    expect(run.code).toBe(1);
    expect(api.configMaps.get('logs-watch-prepull-canary')?.data.state).toBe(`${envOf(prePullJob).WATCH_REVISION} failed`);
    expect(api.refused).toEqual([]);
  }, 70_000);

  test('every pull done (each pod available): passes, and the canary\'s sync wave may start', async () => {
    api.reset((read, now) => (read === 0
      ? { daemonSet: prePullDaemonSet({ desired: 1, updated: 1, available: 0 }), pods: [prePullPod({ name: 'logs-prepull-canary-k8w2d', node: 'worker-a-1', ageSeconds: 20, status: initImagePull(now, 'ErrImagePull') })] }
      : { daemonSet: prePullDaemonSet({ desired: 1, updated: 1, available: 1 }), pods: [prePullPod({ name: 'logs-prepull-canary-k8w2d', node: 'worker-a-1', ageSeconds: 20, status: running(now) })] }));
    const run = await runWatcher(prePullJob, shell, { FAILURE_GRACE_SECONDS: '30' });
    expect(run.output).toContain('watch canary pre-pull: rollout complete: every desired pod (1) updated and available');
    expect(run.code).toBe(0);
    expect(api.refused).toEqual([]);
  }, 70_000);
});

describe('the watcher Jobs as rendered', () => {
  test('one per rendered group, a Sync hook in its DaemonSet\'s own sync wave, bounded, locked down', () => {
    const jobs = manifests.filter((m) => m.kind === 'Job');
    const waveOf = (m: Manifest) => m.metadata.annotations['argocd.argoproj.io/sync-wave'];
    const ds = (name: string) => manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === name);
    expect(jobs.map((j) => [j.metadata.name, waveOf(j)])).toEqual([
      ['logs-watch-canary', waveOf(ds('logs-canary'))], ['logs-watch-wave-1', waveOf(ds('logs-wave-1'))], ['logs-watch-fleet', waveOf(ds('logs'))],
    ]);
    expect(canaryJob.metadata.annotations).toMatchObject({ 'argocd.argoproj.io/hook': 'Sync', 'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation' });
    expect(canaryJob.spec.backoffLimit).toBe(0);
    expect(canaryJob.spec.activeDeadlineSeconds).toBe(6 * 3600 + 60);
    const container = canaryJob.spec.template.spec.containers[0];
    expect(container.command).toEqual(['sh', '-c', WATCHER_SCRIPT]);
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true });
    expect(canaryJob.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 100 });
  });

  test('budgets: the fluent-bit startup budget (120 s) + 300 s, else the props given', () => {
    expect(envOf(canaryJob)).toMatchObject({ RESTART_BUDGET: '3', PENDING_DEADLINE_SECONDS: '480', FAILURE_GRACE_SECONDS: '120', POLL_SECONDS: '10' });
    const tuned = watcherObjects({ restartBudget: 1, pendingDeadlineSeconds: 60, failureGraceSeconds: 30, timeoutSeconds: 3600 }).find((m) => m.kind === 'Job');
    expect(envOf(tuned)).toMatchObject({ RESTART_BUDGET: '1', PENDING_DEADLINE_SECONDS: '60', FAILURE_GRACE_SECONDS: '30', WATCH_TIMEOUT_SECONDS: '3600' });
    expect(tuned.spec.activeDeadlineSeconds).toBe(3660);
    expect(() => watcherObjects({ restartBudget: -1 })).toThrow(/rollout\.watch\.restartBudget -1 must be a whole number from 0 to 100/);
  });

  test('read-only on the agent\'s DaemonSets, pods and events; its records only written', () => {
    expect(role.rules).toEqual([
      { apiGroups: ['apps'], resources: ['daemonsets'], resourceNames: ['logs', 'logs-canary', 'logs-wave-1'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods', 'events'], verbs: ['list'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['logs-watch-canary', 'logs-watch-fleet', 'logs-watch-wave-1'], verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    ]);
  });

  test('needs argoCdSyncWaves', () => {
    const chart = Testing.chart();
    expect(() => new LogCollectorDaemonSet(chart, 'logs', {
      outputs: [FluentBitOutput.stdout()],
      rollout: { waves: WAVES, promoted: Promotion.all(), watch: {} },
    })).toThrow(/rollout\.watch needs rollout\.argoCdSyncWaves: true/);
  });
});
