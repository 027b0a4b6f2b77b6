import { ApiObject, Lazy } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { AgentRollout, ARGOCD_SYNC_WAVE } from '../agent/rollout';
import { ValidationError } from '../validation/errors';
import { kindOf, userConstruct } from '../validation/owner';
import { checkImage } from '../validation/values';
import { addWarning } from '../validation/warnings';
import { argoSyncWave, ROLLOUT_GROUP_LABEL } from '../waves/partition';

/** The label value that marks a pull-only DaemonSet: `plan` and `estimate` read it (coverage/manifests.ts). */
export const PRE_PULL_COMPONENT = 'image-pre-pull';
/** The annotation naming the DaemonSet whose image a pre-pull DaemonSet pulls. */
export const PRE_PULL_FOR_ANNOTATION = 'node-agents.cdk8s.io/pre-pull-for';
export const DEFAULT_PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

/** What a pull-only DaemonSet pulls for: the group, its place in the rollout order, the group DaemonSet's rollout-group label. */
export interface PrePullTarget {
  readonly group: string;
  readonly index: number;
  /** `<wave>` or `<wave>.<profile>`: the pulled-for DaemonSet's rollout-group label */
  readonly label: string;
  /** the pull-only DaemonSet's Argo CD sync wave: the one before the group's */
  readonly syncWave: number;
}

const TARGETS = new WeakMap<ApiObject, PrePullTarget>();

/** What a pull-only DaemonSet rendered by renderPrePull pulls for (its watcher follows it in its sync wave). */
export function prePullTargetOf(prePull: ApiObject): PrePullTarget | undefined {
  return TARGETS.get(prePull);
}

/**
 * A command each agent kind's image runs and exits at once, as that image ships it: fluent-bit's binary
 * (/fluent-bit/bin/fluent-bit, the image's entrypoint, `-V, --version`), node_exporter's (/bin/node_exporter, the
 * image's ENTRYPOINT, kingpin's `--version`); NVIDIA's driver images are distribution images whose entrypoint is a
 * shell script (nvidia-driver), so their shell exits.
 */
const KIND_COMMANDS: Readonly<Record<string, string[]>> = {
  LogCollectorDaemonSet: ['/fluent-bit/bin/fluent-bit', '--version'],
  NodeExporterDaemonSet: ['/bin/node_exporter', '--version'],
  GpuDriverDaemonSet: ['sh', '-c', 'exit 0'],
};

/** A small security context: non-root, nothing writable, no capability. */
const CONTAINER_SECURITY = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true };

/**
 * The pull-only DaemonSet of `rollout.prePull` for the last promoted group, while a rollout is in progress
 * (`previous` given): nothing otherwise. Its pod spec is copied at synthesis from the group's rendered DaemonSet
 * (node affinity, node selector, tolerations, image pull secrets, the main container's image), so it lands on
 * exactly the group's nodes. No host access, no ServiceAccount token, priority 0, tiny requests.
 */
export function renderPrePull(scope: Construct, agent: NodeAgentDaemonSet, rollout: AgentRollout | undefined): ApiObject[] {
  const prePull = rollout?.prePull;
  if (prePull === undefined) return [];
  const outer = userConstruct(scope);
  const kind = kindOf(outer);
  if (!rollout!.argoCdSyncWaves) {
    throw new ValidationError(scope, 'rollout.prePull needs rollout.argoCdSyncWaves: true; Argo CD must apply the wave only once the pre-pull DaemonSet is Healthy');
  }
  const command = prePull.command ?? KIND_COMMANDS[kind];
  if (command === undefined || command.length === 0 || command.some((c) => typeof c !== 'string' || c === '')) {
    throw new ValidationError(scope, `rollout.prePull.command ${JSON.stringify(prePull.command)}: give the command the agent's image runs and exits at once, e.g. ["/agent", "--version"]`);
  }
  const pause = prePull.pauseImage ?? DEFAULT_PAUSE_IMAGE;
  const problems = checkImage('rollout.prePull.pauseImage', pause);
  if (problems.length > 0) throw new ValidationError(scope, problems.join('; '));
  if (rollout!.previous === undefined || agent.promotedGroups.length === 0) return [];
  if (rollout!.watch === undefined) {
    // gitops-engine's DaemonSet health never says Degraded and Sync waits on running tasks: only a watcher fails the sync
    addWarning(outer, 'rollout.prePull without rollout.watch: a pull that fails (ImagePullBackOff) keeps the pull-only DaemonSet Progressing, '
      + 'and Argo CD waits in its sync wave for good; add rollout.watch: {} (a watcher per pull-only DaemonSet fails the sync instead)');
  }
  const group = agent.promotedGroups[agent.promotedGroups.length - 1];
  const index = agent.rolloutGroups.indexOf(group);
  // one per DaemonSet of the group: with resource profiles, one per profile, on that profile's nodes
  return agent.daemonSetsOfGroup(group).map((ds) => prePullDaemonSet({ scope, agent, group, index, ds, command, pause }));
}

