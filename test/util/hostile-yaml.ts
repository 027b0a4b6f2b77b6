/**
 * YAML shaped to make a reader do much more work than the file's size: the inputs of the CLI's bounds, built
 * once for the suite that pins the refusals (test/cli/cli-bounds.test.ts) and the benchmark that measures them
 * (bench/cli-bounds.bench.ts).
 */

/** A node list of one Ready linux node, for a command that needs `--nodes`. */
export const ONE_NODE_LIST = JSON.stringify({
  kind: 'List',
  items: [{ kind: 'Node', metadata: { name: 'n1', labels: { 'kubernetes.io/os': 'linux' } }, status: { conditions: [{ type: 'Ready', status: 'True' }] } }],
});

/** A DaemonSet whose container args are `count` aliases of one anchored string of `bytes` characters. */
export function aliasedArgs(bytes: number, count: number): string {
  return `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: b, namespace: agents, labels: {app.kubernetes.io/name: b}}
spec:
  selector: {matchLabels: {app: b}}
  template:
    metadata: {labels: {app: b}}
    spec:
      containers:
      - name: main
        image: example.com/b:1
        env: [{name: X, value: &big ${'x'.repeat(bytes)}}]
        args: [${Array.from({ length: count }, () => '*big').join(', ')}]
`;
}

/** A nested amplification ("billion laughs"): 30 levels, each anchor aliasing the one before ten times (1e30 scalars). */
export function nestedAliases(): string {
  const levels = Array.from({ length: 30 }, (_, i) => `l${i + 1}: &l${i + 1} [${Array.from({ length: 10 }, () => `*l${i}`).join(', ')}]`);
  return `kind: ConfigMap\nmetadata: {name: c}\nl0: &l0 "lol"\n${levels.join('\n')}\n`;
}

/** n mappings each merging one anchor (`- {<<: *b, name: xi}`): the yaml package resolved each alias by walking the document. */
export function mergedAnchors(n: number): string {
  return `kind: ConfigMap\nmetadata: {name: c}\nbase: &b {a: "1", b: "2"}\nitems:\n${Array.from({ length: n }, (_, i) => `- {<<: *b, name: x${i}}`).join('\n')}\n`;
}
