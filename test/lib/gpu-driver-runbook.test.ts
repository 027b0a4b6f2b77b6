import { execFileSync, spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import { GpuDriverDaemonSet, GpuDriverDaemonSetProps, Promotion, RolloutWave } from '../../src';
import {
  RunbookInput,
  matchLabelsSelector,
  renderRunbookMarkdown,
  renderRunbookScript,
  requirementsSelector,
} from '../../src/gpu/runbook';
import { shellWord as shellQuote } from '../../src/util/shell';

const BASE: RunbookInput = {
  namespace: 'gpu-system',
  name: 'gpu-driver',
  podSelector: { 'app.kubernetes.io/name': 'gpu-driver', 'app.kubernetes.io/instance': 'nvidia' },
  gpuNodeSelectors: ['nvidia.com/gpu.present=true'],
};
const SEL = 'app.kubernetes.io/instance=nvidia,app.kubernetes.io/name=gpu-driver';

/** Index of `needle` in `text`, failing the test when it is missing. */
function at(text: string, needle: string): number {
  const index = text.indexOf(needle);
  if (index < 0) throw new Error(`missing: ${needle}`);
  return index;
}

describe('renderRunbookMarkdown', () => {
  const md = renderRunbookMarkdown(BASE);

  test('names the DaemonSet, its namespace and its selector', () => {
    expect(md).toContain('# Upgrade runbook: DaemonSet `gpu-system/gpu-driver`');
    expect(md).toContain('kubectl get ds gpu-driver -n gpu-system -o wide');
    expect(md).toContain(`kubectl get pods -n gpu-system -l ${SEL} -o wide`);
  });

  test('per node: cordon, evict GPU pods, delete the driver pod, wait Ready, validate, uncordon, in this order', () => {
    const steps = [
      'kubectl cordon -- "$NODE"',
      'kubectl get pods -A --field-selector "spec.nodeName=$NODE,status.phase!=Succeeded,status.phase!=Failed" -o json',
      'kubectl create --raw "/api/v1/namespaces/$POD_NS/pods/$POD/eviction" -f -',
      'kubectl wait --for=delete pod/"$POD" -n "$POD_NS" --timeout=300s',
      `kubectl delete pod -n gpu-system -l ${SEL} --field-selector "spec.nodeName=$NODE" --wait=true`,
      `kubectl wait --for=condition=Ready pod -n gpu-system -l ${SEL} --field-selector "spec.nodeName=$NODE" --timeout=1500s`,
      '{.items[0].metadata.labels.controller-revision-hash}',
      'kubectl uncordon -- "$NODE"',
    ];
    const positions = steps.map((step) => at(md, step));
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });

  test('selects GPU pods by nvidia.com/gpu and MIG resources in any container', () => {
    expect(md).toContain('[(.spec.initContainers // [])[], .spec.containers[]]');
    expect(md).toContain('test("^nvidia\\\\.com/(gpu|mig-.+)$")');
  });

  test('finds outdated nodes through the newest ControllerRevision owned by this DaemonSet', () => {
    expect(md).toContain(`HASH=$(kubectl get controllerrevisions -n gpu-system -l ${SEL} -o json | jq -r --arg ds gpu-driver`);
    expect(md).toContain('max_by(.revision)');
    expect(md).toContain(`kubectl get pods -n gpu-system -l "${SEL},controller-revision-hash!=$HASH" -o wide`);
  });

  test('leaves skip-labelled nodes out (gpu-operator label by default, configurable)', () => {
    expect(md).toContain("kubectl get nodes -l 'nvidia.com/gpu.present=true,nvidia.com/gpu-driver-upgrade.skip!=true'");
    const custom = renderRunbookMarkdown({ ...BASE, skipNodeLabel: 'example.com/no-driver-upgrade' });
    expect(custom).toContain("kubectl get nodes -l 'nvidia.com/gpu.present=true,!example.com/no-driver-upgrade'");
    expect(custom).not.toContain('gpu-driver-upgrade.skip');
  });

  test('OnDelete (default): no strategy switching', () => {
    expect(md).not.toContain('Switch to OnDelete');
    expect(md).not.toContain('kubectl patch ds');
  });

  test('RollingUpdate: switch to OnDelete before applying, switch back after the last node', () => {
    const rolling = renderRunbookMarkdown({ ...BASE, updateStrategy: 'RollingUpdate', rollingUpdateMaxUnavailable: '10%', manifestFile: 'dist/gpu.k8s.yaml' });
    const toOnDelete = at(rolling, 'kubectl patch ds gpu-driver -n gpu-system --type=merge -p \'{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}\'');
    const apply = at(rolling, 'kubectl apply -f dist/gpu.k8s.yaml');
    const cordon = at(rolling, 'kubectl cordon -- "$NODE"');
    const check = at(rolling, '{.status.updatedNumberScheduled}/{.status.desiredNumberScheduled}');
    const back = at(rolling, '\'{"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":"10%","maxSurge":0}}}}\'');
    expect(toOnDelete).toBeLessThan(apply);
    expect(apply).toBeLessThan(cordon);
    expect(cordon).toBeLessThan(check);
    expect(check).toBeLessThan(back);
  });

  test('waits for matching pods to finish only when a wait selector is given', () => {
    expect(md).not.toContain('Wait for pods that must finish');
    const waiting = renderRunbookMarkdown({ ...BASE, waitForPodSelector: 'job-kind=training', completionTimeoutSeconds: 7200 });
    expect(waiting).toContain('kubectl get pods -A -l job-kind=training --field-selector "spec.nodeName=$NODE,status.phase!=Succeeded,status.phase!=Failed"');
    expect(waiting).toContain('up to 2h');
    expect(at(waiting, 'kubectl cordon')).toBeLessThan(at(waiting, 'Wait for pods that must finish'));
    expect(at(waiting, 'Wait for pods that must finish')).toBeLessThan(at(waiting, 'Evict the GPU pods'));
  });

  test('validation: exec the given command, else readiness plus the install log', () => {
    const withExec = renderRunbookMarkdown({ ...BASE, validation: { containerName: 'nvidia-driver', command: ['nvidia-smi', '-L'] } });
    // a word starting with "-" is always quoted (shellWord): the shell passes -L all the same
    expect(withExec).toContain('--field-selector "spec.nodeName=$NODE" -o name)" -c nvidia-driver -- nvidia-smi \'-L\'');
    expect(md).not.toContain('kubectl exec');
    expect(md).toContain('--all-containers --prefix --tail=50');
  });

  test('timeouts come from the options', () => {
    const custom = renderRunbookMarkdown({ ...BASE, readyTimeoutSeconds: 3000, evictionTimeoutSeconds: 90 });
    expect(custom).toContain('--timeout=3000s');
    expect(custom).toContain('--timeout=90s');
    expect(custom).toContain('| New driver pod ready within | 50m');
  });

  test('deterministic: same text twice, independent of selector key order', () => {
    const reordered = { ...BASE, podSelector: { 'app.kubernetes.io/instance': 'nvidia', 'app.kubernetes.io/name': 'gpu-driver' } };
    expect(renderRunbookMarkdown(BASE)).toBe(md);
    expect(renderRunbookMarkdown(reordered)).toBe(md);
    expect(md).not.toMatch(/\d{4}-\d{2}-\d{2}/);
  });

  test.each([
    [{ namespace: 'GPU' }, /runbook namespace "GPU" is not a DNS-1123 label/],
    [{ name: 'gpu_driver' }, /runbook name "gpu_driver" is not a DNS-1123 label/],
    [{ podSelector: {} }, /podSelector is empty: the runbook would delete every pod in the namespace/],
    [{ podSelector: { app: 'a b' } }, /podSelector "app=a b" is not a label/],
    [{ gpuNodeSelectors: [' '] }, /gpuNodeSelectors has an empty selector/],
    [{ gpuNodeSelectors: [] }, /gpuNodeSelectors is empty/],
    [{ skipNodeLabel: 'bad label' }, /skipNodeLabel "bad label" is not a label: write key=value or key/],
    [{ readyTimeoutSeconds: 0 }, /readyTimeoutSeconds must be a whole number of seconds >= 1, got 0/],
    [{ waitForPodSelector: 'a=b\nrm -rf /' }, /waitForPodSelector contains a line break/],
    [{ validation: { containerName: 'driver', command: [] } }, /validation.command is empty/],
  ])('rejects %o', (override, message) => {
    expect(() => renderRunbookMarkdown({ ...BASE, ...override } as RunbookInput)).toThrow(message);
  });
});

describe('helpers', () => {
  test('matchLabelsSelector sorts keys', () => {
    expect(matchLabelsSelector({ b: '2', a: '1' })).toBe('a=1,b=2');
  });

  test('requirementsSelector renders every operator in kubectl syntax', () => {
    expect(requirementsSelector([
      { key: 'nvidia.com/gpu.present', operator: 'In', values: ['true'] },
      { key: 'gpu-type', operator: 'In', values: ['a100', 'h100'] },
      { key: 'nvidia.com/gpu.deploy.driver', operator: 'NotIn', values: ['false'] },
      { key: 'zone', operator: 'NotIn', values: ['a', 'b'] },
      { key: 'node-role.kubernetes.io/gpu', operator: 'Exists' },
      { key: 'cloud.google.com/gke-gpu-driver-version', operator: 'DoesNotExist' },
      { key: 'gpus', operator: 'Gt', values: ['1'] },
      { key: 'gpus', operator: 'Lt', values: ['9'] },
    ])).toBe('nvidia.com/gpu.present=true,gpu-type in (a100,h100),nvidia.com/gpu.deploy.driver!=false,zone notin (a,b),'
      + 'node-role.kubernetes.io/gpu,!cloud.google.com/gke-gpu-driver-version,gpus>1,gpus<9');
  });

  test('shellQuote leaves plain words alone and single-quotes the rest', () => {
    expect(shellQuote('app.kubernetes.io/name=x,y')).toBe('app.kubernetes.io/name=x,y');
    expect(shellQuote('!a')).toBe("'!a'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(execFileSync('bash', ['-c', `printf %s ${shellQuote("a b'c $HOME!")}`]).toString()).toBe("a b'c $HOME!");
  });
});

describe('renderRunbookScript', () => {
  const options: RunbookInput = {
    ...BASE,
    validation: { containerName: 'driver', command: ['nvidia-smi'] },
    waitForPodSelector: 'job-kind=training',
  };

  test('is valid bash and deterministic', () => {
    const script = renderRunbookScript(options);
    expect(script).toBe(renderRunbookScript(options));
    expect(script.startsWith('#!/usr/bin/env bash\n')).toBe(true);
    const check = spawnSync('bash', ['-n'], { input: script });
    expect(check.stderr.toString()).toBe('');
    expect(check.status).toBe(0);
  });

  test('RollingUpdate adds the switch-back command', () => {
    expect(renderRunbookScript(options)).not.toContain('RollingUpdate');
    expect(renderRunbookScript({ ...options, updateStrategy: 'RollingUpdate' }))
      .toContain('{"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":1,"maxSurge":0}}}}');
  });

  /**
   * Runs the script against a fake kubectl that logs every call and answers like a cluster with three
   * outdated nodes: node-a (one GPU pod, one CPU pod), node-b (no GPU pod), node-skip (skip label).
   */
  function runAgainstFakeCluster(newPodHash: string, args: string[] = [], cordonedBefore: string[] = []) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gpu-runbook-'));
    const log = path.join(dir, 'calls.log');
    const pods = JSON.stringify({
      items: [
        { metadata: { namespace: 'ml', name: 'train-1' }, spec: { containers: [{ name: 'c', resources: { limits: { 'nvidia.com/gpu': '1' } } }] } },
        { metadata: { namespace: 'web', name: 'nginx' }, spec: { containers: [{ name: 'c', resources: { limits: { memory: '1Gi' } } }] } },
      ],
    });
    const revisions = JSON.stringify({
      items: [
        { metadata: { labels: { 'controller-revision-hash': 'old' }, ownerReferences: [{ kind: 'DaemonSet', name: 'gpu-driver' }] }, revision: 1 },
        { metadata: { labels: { 'controller-revision-hash': 'new' }, ownerReferences: [{ kind: 'DaemonSet', name: 'gpu-driver' }] }, revision: 2 },
      ],
    });
    fs.writeFileSync(path.join(dir, 'pods.json'), pods);
    fs.writeFileSync(path.join(dir, 'revisions.json'), revisions);
    fs.writeFileSync(path.join(dir, 'kubectl'), [
      '#!/usr/bin/env bash',
      `echo "$*" >> ${shellQuote(log)}`,
      'case "$*" in',
      `  "get controllerrevisions"*) cat ${shellQuote(path.join(dir, 'revisions.json'))} ;;`,
      '  *"controller-revision-hash!=new"*) printf "node-b\\nnode-a\\nnode-skip\\n" ;;',
      '  "get nodes -l nvidia.com/gpu-driver-upgrade.skip=true --field-selector metadata.name=node-skip -o name") echo node/node-skip ;;',
      '  "get nodes"*) ;;',
      `  "get pods -A --field-selector spec.nodeName=node-a,"*) cat ${shellQuote(path.join(dir, 'pods.json'))} ;;`,
      '  "get pods -A --field-selector"*) echo \'{"items":[]}\' ;;',
      '  "get pods -A -l job-kind=training"*) ;;',
      '  create*) cat > /dev/null ;;',
      `  *"-o jsonpath={.items[0].metadata.labels.controller-revision-hash}") printf ${shellQuote(newPodHash)} ;;`,
      '  "get pods -n gpu-system"*"-o name") echo pod/gpu-driver-x ;;',
      ...cordonedBefore.map((node) => `  "get node -o jsonpath={.spec.unschedulable} -- ${node}") printf true ;;`),
      '  "get node "*) printf 8 ;;',
      '  *"{.status.observedGeneration} {.metadata.generation}") echo "4 4" ;;',
      '  "get ds"*) echo "updated 3 of 3" ;;',
      'esac',
    ].join('\n'), { mode: 0o755 });
    const script = path.join(dir, 'upgrade.sh');
    fs.writeFileSync(script, renderRunbookScript(options), { mode: 0o755 });
    const result = spawnSync('bash', [script, ...args], { env: { ...process.env, PATH: `${dir}:${process.env.PATH}` } });
    const calls = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n') : [];
    fs.rmSync(dir, { recursive: true, force: true });
    return { status: result.status, stderr: result.stderr.toString(), calls };
  }

  test('upgrades every outdated node in order and skips the labelled one', () => {
    const { status, stderr, calls } = runAgainstFakeCluster('new');
    expect(stderr).toContain('current revision: new');
    expect(calls[0]).toBe('get ds gpu-driver -n gpu-system -o jsonpath={.status.observedGeneration} {.metadata.generation}');
    expect(status).toBe(0);
    const nodeA = [
      'cordon -- node-a',
      'get pods -A -l job-kind=training --field-selector spec.nodeName=node-a,status.phase!=Succeeded,status.phase!=Failed -o name',
      'get pods -A --field-selector spec.nodeName=node-a,status.phase!=Succeeded,status.phase!=Failed -o json',
      'create --raw /api/v1/namespaces/ml/pods/train-1/eviction -f -',
      'wait --for=delete pod/train-1 -n ml --timeout=300s',
      `delete pod -n gpu-system -l ${SEL} --field-selector spec.nodeName=node-a --wait=true`,
      `wait --for=condition=Ready pod -n gpu-system -l ${SEL} --field-selector spec.nodeName=node-a --timeout=1500s`,
      'exec -n gpu-system pod/gpu-driver-x -c driver -- nvidia-smi',
      'uncordon -- node-a',
    ];
    const positions = nodeA.map((call) => calls.indexOf(call));
    expect(positions).not.toContain(-1);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    // only the GPU pod is evicted
    expect(calls.filter((c) => c.startsWith('create --raw'))).toEqual(['create --raw /api/v1/namespaces/ml/pods/train-1/eviction -f -']);
    // one node at a time, in name order; node-skip untouched
    expect(calls.indexOf('uncordon -- node-a')).toBeLessThan(calls.indexOf('cordon -- node-b'));
    expect(calls).toContain('uncordon -- node-b');
    expect(calls.filter((c) => c.includes('node-skip') && !c.startsWith('get nodes'))).toEqual([]);
    expect(stderr).toContain('skip node-skip: labelled nvidia.com/gpu-driver-upgrade.skip=true');
  });

  test('a node name is passed after `--`: one that reads as an option (here `--all`) is never taken for one by kubectl', () => {
    const { status, calls } = runAgainstFakeCluster('new', ['--all']);
    expect(status).toBe(0);
    expect(calls).toEqual(expect.arrayContaining([
      'get node -o jsonpath={.spec.unschedulable} -- --all',
      'cordon -- --all',
      'get node -o jsonpath={.status.allocatable.nvidia\\.com/gpu} -- --all',
      'uncordon -- --all',
    ]));
    // every call naming the node as an argument puts it after `--` (selectors carry it inside one word)
    expect(calls.filter((c) => / --all\b/.test(c) && !/ -- --all$/.test(c))).toEqual([]);
  });

  // One owner of cordon state (issue 23 point 3): the script, which restores what it found, as
  // gpu-operator's upgrade controller does for a node that was unschedulable before its upgrade.
  test('a node cordoned before the upgrade stays cordoned after it; the others are uncordoned', () => {
    const { status, stderr, calls } = runAgainstFakeCluster('new', ['node-a', 'node-b'], ['node-b']);
    expect(status).toBe(0);
    expect(calls.indexOf('get node -o jsonpath={.spec.unschedulable} -- node-b')).toBeLessThan(calls.indexOf('cordon -- node-b'));
    expect(calls).toContain('cordon -- node-b');
    expect(calls).toContain(`wait --for=condition=Ready pod -n gpu-system -l ${SEL} --field-selector spec.nodeName=node-b --timeout=1500s`);
    expect(calls).not.toContain('uncordon -- node-b');
    expect(stderr).toContain('node-b: cordoned before the upgrade, left cordoned');
    expect(calls).toContain('uncordon -- node-a');
  });

  test('the Markdown runbook notes the cordon first and uncordons only a node it cordoned', () => {
    const md = renderRunbookMarkdown(options);
    expect(md).toContain('WAS_CORDONED=$(kubectl get node -o jsonpath=\'{.spec.unschedulable}\' -- "$NODE")\nkubectl cordon -- "$NODE"');
    expect(md).toContain('[ "$WAS_CORDONED" = "true" ] || kubectl uncordon -- "$NODE"');
    expect(md).not.toMatch(/^kubectl uncordon/m);
  });

  test('stops when the new pod does not run the new revision, leaving the node cordoned', () => {
    const { status, stderr, calls } = runAgainstFakeCluster('old', ['node-a', 'node-b']);
    expect(status).not.toBe(0);
    expect(stderr).toContain('driver pod on node-a runs revision old, expected new');
    expect(stderr).toContain('stopped while upgrading node-a');
    expect(calls).toContain('cordon -- node-a');
    expect(calls).not.toContain('uncordon -- node-a');
    expect(calls).not.toContain('cordon -- node-b');
  });
});

describe('runbook over rollout waves', () => {
  const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
  function driver(promoted: Promotion, extra: Partial<GpuDriverDaemonSetProps> = {}): GpuDriverDaemonSet {
    return new GpuDriverDaemonSet(new Chart(Testing.app(), 'chart'), 'nvidia', {
      image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04',
      rollout: { waves: WAVES, promoted, previous: GpuDriverDaemonSet.release({ image: 'nvcr.io/nvidia/driver:535.183.01-ubuntu22.04' }) },
      ...extra,
    });
  }

  test('canary only: the runbook and its script name the canary DaemonSet and select only canary pods', () => {
    const d = driver(Promotion.through('canary'));
    const md = d.runbook();
    expect(md).toContain('| DaemonSet | `gpu-driver-canary` in namespace');
    expect(md).toContain('node-agents.cdk8s.io/rollout-group=canary');
    expect(md).not.toContain('rollout-group=fleet');
    expect(md).not.toContain('rollout-group=wave-1');
    expect(md).not.toContain('| DaemonSet | `gpu-driver` in');
    expect(md).toContain('Held (nothing to do): `wave-1`, `fleet`.');
    const script = d.runbookScript();
    expect(script).toContain('DAEMONSET=gpu-driver-canary');
    expect(script).toMatch(/POD_SELECTOR=.*rollout-group=canary/);
    expect(() => d.runbookScript({ group: 'fleet' })).toThrow(/GpuDriverDaemonSet chart\/nvidia: runbookScript group "fleet" is not a promoted rollout group; choose one of "canary"/);
  });

  test('several waves promoted: one section per wave DaemonSet, in wave order, and one script per group', () => {
    const d = driver(Promotion.all());
    const md = d.runbook();
    const sections = [...md.matchAll(/^# Wave `([a-z0-9-]+)`: Upgrade runbook: DaemonSet `kube-system\/([a-z0-9-]+)`/gm)].map((m) => [m[1], m[2]]);
    expect(sections).toEqual([['canary', 'gpu-driver-canary'], ['wave-1', 'gpu-driver-wave-1'], ['fleet', 'gpu-driver']]);
    expect(d.runbookScript({ group: 'wave-1' })).toMatch(/POD_SELECTOR=.*rollout-group=wave-1/);
    expect(d.runbookScript()).toContain('DAEMONSET=gpu-driver-canary');
  });

  test('without waves: one DaemonSet, the runbook as before', () => {
    const d = new GpuDriverDaemonSet(new Chart(Testing.app(), 'chart'), 'nvidia', { image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04' });
    expect(d.runbook()).toMatch(/^# Upgrade runbook: DaemonSet `kube-system\/gpu-driver`/);
    expect(d.runbookScript()).toContain('DAEMONSET=gpu-driver');
  });
});
