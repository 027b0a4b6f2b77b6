/**
 * Instance types a Karpenter NodePool may launch, with the labels Karpenter puts on their nodes and their allocatable:
 * given (`allocatable` in the catalog the user supplies, e.g. read from a node of that type), else Karpenter's AWS
 * provider's formula (aws/karpenter-provider-aws pkg/providers/instancetype/types.go), which sizes nodes before they
 * exist. Pure.
 *
 * The formula, per instance type (vCPUs, memory in MiB, ENI-limited pods from the catalog) and the NodeClass's kubelet
 * settings (`maxPods`, `kubeReserved`, `systemReserved`, `evictionHard`):
 * - capacity: cpu = vCPUs; memory = MiB (arm64: minus 64 MiB of CMA) minus the VM overhead, ceil(7.5%) (Karpenter's
 *   `--vm-memory-overhead-percent` default, 0.075); pods = `maxPods`, else the ENI-limited count, else 110;
 * - kube-reserved (kubeReservedResources): cpu 6% of the first core, 1% of the second, 0.5% of cores 3-4, 0.25% of
 *   the rest (millicores, each range truncated); memory 11 MiB × ENI-limited pods + 255 MiB (the AL2/AL2023/Bottlerocket
 *   families' ENI-limited memory overhead); each replaced by `kubeReserved` when given;
 * - system-reserved: `systemReserved` (none by default);
 * - eviction threshold (evictionThreshold): memory 100Mi, or `evictionHard["memory.available"]` (a quantity, or a
 *   percentage of the memory capacity);
 * - allocatable = capacity - kube-reserved - system-reserved - eviction threshold. Ephemeral storage is not modelled.
 */
import { ResourceList, resourceList } from './resources';
import { parseQuantity } from '../../util/quantity';
import { isLabelKey } from '../../validation/values';
import { isObject } from '../coverage/manifests';

/** The `kind` of the catalog document (apiVersion node-agents.cdk8s.io/v1alpha1). */
export const CATALOG_KIND = 'InstanceTypeCatalog';

/** One instance type of the catalog. */
export interface InstanceTypeInfo {
  readonly name: string;
  readonly vcpu: number;
  readonly memoryMiB: number;
  /** the ENI-limited pod count (amazon-eks-ami's eni-max-pods.txt: ENIs × (IPv4 per ENI - 1) + 2) */
  readonly maxPods?: number;
  readonly arch: string;
  /** more labels its nodes carry (e.g. `karpenter.k8s.aws/instance-gpu-count`) */
  readonly labels: Readonly<Record<string, string>>;
  /** measured allocatable, when given: wins over the formula */
  readonly allocatable?: ResourceList;
}

/** The kubelet settings of a NodeClass (EC2NodeClass `spec.kubelet`; NodePool `spec.template.spec.kubelet` before v1). */
export interface KubeletSettings {
  readonly maxPods?: number;
  readonly kubeReserved?: Readonly<Record<string, string>>;
  readonly systemReserved?: Readonly<Record<string, string>>;
  readonly evictionHard?: Readonly<Record<string, string>>;
}

/** Allocatable and where it comes from. */
export interface Allocatable {
  readonly resources: ResourceList;
  /** `catalog` (given), `node <name>` (an inventory node of the type), `formula` (Karpenter's AWS provider's) */
  readonly source: string;
}

const MiB = 2 ** 20;

/** Karpenter's AWS provider's allocatable for an instance type (see the module comment). */
export function formulaAllocatable(type: InstanceTypeInfo, kubelet: KubeletSettings = {}): ResourceList {
  const cpu = type.vcpu * 1000;
  const sizeMiB = type.memoryMiB - (type.arch === 'arm64' ? 64 : 0);
  const memory = (sizeMiB - Math.ceil(sizeMiB * 0.075)) * MiB;
  const eniPods = type.maxPods ?? 110;
  const pods = kubelet.maxPods ?? eniPods;
  let reservedCpu = 0;
  for (const [start, end, share] of [[0, 1000, 0.06], [1000, 2000, 0.01], [2000, 4000, 0.005], [4000, 2 ** 31, 0.0025]]) {
    if (cpu >= start) reservedCpu += Math.trunc((Math.min(cpu, end) - start) * share);
  }
  const kubeReserved: ResourceList = { cpu: reservedCpu, memory: (11 * eniPods + 255) * MiB, ...resourceList(kubelet.kubeReserved ?? {}) };
  const systemReserved = resourceList(kubelet.systemReserved ?? {});
  const evictionText = kubelet.evictionHard?.['memory.available'];
  const eviction = evictionText === undefined ? 100 * MiB
    : evictionText.endsWith('%') ? Math.ceil((memory / 100) * Number.parseFloat(evictionText)) : parseQuantity(evictionText);
  return {
    cpu: cpu - (kubeReserved.cpu ?? 0) - (systemReserved.cpu ?? 0),
    memory: memory - (kubeReserved.memory ?? 0) - (systemReserved.memory ?? 0) - (Number.isFinite(eviction) ? eviction : 0),
    pods,
  };
}

