/**
 * Pure checks on agent settings. Each returns problems as sentences naming the prop, the bad value
 * and the fix; the construct prefixes its path. No cdk8s here.
 */
import { parseQuantity } from '../util/quantity';

export const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const IANA_SVC_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** The value as a message shows it: its type, then the value ("string \"80\"", "number 1.5", "null"). */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return `array ${abbreviate(safeJson(value))}`;
  if (typeof value === 'string') return `string ${abbreviate(JSON.stringify(value))}`;
  if (typeof value === 'object') return `object ${abbreviate(safeJson(value))}`;
  return `${typeof value} ${String(value)}`;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

function abbreviate(text: string): string {
  return text.length > 80 ? `${text.substring(0, 77)}...` : text;
}

/** A string-typed prop: the type problem, or undefined when it is a string. */
function notString(prop: string, value: unknown, example: string): string | undefined {
  return typeof value === 'string' ? undefined : `${prop} must be a string such as ${JSON.stringify(example)}, got ${describeValue(value)}`;
}

/** A DNS-1123 label of at most `max` characters. */
export function checkDnsLabel(prop: string, value: unknown, max = 63): string[] {
  const typeProblem = notString(prop, value, 'my-agent');
  if (typeProblem) return [typeProblem];
  const text = value as string;
  if (!DNS1123_LABEL.test(text) || text.length > max) {
    return [`${prop} "${text}" must be a DNS-1123 label of at most ${max} characters (lower-case letters, digits and "-", starting and ending with a letter or digit)`];
  }
  return [];
}

/** A DNS-1123 subdomain (object names such as a PriorityClass): dot-separated labels, at most 253 characters. */
export function checkDnsSubdomain(prop: string, value: unknown): string[] {
  const typeProblem = notString(prop, value, 'my-agent-critical');
  if (typeProblem) return [typeProblem];
  const text = value as string;
  if (!DNS1123_SUBDOMAIN.test(text) || text.length > 253) {
    return [`${prop} "${abbreviate(text)}" must be a DNS-1123 subdomain of at most 253 characters (lower-case labels of letters, digits and "-", joined by ".")`];
  }
  return [];
}

/**
 * Whether a label key is a qualified name (apimachinery pkg/util/validation IsQualifiedName): an optional
 * DNS-1123 subdomain prefix of at most 253 characters and "/", then a name of at most 63.
 */
export function isLabelKey(key: string): boolean {
  const parts = key.split('/');
  const name = parts[parts.length - 1];
  const prefix = parts.length === 2 ? parts[0] : undefined;
  return parts.length <= 2 && LABEL_NAME.test(name) && name.length <= 63
    && (prefix === undefined || (DNS1123_SUBDOMAIN.test(prefix) && prefix.length <= 253));
}

/**
 * Whether a label value is one the API server takes (apimachinery pkg/util/validation IsValidLabelValue): empty,
 * or at most 63 letters, digits, "-", "_" and ".", starting and ending with a letter or digit.
 */
export function isLabelValue(value: string): boolean {
  return value.length <= 63 && LABEL_VALUE.test(value);
}

/** A label key such as `app.kubernetes.io/name`. */
export function checkLabelKey(prop: string, key: unknown): string[] {
  const typeProblem = notString(prop, key, 'app.kubernetes.io/name');
  if (typeProblem) return [typeProblem];
  return isLabelKey(key as string) ? [] : [`${prop}: "${key}" is not a valid label key (optional DNS prefix and "/", then at most 63 letters, digits, "-", "_" or ".")`];
}

/** A label value: at most 63 characters, letters, digits, "-", "_" and ".", alphanumeric at both ends. */
export function checkLabelValue(prop: string, value: unknown): string[] {
  const typeProblem = notString(prop, value, 'v1');
  if (typeProblem) return [typeProblem];
  const text = value as string;
  return isLabelValue(text)
    ? []
    : [`${prop}: "${text}" is not a valid label value (at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit)`];
}

export function checkLabels(prop: string, labels: unknown): string[] {
  if (labels === undefined) return [];
  const typeProblem = notStringMap(prop, labels);
  if (typeProblem) return [typeProblem];
  return Object.entries(labels as { [key: string]: unknown })
    .flatMap(([k, v]) => [...(isLabelKey(k) ? checkRenderableKey(prop, k) : checkLabelKey(prop, k)), ...checkLabelValue(`${prop}["${k}"]`, v)]);
}

