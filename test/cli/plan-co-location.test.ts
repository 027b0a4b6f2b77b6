/**
 * DaemonSets placed on the same node, decided node by node (the DaemonSets covering each node) and grouped by cause
 * and set of DaemonSets: two DaemonSets give the pair finding they always gave; three or more one finding listing
 * them all, on the nodes they share. The pairwise rules are the scheduler's: InterPodAffinity (a required
 * anti-affinity on kubernetes.io/hostname, either way) and NodePorts (same protocol and port, overlapping host IPs).
 */
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { planChange } from '../../src/cli/plan/plan';
import { daemonSet, inventory, tree } from '../util/plan';

const nodes = inventory([{ name: 'n1', labels: { pool: 'a' } }, { name: 'n2', labels: { pool: 'a' } }, { name: 'n3', labels: { pool: 'b' } }]);
const before = tree([daemonSet('other', { agent: 'other' })]);
const summary = (findings: readonly { kind: string; cause: string; daemonSets: readonly string[]; nodes: readonly string[] }[]) =>
  findings.filter((f) => f.kind !== 'loses-agent').map((f) => `${f.kind}/${f.cause} [${f.daemonSets.join(' ')}] on [${f.nodes.join(' ')}]`);

describe('co-location findings, node by node', () => {
  test('three DaemonSets of one agent: one duplicate finding per set of DaemonSets sharing nodes', () => {
    const after = tree([
      daemonSet('a', { agent: 'x' }),
      daemonSet('b', { agent: 'x' }),
      daemonSet('c', { agent: 'x', nodeSelector: { pool: 'a' } }),
    ]);
    const report = planChange(before, after, nodes);
    expect(summary(report.findings)).toEqual([
      'two-pods-per-node/duplicate [agents/a agents/b agents/c] on [n1 n2]',
      'two-pods-per-node/duplicate [agents/a agents/b] on [n3]',
    ]);
    const three = report.findings.find((f) => f.daemonSets.length === 3)!;
    expect(three.message).toBe('x runs 3 pods on 2 nodes (n1, n2) for good: 3 of its DaemonSets (agents/a, agents/b, agents/c) all cover them');
    expect(report.findings.find((f) => f.daemonSets.length === 2)!.message).toBe('x runs two pods on 1 node (n3) for good: both agents/a and agents/b cover them');
  });

  test('anti-affinity separating some pairs only: the separated ones never start, the others run twice', () => {
    // c keeps pods of agent x off its node (and so is kept apart from a and b); a and b are not separated
    const anti = [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { 'app.kubernetes.io/name': 'x' } } }];
    const after = tree([
      daemonSet('a', { agent: 'x' }),
      daemonSet('b', { agent: 'x' }),
      daemonSet('c', { agent: 'y', antiAffinity: anti, nodeSelector: { pool: 'b' } }),
    ]);
    expect(summary(planChange(before, after, nodes).findings)).toEqual([
      'two-pods-per-node/duplicate [agents/a agents/b] on [n1 n2 n3]',
      'never-starts/anti-affinity [agents/a agents/b agents/c] on [n3]',
    ]);
  });

  test('two agents running one program: same-program, the first shared image repository named', () => {
    const after = tree([
      daemonSet('a', { agent: 'x', image: 'example.com/collector:1' }),
      daemonSet('b', { agent: 'y', image: 'example.com/collector:2' }),
    ]);
    const findings = planChange(before, after, nodes).findings;
    expect(summary(findings)).toEqual(['two-pods-per-node/same-program [agents/a agents/b] on [n1 n2 n3]']);
    expect(findings[0].message).toContain('agents/a (x) and agents/b (y) both run example.com/collector on 3 nodes');
  });

  test('the other DaemonSet a chart install (Helm\'s labels): the fix names the adoption, its release, overrides and kube-prometheus-stack', () => {
    const helm = (name: string, release: string, podLabels: Record<string, string> = {}, appName = 'prometheus-node-exporter') => {
      const ds = daemonSet(name, { agent: appName, image: 'quay.io/prometheus/node-exporter:v1.9.1' });
      ds.metadata.labels = {
        ...ds.metadata.labels,
        'app.kubernetes.io/managed-by': 'Helm',
        'helm.sh/chart': 'prometheus-node-exporter-4.56.1',
        'app.kubernetes.io/instance': release,
        'app.kubernetes.io/name': appName,
      };
      ds.spec.template.metadata.labels = { ...ds.spec.template.metadata.labels, ...podLabels };
      return ds;
    };
    const ours = daemonSet('node-exporter', { agent: 'node-exporter', image: 'quay.io/prometheus/node-exporter:v1.12.1' });
    const fixOf = (other: unknown) => planChange(before, tree([ours, other as never]), nodes).findings.find((f) => f.cause === 'same-program')!.fix;
    expect(fixOf(helm('kps-prometheus-node-exporter', 'kps', { jobLabel: 'node-exporter' })))
      .toContain('adopt: AgentAdoption.nodeExporterChart({ namespace: \'agents\', releaseName: \'kps\', kubePrometheusStack: true })');
    expect(fixOf(helm('exporter', 'metrics', {}, 'nodes')))
      .toContain('AgentAdoption.nodeExporterChart({ namespace: \'agents\', releaseName: \'metrics\', nameOverride: \'nodes\', fullnameOverride: \'exporter\' })');
    // not a chart install: the generic advice
    expect(fixOf(daemonSet('other', { agent: 'other', image: 'quay.io/prometheus/node-exporter:v1.9.1' }))).toContain('prop `adopt`, e.g. AgentAdoption.fluentBitChart()');
  });

  test('host ports: one problem per port and set of clashing DaemonSets; distinct host IPs do not clash, an empty one clashes with all', () => {
    const bound = (name: string, hostIP?: string, nodeSelector?: Record<string, string>) => {
      const ds = daemonSet(name, { agent: name, nodeSelector });
      ds.spec.template.spec.containers[0].ports = [{ containerPort: 9100, hostPort: 9100, ...(hostIP ? { hostIP } : {}) }];
      return ds;
    };
    const set = tree([bound('a', '10.0.0.1'), bound('b', '10.0.0.2'), bound('c', undefined, { pool: 'b' })]);
    const problems = analyzeCoverage(set.daemonSets, nodes).problems.filter((p) => p.kind === 'host-port-clash');
    expect(problems.map((p) => `[${p.daemonSets.join(' ')}] on [${p.nodes.join(' ')}]`)).toEqual(['[agents/a agents/b agents/c] on [n3]']);
    expect(problems[0].message).toBe('host port TCP/9100 is bound by 3 DaemonSets: agents/a (agent a), agents/b (agent b), agents/c (agent c) on 1 node (n3): '
      + 'the scheduler keeps all pods but the first Pending (NodePorts).');
    const pair = tree([bound('a', '10.0.0.1'), bound('b', '10.0.0.1', { pool: 'a' })]);
    expect(analyzeCoverage(pair.daemonSets, nodes).problems.filter((p) => p.kind === 'host-port-clash').map((p) => p.message)).toEqual([
      'host port TCP/9100 is bound by agents/a (agent a) and agents/b (agent b) on 2 nodes (n1, n2): the scheduler keeps the second pod Pending (NodePorts).',
    ]);
  });
});
