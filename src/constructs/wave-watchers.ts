import { ApiObject, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { ARGOCD_HOOK, ARGOCD_HOOK_DELETE_POLICY, gateRevision } from './wave-gates';
import { AgentRollout, ARGOCD_SYNC_WAVE, RolloutWatch } from '../agent/rollout';
import { GATE_GID, GATE_IMAGE, GATE_UID, KUBERNETES_API, SERVICE_ACCOUNT_DIR } from '../alerts/gate';
import {
  defaultWatchBudgets, MAX_WATCH_SECONDS, WATCHER_SCRIPT, watcherEnvironment, WatchBudgets,
} from '../doctor/watch-script';
import { podStartupBudgetSeconds } from '../gpu/startup-budget';
import { constructWhere, ValidationError } from '../validation/errors';
import { kindOf } from '../validation/owner';
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

/**
 * The watchers of `rollout.watch`: one Argo CD Sync hook Job per rendered group (each wave and the fleet), in the
 * group DaemonSet's own sync wave, running WATCHER_SCRIPT while the DaemonSet rolls; and the ServiceAccount and
 * Role that let them read the DaemonSets and their pods and events and keep their verdicts. Renders nothing
 * without `watch`. Called by NodeAgentDaemonSet, so every agent construct has them.
 */
export function renderWaveWatchers(scope: Construct, agent: NodeAgentDaemonSet, rollout: AgentRollout | undefined): ApiObject[] {
  const watch = rollout?.watch;
  if (watch === undefined) return [];
  const where = constructWhere(scope, kindOf(scope));
  if (!rollout!.argoCdSyncWaves) {
    throw new ValidationError(where, 'rollout.watch needs rollout.argoCdSyncWaves: true; the watchers are Argo CD Sync hooks in their wave\'s sync wave');
  }
  checkWatch(watch, where);
  const account = `${agent.name}-watch`;
  // one per DaemonSet: with resource profiles, one per profile of each group
  const targets = agent.rolloutGroups.flatMap((group, index) => agent.daemonSetsOfGroup(group).map((ds) => ({ group, index, ds })));
  const jobs = targets.map((t) => watcherJob({ scope, agent, ...t, watch, account, where }));
  // metadata only: no pod restarts for it (what the health check above reads)
  targets.forEach((t, i) => ApiObject.of(t.ds).metadata.addAnnotation(ROLLOUT_WATCHER_ANNOTATION, jobs[i].name));
  watcherAccess(scope, agent, account, jobs.map((j) => j.name), targets.map((t) => t.ds.name));
  return jobs;
}

function checkWatch(watch: RolloutWatch, where: string): void {
  const whole = (prop: keyof RolloutWatch, min: number, max: number, why: string) => {
    const value = watch[prop];
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new ValidationError(where, `rollout.watch.${prop} ${String(value)} must be a whole number from ${min} to ${max} (${why})`);
    }
  };
  whole('restartBudget', 0, 100, 'restarts of one container before the watcher fails');
  whole('pendingDeadlineSeconds', 30, MAX_WATCH_SECONDS, 'a day at most: the watcher holds the Argo CD sync');
  whole('failureGraceSeconds', 0, MAX_WATCH_SECONDS, 'a day at most');
  whole('pollSeconds', 1, 600, 'between two reads of the API server');
  whole('timeoutSeconds', 60, MAX_WATCH_SECONDS, 'a day at most: the watcher holds the Argo CD sync');
  if (watch.image !== undefined) {
    const problems = checkImage('rollout.watch.image', watch.image);
    if (problems.length > 0) throw new ValidationError(where, problems.join('; '));
  }
}

