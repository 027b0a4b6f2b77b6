/**
 * Lookups by node name in a report's name-ordered lists (binary search, no map of every name): the same answers as
 * scanning the list, for every list in name order, repeated names included.
 */
import * as fc from 'fast-check';
import { analyzeCoverage, coversName, positionByName } from '../../src/cli/coverage/analysis';
import { compare, daemonSetInfo } from '../../src/cli/coverage/manifests';
import { nodeFacts } from '../../src/cli/coverage/nodes';
import { NodeJson } from '../../src/scheduling/types';

const names = fc.array(fc.constantFrom<string>('a', 'b', 'b2', 'node-1', 'node-10', 'node-2', 'z', ''), { maxLength: 30 }).map((list) => list.sort(compare));
const probe = fc.constantFrom<string>('a', 'b', 'b2', 'c', 'node-1', 'node-10', 'node-2', 'node-3', 'z', '', 'zz');

test('positionByName is the last position of the name, -1 when absent; coversName whether it is there', () => {
  fc.assert(fc.property(names, probe, (list, name) => {
    expect(positionByName(list.map((n) => ({ name: n })), name)).toBe(list.lastIndexOf(name));
    expect(coversName(list, name)).toBe(list.includes(name));
  }), { numRuns: 2000 });
});

test('a DaemonSet\'s covered positions name its covered nodes, in order, repeated names included', () => {
  const ds = daemonSetInfo({
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns' },
    spec: { template: { spec: { nodeSelector: { pool: 'a' }, containers: [] } } },
  }, 'test.yaml');
  const nodeList = fc.array(fc.record({ name: fc.constantFrom('n1', 'n2', 'n3', 'n10'), pool: fc.constantFrom('a', 'b') }), { maxLength: 12 });
  fc.assert(fc.property(nodeList, (given) => {
    const report = analyzeCoverage([ds], nodeFacts(given.map((n) => ({ metadata: { name: n.name, labels: { pool: n.pool } } }) as NodeJson)));
    const [{ covered, positions }] = report.daemonSets;
    expect(positions.map((at) => report.nodes[at].name)).toEqual(covered);
    expect(positions.every((at) => report.nodes[at].labels.pool === 'a')).toBe(true);
    expect(positions.length).toBe(given.filter((n) => n.pool === 'a').length);
    expect([...positions].sort((x, y) => x - y)).toEqual(positions);
  }), { numRuns: 500 });
});
