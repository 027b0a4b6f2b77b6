import { ApiObject, Lazy } from 'cdk8s';
import { Construct, IConstruct } from 'constructs';
import { checkHookPod, envList, hookRevision, hookAccess, hookJob, hookJobName, HookKind } from './hook-job';
import type { NodeAgentDaemonSet } from './node-agent-daemon-set';
import { HookPodOptions } from '../agent/options';
import { AgentRollout } from '../agent/rollout';
import { bakeSeconds, daemonSetGateChecks, GATE_SCRIPT, gateEnvironment, GateTarget } from '../alerts/gate';
import { WaveGate, WaveGateCheck } from '../alerts/options';
import { checkPromQL, checkSelector, GATE_FAILS } from '../alerts/promql-parse';
import { GATE_IMAGE, KUBERNETES_API, SERVICE_ACCOUNT_DIR } from '../rollout/hook-shell';
import { ValidationError } from '../validation/errors';
import { builtByLibrary } from '../validation/owner';
import { checkImage } from '../validation/values';
import { addWarning } from '../validation/warnings';
import { FLEET_GROUP, gateSyncWave, groupResourceName } from '../waves/partition';

/** The longest a gate may query after its bake (a day): the gate holds the Argo CD sync that long. */
const GATE_MAX_TIMEOUT_SECONDS = 86400;

/** The gates' names and labels: Jobs `<agent>-gate-<wave>`, account `<agent>-gate`. */
const GATE: HookKind = { suffix: 'gate', component: 'rollout-gate' };

/** The agent kind's own default checks for a wave (the DaemonSet checks are always added first). */
export type KindGateChecks = (target: GateTarget) => WaveGateCheck[];

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
  if (gates.length === 0) {
    // the construct the user built sees the whole rollout (an agent's inner DaemonSet gets it without its gates)
    if (rollout?.hookPod !== undefined && rollout.watch === undefined && !builtByLibrary(scope)) {
      addWarning(scope, 'rollout.hookPod is set but no hook pod runs (no rollout.gates, no rollout.watch): '
        + 'it changes nothing. Add a gate or rollout.watch: {}, or remove rollout.hookPod.');
    }
    return [];
  }
  if (!rollout!.argoCdSyncWaves) {
    throw new ValidationError(scope, 'rollout.gates needs rollout.argoCdSyncWaves: true; the gates are Argo CD Sync hooks ordered between the waves\' sync waves');
  }
  const waves = rollout!.waves.map((w) => w.name);
  checkHookPod(rollout!.hookPod, scope);
  const seen = new Set<string>();
  const jobs: ApiObject[] = [];
  for (const gate of gates) {
    const index = checkGate(gate, waves, seen, scope);
    if (!agent.rolloutGroups.includes(gate.afterWave)) continue;
    jobs.push(gateJob({ scope, agent, gate, index, kindChecks, hookPod: rollout!.hookPod }));
  }
  // the gates' token: their record ConfigMaps only
  if (jobs.length > 0) hookAccess(scope, agent, GATE, 'Gate', jobs.map((job) => job.name));
  return jobs;
}

/** The gate's PromQL: its selector and every check it is given, each named by its prop. */
function checkGateQueries(gate: WaveGate, scope: IConstruct): void {
  const of = `rollout.gates ("${gate.afterWave}")`;
  checkSelector(gate.kubeStateMetricsSelector, `${of} kubeStateMetricsSelector`, scope);
  for (const [prop, checks] of [['checks', gate.checks], ['extraChecks', gate.extraChecks]] as const) {
    (checks ?? []).forEach((c, i) => {
      if (c.expr.trim() !== '') checkPromQL(c.expr, `${of} ${prop}[${i}] (${JSON.stringify(c.name)}) expr`, scope, GATE_FAILS);
    });
  }
}

