/**
 * `plan --nodepools` models a NodePool's future node as Karpenter does: a set of requirements, not one labelled node
 * (issue #49). The table below is ported from kubernetes-sigs/karpenter pkg/scheduling/requirements_test.go,
 * Describe("Requirements") / Context("Compatibility"): It("should be compatible with well-known v1 labels undefined")
 * (Requirements.Compatible with AllowUndefinedWellKnownLabels, on topology.kubernetes.io/zone) and It("should be
 * strictly compatible") (a custom key; only the unconstrained row differs). Compatible ends in Requirements.Intersects,
 * so every cell whose key both sides define checks Intersects too.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import * as YAML from 'yaml';
import { FluentBitOutput, LogCollectorDaemonSet, NodeRequirement, Promotion, ResourceProfileNodes, RolloutWave } from '../../src';
import { compatible, requirementsOf } from '../../src/cli/capacity/karpenter-requirements';
import { runCli } from '../../src/cli/run';
import { NodeSelectorRequirementJson } from '../../src/scheduling/types';
import { synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';
import { rolloutStage } from '../util/plan';

const NAMES = ['unconstrained', 'exists', 'doesNotExist', 'inA', 'inB', 'inAB', 'notInA', 'in1', 'in9', 'in19', 'notIn12',
  'greaterThan1', 'greaterThan9', 'lessThan1', 'lessThan9'] as const;
type Name = typeof NAMES[number];

function requirements(key: string): Record<Name, NodeSelectorRequirementJson[]> {
  return {
    unconstrained: [],
    exists: [{ key, operator: 'Exists' }],
    doesNotExist: [{ key, operator: 'DoesNotExist' }],
    inA: [{ key, operator: 'In', values: ['A'] }],
    inB: [{ key, operator: 'In', values: ['B'] }],
    inAB: [{ key, operator: 'In', values: ['A', 'B'] }],
    notInA: [{ key, operator: 'NotIn', values: ['A'] }],
    in1: [{ key, operator: 'In', values: ['1'] }],
    in9: [{ key, operator: 'In', values: ['9'] }],
    in19: [{ key, operator: 'In', values: ['1', '9'] }],
    notIn12: [{ key, operator: 'NotIn', values: ['1', '2'] }],
    greaterThan1: [{ key, operator: 'Gt', values: ['1'] }],
    greaterThan9: [{ key, operator: 'Gt', values: ['9'] }],
    lessThan1: [{ key, operator: 'Lt', values: ['1'] }],
    lessThan9: [{ key, operator: 'Lt', values: ['9'] }],
  };
}

/** Rows: the node's requirements (the receiver of Compatible); columns: the pod's, in NAMES' order. 1: Succeed. */
const WELL_KNOWN_TABLE: Record<Name, string> = {
  unconstrained: '111111111111111',
  exists: '110111111111111',
  doesNotExist: '101000100010000',
  inA: '110101000010000',
  inB: '110011100010000',
  inAB: '110111100010000',
  notInA: '111011111111111',
  in1: '110000110100001',
  in9: '110000101111000',
  in19: '110000111111001',
  notIn12: '111111101111111',
  greaterThan1: '110000101111101',
  greaterThan9: '110000100011100',
  lessThan1: '110000100010011',
  lessThan9: '110000110111011',
};
/** "should be strictly compatible": a custom key the node leaves undefined must not be required. */
const STRICT_TABLE: Record<Name, string> = { ...WELL_KNOWN_TABLE, unconstrained: '101000100010000' };

describe.each([
  ['topology.kubernetes.io/zone', 'should be compatible with well-known v1 labels undefined', WELL_KNOWN_TABLE],
  ['example.com/custom', 'should be strictly compatible', STRICT_TABLE],
])('Requirements.Compatible on %s (requirements_test.go: %s)', (key, _it, table) => {
  const r = requirements(key);
  test.each(NAMES.map((n) => [n]))('%s.Compatible(each)', (node) => {
    const got = NAMES.map((pod) => (compatible(requirementsOf(r[node]), requirementsOf(r[pod])) ? '1' : '0')).join('');
    expect(got).toBe(table[node]);
  });
});

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: REPO });
  return { code, stdout, stderr };
}

const ZONE = 'topology.kubernetes.io/zone';
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodepools-requirements-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const FIXTURE = 'test/fixtures/nodepools/karpenter-3199';

function writeTree(name: string, props: Partial<ConstructorParameters<typeof LogCollectorDaemonSet>[2]>): string {
  const chart = new Chart(Testing.app(), 'logs');
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()], ...props });
  const file = path.join(dir, name);
  fs.writeFileSync(file, synthManifests(chart).map((m) => YAML.stringify(m)).join('---\n'));
  return file;
}

