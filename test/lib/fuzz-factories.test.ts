/**
 * Fuzz of every factory that takes options (fluent-bit inputs, filters, parsers and outputs, the
 * pod-option sources and volumes, the update strategy, the fleet's generator and stage), with
 * arguments derived from the jsii assembly's shapes (test/util/fuzz.ts's values where they exist):
 * half well-typed, half with a wrong type or an unknown key. The oracle is the agents' one: the
 * factory returns, or throws a ValidationError naming itself (a plain Error fails) (`FluentBitInput.tail: ...`); a fluent-bit piece
 * it returns then goes into a LogCollectorDaemonSet, which synthesizes valid, byte-identical YAML or
 * refuses with its own kind and path. A TypeError, or an Error naming nothing, fails. Strings come
 * from the prop's kind where its name tells it (a selector, a PromQL expression, a duration, a Lua
 * script, a header value, an output plugin name), so the values reach the checks behind the types;
 * every pool has the classes that once crashed or slipped through: `constructor` as a name or key,
 * surrounding whitespace, an empty string. The agents' alerts and AgentAlerts are fuzzed too: what
 * synthesizes must hold PromQL that parses (test/util/fuzz.ts).
 */
import { Chart, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import * as api from '../../src';
import { TYPES } from '../../src/validation/struct-shapes.generated';
import { TypeRef } from '../../src/validation/type-table';
import { anyValue, failureClass, fuzzRun, isRefusal, outcomeCounts, pick, thrownClass } from '../util/fuzz';
import { validateManifests } from '../util/manifests';

const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const SEED = 27;

/** Instances for class-typed fields: the factories' own products are fuzzed on their own. */
const SAMPLES: { [cls: string]: () => unknown } = {
  NodeRequirement: () => api.NodeRequirement.exists('example.com/x'),
  RolloutBudget: () => api.RolloutBudget.percent(10),
  SecretKeyRefOptions: () => ({ secretName: 'creds', key: 'password' }),
  ArgoCdGenerator: () => api.ArgoCdGenerator.gitFiles(),
  IFleetAgents: () => ({
    addAgents: (_cluster: api.FleetCluster, chart: Chart) => new api.NodeAgentDaemonSet(chart, 'agent', { image: 'registry.example.com/agent:1.2.3' }),
  }),
};

/** Strings by what a prop's name says it holds: [name pattern, valid value first, then the bad ones]. */
const FIELD_STRINGS: Array<[RegExp, fc.Arbitrary<string>]> = [
  [/Selector$/, pick('job="kube-state-metrics"', '', '$(HOST_IP)', 'a b', 'job="x"} or vector(1) or up{a="b"', 'job=~"("', 'job="\\d"')],
  [/^expr$/, pick('up == 0', 'up{job="x"', 'rate(x[5m)', '{a=""}', 'sum by (a) (rate(x{b=~"c"}[5m])) > 0', '')],
  [/(For|Window)$/, pick('10m', '10', '1h30m', 'a', '')],
  [/^code$/, pick('function cb(tag, ts, record) return 1, ts, record end', 'function cb(tag, ts, record) return 1, ts, record', 'local x = 1 // 2', 'local function cb(t, s, r) end', '')],
  [/^(name|call)$/, pick('a', 'constructor', '__proto__', 'toString', 'http', 'parsr', ' a', '')],
  [/^(host|keyName|pathKey|parser|logsUri|uri)$/, pick('a', '', ' a', 'a ', 'a b', '/v1/logs', 'constructor')],
];

/** Field name → the strings a test gives it instead of FIELD_STRINGS'. */
type Overrides = { readonly [field: string]: fc.Arbitrary<string> };

/** An arbitrary value of a type from the generated shapes; `field` is the prop's name, when it has one. */
function arbitraryOf(t: TypeRef, depth = 0, field?: string, overrides: Overrides = {}): fc.Arbitrary<unknown> {
  if (typeof t === 'string') {
    if (t === 'string' && field !== undefined && Object.prototype.hasOwnProperty.call(overrides, field)) return overrides[field];
    const named = t === 'string' && field !== undefined ? FIELD_STRINGS.find(([pattern]) => pattern.test(field)) : undefined;
    if (named) return named[1];
    switch (t) {
      case 'string': return pick('a', 'kube.*', 'log', '/var/log/app.log', '^(?<time>[^ ]+) (?<msg>.*)$', 'compression.codec', '', 'a b', 'a\nb', 'x'.repeat(300),
        'constructor', ' a', 'a ', 'Authorization Bearer x');
      case 'number': return pick(0, 1, 5, 30, 300, -1, 1.5, 1e21, Number.NaN, 443, 2 ** 31);
      case 'boolean': return fc.boolean();
      default: return anyValue;
    }
  }
  if ('array' in t) return depth > 3 ? fc.constant([]) : fc.array(arbitraryOf(t.array, depth + 1, undefined, overrides), { maxLength: 2 });
  if ('map' in t) {
    return depth > 3 ? fc.constant({}) : fc.dictionary(pick('a', 'b.c', 'Bad Key', 'toString', 'constructor', 'http_passwd', 'X-Team'), arbitraryOf(t.map, depth + 1, undefined, overrides), { maxKeys: 2 });
  }
  if ('union' in t) return fc.oneof(...t.union.map((u) => arbitraryOf(u, depth + 1, undefined, overrides)));
  const struct = TYPES.structs[t.ref];
  if (struct) {
    if (depth > 3) return fc.constant({});
    const fields = structFieldsOf(t.ref);
    const record: { [k: string]: fc.Arbitrary<unknown> } = {};
    for (const [name, shape] of Object.entries(fields)) record[name] = arbitraryOf(shape.type, depth + 1, name, overrides);
    return fc.record(record, { requiredKeys: Object.keys(fields).filter((f) => !fields[f].optional) });
  }
  const e = TYPES.enums[t.ref];
  if (e) return pick(...e.values, 'bogus');
  const sample = SAMPLES[t.ref];
  return sample ? fc.constant(undefined).map(() => sample()) : fc.constant(undefined);
}

function structFieldsOf(name: string): { [field: string]: { type: TypeRef; optional?: boolean } } {
  const s = TYPES.structs[name];
  return Object.assign({}, ...s.bases.map(structFieldsOf), s.fields);
}

/** Half well-typed; half one field of a wrong type, an unknown key, or no object at all. */
function fuzzed(t: TypeRef, overrides: Overrides = {}): fc.Arbitrary<unknown> {
  const good = arbitraryOf(t, 0, undefined, overrides);
  const bad = fc.tuple(good, anyValue, pick('typo', 'pathz')).map(([v, junk, key]) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return junk;
    const keys = Object.keys(v);
    return keys.length > 0 ? { ...v, [keys[0]]: junk } : { ...v, [key]: junk };
  });
  return fc.oneof(good, bad, anyValue);
}

