import { parseQuantity } from '../../util/quantity';
import { isObject } from '../coverage/manifests';

/**
 * Resource amounts by resource name, in the scheduler's units: `cpu` in millicores (rounded up, as
 * resource.Quantity.MilliValue does), every other resource in its base unit (bytes, devices, pods).
 * A plain object: small and shared-shaped at millions of pods.
 */
export type ResourceList = Record<string, number>;

/** The resources kube-scheduler's NodeResourcesFit compares (pkg/scheduler/framework/types.go, Resource). */
export function scheduledResource(name: string): boolean {
  if (name === 'cpu' || name === 'memory' || name === 'ephemeral-storage') return true;
  if (name.startsWith('hugepages-')) return true;
  // v1helper.IsExtendedResourceName: outside the kubernetes.io/ namespace, not a quota `requests.` name, has a domain
  return name.includes('/') && !name.startsWith('requests.') && !/(^|\.)kubernetes\.io\//.test(name);
}

/** One quantity in the scheduler's unit for `name`; NaN when the text is not a quantity. */
export function quantityIn(name: string, text: unknown): number {
  const value = typeof text === 'number' ? text : typeof text === 'string' ? parseQuantity(text) : Number.NaN;
  if (Number.isNaN(value)) return Number.NaN;
  return name === 'cpu' ? Math.ceil(value * 1000 - 1e-9) : Math.ceil(value - 1e-9);
}

/** A resource map as written (requests, limits, overhead, allocatable) read into a ResourceList; bad quantities are skipped. */
export function resourceList(value: unknown): ResourceList {
  const out: ResourceList = {};
  if (!isObject(value)) return out;
  for (const [name, text] of Object.entries(value)) {
    const amount = quantityIn(name, text);
    if (!Number.isNaN(amount)) out[name] = amount;
  }
  return out;
}

// ResourceLists are plain objects this module builds: for...in reads the same keys as Object.entries, in the
// same order, without an array per pod and resource (millions of pods at 130k nodes).
function add(into: ResourceList, from: ResourceList): void {
  for (const name in from) into[name] = (into[name] ?? 0) + from[name];
}

function max(into: ResourceList, from: ResourceList): void {
  for (const name in from) if (from[name] > (into[name] ?? 0)) into[name] = from[name];
}

/**
 * A container's requests as the API server defaults them (pkg/apis/core/v1/defaults.go, SetDefaults_Pod):
 * a resource with a limit and no request requests its limit. Pods read from a cluster are defaulted
 * already; pod templates of manifests are not.
 */
function containerRequests(container: unknown): ResourceList {
  if (!isObject(container) || !isObject(container.resources)) return {};
  const requests = resourceList(container.resources.requests);
  const limits = resourceList(container.resources.limits);
  for (const name in limits) if (requests[name] === undefined) requests[name] = limits[name];
  return requests;
}

function containerLimits(container: unknown): ResourceList {
  return isObject(container) && isObject(container.resources) ? resourceList(container.resources.limits) : {};
}

/**
 * The resources pod-level `spec.resources` may set (component-helpers resource/helpers.go,
 * IsSupportedPodLevelResource): cpu, memory and hugepages-*. Others at pod level are ignored.
 */
export function podLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');
}

/** spec.resources' requests and limits of the supported resources (IsPodLevelResourcesSet when either is non-empty). */
function podLevelOf(spec: Record<string, any>): { requests: ResourceList; limits: ResourceList } {
  const keep = (list: ResourceList) => {
    const out: ResourceList = {};
    for (const name in list) if (podLevelResource(name)) out[name] = list[name];
    return out;
  };
  const resources = isObject(spec.resources) ? spec.resources : {};
  return { requests: keep(resourceList(resources.requests)), limits: keep(resourceList(resources.limits)) };
}

/** Whether a pod spec sets pod-level resources the scheduler reads (IsPodLevelResourcesSet). */
export function hasPodLevelResources(spec: unknown): boolean {
  if (!isObject(spec)) return false;
  const { requests, limits } = podLevelOf(spec);
  return Object.keys(requests).length + Object.keys(limits).length > 0;
}

