/**
 * The committed example YAML is what users copy: every object in it goes through the shared
 * manifest check. (CI separately fails when the committed YAML is not what the examples synthesize.)
 */
import * as fs from 'fs';
import * as path from 'path';
import { parseAllDocuments } from 'yaml';
import { validateManifests } from './util/manifests';

const root = path.join(__dirname, '..', 'examples');
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

  test('the probed and scraped ports listen on the pod IP, not the default 127.0.0.1', () => {
    expect(container.command).toEqual(expect.arrayContaining(['--address=0.0.0.0', '--port=20256', '--prometheus-address=0.0.0.0']));
    expect(container.livenessProbe.httpGet.port).toBe(20256);
    expect(container.readinessProbe.httpGet.port).toBe(20256);
  });
});
