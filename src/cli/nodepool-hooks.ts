/**
 * `plan --nodepools FILE`: the agents on the nodes Karpenter NodePools would launch, before those nodes exist. Reads
 * the NodePools (and their EC2NodeClasses) and an instance type catalog with the same bounded, strict reader as the
 * manifests; the logic is in src/cli/capacity/nodepools.ts.
 */
import { Parsed, stringValue, UsageError } from './args';
import { CapacityFinding } from './capacity/check';
import { CATALOG_KIND, MAX_INSTANCE_TYPES, parseCatalog } from './capacity/instance-types';
import { parseNodePools } from './capacity/nodepool-spec';
import {
  DEFAULT_KARPENTER_VERSION, DEFAULT_MAX_OVERHEAD_PERCENT, KARPENTER_VERSIONS, KarpenterVersion, NodePoolFinding, nodePoolReport,
  PoolInstanceType, PoolReport,
} from './capacity/nodepools';
import { formatAmount } from './capacity/resources';
import { CoverageReport } from './coverage/analysis';
import { loadManifests } from './coverage/load';
import { ManifestSet } from './coverage/manifests';
import { plural, table } from './format';
import { MAX_PRINTED_PER_KIND } from './limits';
import { NodeJson } from '../scheduling/types';
import { markdownCode, markdownEscape, terminalSafe } from '../util/output-escape';

export const NODEPOOLS_FLAG_HELP = `  --nodepools FILE    Karpenter NodePools (karpenter.sh/v1, with their EC2NodeClasses for the kubelet
                      settings), a file or directory: per pool and instance type it may launch, the
                      after-tree's agents on such a node (node affinity, tolerations of the pool's
                      taints, the matching resource profile; startup taints delay, not exclude)
                      and their requests. node-pool findings: agents-do-not-fit (a type the agents
                      alone overfill), overhead-share (over --max-overhead of the smallest type),
                      limit-range (requests a LimitRange fills in, which Karpenter does not count
                      before the DaemonSet has a pod), exists-toleration (a warning), existing-nodes
                      (an agent that never fits on the pool's nodes today: Karpenter does not
                      replace them for it)
  --instance-types FILE
                      the instance type catalog (kind InstanceTypeCatalog: name, vcpu, memoryMiB,
                      maxPods, arch, labels, allocatable), a file of its own: kept beside the
                      NodePools, a GitOps sync of them fails on it (read from the --nodepools
                      input too, for now, with a warning: catalog-in-nodepools).
                      Allocatable: the catalog's, else an inventory node's of that type, else
                      Karpenter's AWS formula (kube-reserved, system-reserved, eviction, VM overhead)
  --max-overhead PERCENT
                      the most of the smallest type's cpu or memory the agents may request
                      (default ${DEFAULT_MAX_OVERHEAD_PERCENT})
  --max-instance-types N
                      the most instance types the catalog may list (default ${MAX_INSTANCE_TYPES});
                      past it, exit 2
  --karpenter-version ${KARPENTER_VERSIONS.join('|')}
                      the Karpenter whose daemonset overhead is modelled (default ${DEFAULT_KARPENTER_VERSION}):
                      up to 1.13 a pool counts every DaemonSet its template allows (each resource
                      profile's, summed); 1.14 and later count per instance type
                      (kubernetes-sigs/karpenter#2975)
`;

export const NODEPOOL_OPTIONS = {
  'nodepools': { type: 'string' },
  'instance-types': { type: 'string' },
  'max-overhead': { type: 'string' },
  'max-instance-types': { type: 'string' },
  'karpenter-version': { type: 'string' },
} as const;

export interface NodePoolResult {
  /** the Karpenter whose daemonset overhead is modelled */
  readonly karpenterVersion: KarpenterVersion;
  readonly pools: readonly PoolReport[];
  readonly findings: readonly NodePoolFinding[];
}

export interface NodePoolFlags {
  readonly nodepools: string;
  readonly instanceTypes?: string;
  readonly maxOverhead: number;
  readonly maxInstanceTypes: number;
  readonly karpenterVersion: KarpenterVersion;
}