const FLUENT_BIT = ['FluentBitInput', 'FluentBitFilter', 'FluentBitParser', 'FluentBitMultilineParser', 'FluentBitOutput'];
const factories = Object.keys(TYPES.methods).filter((m) => {
  const [cls, name] = m.split('.');
  const fn = (api as unknown as { [c: string]: { [n: string]: unknown } })[cls]?.[name];
  return name !== 'constructor' && typeof fn === 'function' && TYPES.methods[m].length > 0
    && TYPES.methods[m].every((p) => typeof p.type === 'string' || !('ref' in p.type) || TYPES.structs[p.type.ref] || TYPES.enums[p.type.ref] || SAMPLES[p.type.ref])
    // the releases are fuzzed as rollout.previous with the agents
    && !/\.release$|AgentRelease\.fromProps/.test(m);
});

test('the fuzz covers the option-taking factories', () => {
  for (const m of ['FluentBitInput.tail', 'FluentBitFilter.grep', 'FluentBitParser.regex', 'FluentBitOutput.kafka', 'ArgoCdGenerator.gitFiles', 'FleetStage.through', 'UpdateStrategy.rollingUpdate']) {
    expect(factories).toContain(m);
  }
});

test.each(factories)('fuzz: %s returns, or names itself; its product synthesizes or the collector names itself', (method) => {
  const [cls, name] = method.split('.');
  const factory = (api as unknown as { [c: string]: { [n: string]: (...a: unknown[]) => unknown } })[cls][name];
  const args = fc.tuple(...TYPES.methods[method].map((p) => fuzzed(p.type)));
  fc.assert(fc.property(args, (values) => {
    let product: unknown;
    try {
      product = factory(...values);
    } catch (e) {
      if (!isRefusal(e)) throw new Error(`${thrownClass(e)}: ${(e as Error)?.message}`);
      if (!e.message.startsWith(`${method}`)) throw new Error(`message without "${method}": ${e.message}`);
      return;
    }
    if (!FLUENT_BIT.includes(cls)) return;
    const key = { FluentBitInput: 'inputs', FluentBitFilter: 'filters', FluentBitParser: 'parsers', FluentBitMultilineParser: 'multilineParsers', FluentBitOutput: 'outputs' }[cls]!;
    const props = { outputs: [api.FluentBitOutput.stdout()], [key]: [product] };
    const outcome = fuzzRun('LogCollectorDaemonSet', (chart: Chart, p) => new api.LogCollectorDaemonSet(chart, 'agent', p), props);
    if (outcome.kind === 'failure') throw new Error(`${failureClass(outcome.reason)}\n${outcome.reason}`);
  }), { seed: SEED, numRuns: RUNS });
});

