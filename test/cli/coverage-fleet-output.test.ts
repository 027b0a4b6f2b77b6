/**
 * `node-agents coverage` (and plan, estimate: they load manifests alike) pointed at a fleet's whole output
 * (examples/fleet/dist: one folder per cluster, each with the same DaemonSets) says to pass one cluster's folder.
 */
import { runCli } from '../../src/cli/run';
import { REPO } from '../util/paths';

function run(args: string[]): { code: number; out: string } {
  let out = '';
  const code = runCli(args, { stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (out += t) }, cwd: REPO });
  return { code, out };
}

test('a fleet\'s output: exit 2, pass one cluster folder', () => {
  const { code, out } = run(['coverage', '--nodes', 'examples/inventories/mixed-cluster.json', 'examples/fleet/dist']);
  expect(code).toBe(2);
  expect(out).toMatch(/as a fleet's output does \(one folder per cluster\): pass one cluster's folder, e\.g\. examples\/fleet\/dist\/clusters\/[a-z0-9-]+$/m);
});

test('one cluster folder of it is accepted', () => {
  const { out } = run(['coverage', '--nodes', 'examples/inventories/mixed-cluster.json', 'examples/fleet/dist/clusters/dev-eu-1']);
  expect(out).not.toMatch(/defined twice/);
});

test('the same file given twice still says to pass each manifest once', () => {
  const file = 'examples/migrate-from-helm/dist/2-adopt/logging.k8s.yaml';
  const { code, out } = run(['coverage', '--nodes', 'examples/inventories/mixed-cluster.json', file, file]);
  expect(code).toBe(2);
  expect(out).toMatch(/pass each manifest once/);
});