/**
 * A key of a map the library renders through cdk8s (labels, annotations, a node selector, ConfigMap
 * data). cdk8s' renderer (`sanitizeValue` in cdk8s lib/_util.ts) takes a map for a class instance
 * when its `constructor` member is not the Object constructor, so a map with the key "constructor"
 * fails every render with "can't render non-simple object"; and it copies members by assignment,
 * so a "__proto__" key (a valid ConfigMap key; no label or annotation key starts with "_") is
 * dropped without a word. The other Object.prototype names ("toString", "valueOf") render as they are.
 */
export function checkRenderableKey(prop: string, key: string): string[] {
  if (key === 'constructor') {
    return [`${prop}: the key "constructor" cannot be rendered (cdk8s reads a map's "constructor" member to tell a plain map from an object, and refuses this map); `
      + 'use another key, e.g. "example.com/constructor"'];
  }
  if (key === '__proto__') return [`${prop}: the key "__proto__" would be dropped when cdk8s renders the map (it sets the object's prototype instead); use another key`];
  return [];
}

function notStringMap(prop: string, value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? undefined
    : `${prop} must be an object of strings such as {"team":"platform"}, got ${describeValue(value)}`;
}

/**
 * A toleration value: the API server checks it with the label value syntax (at most 63 letters,
 * digits, "-", "_" or ".", alphanumeric at both ends; empty allowed).
 */
export function checkTolerationValue(prop: string, value: unknown): string[] {
  return checkLabelValue(prop, value);
}

/** Parsed image reference: the tag and digest it pins, if any. */
export interface ImageReference {
  readonly tag?: string;
  readonly digest?: string;
}

export function parseImage(image: string): ImageReference {
  const [withoutDigest, digest] = image.split('@', 2);
  const lastSegment = withoutDigest.substring(withoutDigest.lastIndexOf('/') + 1);
  const colon = lastSegment.lastIndexOf(':');
  return { tag: colon >= 0 ? lastSegment.substring(colon + 1) : undefined, digest };
}

export function checkImage(prop: string, value: unknown): string[] {
  const typeProblem = notString(prop, value, 'registry/name:1.2.3');
  if (typeProblem) return [typeProblem];
  const image = value as string;
  if (!image || /\s/.test(image)) return [`${prop} "${image}" is not an image reference; give one such as "registry/name:1.2.3"`];
  const { tag, digest } = parseImage(image);
  if (digest !== undefined && !/^[a-z0-9]+:[a-f0-9]{32,}$/.test(digest)) {
    return [`${prop} "${image}" has a malformed digest; write it as "name@sha256:<64 hex digits>"`];
  }
  if (tag === undefined && digest === undefined) {
    return [`${prop} "${image}" has no tag or digest, so every node may run a different version; pin one, e.g. "${image}:1.2.3" or "${image}@sha256:..."`];
  }
  if (tag === 'latest' && digest === undefined) {
    return [`${prop} "${image}" uses ":latest", so every node may run a different version; pin an explicit version tag or a digest`];
  }
  if (tag !== undefined && !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(tag)) {
    return [`${prop} "${image}" has an invalid tag "${tag}"`];
  }
  return [];
}

/** The `app.kubernetes.io/version` label value for an image: its tag, or a short digest. */
export function versionLabel(image: string): string {
  const { tag, digest } = parseImage(image);
  const raw = tag ?? (digest ? digest.replace(':', '-').substring(0, 19) : 'unknown');
  const cleaned = raw.replace(/[^A-Za-z0-9_.-]/g, '-').substring(0, 63).replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
  return cleaned || 'unknown';
}

export function checkQuantity(prop: string, value: unknown): string[] {
  if (value === undefined) return [];
  const typeProblem = notString(prop, value, '100m');
  if (typeProblem) return [typeProblem];
  const text = value as string;
  // The API server parses the quantity as written: surrounding spaces are an error there, so they are here.
  if (text !== text.trim()) return [`${prop} ${JSON.stringify(text)} has leading or trailing spaces; write it without them, e.g. "${text.trim() || '100m'}"`];
  const parsed = parseQuantity(text);
  if (Number.isNaN(parsed)) return [`${prop} "${text}" is not a Kubernetes quantity; write it like "100m", "0.5", "128Mi" or "1Gi"`];
  if (parsed < 0) return [`${prop} "${text}" is negative; resources must be 0 or more`];
  return [];
}

/**
 * The least memory a container's request or limit may be: dockerd's `linuxMinMemory` (moby
 * daemon/daemon_unix.go, 6 MiB "to account for overhead during startup"), which it enforces for
 * both a limit and a reservation. containerd's CRI enforces none, and a container whose cgroup
 * allows less does not get through runc's init ("container init was OOM-killed (memory limit too
 * low?)"): the pod restarts for ever. A request that small is a unit slip as surely (`64m` is 0.064
 * bytes).
 */
