import { ApiObject, Lazy } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { checkHookPod, envList, hookAccess, hookJob, hookJobName, HookKind, hookRevision } from './hook-job';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { prePullTargetOf } from './wave-pre-pull';
import { HookPodOptions } from '../agent/options';
import { AgentRollout, RolloutWatch } from '../agent/rollout';
import { GATE_IMAGE, KUBERNETES_API, SERVICE_ACCOUNT_DIR } from '../rollout/hook-shell';
import { podStartupBudgetSeconds } from '../rollout/startup-budget';
import {
  defaultWatchBudgets, MAX_WATCH_SECONDS, WATCHER_SCRIPT, watcherEnvironment, WatchBudgets,
} from '../rollout/watch-script';
import { ValidationError } from '../validation/errors';
import { checkImage } from '../validation/values';
import { argoSyncWave, ROLLOUT_GROUP_LABEL } from '../waves/partition';

/** The annotation on a watched DaemonSet naming its watcher Job: what WATCHED_DAEMONSET_HEALTH_LUA reads. */
export const ROLLOUT_WATCHER_ANNOTATION = 'node-agents.cdk8s.io/rollout-watcher';

/**
 * An Argo CD health check for apps/DaemonSet (argocd-cm 'resource.customizations.health.apps_DaemonSet'), without
 * which a failed watcher cannot fail the sync: gitops-engine's Sync (pkg/sync/sync_context.go) waits while any task
 * of a multi-step sync is running, and a DaemonSet's task runs until the DaemonSet is Healthy, which a crash-looping
 * rollout never is (gitops-engine's DaemonSet health knows Progressing and Healthy only). So a DaemonSet carrying
 * ROLLOUT_WATCHER_ANNOTATION is Healthy as soon as its controller has observed its spec: its watcher, a Sync hook in
 * the same sync wave, holds the sync until the rollout completes, and its failure then fails the sync at once. Every
 * other DaemonSet gets gitops-engine's built-in DaemonSet health (pkg/health/health_daemonset.go
 * getAppsv1DaemonSetHealth), written again in Lua since a customization replaces the built-in check for the kind.
 */
export const WATCHED_DAEMONSET_HEALTH_LUA = `local hs = {}
local status = obj.status or {}
local annotations = obj.metadata.annotations or {}
local generation = obj.metadata.generation or 0
local observed = status.observedGeneration or 0
local desired = status.desiredNumberScheduled or 0
local updated = status.updatedNumberScheduled or 0
local available = status.numberAvailable or 0
if generation > observed then
  hs.status = "Progressing"
  hs.message = "Waiting for rollout to finish: observed daemon set generation less than desired generation"
  return hs
end
local watcher = annotations["${ROLLOUT_WATCHER_ANNOTATION}"]
if watcher ~= nil then
  hs.status = "Healthy"
  hs.message = "rollout followed by the Sync hook Job " .. watcher .. ": " .. updated .. " of " .. desired .. " pods updated, " .. available .. " available"
  return hs
end
if obj.spec ~= nil and obj.spec.updateStrategy ~= nil and obj.spec.updateStrategy.type == "OnDelete" then
  hs.status = "Healthy"
  hs.message = "daemon set " .. updated .. " out of " .. desired .. " new pods have been updated"
  return hs
end
if updated < desired then
  hs.status = "Progressing"
  hs.message = "Waiting for daemon set \\"" .. obj.metadata.name .. "\\" rollout to finish: " .. updated .. " out of " .. desired .. " new pods have been updated..."
  return hs
end
if available < desired then
  hs.status = "Progressing"
  hs.message = "Waiting for daemon set \\"" .. obj.metadata.name .. "\\" rollout to finish: " .. available .. " of " .. desired .. " updated pods are available..."
  return hs
end
hs.status = "Healthy"
return hs
`;

/** Where the watcher keeps its working files (an emptyDir: the root filesystem is read-only). */
const WORK_DIR = '/tmp';

/** The watchers' names and labels: Jobs `<agent>-watch-<group>`, account `<agent>-watch`. */
const WATCH: HookKind = { suffix: 'watch', component: 'rollout-watch' };

