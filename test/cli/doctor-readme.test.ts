/** The doctor guide's walk-through (docs/cli-doctor.md) is what `node-agents doctor` prints on that state now. */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../src/cli/run';
import { agentDaemonSet, agentPod, event, list, node, pod, revision } from '../util/cluster';
import { REPO } from '../util/paths';

/** A log collector upgrade (maxUnavailable 1) that raised memory and broke the config, on five nodes. */
function state() {
  const ds = agentDaemonSet('logs', {
    namespace: 'observability',
    memory: '1Gi',
    status: {
      desiredNumberScheduled: 5,
      currentNumberScheduled: 5,
      updatedNumberScheduled: 2,
      numberReady: 3,
      numberAvailable: 3,
      numberMisscheduled: 1,
    },
  });
  return list([
    ...['worker-1', 'worker-2', 'worker-3', 'worker-5'].map((n) => node(n, { memory: '8Gi' })), node('worker-4', { ready: 'Unknown' }),
    ds, revision(ds, '6d9f7c', 1), revision(ds, '7b8c9d', 2),
    agentPod(ds, 'worker-1', { name: 'logs-x7k2p', hash: '7b8c9d', waiting: { reason: 'CrashLoopBackOff' }, lastTerminated: { reason: 'OOMKilled', exitCode: 137 }, restartCount: 6 }),
    agentPod(ds, 'worker-2', { name: 'logs-q9d4m', hash: '6d9f7c' }),
    agentPod(ds, 'worker-3', { name: 'logs-m3n8v', hash: '7b8c9d', bound: false }),
    pod('postgres-0', { namespace: 'db', node: 'worker-3', memory: '7680Mi', priority: 0 }),
    event(agentPod(ds, 'worker-3', { name: 'logs-m3n8v' }), 'FailedScheduling', '0/5 nodes are available: 1 Insufficient memory, 4 node(s) didn\'t match Pod\'s node affinity/selector.'),
    agentPod(ds, 'worker-4', { name: 'logs-h2w6r', hash: '6d9f7c', ready: false }),
    agentPod(ds, 'worker-5', { name: 'logs-b5t1z', hash: '7b8c9d' }),
  ]);
}

test('the doctor guide shows doctor\'s output on the walk-through state as it is', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'doctor-readme-'));
  try {
    fs.writeFileSync(path.join(dir, 'state.json'), JSON.stringify(state()));
    let stdout = '';
    const code = runCli(['doctor', '--state', 'state.json'], { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: () => undefined }, cwd: dir });
    expect(code).toBe(1);
    const readme = fs.readFileSync(path.join(REPO, 'docs', 'cli-doctor.md'), 'utf8');
    expect(readme).toContain('```text\n' + stdout + '```');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
