import { ApiObject, Chart } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { AgentAlerts } from './agent-alerts';
import { renderWaveGates } from './wave-gates';
import { renderPrePull } from './wave-pre-pull';
import { renderWaveWatchers } from './wave-watchers';
import { AgentAdoption } from '../adoption/adoption';
import { AgentIdentity, AgentSpec, commonLabels, identityLabels, resolveAgentSpec, resolveIdentity } from '../agent/agent-spec';
import { registerAgent } from '../agent/cross-agent-checks';
import {
  groupSpec, releasesIdentical, sharedAutomount, sharedObjectProblems, sharedPodSecurityLevel, sharedPriorityClassNames, sharedRbacRules,
} from '../agent/held-waves';
import {
  AgentHostPort, PodSecurityLevel,
} from '../agent/options';
import { profileCheckProblems, profileFor } from '../agent/profile-checks';
import { planProfiles, profileSpec } from '../agent/profile-plan';
import { NodeAgentDaemonSetProps } from '../agent/props';
import { BASE_RELEASE_KIND } from '../agent/release';
import { checkAgentSpec, surgeProblems } from '../agent/release-checks';
import { AgentRollout } from '../agent/rollout';
import { UpdateStrategy } from '../agent/update-strategy';
import { renderAgentDaemonSet, selectorLabels } from '../render/daemon-set';
import { addObjectSizeValidation } from '../render/late-checks';
import { renderReadinessTaintAccess } from '../render/readiness-taint';
import { renderedHostPorts } from '../render/rendered-rules';
import { ConfigMaps, renderNamespace, renderPriorityClass, renderPriorityQuota, renderRbac } from '../render/shared-objects';
import { karpenterStartupTaint, READINESS_TAINT_ANNOTATION, readinessTaintAnnotation } from '../scheduling/readiness-taint';
import { NodeSelectorRequirementJson } from '../scheduling/types';
import { brand } from '../validation/brand';
import { nameOf, throwIfProblems, ValidationError } from '../validation/errors';
import { kindOf, registerKind, userConstruct } from '../validation/owner';
import { checkStruct } from '../validation/struct-check';
import { sortedRecord } from '../validation/values';
import { FLEET_GROUP } from '../waves/partition';
import { DEFAULT_PROFILE } from '../waves/profiles';

export { configChecksum } from '../agent/agent-spec';

const CRITICAL_PRIORITY_CLASSES = ['system-node-critical', 'system-cluster-critical'];


/**
 * A node agent: a DaemonSet running one pod on every eligible node, with the defaults a careful SRE
 * writes (pinned image, IfNotPresent, small requests and a memory limit, explicit update budgets,
 * linux and non-virtual nodes only, explicit tolerations, system-node-critical priority, read-only
 * host mounts, dropped capabilities, a dedicated ServiceAccount) and synth-time checks for the
 * mistakes the API server or the DaemonSet controller would punish later.
 *
 * The props resolve to a spec (src/agent/agent-spec.ts), checked in src/agent/release-checks.ts;
 * with rollout waves the groups not yet promoted render the previous release's spec
 * (src/agent/held-waves.ts); src/render/ turns specs into objects.
 * @see https://github.com/maintainers/cdk8s-node-agents/blob/main/docs/agents.md
 */
export class NodeAgentDaemonSet extends Construct {
  /** Is `x` a NodeAgentDaemonSet? */
  public static isNodeAgentDaemonSet(x: any): boolean {
    return x instanceof NodeAgentDaemonSet;
  }

