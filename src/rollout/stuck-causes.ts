/**
 * Why a DaemonSet's rollout is stuck on a node, and what fixes it: one list, in one set of words, which
 * `node-agents doctor` reports and the rollout watchers the constructs render print in their Job logs.
 */

/** Why a node the DaemonSet should cover has no healthy pod of the current revision (the JSON `cause`). */
export type DoctorCause =
  | 'pending-resources' | 'pending-taint' | 'pending-host-port' | 'pending-affinity'
  | 'image-pull' | 'crash-loop' | 'config-error' | 'start-error' | 'not-ready' | 'node-not-ready'
  | 'no-pod' | 'misscheduled' | 'old-revision' | 'terminating' | 'readiness-taint';

export const DOCTOR_CAUSES: readonly DoctorCause[] = ['pending-resources', 'pending-taint', 'pending-host-port', 'pending-affinity',
  'image-pull', 'crash-loop', 'config-error', 'start-error', 'not-ready', 'node-not-ready', 'no-pod', 'misscheduled', 'old-revision', 'terminating',
  'readiness-taint'];

const FIX: Record<DoctorCause, string> = {
  'pending-resources': 'lower the agent\'s requests, make room on the node (move workloads off, a larger instance type), or give the agent the system-node-critical priority class so the scheduler preempts lower-priority pods',
  'pending-taint': 'tolerate the taint in the DaemonSet\'s pod template, or remove the taint from the node',
  'pending-host-port': 'free the host port on the node (the pod holding it), or change the agent\'s host port',
  'pending-affinity': 'the pod\'s affinity, anti-affinity or nodeSelector rejects the node: with rollout waves, the other wave\'s pod leaves first; check the rules',
  'image-pull': 'check that the image and tag exist in the registry and that the pull secret (imagePullSecrets) is valid for it',
  'crash-loop': 'read the crashed container\'s log (kubectl logs --previous) and fix the configuration, or roll back',
  'config-error': 'create the missing Secret or ConfigMap (or key) in the pod\'s namespace, or fix the reference in the pod template',
  'start-error': 'read the kubelet\'s message (kubectl describe pod): fix the command, args or entrypoint, the security profile (seccomp, AppArmor) or the mount it names in the pod template, or roll back',
  'not-ready': 'the readiness probe fails: check the probe\'s port and path and the agent\'s log',
  'node-not-ready': 'bring the node back (kubelet, network), or delete the Node object if the machine is gone: the agent cannot run there until the node is Ready',
  'no-pod': 'the DaemonSet controller created no pod there: read the DaemonSet\'s events (kubectl describe daemonset) and the controller manager\'s log',
  'misscheduled': 'the node no longer matches the DaemonSet (labels or taints changed): the controller deletes the pod, unless only a NoSchedule taint excludes the node',
  'old-revision': 'nothing while it waits its turn; when blocked, fix the nodes that hold the update budget (named above)',
  'readiness-taint': 'the agent\'s pod on the node removes its readiness taint once Ready: see the finding for what keeps it',
  'terminating': 'the node is unreachable, so no kubelet confirms the deletion: delete the Node object if the machine is gone (its pods go with it), or, once you know its containers are stopped, force-delete the pod (kubectl delete pod --grace-period=0 --force)',
};

/** The fix doctor gives for a cause, in its own words: the rollout watchers print the same (watch-script.ts beside this file). */
export function fixFor(cause: DoctorCause): string {
  return FIX[cause];
}
