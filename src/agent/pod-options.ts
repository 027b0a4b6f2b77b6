import { AgentEnvValue } from './container-inputs';
import { AgentContainer, AgentResources, AgentVolume, AgentVolumeMount } from './options';
import type { AgentReadinessTaint } from './readiness-taint';
import { AgentResourceProfile } from './resource-profiles';
import { brand } from '../validation/brand';
import { checkArgs } from '../validation/struct-check';

/** Which source an `AgentEnvSource` reads. */
export enum AgentEnvSourceKind {
  /** Every key of a Secret. */
  SECRET = 'secret',
  /** Every key of a ConfigMap. */
  CONFIG_MAP = 'configMap',
}

/** Options of an `AgentEnvSource`. */
export interface AgentEnvSourceOptions {
  /**
   * Prefix of every variable name taken from the source.
   * @default - none
   */
  readonly prefix?: string;

  /**
   * Start the container even when the source is missing.
   * @default false
   */
  readonly optional?: boolean;
}

/** Environment variables from every key of a Secret or ConfigMap of the agent's namespace (`envFrom`). */
export class AgentEnvSource {
  /** Every key of a Secret. */
  public static secret(secretName: string, options: AgentEnvSourceOptions = {}): AgentEnvSource {
    checkArgs('AgentEnvSource.secret', [secretName, options]);
    return new AgentEnvSource(AgentEnvSourceKind.SECRET, secretName, options.prefix, options.optional);
  }

  /** Every key of a ConfigMap. */
  public static configMap(configMapName: string, options: AgentEnvSourceOptions = {}): AgentEnvSource {
    checkArgs('AgentEnvSource.configMap', [configMapName, options]);
    return new AgentEnvSource(AgentEnvSourceKind.CONFIG_MAP, configMapName, options.prefix, options.optional);
  }

  private constructor(
    /** Secret or ConfigMap. */
    public readonly kind: AgentEnvSourceKind,
    /** Name of the Secret or ConfigMap. */
    public readonly name: string,
    /** Prefix of the variable names. */
    public readonly prefix: string | undefined,
    /** Whether a missing source is tolerated. */
    public readonly optional: boolean | undefined,
  ) {}
}
brand(AgentEnvSource, 'AgentEnvSource');

/** DNS policy of the agent's pods. */
export enum AgentDnsPolicy {
  /** The cluster's DNS (with hostNetwork, use CLUSTER_FIRST_WITH_HOST_NET). */
  CLUSTER_FIRST = 'ClusterFirst',
  /** The cluster's DNS for a pod on the host network. */
  CLUSTER_FIRST_WITH_HOST_NET = 'ClusterFirstWithHostNet',
  /** The node's resolv.conf. */
  DEFAULT = 'Default',
  /** Only `dnsConfig`. */
  NONE = 'None',
}

/** Extra DNS settings of the agent's pods (`dnsConfig`). */
export interface AgentDnsConfig {
  /**
   * Name servers (IP addresses), at most 3.
   * @default - none
   */
  readonly nameservers?: string[];

  /**
   * Search domains, at most 32.
   * @default - none
   */
  readonly searches?: string[];

  /**
   * resolv.conf options, e.g. `{ ndots: "2" }` (an empty value writes the option alone).
   * @default - none
   */
  readonly options?: { [name: string]: string };
}

/**
 * Pod settings every agent construct takes, as a Helm chart's values would offer them. All of
 * them are part of a release: with rollout waves, held waves keep the previous release's.
 */
export interface AgentPodOptions {
  /**
   * Secrets (kubernetes.io/dockerconfigjson) of the agent's namespace used to pull its images.
   * @default - none
   */
  readonly imagePullSecrets?: string[];

  /**
   * Annotations of the agent's ServiceAccount, e.g. workload identity:
   * `{ "eks.amazonaws.com/role-arn": "arn:aws:iam::123456789012:role/logs" }` (IRSA) or
   * `{ "iam.gke.io/gcp-service-account": "logs@project.iam.gserviceaccount.com" }`.
   * @default - none
   */
  readonly serviceAccountAnnotations?: { [key: string]: string };

