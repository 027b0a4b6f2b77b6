/**
 * docs/tested-against.md is generated from the versions the tests use (projenrc/tested-against.ts): a pin bumped
 * without regenerating it (`npx projen tested-against`) fails here.
 */
import * as fs from 'fs';
import { TESTED_AGAINST, testedAgainst } from '../../projenrc/tested-against';

test('docs/tested-against.md is the generated table (run npx projen tested-against after a pin changes)', () => {
  expect(fs.readFileSync(TESTED_AGAINST, 'utf8')).toEqual(testedAgainst());
});

test('every component the issue names has a row', () => {
  const components = testedAgainst().split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| component')).map((l) => l.split(' | ')[0].slice(2));
  for (const name of ['Kubernetes', 'Argo CD', 'kube-prometheus-stack', 'fluent-bit', 'node_exporter', 'NVIDIA driver manager', 'Karpenter', 'cluster-autoscaler']) {
    expect(components.some((c) => c.startsWith(name))).toBe(true);
  }
});
