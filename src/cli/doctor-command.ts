import { flag, parse, Parsed, secondsValue, stringValue, UsageError } from './args';
import { displayName } from './capacity/names';
import { fitComment } from './comment';
import { DoctorReport, diagnose } from './doctor/diagnose';
import { DoctorFinding } from './doctor/finding';
import { DEFAULT_LIVE_BUDGET, LiveBudget, loadLiveState } from './doctor/live';
import { loadState } from './doctor/state';
import { waitForRollout } from './doctor/wait';
import { table } from './format';
import type { CliIo } from './io';
import { capPerKind } from './limits';
import { WatchBudgets } from '../rollout/watch-script';
import { markdownEscape, terminalSafe } from '../util/output-escape';
import { formatBytes, parseQuantity } from '../util/quantity';

export const DOCTOR_HELP = `Usage: node-agents doctor --state DUMP [flags]
       node-agents doctor --live [--context NAME] [--kubeconfig FILE] [flags]
       node-agents doctor --live --wait NAMESPACE/DAEMONSET [budget flags]

Why a DaemonSet rollout is stuck, and why a node has no healthy agent, from a dump of the cluster:
  kubectl get nodes,pods,daemonsets,controllerrevisions,events -A -o json > state.json
DUMP is that file, or a directory of such .json files (a large cluster's dump split up).
Or from the cluster itself (--live, --context or --kubeconfig): the same objects listed page by
page with \`kubectl get --raw\`; read-only, with your kubectl's credentials.

Per DaemonSet: desired / current / updated / ready / available and what the rollout waits on.
Per node the DaemonSet should cover (the same placement as \`coverage\`) that lacks a Ready pod of
the current revision, the cause and its fix:
  pending-resources   Pending: the node lacks cpu, memory, ephemeral-storage, pods or an
                      extended resource (the shortfall, as the scheduler's Fit filter counts)
  pending-taint       Pending: a taint the pod does not tolerate
  pending-host-port   Pending: another pod holds the host port
  pending-affinity    Pending: (anti-)affinity or selector rejects the node
  image-pull          ImagePullBackOff / ErrImagePull: the image, tag or pull secret
  crash-loop          CrashLoopBackOff, with the last termination reason and exit code
  config-error        CreateContainerConfigError, or a volume's ConfigMap/Secret is missing
  start-error         the runtime could not create or start the container: CreateContainerError,
                      RunContainerError, a failed lifecycle hook (wrong command, seccomp profile)
  not-ready           Running, readiness probe failing (a container restarted once and running
                      again is this, not a crash loop)
  node-not-ready      the node is NotReady or unreachable
  no-pod              the node should run the agent and has no pod
  misscheduled        a pod on a node the DaemonSet no longer targets
  old-revision        a Ready pod of an old revision: waiting its turn (warning), or blocked
                      (names what holds the update budget, counted as the controller counts it on
                      every node with a pod of the DaemonSet), or OnDelete
  terminating         a pod still terminating past its grace period (its deletionTimestamp);
                      within it, a warning on a Ready node
Reads the scheduler's and kubelet's events for their own words.

Flags:
  --state FILE|DIR    the dump
  --live              read the cluster of kubectl's current context instead of a dump
  --context NAME      read this kubeconfig context's cluster (kubectl --context; implies --live)
  --kubeconfig FILE   with this kubeconfig (kubectl --kubeconfig; implies --live)
  --live-timeout SECONDS     the most the whole live read may take (default ${DEFAULT_LIVE_BUDGET.seconds})
  --live-max-bytes SIZE      the most bytes kubectl may print, all pages together, as a quantity
                             such as 64Gi or 500Mi (default ${formatBytes(DEFAULT_LIVE_BUDGET.bytes)})
  --live-max-objects N       the most objects the lists may hold, all kinds together
                             (default ${DEFAULT_LIVE_BUDGET.objects}); past a limit, exit 2 naming it
  --live-max-kept SIZE       the most memory doctor keeps of the objects it reads, estimated as it
                             keeps them (default ${formatBytes(DEFAULT_LIVE_BUDGET.kept)}: 3Gi, or Node's heap limit less
                             1Gi when that is less); also bounds --state and each read of --wait
  --agent NAME        only this agent's DaemonSets (label app.kubernetes.io/name), waves included
  --now TIME          the time the dump was taken (RFC 3339, e.g. 2026-01-01T12:00:00Z), against
                      which a terminating pod's deadline is judged; default: the dump's newest
                      timestamp (events, node heartbeats, pod times), never this machine's clock
  --json              { daemonSets: [...], findings: [{ cause, severity, daemonSet, node, pod?,
                      message, fix }] }
  --markdown          a comment for an issue or pull request
  -h, --help          this help

Exit codes: 0 healthy (warnings only: a rollout waiting its turn), 1 findings, 2 bad usage or input.

Waiting on a wave (--wait, with --live): what a rollout watcher Job does under Argo CD, for a rollout
applied with kubectl (a CI promotion step). Reads the DaemonSet and the pods of its current template
generation every --interval seconds and exits 1 as soon as one of those pods is OOMKilled, restarts
more than --restart-budget times, stays --failure-grace seconds in ImagePullBackOff / ErrImagePull or
CreateContainerConfigError / RunContainerError, or stays Pending --pending-deadline seconds, naming the
pod, the node, the reason, the pod's newest warning event and the fix; exits 0 once every desired pod
is updated and available (a status count missing or not a number is unknown: not done); exits 1
after --timeout seconds. Read-only (get on the DaemonSet, list on pods and events).
  --wait NS/NAME          the DaemonSet to wait on
  --restart-budget N      default 3
  --pending-deadline S    default the pod template's startup budget (its startupProbe) + 300
  --failure-grace S       default 120
  --interval S            default 10
  --timeout S             default 21600; each read of the cluster is bounded by what is left of it
                          (kubectl's request timeout, and the process stopped past it)
`;

