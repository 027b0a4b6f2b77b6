import { createHash } from 'crypto';
import { ApiObject, Lazy } from 'cdk8s';
import { Construct } from 'constructs';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { AgentRollout, ARGOCD_SYNC_WAVE } from '../agent/rollout';
import {
  bakeSeconds, daemonSetGateChecks, GATE_GID, GATE_IMAGE, GATE_SCRIPT, GATE_UID, gateEnvironment, GateTarget, KUBERNETES_API,
  SERVICE_ACCOUNT_DIR,
} from '../alerts/gate';
import { WaveGate, WaveGateCheck } from '../alerts/options';
import { checkPromQL, checkSelector, GATE_FAILS } from '../alerts/promql-parse';
import { constructWhere, ValidationError } from '../validation/errors';
import { kindOf } from '../validation/owner';
import { checkImage } from '../validation/values';
import { FLEET_GROUP, gateSyncWave, groupResourceName, ROLLOUT_GROUP_LABEL } from '../waves/partition';

/** The longest a gate may query after its bake (a day): the gate holds the Argo CD sync that long. */
const GATE_MAX_TIMEOUT_SECONDS = 86400;

/** Argo CD's hook annotations: a Sync hook, deleted before the next sync creates it again. */
export const ARGOCD_HOOK = 'argocd.argoproj.io/hook';
export const ARGOCD_HOOK_DELETE_POLICY = 'argocd.argoproj.io/hook-delete-policy';

/** The agent kind's own default checks for a wave (the DaemonSet checks are always added first). */
export type KindGateChecks = (target: GateTarget) => WaveGateCheck[];

/**
 * The revision a gate's verdict is recorded for: a hash of the gated wave's DaemonSet (name and
 * spec, as rendered) and of the gate's environment (its checks, bake, Prometheus). A commit that
 * changes either gates again; a retry of the same sync sees the same revision.
 */
export function gateRevision(daemonSet: { name: string; spec: unknown }, env: { [name: string]: string }): string {
  return createHash('sha256').update(JSON.stringify({ daemonSet, env })).digest('hex').slice(0, 16);
}

/**
 * The gate Jobs of `rollout.gates`: one Argo CD Sync hook Job per gated wave, in the sync wave
 * between that wave's DaemonSet and the next group's, and the ServiceAccount, Role and RoleBinding
 * that let them keep their verdicts in one ConfigMap each (see `GATE_SCRIPT`). Renders nothing
 * without gates; a gate after a wave whose DaemonSet is not rendered (a new agent not yet promoted
 * there) is skipped. Called at the end of each agent construct; `scope` owns the objects.
 */
export function renderWaveGates(
  scope: Construct, agent: NodeAgentDaemonSet, rollout: AgentRollout | undefined, kindChecks?: KindGateChecks,
): ApiObject[] {
  const gates = rollout?.gates ?? [];
  if (gates.length === 0) return [];
  const where = constructWhere(scope, kindOf(scope));
  if (!rollout!.argoCdSyncWaves) {
    throw new ValidationError(where, 'rollout.gates needs rollout.argoCdSyncWaves: true; the gates are Argo CD Sync hooks ordered between the waves\' sync waves');
  }
  const waves = rollout!.waves.map((w) => w.name);
  const seen = new Set<string>();
  const jobs: ApiObject[] = [];
  const account = `${agent.name}-gate`;
  for (const gate of gates) {
    const index = checkGate(gate, waves, seen, where);
    if (!agent.rolloutGroups.includes(gate.afterWave)) continue;
    jobs.push(gateJob({ scope, agent, gate, index, account, where, kindChecks }));
  }
  if (jobs.length > 0) recordAccess(scope, agent, account, jobs.map((job) => job.name));
  return jobs;
}

