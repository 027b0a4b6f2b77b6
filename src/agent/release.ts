import type { NodeAgentDaemonSetProps } from './props';
import { brand } from '../validation/brand';

/** The construct kind of releases made by `AgentRelease.fromProps`. */
export const BASE_RELEASE_KIND = 'NodeAgentDaemonSet';

/** What a release needs to know about the agent it is rendered into. */
export interface ReleaseContext {
  /** The construct id of the agent (a base agent's default name derives from it). */
  readonly id: string;
  /** The namespace of the agent's chart, if it has one. */
  readonly chartNamespace?: string;
}

/**
 * One version of an agent, described by that version's own props: the release the rollout
 * groups not yet promoted keep running. Everything derived from props (config, env, Secret
 * references, volumes, mounts, sidecars, probes, resources, args, scheduling) renders those groups
 * exactly as that version rendered them, so a held wave never changes while a later version is
 * promoted elsewhere.
 *
 * Make one with the `release()` of the agent's own construct: `AgentRelease.fromProps` for a
 * `NodeAgentDaemonSet`, `LogCollectorDaemonSet.release`, `NodeExporterDaemonSet.release`,
 * `GpuDriverDaemonSet.release`. Keep the previous version's props in code (e.g. a
 * `const PREVIOUS = {...}` next to the current ones) until every group is promoted.
 */
export class AgentRelease {
  /** A release of a `NodeAgentDaemonSet`, given by its props (their `rollout` is ignored). */
  public static fromProps(props: NodeAgentDaemonSetProps): AgentRelease {
    return new AgentRelease(BASE_RELEASE_KIND, () => ({ ...props, rollout: undefined }));
  }

  /**
   * A release of an agent construct built on `NodeAgentDaemonSet`: `toAgentProps` gives the props
   * its NodeAgentDaemonSet gets for that version.
   * @internal
   */
  public static _of(kind: string, toAgentProps: (context: ReleaseContext) => NodeAgentDaemonSetProps): AgentRelease {
    return new AgentRelease(kind, toAgentProps);
  }

  private constructor(
    /** The construct kind whose props describe this release, e.g. "LogCollectorDaemonSet". */
    public readonly kind: string,
    private readonly toAgentProps: (context: ReleaseContext) => NodeAgentDaemonSetProps,
  ) {}

  /**
   * The props of the release's NodeAgentDaemonSet (checked like the current release's: building
   * them runs the construct's own checks).
   * @internal
   */
  public _agentProps(context: ReleaseContext): NodeAgentDaemonSetProps {
    return this.toAgentProps(context);
  }
}
brand(AgentRelease, 'AgentRelease');
