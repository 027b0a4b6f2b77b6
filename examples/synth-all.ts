/**
 * Synthesizes every example app: each examples/<name>/main.ts writes its YAML to
 * examples/<name>/dist/ (or only the examples named as arguments). The dist folders are committed;
 * CI fails when they are stale.
 */
import * as fs from 'fs';
import * as path from 'path';

const requested = process.argv.slice(2);
const examples = fs.readdirSync(__dirname, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && fs.existsSync(path.join(__dirname, entry.name, 'main.ts')))
  .map((entry) => entry.name)
  .filter((name) => requested.length === 0 || requested.includes(name))
  .sort();

for (const name of examples) {
  // a removed object must disappear from the committed YAML too
  fs.rmSync(path.join(__dirname, name, 'dist'), { recursive: true, force: true });
  // an example synthesizes when loaded, or exports `synthesize()` for tests to call too
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const example = require(path.join(__dirname, name, 'main.ts'));
  if (typeof example.synthesize === 'function') example.synthesize();
  const files = fs.readdirSync(path.join(__dirname, name, 'dist'));
  console.log(`examples/${name}/dist: ${files.join(', ')}`);
}