function poolsFile(): string {
  const file = path.join(dir, 'pools.yaml');
  fs.writeFileSync(file, YAML.stringify({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'general' },
    spec: { template: { spec: { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['c6i'] }] } } },
  }));
  return file;
}

function agents(tree: string, ...extra: string[]): string[][] {
  const r = run('plan', '--nodes', `${FIXTURE}/nodes.json`, '--before', tree, '--after', tree, '--nodepools', poolsFile(),
    '--instance-types', `${FIXTURE}/instance-types.yaml`, '--json', ...extra);
  expect(r.stderr).toBe('');
  return JSON.parse(r.stdout).nodePools.pools[0].instanceTypes.map((t: { agents: { daemonSet: string }[] }) => t.agents.map((a) => a.daemonSet));
}

describe('issue #49: zone waves on a NodePool with no zone requirement', () => {
  test('a log collector with RolloutWave.matching on the zone: Karpenter counts the wave\'s DaemonSet (In [zone]) and the fleet\'s (NotIn [zones])', () => {
    const tree = writeTree('zone-waves.yaml', {
      rollout: rolloutStage([RolloutWave.matching('zone-a', NodeRequirement.in(ZONE, ['us-east-1a']))], Promotion.all(), undefined),
    });
    const docs = YAML.parseAllDocuments(fs.readFileSync(tree, 'utf-8')).map((d) => d.toJS()).filter((d) => d.kind === 'DaemonSet');
    expect(docs).toHaveLength(2);
    for (const types of agents(tree)) expect(types).toEqual(['observability/log-collector', 'observability/log-collector-zone-a']);
  });
});

describe('issue #49: --karpenter-version, resource profiles on one pool (kubernetes-sigs/karpenter#2975, released in v1.14)', () => {
  const tree = () => writeTree('profiles.yaml', {
    resourceProfiles: [{ name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 16 }), resources: { memoryRequest: '450Mi', memoryLimit: '1Gi' } }],
  });
  const BOTH = ['observability/log-collector', 'observability/log-collector-large'];

  test('1.14 and later (the default): each instance type counts the profile matching it', () => {
    expect(agents(tree())).toEqual([['observability/log-collector'], ['observability/log-collector-large'], ['observability/log-collector-large']]);
    expect(agents(tree(), '--karpenter-version', '1.14')).toEqual(agents(tree()));
    expect(agents(tree(), '--karpenter-version', 'v1.15.2')).toEqual(agents(tree()));
  });

  test('up to 1.13: every profile\'s DaemonSet the pool\'s template allows, summed on every type', () => {
    expect(agents(tree(), '--karpenter-version', '1.13')).toEqual([BOTH, BOTH, BOTH]);
    expect(agents(tree(), '--karpenter-version', 'v1.12.0')).toEqual([BOTH, BOTH, BOTH]);
  });

  test('the output says which version it models', () => {
    const args = ['plan', '--nodes', `${FIXTURE}/nodes.json`, '--before', tree(), '--after', tree(), '--nodepools', poolsFile(),
      '--instance-types', `${FIXTURE}/instance-types.yaml`];
    expect(run(...args).stdout).toContain('daemonset overhead as Karpenter 1.14 and later counts it: per instance type (--karpenter-version)');
    expect(run(...args, '--karpenter-version', '1.13').stdout).toContain('as Karpenter up to 1.13 counts it: per pool, every DaemonSet its template allows');
    expect(JSON.parse(run(...args, '--json', '--karpenter-version', '1.13').stdout).nodePools.karpenterVersion).toBe('1.13');
    expect(run(...args, '--markdown').stdout).toContain('daemonset overhead as Karpenter 1\\.14 and later');
  });

  test('in plan\'s and size\'s --help', () => {
    for (const command of ['plan', 'size']) expect(run(command, '--help').stdout).toContain('--karpenter-version 1.13|1.14');
  });

  test('a bad version: exit 2; without --nodepools: exit 2', () => {
    const bad = run('plan', '--nodes', `${FIXTURE}/nodes.json`, '--before', tree(), '--after', tree(), '--nodepools', poolsFile(),
      '--instance-types', `${FIXTURE}/instance-types.yaml`, '--karpenter-version', '0.37');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--karpenter-version "0.37" is not a Karpenter v1 version such as 1.13 or 1.14');
    expect(run('plan', '--nodes', `${FIXTURE}/nodes.json`, '--before', tree(), '--after', tree(), '--karpenter-version', '1.13').stderr)
      .toContain('--karpenter-version goes with --nodepools');
  });
});
