import { brand } from '../validation/brand';
import { checkArgs } from '../validation/struct-check';
import { INT32_MAX } from '../validation/values';

/**
 * How many nodes a DaemonSet rollout may touch at once: a node count or a percentage.
 *
 * The DaemonSet controller scales percentages against the number of nodes that should run the
 * pod and rounds UP (25% of 50 nodes is 13), recomputing on every sync.
 */
export class RolloutBudget {
  /** A number of nodes. */
  public static count(nodes: number): RolloutBudget {
    checkArgs('RolloutBudget.count', [nodes]);
    return new RolloutBudget(nodes, false);
  }

  /** A percentage (0–100) of the nodes that run the agent, rounded up by the controller. */
  public static percent(percentage: number): RolloutBudget {
    checkArgs('RolloutBudget.percent', [percentage]);
    return new RolloutBudget(percentage, true);
  }

  /**
   * @param amount nodes, or percent when `isPercent`
   * @param isPercent whether `amount` is a percentage
   */
  private constructor(public readonly amount: number, public readonly isPercent: boolean) {}

  /** True when this budget lets no node change (0 or 0%). */
  public get isZero(): boolean {
    return this.amount === 0;
  }

  /** The value as written in the manifest: `3` or `"25%"`. */
  public toString(): string {
    return this.isPercent ? `${this.amount}%` : `${this.amount}`;
  }
}
brand(RolloutBudget, 'RolloutBudget');

/** The DaemonSet update strategy types. */
export enum UpdateStrategyType {
  /** Replace pods automatically, a budget of nodes at a time. */
  ROLLING_UPDATE = 'RollingUpdate',
  /** Replace a pod only when someone deletes it (drivers, CNI): the rollout is manual. */
  ON_DELETE = 'OnDelete',
}

/** Options for a rolling update. Exactly one of the two budgets must be non-zero. */
export interface RollingUpdateOptions {
  /**
   * Nodes whose old pod may be down at the same time.
   * @default - RolloutBudget.count(1) when maxSurge is zero, else RolloutBudget.count(0)
   */
  readonly maxUnavailable?: RolloutBudget;

  /**
   * Nodes that may run a new pod beside the old one (the old goes once the new is available).
   * Not for agents that bind host ports or write a hostPath: the two copies clash.
   * @default RolloutBudget.count(0)
   */
  readonly maxSurge?: RolloutBudget;
}

/**
 * The pace at which a new agent version replaces the old one on the nodes.
 *
 * The presets cover the usual paces, from one node at a time to a quarter of the nodes. A rolling update is always written with
 * both budgets explicit: the API defaults maxUnavailable to 1, so a lone `maxSurge: 1` is rejected.
 */
export class UpdateStrategy {
  /** New pod ready before the old goes (maxUnavailable 0, maxSurge 1). Needs room for two pods. */
  public static conservative(): UpdateStrategy {
    return UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(0), maxSurge: RolloutBudget.count(1) });
  }

  /** A quarter of the nodes at a time (25% / 0): the steady default. */
  public static steady(): UpdateStrategy {
    return UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.percent(25), maxSurge: RolloutBudget.count(0) });
  }

  /** Half of the nodes at a time (50% / 0), for non-critical agents such as log shipping. */
  public static fast(): UpdateStrategy {
    return UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.percent(50), maxSurge: RolloutBudget.count(0) });
  }

  /** One node at a time (1 / 0): the safest, and the slowest. */
  public static oneAtATime(): UpdateStrategy {
    return UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(1), maxSurge: RolloutBudget.count(0) });
  }

  /** Pods are replaced only when deleted: for high-risk agents such as CNI or GPU drivers. */
  public static onDelete(): UpdateStrategy {
    return new UpdateStrategy(UpdateStrategyType.ON_DELETE, undefined, undefined);
  }

  /** A rolling update with the given budgets. Checked when the agent is built. */
  public static rollingUpdate(options: RollingUpdateOptions = {}): UpdateStrategy {
    checkArgs('UpdateStrategy.rollingUpdate', [options]);
    const maxSurge = options.maxSurge ?? RolloutBudget.count(0);
    const maxUnavailable = options.maxUnavailable ?? (maxSurge.isZero ? RolloutBudget.count(1) : RolloutBudget.count(0));
    return new UpdateStrategy(UpdateStrategyType.ROLLING_UPDATE, maxUnavailable, maxSurge);
  }

  private constructor(
    /** RollingUpdate or OnDelete. */
    public readonly type: UpdateStrategyType,
    /** For RollingUpdate: nodes whose pod may be down at once. */
    public readonly maxUnavailable: RolloutBudget | undefined,
    /** For RollingUpdate: nodes that may run old and new pod side by side. */
    public readonly maxSurge: RolloutBudget | undefined,
  ) {}

  /** True when the rollout starts new pods beside old ones. */
  public get surges(): boolean {
    return this.maxSurge !== undefined && !this.maxSurge.isZero;
  }

  /** Problems with the budgets, as sentences; empty when valid. */
  public problems(): string[] {
    if (this.type === UpdateStrategyType.ON_DELETE) return [];
    const problems: string[] = [];
    for (const [field, budget] of [['maxUnavailable', this.maxUnavailable!], ['maxSurge', this.maxSurge!]] as const) {
      if (!Number.isInteger(budget.amount) || budget.amount < 0) {
        problems.push(`${field} must be a whole number of nodes or percent, 0 or more, got ${budget.toString()}`);
      } else if (budget.isPercent && budget.amount > 100) {
        problems.push(`${field} must be at most 100%, got ${budget.toString()}`);
      } else if (budget.amount > INT32_MAX) {
        problems.push(`${field} must be at most ${INT32_MAX} nodes (IntOrString is an int32; the API server refuses more), got ${budget.toString()}; `
          + 'give a percentage such as RolloutBudget.percent(100) for every node');
      }
    }
    if (this.maxUnavailable!.isZero && this.maxSurge!.isZero) {
      problems.push('maxUnavailable and maxSurge are both zero, so no pod could ever be replaced; make one of them non-zero');
    } else if (!this.maxUnavailable!.isZero && !this.maxSurge!.isZero) {
      problems.push(`maxUnavailable (${this.maxUnavailable!.toString()}) and maxSurge (${this.maxSurge!.toString()}) are both non-zero; the API accepts only one non-zero budget`);
    }
    return problems;
  }

  /** A short description, e.g. `RollingUpdate 25%/0` or `OnDelete`. */
  public toString(): string {
    return this.type === UpdateStrategyType.ON_DELETE
      ? 'OnDelete'
      : `RollingUpdate maxUnavailable=${this.maxUnavailable!.toString()} maxSurge=${this.maxSurge!.toString()}`;
  }
}
brand(UpdateStrategy, 'UpdateStrategy');