/**
 * The watchers of `rollout.watch`: one Argo CD Sync hook Job per rendered group (each wave and the fleet), in the
 * group DaemonSet's own sync wave, running WATCHER_SCRIPT while the DaemonSet rolls; one per pull-only DaemonSet of
 * `rollout.prePull` (`prePulls`), in its sync wave; and the ServiceAccount and Role that let them read the DaemonSets
 * and their pods and events and keep their verdicts. Renders nothing without `watch`. Called by NodeAgentDaemonSet,
 * so every agent construct has them.
 */
export function renderWaveWatchers(scope: Construct, agent: NodeAgentDaemonSet, rollout: AgentRollout | undefined,
  prePulls: readonly ApiObject[] = []): ApiObject[] {
  const watch = rollout?.watch;
  if (watch === undefined) return [];
  if (!rollout!.argoCdSyncWaves) {
    throw new ValidationError(scope, 'rollout.watch needs rollout.argoCdSyncWaves: true; the watchers are Argo CD Sync hooks in their wave\'s sync wave');
  }
  checkWatch(watch, scope);
  checkHookPod(rollout!.hookPod, scope);
  const targets = [...groupTargets(agent), ...prePullTargets(prePulls)];
  const jobs = targets.map((t) => watcherJob({ scope, agent, target: t, watch, hookPod: rollout!.hookPod }));
  // metadata only: no pod restarts for it (what the health check above reads)
  targets.forEach((t, i) => t.object.metadata.addAnnotation(ROLLOUT_WATCHER_ANNOTATION, jobs[i].name));
  // The watchers' token: get the agent's DaemonSets by name; list pods and events in the agent's namespace (RBAC
  // cannot limit a list to names: the watcher selects the DaemonSet's pods by label); keep their records.
  hookAccess(scope, agent, WATCH, 'Watch', jobs.map((j) => j.name), [
    { apiGroups: ['apps'], resources: ['daemonsets'], resourceNames: targets.map((t) => t.name).sort(), verbs: ['get'] },
    { apiGroups: [''], resources: ['pods', 'events'], verbs: ['list'] },
  ]);
  return jobs;
}

/** A DaemonSet a watcher follows: a group's (or one profile's of a group), or a pull-only DaemonSet. */
interface WatchedDaemonSet {
  /** the rollout-group label of the DaemonSet (or of the DaemonSet pulled for): `<wave>` or `<wave>.<profile>` */
  readonly groupLabel: string;
  /** what the watcher's log lines start with (WATCH_NAME): the group, `<group> pre-pull` */
  readonly watchName: string;
  /** what the watcher's Job name and construct id end with: `<wave>[-<profile>]`, `prepull-<wave>[-<profile>]` */
  readonly part: string;
  readonly name: string;
  readonly object: ApiObject;
  readonly syncWave: number;
}

/** One per DaemonSet of each group: with resource profiles, one per profile of each group; in the DaemonSet's own sync wave. */
function groupTargets(agent: NodeAgentDaemonSet): WatchedDaemonSet[] {
  return agent.rolloutGroups.flatMap((group, index) => agent.daemonSetsOfGroup(group).map((ds) => {
    // a profile's DaemonSet carries the rollout-group label `<wave>.<profile>`; the default profile's, the wave
    const label = ds.podMetadata.getLabel(ROLLOUT_GROUP_LABEL) ?? group;
    return { groupLabel: label, watchName: group, part: label.replace(/\./g, '-'), name: ds.name, object: ApiObject.of(ds), syncWave: argoSyncWave(index) };
  }));
}

/**
 * One per pull-only DaemonSet, in its sync wave (the one before its group's): gitops-engine's DaemonSet health never
 * says Degraded (pkg/health/health_daemonset.go getAppsv1DaemonSetHealth), so a pull that fails (ImagePullBackOff)
 * would keep the DaemonSet Progressing and the sync waiting in that wave for good (pkg/sync/sync_context.go Sync).
 */
function prePullTargets(prePulls: readonly ApiObject[]): WatchedDaemonSet[] {
  return prePulls.flatMap((object) => {
    const target = prePullTargetOf(object);
    if (target === undefined) return [];
    const part = `prepull-${target.label.replace(/\./g, '-')}`;
    return [{ groupLabel: target.label, watchName: `${target.group} pre-pull`, part, name: object.name, object, syncWave: target.syncWave }];
  });
}

