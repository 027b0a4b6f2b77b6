/**
 * The runtime type checks come from the jsii assembly (projenrc/struct-shapes.ts writes
 * src/validation/struct-shapes.generated.ts from .jsii). These tests pin that the checked-in shapes are
 * the assembly's, that every struct of the assembly is checked on entry, and that a typo in any
 * construct's or factory's props is refused with the nearest known name.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as cdk8s from 'cdk8s';
import { App, Chart, Testing } from 'cdk8s';
import * as kplus from 'cdk8s-plus-28';
import * as constructsLib from 'constructs';
import { generate, GENERATED } from '../../projenrc/struct-shapes';
import * as api from '../../src';
import { nearestName, structFields, structNames } from '../../src/validation/struct-check';
import { TYPES } from '../../src/validation/struct-shapes.generated';
import { REPO } from '../util/paths';

const ROOT = REPO;
const ASSEMBLY = path.join(ROOT, '.jsii');

interface JsiiType { fqn: string; name: string; kind: string; datatype?: boolean }

function assemblyTypes(): JsiiType[] {
  if (!fs.existsSync(ASSEMBLY)) throw new Error('.jsii is missing: run `npx projen compile` first (the build does, before the tests)');
  return Object.values(JSON.parse(fs.readFileSync(ASSEMBLY, 'utf8')).types as { [fqn: string]: JsiiType });
}

test('the checked-in shapes are the ones the assembly gives (a stale file fails here and in the build)', () => {
  expect(fs.readFileSync(GENERATED, 'utf8')).toEqual(generate(ASSEMBLY));
});

test('the table is data: it loads no module of the package (the checks sit below every construct)', () => {
  const text = fs.readFileSync(GENERATED, 'utf8');
  expect(text).not.toMatch(/require\(/);
  expect(text.match(/^import .*$/gm)).toEqual(["import type { TypeTable } from './type-table';"]);
});

test("each enum's values in the table are the enum's own, in its order", () => {
  const exported = api as unknown as { [name: string]: unknown };
  const dependencies: { [lib: string]: unknown } = { 'cdk8s-plus-28': kplus, 'cdk8s': cdk8s, 'constructs': constructsLib };
  for (const [name, e] of Object.entries(TYPES.enums)) {
    const [lib, member] = name.includes('.') ? name.split('.') : [undefined, name];
    const real = (lib === undefined ? exported : dependencies[lib] as { [n: string]: unknown })[member] as { [m: string]: unknown };
    expect([name, e.values]).toEqual([name, e.members.map((m) => real[m])]);
  }
});

test("every class of the package carries its brand, which the type checks recognise it by (its subclasses' instances too)", () => {
  const exported = api as unknown as { [name: string]: { prototype: object } };
  const own = Object.entries(TYPES.classes).filter(([name]) => !name.includes('.'));
  expect(own.length).toBeGreaterThan(20);
  for (const [name, c] of own) {
    expect([name, (exported[name].prototype as { [k: symbol]: unknown })[Symbol.for(c.fqn)]]).toEqual([name, true]);
  }
  class Pace extends (api.UpdateStrategy as unknown as new () => object) {}
  expect((Object.create(Pace.prototype) as { [k: symbol]: unknown })[Symbol.for('cdk8s-node-agents.UpdateStrategy')]).toBe(true);
});

test('every struct of the assembly has a type check', () => {
  const structs = assemblyTypes().filter((t) => t.kind === 'interface' && t.datatype).map((t) => t.name).sort();
  expect(structs.length).toBeGreaterThan(50);
  for (const name of structs) {
    expect(structNames()).toContain(name);
    expect(Object.keys(structFields(name)).length).toBeGreaterThan(0);
  }
});

test('every struct of the assembly is reachable from a checked entry point (a constructor or a method parameter)', () => {
  const reached = new Set<string>();
  const visit = (t: unknown): void => {
    if (typeof t === 'string' || t === undefined) return;
    const ref = t as { array?: unknown; map?: unknown; union?: unknown[]; ref?: string };
    if (ref.array) visit(ref.array);
    if (ref.map) visit(ref.map);
    ref.union?.forEach(visit);
    if (ref.ref && TYPES.structs[ref.ref] && !reached.has(ref.ref)) {
      reached.add(ref.ref);
      for (const base of TYPES.structs[ref.ref].bases) visit({ ref: base });
      Object.values(TYPES.structs[ref.ref].fields).forEach((f) => visit(f.type));
    }
  };
  Object.values(TYPES.methods).forEach((params) => params.forEach((p) => visit(p.type)));
  // Outputs, never inputs: AgentFleet.synthFiles()' files, NodeAgentDaemonSet.hostPorts, AgentAdoption.leftovers;
  // ReleaseContext is an internal method's.
  const outputsOnly = ['AdoptionLeftover', 'AgentHostPort', 'FleetFile', 'KarpenterStartupTaint', 'ReleaseContext'];
  const unreached = assemblyTypes().filter((t) => t.kind === 'interface' && t.datatype && !reached.has(t.name) && !outputsOnly.includes(t.name));
  expect(unreached.map((t) => t.name)).toEqual([]);
});

test('nearestName finds the meant prop, and nothing when no name is near', () => {
  expect(nearestName('tolerateAllTaint', ['tolerateAllTaints', 'tolerations'])).toBe('tolerateAllTaints');
  expect(nearestName('memoryLimt', ['memoryLimit', 'memoryRequest', 'cpuLimit'])).toBe('memoryLimit');
  expect(nearestName('NAMESPACE', ['namespace', 'name'])).toBe('namespace');
  expect(nearestName('completelyDifferent', ['image', 'name'])).toBeUndefined();
});

// ---- a typo in each construct's props --------------------------------------------------------

const output = api.FluentBitOutput.stdout();
const constructs: [string, (chart: Chart, props: object) => unknown, object, string, string][] = [
  ['NodeAgentDaemonSet', (c, p) => new api.NodeAgentDaemonSet(c, 'agent', p as api.NodeAgentDaemonSetProps), { image: 'a:1', tolerateAllTaint: true },
    'NodeAgentDaemonSet chart/agent', 'prop tolerateAllTaint is not a prop of NodeAgentDaemonSetProps; did you mean tolerateAllTaints?'],
  ['LogCollectorDaemonSet', (c, p) => new api.LogCollectorDaemonSet(c, 'agent', p as api.LogCollectorDaemonSetProps), { outputs: [output], resources: { memoryLimt: '1Gi' } },
    'LogCollectorDaemonSet chart/agent', 'prop resources.memoryLimt is not a prop of AgentResources; did you mean memoryLimit?'],
  ['NodeExporterDaemonSet', (c, p) => new api.NodeExporterDaemonSet(c, 'agent', p as api.NodeExporterDaemonSetProps), { serviceMonitor: { intervl: '30s' } },
    'NodeExporterDaemonSet chart/agent', 'prop serviceMonitor.intervl is not a prop of NodeExporterServiceMonitorOptions; did you mean interval?'],
  ['GpuDriverDaemonSet', (c, p) => new api.GpuDriverDaemonSet(c, 'agent', p as api.GpuDriverDaemonSetProps), { image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04', tolerateControlPlan: true },
    'GpuDriverDaemonSet chart/agent', 'prop tolerateControlPlan is not a prop of GpuDriverDaemonSetProps; did you mean tolerateControlPlane?'],
  ['AgentAlerts', (c, p) => new api.AgentAlerts(c, 'agent', { ...p, agent: new api.NodeAgentDaemonSet(c, 'base', { image: 'a:1' }) } as api.AgentAlertsProps), { ruleLabel: { team: 'x' } },
    'AgentAlerts chart/agent', 'prop ruleLabel is not a prop of AgentAlertsProps; did you mean ruleLabels?'],
  ['NodeAgentDaemonSet (rollout)', (c, p) => new api.NodeAgentDaemonSet(c, 'agent', p as api.NodeAgentDaemonSetProps),
    { image: 'a:1', rollout: { waves: [api.RolloutWave.labelled('canary')], promoted: api.Promotion.all(), gate: [] } },
    'NodeAgentDaemonSet chart/agent', 'prop rollout.gate is not a prop of AgentRollout; did you mean gates?'],
];

test.each(constructs)('%s: a typo is refused with the nearest known prop', (_kind, build, props, where, message) => {
  const chart = new Chart(Testing.app(), 'chart');
  expect(() => build(chart, props)).toThrow(`${where}: ${message}`);
});

test('AgentFleet: a typo in its props and in a cluster\'s options is refused with the nearest known prop', () => {
  const agents = { addAgents: () => undefined };
  const repoUrl = 'https://git.example.com/fleet.git';
  expect(() => new api.AgentFleet({ agents, repoUrl, clusterWave: [] } as unknown as api.AgentFleetProps))
    .toThrow('AgentFleet: prop clusterWave is not a prop of AgentFleetProps; did you mean clusterWaves?');
  expect(() => new api.AgentFleet({ agents, repoUrl, clusters: [{ name: 'a', enviroment: 'prod', environment: 'prod', region: 'eu' }] } as unknown as api.AgentFleetProps))
    .toThrow('AgentFleet: prop clusters[0].enviroment is not a prop of FleetClusterOptions; did you mean environment?');
  const fleet = new api.AgentFleet({ agents, repoUrl });
  expect(() => fleet.addCluster({ name: 'b', environment: 'prod', region: 'eu', regoin: 'eu' } as unknown as api.FleetClusterOptions))
    .toThrow('AgentFleet: addCluster: prop regoin is not a prop of FleetClusterOptions; did you mean region?');
});

// ---- a typo in each factory's options ----------------------------------------------------------

/** A value of the parameter's type that passes its check (for the parameters that are not the options). */
function validArg(type: unknown): unknown {
  if (type === 'string') return 'canary';
  if (type === 'number') return 1;
  const t = type as { array?: unknown; ref?: string };
  if (t.array) return [validArg(t.array)];
  if (t.ref === 'NodeRequirement') return api.NodeRequirement.exists('example.com/x');
  if (t.ref === 'constructs.Construct') return new Chart(Testing.app(), 'chart');
  throw new Error(`no valid argument of ${JSON.stringify(type)}`);
}