test('fuzz: AgentFleet writes valid, byte-identical files, or refuses naming the fleet or the cluster', () => {
  // Cluster names like Object.prototype members once made "There is already a Construct with name '__proto__'"
  const props = fuzzed({ ref: 'AgentFleetProps' }, { name: pick('a', 'parsr', ' a', '', 'prod-eu-1', 'constructor', '__proto__', 'toString') });
  let synthesized = 0;
  fc.assert(fc.property(props, (p) => {
    const build = (): { files: string } | { error: string } => {
      try {
        const fleet = new api.AgentFleet(p as api.AgentFleetProps);
        const files = fleet.synthFiles();
        for (const cluster of fleet.clusters) validateManifests(Testing.synth(cluster.chart));
        return { files: JSON.stringify(files) };
      } catch (e) {
        if (!isRefusal(e)) throw new Error(`${thrownClass(e)}: ${(e as Error)?.message}`);
        if (!/^(AgentFleet|FleetCluster )/.test(e.message)) {
          throw new Error(`message naming neither the fleet nor a cluster: ${e.message}`);
        }
        return { error: e.message };
      }
    };
    const first = build();
    if ('files' in first) {
      synthesized++;
      const second = build();
      if (!('files' in second) || second.files !== first.files) throw new Error('the same props synthesized different files');
    }
  }), { seed: SEED, numRuns: RUNS * 3 });
  expect(synthesized).toBeGreaterThan(0);
});

test('fuzz: rollout gates render valid Jobs, or the agent refuses naming itself', () => {
  const gate = fuzzed({ ref: 'WaveGate' });
  fc.assert(fc.property(gate, (g) => {
    const props = {
      image: 'registry.example.com/agent:1.2.3',
      rollout: { waves: [api.RolloutWave.labelled('canary')], promoted: api.Promotion.all(), argoCdSyncWaves: true, gates: [g] },
    };
    const outcome = fuzzRun('NodeAgentDaemonSet', (chart: Chart, p) => new api.NodeAgentDaemonSet(chart, 'agent', p), props);
    if (outcome.kind === 'failure') throw new Error(`${failureClass(outcome.reason)}\n${outcome.reason}`);
  }), { seed: SEED, numRuns: RUNS * 3 });
});

/** Each agent kind with its alert options' struct, built at chart/agent. */
const ALERTING_AGENTS: Array<[string, string, (chart: Chart, alerts: unknown) => void]> = [
  ['LogCollectorDaemonSet', 'LogCollectorAlertsOptions',
    (chart, alerts) => new api.LogCollectorDaemonSet(chart, 'agent', { outputs: [api.FluentBitOutput.stdout()], alerts: alerts as api.LogCollectorAlertsOptions })],
  ['NodeExporterDaemonSet', 'NodeExporterAlertsOptions', (chart, alerts) => new api.NodeExporterDaemonSet(chart, 'agent', { alerts: alerts as api.NodeExporterAlertsOptions })],
  ['GpuDriverDaemonSet', 'GpuDriverAlertsOptions',
    (chart, alerts) => new api.GpuDriverDaemonSet(chart, 'agent', { image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', alerts: alerts as api.GpuDriverAlertsOptions })],
  ['AgentAlerts', 'AgentAlertsProps', (chart, props) => new api.AgentAlerts(chart, 'agent', {
    ...(props as api.AgentAlertsProps),
    agent: new api.NodeAgentDaemonSet(chart, 'base', { image: 'registry.example.com/agent:1.2.3' }),
  })],
];

test.each(ALERTING_AGENTS)('fuzz: %s alerts render PromQL that parses, or the construct refuses naming itself', (kind, struct, build) => {
  const alerts = fuzzed({ ref: struct });
  fc.assert(fc.property(alerts, (a) => {
    const outcome = fuzzRun(kind, (chart: Chart, p) => build(chart, p), a);
    if (outcome.kind === 'failure') throw new Error(`${failureClass(outcome.reason)}\n${outcome.reason}`);
  }), { seed: SEED, numRuns: RUNS * 3 });
  // the fuzz reaches rendered rules, not only refusals
  expect(outcomeCounts.get(kind)?.ok ?? 0).toBeGreaterThan(0);
});
