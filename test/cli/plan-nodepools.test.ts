/**
 * `plan --nodepools`: the agents on the nodes Karpenter NodePools would launch, before the nodes exist. The fixtures
 * reproduce aws/karpenter-provider-aws#3199 (a LimitRange filling in requests the DaemonSet's template leaves unset:
 * 630m counted, 1630m requested, a 15-CPU pod on a 16-CPU type) and kubernetes-sigs/karpenter#1749 (agents
 * tolerating every taint on a tainted GPU pool).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { App, Chart, Testing } from 'cdk8s';
import * as YAML from 'yaml';
import { FluentBitOutput, LogCollectorDaemonSet, ResourceProfileNodes } from '../../src';
import { formulaAllocatable, instanceTypeLabels, InstanceTypeInfo } from '../../src/cli/capacity/instance-types';
import { admittedPodSpec } from '../../src/cli/capacity/limit-range';
import { podRequests } from '../../src/cli/capacity/resources';
import { runCli } from '../../src/cli/run';
import { synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';

const ROOT = REPO;
const FIXTURES = 'test/fixtures/nodepools';
const MiB = 2 ** 20;

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: ROOT });
  return { code, stdout, stderr };
}

function planFixture(name: string, ...extra: string[]) {
  const d = `${FIXTURES}/${name}`;
  return run('plan', '--nodes', `${d}/nodes.json`, '--before', `${d}/before.yaml`, '--after', `${d}/after.yaml`, '--nodepools', `${d}/nodepools.yaml`,
    '--instance-types', `${d}/instance-types.yaml`, ...extra);
}

function json(name: string, ...extra: string[]) {
  const r = planFixture(name, '--json', ...extra);
  return { ...r, doc: JSON.parse(r.stdout) };
}

const type = (name: string, vcpu: number, memoryMiB: number, maxPods?: number, arch = 'amd64'): InstanceTypeInfo => ({ name, vcpu, memoryMiB, maxPods, arch, labels: {} });

describe('allocatable from Karpenter\'s AWS formula (aws/karpenter-provider-aws pkg/providers/instancetype/types.go)', () => {
  test.each([
    // kubeReservedResources: 6% of the first core, 1% of the second, 0.5% of cores 3-4, 0.25% of the rest
    [1, 1000 - 60], [2, 2000 - 70], [4, 4000 - 80], [16, 16000 - 110], [96, 96000 - 310],
  ])('cpu of %i vCPUs: %i m', (vcpu, cpu) => {
    expect(formulaAllocatable(type('x.large', vcpu, 8192, 29)).cpu).toBe(cpu);
  });

  test('memory: capacity minus the 7.5% VM overhead (memory), 11 MiB per ENI-limited pod + 255 MiB (kubeReservedResources), 100Mi eviction (evictionThreshold)', () => {
    // c6i.4xlarge: 32768 - ceil(2457.6) = 30310 MiB; 11 × 234 + 255 = 2829; 100
    expect(formulaAllocatable(type('c6i.4xlarge', 16, 32768, 234)).memory).toBe((30310 - 2829 - 100) * MiB);
    // arm64: 64 MiB of CMA off first
    expect(formulaAllocatable(type('m7g.large', 2, 8192, 29, 'arm64')).memory).toBe((8128 - Math.ceil(8128 * 0.075) - (11 * 29 + 255) - 100) * MiB);
  });

  test('the NodeClass\'s kubelet settings: maxPods, kubeReserved, systemReserved, evictionHard (a percentage of capacity)', () => {
    const a = formulaAllocatable(type('c6i.4xlarge', 16, 32768, 234), {
      maxPods: 110, kubeReserved: { cpu: '200m' }, systemReserved: { memory: '500Mi' }, evictionHard: { 'memory.available': '5%' },
    });
    expect(a.pods).toBe(110);
    expect(a.cpu).toBe(16000 - 200);
    // kube-reserved memory still from the ENI-limited pods (the AL2023 family's ENI-limited memory overhead)
    expect(a.memory).toBe(30310 * MiB - 2829 * MiB - 500 * MiB - Math.ceil((30310 * MiB / 100) * 5));
  });

  test('labels of a node of the type (computeRequirements)', () => {
    expect(instanceTypeLabels(type('c6i.4xlarge', 16, 32768))).toMatchObject({
      'node.kubernetes.io/instance-type': 'c6i.4xlarge',
      'karpenter.k8s.aws/instance-cpu': '16',
      'karpenter.k8s.aws/instance-memory': '32768',
      'karpenter.k8s.aws/instance-category': 'c',
      'karpenter.k8s.aws/instance-generation': '6',
      'karpenter.k8s.aws/instance-family': 'c6i',
      'karpenter.k8s.aws/instance-size': '4xlarge',
    });
  });
});

describe('LimitRange defaults (plugin/pkg/admission/limitranger/admission.go; pkg/apis/core/v1/defaults.go)', () => {
  const defaults = { requests: { cpu: '500m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' }, from: ['ns/defaults'] };
  const requests = (resources: object) => podRequests(admittedPodSpec({ containers: [{ name: 'c', resources }] }, defaults));

  test('no resources: the default request', () => expect(requests({})).toEqual({ cpu: 500, memory: 512 * MiB }));
  test('a limit alone: requests its own limit (pod defaulting comes first)', () => expect(requests({ limits: { cpu: '2' } })).toEqual({ cpu: 2000, memory: 512 * MiB }));
  test('a request given: kept', () => expect(requests({ requests: { cpu: '100m', memory: '64Mi' } })).toEqual({ cpu: 100, memory: 64 * MiB }));
});

describe('aws/karpenter-provider-aws#3199: a LimitRange fills in requests Karpenter does not count', () => {
  const r = json('karpenter-3199');
  const pool = r.doc.nodePools.pools[0];
  const smallest = pool.instanceTypes[0];

  test('the pool may launch the 16- and 32-vCPU types of categories c, m, r, not c6i.large', () => {
    expect(pool.instanceTypes.map((t: { name: string }) => t.name)).toEqual(['c6i.4xlarge', 'm6i.4xlarge', 'r6i.4xlarge', 'c6i.8xlarge']);
  });

  test('1630m requested against 630m counted, on c6i.4xlarge\'s 15890m', () => {
    expect(smallest).toMatchObject({ name: 'c6i.4xlarge', source: 'formula', requests: { cpu: 1630, pods: 9 }, karpenterRequests: { cpu: 630 } });
    expect(smallest.allocatable.cpu).toBe(15890);
  });

  test('flagged: a 15-CPU pod lies in the range that loops create → retire → create (an error: the DaemonSet is new)', () => {
    expect(r.code).toBe(1);
    const f = r.doc.nodePools.findings.find((x: { cause: string }) => x.cause === 'limit-range');
    expect(f).toMatchObject({ severity: 'error', daemonSets: ['monitoring/datadog'], instanceTypes: ['c6i.4xlarge'] });
    expect(f.message).toContain('a pod requesting more than 14260m and at most 15260m cpu makes Karpenter launch a node it never fits on');
    expect(15000).toBeGreaterThan(14260);
    expect(15000).toBeLessThanOrEqual(15260);
  });

  test('the text and markdown say so too', () => {
    expect(planFixture('karpenter-3199').stdout).toContain('! [node-pool limit-range] NodePool default: monitoring/datadog leaves requests unset');
    expect(planFixture('karpenter-3199', '--markdown').stdout).toContain('❌ **node-pool** (limit\\-range): NodePool default\\: monitoring\\/datadog');
  });

  test('an agent that has pods already: a warning (Karpenter reads a pod of the DaemonSet when there is one)', () => {
    const d = `${FIXTURES}/karpenter-3199`;
    const same = run('plan', '--nodes', `${d}/nodes.json`, '--before', `${d}/after.yaml`, '--after', `${d}/after.yaml`, '--nodepools', `${d}/nodepools.yaml`,
      '--instance-types', `${d}/instance-types.yaml`, '--json');
    expect(JSON.parse(same.stdout).nodePools.findings.map((x: { severity: string; cause: string }) => `${x.severity} ${x.cause}`)).toEqual(['warning limit-range']);
    expect(same.code).toBe(0);
  });
});

describe('kubernetes-sigs/karpenter#1749: agents tolerating every taint on a tainted GPU pool', () => {
  const r = json('karpenter-1749');
  const pool = r.doc.nodePools.pools[0];

  test('they count in the pool\'s overhead beside the agent tolerating the GPU taint by key; the one tolerating nothing does not', () => {
    const g5 = pool.instanceTypes[0];
    expect(g5.name).toBe('g5.xlarge');
    expect(g5.agents.map((a: { daemonSet: string }) => a.daemonSet)).toEqual([
      'gpu-monitoring/dcgm-exporter', 'kube-system/aws-node', 'kube-system/ebs-csi-node', 'kube-system/eks-pod-identity-agent', 'kube-system/kube-proxy',
    ]);
    expect(g5.requests).toEqual({ cpu: 680, memory: (1024 + 40 + 120 + 32 + 64) * MiB, pods: 5 });
  });

  test('flagged: a warning naming the agents that tolerate every taint', () => {
    const f = r.doc.nodePools.findings.find((x: { cause: string }) => x.cause === 'exists-toleration');
    expect(f).toMatchObject({ severity: 'warning', pool: 'gpu', daemonSets: ['kube-system/aws-node', 'kube-system/ebs-csi-node', 'kube-system/eks-pod-identity-agent', 'kube-system/kube-proxy'] });
    expect(f.message).toContain('kubernetes-sigs/karpenter#1749');
  });

  test('a startup taint delays the agent that does not tolerate it, and does not take it out of the overhead (isDaemonPodCompatible reads taints only)', () => {
    expect(pool.instanceTypes[0].startupWaits).toEqual(['gpu-monitoring/dcgm-exporter']);
  });

  test('the NodeClass\'s kubelet settings size the GPU types (maxPods 58, system-reserved 100m / 200Mi)', () => {
    const memory = (16384 - Math.ceil(16384 * 0.075) - (11 * 58 + 255) - 200 - 100) * MiB;
    expect(pool.instanceTypes[0].allocatable).toEqual({ cpu: 4000 - 80 - 100, memory, pods: 58 });
  });
});

describe('findings on hand-made pools', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodepools-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, docs: object[]) => {
    fs.writeFileSync(path.join(dir, name), docs.map((d) => YAML.stringify(d)).join('---\n'));
    return path.join(dir, name);
  };
  const pool = (name: string, requirements: object[], labels: object = {}) => ({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: { template: { metadata: { labels }, spec: { nodeClassRef: { group: 'karpenter.k8s.aws', kind: 'EC2NodeClass', name: 'default' }, requirements } } },
  });
  const catalog = {
    apiVersion: 'node-agents.cdk8s.io/v1alpha1',
    kind: 'InstanceTypeCatalog',
    instanceTypes: [{ name: 't3.micro', vcpu: 2, memoryMiB: 1024, maxPods: 4 }, { name: 'm7i.large', vcpu: 2, memoryMiB: 8192, maxPods: 29 },
      { name: 'm7i.4xlarge', vcpu: 16, memoryMiB: 65536, maxPods: 234 }],
  };
  const tree = path.join(ROOT, FIXTURES, 'karpenter-3199/before.yaml');
  const nodes = path.join(ROOT, FIXTURES, 'karpenter-3199/nodes.json');
  const catalogFile = () => write('catalog.yaml', [catalog]);
  const plan = (pools: string, ...extra: string[]) => {
    const r = run('plan', '--nodes', nodes, '--before', tree, '--after', tree, '--nodepools', pools, '--instance-types', catalogFile(), '--json', ...extra);
    return { ...r, findings: r.code === 2 ? [] : JSON.parse(r.stdout).nodePools.findings };
  };

  test('agents-do-not-fit: a type the agents alone overfill (t3.micro: 1 GiB, 4 pods)', () => {
    const r = plan(write('tiny.yaml', [pool('burst', [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['t3', 'm7i'] }])]));
    expect(r.code).toBe(1);
    const f = r.findings.find((x: { cause: string }) => x.cause === 'agents-do-not-fit');
    expect(f.instanceTypes).toEqual(['t3.micro']);
    expect(f.message).toContain('(t3.micro: memory: the agents request 596Mi of 548Mi allocatable; pods: the agents request 8 of 4 allocatable');
  });

  test('overhead-share: over --max-overhead (default 25%) of the smallest type the agents fit on', () => {
    const pools = write('general.yaml', [pool('general', [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7i'] }])]);
    expect(plan(pools, '--max-overhead', '30').findings).toEqual([]);
    const r = plan(pools);
    expect(r.code).toBe(1);
    expect(r.findings[0]).toMatchObject({ cause: 'overhead-share', instanceTypes: ['m7i.large'] });
    expect(r.findings[0].message).toContain('530m cpu (27.5%) and 596Mi memory (8.6%) of its allocatable, more than 25% (--max-overhead)');
  });

  test('existing-nodes (kubernetes-sigs/karpenter#731): the agents alone overfill a node the pool launched before', () => {
    const small = path.join(dir, 'nodes.json');
    fs.writeFileSync(small, JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [{
        apiVersion: 'v1',
        kind: 'Node',
        metadata: { name: 'ip-10-0-9-9.ec2.internal', labels: { 'kubernetes.io/os': 'linux', 'karpenter.sh/nodepool': 'general', 'node.kubernetes.io/instance-type': 'm7i.large' } },
        status: { conditions: [{ type: 'Ready', status: 'True' }], allocatable: { cpu: '500m', memory: '4Gi', pods: '29' } },
      }],
    }));
    const pools = write('general2.yaml', [pool('general', [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7i'] }])]);
    const r = run('plan', '--nodes', small, '--before', tree, '--after', tree, '--nodepools', pools, '--instance-types', catalogFile(), '--json');
    const f = JSON.parse(r.stdout).nodePools.findings.find((x: { cause: string }) => x.cause === 'existing-nodes');
    expect(f).toMatchObject({ severity: 'error', nodes: ['ip-10-0-9-9.ec2.internal'] });
    expect(f.message).toContain('kubernetes-sigs/karpenter#731');
    // the measured allocatable of an inventory node of the type wins over the formula
    expect(JSON.parse(r.stdout).nodePools.pools[0].instanceTypes[0].source).toBe('node ip-10-0-9-9.ec2.internal');
  });

  test('no instance type of the catalog: a warning, not a silent pass', () => {
    const r = plan(write('none.yaml', [pool('arm', [{ key: 'kubernetes.io/arch', operator: 'In', values: ['arm64'] }])]));
    expect(r.findings.map((x: { cause: string }) => x.cause)).toEqual(['no-instance-type']);
  });

  test('bad input: exit 2 naming the file and field, never a stack', () => {
    const bad = [
      [[{ ...pool('x', []), spec: { template: { spec: { taints: [{ key: 'a', effect: 'Sometimes' }] } } } }], /spec.template.spec.taints\[0\].effect must be/],
      [[pool('x', [{ key: 'karpenter.k8s.aws/instance-cpu', operator: 'Gt', values: ['many'] }])], /Gt takes exactly one integer value/],
      [[pool('x', []), { ...catalog, instanceTypes: [{ name: 'm7i.large', vcpu: 'two', memoryMiB: 8192 }] }], /instanceTypes\[0\].vcpu must be a whole number/],
      [[{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } }], /no NodePool/],
    ] as const;
    bad.forEach(([docs, message], i) => {
      const r = plan(write(`bad-${i}.yaml`, docs as unknown as object[]));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
    expect(run('plan', '--nodes', nodes, '--before', tree, '--after', tree, '--instance-types', 'x.yaml').stderr).toContain('--instance-types goes with --nodepools');
    expect(run('plan', '--nodes', nodes, '--before', tree, '--after', tree, '--nodepools', 'x', '--max-overhead', '0').code).toBe(2);
    expect(run('plan', '--nodes', nodes, '--before', tree, '--after', tree, '--nodepools', '/dev/zero').stderr).not.toMatch(/\n\s+at /);
  });
});

describe('issue #52: the catalog in a file of its own; the old form (in the --nodepools file) still read, with a warning', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodepools-old-form-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const d = `${FIXTURES}/karpenter-3199`;

  test('the fixture\'s NodePools and catalog in one file: the same pools, and a warning saying to move the catalog', () => {
    const together = path.join(dir, 'together.yaml');
    fs.writeFileSync(together, `${fs.readFileSync(path.join(ROOT, d, 'nodepools.yaml'), 'utf-8')}---\n${fs.readFileSync(path.join(ROOT, d, 'instance-types.yaml'), 'utf-8')}`);
    const old = run('plan', '--nodes', `${d}/nodes.json`, '--before', `${d}/before.yaml`, '--after', `${d}/after.yaml`, '--nodepools', together, '--json');
    const now = json('karpenter-3199');
    const oldDoc = JSON.parse(old.stdout).nodePools;
    expect(oldDoc.pools).toEqual(now.doc.nodePools.pools);
    expect(oldDoc.findings[0]).toMatchObject({ severity: 'warning', cause: 'catalog-in-nodepools' });
    expect(oldDoc.findings[0].message).toContain('the InstanceTypeCatalog is read from the --nodepools input, among cluster manifests');
    expect(oldDoc.findings[0].fix).toContain('pass it with --instance-types FILE');
    expect(oldDoc.findings.slice(1)).toEqual(now.doc.nodePools.findings);
    expect(old.code).toBe(now.code);
    expect(now.doc.nodePools.findings.map((f: { cause: string }) => f.cause)).not.toContain('catalog-in-nodepools');
    const text = run('plan', '--nodes', `${d}/nodes.json`, '--before', `${d}/before.yaml`, '--after', `${d}/after.yaml`, '--nodepools', together);
    expect(text.stdout).toContain('~ [node-pool catalog-in-nodepools]');
  });

  test('the fixtures\' nodepools.yaml files hold cluster manifests only', () => {
    for (const name of ['karpenter-3199', 'karpenter-1749']) {
      const text = fs.readFileSync(path.join(ROOT, FIXTURES, name, 'nodepools.yaml'), 'utf-8');
      expect(YAML.parseAllDocuments(text).map((doc) => (doc.toJS() as { metadata?: { name?: string } }).metadata?.name)).not.toContain(undefined);
      expect(text).not.toContain('InstanceTypeCatalog');
    }
  });
});

describe('the matching resource profile sizes each instance type', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodepools-profiles-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const chart = new Chart(Testing.app(), 'logs');
  new LogCollectorDaemonSet(chart, 'logs', {
    outputs: [FluentBitOutput.stdout()],
    resourceProfiles: [{ name: 'large', nodes: ResourceProfileNodes.instanceCpu({ min: 16 }), resources: { memoryRequest: '450Mi', memoryLimit: '1Gi' } }],
  });
  fs.writeFileSync(path.join(dir, 'logs.yaml'), synthManifests(chart).map((m) => YAML.stringify(m)).join('---\n'));
  void App;
  const d = `${FIXTURES}/karpenter-3199`;

  test('c6i.4xlarge gets the large profile\'s DaemonSet, listed with --cost', () => {
    const r = run('plan', '--nodes', `${d}/nodes.json`, '--before', path.join(dir, 'logs.yaml'), '--after', path.join(dir, 'logs.yaml'),
      '--nodepools', `${d}/nodepools.yaml`, '--instance-types', `${d}/instance-types.yaml`, '--cost');
    expect(r.stdout).toContain('c6i.4xlarge: observability/log-collector-large (profile large) 100m/450Mi');
    const j = JSON.parse(run('plan', '--nodes', `${d}/nodes.json`, '--before', path.join(dir, 'logs.yaml'), '--after', path.join(dir, 'logs.yaml'),
      '--nodepools', `${d}/nodepools.yaml`, '--instance-types', `${d}/instance-types.yaml`, '--json').stdout);
    expect(j.nodePools.pools[0].instanceTypes.map((t: { agents: { profile: string }[] }) => t.agents.map((a) => a.profile))).toEqual([['large'], ['large'], ['large'], ['large']]);
  });
});

describe('issue #52: the catalog is bounded and read in time linear in its instance types', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nodepools-scale-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const d = path.join(ROOT, FIXTURES, 'karpenter-3199');
  const pools = path.join(dir, 'pools.yaml');
  fs.writeFileSync(pools, YAML.stringify({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: 'wide' },
    spec: { template: { spec: { requirements: [{ key: 'karpenter.k8s.aws/instance-family', operator: 'In', values: ['m7i'] }] } } },
  }));
  /** A catalog of `count` types the pool may launch, as JSON (a YAML document). */
  const catalog = (count: number) => {
    const file = path.join(dir, `catalog-${count}.json`);
    const instanceTypes = Array.from({ length: count }, (_, i) => ({ name: `m7i.s${i}`, vcpu: 2 + (i % 64), memoryMiB: 8192 + i, maxPods: 29 }));
    fs.writeFileSync(file, JSON.stringify({ apiVersion: 'node-agents.cdk8s.io/v1alpha1', kind: 'InstanceTypeCatalog', instanceTypes }));
    return file;
  };
  const plan = (types: string, ...extra: string[]) => run('plan', '--nodes', `${d}/nodes.json`, '--before', `${d}/before.yaml`, '--after', `${d}/after.yaml`,
    '--nodepools', pools, '--instance-types', types, '--json', ...extra);
  const timed = (types: string, ...extra: string[]) => {
    const start = process.hrtime.bigint();
    const r = plan(types, ...extra);
    return { r, ms: Number(process.hrtime.bigint() - start) / 1e6 };
  };

  test('more types than --max-instance-types (default 5000): exit 2 naming the limit and the flag', () => {
    const r = plan(catalog(5_001));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('the instance type catalog lists more than 5000 instance types, the most read (--max-instance-types N raises the limit)');
    expect(plan(catalog(5_001), '--max-instance-types', 'many').stderr).toContain('--max-instance-types "many" is not a whole number');
    expect(run('plan', '--nodes', `${d}/nodes.json`, '--before', `${d}/before.yaml`, '--after', `${d}/after.yaml`, '--max-instance-types', '9').stderr)
      .toContain('--max-instance-types goes with --nodepools');
  });

  test('20,000 types (--max-instance-types 20000) finish, in time about 10 × that of 2,000 (it was quadratic: 10,000 took 20 s)', () => {
    const small = catalog(2_000);
    const large = catalog(20_000);
    timed(small); // warm-up: the first run compiles the code paths
    const a = timed(small);
    const b = timed(large, '--max-instance-types', '20000');
    expect(a.r.code).not.toBe(2);
    expect(b.r.code).not.toBe(2);
    expect(JSON.parse(b.r.stdout).nodePools.pools[0].instanceTypes).toHaveLength(20_000);
    // linear: ~10; quadratic: ~100
    expect(b.ms / a.ms).toBeLessThan(30);
  }, 120_000);
});
