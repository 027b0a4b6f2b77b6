/**
 * How Argo CD treats a watcher, a Sync hook in the same sync wave as the DaemonSet it watches: gitops-engine's sync
 * loop (pkg/sync/sync_context.go Sync, ported in test/util/argo-sync-sim.ts, with cases of sync_context_test.go)
 * over the tasks of the rendered log-collector rollout, with gitops-engine's built-in DaemonSet health and with the
 * health customization the library ships (WATCHED_DAEMONSET_HEALTH_LUA, run by a real Lua 5.1 interpreter: Argo CD
 * runs health checks with gopher-lua, a Lua 5.1).
 */
import { spawnSync } from 'child_process';
import { readFileSync } from 'fs';
import * as path from 'path';
import { Testing } from 'cdk8s';
import { FluentBitOutput, LogCollectorDaemonSet, Promotion, RolloutWave } from '../../src';
import { ROLLOUT_WATCHER_ANNOTATION, WATCHED_DAEMONSET_HEALTH_LUA } from '../../src/constructs/wave-watchers';
import { Health, SimTask, syncOnce, syncUntilDone } from '../util/argo-sync-sim';
import { Manifest, synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';
import { prePullCanaryManifests } from '../util/watcher-shapes';

const LUA = process.env.LUA_BIN ?? 'lua5.1';
const HAS_LUA = spawnSync(LUA, ['-v'], { stdio: 'ignore' }).error === undefined;
if (!HAS_LUA && process.env.CI === 'true') throw new Error(`${LUA} is not installed: apt-get install lua5.1 (Argo CD's health checks are Lua 5.1)`);
const describeWithLua = HAS_LUA ? describe : describe.skip;

/** A Lua table literal of a JSON value. */
function lua(value: unknown): string {
  if (value === null || value === undefined) return 'nil';
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `{${value.map(lua).join(', ')}}`;
  return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `[${JSON.stringify(k)}] = ${lua(v)}`).join(', ')}}`;
}

/** The health the customization gives a live DaemonSet, as Argo CD runs it: the script is the body of a function of `obj`. */
function luaHealth(obj: unknown): { status: string; message: string } {
  const program = `local obj = ${lua(obj)}\nlocal function health()\n${WATCHED_DAEMONSET_HEALTH_LUA}\nend\nlocal hs = health()\nio.write(hs.status, "\\t", hs.message or "")\n`;
  const run = spawnSync(LUA, ['-'], { input: program, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(run.stderr);
  const [status, message] = run.stdout.split('\t');
  return { status, message };
}

function live(ds: Manifest, status: { desired: number; updated: number; available: number }, observed = true): Manifest {
  return {
    ...ds,
    metadata: { ...ds.metadata, generation: 7 },
    status: {
      observedGeneration: observed ? 7 : 6,
      desiredNumberScheduled: status.desired,
      updatedNumberScheduled: status.updated,
      numberAvailable: status.available,
    },
  };
}

test('the gates and watchers guide gives the health check as the library ships it', () => {
  const readme = readFileSync(path.join(REPO, 'docs', 'gates-watchers-alerts.md'), 'utf8');
  const block = /<!-- watched-daemonset-health\.lua -->\n```lua\n([\s\S]*?)```\n<!-- \/watched-daemonset-health\.lua -->/.exec(readme);
  expect(block?.[1]).toBe(WATCHED_DAEMONSET_HEALTH_LUA);
});

describe('gitops-engine sync_context_test.go, ported', () => {
  const hook = (name: string, phase: number, state: SimTask['state'], result: 'Running' | 'Succeeded' | 'Failed' = 'Running'): SimTask =>
    ({ name, phase, wave: 0, hook: true, state, hookResult: () => result });

  test('TestRunSync_HooksNotDeletedIfPhaseNotCompleted: a completed hook beside one in progress: Running', () => {
    expect(syncOnce([hook('completed-hook', 0, 'Succeeded'), hook('in-progress-hook', 0, 'Running', 'Running')]).phase).toBe('Running');
  });

  test('TestRunSync_HooksDeletedAfterPhaseCompletedFailed: a succeeded and a failed Sync hook, nothing running: Failed', () => {
    const result = syncOnce([hook('completed-hook1', 1, 'Succeeded'), hook('completed-hook2', 1, 'Failed')]);
    expect(result).toMatchObject({ phase: 'Failed', message: 'one or more synchronization tasks completed unsuccessfully' });
  });

  test('TestSyncWaveHook: wave -1, then wave 0 once it completes, then the PostSync hook, the last step', () => {
    let pod1: Health = 'Progressing';
    let pod2: Health = 'Progressing';
    const tasks: SimTask[] = [
      { name: 'pod-1', phase: 1, wave: -1, hook: false, state: '', health: () => pod1 },
      { name: 'pod-2', phase: 1, wave: 0, hook: false, state: '', health: () => pod2 },
      { name: 'pod-3', phase: 2, wave: 0, hook: true, state: '', hookResult: () => 'Succeeded' },
    ];
    expect(syncOnce(tasks).applied).toEqual(['pod-1']);
    expect(syncOnce(tasks)).toMatchObject({ phase: 'Running', applied: [] });
    pod1 = 'Healthy';
    expect(syncOnce(tasks).applied).toEqual(['pod-2']);
    pod2 = 'Healthy';
    expect(syncOnce(tasks)).toMatchObject({ phase: 'Running', applied: ['pod-3'] });
    expect(syncOnce(tasks).phase).toBe('Succeeded');
  });

  test('TestSyncSuccessfully (one step): resources of the last step succeed at apply, even if they later degrade', () => {
    expect(syncOnce([{ name: 'pod', phase: 1, wave: 0, hook: false, state: '', health: () => 'Degraded' }]).phase).toBe('Succeeded');
  });
});

function rolloutTasks(manifests: Manifest[], healthOf: (m: Manifest) => Health, watcherResult: (m: Manifest) => 'Running' | 'Succeeded' | 'Failed'): SimTask[] {
  return manifests.map((m) => {
    const annotations = m.metadata.annotations ?? {};
    const hook = annotations['argocd.argoproj.io/hook'] !== undefined;
    return {
      name: `${m.kind}/${m.metadata.name}`,
      phase: 1,
      wave: Number(annotations['argocd.argoproj.io/sync-wave'] ?? 0),
      hook,
      state: '' as const,
      health: m.kind === 'DaemonSet' ? () => healthOf(m) : undefined,
      hookResult: hook ? () => watcherResult(m) : undefined,
    };
  });
}

describe('a watcher in its DaemonSet\'s sync wave, over the log collector\'s rollout (canary, wave-1, fleet)', () => {
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', {
    name: 'logs',
    outputs: [FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' })],
    rollout: { waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')], promoted: Promotion.all(), argoCdSyncWaves: true, watch: {} },
  });
  const manifests = synthManifests(chart);
  const canary = manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === 'logs-canary');
  /** the canary's pods crash-loop: its rollout stops at the first pod (maxUnavailable 1), its watcher fails on the second read */
  let reads = 0;
  const watcherFailsOnCanary = (m: Manifest) => (m.metadata.name === 'logs-watch-canary' ? (reads++ >= 1 ? 'Failed' : 'Running') : 'Succeeded');
  const crashLooping = (m: Manifest) => (m.metadata.name === 'logs-canary' ? live(m, { desired: 5, updated: 1, available: 4 }) : live(m, { desired: 5, updated: 5, available: 5 }));

  test('every watched DaemonSet names its watcher', () => {
    for (const ds of manifests.filter((m) => m.kind === 'DaemonSet')) {
      expect(ds.metadata.annotations[ROLLOUT_WATCHER_ANNOTATION]).toBe(`logs-watch-${ds.spec.selector.matchLabels['node-agents.cdk8s.io/rollout-group']}`);
    }
  });

  test('with the built-in DaemonSet health (gitops-engine getAppsv1DaemonSetHealth: Progressing), a failed watcher does NOT fail the sync: Argo CD waits on the DaemonSet for good', () => {
    reads = 0;
    const builtin = (m: Manifest): Health => {
      const s = crashLooping(m).status;
      return s.updatedNumberScheduled < s.desiredNumberScheduled || s.numberAvailable < s.desiredNumberScheduled ? 'Progressing' : 'Healthy';
    };
    const tasks = rolloutTasks(manifests, builtin, watcherFailsOnCanary);
    const run = syncUntilDone(tasks, 30);
    expect(run.phase).toBe('Running');
    expect(tasks.find((t) => t.name === 'Job/logs-watch-canary')!.state).toBe('Failed');
    // the later waves are never applied
    expect(run.applied).toContain('DaemonSet/logs-canary');
    expect(run.applied).not.toContain('DaemonSet/logs-wave-1');
    expect(run.applied).not.toContain('DaemonSet/logs');
  });

  describeWithLua('with WATCHED_DAEMONSET_HEALTH_LUA (argocd-cm resource.customizations.health.apps_DaemonSet)', () => {
    test('a watched DaemonSet is Healthy once its spec is observed, whatever its pods; unobserved, Progressing', () => {
      expect(luaHealth(crashLooping(canary))).toEqual({ status: 'Healthy', message: 'rollout followed by the Sync hook Job logs-watch-canary: 1 of 5 pods updated, 4 available' });
      expect(luaHealth(live(canary, { desired: 5, updated: 1, available: 4 }, false)).status).toBe('Progressing');
    });

    test('any other DaemonSet: gitops-engine\'s built-in health, branch by branch (pkg/health/health_daemonset.go)', () => {
      const plain = { ...canary, metadata: { ...canary.metadata, annotations: {} } };
      expect(luaHealth(live(plain, { desired: 5, updated: 1, available: 4 }))).toEqual({ status: 'Progressing', message: 'Waiting for daemon set "logs-canary" rollout to finish: 1 out of 5 new pods have been updated...' });
      expect(luaHealth(live(plain, { desired: 5, updated: 5, available: 4 }))).toEqual({ status: 'Progressing', message: 'Waiting for daemon set "logs-canary" rollout to finish: 4 of 5 updated pods are available...' });
      expect(luaHealth(live(plain, { desired: 5, updated: 5, available: 5 })).status).toBe('Healthy');
      expect(luaHealth(live(plain, { desired: 5, updated: 5, available: 5 }, false)).message).toBe('Waiting for rollout to finish: observed daemon set generation less than desired generation');
      const onDelete = { ...plain, spec: { ...plain.spec, updateStrategy: { type: 'OnDelete' } } };
      expect(luaHealth(live(onDelete, { desired: 5, updated: 1, available: 5 }))).toEqual({ status: 'Healthy', message: 'daemon set 1 out of 5 new pods have been updated' });
    });

    const health = (m: Manifest): Health => luaHealth(crashLooping(m)).status as Health;

    test('a failed watcher fails the sync at the canary\'s wave: wave-1 and the fleet are never applied', () => {
      reads = 0;
      const tasks = rolloutTasks(manifests, health, watcherFailsOnCanary);
      const run = syncUntilDone(tasks);
      expect(run.phase).toBe('Failed');
      expect(run.applied).toContain('Job/logs-watch-canary');
      expect(run.applied).not.toContain('DaemonSet/logs-wave-1');
      expect(run.applied).not.toContain('DaemonSet/logs');
    });

    test('a retry (a new operation: argo-cd retries a failed sync, BeforeHookCreation recreates the Job) fails the same way: the watcher fails at once on its record', () => {
      for (let retry = 0; retry < 5; retry++) {
        const tasks = rolloutTasks(manifests, health, (m) => (m.metadata.name === 'logs-watch-canary' ? 'Failed' : 'Succeeded'));
        const run = syncUntilDone(tasks);
        expect(run.phase).toBe('Failed');
        expect(run.applied).not.toContain('DaemonSet/logs-wave-1');
      }
    });

    test('a healthy rollout: each wave is applied once its watcher passes, the sync succeeds', () => {
      const order: string[] = [];
      const tasks = rolloutTasks(manifests, health, (m) => {
        order.push(m.metadata.name);
        return 'Succeeded';
      });
      const run = syncUntilDone(tasks);
      expect(run.phase).toBe('Succeeded');
      const at = (name: string) => run.applied.indexOf(name);
      expect(at('DaemonSet/logs-canary')).toBeLessThan(at('DaemonSet/logs-wave-1'));
      expect(at('Job/logs-watch-canary')).toBeLessThan(at('DaemonSet/logs-wave-1'));
      expect(at('Job/logs-watch-wave-1')).toBeLessThan(at('DaemonSet/logs'));
    });
  });
});

/**
 * rollout.prePull: the pull-only DaemonSet of the promoted wave, in the sync wave before the wave's DaemonSet. A bad
 * image leaves its pods in ImagePullBackOff: updated, never available.
 */
describe('a pull-only DaemonSet whose image cannot be pulled (rollout.prePull with rollout.watch), promoting the canary', () => {
  const manifests = prePullCanaryManifests();
  const pull = manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === 'logs-prepull-canary')!;
  const wave = (m: Manifest) => Number(m.metadata.annotations['argocd.argoproj.io/sync-wave']);
  /** every pull-only pod in ImagePullBackOff: the DaemonSet's pods are all updated, none available */
  const pulling = (m: Manifest) => (m.metadata.name === 'logs-prepull-canary' ? live(m, { desired: 3, updated: 3, available: 0 }) : live(m, { desired: 3, updated: 3, available: 3 }));
  const builtin = (m: Manifest): Health => {
    const s = pulling(m).status;
    return s.updatedNumberScheduled < s.desiredNumberScheduled || s.numberAvailable < s.desiredNumberScheduled ? 'Progressing' : 'Healthy';
  };

  test('gitops-engine pkg/health/health_daemonset.go getAppsv1DaemonSetHealth: pods that never pull are Progressing, never Degraded; pkg/sync/sync_context.go Sync waits on a running task before it looks for failed ones: without a watcher the sync never ends', () => {
    expect(builtin(pull)).toBe('Progressing');
    const unwatched = manifests.filter((m) => !(m.kind === 'Job' && m.metadata.name === 'logs-watch-prepull-canary'));
    const tasks = rolloutTasks(unwatched, builtin, () => 'Succeeded');
    const run = syncUntilDone(tasks, 200);
    expect(run).toMatchObject({ phase: 'Running', calls: 200 });
    expect(run.applied).toContain('DaemonSet/logs-prepull-canary');
    expect(run.applied).not.toContain('DaemonSet/logs-canary');
  });

  test('the pull-only DaemonSet has its watcher: a Sync hook Job in its sync wave, named on the DaemonSet, allowed to read it', () => {
    const job = manifests.find((m) => m.kind === 'Job' && m.metadata.name === 'logs-watch-prepull-canary')!;
    expect(job.metadata.annotations).toMatchObject({ 'argocd.argoproj.io/hook': 'Sync', 'argocd.argoproj.io/hook-delete-policy': 'BeforeHookCreation' });
    expect(wave(job)).toBe(wave(pull));
    expect(wave(job)).toBe(wave(manifests.find((m) => m.kind === 'DaemonSet' && m.metadata.name === 'logs-canary')!) - 1);
    expect(pull.metadata.annotations[ROLLOUT_WATCHER_ANNOTATION]).toBe('logs-watch-prepull-canary');
    const env = Object.fromEntries(job.spec.template.spec.containers[0].env.map((e: Manifest) => [e.name, e.value]));
    expect(env).toMatchObject({ WATCH_DAEMONSET: 'logs-prepull-canary', WATCH_NAME: 'canary pre-pull', RECORD_NAME: 'logs-watch-prepull-canary' });
    expect(decodeURIComponent(env.WATCH_SELECTOR)).toBe('app.kubernetes.io/instance=logs,app.kubernetes.io/name=logs-prepull,node-agents.cdk8s.io/pre-pull-group=canary');
    const role = manifests.find((m) => m.kind === 'Role' && m.metadata.name === 'logs-watch')!;
    expect(role.rules[0].resourceNames).toContain('logs-prepull-canary');
  });

  describeWithLua('with WATCHED_DAEMONSET_HEALTH_LUA', () => {
    const health = (m: Manifest): Health => luaHealth(pulling(m)).status as Health;

    test('the sync, step by step: wave 0 applies the pull-only DaemonSet and its watcher; the watcher fails on the pull; the sync fails in wave 0 and the canary is never applied', () => {
      let reads = 0;
      const tasks = rolloutTasks(manifests, health, (m) => (m.metadata.name === 'logs-watch-prepull-canary' ? (reads++ >= 1 ? 'Failed' : 'Running') : 'Succeeded'));
      const first = syncOnce(tasks);
      // sync wave 0: the namespace-wide objects, the pull-only DaemonSet and its watcher; not the canary's DaemonSet
      expect(first.applied).toEqual(expect.arrayContaining(['DaemonSet/logs-prepull-canary', 'Job/logs-watch-prepull-canary']));
      expect(first.applied.filter((name) => name.startsWith('DaemonSet/') || name.startsWith('Job/')).sort()).toEqual(['DaemonSet/logs-prepull-canary', 'Job/logs-watch-prepull-canary']);
      expect(health(pull)).toBe('Healthy');
      expect(syncOnce(tasks).phase).toBe('Running');
      expect(syncOnce(tasks)).toMatchObject({ phase: 'Failed', message: 'one or more synchronization tasks completed unsuccessfully', applied: [] });
      expect(tasks.find((t) => t.name === 'Job/logs-watch-prepull-canary')!.state).toBe('Failed');
      expect(tasks.find((t) => t.name === 'DaemonSet/logs-canary')!.state).toBe('');
    });

    test('a good image: the watcher passes, the canary is applied after the pull', () => {
      const tasks = rolloutTasks(manifests, health, () => 'Succeeded');
      const run = syncUntilDone(tasks);
      expect(run.phase).toBe('Succeeded');
      expect(run.applied.indexOf('Job/logs-watch-prepull-canary')).toBeLessThan(run.applied.indexOf('DaemonSet/logs-canary'));
    });
  });
});
