/**
 * Noise that hides findings (issue: verdicts round 3, case 8): one version written two ways is one version.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { list, node } from './util/cluster';
import { Manifest } from './util/manifests';
import { daemonSet } from './util/plan';
import { runCli } from '../src/cli/run';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'plan-noise-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(name: string, value: unknown): string {
  fs.writeFileSync(path.join(dir, name), JSON.stringify(value));
  return name;
}

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
  return { code, stdout, stderr };
}

function exporter(version: string, image: string): Manifest {
  const ds = daemonSet('node-exporter', { image });
  ds.metadata.labels['app.kubernetes.io/version'] = version;
  return ds;
}

test.each([
  ['1.12.1', 'v1.12.1', 'v1.12.1'],
  ['v1.12.1', '1.12.1', '1.12.1'],
  ['1.12.1', 'v1.13.0', '1.12.1 -> v1.13.0'],
  ['version-1', 'ersion-1', 'version-1 -> ersion-1'],
])('VERSION column: %s then %s reads %s', (before, after, shown) => {
  write('nodes.json', list([node('n1')]));
  write('before.json', list([exporter(before, 'example.com/node-exporter:1')]));
  write('after.json', list([exporter(after, 'example.com/node-exporter:2')]));
  const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json');
  expect(r.stderr).toBe('');
  const row = r.stdout.split('\n').find((l) => l.trimStart().startsWith('agents/node-exporter'))!;
  expect(row.trim().split(/\s{2,}/)[3]).toBe(shown);
});