/** The options of a method: the parameter that is a struct. */
function structParam(method: string): { index: number; struct: string } | undefined {
  const params = TYPES.methods[method];
  const index = params.findIndex((p) => typeof p.type !== 'string' && 'ref' in p.type && TYPES.structs[p.type.ref] !== undefined);
  return index < 0 ? undefined : { index, struct: (params[index].type as { ref: string }).ref };
}

// Methods whose options are checked where they are used, with that construct's path: the outputs
// through the collector, the GPU shapes through the driver, the releases through the construct they
// are the previous release of.
const CHECKED_WHERE_USED = /^(FluentBitOutput\.|GpuDriverShape\.|AgentRelease\.fromProps$|\w+DaemonSet\.release$)/;
// Instance methods and constructors of constructs: covered by their own tests above and below.
const INSTANCE = ['AgentFleet.addCluster', 'FleetCluster.addChart', 'GpuDriverDaemonSet.runbook', 'GpuDriverDaemonSet.runbookScript'];

const staticFactories = Object.keys(TYPES.methods).filter((m) => {
  const [cls, name] = m.split('.');
  return structParam(m) !== undefined && name !== 'constructor' && !CHECKED_WHERE_USED.test(m) && !INSTANCE.includes(m)
    && typeof (api as unknown as { [c: string]: { [n: string]: unknown } })[cls]?.[name] === 'function';
});

