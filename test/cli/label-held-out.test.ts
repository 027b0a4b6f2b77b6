/**
 * `node-agents label` lists every node it keeps out of the waves (NotReady, unreachable, cordoned, NoExecute),
 * not only those the draw reached before the waves filled.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { assignWaves } from '../../src/cli/coverage/labelling';
import { runCli } from '../../src/cli/run';
import { NodeJson } from '../../src/scheduling/types';

const healthy = (name: string): NodeJson => ({ metadata: { name, labels: { 'topology.kubernetes.io/zone': 'a' } } });
const notReady = (name: string): NodeJson => ({ metadata: { name, labels: { 'topology.kubernetes.io/zone': 'a' } }, status: { conditions: [{ type: 'Ready', status: 'False' }] } });

// 40 healthy nodes and 12 broken ones; a 5% canary fills after a few nodes of the draw, long before it reaches most broken ones
const NODES = [...Array.from({ length: 40 }, (_, i) => healthy(`ok-${String(i).padStart(2, '0')}`)),
  ...Array.from({ length: 12 }, (_, i) => notReady(`bad-${String(i).padStart(2, '0')}`))];
const BAD = NODES.filter((n) => n.metadata.name.startsWith('bad-')).map((n) => n.metadata.name);

test('heldOut names every node with a hazard, whatever the draw reached', () => {
  const result = assignWaves(NODES, { waves: [{ name: 'canary', fraction: 0.05 }] });
  expect(result.byWave.canary.length).toBeGreaterThan(0);
  expect(Object.keys(result.heldOut)).toEqual(BAD);
  for (const name of BAD) expect(result.heldOut[name]).toEqual(['NotReady (Ready=False)']);
});

test('unreadyInLaterWaves: nothing is kept out of the later waves, so a node no wave reached is not listed', () => {
  const result = assignWaves(NODES, { waves: [{ name: 'canary', fraction: 0.05 }, { name: 'wave-1', fraction: 0.05 }], unreadyInLaterWaves: true });
  for (const name of Object.keys(result.heldOut)) expect(result.byNode[name]).toBeUndefined();
});

test('the text output lists all of them (no "… more")', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'label-'));
  try {
    fs.writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify({ kind: 'List', apiVersion: 'v1', items: NODES }));
    let out = '';
    const code = runCli(['label', '--nodes', 'nodes.json', '--wave', 'canary=5%'], {
      stdout: { write: (t: string) => (out += t) }, stderr: { write: () => undefined }, cwd: dir,
    });
    expect(code).toBe(0);
    const line = out.split('\n').find((l) => l.startsWith('# kept in the fleet'))!;
    for (const name of BAD) expect(line).toContain(`${name} (NotReady (Ready=False))`);
    expect(line).not.toContain('more');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