  /** The agent's name. */
  public readonly name: string;
  /** Namespace of the agent's namespaced objects. */
  public readonly namespace: string;
  /**
   * The DaemonSet that covers the fleet (all nodes outside rollout waves); when the agent is new and
   * not yet promoted to the fleet, the last promoted wave's DaemonSet.
   */
  public readonly daemonSet: kplus.DaemonSet;
  /** Every DaemonSet of the agent: one per rendered rollout wave, then the fleet. */
  public readonly daemonSets: kplus.DaemonSet[];
  /** The main container of `daemonSet`. */
  public readonly mainContainer: kplus.Container;
  /** The agent's ServiceAccount. */
  public readonly serviceAccount: kplus.IServiceAccount;
  /** The ConfigMap of the current version, if the agent has config. */
  public readonly configMap?: kplus.ConfigMap;
  /** The ClusterRole, if `rbacRules` were given. */
  public readonly clusterRole?: ApiObject;
  /** The Namespace object, if `createNamespace`. */
  public readonly namespaceObject?: ApiObject;
  /** The Pod Security Admission level the agent's pods need (of both releases while a rollout holds waves). */
  public readonly podSecurityLevel: PodSecurityLevel;
  /** Labels selecting the agent's pods (of the fleet DaemonSet). Stable: never the version or a hash. */
  public readonly selectorLabels: { [key: string]: string };
  /** Host ports the agent binds on its nodes (the current release's). */
  public readonly hostPorts: AgentHostPort[];
  /** The update strategy of the current version. */
  public readonly updateStrategy: UpdateStrategy;
  /** The priority class name the pods of the current version use. */
  public readonly priorityClassName: string;
  /** Names of the rollout groups rendered, in order (wave names, then `fleet`); `["fleet"]` without waves. */
  public readonly rolloutGroups: string[];
  /** Names of the rollout groups that run the current version. */
  public readonly promotedGroups: string[];
  /** Names of the resource profiles, in order (the default profile, the nodes matching none, is not listed). */
  public readonly resourceProfiles: string[];
  /** The agent's `app.kubernetes.io/name` and `/instance` labels (an adopted DaemonSet's selector values). */
  public readonly identityLabels: { [key: string]: string };
  /** The adopted DaemonSet, if `adopt` is set. */
  public readonly adopt?: AgentAdoption;

  /** The readiness taint the current release's pods remove from their node once Ready, if `readinessTaint` is set. */
  public readonly readinessTaintKey?: string;

  /** The agent's alerts, if `alerts` is set. */
  public readonly alerts?: AgentAlerts;
  /** The gate Jobs of `rollout.gates`. */
  public readonly gates: ApiObject[];

  /** The watcher Jobs of `rollout.watch`: one per rendered group, in its DaemonSet's sync wave. */
  public readonly watchers: ApiObject[];

  /**
   * The pull-only DaemonSets of `rollout.prePull` for the promoted wave, while a rollout is in progress: one, or with
   * resource profiles one per profile of the wave. Empty otherwise.
   */
  public readonly prePulls: ApiObject[];

  /**
   * The props as given: what a release of this agent is (see `AgentRelease`).
   * @internal
   */
  public readonly _props: NodeAgentDaemonSetProps;

  private readonly groupDaemonSets: { group: string; profile: string; ds: kplus.DaemonSet }[] = [];

