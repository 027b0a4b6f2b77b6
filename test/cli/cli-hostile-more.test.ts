/**
 * Issue #52's CLI and hostile-input items: each test here failed on the code before its fix.
 * - doctor's message for a YAML dump (it said "pass pass");
 * - doctor --json with a C1 control character in the dump: valid JSON, the character escaped (\u009b), and the
 *   dump's node names held to the rule the --nodes inventory's reader applies;
 * - plan --after given TypeScript source, and --allow-restart naming no agent of the trees.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { runCli } from '../../src/cli/run';
import { agentDaemonSet, agentPod, event, list, node, revision } from '../util/cluster';
import { Manifest } from '../util/manifests';

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'issue-52-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
  return { code, stdout, stderr };
}

function write(name: string, text: string): string {
  fs.writeFileSync(path.join(dir, name), text);
  return name;
}

/** Two nodes, the `logs` agent with a pod on n1 only: n2's finding carries the pod-less node's name. */
function dump(o: { nodeName?: string; message?: string } = {}): Manifest[] {
  const ds = agentDaemonSet('logs');
  const pod = agentPod(ds, 'n1', { ready: false });
  return [node('n1'), node(o.nodeName ?? 'n2'), ds, revision(ds, 'v1', 1), pod,
    event(pod, 'Unhealthy', o.message ?? 'Readiness probe failed')];
}

describe('doctor: a YAML dump', () => {
  test('the message says what to pass once, and that the file is YAML', () => {
    write('state.yaml', 'apiVersion: v1\nkind: List\nitems: []\n');
    const r = run('doctor', '--state', 'state.yaml');
    expect(r.code).toBe(2);
    expect(r.stderr).not.toContain('pass pass');
    expect(r.stderr).toContain('state.yaml: not valid JSON (it looks like YAML: write it with `-o json`, not `-o yaml`); pass the output of `kubectl get nodes,pods');
  });
});

describe('doctor --json: C0 and C1 controls', () => {
  const C1 = '\u009b31m';

  test('a C1 control in an event message: valid JSON, written \\u009b, the value unchanged', () => {
    write('c1-event.json', JSON.stringify(list(dump({ message: `probe failed ${C1}\u001b[2J\u007f` }))));
    const r = run('doctor', '--state', 'c1-event.json', '--json');
    // eslint-disable-next-line no-control-regex
    expect(r.stdout).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(r.stdout).not.toContain('\\x9b');
    expect(r.stdout).toContain('\\u009b31m');
    const doc = JSON.parse(r.stdout);
    expect(JSON.stringify(doc)).toContain(JSON.stringify(`probe failed ${C1}\u001b[2J\u007f`).slice(1, -1));
  });

  test('a C1 control in a node name: refused as the --nodes reader refuses it (exit 2, escaped)', () => {
    const name = `n2${C1}`;
    write('c1-node.json', JSON.stringify(list(dump({ nodeName: name }))));
    const r = run('doctor', '--state', 'c1-node.json', '--json');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('is not a valid Kubernetes node name');
    // eslint-disable-next-line no-control-regex
    expect(r.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    // the inventory's reader says the same of the same node
    write('c1-nodes.json', JSON.stringify(list([node('n1'), node(name)])));
    write('tree.yaml', '');
    const plan = run('coverage', '--nodes', 'c1-nodes.json', 'tree.yaml');
    expect(plan.code).toBe(2);
    expect(plan.stderr.split(': ').slice(1).join(': ')).toContain(r.stderr.split('node name ')[1].split(';')[0]);
  });
});

describe('plan: trees', () => {
  const tree = (name: string, ds: Manifest[]) => write(name, ds.map((d) => JSON.stringify(d)).join('\n---\n'));

  test('--after given TypeScript source: pass the synthesized YAML folder, by extension or by a failed parse of code', () => {
    write('nodes.json', JSON.stringify(list([node('n1')])));
    tree('before.yaml', [agentDaemonSet('logs')]);
    write('main.ts', "import { App } from 'cdk8s';\nconst app = new App();\nnew LogCollector(app, 'logs', {\n  outputs: [FluentBitOutput.stdout()],\n});\napp.synth();\n");
    const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'main.ts');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('main.ts: a TypeScript or JavaScript source file, not manifests; pass the synthesized YAML folder (cdk8s synth\'s dist/)');
    // the same source saved without its extension: the YAML parse fails (MULTILINE_IMPLICIT_KEY) and the hint follows
    fs.copyFileSync(path.join(dir, 'main.ts'), path.join(dir, 'main-source'));
    const copied = run('plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'main-source');
    expect(copied.code).toBe(2);
    expect(copied.stderr).toMatch(/main-source: not valid YAML \([A-Z_]+ at line \d+, column \d+\): it looks like program source, not manifests; pass the synthesized YAML folder \(cdk8s synth's dist\/\)/);
    // a broken YAML file that is not code gets no such hint
    write('broken.yaml', 'kind: [\n');
    expect(run('plan', '--nodes', 'nodes.json', '--before', 'before.yaml', '--after', 'broken.yaml').stderr).not.toContain('program source');
  });

  test('--allow-restart naming no agent of the trees: exit 2 naming it and the trees\' agents, escaped', () => {
    write('nodes.json', JSON.stringify(list([node('n1')])));
    tree('a.yaml', [agentDaemonSet('logs'), agentDaemonSet('metrics')]);
    tree('b.yaml', [agentDaemonSet('logs')]);
    const r = run('plan', '--nodes', 'nodes.json', '--before', 'a.yaml', '--after', 'b.yaml', '--allow-restart', 'logs', '--allow-restart', 'log\u001b[2Js');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--allow-restart "log\\x1b[2Js": no DaemonSet of the trees belongs to that agent (app.kubernetes.io/name); the trees have the agents "logs", "metrics"');
    // eslint-disable-next-line no-control-regex
    expect(r.stderr).not.toMatch(/\u001b/);
    expect(run('plan', '--nodes', 'nodes.json', '--before', 'a.yaml', '--after', 'b.yaml', '--allow-restart', 'metrics').code).not.toBe(2);
  });
});
