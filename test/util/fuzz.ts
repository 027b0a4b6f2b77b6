/**
 * Fuzzing a construct: random props, half well-typed (values of the right type, valid or not),
 * half badly typed (a field replaced by a value of any type). Every run must either synthesize
 * manifests that pass the shared manifest check, byte-identical when synthesized twice, or throw
 * a ValidationError whose message starts with the construct's kind and path (at synthesis, cdk8s'
 * own "Validation failed" report of the late checks, each naming the construct, is let through).
 * Anything else (a plain Error, a TypeError, a RangeError, a cdk8s-plus message without path, an
 * invalid manifest) is a failure.
 */
import { App, Chart, Duration, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import { Manifest, validateManifests } from './manifests';
import {
  MountPropagation, NodeRequirement, Promotion, RolloutBudget, RolloutWave, TaintEffect, TolerationOperator, UpdateStrategy,
} from '../../src';
import { AgentEnvValue, AgentProbe } from '../../src/agent/container-inputs';
import { promqlProblem } from '../../src/alerts/promql-parse';
import { ValidationError } from '../../src/validation/errors';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Props = any;

/**
 * The name of the class of what was thrown: "ValidationError" for the library's refusals, "Error" for
 * a plain Error (cdk8s' and constructs' own, or a library check that forgot its class); anything else
 * (TypeError, RangeError) is a crash.
 */
export function thrownClass(e: unknown): string {
  return (e as Error)?.constructor?.name ?? typeof e;
}

/**
 * Whether `e` is a refusal: the library's ValidationError, and nothing else. A plain Error escaping a
 * construct or a factory is a failure (issue 52: one error class), as a TypeError is.
 */
export function isRefusal(e: unknown): e is ValidationError {
  return e instanceof ValidationError;
}

/**
 * cdk8s' own report of the synth-time validations (App.synth: "Validation failed with the following
 * errors", one "[path] message" per problem): the one plain Error allowed, and only at synthesis, where
 * the late checks of the rendered objects (escape-hatch patches, conflicts between agents) run.
 */
export function isSynthValidation(e: unknown): e is Error {
  return e instanceof Error && e.constructor === Error && e.message.startsWith('Validation failed with the following errors:\n');
}

/** What one run did. */
export type Outcome =
  | { readonly kind: 'ok' }
  | { readonly kind: 'refused'; readonly message: string }
  | { readonly kind: 'failure'; readonly reason: string };

/** The path prefixes a refusal may start with: the construct's own, or a construct below it. */
function startsWithPath(message: string, kind: string, path: string): boolean {
  if (message.startsWith(`${kind} ${path}`)) return true;
  if (message.startsWith(`NodeAgentDaemonSet ${path}/`)) return true;
  // cdk8s' synth-time validations: "Validation failed with the following errors:\n  [<path>] <Kind> <path>: ..."
  const validation = /^Validation failed with the following errors:\n {2}\[([^\]]+)\] (\S+) (\S+):/.exec(message);
  return validation !== null && validation[1].startsWith(path) && validation[3].startsWith(path);
}

/** A thrown value as an outcome: a refusal naming the construct, or a failure (a plain Error, a crash, a message without the path). */
function thrownOutcome(e: unknown, kind: string, allowSynthValidation: boolean): Outcome {
  if (!isRefusal(e) && !(allowSynthValidation && isSynthValidation(e))) {
    return { kind: 'failure', reason: `${thrownClass(e)} (not a ValidationError): ${(e as Error)?.message ?? String(e)}` };
  }
  const message = (e as Error).message;
  if (!startsWithPath(message, kind, 'chart/agent')) return { kind: 'failure', reason: `message without "${kind} chart/agent": ${message}` };
  return { kind: 'refused', message };
}

