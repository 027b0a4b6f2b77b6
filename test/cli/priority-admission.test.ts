/**
 * The Priority admission plugin on pod create (kubernetes plugin/pkg/admission/priority/admission.go admitPod and
 * establishPriority → coverage/priority.ts resolvePriority), the cases of its admission_test.go TestPodAdmission
 * that read a pod's own fields: no class and no default (priority 0), the globalDefault class, a named class, a
 * class not found, a spec.priority or spec.preemptionPolicy equal to or differing from the class's.
 */
import { manifestSet, parseManifestText } from '../../src/cli/coverage/manifests';
import { priorityClassesOf, resolvePriority } from '../../src/cli/coverage/priority';
import { planChange } from '../../src/cli/plan/plan';
import { daemonSet, inventory, tree } from '../util/plan';

const classes = (yaml: string) => priorityClassesOf(manifestSet(parseManifestText(yaml, 'classes.yaml')));
const NONE = classes('');
const WITH_DEFAULT = classes([
  'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: default1}\nvalue: 1000\nglobalDefault: true',
  'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: nonpreempting}\nvalue: 500\npreemptionPolicy: Never',
].join('\n---\n'));

test.each([
  ['pod with no priority class and no default class', {}, NONE, { priority: 0, preemptNever: false }],
  ['pod without priority class, the globalDefault class applies', {}, WITH_DEFAULT, { priority: 1000, className: 'default1', preemptNever: false }],
  ['pod with system-node-critical', { priorityClassName: 'system-node-critical' }, NONE, { priority: 2000001000, className: 'system-node-critical', preemptNever: false }],
  ['pod with a non-preempting class', { priorityClassName: 'nonpreempting' }, WITH_DEFAULT, { priority: 500, className: 'nonpreempting', preemptNever: true }],
  ['pod with a priority equal to its class\'s', { priorityClassName: 'system-node-critical', priority: 2000001000 }, NONE, { priority: 2000001000, preemptNever: false }],
  ['pod with preemptionPolicy equal to its class\'s', { priorityClassName: 'nonpreempting', preemptionPolicy: 'Never' }, WITH_DEFAULT, { priority: 500, preemptNever: true }],
])('%s', (_name, spec, known, expected) => {
  const resolved = resolvePriority(spec, known);
  expect(resolved).toMatchObject(expected);
  expect(resolved.refusal).toBeUndefined();
});

const POLICY_NEVER = 'the string value of PreemptionPolicy (Never) must not be provided in pod spec; '
  + 'priority admission controller computed PreemptLowerPriority from the given PriorityClass name';
const priorityRefused = (given: number, computed: number) => `the integer value of priority (${given}) must not be provided in pod spec; `
  + `priority admission controller computed ${computed} from the given PriorityClass name`;

test.each([
  ['system-node-critical with preemptionPolicy Never', { priorityClassName: 'system-node-critical', preemptionPolicy: 'Never' }, NONE, POLICY_NEVER],
  ['system-node-critical with another priority', { priorityClassName: 'system-node-critical', priority: 1000 }, NONE, priorityRefused(1000, 2000001000)],
  ['no class, a priority (no default class: 0)', { priority: 100 }, NONE, priorityRefused(100, 0)],
  ['no class, preemptionPolicy Never (the default is PreemptLowerPriority)', { preemptionPolicy: 'Never' }, NONE, POLICY_NEVER],
])('refused: %s', (_name, spec, known, refusal) => {
  expect(resolvePriority(spec, known).refusal).toBe(refusal);
});

test('a class neither built in nor in the manifests: priority unknown, no refusal claimed (the cluster may hold it)', () => {
  expect(resolvePriority({ priorityClassName: 'agents-critical' }, NONE)).toEqual({ className: 'agents-critical', preemptNever: false });
});

test('several globalDefault classes: the lowest value wins (getDefaultPriorityClass)', () => {
  const two = classes([
    'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\nvalue: 900\nglobalDefault: true',
    'apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: low}\nvalue: 100\nglobalDefault: true',
  ].join('\n---\n'));
  expect(resolvePriority({}, two)).toMatchObject({ priority: 100, className: 'low' });
});

describe('plan: a template the Priority admission plugin refuses is a never-starts error (issue: verdicts round 3, case 4)', () => {
  const nodes = inventory([{ name: 'n1' }, { name: 'n2' }]);
  const logs = (image: string, spec: Record<string, unknown> = {}) => {
    const ds = daemonSet('logs', { image });
    Object.assign(ds.spec.template.spec, spec);
    return ds;
  };
  const findings = (after: Record<string, unknown>, extra: any[] = []) =>
    planChange(tree([logs('example.com/logs:1')]), tree([logs('example.com/logs:2', after), ...extra]), nodes).findings
      .map((f) => [f.kind, f.cause, f.severity, [...f.nodes]]);

  test.each([
    ['system-node-critical plus preemptionPolicy Never', { priorityClassName: 'system-node-critical', preemptionPolicy: 'Never' }],
    ['system-node-critical plus an explicit priority that differs', { priorityClassName: 'system-node-critical', priority: 1000000 }],
  ])('%s: refused, and the rolling update has deleted the old pods first', (_name, spec) => {
    expect(findings(spec)).toEqual([['never-starts', 'priority-admission', 'error', ['n1', 'n2']]]);
  });
  test('the refusal is quoted in the API server\'s words, the fix says to drop the fields', () => {
    const report = planChange(tree([logs('example.com/logs:1')]),
      tree([logs('example.com/logs:2', { priorityClassName: 'system-node-critical', preemptionPolicy: 'Never' })]), nodes);
    expect(report.findings[0].message).toContain('"the string value of PreemptionPolicy (Never) must not be provided in pod spec; priority admission controller computed PreemptLowerPriority');
    expect(report.findings[0].fix).toContain('drop spec.priority and spec.preemptionPolicy');
  });
  test('an explicit priority equal to the class\'s passes; a class of the manifests passes', () => {
    expect(findings({ priorityClassName: 'system-node-critical', priority: 2000001000 })).toEqual([]);
    const agentsCritical = { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'agents-critical' }, value: 1000000 };
    expect(findings({ priorityClassName: 'agents-critical' }, [agentsCritical])).toEqual([]);
  });
  test('a class neither built in nor in the trees is a warning', () => {
    expect(findings({ priorityClassName: 'agents-critical' })).toEqual([['never-starts', 'unknown-priority-class', 'warning', ['n1', 'n2']]]);
  });
});