export const MIN_MEMORY_BYTES = 6 * 2 ** 20;

/** A memory request or limit: a quantity (checkQuantity) of at least MIN_MEMORY_BYTES, with the milli slip explained. */
export function checkMemoryQuantity(prop: string, value: unknown): string[] {
  const problems = checkQuantity(prop, value);
  if (problems.length > 0 || value === undefined) return problems;
  const text = value as string;
  const bytes = parseQuantity(text);
  if (bytes >= MIN_MEMORY_BYTES || bytes === 0) return [];
  const milli = /^[0-9.]+m$/.exec(text);
  const slip = milli ? `: for memory "m" means milli, a thousandth of a byte, so "${text}" is ${Number((bytes).toPrecision(6))} bytes; write "${text.slice(0, -1)}Mi" for mebibytes` : ` (${bytes} bytes)`;
  return [`${prop} "${text}" is below 6Mi${slip}. A container limited to less is OOM-killed while it starts (runc: "container init was OOM-killed"), `
    + 'and a request that small is a slip of the unit; give at least "6Mi", e.g. "64Mi"'];
}

export function checkRequestNotAboveLimit(prop: string, request: unknown, limit: unknown): string[] {
  if (limit === undefined || typeof request !== 'string' || typeof limit !== 'string') return [];
  const r = parseQuantity(request);
  const l = parseQuantity(limit);
  if (Number.isNaN(r) || Number.isNaN(l)) return [];
  return r > l ? [`${prop}: the request ${request} is above the limit ${limit}; the API server rejects that. Raise the limit or lower the request`] : [];
}

/** The largest int32, the type of most integer fields of the Kubernetes API (replicas, seconds, ports, ids). */
export const INT32_MAX = 2 ** 31 - 1;
/**
 * The largest int64 a JavaScript number holds exactly (2^53 - 1): the int64 fields
 * (terminationGracePeriodSeconds, tolerationSeconds) go up to 2^63 - 1, but a number above 2^53 is
 * no longer the integer it was written as.
 */
export const INT64_SAFE_MAX = Number.MAX_SAFE_INTEGER;

/** A whole number from `min` to `max` (both included), with the fix in the message. */
export function checkInteger(prop: string, value: unknown, min: number, max: number): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'number') return [`${prop} must be a number, got ${describeValue(value)}`];
  if (!Number.isInteger(value) || value < min || value > max) {
    return [`${prop} ${value} must be a whole number from ${min} to ${max}`];
  }
  return [];
}

/** An int32 API field (e.g. minReadySeconds, revisionHistoryLimit, probe thresholds) of at least `min`. */
export function checkInt32(prop: string, value: unknown, min = 0): string[] {
  return checkInteger(prop, value, min, INT32_MAX);
}

/**
 * An int64 API field (terminationGracePeriodSeconds, tolerationSeconds) of at least `min`. runAsUser
 * and runAsGroup are int64 fields too, but the API server accepts only 0 to 2^31 - 1 there
 * (IsValidUserID, IsValidGroupID): use checkInt32 for them.
 */
export function checkInt64(prop: string, value: unknown, min = 0): string[] {
  return checkInteger(prop, value, min, INT64_SAFE_MAX);
}

/** A non-negative whole number (an int32 API field unless a larger `max` is given). */
export function checkWholeNumber(prop: string, value: unknown, min = 0, max = INT32_MAX): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'number') return [`${prop} must be a number, got ${describeValue(value)}`];
  if (!Number.isInteger(value) || value < min) return [`${prop} must be a whole number of at least ${min}, got ${value}`];
  if (value > max) return [`${prop} must be a whole number of at most ${max}, got ${value}`];
  return [];
}

/** A TCP/UDP port number: a whole number from 1 to 65535. */
export function isPort(port: unknown): boolean {
  return typeof port === 'number' && Number.isInteger(port) && port >= 1 && port <= 65535;
}

export function checkPort(prop: string, port: unknown): string[] {
  if (port === undefined) return [];
  if (typeof port !== 'number') return [`${prop} must be a number, got ${describeValue(port)}`];
  return isPort(port) ? [] : [`${prop} ${port} is outside 1-65535; give a whole port number from 1 to 65535`];
}

export function checkPortName(prop: string, name: unknown): string[] {
  const typeProblem = notString(prop, name, 'metrics');
  if (typeProblem) return [typeProblem];
  const text = name as string;
  return IANA_SVC_NAME.test(text) && text.length <= 15 && /[a-z]/.test(text)
    ? []
    : [`${prop} "${text}" must be an IANA service name: at most 15 lower-case letters, digits and "-", with at least one letter`];
}