const OPTIONS = {
  'state': { type: 'string' },
  'live': { type: 'boolean' },
  'context': { type: 'string' },
  'kubeconfig': { type: 'string' },
  'live-timeout': { type: 'string' },
  'live-max-bytes': { type: 'string' },
  'live-max-objects': { type: 'string' },
  'live-max-kept': { type: 'string' },
  'agent': { type: 'string' },
  'now': { type: 'string' },
  'json': { type: 'boolean' },
  'markdown': { type: 'boolean' },
  'help': { type: 'boolean', short: 'h' },
  'wait': { type: 'string' },
  'restart-budget': { type: 'string' },
  'pending-deadline': { type: 'string' },
  'failure-grace': { type: 'string' },
  'interval': { type: 'string' },
  'timeout': { type: 'string' },
} as const;

export function doctorCommand(argv: readonly string[], io: CliIo): number {
  const parsed = parse('doctor', argv, OPTIONS, false);
  if (flag(parsed, 'help')) {
    io.stdout.write(DOCTOR_HELP);
    return 0;
  }
  const context = stringValue(parsed, 'context');
  const kubeconfig = stringValue(parsed, 'kubeconfig');
  const live = flag(parsed, 'live') || context !== undefined || kubeconfig !== undefined;
  const stateFile = stringValue(parsed, 'state');
  if (live && stateFile !== undefined) throw new UsageError('--state and --live (or --context, --kubeconfig): read a dump or the cluster, not both', 'doctor');
  if (!live && stateFile === undefined) {
    throw new UsageError('give --state DUMP (kubectl get nodes,pods,daemonsets,controllerrevisions,events -A -o json > state.json), or --live to read the cluster', 'doctor');
  }
  if (flag(parsed, 'markdown') && flag(parsed, 'json')) throw new UsageError('--markdown and --json: give one output format', 'doctor');
  const now = stringValue(parsed, 'now');
  if (now !== undefined && !isRfc3339(now)) throw new UsageError(`--now ${JSON.stringify(now.slice(0, 40))}: not an RFC 3339 time; give one like 2026-01-01T12:00:00Z`, 'doctor');
  const wait = stringValue(parsed, 'wait');
  const budget = liveBudget(parsed, live);
  if (wait !== undefined) return waitCommand(parsed, wait, live, { context, kubeconfig, budget }, io);
  const state = live ? loadLiveState({ context, kubeconfig, cwd: io.cwd, budget }) : loadState(stateFile!, io.cwd, budget.kept);
  const agent = stringValue(parsed, 'agent');
  if (agent !== undefined && !state.daemonSets.some((d) => d.info.agent === agent)) {
    const known = [...new Set(state.daemonSets.map((d) => displayName(d.info.agent)))].sort();
    throw new UsageError(`--agent ${displayName(agent)}: no DaemonSet of that agent in ${live ? 'the cluster' : 'the dump'}; it holds ${known.slice(0, 20).join(', ')}`, 'doctor');
  }
  const report = diagnose(state, { agent, now });
  if (flag(parsed, 'json')) io.stdout.write(JSON.stringify(report, null, 2) + '\n');
  else if (flag(parsed, 'markdown')) io.stdout.write(fitComment(doctorMarkdown(report)));
  else io.stdout.write(doctorText(report));
  return report.findings.some((f) => f.severity === 'error') ? 1 : 0;
}

