import { NodeOperator, NodeRequirement } from './node-requirement';
import { HookPodOptions } from './options';
import { AgentRelease } from './release';
import { UpdateStrategy } from './update-strategy';
import { WaveGate } from '../alerts/options';
import { brand } from '../validation/brand';
import { checkArgs } from '../validation/struct-check';
import { resolvePromotion, WaveSpec } from '../waves/partition';

/** The Argo CD annotation that orders objects within one sync. */
export const ARGOCD_SYNC_WAVE = 'argocd.argoproj.io/sync-wave';

/**
 * One rollout wave: a group of nodes, given by one node requirement, that gets a new version before
 * the waves after it and the fleet.
 */
export class RolloutWave {
  /**
   * The nodes labelled `<labelKey>=<name>` (see `AgentRollout.labelKey`); the node tools compute
   * which nodes to label.
   */
  public static labelled(name: string): RolloutWave {
    checkArgs('RolloutWave.labelled', [name]);
    return new RolloutWave(name, undefined, undefined);
  }

  /**
   * The nodes meeting a requirement on an existing label: `In` (a zone, a node pool) or `Exists`.
   */
  public static matching(name: string, requirement: NodeRequirement): RolloutWave {
    checkArgs('RolloutWave.matching', [name, requirement]);
    return new RolloutWave(name, requirement, undefined);
  }

  /** The nodes with these names. */
  public static hostnames(name: string, hostnames: string[]): RolloutWave {
    checkArgs('RolloutWave.hostnames', [name, hostnames]);
    return new RolloutWave(name, undefined, [...hostnames]);
  }

  private constructor(
    /** The wave's name: a DNS-1123 label, the suffix of its DaemonSet's name. */
    public readonly name: string,
    private readonly requirement: NodeRequirement | undefined,
    private readonly hosts: string[] | undefined,
  ) {}

  /** @internal */
  public _toSpec(labelKey: string): WaveSpec {
    if (this.hosts) return { name: this.name, field: true, requirement: { key: 'metadata.name', operator: 'In', values: [...this.hosts] } };
    if (this.requirement) return { name: this.name, requirement: this.requirement._toJson() };
    return { name: this.name, requirement: { key: labelKey, operator: NodeOperator.IN, values: [this.name] } };
  }
}
brand(RolloutWave, 'RolloutWave');

/** How far the new version is promoted. */
export class Promotion {
  /** Nothing promoted: every group runs the previous version (a new agent renders nothing yet). */
  public static none(): Promotion {
    return new Promotion(0);
  }

  /** The named wave and every wave before it. */
  public static through(wave: string): Promotion {
    checkArgs('Promotion.through', [wave]);
    return new Promotion(wave);
  }

  /** The first `count` groups (waves in order, then the fleet). */
  public static groups(count: number): Promotion {
    checkArgs('Promotion.groups', [count]);
    return new Promotion(count);
  }

  /** Every wave and the fleet: the rollout is complete. */
  public static all(): Promotion {
    return new Promotion('all');
  }

  private constructor(private readonly value: string | number) {}

  /** @internal */
  public _resolve(waves: readonly { name: string }[]): number {
    return resolvePromotion(waves, this.value);
  }
}
brand(Promotion, 'Promotion');

/**
 * A rollout of an agent over waves of nodes.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/canary-upgrade.md
 */
export interface AgentRollout {
  /** The waves, in order; the first is the canary. Every node matching none is in the fleet. */
  readonly waves: RolloutWave[];

  /** How far the current props are promoted; the other groups render `previous`. */
  readonly promoted: Promotion;

  /**
   * The version the groups not yet promoted keep running, given by that version's own props
   * (e.g. `LogCollectorDaemonSet.release(previousProps)`, or `AgentRelease.fromProps(previousProps)`
   * for a NodeAgentDaemonSet). Held groups render exactly as that version rendered them. Without it
   * the agent is new: only promoted groups get a DaemonSet, so the first install widens wave by wave too.
   * @default - a new agent
   */
  readonly previous?: AgentRelease;

  /**
   * The node label whose value names the wave, for `RolloutWave.labelled` waves.
   * @default "node-agents.cdk8s.io/rollout-wave"
   */
  readonly labelKey?: string;

  /**
   * Update pace of the first (canary) wave's DaemonSet.
   * @default UpdateStrategy.oneAtATime(), or the agent's OnDelete strategy when it has one
   */
  readonly canaryPace?: UpdateStrategy;

  /**
   * Update pace of each wave by name (overrides canaryPace for the first wave).
   * @default - the agent's updateStrategy for every wave after the first
   */
  readonly wavePace?: { [wave: string]: UpdateStrategy };