/**
 * The labels Karpenter's AWS provider gives a node of this type (computeRequirements): the instance type, arch,
 * os, `karpenter.k8s.aws/instance-cpu`, `-memory`, and from the name `-category`, `-generation`, `-family`,
 * `-size`; then the catalog's own labels.
 */
export function instanceTypeLabels(type: InstanceTypeInfo): Record<string, string> {
  const labels: Record<string, string> = {
    'node.kubernetes.io/instance-type': type.name,
    'kubernetes.io/arch': type.arch,
    'kubernetes.io/os': 'linux',
    'karpenter.k8s.aws/instance-cpu': String(type.vcpu),
    'karpenter.k8s.aws/instance-memory': String(type.memoryMiB),
  };
  const family = /(^[a-z]+)(-[0-9]+tb)?([0-9]+).*\./.exec(type.name);
  if (family !== null) {
    labels['karpenter.k8s.aws/instance-category'] = family[1];
    labels['karpenter.k8s.aws/instance-generation'] = family[3];
  }
  const parts = type.name.split('.');
  if (parts.length === 2) {
    labels['karpenter.k8s.aws/instance-family'] = parts[0];
    labels['karpenter.k8s.aws/instance-size'] = parts[1];
  }
  return { ...labels, ...type.labels };
}

/**
 * The most instance types a catalog may list, all documents together, unless `--max-instance-types` raises it: EC2
 * offers about a thousand. Past it, exit 2 naming the limit and the flag; the check runs before any entry is read.
 */
export const MAX_INSTANCE_TYPES = 5_000;

/**
 * Reads the catalog documents (kind InstanceTypeCatalog) of a file; errors name the file and field. At most
 * `maxTypes` entries in all (MAX_INSTANCE_TYPES).
 */
export function parseCatalog(objects: readonly { source: string; object: Record<string, unknown> }[],
  maxTypes = MAX_INSTANCE_TYPES): InstanceTypeInfo[] {
  const types: InstanceTypeInfo[] = [];
  const seen = new Set<string>();
  let count = 0;
  for (const { source, object } of objects) {
    if (object.kind !== CATALOG_KIND) continue;
    const list = object.instanceTypes;
    if (!Array.isArray(list)) throw new Error(`${source}: ${CATALOG_KIND}.instanceTypes must be a list`);
    count += list.length;
    if (count > maxTypes) {
      throw new Error(`${source}: the instance type catalog lists more than ${maxTypes} instance types, the most read `
        + '(--max-instance-types N raises the limit)');
    }
    list.forEach((item: unknown, i: number) => {
      const at = `${source}: ${CATALOG_KIND}.instanceTypes[${i}]`;
      const type = catalogEntry(item, at);
      if (seen.has(type.name)) throw new Error(`${at}: instance type ${type.name} is listed twice; keep one`);
      seen.add(type.name);
      types.push(type);
    });
  }
  return types;
}

function catalogEntry(item: unknown, at: string): InstanceTypeInfo {
  if (!isObject(item)) throw new Error(`${at} must be an object with name, vcpu and memoryMiB`);
  const name = item.name;
  if (typeof name !== 'string' || name.length > 63 || !/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(name)) {
    throw new Error(`${at}.name must be an instance type name such as "m7i.large" (a label value in lower case)`);
  }
  const whole = (field: string, value: unknown, min: number, max: number, optional = false): number | undefined => {
    if (value === undefined && optional) return undefined;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      throw new Error(`${at}.${field} must be a whole number from ${min} to ${max}`);
    }
    return value;
  };
  const labels = isObject(item.labels) ? item.labels : {};
  for (const [key, value] of Object.entries(labels)) {
    if (!isLabelKey(key) || typeof value !== 'string' || value.length > 63 || !/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/.test(value)) {
      throw new Error(`${at}.labels: every key must be a label key and every value a label value (a string)`);
    }
  }
  if (item.arch !== undefined && item.arch !== 'amd64' && item.arch !== 'arm64') throw new Error(`${at}.arch must be amd64 or arm64`);
  let allocatable: ResourceList | undefined;
  if (item.allocatable !== undefined) {
    if (!isObject(item.allocatable)) throw new Error(`${at}.allocatable must be a map of quantities (cpu, memory, pods)`);
    allocatable = resourceList(item.allocatable);
    if (Object.keys(allocatable).length !== Object.keys(item.allocatable).length) throw new Error(`${at}.allocatable: every value must be a quantity such as "15890m" or "27Gi"`);
  }
  return {
    name,
    vcpu: whole('vcpu', item.vcpu, 1, 4096)!,
    memoryMiB: whole('memoryMiB', item.memoryMiB, 1, 2 ** 31)!,
    maxPods: whole('maxPods', item.maxPods, 1, 100_000, true),
    arch: (item.arch as string | undefined) ?? 'amd64',
    labels: labels as Record<string, string>,
    allocatable,
  };
}
