/**
 * The props every agent takes are declared once per agent's props on purpose: each declaration carries that agent's
 * own default (its name, namespace, tolerations, resources, image), which one shared jsii struct would replace with a
 * single doc comment for all three in API.md and the IDE. What must not drift is the rest: the same type everywhere,
 * each documented with its default, and the identity among them resolved in one place (resolveIdentity, which reads
 * name, namespace and adopt). This test reads the jsii assembly, the public API as every binding sees it.
 */
import * as fs from 'fs';
import * as path from 'path';
import { REPO } from '../util/paths';

const assembly = JSON.parse(fs.readFileSync(path.join(REPO, '.jsii'), 'utf8'));

interface JsiiProperty { name: string; type: unknown; optional?: boolean; docs?: { default?: string; summary?: string } }

const propsOf = (type: string): Map<string, JsiiProperty> =>
  new Map((assembly.types[`cdk8s-node-agents.${type}`].properties as JsiiProperty[]).map((p) => [p.name, p]));

const AGENTS = ['LogCollectorDaemonSetProps', 'NodeExporterDaemonSetProps', 'GpuDriverDaemonSetProps'];
/** Same type and optionality in every agent's props, and in the base construct's where it has them. */
const SHARED = ['name', 'namespace', 'createNamespace', 'labels', 'priorityClassName', 'resources', 'rollout', 'tolerations', 'updateStrategy'];

test.each(SHARED)('%s: one type in every agent\'s props (and the base construct\'s), each declaration documented with its default', (name) => {
  const declarations = [...AGENTS, 'NodeAgentDaemonSetProps']
    .map((type) => ({ type, prop: propsOf(type).get(name) }))
    .filter((d) => d.prop !== undefined || AGENTS.includes(d.type));
  expect(declarations.filter((d) => d.prop === undefined).map((d) => d.type)).toEqual([]);
  const shapes = new Set(declarations.map((d) => JSON.stringify({ type: d.prop!.type, optional: d.prop!.optional ?? false })));
  expect(shapes.size).toBe(1);
  for (const d of declarations) {
    const docs = d.prop!.docs ?? {};
    expect({ type: d.type, name, summary: Boolean(docs.summary), default: docs.default !== undefined })
      .toEqual({ type: d.type, name, summary: true, default: true });
  }
});

test('image and alerts differ by agent as intended: the GPU driver\'s image is required (no driver tag fits every node), each agent\'s alerts options its own', () => {
  const image = AGENTS.map((t) => propsOf(t).get('image')!.optional ?? false);
  expect(image).toEqual([true, true, false]);
  const alerts = AGENTS.map((t) => JSON.stringify(propsOf(t).get('alerts')!.type));
  expect(alerts).toEqual([
    JSON.stringify({ fqn: 'cdk8s-node-agents.LogCollectorAlertsOptions' }),
    JSON.stringify({ fqn: 'cdk8s-node-agents.NodeExporterAlertsOptions' }),
    JSON.stringify({ fqn: 'cdk8s-node-agents.GpuDriverAlertsOptions' }),
  ]);
});
