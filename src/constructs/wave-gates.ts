import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { checkImage } from '../agent/checks';
import { AgentRollout, ARGOCD_SYNC_WAVE } from '../agent/rollout';
import {
  bakeSeconds, daemonSetGateChecks, GATE_GID, GATE_IMAGE, GATE_SCRIPT, GATE_UID, gateEnvironment, GateTarget,
} from '../alerts/gate';
import { WaveGateCheck } from '../alerts/options';
import { FLEET_GROUP, gateSyncWave, groupResourceName, ROLLOUT_GROUP_LABEL } from '../waves/partition';

/** The longest a gate may query after its bake (a day): the gate holds the Argo CD sync that long. */
const GATE_MAX_TIMEOUT_SECONDS = 86400;

/** Argo CD's hook annotations: a Sync hook, deleted before the next sync creates it again. */
export const ARGOCD_HOOK = 'argocd.argoproj.io/hook';
export const ARGOCD_HOOK_DELETE_POLICY = 'argocd.argoproj.io/hook-delete-policy';

/** The agent kind's own default checks for a wave (the DaemonSet checks are always added first). */
export type KindGateChecks = (target: GateTarget) => WaveGateCheck[];

/**
 * The gate Jobs of `rollout.gates`: one Argo CD Sync hook Job per gated wave, in the sync wave
 * between that wave's DaemonSet and the next group's. Renders nothing without gates; a gate after a
 * wave whose DaemonSet is not rendered (a new agent not yet promoted there) is skipped. Called at
 * the end of each agent construct; `scope` owns the Jobs.
 */
export function renderWaveGates(
  scope: Construct, agent: NodeAgentDaemonSet, rollout: AgentRollout | undefined, kindChecks?: KindGateChecks,
): ApiObject[] {
  const gates = rollout?.gates ?? [];
  if (gates.length === 0) return [];
  const where = `${scope.constructor.name} ${scope.node.path}`;
  if (!rollout!.argoCdSyncWaves) {
    throw new Error(`${where}: rollout.gates needs rollout.argoCdSyncWaves: true; the gates are Argo CD Sync hooks ordered between the waves' sync waves`);
  }
  const waves = rollout!.waves.map((w) => w.name);
  const seen = new Set<string>();
  const jobs: ApiObject[] = [];
  for (const gate of gates) {
    const index = waves.indexOf(gate.afterWave);
    if (gate.afterWave === FLEET_GROUP) {
      throw new Error(`${where}: rollout.gates afterWave "fleet": nothing is applied after the fleet, so there is nothing to gate; gate a wave instead`);
    }
    if (index < 0) {
      throw new Error(`${where}: rollout.gates afterWave "${gate.afterWave}" is not a wave; valid names are ${waves.map((w) => `"${w}"`).join(', ')}`);
    }
    if (seen.has(gate.afterWave)) throw new Error(`${where}: rollout.gates has two gates after wave "${gate.afterWave}"; merge their checks`);
    seen.add(gate.afterWave);
    const timeout = gate.timeoutSeconds ?? 300;
    if (!Number.isInteger(timeout) || timeout < 30 || timeout > GATE_MAX_TIMEOUT_SECONDS) {
      throw new Error(`${where}: rollout.gates ("${gate.afterWave}") timeoutSeconds ${timeout} must be a whole number from 30 (queries and their retries need time) `
        + `to ${GATE_MAX_TIMEOUT_SECONDS} (a day: the gate holds the Argo CD sync while it runs)`);
    }
    if (gate.image !== undefined) {
      const problems = checkImage(`rollout.gates ("${gate.afterWave}") image`, gate.image);
      if (problems.length > 0) throw new Error(`${where}: ${problems.join('; ')}`);
    }
    if (!agent.rolloutGroups.includes(gate.afterWave)) continue;

    const daemonSet = groupResourceName(agent.name, gate.afterWave);
    const jobName = `${agent.name}-gate-${gate.afterWave}`;
    if (jobName.length > 63) {
      throw new Error(`${where}: gate Job name "${jobName}" is longer than 63 characters (the job-name label value limit); shorten the agent or wave name`);
    }
    const bake = bakeSeconds(gate, where);
    const target: GateTarget = {
      namespace: agent.namespace,
      daemonSet,
      window: `${Math.max(bake / 60, 1)}m`,
      kubeStateMetricsSelector: gate.kubeStateMetricsSelector,
    };
    const checks = [
      ...(gate.checks ?? [...daemonSetGateChecks(target), ...(kindChecks ? kindChecks(target) : [])]),
      ...(gate.extraChecks ?? []),
    ];
    const env = gateEnvironment(gate.afterWave, gate, checks, where);
    const labels = {
      'app.kubernetes.io/component': 'rollout-gate',
      'app.kubernetes.io/instance': agent.name,
      'app.kubernetes.io/managed-by': 'cdk8s',
      // Not the agent's own name: the agent's Services and DaemonSets select name + instance.
      'app.kubernetes.io/name': `${agent.name}-gate`,
      [ROLLOUT_GROUP_LABEL]: gate.afterWave,
    };
    jobs.push(new ApiObject(scope, `Gate-${gate.afterWave}`, {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: jobName,
        namespace: agent.namespace,
        labels,
        annotations: {
          [ARGOCD_HOOK]: 'Sync',
          [ARGOCD_HOOK_DELETE_POLICY]: 'BeforeHookCreation',
          [ARGOCD_SYNC_WAVE]: `${gateSyncWave(index)}`,
        },
      },
      spec: {
        // One attempt: a failed gate must stop the sync, not be retried into passing.
        backoffLimit: 0,
        activeDeadlineSeconds: bake + timeout,
        template: {
          metadata: { labels },
          spec: {
            restartPolicy: 'Never',
            // It talks to Prometheus only: no Kubernetes API access, no token.
            automountServiceAccountToken: false,
            enableServiceLinks: false,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: GATE_UID,
              runAsGroup: GATE_GID,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            containers: [{
              name: 'gate',
              image: gate.image ?? GATE_IMAGE,
              command: ['sh', '-c', GATE_SCRIPT],
              env: Object.entries(env).map(([name, value]) => ({ name, value })),
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
          },
        },
      },
    }));
  }
  return jobs;
}
