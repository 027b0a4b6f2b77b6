import * as fs from 'fs';
import * as path from 'path';
import { flag, listValue, parse, Parsed, stringValue, UsageError } from './args';
import { readJsonFile } from './capacity/input';
import { fitComment } from './comment';
import { loadManifests } from './coverage/load';
import { writeJson } from './format';
import { loadInventory } from './inventory';
import type { CliIo } from './io';
import { NODEPOOL_OPTIONS, nodePoolFlags, NODEPOOLS_FLAG_HELP } from './nodepool-hooks';
import { groupByOf, groupReports, planProfiles } from './size/groups';
import { SizeIngest } from './size/ingest';
import { checkBaseUrl, fetchQuery, identityStep, MAX_POINTS_PER_SERIES, queries, QueryWindow, rangeUrl } from './size/queries';
import { inferStep, parseQueryResult, parseSavedFile, QueryName, REQUIRED_QUERIES, Series } from './size/series';
import { sizeImpact } from './size-impact';
import { poolLines } from './size-pools';
import { SizeReport, sizeMarkdown, sizeText } from './size-render';

export const SIZE_HELP = `Usage: node-agents size --prometheus URL [flags]
       node-agents size --series FILE... [flags]

Sizes each node agent's requests and memory limit from what its pods used, per group of nodes
(the way resource profiles select nodes), and prints the \`resources\` and \`resourceProfiles\`
props to paste. The method is the Vertical Pod Autoscaler recommender's, with its defaults:
p90 of a decaying histogram (24h half-life) + 15% for the requests, the p95 upper bound for the
memory limit, and after an OOM kill max(used × 1.2, used + 100Mi). A group with fewer than 3
pods or less than a day of history is too thin to size on its own, and is said so.

Usage is per container of DaemonSet pods: cAdvisor's container_memory_working_set_bytes and
container_cpu_usage_seconds_total, kube-state-metrics' kube_pod_info, kube_node_labels,
kube_pod_container_status_restarts_total and kube_pod_container_status_last_terminated_reason.
An agent is namespace/container.

Flags:
  --prometheus URL    read from this Prometheus (GET /api/v1/query_range), e.g. http://127.0.0.1:9090
  --series FILE       a saved answer instead (repeatable): a JSON object keyed by query name
                      (pods, nodes, memory, cpu, oom, restarts), each the query_range answer
  --save FILE         with --prometheus: also write the answers there, for --series
  --window DURATION   how far back to read: 30m, 24h, 7d (default 7d, at most 31d)
  --step SECONDS      the resolution (default 300; at most ${MAX_POINTS_PER_SERIES} points a series)
  --end TIME          the end of the window: Unix seconds or RFC 3339 (default now)
  --namespace NS      only the agents in this namespace (repeatable)
  --agent NS/NAME     print only this agent (repeatable)
  --group-by HOW      instance-size (karpenter.k8s.aws/instance-cpu ranges, the default), nodepool,
                      instance-type, or label=KEY (any node label's values)
  --nodes FILE        node inventory (\`kubectl get nodes -o json\`): the node labels, instead of
                      kube_node_labels (which kube-state-metrics exports only when allowed)
  --tree TREE         the manifests running now (a cdk8s dist/), with --nodes: today's requests
                      per node, and what the change would do (nodes replaced, memory reserved
                      before and after, per NodePool and instance type)

With --tree and --nodepools: the agents' overhead per NodePool and instance type before and after
the recommendation, by the check \`plan --nodepools\` runs on today's tree and on the tree the
recommendation makes (a DaemonSet per profile, as the constructs render them):
${NODEPOOLS_FLAG_HELP}
  --json              the whole report as JSON
  --markdown          a pull request comment (at most 60,000 characters)

Exit codes: 0 ok, 2 bad usage or input.
`;

const OPTIONS = {
  'prometheus': { type: 'string' },
  'series': { type: 'string', multiple: true },
  'save': { type: 'string' },
  'window': { type: 'string' },
  'step': { type: 'string' },
  'end': { type: 'string' },
  'namespace': { type: 'string', multiple: true },
  'agent': { type: 'string', multiple: true },
  'group-by': { type: 'string' },
  'nodes': { type: 'string' },
  'tree': { type: 'string' },
  ...NODEPOOL_OPTIONS,
  'json': { type: 'boolean' },
  'markdown': { type: 'boolean' },
  'help': { type: 'boolean', short: 'h' },
} as const;

/** The most --series files. */
const MAX_SERIES_FILES = 64;
const MAX_WINDOW_SECONDS = 31 * 24 * 3600;

