/**
 * What `size` prints: a table per agent (distribution, recommendation, thin groups), the `resources` and
 * `resourceProfiles` props to paste (TypeScript), and the reasons in words a reviewer can check. Every value from
 * the input is escaped for its sink (terminal, markdown); the TypeScript holds only checked names and label values.
 */
import { plural, table } from './format';
import { MAX_PRINTED_PER_KIND } from './limits';
import { AgentSizing, GroupBy, GroupReport, ProfilePlan, Sizing } from './size/groups';
import { ABSENT } from './size/ingest';
import { VPA } from './size/recommender';
import { INSTANCE_CPU_LABEL, INSTANCE_MEMORY_LABEL, INSTANCE_TYPE_LABEL, NODE_POOL_LABEL } from '../scheduling/types';
import { markdownCode, markdownEscape, terminalSafe } from '../util/output-escape';

const MIB = 1024 * 1024;

export function cpuText(cores: number): string {
  if (!Number.isFinite(cores)) return '∞';
  return cores >= 10 ? `${cores.toFixed(1)}` : `${Math.round(cores * 1000)}m`;
}

export function memoryText(bytes: number): string {
  if (!Number.isFinite(bytes)) return '∞';
  return bytes >= 10 * 1024 * MIB ? `${(bytes / 1024 / MIB).toFixed(1)}Gi` : `${Math.round(bytes / MIB)}Mi`;
}

function groupName(value: string): string {
  return value === ABSENT ? '(no label)' : value;
}

/** The ResourceProfileNodes call that selects a profile's nodes. */
export function nodesCall(p: ProfilePlan): string {
  const s = p.spec;
  const q = (v: string) => `'${v}'`; // label values and keys are checked (profileProblems): no quote can occur
  if (s.values !== undefined) {
    const list = `[${s.values.map(q).join(', ')}]`;
    if (s.key === NODE_POOL_LABEL) return `ResourceProfileNodes.nodePools(${list})`;
    if (s.key === INSTANCE_TYPE_LABEL) return `ResourceProfileNodes.instanceTypes(${list})`;
    return `ResourceProfileNodes.labelValues(${q(s.key)}, ${list})`;
  }
  const bounds = [s.min !== undefined ? `min: ${s.min}` : '', s.max !== undefined ? `max: ${s.max}` : ''].filter((b) => b !== '').join(', ');
  if (s.key === INSTANCE_CPU_LABEL) return `ResourceProfileNodes.instanceCpu({ ${bounds} })`;
  if (s.key === INSTANCE_MEMORY_LABEL) return `ResourceProfileNodes.instanceMemoryMib({ ${bounds} })`;
  return `ResourceProfileNodes.labelRange(${q(s.key)}, { ${bounds} })`;
}

export function resourcesLiteral(s: Sizing): string {
  return `{ cpuRequest: '${s.cpuMilli}m', memoryRequest: '${s.memoryMiB}Mi', memoryLimit: '${s.memoryLimitMiB}Mi' }`;
}

/** The props to paste into the agent's construct (its `resources` and `resourceProfiles`). */
export function propsText(a: AgentSizing): string {
  let out = `// ${a.agent}: node-agents size (VPA recommender: p90 + ${VPA.safetyMarginFraction * 100}%, limit: p95 upper bound and OOM bump)\n`;
  out += `resources: ${resourcesLiteral(a.defaultSizing)},\n`;
  if (a.profiles.length === 0) return `${out}resourceProfiles: [],\n`;
  out += 'resourceProfiles: [\n';
  for (const p of a.profiles) out += `  { name: '${p.spec.name}', nodes: ${nodesCall(p)}, resources: ${resourcesLiteral(p.sizing)} },\n`;
  return `${out}],\n`;
}

function dist(d: { p50: number; p90: number; p99: number; max: number }, f: (n: number) => string): string {
  return `${f(d.p50)}/${f(d.p90)}/${f(d.p99)}/${f(d.max)}`;
}

const HEADERS = ['GROUP', 'PODS', 'DAYS', 'CPU P50/P90/P99/MAX', 'MEMORY P50/P90/P99/MAX', 'OOM', 'REQUESTS CPU/MEMORY', 'LIMIT', 'PROFILE'];

function row(g: GroupReport): string[] {
  return [groupName(g.value), String(g.pods), g.historyDays.toFixed(1), dist(g.cpu, cpuText), dist(g.memory, memoryText), String(g.ooms),
    `${g.sizing.cpuMilli}m/${g.sizing.memoryMiB}Mi`, `${g.sizing.memoryLimitMiB}Mi`, g.thin === undefined ? g.profile : `${g.profile} (thin)`];
}

