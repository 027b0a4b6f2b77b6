/**
 * Renders the objects every rollout group of an agent shares: its namespace, PriorityClass,
 * priority quota, ServiceAccount, RBAC and the content-addressed ConfigMaps. What they hold while
 * two releases run is decided in src/agent/held-waves.ts.
 */
import { ApiObject, JsonPatch } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { configMapName } from '../agent/agent-spec';
import { AgentPolicyRule, AgentPriorityClass, PodSecurityLevel } from '../agent/options';
import { sortedRecord } from '../validation/values';

/** Label prefix of the Pod Security Admission levels on a namespace. */
const PSA_PREFIX = 'pod-security.kubernetes.io';

/**
 * cdk8s gives every object of a chart with a namespace that namespace, cluster-scoped ones too; a
 * Namespace, PriorityClass, ClusterRole or ClusterRoleBinding must carry none.
 */
export function clusterScoped<T extends ApiObject>(object: T): T {
  if (object.metadata.namespace !== undefined) object.addJsonPatch(JsonPatch.remove('/metadata/namespace'));
  return object;
}

export function renderNamespace(scope: Construct, namespace: string, level: PodSecurityLevel): ApiObject {
  return clusterScoped(new kplus.k8s.KubeNamespace(scope, 'Namespace', {
    metadata: {
      name: namespace,
      labels: sortedRecord({
        'app.kubernetes.io/managed-by': 'cdk8s',
        [`${PSA_PREFIX}/enforce`]: level,
        [`${PSA_PREFIX}/audit`]: level,
        [`${PSA_PREFIX}/warn`]: level,
      }),
    },
  }));
}

export function renderPriorityClass(
  scope: Construct, agent: string, name: string, priorityClass: AgentPriorityClass, labels: { [key: string]: string },
): void {
  clusterScoped(new kplus.k8s.KubePriorityClass(scope, 'PriorityClass', {
    metadata: { name, labels },
    value: priorityClass.value,
    globalDefault: false,
    preemptionPolicy: 'PreemptLowerPriority',
    description: `Node agent ${agent}: scheduled ahead of ordinary workloads so it is never left Pending on a full node.`,
  }));
}

/** `first`: the construct id of the agent's first quota keeps its historical name. */
export function renderPriorityQuota(
  scope: Construct, agent: string, namespace: string, priorityClassName: string, labels: { [key: string]: string }, first: boolean,
): void {
  new kplus.k8s.KubeResourceQuota(scope, first ? 'PriorityQuota' : `PriorityQuota-${priorityClassName}`, {
    metadata: { name: `${agent}-${priorityClassName}`, namespace, labels },
    spec: {
      // Not a limit: the quota exists so that admission accepts critical-priority pods here.
      hard: { pods: kplus.k8s.Quantity.fromString('1000000') },
      scopeSelector: { matchExpressions: [{ scopeName: 'PriorityClass', operator: 'In', values: [priorityClassName] }] },
    },
  });
}

export function renderRbac(
  scope: Construct, agent: string, namespace: string, rules: AgentPolicyRule[], labels: { [key: string]: string }, serviceAccount: string,
): ApiObject {
  const role = clusterScoped(new kplus.k8s.KubeClusterRole(scope, 'ClusterRole', {
    metadata: { name: agent, labels },
    rules: rules.map((r) => ({ apiGroups: r.apiGroups ?? [''], resources: r.resources, verbs: r.verbs, resourceNames: r.resourceNames })),
  }));
  clusterScoped(new kplus.k8s.KubeClusterRoleBinding(scope, 'ClusterRoleBinding', {
    metadata: { name: agent, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: agent },
    subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace }],
  }));
  return role;
}

/** The agent's ConfigMaps, one per distinct content. */
export class ConfigMaps {
  private readonly byName = new Map<string, kplus.ConfigMap>();

  public constructor(private readonly scope: Construct, private readonly agent: string, private readonly namespace: string,
    private readonly labels: { [key: string]: string }) {}

  /** Content-addressed, immutable, and without a version label: two versions with the same config share it. */
  public forData(data: { [file: string]: string }): kplus.ConfigMap {
    const name = configMapName(this.agent, data);
    let configMap = this.byName.get(name);
    if (!configMap) {
      const id = this.byName.size === 0 ? 'ConfigMap' : `ConfigMap-${name}`;
      // cdk8s-plus refuses a key named like an Object.prototype member ("toString", "constructor") as
      // "already used" (it tests `key in data`); such data goes in as a patch of the rendered object.
      const prototypeKeys = Object.keys(data).some((key) => key in {});
      configMap = new kplus.ConfigMap(this.scope, id, {
        metadata: { name, namespace: this.namespace, labels: this.labels },
        data: prototypeKeys ? undefined : sortedRecord(data),
        // Its name changes with its content, so it never needs an update; immutable spares the
        // API server a watch from every node's kubelet.
        immutable: true,
      });
      if (prototypeKeys) ApiObject.of(configMap).addJsonPatch(JsonPatch.add('/data', sortedRecord(data)));
      this.byName.set(name, configMap);
    }
    return configMap;
  }

  public get(data: { [file: string]: string }): kplus.ConfigMap | undefined {
    return this.byName.get(configMapName(this.agent, data));
  }
}
