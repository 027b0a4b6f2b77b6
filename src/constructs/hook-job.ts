import { createHash } from 'crypto';
import { ApiObject } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { HookPodOptions, TolerationOperator } from '../agent/options';
import { ARGOCD_SYNC_WAVE } from '../agent/rollout';
import { GATE_GID, GATE_UID } from '../rollout/hook-shell';
import { throwIfProblems, ValidationError } from '../validation/errors';
import { checkDnsSubdomain, checkLabelKey, checkLabels, checkTolerations } from '../validation/values';
import { ROLLOUT_GROUP_LABEL } from '../waves/partition';

/**
 * The Argo CD Sync hook Jobs of an agent's rollout: the gates (after a wave) and the watchers (beside a
 * DaemonSet). Both run a shell script in the same non-root pod, keep their verdicts in record ConfigMaps and
 * are deleted before the next sync creates them again; what differs (script, env, deadline, what the token
 * may read) is passed in.
 */

/** Argo CD's hook annotations: a Sync hook, deleted before the next sync creates it again. */
export const ARGOCD_HOOK = 'argocd.argoproj.io/hook';
export const ARGOCD_HOOK_DELETE_POLICY = 'argocd.argoproj.io/hook-delete-policy';

/**
 * The revision a hook's verdict is recorded for: a hash of the DaemonSet it follows (name and spec, as
 * rendered) and of the hook's environment (a gate's checks, bake, Prometheus; a watcher's budgets). A commit
 * that changes either runs the hook again; a retry of the same sync sees the same revision.
 */
export function hookRevision(daemonSet: { name: string; spec: unknown }, env: { [name: string]: string }): string {
  return createHash('sha256').update(JSON.stringify({ daemonSet, env })).digest('hex').slice(0, 16);
}

/** One kind of hook of an agent: 'gate' or 'watch', and its component label. */
export interface HookKind {
  /** the suffix of the account's and the Jobs' names: `<agent>-<suffix>` */
  readonly suffix: string;
  /** app.kubernetes.io/component */
  readonly component: string;
}

/** The labels of an agent's hooks of one kind, and of their ServiceAccount, Role and RoleBinding. */
export function hookLabels(agent: NodeAgentDaemonSet, kind: HookKind): { [key: string]: string } {
  return {
    'app.kubernetes.io/component': kind.component,
    'app.kubernetes.io/instance': agent.name,
    'app.kubernetes.io/managed-by': 'cdk8s',
    // Not the agent's own name: the agent's Services and DaemonSets select name + instance.
    'app.kubernetes.io/name': `${agent.name}-${kind.suffix}`,
  };
}

/** A hook Job's name, `<agent>-<suffix>-<part>`, refused past 63 characters (the job-name label value limit). */
export function hookJobName(agent: NodeAgentDaemonSet, kind: HookKind, part: string, noun: string, scope: IConstruct): string {
  const name = `${agent.name}-${kind.suffix}-${part}`;
  if (name.length > 63) {
    throw new ValidationError(scope, `${noun} Job name "${name}" is longer than 63 characters (the job-name label value limit); shorten the agent or wave name`);
  }
  return name;
}

/** An environment as a container's env list, sorted by name (deterministic output). */
export function envList(env: { [name: string]: unknown }): Array<{ name: string; value: unknown }> {
  return Object.keys(env).sort().map((name) => ({ name, value: env[name] }));
}

export interface HookJobInput {
  readonly scope: Construct;
  readonly id: string;
  readonly agent: NodeAgentDaemonSet;
  readonly kind: HookKind;
  readonly name: string;
  /** the rollout group the hook follows (its rollout-group label) */
  readonly group: string;
  readonly syncWave: number;
  readonly activeDeadlineSeconds: unknown;
  readonly pod: HookPodInput;
}

/** A Sync hook Job: one attempt, its pod labelled as the Job. */
export function hookJob(input: HookJobInput): ApiObject {
  const { agent } = input;
  const labels = { ...hookLabels(agent, input.kind), [ROLLOUT_GROUP_LABEL]: input.group };
  return new ApiObject(input.scope, input.id, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: input.name,
      namespace: agent.namespace,
      labels,
      annotations: {
        [ARGOCD_HOOK]: 'Sync',
        [ARGOCD_HOOK_DELETE_POLICY]: 'BeforeHookCreation',
        [ARGOCD_SYNC_WAVE]: `${input.syncWave}`,
      },
    },
    spec: {
      // One attempt: a failed hook must stop the sync, not be retried into passing.
      backoffLimit: 0,
      activeDeadlineSeconds: input.activeDeadlineSeconds,
      template: { metadata: { labels, annotations: hookPodAnnotations(input.pod) }, spec: hookPodSpec(`${agent.name}-${input.kind.suffix}`, input.pod) },
    },
  });
}

export interface HookPodInput {
  /** the container's name */
  readonly container: string;
  readonly image: string;
  readonly script: string;
  /** the container's env list (or a Lazy of it) */
  readonly env: unknown;
  readonly memoryLimit: string;
  /** an emptyDir mounted there, for a hook that writes files */
  readonly workDir?: { readonly mountPath: string; readonly sizeLimit: string };
  /** the user's options of the pod (`rollout.hookPod`) */
  readonly options?: HookPodOptions;
}

