/**
 * Size limits a manifest meets before the API server sees it. Pure: no cdk8s; the constructs call
 * it on the JSON of the objects they render.
 *
 * - A ConfigMap's `data` and `binaryData` together hold at most 1 MiB (core/validation
 *   ValidateConfigMap): a larger one is refused by the API server.
 * - Client-side apply (`kubectl apply`, and Argo CD unless ServerSideApply=true) stores the whole
 *   object as the `kubectl.kubernetes.io/last-applied-configuration` annotation, and all
 *   annotations of an object hold at most 256 KiB (TotalAnnotationSizeLimitB): a larger object
 *   fails to apply that way. Server-side apply keeps no such annotation.
 */

/** ConfigMap data and binaryData together, in bytes. */
export const CONFIG_MAP_MAX_BYTES = 1024 * 1024;
/** All annotations of one object, in bytes. */
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;
/** The annotation client-side apply writes. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/** How a too-large object for client-side apply is treated. */
export type LastAppliedPolicy = 'refuse' | 'warn';

/** The outcome of a size check: problems refuse the object, warnings only inform. */
export interface ObjectSizeReport {
  readonly problems: string[];
  readonly warnings: string[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function bytes(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function mapBytes(map: { [key: string]: unknown } | undefined): number {
  return Object.entries(map ?? {}).reduce((sum, [k, v]) => sum + bytes(k) + bytes(String(v)), 0);
}

/** ConfigMap data size: the sum of key and value bytes of data and binaryData. */
export function configMapDataBytes(manifest: Json): number {
  return mapBytes(manifest?.data) + mapBytes(manifest?.binaryData);
}

/** The bytes of annotations the object would carry after a client-side apply. */
export function clientSideApplyAnnotationBytes(manifest: Json): number {
  const annotations = { ...(manifest?.metadata?.annotations ?? {}) };
  delete annotations[LAST_APPLIED_ANNOTATION];
  return mapBytes(annotations) + bytes(LAST_APPLIED_ANNOTATION) + bytes(JSON.stringify(manifest));
}

/**
 * Size problems of one rendered object (its JSON), as sentences naming the object and the fix.
 * With `lastApplied: 'warn'` an object too large for client-side apply is a warning, not a problem.
 */
export function checkObjectSize(manifest: Json, lastApplied: LastAppliedPolicy = 'refuse'): ObjectSizeReport {
  const name = `${manifest?.kind ?? 'object'} "${manifest?.metadata?.name ?? ''}"`;
  const problems: string[] = [];
  const warnings: string[] = [];
  if (manifest?.kind === 'ConfigMap') {
    const size = configMapDataBytes(manifest);
    if (size > CONFIG_MAP_MAX_BYTES) {
      problems.push(`${name} holds ${size} bytes of data, above the API server's ConfigMap limit of ${CONFIG_MAP_MAX_BYTES} bytes (1 MiB); `
        + 'make the data smaller or split it over several ConfigMaps');
    }
  }
  const annotationBytes = clientSideApplyAnnotationBytes(manifest);
  if (annotationBytes > ANNOTATIONS_MAX_BYTES) {
    const message = `${name} is ${bytes(JSON.stringify(manifest))} bytes of JSON: applied client-side (kubectl apply, Argo CD's default) its `
      + `${LAST_APPLIED_ANNOTATION} annotation would exceed the ${ANNOTATIONS_MAX_BYTES}-byte (256 KiB) annotation limit and the apply fails; `
      + 'apply it server-side (kubectl apply --server-side, Argo CD sync option ServerSideApply=true) or make it smaller';
    (lastApplied === 'refuse' ? problems : warnings).push(message);
  }
  return { problems, warnings };
}
