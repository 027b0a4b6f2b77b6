/**
 * Synthesizes every example app: each examples/<name>/main.ts writes its YAML to
 * examples/<name>/dist/ (or only the examples named as arguments). The dist folders are committed;
 * CI fails when they are stale.
 */
import * as fs from 'fs';
import * as path from 'path';

/*
 * The examples import the package by its name, as a consumer's app does. TypeScript resolves the
 * name through `paths` in test/tsconfig.json, but ts-node does not apply `paths` at run time (that
 * needs the tsconfig-paths package); this hook maps the one name to src/index.ts before any example
 * loads, without a new dependency. Jest maps it with `moduleNameMapper`.
 */
type ResolveFilename = (request: string, ...rest: unknown[]) => string;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const moduleInternals = require('module') as { _resolveFilename: ResolveFilename };
const resolveFilename = moduleInternals._resolveFilename;
const sourceEntry = path.join(__dirname, '..', 'src', 'index.ts');
moduleInternals._resolveFilename = function resolvePackageName(this: unknown, request: string, ...rest: unknown[]): string {
  return resolveFilename.call(this, request === 'cdk8s-node-agents' ? sourceEntry : request, ...rest);
};

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
