/**
 * Checks on a rendered pod template (its JSON), for what the API server refuses and no prop check
 * caught first: the late net of the agents, run at synthesis. Pure: no cdk8s. Each problem names
 * the container and the field; the construct adds its path.
 */
import { checkRenderedDaemonSetFields, checkRenderedPodFields } from './rendered-fields';
import { checkDnsLabel, checkEnvName, checkInt32, checkInt64, checkMountPropagation, checkPort, checkQuantity, checkSubPath, INT32_MAX } from './values';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const PORT_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A probe or hook port: a number from 1 to 65535, or a port name. */
function checkProbePort(prop: string, port: unknown): string[] {
  if (typeof port === 'string' && port.length <= 15 && PORT_NAME.test(port) && /[a-z]/.test(port)) return [];
  return checkPort(prop, port);
}

function checkProbe(prop: string, probe: Json): string[] {
  if (!probe) return [];
  const problems: string[] = [];
  for (const field of ['initialDelaySeconds', 'periodSeconds', 'timeoutSeconds', 'successThreshold', 'failureThreshold']) {
    problems.push(...checkInt32(`${prop}.${field}`, probe[field], 0));
  }
  for (const handler of ['httpGet', 'tcpSocket', 'grpc']) {
    if (probe[handler] !== undefined) problems.push(...checkProbePort(`${prop}.${handler}.port`, probe[handler].port));
  }
  return problems;
}

function checkIds(prop: string, sc: Json): string[] {
  if (!sc) return [];
  // IsValidUserID / IsValidGroupID: 0 to 2^31 - 1.
  return [...checkInt32(`${prop}.runAsUser`, sc.runAsUser), ...checkInt32(`${prop}.runAsGroup`, sc.runAsGroup), ...checkInt32(`${prop}.fsGroup`, sc.fsGroup)];
}

/** Problems of one rendered pod spec; `[]` when the API server would accept what these rules cover. */
export function checkRenderedPodSpec(pod: Json): string[] {
  if (!pod) return [];
  const problems: string[] = [...checkIds('securityContext', pod.securityContext)];
  problems.push(...checkInt64('terminationGracePeriodSeconds', pod.terminationGracePeriodSeconds));
  const hostPorts = new Map<string, string>();
  const containers: Json[] = [...(pod.initContainers ?? []), ...(pod.containers ?? [])];
  for (const c of containers) {
    const where = `container "${c.name}"`;
    const own: string[] = [...checkIds(`${where} securityContext`, c.securityContext)];
    // ValidateContainers: a container name is a DNS-1123 label.
    own.push(...checkDnsLabel(`${where} name`, c.name));
    // ValidateSecurityContext: "cannot set allowPrivilegeEscalation to false and privileged to true".
    if (c.securityContext?.privileged === true && c.securityContext?.allowPrivilegeEscalation === false) {
      own.push(`${where} securityContext sets privileged: true with allowPrivilegeEscalation: false, which the API server refuses; drop one of them`);
    }
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe']) own.push(...checkProbe(`${where} ${probe}`, c[probe]));
    for (const e of c.env ?? []) own.push(...checkEnvName(`${where} env`, e.name));
    for (const p of c.ports ?? []) {
      own.push(...checkPort(`${where} containerPort`, p.containerPort));
      if (p.hostPort !== undefined) own.push(...checkPort(`${where} hostPort`, p.hostPort));
      const hostPort = p.hostPort ?? (pod.hostNetwork ? p.containerPort : undefined);
      if (!hostPort) continue;
      const key = `${hostPort}/${p.protocol ?? 'TCP'}`;
      const owner = hostPorts.get(key);
      if (owner !== undefined) own.push(`host port ${key} is bound twice in one pod (containers "${owner}" and "${c.name}"); give one of them another port`);
      hostPorts.set(key, c.name);
    }
    for (const m of c.volumeMounts ?? []) {
      own.push(...checkSubPath(`${where} mount ${m.name} subPath`, m.subPath));
      own.push(...checkMountPropagation(`${where} mount ${m.name} mountPropagation`, m.mountPropagation));
    }
    for (const [kind, values] of [['requests', c.resources?.requests], ['limits', c.resources?.limits]] as const) {
      for (const [resource, quantity] of Object.entries(values ?? {})) {
        // A JSON number is a valid quantity too (the API decodes it as one).
        if (typeof quantity === 'number' && Number.isFinite(quantity) && quantity >= 0) continue;
        own.push(...checkQuantity(`${where} resources.${kind}.${resource}`, quantity));
      }
    }
    for (const hook of ['preStop', 'postStart']) {
      const exec = c.lifecycle?.[hook]?.exec;
      if (exec && (!Array.isArray(exec.command) || exec.command.length === 0)) own.push(`${where} lifecycle.${hook} has an empty command; give the command to run`);
    }
    problems.push(...own);
  }
  return problems;
}

/** Problems of a rendered DaemonSet: its int32 fields and its pod template. */
export function checkRenderedDaemonSet(ds: Json): string[] {
  const spec = ds?.spec ?? {};
  // ValidateDaemonSetSpec: "selector does not match template labels".
  const templateLabels = spec.template?.metadata?.labels ?? {};
  const unmatched = Object.entries(spec.selector?.matchLabels ?? {}).filter(([k, v]) => templateLabels[k] !== v);
  return [
    ...unmatched.map(([k, v]) => `selector ${k}=${v} does not match the pod template's labels (the API server refuses the DaemonSet); keep the template label ${k}: ${JSON.stringify(v)}`),
    ...checkInt32('minReadySeconds', spec.minReadySeconds),
    ...checkInt32('revisionHistoryLimit', spec.revisionHistoryLimit),
    ...checkRenderedDaemonSetFields(spec),
    ...checkRenderedPodFields(spec.template?.spec),
    ...checkRenderedPodSpec(spec.template?.spec),
  ].map((p) => `DaemonSet "${ds?.metadata?.name}": ${p}`);
}

export { INT32_MAX };
