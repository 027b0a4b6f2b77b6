/**
 * Every input a user fills takes the library's own types or plain values, never a cdk8s-plus class: an app on
 * another cdk8s-plus major (whose EnvValue is not cdk8s-plus-28's) can fill every prop. Read from the jsii
 * assembly: each struct's props and each constructor's and method's parameters. Outputs (the escape hatches
 * daemonSet, mainContainer, configMap, serviceAccount) stay cdk8s-plus-28 objects (docs/stability.md).
 */
import * as fs from 'fs';
import * as path from 'path';
import { REPO } from '../util/paths';

interface Named { name: string; type?: unknown }
interface JsiiType {
  fqn: string;
  datatype?: boolean;
  properties?: Named[];
  methods?: (Named & { parameters?: Named[]; returns?: { type?: unknown } })[];
  initializer?: { parameters?: Named[] };
}

function assembly(): JsiiType[] {
  const file = path.join(REPO, '.jsii');
  if (!fs.existsSync(file)) throw new Error('.jsii is missing: run `npx projen compile` first (the build does, before the tests)');
  return Object.values(JSON.parse(fs.readFileSync(file, 'utf8')).types as Record<string, JsiiType>);
}

/** The fqns a type reference names (collections and unions included). */
function fqns(ref: unknown): string[] {
  if (typeof ref !== 'object' || ref === null) return [];
  const own = typeof (ref as { fqn?: unknown }).fqn === 'string' ? [(ref as { fqn: string }).fqn] : [];
  return [...own, ...Object.values(ref).flatMap(fqns)];
}

const KPLUS = /^cdk8s-plus-\d+\./;

test('no struct prop, constructor parameter or method parameter takes a cdk8s-plus type', () => {
  const inputs: string[] = [];
  for (const t of assembly()) {
    const short = t.fqn.replace(/^[^.]+\./, '');
    if (t.datatype) for (const p of t.properties ?? []) inputs.push(...fqns(p.type).filter((f) => KPLUS.test(f)).map((f) => `${short}.${p.name}: ${f}`));
    for (const p of t.initializer?.parameters ?? []) inputs.push(...fqns(p.type).filter((f) => KPLUS.test(f)).map((f) => `new ${short}(${p.name}): ${f}`));
    for (const m of t.methods ?? []) {
      for (const p of m.parameters ?? []) inputs.push(...fqns(p.type).filter((f) => KPLUS.test(f)).map((f) => `${short}.${m.name}(${p.name}): ${f}`));
    }
  }
  expect(inputs).toEqual([]);
});

test('the cdk8s-plus-28 objects the API gives out are the escape hatches docs/stability.md names', () => {
  const outputs = new Set<string>();
  for (const t of assembly()) {
    if (!t.datatype) for (const p of t.properties ?? []) if (fqns(p.type).some((f) => KPLUS.test(f))) outputs.add(p.name);
    for (const m of t.methods ?? []) if (fqns(m.returns?.type).some((f) => KPLUS.test(f))) outputs.add(`${m.name}()`);
  }
  const stability = fs.readFileSync(path.join(REPO, 'docs', 'stability.md'), 'utf8');
  for (const name of outputs) expect([name, stability.includes(`\`${name}\``)]).toEqual([name, true]);
});
