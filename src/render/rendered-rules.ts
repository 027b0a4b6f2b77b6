/**
 * The agent's own rules, run again on each DaemonSet as finally rendered: a JSON patch added after
 * construction (an escape hatch) may undo what the props' checks ensured. The same rules as the
 * props' (src/agent/release-checks.ts surgeProblems, the hostPath type and mount rules, the
 * namespace's Pod Security level), read from the JSON the API server will get. Host ports are read
 * here for the cross-agent checks too.
 */
import { BASELINE_CAPABILITIES } from '../agent/agent-spec';
import { hostPathTypeProblem } from '../agent/host-path-types';
import { AgentHostPort, HostPathType, PodSecurityLevel } from '../agent/options';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** What an agent kind adds to the generic rules. */
export interface AgentRenderedRules {
  /** Why this agent must never surge (two of it on one node), if it must not. */
  readonly noSurge?: string;
}

/** The host ports the rendered pod binds (hostPort, or every container port under hostNetwork). */
export function renderedHostPorts(ds: Json): AgentHostPort[] {
  const pod = ds?.spec?.template?.spec ?? {};
  const ports: AgentHostPort[] = [];
  for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    for (const p of c?.ports ?? []) {
      const port = p?.hostPort ?? (pod.hostNetwork === true ? p?.containerPort : undefined);
      if (typeof port === 'number') ports.push({ port, protocol: p.protocol ?? 'TCP', container: c.name });
    }
  }
  return ports;
}

/** Whether the rendered update strategy starts a second pod on a node (maxSurge neither 0 nor "0%"). */
function surge(ds: Json): string | undefined {
  const strategy = ds?.spec?.updateStrategy;
  if (strategy?.type !== undefined && strategy.type !== 'RollingUpdate') return undefined;
  const value = strategy?.rollingUpdate?.maxSurge;
  if (value === undefined || value === 0 || value === '0' || value === '0%') return undefined;
  return String(value);
}

/** Writable hostPath volumes the pod mounts. */
function writableHostPaths(pod: Json): string[] {
  const hostPaths = new Map<string, string>();
  for (const v of pod.volumes ?? []) if (v?.hostPath?.path) hostPaths.set(v.name, v.hostPath.path);
  const writable = new Set<string>();
  for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    for (const m of c?.volumeMounts ?? []) if (hostPaths.has(m?.name) && m.readOnly !== true) writable.add(hostPaths.get(m.name)!);
  }
  return [...writable].sort();
}

function surgeRules(ds: Json, rules: AgentRenderedRules): string[] {
  const maxSurge = surge(ds);
  if (maxSurge === undefined) return [];
  const pod = ds.spec.template?.spec ?? {};
  const problems: string[] = [];
  const fix = 'use maxUnavailable with maxSurge 0 (the updateStrategy prop, e.g. UpdateStrategy.oneAtATime()), not a patch';
  if (rules.noSurge) problems.push(`updateStrategy maxSurge ${maxSurge}: ${rules.noSurge}; ${fix}`);
  const ports = renderedHostPorts(ds);
  if (ports.length > 0) {
    problems.push(`updateStrategy maxSurge ${maxSurge} with host port(s) ${ports.map((p) => `${p.port}/${p.protocol}`).join(', ')}: the surge pod can never schedule `
      + `beside the old one (the scheduler's NodePorts filter), so the rollout deadlocks; ${fix}`);
  }
  const writable = writableHostPaths(pod);
  if (writable.length > 0) problems.push(`updateStrategy maxSurge ${maxSurge} with writable hostPath(s) ${writable.join(', ')}: old and new pod would write the same host state at once; ${fix}`);
  return problems;
}

function mountRules(pod: Json): string[] {
  const problems: string[] = [];
  for (const v of pod.volumes ?? []) {
    const path = v?.hostPath?.path;
    if (typeof path !== 'string') continue;
    // An empty type skips the kubelet's check; the library renders the resolved type.
    const type = v.hostPath.type === '' ? undefined : v.hostPath.type as HostPathType | undefined;
    const problem = hostPathTypeProblem(`volume "${v.name}" hostPath.type`, path, type);
    if (problem) problems.push(problem);
  }
  for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
    for (const m of c?.volumeMounts ?? []) {
      if (m?.mountPropagation === 'Bidirectional' && m.readOnly === true) {
        problems.push(`container "${c.name}" mounts "${m.name}" with Bidirectional propagation but read-only: Bidirectional is there so that mounts the container `
          + 'makes below it reach the host, and a read-only mount lets it create nothing there; set readOnly: false, or use HostToContainer');
      }
    }
  }
  return problems;
}

/** What in the pod needs a wider Pod Security level than `level` (pod-security-admission's baseline and restricted checks, the main ones). */
function podSecurityNeeds(pod: Json, level: string): string[] {
  const containers: Json[] = [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
  const needs: string[] = [];
  if (level === PodSecurityLevel.BASELINE || level === PodSecurityLevel.RESTRICTED) {
    if (pod.hostNetwork === true) needs.push('hostNetwork');
    if (pod.hostPID === true) needs.push('hostPID');
    if (pod.hostIPC === true) needs.push('hostIPC');
    if ((pod.volumes ?? []).some((v: Json) => v?.hostPath)) needs.push('a hostPath volume');
    for (const c of containers) {
      const sc = c?.securityContext ?? {};
      if (sc.privileged === true) needs.push(`privileged container "${c.name}"`);
      const added: string[] = sc.capabilities?.add ?? [];
      const beyond = added.filter((cap) => !BASELINE_CAPABILITIES.has(cap));
      if (beyond.length > 0) needs.push(`capabilities ${beyond.join(', ')} in "${c.name}"`);
      if ((c?.ports ?? []).some((p: Json) => p?.hostPort !== undefined && p.hostPort !== 0)) needs.push(`a hostPort in "${c.name}"`);
    }
  }
  if (level === PodSecurityLevel.RESTRICTED) {
    for (const c of containers) {
      const sc = c?.securityContext ?? {};
      if (sc.allowPrivilegeEscalation !== false) needs.push(`allowPrivilegeEscalation not false in "${c.name}"`);
      if (sc.runAsNonRoot !== true && pod.securityContext?.runAsNonRoot !== true) needs.push(`runAsNonRoot not true for "${c.name}"`);
      if (!(sc.capabilities?.drop ?? []).includes('ALL')) needs.push(`capabilities not dropping ALL in "${c.name}"`);
    }
  }
  return needs;
}

/**
 * The agent's rules on one rendered DaemonSet. `namespaceLevel` is the Pod Security level the agent's
 * own Namespace object enforces, when it renders one.
 */
export function renderedAgentProblems(ds: Json, rules: AgentRenderedRules, namespaceLevel?: string): string[] {
  const pod = ds?.spec?.template?.spec ?? {};
  const problems = [...surgeRules(ds, rules), ...mountRules(pod)];
  if (namespaceLevel !== undefined && namespaceLevel !== PodSecurityLevel.PRIVILEGED) {
    const needs = podSecurityNeeds(pod, namespaceLevel);
    if (needs.length > 0) {
      problems.push(`the pods need more than the Pod Security level "${namespaceLevel}" the agent's Namespace enforces (${needs.join('; ')}): PodSecurity admission `
        + 'refuses every pod, and the DaemonSet runs nowhere. Set it through the props, which raise the namespace\'s level with it, not a patch');
    }
  }
  return problems.map((p) => `DaemonSet "${ds?.metadata?.name}": ${p}`);
}
