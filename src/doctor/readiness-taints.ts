/**
 * `doctor`'s readiness taint findings: a node still carrying an agent's readiness taint (READINESS_TAINT_ANNOTATION
 * on the agent's DaemonSets), and the agent's pod there that should remove it: not Ready yet (it waits: a warning),
 * Ready (its remover failed: an error, read its log), or none at all (nothing will remove it: an error).
 */
import type { DoctorFinding } from './diagnose';
import { ClusterState } from './state';
import { REMOVER_CONTAINER } from '../agent/readiness-remover';
import { displayName } from '../capacity/names';
import { PodRecord } from '../capacity/pods';
import { compare, isObject } from '../coverage/manifests';
import { readinessTaintOf } from '../scheduling/readiness-taint';
import { shellWord } from '../util/shell';

function ready(pod: PodRecord): boolean {
  const conditions = pod.object?.status?.conditions;
  return Array.isArray(conditions) && conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

/** Whether the pod runs the remover: a held wave's pod of a release without readinessTaint does not. */
function hasRemover(pod: PodRecord): boolean {
  // the kubelet reports a status for every container of the pod; a pod without them says nothing either way
  const statuses = pod.object?.status?.containerStatuses;
  const names = Array.isArray(statuses) ? statuses.filter(isObject).map((c) => c.name) : [];
  return names.length === 0 || names.includes(REMOVER_CONTAINER);
}

export function readinessTaintDoctorFindings(state: ClusterState, agent?: string): DoctorFinding[] {
  const findings: DoctorFinding[] = [];
  // each agent's taint once, with its DaemonSets (waves share it)
  const byTaint = new Map<string, { agent: string; key: string; effect: string; daemonSets: string[] }>();
  for (const ds of state.daemonSets) {
    if (agent !== undefined && ds.info.agent !== agent) continue;
    const taint = readinessTaintOf(isObject(ds.object.metadata) ? ds.object.metadata.annotations : undefined);
    if (taint === undefined) continue;
    const entry = byTaint.get(`${ds.info.agent}\0${taint.key}`) ?? { agent: ds.info.agent, key: taint.key, effect: taint.effect, daemonSets: [] };
    entry.daemonSets.push(ds.info.id);
    byTaint.set(`${ds.info.agent}\0${taint.key}`, entry);
  }
  for (const t of byTaint.values()) {
    const daemonSets = t.daemonSets.sort(compare);
    for (const node of state.nodes) {
      const name = node.metadata.name;
      if (!(node.spec?.taints ?? []).some((taint) => taint.key === t.key && taint.effect === t.effect)) continue;
      const pods = daemonSets.flatMap((id) => (state.daemonSetPods.get(id) ?? []).filter((p) => p.node === name && !p.terminal));
      const pod = pods.find(ready) ?? pods[0];
      const podId = pod && `${pod.namespace}/${pod.name}`;
      const taint = `${t.key}:${t.effect}`;
      const base = { cause: 'readiness-taint' as const, daemonSet: daemonSets[0], node: name, pod: podId };
      if (pod === undefined) {
        findings.push({
          ...base,
          severity: 'error',
          message: `${displayName(name)}: carries ${t.agent}'s readiness taint ${taint} and no pod of ${t.agent} runs there to remove it: `
            + 'nothing that does not tolerate the taint lands on the node',
          fix: `if ${t.agent} should run there, see why it does not (its other findings); if not, the node pool gives the taint to nodes the agent `
            + `does not cover: take it out of that pool's startup taints, and off the node: kubectl taint nodes ${shellWord(name)} ${shellWord(`${taint}-`)}`,
        });
      } else if (!hasRemover(pod)) {
        findings.push({
          ...base,
          severity: 'error',
          message: `${displayName(name)}: carries ${t.agent}'s readiness taint ${taint} and pod ${podId} there has no remover container: it runs a `
            + 'release without readinessTaint (a held rollout wave keeps the previous release), so nothing removes the taint from this node',
          fix: 'promote the node\'s wave to the release with readinessTaint, or keep the taint off the node pools of held waves until then; '
            + `off this node: kubectl taint nodes ${shellWord(name)} ${shellWord(`${taint}-`)}`,
        });
      } else if (ready(pod)) {
        findings.push({
          ...base,
          severity: 'error',
          message: `${displayName(name)}: still carries ${t.agent}'s readiness taint ${taint} though pod ${podId} is Ready there: its remover did not remove it`,
          fix: `read the remover's log: kubectl -n ${shellWord(pod.namespace)} logs ${shellWord(pod.name)} -c ${REMOVER_CONTAINER} (HTTP 403: RBAC or the `
            + 'ValidatingAdmissionPolicy refused it, which needs Kubernetes 1.30 or later; 401: the token; 000: the API server unreachable)',
        });
      } else {
        findings.push({
          ...base,
          severity: 'warning',
          message: `${displayName(name)}: carries ${t.agent}'s readiness taint ${taint} while pod ${podId} is not Ready: the taint stays, and workloads `
            + 'that do not tolerate it wait, until the pod is Ready',
          fix: `nothing while the pod starts; if it stays not Ready, see its own findings (kubectl -n ${shellWord(pod.namespace)} describe pod ${shellWord(pod.name)})`,
        });
      }
    }
  }
  return findings;
}