/** `30m`, `24h`, `7d` as seconds. */
export function durationSeconds(text: string): number | undefined {
  const m = /^(\d{1,6})(m|h|d)$/.exec(text);
  if (m === null) return undefined;
  return Number(m[1]) * { m: 60, h: 3600, d: 86400 }[m[2] as 'm' | 'h' | 'd'];
}

function windowOf(parsed: Parsed): QueryWindow {
  const windowText = stringValue(parsed, 'window') ?? '7d';
  const windowSeconds = durationSeconds(windowText);
  if (windowSeconds === undefined || windowSeconds === 0 || windowSeconds > MAX_WINDOW_SECONDS) {
    throw new UsageError(`--window "${windowText}" is not a duration from 1m to 31d, such as 30m, 24h or 7d`, 'size');
  }
  const stepText = stringValue(parsed, 'step') ?? '300';
  const stepSeconds = /^\d{1,7}$/.test(stepText) ? Number(stepText) : 0;
  if (stepSeconds < 1) throw new UsageError(`--step "${stepText}" is not a whole number of seconds, 1 or more`, 'size');
  if (windowSeconds / stepSeconds > MAX_POINTS_PER_SERIES) {
    throw new UsageError(`--window ${windowText} at --step ${stepSeconds} is ${Math.ceil(windowSeconds / stepSeconds)} points a series, more than the ${MAX_POINTS_PER_SERIES} Prometheus answers; raise --step`, 'size');
  }
  const endText = stringValue(parsed, 'end');
  const end = endText === undefined ? Math.floor(Date.now() / 1000) : /^\d{1,12}(\.\d+)?$/.test(endText) ? Number(endText) : Date.parse(endText) / 1000;
  if (!Number.isFinite(end)) throw new UsageError(`--end "${endText}" is neither Unix seconds nor an RFC 3339 time`, 'size');
  return { end, windowSeconds, stepSeconds };
}

/** The phases of the join: identities, then usage, then restarts (which read the OOM times). */
const PHASES: readonly (readonly QueryName[])[] = [['pods', 'nodes'], ['memory', 'cpu', 'oom'], ['restarts']];

function feed(ingest: SizeIngest, name: QueryName, series: readonly Series[]): void {
  if (name === 'memory' && series.length > 0 && ingest.samplesRead === 0) ingest.stepSeconds = inferStep(series.slice(0, 100));
  const handlers: Record<QueryName, (s: readonly Series[]) => void> = {
    pods: (s) => ingest.podsSeries(s),
    nodes: (s) => ingest.nodesSeries(s),
    memory: (s) => ingest.memorySeries(s),
    cpu: (s) => ingest.cpuSeries(s),
    oom: (s) => ingest.oomSeries(s),
    restarts: (s) => ingest.restartsSeries(s),
  };
  handlers[name](series);
}

/** Reads the saved files phase by phase (one file: parsed once; several: re-read per phase, one at a time). */
function readSaved(files: readonly string[], cwd: string, ingest: SizeIngest): void {
  if (files.length > MAX_SERIES_FILES) throw new UsageError(`${files.length} --series files, more than the ${MAX_SERIES_FILES} read`, 'size');
  const seen = new Set<QueryName>();
  const load = (file: string) => parseSavedFile(readJsonFile(file, cwd, 'the saved query_range answers of `node-agents size --save`'), file);
  const kept = files.length === 1 ? load(files[0]) : undefined;
  for (const phase of PHASES) {
    for (const file of files) {
      const saved = kept ?? load(file);
      for (const name of phase) {
        if (saved[name] === undefined) continue;
        seen.add(name);
        feed(ingest, name, saved[name]!);
      }
    }
  }
  const missing = REQUIRED_QUERIES.filter((n) => !seen.has(n));
  if (missing.length > 0) throw new Error(`${files.join(', ')}: no ${missing.join(', ')} query; the file needs at least ${REQUIRED_QUERIES.join(', ')}`);
}

/** Runs the queries against Prometheus in phase order; --save writes the answers keyed by name. */
function readPrometheus(base: string, w: QueryWindow, namespaces: readonly string[], ingest: SizeIngest,
  save: string | undefined, cwd: string): void {
  const problem = checkBaseUrl(base);
  if (problem !== undefined) throw new UsageError(`--prometheus ${problem}`, 'size');
  const texts = queries(namespaces, w.stepSeconds);
  ingest.stepSeconds = w.stepSeconds;
  const saved: string[] = [];
  for (const phase of PHASES) {
    for (const name of phase) {
      const step = name === 'pods' || name === 'nodes' ? identityStep(w.stepSeconds) : w.stepSeconds;
      const body = fetchQuery(name, rangeUrl(base, texts[name], { ...w, stepSeconds: step }));
      let value: unknown;
      try {
        value = JSON.parse(body);
      } catch {
        throw new Error(`query ${name}: the answer is not JSON`);
      }
      feed(ingest, name, parseQueryResult(value, `query ${name}`));
      if (save !== undefined) saved.push(`${JSON.stringify(name)}:${body}`);
    }
  }
  if (save !== undefined) fs.writeFileSync(path.resolve(cwd, save), `{${saved.join(',\n')}}\n`);
}

