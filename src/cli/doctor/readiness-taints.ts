/**
 * `doctor`'s readiness taint findings: a node still carrying an agent's readiness taint (READINESS_TAINT_ANNOTATION
 * on the agent's DaemonSets), and the agent's pod there that should remove it: not Ready yet (it waits: a warning),
 * Ready (its remover failed: an error, read its log), of an older revision without the remover (an error until the
 * rolling update replaces it), or none at all (nothing will remove it: an error). A node owned by a DaemonSet of the
 * agent that does not remove the taint (a rollout group on a release without it) is named with that group: its pod
 * runs no remover, or, not tolerating the taint, it has no pod there.
 */
import type { DoctorFinding } from './finding';
import { ClusterState, DaemonSetState } from './state';
import { readinessTaintOf, REMOVER_CONTAINER } from '../../scheduling/readiness-taint';
import { NodeJson } from '../../scheduling/types';
import { shellWord } from '../../util/shell';
import { displayName } from '../capacity/names';
import { PodRecord } from '../capacity/pods';
import { compare, isObject } from '../coverage/manifests';
import { nodeFacts } from '../coverage/nodes';
import { selectsIgnoringTaints } from '../coverage/readiness-taints';

function ready(pod: PodRecord): boolean {
  const conditions = pod.object?.status?.conditions;
  return Array.isArray(conditions) && conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

/** Whether the pod runs the remover: a pod of an older revision of the DaemonSet, before its release had readinessTaint, does not. */
function hasRemover(pod: PodRecord): boolean {
  // the kubelet reports a status for every container of the pod; a pod without them says nothing either way
  const statuses = pod.object?.status?.containerStatuses;
  const names = Array.isArray(statuses) ? statuses.filter(isObject).map((c) => c.name) : [];
  return names.length === 0 || names.includes(REMOVER_CONTAINER);
}

export function readinessTaintDoctorFindings(state: ClusterState, agent?: string): DoctorFinding[] {
  const findings: DoctorFinding[] = [];
  // each agent's taint once, with its DaemonSets (waves and resource profiles share it)
  const byTaint = new Map<string, TaintOwners>();
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
    // the agent's DaemonSets that do not remove this taint: rollout groups on a release without it (or with another key)
    const removing = new Set(daemonSets);
    const namespaces = new Set(daemonSets.map((id) => id.split('/')[0]));
    const others = state.daemonSets.filter((d) => d.info.agent === t.agent && namespaces.has(d.info.namespace) && !removing.has(d.info.id));
    for (const node of state.nodes) {
      const name = node.metadata.name;
      if (!(node.spec?.taints ?? []).some((taint) => taint.key === t.key && taint.effect === t.effect)) continue;
      const pods = daemonSets.flatMap((id) => (state.daemonSetPods.get(id) ?? [])
        .filter((p) => p.node === name && !p.terminal).map((p) => ({ id, p })));
      const found = pods.find((x) => ready(x.p)) ?? pods[0];
      const pod = found?.p;
      const taint = `${t.key}:${t.effect}`;
      // the DaemonSet the finding is about: the one whose pod runs there, else the one that selects the node (its wave
      // and resource profile), else the first
      const owner = found?.id ?? selectingDaemonSet(state, daemonSets, node) ?? daemonSets[0];
      const base = { cause: 'readiness-taint' as const, daemonSet: owner, node: name, pod: pod && `${pod.namespace}/${pod.name}` };
      const untaint = `kubectl taint nodes ${shellWord(name)} ${shellWord(`${taint}-`)}`;
      const held = pod === undefined ? heldGroupFinding(state, t, node, others, untaint) : undefined;
      if (held !== undefined) {
        findings.push(held);
      } else if (pod === undefined) {
        findings.push({
          ...base,
          severity: 'error',
          message: `${displayName(name)}: carries ${t.agent}'s readiness taint ${taint} and no pod of ${t.agent} runs there to remove it: `
            + 'nothing that does not tolerate the taint lands on the node',
          fix: `if ${t.agent} should run there, see why it does not (its other findings); if not, the node pool gives the taint to nodes the agent `
            + `does not cover: take it out of that pool's startup taints, and off the node: ${untaint}`,
        });
      } else {
        findings.push(podFinding(t, base, pod, untaint));
      }
    }
  }
  return findings;
}

/** The first of `ids` whose nodeSelector and required node affinity select the node, whatever its taints. */
function selectingDaemonSet(state: ClusterState, ids: readonly string[], node: NodeJson): string | undefined {
  const facts = nodeFacts([node])[0];
  return ids.find((id) => {
    const ds = state.daemonSets.find((d) => d.info.id === id);
    return ds !== undefined && selectsIgnoringTaints(ds.info, facts);
  });
}

