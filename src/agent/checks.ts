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

/** A DNS-1123 label of at most `max` characters. */
export function checkDnsLabel(prop: string, value: string, max = 63): string[] {
  if (!DNS1123_LABEL.test(value) || value.length > max) {
    return [`${prop} "${value}" must be a DNS-1123 label of at most ${max} characters (lower-case letters, digits and "-", starting and ending with a letter or digit)`];
  }
  return [];
}

/** A label key such as `app.kubernetes.io/name`. */
export function checkLabelKey(prop: string, key: string): string[] {
  const parts = key.split('/');
  const name = parts[parts.length - 1];
  const prefix = parts.length === 2 ? parts[0] : undefined;
  const valid = parts.length <= 2 && LABEL_NAME.test(name) && name.length <= 63
    && (prefix === undefined || (DNS1123_SUBDOMAIN.test(prefix) && prefix.length <= 253));
  return valid ? [] : [`${prop}: "${key}" is not a valid label key (optional DNS prefix and "/", then at most 63 letters, digits, "-", "_" or ".")`];
}

/** A label value: at most 63 characters, letters, digits, "-", "_" and ".", alphanumeric at both ends. */
export function checkLabelValue(prop: string, value: string): string[] {
  return LABEL_VALUE.test(value) && value.length <= 63
    ? []
    : [`${prop}: "${value}" is not a valid label value (at most 63 letters, digits, "-", "_" or ".", starting and ending with a letter or digit)`];
}

export function checkLabels(prop: string, labels: { [key: string]: string } | undefined): string[] {
  return Object.entries(labels ?? {}).flatMap(([k, v]) => [...checkLabelKey(prop, k), ...checkLabelValue(`${prop}["${k}"]`, v)]);
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

export function checkImage(prop: string, image: string): string[] {
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

export function checkQuantity(prop: string, value: string | undefined): string[] {
  if (value === undefined) return [];
  const parsed = parseQuantity(value);
  if (Number.isNaN(parsed)) return [`${prop} "${value}" is not a Kubernetes quantity; write it like "100m", "0.5", "128Mi" or "1Gi"`];
  if (parsed < 0) return [`${prop} "${value}" is negative; resources must be 0 or more`];
  return [];
}

export function checkRequestNotAboveLimit(prop: string, request: string, limit: string | undefined): string[] {
  if (limit === undefined) return [];
  const r = parseQuantity(request);
  const l = parseQuantity(limit);
  if (Number.isNaN(r) || Number.isNaN(l)) return [];
  return r > l ? [`${prop}: the request ${request} is above the limit ${limit}; the API server rejects that. Raise the limit or lower the request`] : [];
}

export function checkWholeNumber(prop: string, value: number | undefined, min = 0): string[] {
  if (value === undefined) return [];
  return Number.isInteger(value) && value >= min ? [] : [`${prop} must be a whole number of at least ${min}, got ${value}`];
}

/** A TCP/UDP port number: a whole number from 1 to 65535. */
export function isPort(port: number): boolean {
  return Number.isInteger(port) && port >= 1 && port <= 65535;
}

export function checkPort(prop: string, port: number | undefined): string[] {
  if (port === undefined) return [];
  return isPort(port) ? [] : [`${prop} ${port} is outside 1-65535`];
}

export function checkPortName(prop: string, name: string): string[] {
  return IANA_SVC_NAME.test(name) && name.length <= 15 && /[a-z]/.test(name)
    ? []
    : [`${prop} "${name}" must be an IANA service name: at most 15 lower-case letters, digits and "-", with at least one letter`];
}

export function checkAbsolutePath(prop: string, path: string): string[] {
  return path.startsWith('/') && !path.split('/').includes('..') ? [] : [`${prop} "${path}" must be an absolute path without ".."`];
}

export function checkCapability(prop: string, capability: string): string[] {
  return /^[A-Z][A-Z_]*$/.test(capability) && !capability.startsWith('CAP_')
    ? []
    : [`${prop}: "${capability}" is not a capability name; write it upper case without the CAP_ prefix, e.g. "NET_ADMIN"`];
}

export function checkConfigKey(prop: string, key: string): string[] {
  return /^[-._a-zA-Z0-9]+$/.test(key) && key.length <= 253 ? [] : [`${prop}: "${key}" is not a valid ConfigMap key (letters, digits, "-", "_" and "." only)`];
}

/** Sorted copy of a string map, so rendered output does not depend on insertion order. */
export function sortedRecord<T>(record: { [key: string]: T } | undefined): { [key: string]: T } {
  const result: { [key: string]: T } = {};
  for (const key of Object.keys(record ?? {}).sort()) result[key] = record![key];
  return result;
}
