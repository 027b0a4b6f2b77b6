/**
 * Fuzz of every factory that takes options (fluent-bit inputs, filters, parsers and outputs, the
 * pod-option sources and volumes, the update strategy, the fleet's generator and stage), with
 * arguments derived from the jsii assembly's shapes (test/util/fuzz.ts's values where they exist):
 * half well-typed, half with a wrong type or an unknown key. The oracle is the agents' one: the
 * factory returns, or throws an Error naming itself (`FluentBitInput.tail: ...`); a fluent-bit piece
 * it returns then goes into a LogCollectorDaemonSet, which synthesizes valid, byte-identical YAML or
 * refuses with its own kind and path. A TypeError, or an Error naming nothing, fails.
 */
import { Chart, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import * as api from '../src';
import { anyValue, failureClass, fuzzRun, isRefusal, pick, thrownClass } from './util/fuzz';
import { validateManifests } from './util/manifests';
import { TYPES } from '../src/validation/struct-shapes.generated';
import { TypeRef } from '../src/validation/type-table';

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

/** An arbitrary value of a type from the generated shapes. */
function arbitraryOf(t: TypeRef, depth = 0): fc.Arbitrary<unknown> {
  if (typeof t === 'string') {
    switch (t) {
      case 'string': return pick('a', 'kube.*', 'log', '/var/log/app.log', '^(?<time>[^ ]+) (?<msg>.*)$', 'compression.codec', '', 'a b', 'a\nb', 'x'.repeat(300));
      case 'number': return pick(0, 1, 5, 30, 300, -1, 1.5, 1e21, Number.NaN);
      case 'boolean': return fc.boolean();
      default: return anyValue;
    }
  }
  if ('array' in t) return depth > 3 ? fc.constant([]) : fc.array(arbitraryOf(t.array, depth + 1), { maxLength: 2 });
  if ('map' in t) return depth > 3 ? fc.constant({}) : fc.dictionary(pick('a', 'b.c', 'Bad Key', 'toString'), arbitraryOf(t.map, depth + 1), { maxKeys: 2 });
  if ('union' in t) return fc.oneof(...t.union.map((u) => arbitraryOf(u, depth + 1)));
  const struct = TYPES.structs[t.ref];
  if (struct) {
    if (depth > 3) return fc.constant({});
    const fields = structFieldsOf(t.ref);
    const record: { [k: string]: fc.Arbitrary<unknown> } = {};
    for (const [name, field] of Object.entries(fields)) record[name] = arbitraryOf(field.type, depth + 1);
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
function fuzzed(t: TypeRef): fc.Arbitrary<unknown> {
  const good = arbitraryOf(t);
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
  const props = fuzzed({ ref: 'AgentFleetProps' });
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
        if (!/^(AgentFleet|FleetCluster |Validation failed with the following errors:\n {2}\[[^\]]*\] (AgentFleet|FleetCluster|NodeAgentDaemonSet) )/.test(e.message)) {
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
