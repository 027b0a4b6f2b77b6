import { ARGOCD_HOOK_ANNOTATION } from './argo-sync';
import { DaemonSetInfo, isObject, ManifestSet, ROLLOUT_GROUP_LABEL } from '../coverage/manifests';
import { waveOfGroup } from '../coverage/profiles';

/** The label a gate Job carries with its agent's name (the agent's own DaemonSets carry it too). */
const INSTANCE_LABEL = 'app.kubernetes.io/instance';
/** The gate container's environment variable holding the bake, in seconds (the gate script sleeps that long). */
const BAKE_ENV = 'BAKE_SECONDS';

/**
 * A rollout gate as the tree renders it: an Argo CD hook Job whose container sleeps BAKE_SECONDS before it queries
 * Prometheus. Argo CD runs every hook of the Application on every sync, and the next sync wave waits for the Job:
 * each gate adds its bake to any sync of the tree that reaches its wave.
 */
export interface RenderedGate {
  /** `namespace/name` of the Job */
  readonly job: string;
  readonly namespace: string;
  /** the agent it gates (label app.kubernetes.io/instance) */
  readonly agent: string;
  /** the rollout group it follows (label node-agents.cdk8s.io/rollout-group) */
  readonly afterWave?: string;
  readonly syncWave?: number;
  /** the container's BAKE_SECONDS */
  readonly bakeSeconds: number;
  /** spec.activeDeadlineSeconds: the longest the Job may run (bake plus the checks' time-out) */
  readonly deadlineSeconds?: number;
}

/** The gate Jobs of a tree: hook Jobs with a BAKE_SECONDS environment variable, read from the rendered Job. */
export function renderedGates(tree: ManifestSet): RenderedGate[] {
  const gates: RenderedGate[] = [];
  for (const { object } of tree.documents) {
    if (object.kind !== 'Job' || object.metadata?.annotations?.[ARGOCD_HOOK_ANNOTATION] === undefined) continue;
    const spec = isObject(object.spec) ? object.spec : {};
    const template = isObject(spec.template) && isObject(spec.template.spec) ? spec.template.spec : {};
    const containers: unknown[] = Array.isArray(template.containers) ? template.containers : [];
    let bake: number | undefined;
    for (const container of containers) {
      const env: unknown[] = isObject(container) && Array.isArray(container.env) ? container.env : [];
      for (const entry of env) {
        if (isObject(entry) && entry.name === BAKE_ENV && typeof entry.value === 'string' && /^\d+$/.test(entry.value)) bake = Number(entry.value);
      }
    }
    const agent = object.metadata?.labels?.[INSTANCE_LABEL];
    if (bake === undefined || agent === undefined) continue;
    const namespace = object.metadata?.namespace ?? 'default';
    const wave = object.metadata?.annotations?.['argocd.argoproj.io/sync-wave']?.trim();
    gates.push({
      job: `${namespace}/${object.metadata?.name}`,
      namespace,
      agent,
      afterWave: object.metadata?.labels?.[ROLLOUT_GROUP_LABEL],
      syncWave: wave !== undefined && /^-?\d+$/.test(wave) ? Number.parseInt(wave, 10) : undefined,
      bakeSeconds: bake,
      deadlineSeconds: typeof spec.activeDeadlineSeconds === 'number' ? spec.activeDeadlineSeconds : undefined,
    });
  }
  return gates.sort((a, b) => (a.syncWave ?? 0) - (b.syncWave ?? 0) || (a.job < b.job ? -1 : a.job > b.job ? 1 : 0));
}

/** The gates of one agent (its DaemonSets' namespace and agent name). */
export function gatesOf(gates: readonly RenderedGate[], agent: string, namespaces: ReadonlySet<string>): RenderedGate[] {
  return gates.filter((g) => g.agent === agent && namespaces.has(g.namespace));
}

/** The gate that follows a DaemonSet's wave, if the tree renders one. */
export function gateAfter(gates: readonly RenderedGate[], info: DaemonSetInfo): RenderedGate | undefined {
  return gates.find((g) => g.agent === info.agent && g.namespace === info.namespace
    && g.afterWave !== undefined && g.afterWave === waveOfGroup(info.rolloutGroup));
}