interface PrePullInput {
  readonly scope: Construct;
  readonly agent: NodeAgentDaemonSet;
  readonly group: string;
  /** the group's place in the rollout order */
  readonly index: number;
  /** the group's DaemonSet it pulls for */
  readonly ds: kplus.DaemonSet;
  readonly command: string[];
  readonly pause: string;
}

function prePullDaemonSet(input: PrePullInput): ApiObject {
  const { scope, agent, group, index, ds } = input;
  // a profile's DaemonSet carries the rollout-group label `<wave>.<profile>`; the default profile's, the wave
  const label = ds.podMetadata.getLabel(ROLLOUT_GROUP_LABEL) ?? group;
  const suffix = label.replace(/\./g, '-');
  const name = `${agent.name}-prepull-${suffix}`;
  if (name.length > 63) throw new ValidationError(scope, `pre-pull DaemonSet name "${name}" is longer than 63 characters; shorten the agent or wave name`);
  const selector = { 'app.kubernetes.io/instance': agent.name, 'app.kubernetes.io/name': `${agent.name}-prepull`, 'node-agents.cdk8s.io/pre-pull-group': label };
  const labels = { ...selector, 'app.kubernetes.io/component': PRE_PULL_COMPONENT, 'app.kubernetes.io/managed-by': 'cdk8s' };
  const groupDaemonSet = ApiObject.of(ds);
  const syncWave = argoSyncWave(index) - 1;
  const prePull = new ApiObject(scope, `PrePull-${label}`, {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: {
      name,
      namespace: agent.namespace,
      labels,
      // the sync wave before the group's DaemonSet: Argo CD applies the group once every pull is done
      annotations: { [ARGOCD_SYNC_WAVE]: `${syncWave}`, [PRE_PULL_FOR_ANNOTATION]: ds.name },
    },
    spec: {
      selector: { matchLabels: selector },
      // every node at once: nothing runs but the pull
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '100%', maxSurge: 0 } },
      template: {
        metadata: { labels },
        spec: Lazy.any({ produce: () => prePullPodSpec(groupDaemonSet.toJson().spec?.template?.spec ?? {}, input.command, input.pause) }),
      },
    },
  });
  TARGETS.set(prePull, { group, index, label, syncWave });
  return prePull;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
function prePullPodSpec(group: any, command: string[], pause: string): object {
  const nodeAffinity = group.affinity?.nodeAffinity;
  return {
    automountServiceAccountToken: false,
    enableServiceLinks: false,
    terminationGracePeriodSeconds: 1,
    ...(group.nodeSelector === undefined ? {} : { nodeSelector: group.nodeSelector }),
    ...(nodeAffinity === undefined ? {} : { affinity: { nodeAffinity } }),
    ...(group.tolerations === undefined ? {} : { tolerations: group.tolerations }),
    ...(group.imagePullSecrets === undefined ? {} : { imagePullSecrets: group.imagePullSecrets }),
    securityContext: { runAsNonRoot: true, runAsUser: 65534, runAsGroup: 65534, seccompProfile: { type: 'RuntimeDefault' } },
    initContainers: [{
      name: 'pull',
      image: group.containers?.[0]?.image,
      // the agent pulls IfNotPresent too: it finds the image this pod left in the node's cache
      imagePullPolicy: 'IfNotPresent',
      command,
      resources: { requests: { cpu: '1m', memory: '16Mi' }, limits: { memory: '64Mi' } },
      securityContext: CONTAINER_SECURITY,
    }],
    containers: [{
      name: 'pause',
      image: pause,
      imagePullPolicy: 'IfNotPresent',
      resources: { requests: { cpu: '1m', memory: '8Mi' }, limits: { memory: '16Mi' } },
      securityContext: CONTAINER_SECURITY,
    }],
  };
}
