/**
 * What the LimitRanger admission plugin does to a pod's requests: a container without a request for a resource gets
 * the namespace's LimitRange default. A DaemonSet's pod template does not show it, so what a node must hold for an
 * agent can be more than its template says (aws/karpenter-provider-aws#3199). Pure.
 */
import { isObject, ManifestSet } from '../coverage/manifests';

/** The defaults of one namespace's LimitRanges for containers (type Container), as written. */
export interface ContainerDefaults {
  /** `defaultRequest` (else `default`, which the API server copies into it) per resource */
  readonly requests: Readonly<Record<string, string>>;
  /** `default` (else `max`, which the API server copies into it) per resource */
  readonly limits: Readonly<Record<string, string>>;
  /** the LimitRanges that set them, `namespace/name` */
  readonly from: readonly string[];
}

/**
 * The container defaults of the LimitRanges of a tree, by namespace. The API server defaults a Container item
 * (pkg/apis/core/v1/defaults.go SetDefaults_LimitRangeItem): `default` from `max`, then `defaultRequest` from
 * `default`. With several LimitRanges in a namespace the plugin applies each in turn and sets only what is still
 * unset (plugin/pkg/admission/limitranger/admission.go, mergeContainerResources): the first in name order wins here
 * (the plugin's order is its cache's).
 */
export function limitRangeDefaults(tree: ManifestSet): Map<string, ContainerDefaults> {
  const byNamespace = new Map<string, { requests: Record<string, string>; limits: Record<string, string>; from: string[] }>();
  const ranges = tree.documents.map((d) => d.object).filter((o) => o.kind === 'LimitRange')
    .sort((a, b) => (`${a.metadata?.name}` < `${b.metadata?.name}` ? -1 : 1));
  for (const range of ranges) {
    const namespace = range.metadata?.namespace ?? 'default';
    const spec = isObject(range.spec) ? range.spec : {};
    for (const item of Array.isArray(spec.limits) ? spec.limits : []) {
      if (!isObject(item) || item.type !== 'Container') continue;
      const strings = (value: unknown): Record<string, string> => (isObject(value)
        ? Object.fromEntries(Object.entries(value).filter(([, v]) => typeof v === 'string' || typeof v === 'number').map(([k, v]) => [k, String(v)])) : {});
      const limits = { ...strings(item.max), ...strings(item.default) };
      const requests = { ...limits, ...strings(item.defaultRequest) };
      if (Object.keys(requests).length === 0 && Object.keys(limits).length === 0) continue;
      let entry = byNamespace.get(namespace);
      if (entry === undefined) byNamespace.set(namespace, entry = { requests: {}, limits: {}, from: [] });
      for (const [k, v] of Object.entries(requests)) if (entry.requests[k] === undefined) entry.requests[k] = v;
      for (const [k, v] of Object.entries(limits)) if (entry.limits[k] === undefined) entry.limits[k] = v;
      entry.from.push(`${namespace}/${range.metadata?.name}`);
    }
  }
  return byNamespace;
}

/**
 * The pod spec as admitted: each container and init container without a request for a resource requests its own
 * limit (the API server's pod defaulting, pkg/apis/core/v1/defaults.go, before admission), else the LimitRange's
 * default request; without a limit it gets the default limit. Returns the spec unchanged without defaults.
 */
export function admittedPodSpec(spec: unknown, defaults: ContainerDefaults | undefined): unknown {
  if (defaults === undefined || !isObject(spec)) return spec;
  const admit = (container: unknown): unknown => {
    if (!isObject(container)) return container;
    const resources = isObject(container.resources) ? container.resources : {};
    const limits: Record<string, unknown> = { ...(isObject(resources.limits) ? resources.limits : {}) };
    const requests: Record<string, unknown> = { ...(isObject(resources.requests) ? resources.requests : {}) };
    for (const [k, v] of Object.entries(limits)) if (requests[k] === undefined) requests[k] = v;
    for (const [k, v] of Object.entries(defaults.limits)) if (limits[k] === undefined) limits[k] = v;
    for (const [k, v] of Object.entries(defaults.requests)) if (requests[k] === undefined) requests[k] = v;
    return { ...container, resources: { ...resources, limits, requests } };
  };
  return {
    ...spec,
    containers: Array.isArray(spec.containers) ? spec.containers.map(admit) : spec.containers,
    initContainers: Array.isArray(spec.initContainers) ? spec.initContainers.map(admit) : spec.initContainers,
  };
}
