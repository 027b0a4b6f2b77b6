/**
 * examples/log-collector-profiles: the log collector sized by instance size across three Karpenter NodePools, with
 * canary waves. Its committed YAML is checked by examples.test.ts; here, what it does on the example's nodes and on
 * the nodes its NodePools would launch (`plan --nodepools` on the committed NodePool fixture).
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseManifestText } from '../../src/cli/coverage/manifests';
import { runCli } from '../../src/cli/run';
import { REPO } from '../util/paths';

const ROOT = REPO;
const DIR = 'examples/log-collector-profiles';

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: ROOT });
  return { code, stdout, stderr };
}

test('coverage: every node runs exactly one collector, of its size and wave', () => {
  const r = run('coverage', '--nodes', `${DIR}/nodes.json`, `${DIR}/dist`, '--json');
  expect(r.code).toBe(0);
  const report = JSON.parse(r.stdout);
  const groups = Object.fromEntries(report.agents[0].nodes.map((n: { node: string; owners: string[] }) => [n.node.split('.')[0], n.owners]));
  expect(groups).toEqual({
    'ip-10-0-1-11': ['observability/log-collector-canary'], // m7i.large, 2 vCPUs
    'ip-10-0-1-12': ['observability/log-collector-wave-1'], // m7i.xlarge, 4 vCPUs
    'ip-10-0-1-13': ['observability/log-collector-medium-wave-1'], // m7i.4xlarge, 16
    'ip-10-0-2-21': ['observability/log-collector-medium-canary'], // c7i.2xlarge, 8
    'ip-10-0-2-22': ['observability/log-collector-large-canary'], // c7i.8xlarge, 32
    'ip-10-0-2-23': ['observability/log-collector-large-wave-1'], // c7i.12xlarge, 48
    'ip-10-0-3-31': ['observability/log-collector'], // g5.xlarge, 4, tainted nvidia.com/gpu
  });
});

test('plan --nodepools on the committed NodePools: each type the pools may launch gets the profile of its size', () => {
  const r = run('plan', '--nodes', `${DIR}/nodes.json`, '--before', `${DIR}/dist`, '--after', `${DIR}/dist`, '--nodepools', `${DIR}/nodepools.yaml`,
    '--instance-types', `${DIR}/instance-types.yaml`, '--json');
  expect(r.code).toBe(0);
  type Pool = { name: string; instanceTypes: { name: string; agents: { profile: string }[]; shortfall: string[] }[] };
  const pools = JSON.parse(r.stdout).nodePools.pools as Pool[];
  const profilesOf = (p: Pool) => Object.fromEntries(p.instanceTypes.map((t) => [t.name, t.agents.map((a) => a.profile)]));
  const sizes = Object.fromEntries(pools.map((p) => [p.name, profilesOf(p)]));
  expect(sizes).toEqual({
    compute: { 'c7i.2xlarge': ['medium'], 'c7i.4xlarge': ['medium'], 'c7i.8xlarge': ['large'], 'c7i.12xlarge': ['large'] },
    general: { 'm7i.large': ['default'], 'm7i.xlarge': ['default'], 'm7i.2xlarge': ['medium'], 'm7i.4xlarge': ['medium'] },
    gpu: { 'g5.xlarge': ['default'], 'g5.2xlarge': ['medium'], 'g5.12xlarge': ['large'] },
  });
  expect(pools.every((p) => p.instanceTypes.every((t) => t.shortfall.length === 0))).toBe(true);
  // the collector tolerates every taint, so it runs on the GPU pool: said, as a warning
  expect(JSON.parse(r.stdout).nodePools.findings.map((f: { severity: string; cause: string; pool: string }) => `${f.severity} ${f.cause} ${f.pool}`))
    .toEqual(['warning exists-toleration gpu']);
});

test('plan --cost: the requests per instance type are those of the profile matching it', () => {
  const r = run('plan', '--nodes', `${DIR}/nodes.json`, '--before', `${DIR}/dist`, '--after', `${DIR}/dist`, '--cost', '--json');
  const after = JSON.parse(r.stdout).cost[1].rows as { instanceType: string; nodes: number; requests: { memory: number } }[];
  const memory = Object.fromEntries(after.map((row) => [row.instanceType, row.requests.memory / row.nodes / 2 ** 20]));
  expect(memory).toEqual({
    'c7i.12xlarge': 450, 'c7i.2xlarge': 350, 'c7i.8xlarge': 450, 'g5.xlarge': 256, 'm7i.4xlarge': 350, 'm7i.large': 256, 'm7i.xlarge': 256,
  });
});

test('issue #52: nodepools.yaml holds cluster manifests only (each with metadata.name); the catalog has a file of its own', () => {
  const docs = parseManifestText(fs.readFileSync(path.join(ROOT, DIR, 'nodepools.yaml'), 'utf-8'), 'nodepools.yaml');
  expect(docs.map((d) => `${d.object.apiVersion} ${d.object.kind}`)).toEqual([
    'karpenter.sh/v1 NodePool', 'karpenter.sh/v1 NodePool', 'karpenter.sh/v1 NodePool', 'karpenter.k8s.aws/v1 EC2NodeClass',
  ]);
  expect(docs.every((d) => typeof d.object.metadata?.name === 'string')).toBe(true);
  const catalog = parseManifestText(fs.readFileSync(path.join(ROOT, DIR, 'instance-types.yaml'), 'utf-8'), 'instance-types.yaml');
  expect(catalog.map((d) => d.object.kind)).toEqual(['InstanceTypeCatalog']);
  // the main.ts comment's command names both files
  expect(fs.readFileSync(path.join(ROOT, DIR, 'main.ts'), 'utf-8')).toContain('--instance-types examples/log-collector-profiles/instance-types.yaml');
});