interface WatcherJobInput {
  readonly scope: Construct;
  readonly agent: NodeAgentDaemonSet;
  readonly group: string;
  /** the group's place in the rollout order (its DaemonSet's sync wave) */
  readonly index: number;
  /** the DaemonSet it watches: the group's, or one profile's of the group */
  readonly ds: kplus.DaemonSet;
  readonly watch: RolloutWatch;
  readonly account: string;
  readonly where: string;
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

/** One group's watcher: a Sync hook Job in the sync wave of the group's DaemonSet. */
function watcherJob(input: WatcherJobInput): ApiObject {
  const { scope, agent, group, watch, where } = input;
  const daemonSet = input.ds.name;
  // a profile's DaemonSet carries the rollout-group label `<wave>.<profile>`; the default profile's, the wave
  const label = input.ds.podMetadata.getLabel(ROLLOUT_GROUP_LABEL) ?? group;
  const jobName = `${agent.name}-watch-${label.replace(/\./g, '-')}`;
  if (jobName.length > 63) {
    throw new ValidationError(where, `watcher Job name "${jobName}" is longer than 63 characters (the job-name label value limit); shorten the agent or wave name`);
  }
  const groupDaemonSet = ApiObject.of(input.ds);
  // Resolved at synthesis, once the group's DaemonSet has every patch: its startup budget and its revision.
  let resolved: { env: { [name: string]: string }; budgets: WatchBudgets } | undefined;
  const resolve = () => {
    if (resolved === undefined) {
      const spec = groupDaemonSet.toJson().spec;
      const budgets = watchBudgets(watch, spec?.template?.spec);
      const env = watcherEnvironment({ group, namespace: agent.namespace, daemonSet, selector: spec?.selector?.matchLabels ?? {}, budgets });
      resolved = {
        budgets,
        env: {
          ...env,
          KUBERNETES_API,
          RECORD_NAME: jobName,
          SERVICE_ACCOUNT_DIR,
          WATCH_REVISION: gateRevision({ name: daemonSet, spec }, env),
          WORK_DIR,
        },
      };
    }
    return resolved;
  };
  const labels = {
    'app.kubernetes.io/component': 'rollout-watch',
    'app.kubernetes.io/instance': agent.name,
    'app.kubernetes.io/managed-by': 'cdk8s',
    // Not the agent's own name: the agent's Services and DaemonSets select name + instance.
    'app.kubernetes.io/name': `${agent.name}-watch`,
    [ROLLOUT_GROUP_LABEL]: label,
  };
  return new ApiObject(scope, `Watch-${label}`, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName,
      namespace: agent.namespace,
      labels,
      annotations: {
        [ARGOCD_HOOK]: 'Sync',
        [ARGOCD_HOOK_DELETE_POLICY]: 'BeforeHookCreation',
        // The DaemonSet's own sync wave: Argo CD applies both together and waits for both.
        [ARGOCD_SYNC_WAVE]: `${argoSyncWave(input.index)}`,
      },
    },
    spec: {
      // One attempt: a failed watcher must stop the sync, not be retried into passing.
      backoffLimit: 0,
      // The script gives its own verdict at timeoutSeconds; the deadline is a backstop a minute later.
      activeDeadlineSeconds: Lazy.any({ produce: () => resolve().budgets.timeoutSeconds + 60 }),
      template: {
        metadata: { labels },
        spec: watcherPodSpec(input.account, watch.image ?? GATE_IMAGE, Lazy.any({
          produce: () => {
            const env = resolve().env;
            return Object.keys(env).sort().map((name) => ({ name, value: env[name] }));
          },
        })),
      },
    },
  });
}

/** The watcher's pod: the gate's (non-root, read-only root filesystem, no capability), an emptyDir for its files. */
function watcherPodSpec(account: string, image: string, env: unknown): object {
  return {
    restartPolicy: 'Never',
    // Its token may only read the agent's DaemonSets, pods and events and keep its record (the Role below).
    serviceAccountName: account,
    automountServiceAccountToken: true,
    enableServiceLinks: false,
    securityContext: {
      runAsNonRoot: true,
      runAsUser: GATE_UID,
      runAsGroup: GATE_GID,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    containers: [{
      name: 'watch',
      image,
      command: ['sh', '-c', WATCHER_SCRIPT],
      env,
      resources: {
        // a fleet's pod list is walked as a stream (grep, awk), never held whole
        limits: { memory: '64Mi' },
        requests: { cpu: '10m', memory: '16Mi' },
      },
      securityContext: {
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        readOnlyRootFilesystem: true,
      },
      volumeMounts: [{ name: 'work', mountPath: WORK_DIR }],
    }],
    volumes: [{ name: 'work', emptyDir: { sizeLimit: '256Mi' } }],
  };
}

/**
 * The watchers' ServiceAccount and Role: get the agent's DaemonSets by name; list pods and events in the agent's
 * namespace (RBAC cannot limit a list to names: the watcher selects the DaemonSet's pods by label); get and patch
 * its record ConfigMaps by name and create ConfigMaps. Read-only on everything but its records.
 */
function watcherAccess(scope: Construct, agent: NodeAgentDaemonSet, account: string, recordNames: string[], daemonSets: string[]): void {
  const labels = {
    'app.kubernetes.io/component': 'rollout-watch',
    'app.kubernetes.io/instance': agent.name,
    'app.kubernetes.io/managed-by': 'cdk8s',
    'app.kubernetes.io/name': `${agent.name}-watch`,
  };
  const metadata = { name: account, namespace: agent.namespace, labels };
  new ApiObject(scope, 'WatchServiceAccount', { apiVersion: 'v1', kind: 'ServiceAccount', metadata });
  new ApiObject(scope, 'WatchRole', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata,
    rules: [
      { apiGroups: ['apps'], resources: ['daemonsets'], resourceNames: [...daemonSets].sort(), verbs: ['get'] },
      { apiGroups: [''], resources: ['pods', 'events'], verbs: ['list'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [...recordNames].sort(), verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    ],
  });
  new ApiObject(scope, 'WatchRoleBinding', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
    subjects: [{ kind: 'ServiceAccount', name: account, namespace: agent.namespace }],
  });
}
