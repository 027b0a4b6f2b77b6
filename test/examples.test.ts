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