test('the factories with options are all covered here', () => {
  const withOptions = Object.keys(TYPES.methods).filter((m) => structParam(m) !== undefined && !m.endsWith('.constructor'));
  expect(withOptions.filter((m) => !staticFactories.includes(m) && !CHECKED_WHERE_USED.test(m) && !INSTANCE.includes(m))).toEqual([]);
  expect(staticFactories.length).toBeGreaterThan(20);
});

test.each(staticFactories)('%s: a typo in its options is refused with the nearest known option', (method) => {
  const [cls, name] = method.split('.');
  const { index, struct } = structParam(method)!;
  const field = Object.keys(structFields(struct)).sort()[0];
  const typo = `${field}x`;
  const args = TYPES.methods[method].map((p, i) => (i === index ? { [typo]: 'x' } : validArg(p.type)));
  const factory = (api as unknown as { [c: string]: { [n: string]: (...a: unknown[]) => unknown } })[cls][name];
  expect(() => factory(...args)).toThrow(`${method}: `);
  expect(() => factory(...args)).toThrow(`prop ${typo} is not a prop of ${struct}; did you mean ${field}?`);
});

test.each(Object.keys(TYPES.methods).filter((m) => m.startsWith('FluentBitOutput.')))('%s: a typo is reported by the collector using the output', (method) => {
  const name = method.split('.')[1];
  const out = (api.FluentBitOutput as unknown as { [n: string]: (o: object) => api.FluentBitOutput })[name]({ matc: 'kube.*' });
  const chart = new Chart(Testing.app(), 'chart');
  expect(() => new api.LogCollectorDaemonSet(chart, 'logs', { outputs: [out] })).toThrow(/^LogCollectorDaemonSet chart\/logs: [\s\S]*matc is not a prop of \w+OutputOptions; did you mean match\?/);
});