/**
 * What the scheduler counts a pod as requesting: kube-scheduler's NodeResourcesFit computePodResourceRequest
 * (pkg/scheduler/framework/plugins/noderesources/fit.go) through PodRequests (k8s.io/component-helpers/resource,
 * formerly pkg/api/v1/resource/helpers.go):
 * - the sum of the app containers;
 * - restartable init containers (sidecars, restartPolicy Always) add to that sum, and each one and every later
 *   init container runs beside the sidecars started before it;
 * - the result is the larger, per resource, of that sum and the largest init container step;
 * - with the PodLevelResources feature (`podLevel`: beta and on by default since Kubernetes 1.34, alpha and off
 *   in 1.32 and 1.33), spec.resources.requests replace that result for cpu, memory and hugepages-*
 *   (applyPodLevelResources); a pod-level limit without a request requests the limit, as the API server defaults
 *   a pod (pkg/apis/core/v1/defaults.go defaultPodRequests; for hugepages-* the containers' requests when they
 *   set one); templates of manifests are not defaulted, pods read from a cluster are;
 * - spec.overhead (RuntimeClass pod overhead) is added on top.
 */
export function podRequests(spec: unknown, podLevel = true): ResourceList {
  if (!isObject(spec)) return {};
  const total = aggregate(spec, containerRequests);
  if (podLevel) {
    const { requests, limits } = podLevelOf(spec);
    for (const name in limits) {
      const fromContainers = name.startsWith('hugepages-') && total[name] !== undefined;
      if (requests[name] === undefined && !fromContainers) total[name] = limits[name];
    }
    for (const name in requests) total[name] = requests[name];
  }
  add(total, resourceList(spec.overhead));
  return total;
}

/**
 * The same over limits (PodLimits; for the cost table: a container without a limit adds nothing): pod-level
 * limits replace the containers' for the supported resources, and the overhead is added to non-zero limits only.
 */
export function podLimits(spec: unknown, podLevel = true): ResourceList {
  if (!isObject(spec)) return {};
  const total = aggregate(spec, containerLimits);
  if (podLevel) {
    const { limits } = podLevelOf(spec);
    for (const name in limits) total[name] = limits[name];
  }
  const overhead = resourceList(spec.overhead);
  for (const name in overhead) if ((total[name] ?? 0) !== 0) total[name] += overhead[name];
  return total;
}

/** The containers' aggregate (AggregateContainerRequests / AggregateContainerLimits), without pod level or overhead. */
function aggregate(spec: Record<string, any>, of: (container: unknown) => ResourceList): ResourceList {
  const total: ResourceList = {};
  for (const container of Array.isArray(spec.containers) ? spec.containers : []) add(total, of(container));
  const sidecars: ResourceList = {};
  const initMax: ResourceList = {};
  for (const container of Array.isArray(spec.initContainers) ? spec.initContainers : []) {
    const own = of(container);
    if (isObject(container) && container.restartPolicy === 'Always') {
      add(total, own);
      add(sidecars, own);
      max(initMax, sidecars);
    } else {
      const step = { ...own };
      add(step, sidecars);
      max(initMax, step);
    }
  }
  max(total, initMax);
  return total;
}

/** `512Mi`, `250m`, `2`: an amount in the unit a human reads for that resource. */
export function formatAmount(name: string, amount: number): string {
  if (name === 'cpu') return amount % 1000 === 0 ? String(amount / 1000) : `${amount}m`;
  if (name === 'memory' || name === 'ephemeral-storage' || name.startsWith('hugepages-')) {
    for (const [unit, size] of [['Gi', 2 ** 30], ['Mi', 2 ** 20], ['Ki', 2 ** 10]] as const) {
      if (Math.abs(amount) >= size) {
        const value = amount / size;
        return `${Number.isInteger(value) ? value : value.toFixed(1)}${unit}`;
      }
    }
  }
  return String(amount);
}