function isRfc3339(text: string): boolean {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d)$/.test(text) && !Number.isNaN(Date.parse(text));
}

/**
 * The live read's bounds from the flags, each checked as typed (a flag of the live read without --live is an error;
 * --live-max-kept bounds --state too).
 */
function liveBudget(parsed: Parsed, live: boolean): LiveBudget {
  const given = ['live-timeout', 'live-max-bytes', 'live-max-objects'].filter((name) => stringValue(parsed, name) !== undefined);
  if (!live && given.length > 0) throw new UsageError(`--${given[0]} bounds the live read: give it with --live (or --context, --kubeconfig)`, 'doctor');
  const positive = (name: string, value: number | undefined, what: string): number | undefined => {
    if (value !== undefined && !(value > 0 && Number.isFinite(value))) {
      throw new UsageError(`--${name} "${stringValue(parsed, name)}": give ${what}`, 'doctor');
    }
    return value;
  };
  const bytesText = stringValue(parsed, 'live-max-bytes');
  const objectsText = stringValue(parsed, 'live-max-objects');
  const keptText = stringValue(parsed, 'live-max-kept');
  const seconds = positive('live-timeout', secondsValue(parsed, 'doctor', 'live-timeout'), 'more than 0 seconds');
  const bytes = positive('live-max-bytes', bytesText === undefined ? undefined : Math.floor(parseQuantity(bytesText)),
    'a size of at least one byte, such as 64Gi or 500Mi');
  const objects = positive('live-max-objects', objectsText === undefined ? undefined : /^\d{1,15}$/.test(objectsText) ? Number(objectsText) : NaN,
    'a whole number of objects, such as 10000000');
  const kept = positive('live-max-kept', keptText === undefined ? undefined : Math.floor(parseQuantity(keptText)), 'a size of at least one byte, such as 3Gi or 500Mi');
  const fallback = DEFAULT_LIVE_BUDGET;
  return { seconds: seconds ?? fallback.seconds, bytes: bytes ?? fallback.bytes, objects: objects ?? fallback.objects, kept: kept ?? fallback.kept };
}

export function doctorText(report: DoctorReport): string {
  let out = table(['DAEMONSET', 'DESIRED', 'CURRENT', 'UPDATED', 'READY', 'AVAILABLE', 'STRATEGY', 'WAITS ON'],
    report.daemonSets.map((d) => [terminalSafe(d.daemonSet), String(d.desired), String(d.current), String(d.updated), String(d.ready),
      String(d.available), terminalSafe(d.strategy), terminalSafe(d.waitsOn)]));
  if (report.findings.length === 0) return `${out}\nHealthy: every targeted node runs a Ready pod of the current revision.\n`;
  const errors = report.findings.filter((f) => f.severity === 'error').length;
  out += `\nFINDINGS (${errors} error${errors === 1 ? '' : 's'}, ${report.findings.length - errors} warning${report.findings.length - errors === 1 ? '' : 's'})\n`;
  const { shown, hidden } = capPerKind(report.findings, kindOf);
  for (const f of shown) out += findingText(f);
  for (const [kind, count] of hidden) out += `${kind.endsWith('error') ? '!' : '~'} … ${moreOf(count, kind)} (all in --json)\n`;
  return out;
}

/** A finding's kind for the cap: its cause and severity (`no-pod error`). */
const kindOf = (f: DoctorFinding) => `${f.cause} ${f.severity}`;

/** `4980 more no-pod errors` */
const moreOf = (count: number, kind: string) => `${count} more ${kind}${count === 1 ? '' : 's'}`;

/** DaemonSets listed in the markdown table; the rest are counted (a comment has room for so much). */
const MAX_MARKDOWN_DAEMONSETS = 50;

function findingText(f: DoctorFinding): string {
  return `${f.severity === 'error' ? '!' : '~'} [${f.cause}] ${terminalSafe(f.daemonSet)} ${terminalSafe(f.message)}\n    fix: ${terminalSafe(f.fix)}\n`;
}

