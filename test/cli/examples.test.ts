/**
 * The committed example YAML is what users copy: every object in it goes through the shared
 * manifest check. (CI separately fails when the committed YAML is not what the examples synthesize.)
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { loadManifests, loadNodeList } from '../../src/cli/coverage/load';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { validateManifests } from '../util/manifests';
import { REPO } from '../util/paths';

const root = path.join(REPO, 'examples');
const files = fs.readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(root, entry.name, 'dist')))
  .flatMap((entry) => listYaml(path.join(root, entry.name, 'dist')))
  .sort();

function listYaml(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return listYaml(full);
    return entry.name.endsWith('.yaml') ? [full] : [];
  });
}

test('there are example manifests', () => {
  expect(files.length).toBeGreaterThan(0);
});

test.each(files.map((f) => [path.relative(root, f)]))('%s is valid', (relative) => {
  const docs = parseAllDocuments(fs.readFileSync(path.join(root, relative), 'utf8'))
    .map((doc) => doc.toJS())
    .filter((doc) => doc !== null);
  expect(docs.length).toBeGreaterThan(0);
  validateManifests(docs);
});

describe('node-problem-detector example runs on a real node', () => {
  const docs = listYaml(path.join(root, 'node-problem-detector', 'dist'))
    .flatMap((f) => parseAllDocuments(fs.readFileSync(f, 'utf8')).map((d) => d.toJS()))
    .filter((d) => d !== null);
  const ds = docs.find((d) => d.kind === 'DaemonSet');
  const container = ds.spec.template.spec.containers[0];

  test('the kmsg monitor gets the privilege it needs to open /dev/kmsg', () => {
    expect(container.volumeMounts.map((m: { mountPath: string }) => m.mountPath)).toContain('/dev/kmsg');
    // the API requires privilege escalation to be allowed with privileged
    expect(container.securityContext).toMatchObject({ privileged: true, allowPrivilegeEscalation: true });
  });

  test('upstream\'s monitors (node-problem-detector v0.8.25 config/kernel-monitor.json and readonly-monitor.json), both loaded', () => {
    const config = docs.find((d) => d.kind === 'ConfigMap').data;
    const kernel = JSON.parse(config['kernel-monitor.json']);
    const readonly = JSON.parse(config['readonly-monitor.json']);
    expect(kernel.conditions.map((c: { type: string }) => c.type)).toEqual(['KernelDeadlock', 'XfsShutdown', 'CperHardwareErrorFatal']);
    expect(kernel.rules).toHaveLength(14);
    expect(readonly.conditions.map((c: { type: string }) => c.type)).toEqual(['ReadonlyFilesystem']);
    expect(readonly.rules).toEqual([{ type: 'permanent', condition: 'ReadonlyFilesystem', reason: 'FilesystemIsReadOnly', pattern: 'Remounting filesystem read-only' }]);
    expect(container.command).toContain('--config.system-log-monitor=/config/kernel-monitor.json,/config/readonly-monitor.json');
    // Every rule's condition is one the monitor declares (node-problem-detector refuses others).
    for (const m of [kernel, readonly]) {
      const types = m.conditions.map((c: { type: string }) => c.type);
      for (const r of m.rules.filter((x: { type: string }) => x.type === 'permanent')) expect(types).toContain(r.condition);
    }
  });

  test('no host path typed File (/etc/localtime is missing on some nodes)', () => {
    const volumes = ds.spec.template.spec.volumes.filter((v: { hostPath?: unknown }) => v.hostPath);
    expect(volumes.filter((v: { hostPath: { type?: string } }) => v.hostPath.type === 'File')).toEqual([]);
    expect(volumes.map((v: { hostPath: { path: string } }) => v.hostPath.path)).not.toContain('/etc/localtime');
  });

  test('tolerates every NoSchedule and NoExecute taint, as upstream\'s DaemonSet: the tainted pools of the example inventory are covered', () => {
    expect(ds.spec.template.spec.tolerations).toEqual(expect.arrayContaining([
      { operator: 'Exists', effect: 'NoSchedule' }, { operator: 'Exists', effect: 'NoExecute' },
    ]));
    const rootDir = REPO;
    const report = analyzeCoverage(loadManifests(['examples/node-problem-detector/dist'], rootDir).daemonSets,
      nodeFacts(loadNodeList('examples/inventories/mixed-cluster.json', rootDir)));
    const status = (node: string) => report.agents[0].nodes.find((n) => n.node === node)?.status;
    for (const node of ['cp-1', 'cp-2', 'cp-3', 'gpu-a-1', 'gpu-b-1', 'spot-a-1', 'spot-c-1', 'worker-a-1', 'worker-b-5']) {
      expect([node, status(node)]).toEqual([node, 'covered']);
    }
    expect(report.agents[0].nodes.filter((n) => n.status === 'gap')).toEqual([]);
    expect(['win-a-1', 'win-b-1'].map(status)).toEqual(['excluded', 'excluded']);
  });

  test('the probed and scraped ports listen on the pod IP, not the default 127.0.0.1', () => {
    expect(container.command).toEqual(expect.arrayContaining(['--address=0.0.0.0', '--port=20256', '--prometheus-address=0.0.0.0']));
    expect(container.livenessProbe.httpGet.port).toBe(20256);
    expect(container.readinessProbe.httpGet.port).toBe(20256);
  });
});