test('a previous release\'s props are checked like the current ones', () => {
  const chart = new Chart(Testing.app(), 'chart');
  const previous = api.AgentRelease.fromProps({ image: 'a:1', tolerateAllTaint: true } as unknown as api.NodeAgentDaemonSetProps);
  expect(() => new api.NodeAgentDaemonSet(chart, 'agent', {
    image: 'a:2', rollout: { waves: [api.RolloutWave.labelled('canary')], promoted: api.Promotion.through('canary'), previous },
  })).toThrow('NodeAgentDaemonSet chart/agent: rollout.previous: prop tolerateAllTaint is not a prop of NodeAgentDaemonSetProps; did you mean tolerateAllTaints?');
});

test('a typo in a GPU shape\'s options is reported by the driver using it', () => {
  const chart = new Chart(Testing.app(), 'chart');
  expect(() => new api.GpuDriverDaemonSet(chart, 'gpu', {
    image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04', shape: api.GpuDriverShape.driverContainer({ buildTimeSecond: 600 } as unknown as api.GpuDriverContainerOptions),
  })).toThrow('GpuDriverDaemonSet chart/gpu: prop shape.buildTimeSecond is not a prop of GpuDriverContainerOptions; did you mean buildTimeSeconds?');
});

test('the GPU runbook options are checked', () => {
  const chart = new Chart(Testing.app(), 'chart');
  const gpu = new api.GpuDriverDaemonSet(chart, 'gpu', { image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04' });
  expect(() => gpu.runbook({ grop: 'fleet' } as unknown as api.GpuDriverRunbookOptions))
    .toThrow('GpuDriverDaemonSet chart/gpu: runbook: prop grop is not a prop of GpuDriverRunbookOptions; did you mean group?');
});

test('a struct from JavaScript with a class instance where the struct wants it passes (the library\'s values are instances)', () => {
  const chart = new Chart(new App(), 'chart');
  expect(() => new api.NodeAgentDaemonSet(chart, 'agent', { image: 'a:1', env: { A: api.AgentEnvValue.fromValue('x') } })).not.toThrow();
});

test('a cdk8s-plus object where the library takes its own type is refused, naming both', () => {
  const chart = new Chart(new App(), 'chart');
  expect(() => new api.NodeAgentDaemonSet(chart, 'agent', { image: 'a:1', env: { A: kplus.EnvValue.fromValue('x') as any } })).toThrow(
    'prop env["A"] must be made with AgentEnvValue.fromConfigMap(), fromField(), fromSecret() or fromValue(), '
    + "got cdk8s-plus-28's EnvValue: props take the library's own types, not cdk8s-plus objects (of any major)");
  expect(() => new api.NodeAgentDaemonSet(chart, 'probe', { image: 'a:1', readiness: kplus.Probe.fromTcpSocket({ port: 80 }) as any }))
    .toThrow(/prop readiness must be made with AgentProbe.fromCommand\(\), fromHttpGet\(\) or fromTcpSocket\(\), got cdk8s-plus-28's Probe/);
});