/** An agent's readiness taint with the DaemonSets that remove it. */
interface TaintOwners {
  readonly agent: string;
  readonly key: string;
  readonly effect: string;
  readonly daemonSets: string[];
}

/** The finding on a node carrying the taint where a pod of a DaemonSet that removes it runs. */
function podFinding(t: TaintOwners, base: Omit<DoctorFinding, 'severity' | 'message' | 'fix'>, pod: PodRecord, untaint: string): DoctorFinding {
  const taint = `${t.key}:${t.effect}`;
  const name = base.node;
  if (!hasRemover(pod)) {
    return {
      ...base,
      severity: 'error',
      message: `${displayName(name)}: carries ${t.agent}'s readiness taint ${taint} and pod ${base.pod} there has no remover container: it runs a `
        + `release without readinessTaint (a revision of ${base.daemonSet} older than its template, which the rolling update replaces in turn), `
        + 'so nothing removes the taint from this node until then',
      fix: `let the DaemonSet's rolling update replace the pod (its old-revision findings say what holds it), or take the taint off now: ${untaint}`,
    };
  }
  if (ready(pod)) {
    return {
      ...base,
      severity: 'error',
      message: `${displayName(name)}: still carries ${t.agent}'s readiness taint ${taint} though pod ${base.pod} is Ready there: its remover did not remove it`,
      fix: `read the remover's log: kubectl -n ${shellWord(pod.namespace)} logs ${shellWord(pod.name)} -c ${REMOVER_CONTAINER} (HTTP 403: RBAC or the `
        + 'ValidatingAdmissionPolicy refused it, which needs Kubernetes 1.30 or later; 401: the token; 000: the API server unreachable)',
    };
  }
  return {
    ...base,
    severity: 'warning',
    message: `${displayName(name)}: carries ${t.agent}'s readiness taint ${taint} while pod ${base.pod} is not Ready: the taint stays, and workloads `
      + 'that do not tolerate it wait, until the pod is Ready',
    fix: `nothing while the pod starts; if it stays not Ready, see its own findings (kubectl -n ${shellWord(pod.namespace)} describe pod ${shellWord(pod.name)})`,
  };
}

/**
 * A node carrying the taint in a rollout group whose release does not remove it (a group held on the previous
 * release while a rollout enables the taint, or promoted to one that dropped it): its pod there, or, when it has
 * none, the group's DaemonSet selecting the node without tolerating the taint (the DaemonSet controller's
 * NodeShouldRunDaemonPod creates no pod on a node with an untolerated NoSchedule taint). Undefined when no such
 * DaemonSet owns the node.
 */
function heldGroupFinding(state: ClusterState, t: TaintOwners, node: NodeJson, others: readonly DaemonSetState[],
  untaint: string): DoctorFinding | undefined {
  const name = node.metadata.name;
  const running = others.map((d) => ({ d, pod: (state.daemonSetPods.get(d.info.id) ?? []).find((p) => p.node === name && !p.terminal) }))
    .find((x) => x.pod !== undefined);
  const facts = running === undefined ? nodeFacts([node])[0] : undefined;
  const owner = running?.d ?? others.find((d) => selectsIgnoringTaints(d.info, facts!));
  if (owner === undefined) return undefined;
  const taint = `${t.key}:${t.effect}`;
  const group = owner.info.rolloutGroup === undefined ? '' : ` (rollout group "${owner.info.rolloutGroup}")`;
  const what = running !== undefined
    ? `its pod ${running.pod!.namespace}/${running.pod!.name} of ${owner.info.id}${group} runs a release without this readiness taint: it has no remover`
    : `${owner.info.id}${group} selects the node but runs a release without this readiness taint and does not tolerate it: the DaemonSet `
      + 'controller creates no pod there';
  return {
    cause: 'readiness-taint',
    severity: 'error',
    daemonSet: owner.info.id,
    node: name,
    pod: running?.pod && `${running.pod.namespace}/${running.pod.name}`,
    message: `${displayName(name)}: carries ${t.agent}'s readiness taint ${taint}, and ${what}; ${t.agent}'s DaemonSets that remove it `
      + `(${t.daemonSets.slice(0, 3).join(', ')}${t.daemonSets.length > 3 ? ', …' : ''}) do not own the node: nothing removes the taint, and nothing that does `
      + 'not tolerate it lands there, until the group runs a release with it',
    fix: 'promote the node\'s rollout group to the release with readinessTaint (or, if the release dropped it, take the taint out of the node pools); '
      + `keep the taint out of the node pools until every group removes it; off this node: ${untaint}`,
  };
}
