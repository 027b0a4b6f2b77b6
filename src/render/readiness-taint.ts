/**
 * Renders an agent's readiness taint: the remover container and its token volume on each DaemonSet whose release
 * has one, and the access every group shares (the `nodes` get/patch ClusterRole, the Role to read its own pods, the
 * ValidatingAdmissionPolicy that narrows the patch to removing the taint from the pod's own node).
 */
import { ApiObject, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import { Construct } from 'constructs';
import { clusterScoped } from './shared-objects';
import { AgentSpec } from '../agent/agent-spec';
import {
  REMOVER_GID, REMOVER_SCRIPT, REMOVER_TOKEN_DIR, REMOVER_UID, removerEnvironment, removerPolicyMatch, removerPolicyValidations,
} from '../agent/readiness-remover';
import { REMOVER_CONTAINER } from '../scheduling/readiness-taint';

/** The remover's projected volume: its own bound token and the cluster CA, mounted in the remover only. */
export const REMOVER_TOKEN_VOLUME = 'readiness-taint-token';

/**
 * The token lifetime the kubelet's own projected token uses (3607 s: an hour, and the 7 s the API server reads
 * as "a kubelet-refreshed token"); the kubelet renews it before it expires and the remover reads it on every call.
 */
const TOKEN_SECONDS = 3607;

/**
 * JSON patches adding the remover to a DaemonSet's pod (typed field names, as daemon-set-patches.ts explains).
 * `hasVolumes`: the pod already has a volume list.
 */
export function readinessRemoverPatches(spec: AgentSpec, hasVolumes: boolean): JsonPatch[] {
  const taint = spec.readinessTaint;
  if (!taint) return [];
  const env: k8s.EnvVar[] = [
    ...Object.entries(removerEnvironment(taint.key, taint.recheckSeconds)).map(([name, value]) => ({ name, value })),
    { name: 'NODE_NAME', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
  ].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const container: k8s.Container = {
    name: REMOVER_CONTAINER,
    image: taint.image,
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', REMOVER_SCRIPT],
    env,
    resources: {
      requests: { cpu: k8s.Quantity.fromString('5m'), memory: k8s.Quantity.fromString('16Mi') },
      limits: { memory: k8s.Quantity.fromString('32Mi') },
    },
    securityContext: {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      runAsUser: REMOVER_UID,
      runAsGroup: REMOVER_GID,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    volumeMounts: [{ name: REMOVER_TOKEN_VOLUME, mountPath: REMOVER_TOKEN_DIR, readOnly: true }],
  };
  // Only the remover holds the token: the agent's own containers keep running without one unless they asked for it.
  const volume: k8s.Volume = {
    name: REMOVER_TOKEN_VOLUME,
    projected: {
      sources: [
        { serviceAccountToken: { path: 'token', expirationSeconds: TOKEN_SECONDS } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      ],
    },
  };
  return [
    JsonPatch.add('/spec/template/spec/containers/-', container),
    hasVolumes ? JsonPatch.add('/spec/template/spec/volumes/-', volume) : JsonPatch.add('/spec/template/spec/volumes', [volume]),
  ];
}


/**
 * The remover's access: `nodes` get and patch (RBAC cannot narrow a patch to a field, nor to the node the pod runs
 * on: `resourceNames` would have to list every node), `pods` get in the agent's namespace (its own Ready
 * condition), and the ValidatingAdmissionPolicy with its binding that allow the ServiceAccount's node updates only
 * when they remove one of the releases' taints (two while a rollout holds waves on the previous release) from the
 * pod's own node and change nothing else. Nothing when neither release has a readiness taint. Returns the current
 * release's taint key.
 */
export function renderReadinessTaintAccess(scope: Construct, current: AgentSpec, previous: AgentSpec | undefined, serviceAccount: string,
  labels: { [key: string]: string }): string | undefined {
  const taints = [current, ...previous ? [previous] : []].map((r) => r.readinessTaint).filter((t) => t !== undefined);
  if (taints.length === 0) return undefined;
  const a = {
    agent: current.name,
    namespace: current.namespace,
    serviceAccount,
    keys: [...new Set(taints.map((t) => t!.key))],
    admissionPolicy: taints.every((t) => t!.admissionPolicy),
    labels,
  };
  const name = `${a.agent}-readiness-taint`;
  const subjects = [{ kind: 'ServiceAccount', name: a.serviceAccount, namespace: a.namespace }];
  clusterScoped(new k8s.KubeClusterRole(scope, 'ReadinessTaintClusterRole', {
    metadata: { name, labels: a.labels },
    rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] }],
  }));
  clusterScoped(new k8s.KubeClusterRoleBinding(scope, 'ReadinessTaintClusterRoleBinding', {
    metadata: { name, labels: a.labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects,
  }));
  new k8s.KubeRole(scope, 'ReadinessTaintRole', {
    metadata: { name, namespace: a.namespace, labels: a.labels },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }],
  });
  new k8s.KubeRoleBinding(scope, 'ReadinessTaintRoleBinding', {
    metadata: { name, namespace: a.namespace, labels: a.labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
    subjects,
  });
  if (!a.admissionPolicy) return current.readinessTaint?.key;
  // Cluster-scoped: the namespace in the name keeps two installs of one agent name apart.
  const policy = `${a.agent}-readiness-taint.${a.namespace}.node-agents.cdk8s.io`;
  clusterScoped(new ApiObject(scope, 'ReadinessTaintPolicy', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: policy, labels: a.labels },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes'] }],
      },
      matchConditions: [{ name: 'readiness-taint-remover', expression: removerPolicyMatch(a.namespace, a.serviceAccount) }],
      validations: removerPolicyValidations(a.keys).map((v) => ({ expression: v.expression, message: v.message, reason: 'Forbidden' })),
    },
  }));
  clusterScoped(new ApiObject(scope, 'ReadinessTaintPolicyBinding', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: policy, labels: a.labels },
    spec: { policyName: policy, validationActions: ['Deny'] },
  }));
  return current.readinessTaint?.key;
}
