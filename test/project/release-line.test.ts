/**
 * The release line: package.json's version (set in .projenrc.ts) is CHANGELOG.md's newest version, and the docs
 * the changelog and README point to exist.
 */
import * as fs from 'fs';
import * as path from 'path';
import { REPO } from '../util/paths';

const read = (file: string) => fs.readFileSync(path.join(REPO, file), 'utf8');

test("package.json's version is a 0.x version and CHANGELOG.md's newest, under an Unreleased heading", () => {
  const version: string = JSON.parse(read('package.json')).version;
  expect(version).toMatch(/^0\.\d+\.\d+$/);
  const headings = [...read('CHANGELOG.md').matchAll(/^## (.+)$/gm)].map((m) => m[1]);
  expect(headings.slice(0, 2)).toEqual(['Unreleased', version]);
});

test('the changelog says how it is kept, and the stability statement names the inputs still to change', () => {
  expect(read('CHANGELOG.md')).toMatch(/How this file is kept/);
  const stability = read('docs/stability.md');
  for (const prop of ['extraEnv', 'liveness', 'preStop', 'protocol', 'fieldEnv']) expect(stability).toContain(prop);
});