/** Builds once: the outcome, and the YAML when it synthesized. */
function buildOnce(kind: string, build: (chart: Chart, props: Props) => void, props: Props): { outcome: Outcome; yaml?: string } {
  const app: App = Testing.app();
  const chart = new Chart(app, 'chart', { namespace: 'agents' });
  let yaml: string;
  try {
    build(chart, props);
  } catch (e) {
    return { outcome: thrownOutcome(e, kind, false) };
  }
  try {
    yaml = app.synthYaml();
  } catch (e) {
    return { outcome: thrownOutcome(e, kind, true) };
  }
  try {
    const manifests = Testing.synth(chart);
    validateManifests(manifests);
    const unparsed = promqlFailures(manifests);
    if (unparsed.length > 0) throw new Error(`PromQL Prometheus would not parse:\n  ${unparsed.join('\n  ')}`);
  } catch (e) {
    return { outcome: { kind: 'failure', reason: (e as Error).message } };
  }
  return { outcome: { kind: 'ok' }, yaml };
}

/**
 * The PromQL of the synthesized objects that Prometheus would not parse (src/alerts/promql-parse.ts,
 * its verdicts cross-checked with promtool in test/lib/promql-parse.test.ts): every PrometheusRule expr
 * and every gate Job's CHECK_<n>_EXPR. A rule file Prometheus refuses, or a gate that always fails
 * closed, is as invalid as a manifest the API server rejects.
 */
export function promqlFailures(manifests: Manifest[]): string[] {
  const exprs: Array<[string, string]> = [];
  for (const m of manifests) {
    if (m.kind === 'PrometheusRule') {
      for (const g of m.spec?.groups ?? []) for (const r of g.rules ?? []) exprs.push([`${m.metadata.name} ${r.alert}`, r.expr]);
    }
    if (m.kind === 'Job') {
      for (const e of m.spec?.template?.spec?.containers?.[0]?.env ?? []) if (/^CHECK_\d+_EXPR$/.test(e.name)) exprs.push([`${m.metadata.name} ${e.name}`, e.value]);
    }
  }
  return exprs.flatMap(([where, expr]) => {
    const problem = promqlProblem(expr);
    return problem === undefined ? [] : [`${where}: ${JSON.stringify(expr)} ${problem}`];
  });
}

/** How many runs of each outcome a fuzz test saw (so a test can check it reached synthesis). */
export const outcomeCounts = new Map<string, { ok: number; refused: number }>();

/** One fuzz run: build, and when it synthesized, build again and compare the YAML. */
export function fuzzRun(kind: string, build: (chart: Chart, props: Props) => void, props: Props): Outcome {
  const first = buildOnce(kind, build, props);
  const counts = outcomeCounts.get(kind) ?? { ok: 0, refused: 0 };
  outcomeCounts.set(kind, counts);
  if (first.outcome.kind === 'refused') counts.refused++;
  if (first.outcome.kind !== 'ok') return first.outcome;
  counts.ok++;
  const second = buildOnce(kind, build, props);
  if (second.yaml !== first.yaml) return { kind: 'failure', reason: 'the same props synthesized different YAML' };
  return first.outcome;
}

/** The failure as a short class, for grouping and for known-failure lists. */
export function failureClass(reason: string): string {
  return reason.split('\n').slice(0, 2).join(' ').replace(/\d+(\.\d+)?(e[+-]?\d+)?/g, 'N').substring(0, 200);
}

// ---- arbitraries ----------------------------------------------------------------------------

/** Any JavaScript value (a wrong type for almost every prop). */
export const anyValue = fc.oneof(
  fc.constant(null), fc.integer(), fc.double(), fc.boolean(), fc.string({ maxLength: 6 }),
  fc.array(fc.integer(), { maxLength: 2 }), fc.object({ maxDepth: 1, maxKeys: 2 }),
);

/** Props with one to three fields (paths "a" or "a.b") replaced by values of any type. */
export function badlyTyped(wellTyped: fc.Arbitrary<Props>, paths: readonly string[]): fc.Arbitrary<Props> {
  return fc.tuple(wellTyped, fc.array(fc.tuple(fc.constantFrom(...paths), anyValue), { minLength: 1, maxLength: 3 }))
    .map(([props, mutations]) => {
      const copy = { ...props };
      for (const [path, value] of mutations) {
        const [head, tail] = path.split('.', 2);
        if (tail === undefined) copy[head] = value;
        else copy[head] = { ...(typeof copy[head] === 'object' && copy[head] !== null ? copy[head] : {}), [tail]: value };
      }
      return copy;
    });
}