  /**
   * Annotate each DaemonSet with `argocd.argoproj.io/sync-wave` (wave k → 2k+1, the fleet last), so one
   * commit rolls every wave in order, each applied once the earlier ones are Healthy. Argo CD counts an
   * OnDelete DaemonSet Healthy at once, so gating with OnDelete is refused; a wave that matches no
   * node is also Healthy at once (check waves against the inventory with `node-agents coverage`).
   * @default false
   */
  readonly argoCdSyncWaves?: boolean;

  /**
   * Metric gates after waves (with `argoCdSyncWaves`): an Argo CD Sync hook Job in sync wave 2k+2
   * after wave k that bakes, then queries Prometheus, and fails the sync before the next group when
   * any check returns series. Rendered by the log collector, node exporter and GPU driver constructs.
   * @default - no gates
   */
  readonly gates?: WaveGate[];

  /**
   * A watcher per rendered wave and the fleet (with `argoCdSyncWaves`): an Argo CD Sync hook Job in the same sync
   * wave as the group's DaemonSet that reads the DaemonSet and its new pods while they roll, and fails as soon as a
   * new pod crash-loops past a restart budget, is OOMKilled, stays in an image pull or container config error, or
   * stays Pending past a deadline; it passes when every desired pod is updated and available. Its verdict is
   * recorded per revision, so Argo CD's retries do not pass a failed watcher. Argo CD fails the sync on a failed
   * watcher only once the DaemonSet's own task stops running (see docs/gates-watchers-alerts.md, "A canary that crash-loops").
   * @default - no watchers
   */
  readonly watch?: RolloutWatch;

  /**
   * Pull the new image on the promoted wave's nodes before its DaemonSet is applied (with `argoCdSyncWaves` and
   * `previous`, i.e. while a rollout is in progress): a pull-only DaemonSet `<name>-prepull-<wave>` on that
   * wave's nodes (the same node affinity, node selector and tolerations), whose init container runs the new image
   * with a command that exits at once and whose container is a pause container, in the sync wave before the wave's
   * DaemonSet, so Argo CD applies the wave only once every node of it has the image. The next stage renders the next
   * wave's instead (Argo CD prunes the previous one when the Application prunes).
   * @default - no pre-pull
   */
  readonly prePull?: RolloutPrePull;

  /**
   * The pod of the rollout's hook Jobs (the `gates` and the `watch` watchers): tolerations, node selector,
   * annotations, priority class. A gate bakes for minutes and a watcher watches for hours while holding the sync:
   * by default their pods ask Karpenter (`karpenter.sh/do-not-disrupt: "true"`) and the cluster autoscaler
   * (`cluster-autoscaler.kubernetes.io/safe-to-evict: "false"`) not to disrupt their node, and run on Linux nodes.
   * @default - those annotations, node selector `kubernetes.io/os: linux`, no tolerations, no priority class
   */
  readonly hookPod?: HookPodOptions;
}

/** The pull-only DaemonSet of `AgentRollout.prePull`. */
export interface RolloutPrePull {
  /**
   * What the init container runs in the new image: a command that exits at once.
   * @default - the agent's: fluent-bit and node_exporter `--version`, the GPU driver image's `sh -c "exit 0"`;
   *   required for a NodeAgentDaemonSet
   */
  readonly command?: string[];

  /**
   * The pause image of the DaemonSet's container.
   * @default "registry.k8s.io/pause:3.10"
   */
  readonly pauseImage?: string;
}

/**
 * The budgets of the rollout watchers (`AgentRollout.watch`).
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/gates-watchers-alerts.md#a-canary-that-crash-loops-watchers
 */
export interface RolloutWatch {
  /**
   * Restarts of one container of a new pod beyond which the pod is crash-looping.
   * @default 3
   */
  readonly restartBudget?: number;

  /**
   * Seconds a new pod may stay Pending (not scheduled, or its containers not created).
   * @default - the agent's startup budget (the largest startupProbe's initialDelaySeconds + periodSeconds ×
   *   failureThreshold, 0 without one) plus 300
   */
  readonly pendingDeadlineSeconds?: number;

  /**
   * Seconds a container may stay in ImagePullBackOff / ErrImagePull or CreateContainerConfigError /
   * RunContainerError (a registry hiccup, a Secret created moments later) before the watcher fails.
   * @default 120
   */
  readonly failureGraceSeconds?: number;

  /**
   * Seconds between two reads of the DaemonSet and its pods.
   * @default 10
   */
  readonly pollSeconds?: number;

  /**
   * Seconds the watcher waits for the rollout to complete before it fails (at most a day: it holds the sync).
   * @default 21600
   */
  readonly timeoutSeconds?: number;

  /**
   * The watcher's image: POSIX sh, curl, grep and awk.
   * @default "curlimages/curl:8.21.0"
   */
  readonly image?: string;
}
