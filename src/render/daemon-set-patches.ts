/**
 * The DaemonSet fields cdk8s-plus-28 does not model (updateStrategy, revisionHistoryLimit, hostPID,
 * priorityClassName, affinity, tolerations in our own order, exact resources, the pod security
 * context), applied as JSON patches on the rendered object.
 *
 * Values are the typed k8s structs, so a wrong shape fails to compile. They are patched in as they
 * are (not through `toJson_*`): `KubeDaemonSet.toJson()` runs its typed converter over the patched
 * manifest, and that converter reads IntOrString and Quantity fields as `k8s.IntOrString` /
 * `k8s.Quantity` objects, silently dropping a plain number or string there. The field-survival tests
 * in test/lib/node-agent-daemon-set.test.ts guard this. For the same reason paths use the typed field
 * names where they differ from the JSON ones (`hostPid`, rendered `hostPID`).
 */
import { ApiObject, JsonPatch } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';

export interface ContainerPatch {
  /** Index in `containers` (or `initContainers` when `init`). */
  readonly index: number;
  readonly init: boolean;
  readonly resources: k8s.ResourceRequirements;
  readonly securityContext: k8s.SecurityContext;
  readonly envFrom?: k8s.EnvFromSource[];
}

export interface DaemonSetPatch {
  readonly updateStrategy: k8s.DaemonSetUpdateStrategy;
  readonly revisionHistoryLimit: number;
  readonly hostPid: boolean;
  readonly priorityClassName?: string;
  readonly nodeSelector: { [key: string]: string };
  readonly affinity?: k8s.Affinity;
  readonly tolerations: k8s.Toleration[];
  readonly podSecurityContext: k8s.PodSecurityContext;
  readonly containers: ContainerPatch[];
  readonly imagePullSecrets?: k8s.LocalObjectReference[];
  /** Pod-template labels cdk8s-plus adds that must not be there (they move with the construct path). */
  readonly removeTemplateLabels: string[];
}

const POD = '/spec/template/spec';

export function patchDaemonSet(apiObject: ApiObject, patch: DaemonSetPatch): void {
  apiObject.addJsonPatch(...daemonSetPatchOps(patch));
}

/** Values may hold undefined members: cdk8s's `JsonPatch.apply` clones them through JSON, which leaves those out. */
function daemonSetPatchOps(patch: DaemonSetPatch): JsonPatch[] {
  const ops: JsonPatch[] = [
    JsonPatch.add('/spec/updateStrategy', patch.updateStrategy),
    JsonPatch.add('/spec/revisionHistoryLimit', patch.revisionHistoryLimit),
    JsonPatch.add(`${POD}/securityContext`, patch.podSecurityContext),
  ];
  // The typed name: the final converter renders `hostPid` as `hostPID` (and drops a `hostPID` key).
  if (patch.hostPid) ops.push(JsonPatch.add(`${POD}/hostPid`, true));
  if (patch.priorityClassName) ops.push(JsonPatch.add(`${POD}/priorityClassName`, patch.priorityClassName));
  if (Object.keys(patch.nodeSelector).length > 0) ops.push(JsonPatch.add(`${POD}/nodeSelector`, patch.nodeSelector));
  if (patch.affinity) ops.push(JsonPatch.add(`${POD}/affinity`, patch.affinity));
  if (patch.tolerations.length > 0) {
    ops.push(JsonPatch.add(`${POD}/tolerations`, patch.tolerations));
  }
  for (const c of patch.containers) {
    const path = `${POD}/${c.init ? 'initContainers' : 'containers'}/${c.index}`;
    ops.push(JsonPatch.add(`${path}/resources`, c.resources));
    ops.push(JsonPatch.add(`${path}/securityContext`, c.securityContext));
    if (c.envFrom && c.envFrom.length > 0) ops.push(JsonPatch.add(`${path}/envFrom`, c.envFrom));
  }
  if (patch.imagePullSecrets && patch.imagePullSecrets.length > 0) ops.push(JsonPatch.add(`${POD}/imagePullSecrets`, patch.imagePullSecrets));
  for (const label of patch.removeTemplateLabels) {
    ops.push(JsonPatch.remove(`/spec/template/metadata/labels/${escapePointer(label)}`));
  }
  return ops;
}

/** RFC 6901: "~" is written "~0" and "/" is written "~1" in a JSON pointer. */
function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