/**
 * A hook's pod annotations: Karpenter does not voluntarily disrupt (consolidate, drift, expire) a node running a pod
 * annotated `karpenter.sh/do-not-disrupt: "true"`, and the cluster autoscaler does not scale down a node running
 * one annotated `cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`: a gate baking 15 minutes or a watcher
 * watching for hours is not evicted mid-verdict.
 */
export const HOOK_POD_ANNOTATIONS: { readonly [key: string]: string } = {
  'karpenter.sh/do-not-disrupt': 'true',
  'cluster-autoscaler.kubernetes.io/safe-to-evict': 'false',
};

/** What `rollout.hookPod` must hold: label keys and values, annotation keys, tolerations, a DNS-subdomain priority class. */
export function checkHookPod(options: HookPodOptions | undefined, scope: IConstruct): void {
  if (!options) return;
  const problems = [
    ...checkLabels('rollout.hookPod.nodeSelector', options.nodeSelector),
    ...Object.keys(options.podAnnotations ?? {}).flatMap((key) => checkLabelKey('rollout.hookPod.podAnnotations', key)),
    ...checkTolerations('rollout.hookPod.tolerations', options.tolerations),
    ...(options.priorityClassName !== undefined ? checkDnsSubdomain('rollout.hookPod.priorityClassName', options.priorityClassName) : []),
  ];
  throwIfProblems(scope, problems);
}

/** The hook's pod annotations: the defaults, then the user's. */
function hookPodAnnotations(pod: HookPodInput): { [key: string]: string } {
  return { ...HOOK_POD_ANNOTATIONS, ...pod.options?.podAnnotations };
}

/** Where the hook's pod runs: a Linux node with the user's labels, the user's tolerations and priority. */
function hookPodPlacement(options: HookPodOptions | undefined): object {
  return {
    nodeSelector: { 'kubernetes.io/os': 'linux', ...options?.nodeSelector },
    ...(options?.tolerations?.length ? {
      tolerations: options.tolerations.map((t) => ({
        key: t.key, operator: t.operator ?? TolerationOperator.EQUAL, value: t.value, effect: t.effect, tolerationSeconds: t.tolerationSeconds,
      })),
    } : {}),
    ...(options?.priorityClassName ? { priorityClassName: options.priorityClassName } : {}),
  };
}

/** The hook's pod: non-root, read-only root filesystem, no capability; its token good only for what its Role allows. */
function hookPodSpec(account: string, pod: HookPodInput): object {
  const work = pod.workDir;
  return {
    restartPolicy: 'Never',
    // Its token may do only what the hooks' Role allows (hookAccess below).
    serviceAccountName: account,
    automountServiceAccountToken: true,
    enableServiceLinks: false,
    ...hookPodPlacement(pod.options),
    securityContext: {
      runAsNonRoot: true,
      runAsUser: GATE_UID,
      runAsGroup: GATE_GID,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    containers: [{
      name: pod.container,
      image: pod.image,
      command: ['sh', '-c', pod.script],
      env: pod.env,
      resources: {
        limits: { memory: pod.memoryLimit },
        requests: { cpu: '10m', memory: '16Mi' },
      },
      securityContext: {
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        readOnlyRootFilesystem: true,
      },
      ...(work ? { volumeMounts: [{ name: 'work', mountPath: work.mountPath }] } : {}),
    }],
    ...(work ? { volumes: [{ name: 'work', emptyDir: { sizeLimit: work.sizeLimit } }] } : {}),
  };
}

/** A Role rule. */
export interface HookRule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly resourceNames?: string[];
  readonly verbs: string[];
}

/**
 * The hooks' ServiceAccount `<agent>-<suffix>`, its Role and RoleBinding (ids `<idPrefix>ServiceAccount`,
 * `<idPrefix>Role`, `<idPrefix>RoleBinding`): the rules given (what the hooks read), then get and patch of their
 * record ConfigMaps by name and create of ConfigMaps in the agent's namespace (RBAC cannot restrict `create` by
 * name: the name is not known when the request is authorized). Nothing else: no Secrets, no delete.
 */
export function hookAccess(
  scope: Construct, agent: NodeAgentDaemonSet, kind: HookKind, idPrefix: string, recordNames: string[], readRules: HookRule[] = [],
): void {
  const account = `${agent.name}-${kind.suffix}`;
  const metadata = { name: account, namespace: agent.namespace, labels: hookLabels(agent, kind) };
  new ApiObject(scope, `${idPrefix}ServiceAccount`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata });
  new ApiObject(scope, `${idPrefix}Role`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata,
    rules: [
      ...readRules,
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [...recordNames].sort(), verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    ],
  });
  new ApiObject(scope, `${idPrefix}RoleBinding`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
    subjects: [{ kind: 'ServiceAccount', name: account, namespace: agent.namespace }],
  });
}