/** The flags, checked before anything is read: undefined without --nodepools. */
export function nodePoolFlags(parsed: Parsed, command: string): NodePoolFlags | undefined {
  const nodepools = stringValue(parsed, 'nodepools');
  const instanceTypes = stringValue(parsed, 'instance-types');
  const overhead = stringValue(parsed, 'max-overhead');
  if (nodepools === undefined) {
    const alone = ['instance-types', 'max-overhead', 'max-instance-types', 'karpenter-version'].find((name) => stringValue(parsed, name) !== undefined);
    if (alone !== undefined) throw new UsageError(`--${alone} goes with --nodepools FILE (the Karpenter NodePools to check)`, command);
    return undefined;
  }
  if (nodepools === '') throw new UsageError('--nodepools needs a file or directory of Karpenter NodePools', command);
  let maxOverhead = DEFAULT_MAX_OVERHEAD_PERCENT;
  if (overhead !== undefined) {
    if (!/^\d{1,3}(\.\d+)?%?$/.test(overhead) || Number.parseFloat(overhead) <= 0 || Number.parseFloat(overhead) > 100) {
      throw new UsageError(`--max-overhead "${overhead}" is not a percentage from above 0 to 100, such as 25 or 25%`, command);
    }
    maxOverhead = Number.parseFloat(overhead);
  }
  return {
    nodepools, instanceTypes, maxOverhead, maxInstanceTypes: maxInstanceTypes(parsed, command), karpenterVersion: karpenterVersion(parsed, command),
  };
}

/** `--max-instance-types N`: a whole number from 1; MAX_INSTANCE_TYPES without it. */
function maxInstanceTypes(parsed: Parsed, command: string): number {
  const text = stringValue(parsed, 'max-instance-types');
  if (text === undefined) return MAX_INSTANCE_TYPES;
  if (!/^\d{1,9}$/.test(text) || Number(text) < 1) {
    throw new UsageError(`--max-instance-types "${text}" is not a whole number of instance types from 1, such as 20000`, command);
  }
  return Number(text);
}

/** `--karpenter-version 1.13|1.14` (a patch or `v` accepted: v1.13.2); DEFAULT_KARPENTER_VERSION without it. */
function karpenterVersion(parsed: Parsed, command: string): KarpenterVersion {
  const text = stringValue(parsed, 'karpenter-version');
  if (text === undefined) return DEFAULT_KARPENTER_VERSION;
  const m = /^v?(\d{1,4})\.(\d{1,4})(\.\d{1,6})?$/.exec(text);
  if (m === null || m[1] !== '1') {
    throw new UsageError(`--karpenter-version "${text}" is not a Karpenter v1 version such as ${KARPENTER_VERSIONS.join(' or ')}`, command);
  }
  return Number(m[2]) <= 13 ? '1.13' : '1.14';
}

/** Reads the pools and the catalog and runs the check on `tree` (plan's after-tree). */
export function nodePoolCheck(flags: NodePoolFlags, cwd: string, input: {
  tree: ManifestSet;
  before?: ManifestSet;
  inventory: readonly NodeJson[];
  coverage: CoverageReport;
  capacity?: readonly CapacityFinding[];
  podLevel: boolean;
}): NodePoolResult {
  const pools = loadManifests([flags.nodepools], cwd).documents;
  const catalogDocs = flags.instanceTypes === undefined ? [] : loadManifests([flags.instanceTypes], cwd).documents;
  const documents = [...pools, ...catalogDocs].map((d) => ({ source: d.source, object: d.object as Record<string, unknown> }));
  const catalog = parseCatalog(documents, flags.maxInstanceTypes);
  const report = nodePoolReport({
    pools: parseNodePools(pools), catalog, ...input, maxOverheadPercent: flags.maxOverhead, karpenterVersion: flags.karpenterVersion,
  });
  const misplaced = [...new Set(pools.filter((d) => d.object.kind === CATALOG_KIND).map((d) => d.source))];
  const result = { karpenterVersion: flags.karpenterVersion, ...report };
  return misplaced.length === 0 ? result : { ...result, findings: [catalogAmongManifests(misplaced), ...report.findings] };
}

/**
 * The old form: the catalog, a document only this tool reads (no metadata, no resource of any cluster), beside
 * the NodePools in the --nodepools file. Still read; a warning, since a GitOps tool syncing that file with the
 * NodePools fails on it.
 */
function catalogAmongManifests(sources: readonly string[]): NodePoolFinding {
  return {
    kind: 'node-pool',
    severity: 'warning',
    cause: 'catalog-in-nodepools',
    pool: '',
    daemonSets: [],
    instanceTypes: [],
    nodes: [],
    message: `${sources.join(', ')}: the ${CATALOG_KIND} is read from the --nodepools input, among cluster manifests: kept there, a GitOps `
      + `tool syncing the NodePools fails on it (${CATALOG_KIND} is no resource of the cluster); still read, for now`,
    fix: `move the ${CATALOG_KIND} document to a file of its own, outside the synced manifests, and pass it with --instance-types FILE`,
  };
}