export function checkAbsolutePath(prop: string, path: unknown): string[] {
  const typeProblem = notString(prop, path, '/var/log');
  if (typeProblem) return [typeProblem];
  const text = path as string;
  return text.startsWith('/') && !text.split('/').includes('..') ? [] : [`${prop} "${text}" must be an absolute path without ".."`];
}

/**
 * A volume mount's subPath: relative, and no ".." element (the API server's
 * validateLocalDescendingPath, which also treats "\\" as a separator).
 */
export function checkSubPath(prop: string, path: unknown): string[] {
  if (path === undefined) return [];
  const typeProblem = notString(prop, path, 'conf.d');
  if (typeProblem) return [typeProblem];
  const text = path as string;
  if (text.startsWith('/') || text.startsWith('\\')) return [`${prop} "${text}" must be a path relative to the volume; drop the leading "${text[0]}"`];
  if (text.split(/[\\/]/).includes('..')) return [`${prop} "${text}" must not contain ".."; name a file or directory inside the volume`];
  return [];
}

export function checkCapability(prop: string, capability: unknown): string[] {
  const typeProblem = notString(prop, capability, 'NET_ADMIN');
  if (typeProblem) return [typeProblem];
  const text = capability as string;
  return /^[A-Z][A-Z_]*$/.test(text) && !text.startsWith('CAP_')
    ? []
    : [`${prop}: "${text}" is not a capability name; write it upper case without the CAP_ prefix, e.g. "NET_ADMIN"`];
}

/**
 * A ConfigMap or Secret key (the API server's IsConfigMapKey): letters, digits, "-", "_" and ".",
 * at most 253 characters, and not ".", ".." or starting with ".." (the kubelet writes keys as file
 * names next to its own "..data" link).
 */