  public constructor(scope: Construct, id: string, props: NodeAgentDaemonSetProps) {
    super(scope, id);
    registerKind(this, 'NodeAgentDaemonSet');
    // Wrong types (JavaScript callers, props parsed from YAML) get the same clear error as wrong values.
    checkStruct(this, 'NodeAgentDaemonSetProps', props);
    this._props = props;
    this.adopt = props.adopt;
    this.throwIfProblems(props.adopt?.problems(props.name, props.namespace).map((m) => (m.startsWith('adopt:') ? m : `adopt: ${m}`)) ?? []);
    const identity = this.identityOf(props, id);
    const { name, namespace } = identity;
    this.identityLabels = identityLabels(identity);
    const current = resolveAgentSpec(props, identity);
    this.name = name;
    this.namespace = namespace;
    this.updateStrategy = current.updateStrategy;
    this.hostPorts = current.hostPorts;
    this.priorityClassName = current.priorityClassName;

    // Checks before building: a bad prop, of either release, produces no object at all.
    this.throwIfProblems(checkAgentSpec(current));
    const previous = this.resolvePrevious(props.rollout, id);
    const profiles = props.resourceProfiles ?? [];
    this.throwIfProblems(profileCheckProblems(current, previous));
    const plan = planProfiles({
      rollout: props.rollout, profiles, current, previous, identical: previous !== undefined && releasesIdentical(current, previous), name,
    });
    // The spec a DaemonSet renders: its group's release, sized by its profile (that release's own profile of that name).
    const specOf = (g: { promoted: boolean; profile: string }) => {
      const release = groupSpec(g.promoted, current, previous);
      return profileSpec(release, profileFor(release, g.profile));
    };
    this.throwIfProblems([
      ...sharedObjectProblems(current, previous),
      ...plan.problems,
      ...plan.groups.flatMap((g) => surgeProblems(specOf(g), g.strategy).map((m) => `rollout pace of "${g.name}": ${m}`)),
    ]);

    // Objects every group shares: the union of what both releases need (see held-waves.ts).
    this.podSecurityLevel = sharedPodSecurityLevel(current, previous);
    const labels = commonLabels(current);
    if (props.createNamespace) this.namespaceObject = renderNamespace(this, namespace, this.podSecurityLevel);
    if (props.priorityClass) renderPriorityClass(this, name, current.priorityClassName, props.priorityClass, labels);
    if ((props.createPriorityQuota ?? true) && !props.priorityClass && namespace !== 'kube-system') {
      sharedPriorityClassNames(current, previous).filter((c) => CRITICAL_PRIORITY_CLASSES.includes(c))
        .forEach((c, i) => renderPriorityQuota(this, name, namespace, c, labels, i === 0));
    }
    this.serviceAccount = props.serviceAccountName !== undefined
      ? kplus.ServiceAccount.fromServiceAccountName(this, 'ServiceAccount', props.serviceAccountName, { namespaceName: namespace })
      : new kplus.ServiceAccount(this, 'ServiceAccount', {
        metadata: {
          name, namespace, labels, annotations: props.serviceAccountAnnotations ? sortedRecord(props.serviceAccountAnnotations) : undefined,
        },
        automountToken: sharedAutomount(current, previous),
      });
    const rules = sharedRbacRules(current, previous);
    if (rules.length > 0) this.clusterRole = renderRbac(this, name, namespace, rules, labels, this.serviceAccount.name);
    this.readinessTaintKey = renderReadinessTaintAccess(this, current, previous, this.serviceAccount.name, labels);

    const groups = plan.groups;
    this.rolloutGroups = [...new Set(groups.map((g) => g.name))];
    this.promotedGroups = [...new Set(groups.filter((g) => g.promoted).map((g) => g.name))];
    this.resourceProfiles = profiles.map((p) => p.name);
    // The current version's ConfigMap exists from the first stage on, so a promotion only changes
    // DaemonSets; the previous version's exists while a group still runs it.
    const configMaps = new ConfigMaps(this, name, namespace, labels);
    if (current.configData) configMaps.forData(current.configData);
    this.daemonSets = [];
    let primary: { ds: kplus.DaemonSet; main: kplus.Container } | undefined;
    for (const group of groups) {
      const spec = specOf(group);
      const rendered = renderAgentDaemonSet(this, {
        id: group.id,
        dsName: group.dsName,
        group: group.groupLabel,
        spec,
        terms: group.terms,
        strategy: group.strategy,
        annotations: group.annotations,
        // waves and profiles: a node changing DaemonSet waits for the old pod to go
        rollout: props.rollout !== undefined || profiles.length > 0,
        serviceAccount: this.serviceAccount,
        configMap: spec.configData ? configMaps.forData(spec.configData) : undefined,
        adoptedSelector: group.groupLabel === 'fleet' ? props.adopt?.selector : undefined,
      });
      this.daemonSets.push(rendered.ds);
      this.groupDaemonSets.push({ group: group.name, profile: group.profile, ds: rendered.ds });
      // the agent's own DaemonSet: the default profile's last (the fleet's)
      if (group.profile === DEFAULT_PROFILE) primary = rendered;
    }
    if (!primary) throw this.nothingRendered();
    this.daemonSet = primary.ds;
    this.mainContainer = primary.main;
    this.configMap = current.configData ? configMaps.get(current.configData) : undefined;
    this.selectorLabels = props.adopt ? { ...props.adopt.selector } : selectorLabels(name, 'fleet');

    const releases = previous ? [current, previous] : [current];
    const ownPatchCounts = new Map(this.daemonSets.map((ds) => [ds, patchCount(ds)]));
    const crossAgentProblems = registerAgent(this, {
      describe: nameOf(this),
      path: this.node.path,
      hostPorts: releases.flatMap((r) => r.hostPorts),
      renderedHostPorts: () => patchedHostPorts(this.daemonSets, ownPatchCounts),
      // One set per node-affinity term: the agent's nodes are their union.
      requirementSets: releases.flatMap((r) => (r.baseAlternatives.length > 0 ? r.baseAlternatives : [[]]).map((alternative) => [
        ...Object.entries(r.nodeSelector).map(([key, value]): NodeSelectorRequirementJson => ({ key, operator: 'In', values: [value] })),
        ...r.baseRequirements,
        ...alternative,
      ])),
      createsNamespace: props.createNamespace ? namespace : undefined,
    });
    this.node.addValidation({ validate: crossAgentProblems });
    addObjectSizeValidation(this);

    // The agent constructs built on this one render their own alerts and gates, with their kind's checks.
    if (props.alerts) {
      this.alerts = new AgentAlerts(this, 'Alerts', { ...props.alerts, agent: this, waves: props.rollout?.waves.map((w) => w.name) });
    }
    [this.gates, this.prePulls] = [renderWaveGates(this, this, props.rollout), renderPrePull(this, this, props.rollout)];
    this.watchers = renderWaveWatchers(this, this, props.rollout, this.prePulls); // the pull-only DaemonSets watched too
  }