function perType(t: PoolInstanceType): string[] {
  const alloc = `${formatAmount('cpu', t.allocatable.cpu ?? 0)} / ${formatAmount('memory', t.allocatable.memory ?? 0)}`;
  const counted = t.karpenterRequests.cpu === t.requests.cpu && t.karpenterRequests.memory === t.requests.memory ? 'same'
    : `${formatAmount('cpu', t.karpenterRequests.cpu)} / ${formatAmount('memory', t.karpenterRequests.memory)}`;
  return [t.name, `${alloc} (${t.source})`, String(t.agents.length), `${formatAmount('cpu', t.requests.cpu)} (${t.cpuShare}%)`,
    `${formatAmount('memory', t.requests.memory)} (${t.memoryShare}%)`, counted, t.shortfall.length > 0 ? 'NO' : 'yes'];
}

const HEADERS = ['INSTANCE TYPE', 'ALLOCATABLE CPU / MEMORY (SOURCE)', 'AGENTS', 'CPU REQUESTS (SHARE)', 'MEMORY REQUESTS (SHARE)', 'KARPENTER COUNTS', 'FITS'];

/** The agents of one instance type with their profile and requests (--cost). */
function agentLine(t: PoolInstanceType): string {
  return t.agents.map((a) => `${a.daemonSet}${a.profile === 'default' ? '' : ` (profile ${a.profile})`} ${formatAmount('cpu', a.requests.cpu ?? 0)}/`
    + `${formatAmount('memory', a.requests.memory ?? 0)}`).join(', ');
}

/** Which Karpenter the overhead is Karpenter's of. */
function modelled(version: KarpenterVersion): string {
  return version === '1.13'
    ? 'daemonset overhead as Karpenter up to 1.13 counts it: per pool, every DaemonSet its template allows (--karpenter-version)'
    : 'daemonset overhead as Karpenter 1.14 and later counts it: per instance type (--karpenter-version)';
}

export function nodePoolText(result: NodePoolResult, cost: boolean): string {
  const t = terminalSafe;
  const errors = result.findings.filter((f) => f.severity === 'error').length;
  let out = `\nNODE POOLS (--nodepools): ${plural(result.pools.length, 'pool')}, ${plural(errors, 'error')}, ${plural(result.findings.length - errors, 'warning')}\n`;
  out += `${modelled(result.karpenterVersion)}\n`;
  for (const pool of result.pools) {
    out += `\npool ${t(pool.name)}: ${plural(pool.instanceTypes.length, 'instance type')} it may launch, ${plural(pool.existingNodes, 'node')} today\n`;
    const shown = pool.instanceTypes.slice(0, MAX_PRINTED_PER_KIND);
    if (shown.length > 0) out += table(HEADERS, shown.map((x) => perType(x).map(t)), '  ');
    if (pool.instanceTypes.length > shown.length) out += `  … ${pool.instanceTypes.length - shown.length} more instance types (all in --json)\n`;
    if (cost) for (const x of shown) out += `  ${t(x.name)}: ${t(agentLine(x))}\n`;
    for (const x of shown.filter((y) => y.startupWaits.length > 0)) out += `  ${t(x.name)}: waiting for a startup taint to go: ${t(x.startupWaits.join(', '))}\n`;
  }
  for (const f of result.findings) {
    out += `${f.severity === 'error' ? '!' : '~'} [node-pool ${t(f.cause)}] ${t(f.message)}\n    fix: ${t(f.fix)}\n`;
  }
  return out;
}

export function nodePoolMarkdown(result: NodePoolResult, cost: boolean): string {
  const md = markdownEscape;
  let out = `\n#### Node pools (\`--nodepools\`)\n\n${md(modelled(result.karpenterVersion))}\n`;
  for (const f of result.findings) out += `\n- ${f.severity === 'error' ? '❌' : '⚠️'} **node-pool** (${md(f.cause)}): ${md(f.message)}  \n  Fix: ${md(f.fix)}\n`;
  for (const pool of result.pools) {
    out += `\n${markdownCode(pool.name)}: ${plural(pool.instanceTypes.length, 'instance type')} it may launch, ${plural(pool.existingNodes, 'node')} today\n\n`;
    out += '| instance type | allocatable cpu / memory (source) | agents | cpu requests (share) | memory requests (share) | Karpenter counts | fits |\n|---|---|---:|---:|---:|---|---|\n';
    for (const x of pool.instanceTypes.slice(0, MAX_PRINTED_PER_KIND)) {
      out += `| ${perType(x).map(md).join(' | ')} |\n`;
      if (cost) out += `| ${md(`↳ ${agentLine(x)}`)} | | | | | | |\n`;
    }
  }
  return out;
}