  /**
   * Use this existing ServiceAccount of the agent's namespace instead of creating one (the
   * agent's RBAC is bound to it).
   * @default - a ServiceAccount named after the agent is created
   */
  readonly serviceAccountName?: string;

  /**
   * More labels on the pod template (never in the selector; `app.kubernetes.io/*` and the rollout
   * group label are the agent's own).
   * @default - none
   */
  readonly podLabels?: { [key: string]: string };

  /**
   * More annotations on the pod template.
   * @default - none
   */
  readonly podAnnotations?: { [key: string]: string };

  /**
   * More environment variables of the main container (values, or references with
   * `AgentEnvValue.fromSecret` / `fromConfigMap`).
   * @default - none
   */
  readonly extraEnv?: { [name: string]: AgentEnvValue };

  /**
   * Environment variables of the main container from every key of a Secret or ConfigMap.
   * @default - none
   */
  readonly envFrom?: AgentEnvSource[];

  /**
   * More volumes of the pod (Secret, ConfigMap, emptyDir), mounted where a container's `mounts` or
   * the agent's `mounts` name them.
   * @default - none
   */
  readonly volumes?: AgentVolume[];

  /**
   * More mounts of the main container: of `volumes`, or of host paths not mounted there already.
   * @default - none
   */
  readonly mounts?: AgentVolumeMount[];

  /**
   * More long-running containers in the pod (e.g. an auth proxy, a file writer), after the agent's own.
   * @default - none
   */
  readonly sidecars?: AgentContainer[];

  /**
   * More init containers, run in order after the agent's own, before the main container.
   * @default - none
   */
  readonly initContainers?: AgentContainer[];

  /**
   * DNS policy of the pods.
   * @default - ClusterFirstWithHostNet with hostNetwork, else ClusterFirst
   */
  readonly dnsPolicy?: AgentDnsPolicy;

  /**
   * Extra DNS settings of the pods.
   * @default - none
   */
  readonly dnsConfig?: AgentDnsConfig;

  /**
   * Resources of any container of the pod by name, replacing the agent's for that container (e.g.
   * `{ "kube-rbac-proxy": { memoryLimit: "64Mi" } }`). Unset fields keep their defaults.
   * @default - the agent's resources
   */
  readonly containerResources?: { [container: string]: AgentResources };

  /**
   * Resources per kind of node, e.g. a log collector's memory by instance size: one DaemonSet per profile (and
   * rollout wave), whose node affinity takes exactly the profile's nodes. The first profile matching a node owns
   * it; a node matching none runs the agent's own resources (the DaemonSets it has without profiles). A node that
   * changes profile never runs two pods (a required anti-affinity against the agent's other DaemonSets' pods), and
   * a change of one profile restarts only that profile's nodes.
   * @default - one size for every node
   */
  readonly resourceProfiles?: AgentResourceProfile[];

  /**
   * A NoSchedule taint the agent's nodes join with (the node pool sets it) and that the agent's own pod removes from
   * its node once it is Ready there, and again whenever it comes back: workloads land on a new node only after the
   * agent runs. The agent tolerates it; a small remover container is added to its pod, with a ClusterRole allowing
   * `nodes` get and patch, narrowed by a ValidatingAdmissionPolicy to removing this taint from the pod's own node.
   * @default - none: workloads land as soon as the kubelet is Ready
   */
  readonly readinessTaint?: AgentReadinessTaint;
}

/** The pod options of a construct's props, to pass on to its NodeAgentDaemonSet. */
export function podOptionsOf(props: AgentPodOptions): AgentPodOptions {
  return {
    imagePullSecrets: props.imagePullSecrets,
    serviceAccountAnnotations: props.serviceAccountAnnotations,
    serviceAccountName: props.serviceAccountName,
    podLabels: props.podLabels,
    podAnnotations: props.podAnnotations,
    extraEnv: props.extraEnv,
    envFrom: props.envFrom,
    volumes: props.volumes,
    mounts: props.mounts,
    sidecars: props.sidecars,
    initContainers: props.initContainers,
    dnsPolicy: props.dnsPolicy,
    dnsConfig: props.dnsConfig,
    containerResources: props.containerResources,
    resourceProfiles: props.resourceProfiles,
    readinessTaint: props.readinessTaint,
  };
}