/** The gate's PromQL: its selector and every check it is given, each named by its prop. */
function checkGateQueries(gate: WaveGate, where: string): void {
  const of = `rollout.gates ("${gate.afterWave}")`;
  checkSelector(gate.kubeStateMetricsSelector, `${of} kubeStateMetricsSelector`, where);
  for (const [prop, checks] of [['checks', gate.checks], ['extraChecks', gate.extraChecks]] as const) {
    (checks ?? []).forEach((c, i) => {
      if (c.expr.trim() !== '') checkPromQL(c.expr, `${of} ${prop}[${i}] (${JSON.stringify(c.name)}) expr`, where, GATE_FAILS);
    });
  }
}

/** A gate's own props, checked whether or not its wave is rendered yet; its wave's index. */
function checkGate(gate: WaveGate, waves: readonly string[], seen: Set<string>, where: string): number {
  const index = waves.indexOf(gate.afterWave);
  if (gate.afterWave === FLEET_GROUP) {
    throw new ValidationError(where, 'rollout.gates afterWave "fleet": nothing is applied after the fleet, so there is nothing to gate; gate a wave instead');
  }
  if (index < 0) {
    throw new ValidationError(where, `rollout.gates afterWave "${gate.afterWave}" is not a wave; valid names are ${waves.map((w) => `"${w}"`).join(', ')}`);
  }
  if (seen.has(gate.afterWave)) throw new ValidationError(where, `rollout.gates has two gates after wave "${gate.afterWave}"; merge their checks`);
  seen.add(gate.afterWave);
  const timeout = gate.timeoutSeconds ?? 300;
  if (!Number.isInteger(timeout) || timeout < 30 || timeout > GATE_MAX_TIMEOUT_SECONDS) {
    throw new ValidationError(where, `rollout.gates ("${gate.afterWave}") timeoutSeconds ${timeout} must be a whole number from 30 (queries and their retries need time) `
      + `to ${GATE_MAX_TIMEOUT_SECONDS} (a day: the gate holds the Argo CD sync while it runs)`);
  }
  checkGateQueries(gate, where);
  if (gate.image !== undefined) {
    const problems = checkImage(`rollout.gates ("${gate.afterWave}") image`, gate.image);
    if (problems.length > 0) throw new ValidationError(where, `${problems.join('; ')}`);
  }
  return index;
}

interface GateJobInput {
  readonly scope: Construct;
  readonly agent: NodeAgentDaemonSet;
  readonly gate: WaveGate;
  /** the gated wave's place in rollout.waves */
  readonly index: number;
  readonly account: string;
  readonly where: string;
  readonly kindChecks?: KindGateChecks;
}

