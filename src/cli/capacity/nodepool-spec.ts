/**
 * Karpenter NodePools as `plan --nodepools` reads them (karpenter.sh/v1, and v1beta1's kubelet block): the template's
 * labels, taints, startup taints and requirements, and the kubelet settings of the NodeClass it names (karpenter.k8s.aws
 * EC2NodeClass `spec.kubelet`). Checked as the API server would: an invalid field is an error naming the file and
 * field. Pure.
 */
import { KubeletSettings } from './instance-types';
import { NodeSelectorRequirementJson, TaintJson } from '../../scheduling/types';
import { isLabelKey } from '../../validation/values';
import { isObject, ManifestDocument } from '../coverage/manifests';

export interface NodePoolSpec {
  readonly name: string;
  readonly source: string;
  /** the template's labels, and `karpenter.sh/nodepool` */
  readonly labels: Readonly<Record<string, string>>;
  readonly taints: readonly TaintJson[];
  /** taints the node starts with and a component removes once it is ready (a CNI, a GPU operator) */
  readonly startupTaints: readonly TaintJson[];
  readonly requirements: readonly NodeSelectorRequirementJson[];
  readonly kubelet: KubeletSettings;
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt'];
const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** The NodePools of the documents, each with its NodeClass's kubelet settings; none is an error. */
export function parseNodePools(documents: readonly ManifestDocument[]): NodePoolSpec[] {
  const nodeClasses = new Map<string, KubeletSettings>();
  for (const { source, object } of documents) {
    if (object.kind !== 'EC2NodeClass' || typeof object.metadata?.name !== 'string') continue;
    const spec = isObject(object.spec) ? object.spec : {};
    nodeClasses.set(object.metadata.name, kubeletOf(spec.kubelet, `${source}: EC2NodeClass ${object.metadata.name}: spec.kubelet`));
  }
  const pools: NodePoolSpec[] = [];
  const seen = new Set<string>();
  for (const { source, object } of documents) {
    if (object.kind !== 'NodePool') continue;
    const name = object.metadata?.name;
    if (typeof name !== 'string' || name.length > 253 || !DNS_SUBDOMAIN.test(name)) {
      throw new Error(`${source}: a NodePool's metadata.name is not a DNS subdomain; the API server refuses it`);
    }
    if (seen.has(name)) throw new Error(`${source}: NodePool ${name} is defined twice; pass each once`);
    seen.add(name);
    pools.push(nodePool(object as Record<string, unknown>, name, source, nodeClasses));
  }
  if (pools.length === 0) throw new Error(`${documents[0]?.source ?? 'the --nodepools file'}: no NodePool (karpenter.sh/v1) in it; pass \`kubectl get nodepools -o yaml\` or the NodePool manifests`);
  return pools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function nodePool(object: Record<string, unknown>, name: string, source: string, nodeClasses: ReadonlyMap<string, KubeletSettings>): NodePoolSpec {
  const at = `${source}: NodePool ${name}`;
  const spec = isObject(object.spec) ? object.spec : {};
  const template = isObject(spec.template) ? spec.template : {};
  const meta = isObject(template.metadata) ? template.metadata : {};
  const tspec = isObject(template.spec) ? template.spec : {};
  const labels = labelMap(meta.labels, `${at}: spec.template.metadata.labels`);
  const classRef = isObject(tspec.nodeClassRef) ? tspec.nodeClassRef : {};
  const kubelet = tspec.kubelet !== undefined ? kubeletOf(tspec.kubelet, `${at}: spec.template.spec.kubelet`)
    : (typeof classRef.name === 'string' ? nodeClasses.get(classRef.name) : undefined) ?? {};
  return {
    name,
    source,
    labels: { ...labels, 'karpenter.sh/nodepool': name },
    taints: taints(tspec.taints, `${at}: spec.template.spec.taints`),
    startupTaints: taints(tspec.startupTaints, `${at}: spec.template.spec.startupTaints`),
    requirements: requirements(tspec.requirements, `${at}: spec.template.spec.requirements`),
    kubelet,
  };
}

function labelMap(value: unknown, at: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new Error(`${at} must be a map of label values`);
  const out: Record<string, string> = {};
  for (const [key, v] of Object.entries(value)) {
    if (!isLabelKey(key)) throw new Error(`${at}: a key is not a valid label key; the API server refuses it`);
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) throw new Error(`${at}: the value of ${key} is not a label value (a quoted string)`);
    Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function taints(value: unknown, at: string): TaintJson[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`${at} must be a list`);
  return value.map((t: unknown, i: number) => {
    if (!isObject(t) || typeof t.key !== 'string' || !isLabelKey(t.key)) throw new Error(`${at}[${i}]: needs a key that is a valid label key`);
    if (!EFFECTS.includes(t.effect)) throw new Error(`${at}[${i}].effect must be NoSchedule, PreferNoSchedule or NoExecute`);
    if (t.value !== undefined && (typeof t.value !== 'string' || !LABEL_VALUE.test(t.value) || t.value.length > 63)) {
      throw new Error(`${at}[${i}].value must be a label value (a quoted string)`);
    }
    return { key: t.key, ...(t.value !== undefined && t.value !== '' ? { value: t.value } : {}), effect: t.effect };
  });
}

function requirements(value: unknown, at: string): NodeSelectorRequirementJson[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`${at} must be a list`);
  return value.map((r: unknown, i: number) => {
    const where = `${at}[${i}]`;
    if (!isObject(r) || typeof r.key !== 'string' || !isLabelKey(r.key)) throw new Error(`${where}: needs a key that is a valid label key`);
    if (!OPERATORS.includes(r.operator)) throw new Error(`${where}.operator must be one of ${OPERATORS.join(', ')}`);
    const values = r.values ?? [];
    if (!Array.isArray(values) || values.some((v: unknown) => typeof v !== 'string')) throw new Error(`${where}.values must be a list of strings`);
    if ((r.operator === 'Gt' || r.operator === 'Lt') && (values.length !== 1 || !/^-?\d{1,18}$/.test(values[0]))) {
      throw new Error(`${where}: ${r.operator} takes exactly one integer value`);
    }
    if ((r.operator === 'In' || r.operator === 'NotIn') && values.length === 0) throw new Error(`${where}: ${r.operator} needs at least one value`);
    return values.length > 0 ? { key: r.key, operator: r.operator, values: [...values] } : { key: r.key, operator: r.operator };
  });
}

function kubeletOf(value: unknown, at: string): KubeletSettings {
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw new Error(`${at} must be an object`);
  const quantities = (field: string): Record<string, string> | undefined => {
    const map = value[field];
    if (map === undefined) return undefined;
    if (!isObject(map) || Object.values(map).some((v) => typeof v !== 'string')) throw new Error(`${at}.${field} must be a map of strings`);
    return map as Record<string, string>;
  };
  const maxPods = value.maxPods;
  if (maxPods !== undefined && (typeof maxPods !== 'number' || !Number.isInteger(maxPods) || maxPods < 0 || maxPods > 2 ** 31 - 1)) {
    throw new Error(`${at}.maxPods must be a whole number`);
  }
  return { maxPods, kubeReserved: quantities('kubeReserved'), systemReserved: quantities('systemReserved'), evictionHard: quantities('evictionHard') };
}