/** An optional field: undefined in about half the runs. */
export function maybe<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.option(arb, { nil: undefined, freq: 2 });
}

/**
 * Picks from values of the right type: the first (a valid one) in most runs, so that many runs
 * get far enough to synthesize; the others (often invalid) in the rest.
 */
export function pick<T>(...values: T[]): fc.Arbitrary<T> {
  if (values.length === 1) return fc.constant(values[0]);
  return fc.oneof(
    { arbitrary: fc.constant(values[0]), weight: 12 * (values.length - 1) },
    ...values.slice(1).map((v) => ({ arbitrary: fc.constant(v), weight: 1 })),
  );
}

export const quantity = pick('100m', '1', '128Mi', '512Mi', '1Gi', ' 128Mi', '1.5.3Gi', '512MB', '-1', '0');
/** Memory quantities: mostly plausible, with the milli slip ("64m", 0.064 bytes) and a byte count below the 6Mi floor. */
export const memoryQuantity = pick('128Mi', '512Mi', '1Gi', '64m', '1', ' 128Mi', '1.5.3Gi', '512MB', '-1', '0');
export const resources = fc.record({
  cpuRequest: maybe(quantity), cpuLimit: maybe(quantity), memoryRequest: maybe(memoryQuantity), memoryLimit: maybe(memoryQuantity),
}, { requiredKeys: [] });
export const labelKey = pick('team', 'app.kubernetes.io/part-of', 'bad key!', ']%', 'example.com/x', 'a/b/c', '');
export const labelValue = pick('platform', 'v1', '', 'bad value!', 'x'.repeat(64));
export const labels = fc.dictionary(labelKey, labelValue, { maxKeys: 2 });
/** Whole numbers around the API's bounds, `valid` in most runs. */
export function ints(valid: number): fc.Arbitrary<number> {
  return pick(valid, 0, 1, -1, 1.5, 2 ** 31, 2 ** 53, 1e20, -1.79e308, 1.03e-266);
}
export const integer = ints(5);

/** An optional field with constraints on other fields: undefined in most runs. */
export function rarely<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: arb, weight: 1 });
}
export const port = pick(80, 1033, 2020, 9100, 24224, 0, -1, 65536, 1.5, 2 ** 53);
export const image = pick('registry.example.com/agent:1.2.3', 'agent:latest', 'agent', '', 'a b:1', 'busybox@sha256:' + 'a'.repeat(64));
export const priorityClassName = pick('system-node-critical', 'agents-critical', 'a..b', 'x'.repeat(254), 'Bad');
export const tolerations = fc.array(fc.record({
  key: maybe(labelKey),
  operator: maybe(pick(TolerationOperator.EXISTS, TolerationOperator.EQUAL)),
  value: maybe(labelValue),
  effect: maybe(pick(TaintEffect.NO_SCHEDULE, TaintEffect.NO_EXECUTE, TaintEffect.PREFER_NO_SCHEDULE)),
  tolerationSeconds: maybe(integer),
}, { requiredKeys: [] }), { maxLength: 2 });
export const updateStrategy = pick(
  UpdateStrategy.steady(), UpdateStrategy.oneAtATime(), UpdateStrategy.onDelete(), UpdateStrategy.fast(),
  UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(0), maxSurge: RolloutBudget.count(1) }),
  // above int32: IntOrString is an int32 (issue 52)
  UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(2 ** 31) }),
);
export const nodeRequirements = fc.array(fc.oneof(
  fc.tuple(labelKey, fc.array(labelValue, { maxLength: 2 })).map(([k, v]) => NodeRequirement.in(k, v)),
  labelKey.map((k) => NodeRequirement.exists(k)),
  fc.tuple(labelKey, integer).map(([k, n]) => NodeRequirement.gt(k, n)),
), { maxLength: 2 });
export const probe = fc.oneof(
  fc.tuple(port, integer).map(([p, period]) => AgentProbe.fromTcpSocket({ port: p, periodSeconds: safeSeconds(period) })),
  fc.tuple(port, integer).map(([p, threshold]) => AgentProbe.fromHttpGet('/healthz', { port: p, failureThreshold: threshold })),
);
export const propagation = pick(MountPropagation.NONE, MountPropagation.HOST_TO_CONTAINER, MountPropagation.BIDIRECTIONAL, 'Sideways' as MountPropagation);
export const envName = pick('HOST_IP', 'LOG_LEVEL', '', 'NÄME', '1A', 'A=B', 'my.env-name');
export const env = fc.dictionary(envName, pick('a', 'b').map((v) => AgentEnvValue.fromValue(v)), { maxKeys: 2 });