function checkWatch(watch: RolloutWatch, scope: IConstruct): void {
  const whole = (prop: keyof RolloutWatch, min: number, max: number, why: string) => {
    const value = watch[prop];
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new ValidationError(scope, `rollout.watch.${prop} ${String(value)} must be a whole number from ${min} to ${max} (${why})`);
    }
  };
  whole('restartBudget', 0, 100, 'restarts of one container before the watcher fails');
  whole('pendingDeadlineSeconds', 30, MAX_WATCH_SECONDS, 'a day at most: the watcher holds the Argo CD sync');
  whole('failureGraceSeconds', 0, MAX_WATCH_SECONDS, 'a day at most');
  whole('pollSeconds', 1, 600, 'between two reads of the API server');
  whole('timeoutSeconds', 60, MAX_WATCH_SECONDS, 'a day at most: the watcher holds the Argo CD sync');
  if (watch.image !== undefined) {
    const problems = checkImage('rollout.watch.image', watch.image);
    if (problems.length > 0) throw new ValidationError(scope, problems.join('; '));
  }
}

interface WatcherJobInput {
  readonly scope: Construct;
  readonly agent: NodeAgentDaemonSet;
  /** the DaemonSet it watches: a group's, one profile's of a group, or a pull-only DaemonSet */
  readonly target: WatchedDaemonSet;
  readonly watch: RolloutWatch;
  readonly hookPod?: HookPodOptions;
}

/** The budgets: the props given, else the defaults from the group's own pod template (its startup budget). */
export function watchBudgets(watch: RolloutWatch, podSpec: unknown): WatchBudgets {
  const defaults = defaultWatchBudgets(podStartupBudgetSeconds(podSpec));
  return {
    restartBudget: watch.restartBudget ?? defaults.restartBudget,
    pendingDeadlineSeconds: watch.pendingDeadlineSeconds ?? Math.min(defaults.pendingDeadlineSeconds, MAX_WATCH_SECONDS),
    failureGraceSeconds: watch.failureGraceSeconds ?? defaults.failureGraceSeconds,
    pollSeconds: watch.pollSeconds ?? defaults.pollSeconds,
    timeoutSeconds: watch.timeoutSeconds ?? defaults.timeoutSeconds,
  };
}

/** One DaemonSet's watcher: a Sync hook Job in the DaemonSet's sync wave. */
function watcherJob(input: WatcherJobInput): ApiObject {
  const { scope, agent, target, watch } = input;
  const daemonSet = target.name;
  const jobName = hookJobName(agent, WATCH, target.part, 'watcher', scope);
  const groupDaemonSet = target.object;
  // Resolved at synthesis, once the group's DaemonSet has every patch: its startup budget and its revision.
  let resolved: { env: { [name: string]: string }; budgets: WatchBudgets } | undefined;
  const resolve = () => {
    if (resolved === undefined) {
      const spec = groupDaemonSet.toJson().spec;
      const budgets = watchBudgets(watch, spec?.template?.spec);
      const selector = spec?.selector?.matchLabels ?? {};
      const env = watcherEnvironment({ group: target.watchName, namespace: agent.namespace, daemonSet, selector, budgets });
      resolved = {
        budgets,
        env: {
          ...env,
          KUBERNETES_API,
          RECORD_NAME: jobName,
          SERVICE_ACCOUNT_DIR,
          WATCH_REVISION: hookRevision({ name: daemonSet, spec }, env),
          WORK_DIR,
        },
      };
    }
    return resolved;
  };
  return hookJob({
    scope,
    id: `Watch-${target.part}`,
    agent,
    kind: WATCH,
    name: jobName,
    group: target.groupLabel,
    // The DaemonSet's own sync wave: Argo CD applies both together and waits for both.
    syncWave: target.syncWave,
    // The script gives its own verdict at timeoutSeconds; the deadline is a backstop a minute later.
    activeDeadlineSeconds: Lazy.any({ produce: () => resolve().budgets.timeoutSeconds + 60 }),
    pod: {
      container: 'watch',
      image: watch.image ?? GATE_IMAGE,
      script: WATCHER_SCRIPT,
      env: Lazy.any({ produce: () => envList(resolve().env) }),
      // a fleet's pod list is walked as a stream (grep, awk), never held whole
      memoryLimit: '64Mi',
      workDir: { mountPath: WORK_DIR, sizeLimit: '256Mi' },
      options: input.hookPod,
    },
  });
}