/** One gate's Sync hook Job, in the sync wave after its wave's DaemonSet. */
function gateJob(input: GateJobInput): ApiObject {
  const { scope, agent, gate, where, kindChecks } = input;
  const daemonSet = groupResourceName(agent.name, gate.afterWave);
  const jobName = `${agent.name}-gate-${gate.afterWave}`;
  if (jobName.length > 63) {
    throw new ValidationError(where, `gate Job name "${jobName}" is longer than 63 characters (the job-name label value limit); shorten the agent or wave name`);
  }
  const bake = bakeSeconds(gate, where);
  const profiled = agent.daemonSetsOfGroup(gate.afterWave).map((ds) => ds.name);
  const target: GateTarget = {
    namespace: agent.namespace,
    daemonSet,
    ...(profiled.length > 1 ? { profileDaemonSets: profiled } : {}),
    window: `${Math.max(bake / 60, 1)}m`,
    kubeStateMetricsSelector: gate.kubeStateMetricsSelector,
  };
  const checks = [
    ...(gate.checks ?? [...daemonSetGateChecks(target), ...(kindChecks ? kindChecks(target) : [])]),
    ...(gate.extraChecks ?? []),
  ];
  const env = gateEnvironment(gate.afterWave, gate, checks, where);
  // with resource profiles the wave has a DaemonSet per profile: the revision covers them all (the default's first)
  const waveDaemonSets = agent.daemonSetsOfGroup(gate.afterWave).map((ds) => ApiObject.of(ds));
  // Resolved at synthesis, once the wave's DaemonSets have every patch; without profiles exactly as before.
  const revision = Lazy.any({
    produce: () => (waveDaemonSets.length === 1
      ? gateRevision({ name: daemonSet, spec: waveDaemonSets[0].toJson().spec }, env)
      : gateRevision({ name: daemonSet, spec: waveDaemonSets.map((ds) => ({ name: ds.name, spec: ds.toJson().spec })) }, env)),
  });
  const jobEnv: { [name: string]: unknown } = {
    ...env,
    GATE_NAMESPACE: agent.namespace,
    GATE_REVISION: revision,
    KUBERNETES_API,
    RECORD_NAME: jobName,
    SERVICE_ACCOUNT_DIR,
  };
  const labels = {
    'app.kubernetes.io/component': 'rollout-gate',
    'app.kubernetes.io/instance': agent.name,
    'app.kubernetes.io/managed-by': 'cdk8s',
    // Not the agent's own name: the agent's Services and DaemonSets select name + instance.
    'app.kubernetes.io/name': `${agent.name}-gate`,
    [ROLLOUT_GROUP_LABEL]: gate.afterWave,
  };
  return new ApiObject(scope, `Gate-${gate.afterWave}`, {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName,
      namespace: agent.namespace,
      labels,
      annotations: {
        [ARGOCD_HOOK]: 'Sync',
        [ARGOCD_HOOK_DELETE_POLICY]: 'BeforeHookCreation',
        [ARGOCD_SYNC_WAVE]: `${gateSyncWave(input.index)}`,
      },
    },
    spec: {
      // One attempt: a failed gate must stop the sync, not be retried into passing.
      backoffLimit: 0,
      activeDeadlineSeconds: bake + (gate.timeoutSeconds ?? 300),
      template: { metadata: { labels }, spec: gatePodSpec(input.account, gate.image ?? GATE_IMAGE, jobEnv) },
    },
  });
}

/** The gate's pod: non-root, read-only, its token good only for its record ConfigMaps. */
function gatePodSpec(account: string, image: string, jobEnv: { [name: string]: unknown }): object {
  return {
    restartPolicy: 'Never',
    // Its token may only read and write its own record ConfigMaps (the Role below).
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
      name: 'gate',
      image,
      command: ['sh', '-c', GATE_SCRIPT],
      env: Object.keys(jobEnv).sort().map((name) => ({ name, value: jobEnv[name] })),
      resources: {
        limits: { memory: '32Mi' },
        requests: { cpu: '10m', memory: '16Mi' },
      },
      securityContext: {
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
        readOnlyRootFilesystem: true,
      },
    }],
  };
}

/**
 * The gates' ServiceAccount, and a Role letting it read and patch its record ConfigMaps by name and
 * create ConfigMaps in the agent's namespace (RBAC cannot restrict `create` by name: the name is not
 * known when the request is authorized). Nothing else: no Secrets, no other kinds, no delete.
 */
function recordAccess(scope: Construct, agent: NodeAgentDaemonSet, account: string, recordNames: string[]): void {
  const labels = {
    'app.kubernetes.io/component': 'rollout-gate',
    'app.kubernetes.io/instance': agent.name,
    'app.kubernetes.io/managed-by': 'cdk8s',
    'app.kubernetes.io/name': `${agent.name}-gate`,
  };
  const metadata = { name: account, namespace: agent.namespace, labels };
  new ApiObject(scope, 'GateServiceAccount', { apiVersion: 'v1', kind: 'ServiceAccount', metadata });
  new ApiObject(scope, 'GateRole', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata,
    rules: [
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [...recordNames].sort(), verbs: ['get', 'patch'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['create'] },
    ],
  });
  new ApiObject(scope, 'GateRoleBinding', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata,
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: account },
    subjects: [{ kind: 'ServiceAccount', name: account, namespace: agent.namespace }],
  });
}