  /**
   * The DaemonSets of one rollout group (a wave name, or `fleet`): the default profile's first, then one per
   * resource profile, in the profiles' order. Empty for a group not rendered.
   */
  public daemonSetsOfGroup(group: string): kplus.DaemonSet[] {
    return this.groupDaemonSets.filter((g) => g.group === group).map((g) => g.ds);
  }

  /**
   * The entry Karpenter NodePools list under `spec.template.spec.startupTaints` for the agent's readiness taint (every
   * NodePool whose nodes run the agent): Karpenter puts it on each node it launches and ignores it when it sizes them.
   * Undefined without `readinessTaint`, and while a rollout holds groups whose DaemonSets do not remove this taint
   * (held groups of a previous release without it or with another key, or a new agent's groups not rendered yet):
   * a node of such a group that joined with it would keep it, and take no workload, until the group is promoted.
   * The node pools list it from the stage on where every group removes it. To put it in a NodePool, use
   * `karpenterStartupTaints()`: `startupTaints: [agent.karpenterStartupTaint()]` renders `- null` while a group is
   * held, which the NodePool schema refuses.
   */
  public karpenterStartupTaint(): KarpenterStartupTaint | undefined {
    if (this.readinessTaintKey === undefined) return undefined;
    const annotation = readinessTaintAnnotation(this.readinessTaintKey);
    // every group rendered (the fleet, the last, is), and each of its DaemonSets removing this taint
    const everyGroup = this.rolloutGroups.includes(FLEET_GROUP)
      && this.daemonSets.every((ds) => ds.metadata.toJson().annotations?.[READINESS_TAINT_ANNOTATION] === annotation);
    return everyGroup ? karpenterStartupTaint(this.readinessTaintKey) : undefined;
  }

