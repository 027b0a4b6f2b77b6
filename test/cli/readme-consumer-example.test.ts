import * as fs from 'fs';
import * as path from 'path';
import { App } from 'cdk8s';
import * as ts from 'typescript';
import * as library from '../../src';
import { synthManifests } from '../util/manifests';
import { REPO } from '../util/paths';

/** The `main.ts` of the README's "Use it in your cdk8s app", run as a consumer's app would run it. */
function readmeApp(): App {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Use it in your cdk8s app'), readme.indexOf('\n## ', readme.indexOf('## Use it in your cdk8s app') + 1));
  const code = /```ts\n([\s\S]*?)```/.exec(section)![1];
  expect(code).toContain("from 'cdk8s-node-agents'");
  expect(code).toContain('app.synth();');
  // the app's own synth would write dist/ here: hand the app back instead
  const js = ts.transpileModule(code.replace('app.synth();', 'module.exports = app;'), { compilerOptions: { module: ts.ModuleKind.CommonJS } }).outputText;
  const mod = { exports: {} as unknown };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const requireAs = (name: string) => (name === 'cdk8s-node-agents' ? library : require(name));
  new Function('require', 'module', 'exports', js)(requireAs, mod, mod.exports);
  return mod.exports as App;
}

test('the README consumer example synthesizes valid manifests of both agents', () => {
  const manifests = synthManifests(readmeApp());
  const daemonSets = manifests.filter((m) => m.kind === 'DaemonSet').map((m) => m.metadata.name).sort();
  expect(daemonSets).toEqual(['log-collector', 'node-exporter']);
  expect(manifests.some((m) => m.kind === 'ServiceMonitor')).toBe(true);
});