/** No usage joined, or an --agent the data does not hold: an input error (exit 2) saying where to look. */
function checkAgents(ingest: SizeIngest, only: readonly string[]): void {
  if (ingest.states.size === 0) {
    throw new Error(`no usage of a DaemonSet pod on a known node (${ingest.unjoined} series not joined): check that kube_pod_info names `
      + 'the pods\' nodes, and that the nodes have labels (pass --nodes, or allow kube-state-metrics to export node labels)');
  }
  const missing = only.filter((a) => !ingest.states.has(a));
  if (missing.length > 0) {
    throw new UsageError(`--agent ${missing[0]}: no such agent in the data; the agents are ${[...ingest.states.keys()].sort().slice(0, 10).join(', ')}`, 'size');
  }
}

export function sizeCommand(argv: readonly string[], io: CliIo): number {
  const parsed = parse('size', argv, OPTIONS, false);
  if (flag(parsed, 'help')) {
    io.stdout.write(SIZE_HELP);
    return 0;
  }
  const prometheus = stringValue(parsed, 'prometheus');
  const files = listValue(parsed, 'series');
  if ((prometheus === undefined) === (files.length === 0)) throw new UsageError('give --prometheus URL or --series FILE (one of them)', 'size');
  if (stringValue(parsed, 'save') !== undefined && prometheus === undefined) throw new UsageError('--save goes with --prometheus', 'size');
  if (flag(parsed, 'json') && flag(parsed, 'markdown')) throw new UsageError('--json and --markdown: choose one', 'size');
  const groupText = stringValue(parsed, 'group-by') ?? 'instance-size';
  const groupBy = groupByOf(groupText);
  if (groupBy === undefined) throw new UsageError(`--group-by "${groupText}": choose instance-size, nodepool, instance-type or label=KEY`, 'size');
  const nodesFile = stringValue(parsed, 'nodes');
  const treePath = stringValue(parsed, 'tree');
  if (treePath !== undefined && nodesFile === undefined) throw new UsageError('--tree needs --nodes FILE (the nodes whose requests it compares)', 'size');
  const pools = nodePoolFlags(parsed, 'size');
  if (pools !== undefined && treePath === undefined) throw new UsageError('--nodepools goes with --tree TREE and --nodes FILE (the tree running now)', 'size');
  const w = windowOf(parsed);
  const inventory = nodesFile === undefined ? undefined : loadInventory(nodesFile, io.cwd);
  const labels = inventory === undefined ? undefined : new Map(inventory.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
  const ingest = new SizeIngest({ groupKey: groupBy.key, inventory: labels });
  if (prometheus !== undefined) readPrometheus(prometheus, w, listValue(parsed, 'namespace'), ingest, stringValue(parsed, 'save'), io.cwd);
  else readSaved(files, io.cwd, ingest);
  ingest.finish();
  const only = listValue(parsed, 'agent');
  checkAgents(ingest, only);
  const agents = [...ingest.states.keys()].filter((a) => only.length === 0 || only.includes(a)).sort().map((agent) => {
    const states = ingest.states.get(agent)!;
    return planProfiles(agent, groupReports(states, ingest.pods.get(agent)!, groupBy), groupBy, states);
  });
  const tree = treePath === undefined ? undefined : loadManifests([treePath], io.cwd);
  const impact = tree === undefined ? undefined : sizeImpact(tree, inventory!, agents, groupBy);
  const nodePools = tree !== undefined && pools !== undefined
    ? poolLines(pools, io.cwd, tree, inventory!, agents) : undefined;
  const report: SizeReport = {
    agents, groupBy, samplesRead: ingest.samplesRead, unjoined: ingest.unjoined, stepSeconds: ingest.stepSeconds, impact, nodePools,
  };
  if (flag(parsed, 'json')) writeJson({ ...report, impact: impact === undefined ? undefined : Object.fromEntries(impact) }, (t) => io.stdout.write(t));
  else if (flag(parsed, 'markdown')) io.stdout.write(fitComment(sizeMarkdown(report)));
  else io.stdout.write(sizeText(report));
  return 0;
}