/** Why a group is sized as it is, in words a reviewer can check against the numbers above. */
export function explainGroup(g: GroupReport): string {
  const r = g.recommendation;
  let why = `CPU request ${g.sizing.cpuMilli}m = p90 of ${g.cpuSamples} CPU samples (${cpuText(r.target.cpu / (1 + VPA.safetyMarginFraction))}, decaying with a 24h half-life) + 15%; `
    + `memory request ${g.sizing.memoryMiB}Mi = p90 of ${g.memoryPeaks} daily peaks from ${g.pods} pods + 15%`;
  if (r.target.memory <= VPA.podMinMemoryBytes + 1) why += ` (raised to VPA's pod minimum of ${VPA.podMinMemoryBytes / MIB}Mi)`;
  why += `; limit ${g.sizing.memoryLimitMiB}Mi = p95 + 15% times the confidence factor (1 + 1/${g.historyDays.toFixed(1)} days)`;
  if (g.ooms > 0) why += `, at least ${plural(g.ooms, 'OOM kill')}' need: max(${memoryText(g.oomMemory)} × ${VPA.oomBumpUpRatio}, ${memoryText(g.oomMemory)} + 100Mi)`;
  return why;
}

export interface SizeReport {
  readonly agents: readonly AgentSizing[];
  readonly groupBy: GroupBy;
  readonly samplesRead: number;
  readonly unjoined: number;
  readonly stepSeconds: number;
  /** per agent, what the change does (--tree and --nodes) */
  readonly impact?: ReadonlyMap<string, string[]>;
  /** the agents' overhead per NodePool and instance type before → after (--nodepools) */
  readonly nodePools?: readonly string[];
}

function agentText(a: AgentSizing, by: GroupBy, impact: readonly string[] | undefined): string {
  const t = terminalSafe;
  let out = `\nagent ${t(a.agent)}: grouped by ${t(by.key)}; ${a.supported} of ${plural(a.groups.length, 'group')} with enough data, ${plural(a.profiles.length, 'profile')}\n`;
  const shown = a.groups.slice(0, MAX_PRINTED_PER_KIND);
  out += table(HEADERS, shown.map((g) => row(g).map(t)), '  ');
  if (a.groups.length > shown.length) out += `  … ${a.groups.length - shown.length} more groups (all in --json)\n`;
  for (const g of shown.filter((x) => x.thin !== undefined)) out += `  too thin: ${t(groupName(g.value))}: ${t(g.thin!)}; sized by ${g.profile}\n`;
  for (const p of a.profiles.filter((x) => x.raisedBy.length > 0)) {
    out += `  profile ${p.spec.name} raised to the sizing of thin group ${t(p.raisedBy.join(', '))} (never below what a group's own data asks)\n`;
  }
  if (a.defaultFrom === 'largest-group') out += '  default (nodes no profile selects): too little data of its own: sized as the largest group\n';
  for (const line of impact ?? []) out += `  ${t(line)}\n`;
  out += `\n${propsText(a).split('\n').map((l) => (l === '' ? '' : `  ${l}`)).join('\n')}`;
  return out;
}

export function sizeText(r: SizeReport): string {
  let out = `node-agents size: ${plural(r.agents.length, 'agent')}, ${r.samplesRead} samples read (step ${r.stepSeconds}s)`;
  out += r.unjoined > 0 ? `, ${plural(r.unjoined, 'series', 'series')} not joined to a DaemonSet pod on a known node\n` : '\n';
  for (const a of r.agents) out += agentText(a, r.groupBy, r.impact?.get(a.agent));
  if (r.nodePools !== undefined) out += `\nNODE POOLS (--nodepools), every agent of the tree, before → after:\n${r.nodePools.map((l) => `  ${terminalSafe(l)}\n`).join('')}`;
  return out;
}

export function sizeMarkdown(r: SizeReport): string {
  const md = markdownEscape;
  let out = `### node-agents size\n\n${plural(r.agents.length, 'agent')}, grouped by ${markdownCode(r.groupBy.key)}, ${r.samplesRead} samples read. `
    + `Method: VPA's recommender (p90 of a decaying histogram + ${VPA.safetyMarginFraction * 100}%; limit: p95 upper bound, and after an OOM kill max(used × ${VPA.oomBumpUpRatio}, used + 100Mi)).\n`;
  for (const a of r.agents) {
    out += `\n#### ${markdownCode(a.agent)}: ${plural(a.profiles.length, 'profile')} (${a.supported} of ${plural(a.groups.length, 'group')} with enough data)\n\n`;
    for (const line of r.impact?.get(a.agent) ?? []) out += `- ${md(line)}\n`;
    out += '\n| group | pods | days | cpu p50/p90/p99/max | memory p50/p90/p99/max | OOM | requests | limit | profile |\n|---|---:|---:|---|---|---:|---|---|---|\n';
    for (const g of a.groups.slice(0, MAX_PRINTED_PER_KIND)) out += `| ${row(g).map(md).join(' | ')} |\n`;
    out += '\n<details>\n<summary>Why</summary>\n\n';
    for (const g of a.groups.slice(0, MAX_PRINTED_PER_KIND)) {
      out += `- ${markdownCode(groupName(g.value))}: ${md(g.thin !== undefined ? `too thin (${g.thin}), sized by ${g.profile}` : explainGroup(g))}\n`;
    }
    out += '\n</details>\n\n```ts\n' + propsText(a) + '```\n';
  }
  if (r.nodePools !== undefined) out += `\n#### Node pools (\`--nodepools\`), before → after\n\n${r.nodePools.map((l) => `- ${markdownEscape(l)}\n`).join('')}`;
  return out;
}