export function doctorMarkdown(report: DoctorReport): string {
  const errors = report.findings.filter((f) => f.severity === 'error').length;
  let out = `### node-agents doctor\n\n${errors === 0 ? '**Healthy**' : `**${errors} finding${errors === 1 ? '' : 's'}**`}`
    + `${report.findings.length > errors ? ` (${report.findings.length - errors} warning${report.findings.length - errors === 1 ? '' : 's'})` : ''}.\n\n`;
  out += '| DaemonSet | desired | current | updated | ready | available | strategy | waits on |\n|---|---:|---:|---:|---:|---:|---|---|\n';
  for (const d of report.daemonSets.slice(0, MAX_MARKDOWN_DAEMONSETS)) {
    out += `| ${markdownEscape(d.daemonSet)} | ${d.desired} | ${d.current} | ${d.updated} | ${d.ready} | ${d.available} | ${markdownEscape(d.strategy)} | ${markdownEscape(d.waitsOn)} |\n`;
  }
  if (report.daemonSets.length > MAX_MARKDOWN_DAEMONSETS) out += `\n… ${report.daemonSets.length - MAX_MARKDOWN_DAEMONSETS} more DaemonSets (all in \`--json\`)\n`;
  if (report.findings.length > 0) {
    out += '\n| | cause | DaemonSet | node | what | fix |\n|---|---|---|---|---|---|\n';
    const { shown, hidden } = capPerKind(report.findings, kindOf);
    for (const f of shown) {
      out += `| ${f.severity === 'error' ? '❌' : '⚠️'} | ${f.cause} | ${markdownEscape(f.daemonSet)} | ${markdownEscape(f.node)} | ${markdownEscape(f.message)} | ${markdownEscape(f.fix)} |\n`;
    }
    if (hidden.length > 0) out += '\n';
    for (const [kind, count] of hidden) out += `- … ${markdownEscape(moreOf(count, kind))} (all in \`--json\`)\n`;
  }
  return out;
}

/** The budget flags of --wait, whole numbers of seconds (or restarts). */
function waitBudgets(parsed: ReturnType<typeof parse>): Partial<WatchBudgets> {
  const budgets: { -readonly [K in keyof WatchBudgets]?: number } = {};
  const flags: Array<[string, keyof WatchBudgets, number]> = [
    ['restart-budget', 'restartBudget', 0], ['pending-deadline', 'pendingDeadlineSeconds', 1], ['failure-grace', 'failureGraceSeconds', 0],
    ['interval', 'pollSeconds', 1], ['timeout', 'timeoutSeconds', 1],
  ];
  for (const [name, key, min] of flags) {
    const text = stringValue(parsed, name);
    if (text === undefined) continue;
    if (!/^\d{1,6}$/.test(text) || Number(text) < min) throw new UsageError(`--${name} ${displayName(text)}: give a whole number from ${min} to 999999`, 'doctor');
    budgets[key] = Number(text);
  }
  return budgets;
}

/** doctor --live --wait NS/NAME: waits on one DaemonSet's rollout, as a watcher Job does. */
function waitCommand(parsed: ReturnType<typeof parse>, target: string, live: boolean,
  cluster: { context?: string; kubeconfig?: string; budget: LiveBudget }, io: CliIo): number {
  if (!live) throw new UsageError('--wait reads the cluster: give --live (or --context, --kubeconfig)', 'doctor');
  // the whole-read bounds would be accepted and do nothing here: --wait reads one DaemonSet's pods at a time
  const whole = ['live-timeout', 'live-max-bytes', 'live-max-objects'].find((name) => stringValue(parsed, name) !== undefined);
  if (whole !== undefined) {
    throw new UsageError(`--${whole} bounds the one-time live read, not --wait: its time is --timeout, and each of its reads is bounded `
      + 'by 512 MiB and --live-max-kept', 'doctor');
  }
  const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(target);
  if (m === null || m[1].length > 63 || m[3].length > 253) throw new UsageError(`--wait ${displayName(target)}: give NAMESPACE/DAEMONSET, e.g. observability/logs-canary`, 'doctor');
  const [namespace, daemonSet] = [m[1], m[3]];
  const prefix = `wait ${namespace}/${daemonSet}`;
  const result = waitForRollout({
    ...cluster, cwd: io.cwd, namespace, daemonSet, budgets: waitBudgets(parsed), log: (line) => io.stdout.write(`${prefix}: ${terminalSafe(line)}\n`),
  });
  if (result.passed) {
    io.stdout.write(`${prefix}: rollout complete: every desired pod updated and available\n`);
    return 0;
  }
  const f = result.failure;
  if (f === undefined) {
    io.stdout.write(`${prefix}: FAILED: ${terminalSafe(result.reason ?? 'no verdict')}\n`);
    return 1;
  }
  io.stdout.write(`${prefix}: FAILED: pod ${namespace}/${terminalSafe(f.pod)} on node ${terminalSafe(f.node)}: ${terminalSafe(f.reason)}: ${terminalSafe(f.detail)}\n`);
  if (f.event !== undefined) io.stdout.write(`${prefix}:   newest warning event: ${terminalSafe(f.event)}\n`);
  io.stdout.write(`${prefix}:   cause ${f.cause}; fix: ${f.fix}\n`);
  return 1;
}