export function checkConfigKey(prop: string, key: unknown): string[] {
  const typeProblem = notString(prop, key, 'agent.conf');
  if (typeProblem) return [typeProblem];
  const text = key as string;
  if (!/^[-._a-zA-Z0-9]+$/.test(text) || text.length > 253) {
    return [`${prop}: "${abbreviate(text)}" is not a valid ConfigMap key (letters, digits, "-", "_" and "." only)`];
  }
  if (text === '.' || text.startsWith('..')) {
    return [`${prop}: "${text}" is not a valid ConfigMap key ("." and names starting with ".." are reserved); use a file name such as "agent.conf"`];
  }
  // "constructor" renders: ConfigMaps with such keys get their data as a patch of the rendered object
  // (render/shared-objects.ts ConfigMaps), after cdk8s' renderer has run; "__proto__" is still dropped.
  return text === 'constructor' ? [] : checkRenderableKey(prop, text);
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/**
 * An environment variable name as every supported API server accepts it (apimachinery's
 * IsEnvVarName): letters, digits, "_", "-" and ".", not starting with a digit, and not ".", ".."
 * or starting with "..". Kubernetes 1.30 added the RelaxedEnvironmentVariableValidation gate
 * (any printable ASCII but "="), on by default only from 1.32: the library targets 1.28 on, so it
 * keeps the strict rule every version accepts.
 */
export function checkEnvName(prop: string, name: unknown): string[] {
  const typeProblem = notString(prop, name, 'HOST_IP');
  if (typeProblem) return [typeProblem];
  const text = name as string;
  if (!ENV_NAME.test(text) || text === '.' || text.startsWith('..')) {
    return [`${prop}: ${JSON.stringify(abbreviate(text))} is not a valid environment variable name; use letters, digits, "_", "-" and ".", `
      + 'not starting with a digit or "..", e.g. "HOST_IP"'];
  }
  return [];
}

const MOUNT_PROPAGATIONS = ['None', 'HostToContainer', 'Bidirectional'];

/** A mountPropagation: None, HostToContainer or Bidirectional. */
export function checkMountPropagation(prop: string, value: unknown): string[] {
  if (value === undefined) return [];
  return typeof value === 'string' && MOUNT_PROPAGATIONS.includes(value)
    ? []
    : [`${prop} must be one of MountPropagation.NONE, HOST_TO_CONTAINER or BIDIRECTIONAL ("None", "HostToContainer", "Bidirectional"), got ${describeValue(value)}`];
}

const PROMETHEUS_DURATION = /^(\d+y)?(\d+w)?(\d+d)?(\d+h)?(\d+m)?(\d+s)?(\d+ms)?$/;

/** A Prometheus duration such as "30s" or "1m30s" (units y, w, d, h, m, s, ms, largest first). */
export function checkPrometheusDuration(prop: string, value: unknown): string[] {
  if (value === undefined) return [];
  const typeProblem = notString(prop, value, '30s');
  if (typeProblem) return [typeProblem];
  const text = value as string;
  return text !== '' && PROMETHEUS_DURATION.test(text) && /[1-9]/.test(text)
    ? []
    : [`${prop} "${text}" is not a Prometheus duration; write e.g. "30s" or "1m"`];
}

/**
 * A fluent-bit size such as "5M" or "512K" (flb_utils_size_to_bytes: a whole number, then an
 * optional K, M or G, optionally followed by B, in either case).
 */
export function checkFluentBitSize(prop: string, value: unknown): string[] {
  if (value === undefined) return [];
  const typeProblem = notString(prop, value, '5M');
  if (typeProblem) return [typeProblem];
  const text = value as string;
  return /^\d{1,15}([kKmMgG][bB]?)?$/.test(text)
    ? []
    : [`${prop} "${text}" is not a fluent-bit size; write a whole number with an optional K, M or G, e.g. "5M"`];
}

/** A number of seconds for fluent-bit (may be fractional), above 0 and at most `max`. */
export function checkSeconds(prop: string, value: unknown, max: number, allowFraction = true): string[] {
  if (value === undefined) return [];
  if (typeof value !== 'number') return [`${prop} must be a number of seconds, got ${describeValue(value)}`];
  if (!Number.isFinite(value) || value <= 0 || value > max || (!allowFraction && !Number.isInteger(value))) {
    return [`${prop} must be ${allowFraction ? 'a number' : 'a whole number'} of seconds above 0 and at most ${max}, got ${value}`];
  }
  return [];
}

/** A boolean prop. */
export function checkBoolean(prop: string, value: unknown): string[] {
  return value === undefined || typeof value === 'boolean' ? [] : [`${prop} must be true or false, got ${describeValue(value)}`];
}

/** Sorted copy of a string map, so rendered output does not depend on insertion order. */
export function sortedRecord<T>(record: { [key: string]: T } | undefined): { [key: string]: T } {
  const result: { [key: string]: T } = {};
  for (const key of Object.keys(record ?? {}).sort()) result[key] = record![key];
  return result;
}

/** Tolerations as the API server checks them: key a label key, value a label value, seconds an int64. */
export function checkTolerations(prop: string, tolerations: readonly unknown[] | undefined): string[] {
  return (tolerations ?? []).flatMap((t, i) => {
    if (typeof t !== 'object' || t === null) return [];
    const { key, value, tolerationSeconds } = t as { key?: unknown; value?: unknown; tolerationSeconds?: unknown };
    return [
      ...(key !== undefined && key !== '' ? checkLabelKey(`${prop}[${i}].key`, key) : []),
      ...(value !== undefined ? checkTolerationValue(`${prop}[${i}].value`, value) : []),
      ...checkInteger(`${prop}[${i}].tolerationSeconds`, tolerationSeconds, -INT64_SAFE_MAX, INT64_SAFE_MAX),
    ];
  });
}

/** Container resources: quantities as the API parses them, requests not above limits. */
export function checkResources(prop: string, resources: unknown): string[] {
  if (typeof resources !== 'object' || resources === null) return [];
  const r = resources as { cpuRequest?: unknown; cpuLimit?: unknown; memoryRequest?: unknown; memoryLimit?: unknown };
  const quantities = [
    ...checkQuantity(`${prop}.cpuRequest`, r.cpuRequest),
    ...checkQuantity(`${prop}.cpuLimit`, r.cpuLimit),
    ...checkMemoryQuantity(`${prop}.memoryRequest`, r.memoryRequest),
    ...checkMemoryQuantity(`${prop}.memoryLimit`, r.memoryLimit),
  ];
  if (quantities.length > 0) return quantities;
  return [
    ...checkRequestNotAboveLimit(`${prop} cpu`, r.cpuRequest, r.cpuLimit),
    ...checkRequestNotAboveLimit(`${prop} memory`, r.memoryRequest, r.memoryLimit),
  ];
}

/**
 * A name a Service gets from the agent's name: Service names are DNS-1035 labels (starting with a
 * letter), stricter than the DNS-1123 labels other objects accept.
 */
export function checkServiceName(prop: string, value: unknown, serviceName: string): string[] {
  return /^[a-z]([-a-z0-9]*[a-z0-9])?$/.test(serviceName) && serviceName.length <= 63
    ? []
    : [`${prop} ${describeValue(value)} gives the Service the name "${serviceName}", which is not a DNS-1035 label (at most 63 lower-case letters, digits and "-", starting with a letter); start the name with a letter`];
}