/** Probe durations: cdk8s refuses negative ones when they are built, outside any construct; fractions stay. */
function safeSeconds(n: number): Duration {
  return Duration.seconds(Math.abs(n) > 1e15 ? 10 : Math.abs(n));
}

export const sidecar = fc.record({
  name: pick('proxy', 'sidecar', 'Bad_Name', 'agent', 'fluent-bit', 'node-exporter'),
  image,
  ports: maybe(fc.array(fc.record({ name: pick('metrics', 'http', 'BAD', 'p'), containerPort: port, hostPort: maybe(port) }, { requiredKeys: ['name', 'containerPort'] }), { maxLength: 2 })),
  resources: maybe(resources),
  runAsUser: maybe(integer),
  runAsGroup: maybe(integer),
  env: maybe(env),
  readiness: maybe(probe),
  liveness: maybe(probe),
  mounts: maybe(fc.array(fc.record({
    volume: pick('config', 'state', 'nope', 'varlog', 'proc'),
    mountPath: pick('/etc/x', '/data', 'relative'),
    subPath: maybe(pick('conf.d', '../etc', '/abs', 'a..b')),
    propagation: maybe(propagation),
  }, { requiredKeys: ['volume', 'mountPath'] }), { maxLength: 2 })),
}, { requiredKeys: ['name', 'image'] });

export const waveName = pick('canary', 'wave-1', 'constructor', 'toString', 'fleet', 'Bad_Host!', '__proto__');
const wave = fc.oneof(
  waveName.map((n) => RolloutWave.labelled(n)),
  fc.tuple(waveName, labelKey, fc.array(labelValue, { minLength: 1, maxLength: 2 }))
    .map(([n, k, v]) => RolloutWave.matching(n, NodeRequirement.in(k, v))),
  fc.tuple(waveName, fc.array(pick('node-1', 'Bad_Host!', 'ip-10-0-0-1.ec2.internal'), { minLength: 1, maxLength: 2 }))
    .map(([n, h]) => RolloutWave.hostnames(n, h)),
);

/** The rollout prop: waves, promotion, previous release, paces. */
export const rollout = fc.record({
  waves: fc.array(wave, { minLength: 1, maxLength: 3 }),
  promoted: fc.oneof(
    pick(Promotion.none(), Promotion.all()),
    pick(0, 1, 2, -1, 1.5, 100).map((n) => Promotion.groups(n)),
    waveName.map((n) => Promotion.through(n)),
  ),
  previous: maybe(fc.record({
    image: maybe(image),
    resources: maybe(resources),
    configData: maybe(fc.dictionary(pick('agent.conf', 'bad/key', '..', 'fluent-bit.conf'), pick('x = 1', ''), { maxKeys: 2 })),
    sidecars: maybe(fc.array(sidecar, { maxLength: 1 })),
  }, { requiredKeys: [] })),
  labelKey: maybe(labelKey),
  canaryPace: maybe(updateStrategy),
  wavePace: maybe(fc.dictionary(waveName, updateStrategy, { maxKeys: 2 })),
  argoCdSyncWaves: maybe(fc.boolean()),
}, { requiredKeys: ['waves', 'promoted'] });

/** Half well-typed, half badly typed props. */
export function fuzzProps(wellTyped: fc.Arbitrary<Props>, paths: readonly string[]): fc.Arbitrary<Props> {
  return fc.oneof(wellTyped, badlyTyped(wellTyped, paths));
}
