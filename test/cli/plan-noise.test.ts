/**
 * Noise that hides findings (issue: verdicts round 3, case 8): one version written two ways is one version; one
 * missing Secret is one warning, naming every DaemonSet and field that needs it, in text, JSON and markdown.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../src/cli/run';
import { list, node } from '../util/cluster';
import { Manifest } from '../util/manifests';
import { daemonSet } from '../util/plan';

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

describe('one missing Secret the waves of an agent share: one warning, not one per wave and field', () => {
  // three DaemonSets of one agent (canary, wave-1, fleet) mounting the Secret: three findings before
  const volumes = [{ name: 'token', secret: { secretName: 'es-credentials' } }];
  const waves = (image: string) => ['logs-canary', 'logs-wave-1', 'logs'].map((name) => daemonSet(name, { agent: 'logs', image, volumes, nodeSelector: { pool: name } }));

  test.each([
    ['text', [], (out: string) => out.split('\n').filter((l) => l.includes('[missing-reference Secret]'))],
    ['markdown', ['--markdown'], (out: string) => out.split('\n').filter((l) => l.includes('missing\\-reference'))],
    ['JSON', ['--json'], (out: string) => JSON.parse(out).steps[0].findings.map((f: { message: string }) => f.message)],
  ] as const)('%s', (_format, flags, findings) => {
    write('nodes.json', list(['logs-canary', 'logs-wave-1', 'logs'].map((pool, i) => node(`n${i}`, { labels: { pool } }))));
    write('before.json', list(waves('example.com/logs:1')));
    write('after.json', list(waves('example.com/logs:2')));
    const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', ...flags);
    expect(r.code).toBe(0);
    const found: string[] = findings(r.stdout);
    expect(found).toHaveLength(1);
    const text = found[0].replace(/\\/g, '');
    expect(text).toContain('Secret agents/es-credentials, which the after-tree does not hold, is needed by 3 DaemonSets: '
      + 'agents/logs (volumes[token]), agents/logs-canary (volumes[token]), agents/logs-wave-1 (volumes[token])');
  });
});