/** A gate's own props, checked whether or not its wave is rendered yet; its wave's index. */
function checkGate(gate: WaveGate, waves: readonly string[], seen: Set<string>, scope: IConstruct): number {
  const index = waves.indexOf(gate.afterWave);
  if (gate.afterWave === FLEET_GROUP) {
    throw new ValidationError(scope, 'rollout.gates afterWave "fleet": nothing is applied after the fleet, so there is nothing to gate; gate a wave instead');
  }
  if (index < 0) {
    throw new ValidationError(scope, `rollout.gates afterWave "${gate.afterWave}" is not a wave; valid names are ${waves.map((w) => `"${w}"`).join(', ')}`);
  }
  if (seen.has(gate.afterWave)) throw new ValidationError(scope, `rollout.gates has two gates after wave "${gate.afterWave}"; merge their checks`);
  seen.add(gate.afterWave);
  const timeout = gate.timeoutSeconds ?? 300;
  if (!Number.isInteger(timeout) || timeout < 30 || timeout > GATE_MAX_TIMEOUT_SECONDS) {
    throw new ValidationError(scope, `rollout.gates ("${gate.afterWave}") timeoutSeconds ${timeout} must be a whole number from 30 (queries and their retries need time) `
      + `to ${GATE_MAX_TIMEOUT_SECONDS} (a day: the gate holds the Argo CD sync while it runs)`);
  }
  checkGateQueries(gate, scope);
  if (gate.image !== undefined) {
    const problems = checkImage(`rollout.gates ("${gate.afterWave}") image`, gate.image);
    if (problems.length > 0) throw new ValidationError(scope, `${problems.join('; ')}`);
  }
  return index;
}

interface GateJobInput {
  readonly scope: Construct;
  readonly agent: NodeAgentDaemonSet;
  readonly gate: WaveGate;
  /** the gated wave's place in rollout.waves */
  readonly index: number;
  readonly kindChecks?: KindGateChecks;
  readonly hookPod?: HookPodOptions;
}

/** One gate's Sync hook Job, in the sync wave after its wave's DaemonSet. */
function gateJob(input: GateJobInput): ApiObject {
  const { scope, agent, gate, kindChecks } = input;
  const daemonSet = groupResourceName(agent.name, gate.afterWave);
  const jobName = hookJobName(agent, GATE, gate.afterWave, 'gate', scope);
  const bake = bakeSeconds(gate, scope);
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
  const env = gateEnvironment(gate.afterWave, gate, checks, scope);
  // with resource profiles the wave has a DaemonSet per profile: the revision covers them all (the default's first)
  const waveDaemonSets = agent.daemonSetsOfGroup(gate.afterWave).map((ds) => ApiObject.of(ds));
  // Resolved at synthesis, once the wave's DaemonSets have every patch; without profiles exactly as before.
  const revision = Lazy.any({
    produce: () => (waveDaemonSets.length === 1
      ? hookRevision({ name: daemonSet, spec: waveDaemonSets[0].toJson().spec }, env)
      : hookRevision({ name: daemonSet, spec: waveDaemonSets.map((ds) => ({ name: ds.name, spec: ds.toJson().spec })) }, env)),
  });
  const jobEnv: { [name: string]: unknown } = {
    ...env,
    GATE_NAMESPACE: agent.namespace,
    GATE_REVISION: revision,
    KUBERNETES_API,
    RECORD_NAME: jobName,
    SERVICE_ACCOUNT_DIR,
  };
  return hookJob({
    scope,
    id: `Gate-${gate.afterWave}`,
    agent,
    kind: GATE,
    name: jobName,
    group: gate.afterWave,
    syncWave: gateSyncWave(input.index),
    activeDeadlineSeconds: bake + (gate.timeoutSeconds ?? 300),
    pod: { container: 'gate', image: gate.image ?? GATE_IMAGE, script: GATE_SCRIPT, env: envList(jobEnv), memoryLimit: '32Mi', options: input.hookPod },
  });
}