  /**
   * The entries Karpenter NodePools list under `spec.template.spec.startupTaints` for the agent's readiness taint, as a
   * list to spread into the pool's: `startupTaints: [...logs.agent.karpenterStartupTaints(), ...metrics.agent.karpenterStartupTaints()]`.
   * Empty without `readinessTaint` and while a rollout holds groups whose DaemonSets do not remove this taint (see
   * `karpenterStartupTaint()`); the one entry from the stage on where every group removes it.
   */
  public karpenterStartupTaints(): KarpenterStartupTaint[] {
    const entry = this.karpenterStartupTaint();
    return entry ? [entry] : [];
  }

  /** The name and namespace a release's props give the agent (both releases must give the same). */
  private identityOf(props: NodeAgentDaemonSetProps, id: string): AgentIdentity {
    return resolveIdentity(this, { ...props, adopt: this.adopt }, { name: nameFromId(id), namespace: 'kube-system' });
  }

  /** Nothing promoted and no previous release: e.g. a fleet stage before this cluster's wave, for an agent whose rollout lacks `previous`. */
  private nothingRendered(): ValidationError {
    const kind = kindOf(userConstruct(this));
    return new ValidationError(this, 'rollout.previous is unset while rollout.promoted promotes no wave, so no DaemonSet would be rendered '
      + `and the agent would be deleted from every node: give rollout.previous the release the nodes run now (${kind === 'NodeAgentDaemonSet'
        ? 'AgentRelease.fromProps(previousProps)' : `${kind}.release(previousProps)`}), or promote at least the first wave`);
  }

  private throwIfProblems(problems: string[]): void {
    throwIfProblems(this, problems, { heading: 'invalid props' });
  }

  /** The previous release, resolved and checked exactly like the current one. */
  private resolvePrevious(rollout: AgentRollout | undefined, id: string): AgentSpec | undefined {
    const release = rollout?.previous;
    if (!release) return undefined;
    if (release.kind !== BASE_RELEASE_KIND) {
      throw new ValidationError(this, `rollout.previous was made by ${release.kind}.release(); a NodeAgentDaemonSet's previous release is `
        + 'AgentRelease.fromProps(previousProps), with the props the previous version gave this construct');
    }
    const props = release._agentProps({ id, chartNamespace: Chart.of(this).namespace });
    checkStruct(this, 'NodeAgentDaemonSetProps', props, 'rollout.previous');
    // Name and namespace are the identity both releases share: a difference is refused by sharedObjectProblems.
    const spec = resolveAgentSpec(props, this.identityOf(props, id));
    this.throwIfProblems(checkAgentSpec(spec).map((m) => `rollout.previous: ${m}`));
    return spec;
  }
}
brand(NodeAgentDaemonSet, 'NodeAgentDaemonSet');

/** How many JSON patches a DaemonSet carries (cdk8s' private list, read defensively). */
function patchCount(ds: kplus.DaemonSet): number {
  return ((ApiObject.of(ds) as unknown as { patches?: unknown[] }).patches ?? []).length;
}

/**
 * The host ports of the DaemonSets a patch was added to after construction (hostNetwork turned on,
 * a hostPort added), as rendered: the others bind what the spec says. A DaemonSet whose patches do
 * not render is left to the late check, which names the patch.
 */
function patchedHostPorts(daemonSets: readonly kplus.DaemonSet[], own: ReadonlyMap<kplus.DaemonSet, number>): AgentHostPort[] {
  return daemonSets.filter((ds) => patchCount(ds) > (own.get(ds) ?? 0)).flatMap((ds) => {
    try {
      return renderedHostPorts(ApiObject.of(ds).toJson());
    } catch {
      return [];
    }
  });
}

/** A Karpenter NodePool `startupTaints` entry (karpenter.sh/v1). */
export interface KarpenterStartupTaint {
  /** The taint key. */
  readonly key: string;
  /** The taint effect: NoSchedule. */
  readonly effect: string;
}

function nameFromId(id: string): string {
  return id.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').substring(0, 50);
}
