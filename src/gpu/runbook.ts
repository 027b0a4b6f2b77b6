/**
 * Node-by-node upgrade runbook for a GPU driver DaemonSet with `updateStrategy: OnDelete`.
 *
 * OnDelete replaces nothing on its own: a new template reaches a node only when its driver pod is
 * deleted. A driver cannot be unloaded while GPU workloads hold it open (the new pod ends in
 * `Init:CrashLoopBackOff` with "driver is in use"), so each node is cordoned and emptied of GPU pods
 * first. The procedure is the safe one for a driver (switch to OnDelete, delete pods node by node, check,
 * switch back) and the states of gpu-operator's upgrade controller (cordon, wait for jobs, GPU pod
 * deletion, driver pod restart, validation, uncordon), including its node skip label.
 *
 * Pure module: no cdk8s imports. Output is deterministic text (no dates, stable ordering).
 */
import { DEFAULT_READY_WAIT_SECONDS, shortDuration } from '../rollout/startup-budget';
import { NodeSelectorRequirementJson } from '../scheduling/types';
import { shellWord } from '../util/shell';

/** gpu-operator's node label for "leave this node's driver alone during upgrades". */
export const DEFAULT_SKIP_NODE_LABEL = 'nvidia.com/gpu-driver-upgrade.skip=true';
/** gpu-operator's default GPU pod deletion timeout. */
export const DEFAULT_EVICTION_TIMEOUT_SECONDS = 300;
export const DEFAULT_COMPLETION_TIMEOUT_SECONDS = 3600;
/** Default wait for a new driver pod: a 20 minute build plus 5 minutes for image pull and module load. */
export const DEFAULT_READY_TIMEOUT_SECONDS = DEFAULT_READY_WAIT_SECONDS;

export type DriverUpdateStrategy = 'OnDelete' | 'RollingUpdate';

/** How to check a new driver pod beyond its readiness: a command run in one of its containers. */
export interface DriverValidation {
  readonly containerName: string;
  readonly command: readonly string[];
}

export interface RunbookInput {
  /** Namespace of the DaemonSet. */
  readonly namespace: string;
  /** Name of the DaemonSet. */
  readonly name: string;
  /** The DaemonSet's selector (matchLabels) = its pods' labels. */
  readonly podSelector: Readonly<Record<string, string>>;
  /**
   * kubectl label selectors of the GPU nodes, one per node-affinity term (a node matching any is a
   * GPU node): informational listings.
   */
  readonly gpuNodeSelectors: readonly string[];
  /**
   * Node label (`key=value` or `key`) whose nodes are left alone.
   * @default DEFAULT_SKIP_NODE_LABEL
   */
  readonly skipNodeLabel?: string;
  /**
   * Label selector of pods to wait for (jobs that must finish) instead of evicting them.
   * @default none: every GPU pod is evicted
   */
  readonly waitForPodSelector?: string;
  /** @default DEFAULT_READY_TIMEOUT_SECONDS */
  readonly readyTimeoutSeconds?: number;
  /** @default DEFAULT_EVICTION_TIMEOUT_SECONDS */
  readonly evictionTimeoutSeconds?: number;
  /** @default DEFAULT_COMPLETION_TIMEOUT_SECONDS */
  readonly completionTimeoutSeconds?: number;
  /** @default none: readiness is the check */
  readonly validation?: DriverValidation;
  /**
   * The strategy the manifest declares. RollingUpdate adds "switch to OnDelete" and "switch back".
   * @default 'OnDelete'
   */
  readonly updateStrategy?: DriverUpdateStrategy;
  /** maxUnavailable to restore when switching back to RollingUpdate. @default 1 */
  readonly rollingUpdateMaxUnavailable?: string | number;
  /** File the new version is applied from. @default '<new manifest>' */
  readonly manifestFile?: string;
}

/** Resource names of GPU allocations: whole GPUs and MIG slices. */
const GPU_RESOURCE_REGEX = '^nvidia\\\\.com/(gpu|mig-.+)$';

interface Resolved {
  readonly namespace: string;
  readonly name: string;
  readonly podSelector: string;
  readonly gpuNodeSelectors: readonly string[];
  readonly skipNodeLabel: string;
  readonly skipSelector: string;
  readonly notSkippedSelector: string;
  readonly waitForPodSelector?: string;
  readonly readyTimeout: number;
  readonly evictionTimeout: number;
  readonly completionTimeout: number;
  readonly validation?: DriverValidation;
  readonly rolling: boolean;
  readonly maxUnavailable: string | number;
  readonly manifestFile: string;
}

/** The shell-quoted words the Markdown commands share: namespace, DaemonSet name and pod selector. */
interface MarkdownWords {
  readonly ns: string;
  readonly ds: string;
  readonly sel: string;
}

/** One numbered `##` section of the Markdown runbook: its title and the lines under its heading. */
interface MarkdownSection {
  readonly title: string;
  readonly lines: readonly string[];
}

/** Markdown runbook: the exact kubectl commands for this DaemonSet, one node at a time. */
export function renderRunbookMarkdown(options: RunbookInput): string {
  const o = resolve(options);
  const w: MarkdownWords = { ns: shellWord(o.namespace), ds: shellWord(o.name), sel: shellWord(o.podSelector) };
  const sections: MarkdownSection[] = [
    { title: 'Before you start', lines: beforeYouStartSection(o, w) },
    ...(o.rolling ? [{ title: 'Switch to OnDelete', lines: switchToOnDeleteSection(w) }] : []),
    { title: 'Apply the new version', lines: applySection(o, w) },
    { title: 'Upgrade one node', lines: upgradeOneNodeSection(o, w) },
    { title: 'After the last node', lines: afterLastNodeSection(o, w) },
    { title: 'If a step fails', lines: ifAStepFailsSection() },
  ];
  return [
    ...markdownIntro(o),
    ...sections.flatMap((section, i) => [`## ${i + 1}. ${section.title}`, '', ...section.lines]),
  ].join('\n');
}

/** A fenced bash block of the given commands, then a blank line. */
function codeBlock(...cmds: string[]): string[] {
  return ['```bash', ...cmds, '```', ''];
}

/** Title, why the upgrade goes node by node, and the table of this DaemonSet's facts. */
function markdownIntro(o: Resolved): string[] {
  return [
    `# Upgrade runbook: DaemonSet \`${o.namespace}/${o.name}\``,
    '',
    'Generated by cdk8s-node-agents from the construct that synthesizes this DaemonSet; regenerate it rather than edit it.',
    '',
    'The driver DaemonSet is updated with `updateStrategy: OnDelete`: applying a new version restarts nothing, '
      + 'and a node gets the new driver only when its driver pod is deleted. A driver cannot be unloaded while GPU '
      + 'workloads hold it (the new pod would end in `Init:CrashLoopBackOff` with "driver is in use"), so the upgrade '
      + 'goes one node at a time: cordon, empty the node of GPU pods, replace the driver pod, check it, uncordon. '
      + 'GPU pods that ran through the upgrade would keep references to the old driver; evicting them first restarts them on the new one.',
    '',
    '| | |',
    '|---|---|',
    `| DaemonSet | \`${o.name}\` in namespace \`${o.namespace}\` |`,
    `| Driver pods | \`-l ${o.podSelector}\` |`,
    `| GPU nodes | ${o.gpuNodeSelectors.map((s) => `\`-l ${s}\``).join(' or ')} |`,
    `| Nodes left alone | label \`${o.skipNodeLabel}\` |`,
    '| GPU pods | pods whose containers request `nvidia.com/gpu` or a MIG slice `nvidia.com/mig-*`, and pods with DRA ResourceClaims |',
    `| Pods waited for, not evicted | ${o.waitForPodSelector ? `\`-l ${o.waitForPodSelector}\`, up to ${shortDuration(o.completionTimeout)}` : 'none'} |`,
    `| Eviction timeout | ${shortDuration(o.evictionTimeout)} |`,
    `| New driver pod ready within | ${shortDuration(o.readyTimeout)} (the driver may first build its kernel module) |`,
    '',
    'Needs `kubectl` (rights to cordon nodes, evict pods and read ControllerRevisions) and `jq`. '
      + 'The companion script runs the same steps for every outdated node and stops at the first failure, leaving that node cordoned.',
    '',
  ];
}

/** Section "Before you start": the DaemonSet, its pods and the GPU nodes the upgrade covers. */
function beforeYouStartSection(o: Resolved, w: MarkdownWords): string[] {
  return [
    `Check the DaemonSet, where its pods run, and which GPU nodes exist${o.gpuNodeSelectors.length > 1 ? ' (a node matching any of the selectors)' : ''}:`,
    '',
    ...codeBlock(
      `kubectl get ds ${w.ds} -n ${w.ns} -o wide`,
      `kubectl get pods -n ${w.ns} -l ${w.sel} -o wide`,
      ...o.gpuNodeSelectors.map((s) => `kubectl get nodes -l ${shellWord(s)} -L ${shellWord(labelKey(o.skipNodeLabel))}`),
    ),
    'The GPU nodes this upgrade covers (the skip label left out):',
    '',
    ...codeBlock(...o.gpuNodeSelectors.map((s) => `kubectl get nodes -l ${shellWord(`${s},${o.notSkippedSelector}`)}`)),
    'Every GPU node should have exactly one driver pod, Running and Ready, before you change anything.',
    '',
  ];
}

/** Section "Switch to OnDelete" (only for a DaemonSet declared RollingUpdate). */
function switchToOnDeleteSection(w: MarkdownWords): string[] {
  return [
    'This DaemonSet is declared with `RollingUpdate`, which would replace driver pods under running GPU workloads. '
      + 'Stop the controller from replacing pods first:',
    '',
    ...codeBlock(`kubectl patch ds ${w.ds} -n ${w.ns} --type=merge -p ${shellWord(onDeletePatch())}`),
    'Then apply the new version with the strategy kept at OnDelete (a manifest that says `RollingUpdate` would switch it back '
      + 'and start replacing pods at once): synthesize it with `updateStrategy` OnDelete for this upgrade, or edit the strategy '
      + 'in the file you apply. Switching the strategy does not change the pod template, so it restarts nothing.',
    '',
  ];
}

/** Section "Apply the new version": apply, wait for the controller, find the new revision and the outdated nodes. */
function applySection(o: Resolved, w: MarkdownWords): string[] {
  return [
    'Nothing restarts: the driver pods keep running the old template until deleted.',
    '',
    ...codeBlock(`kubectl apply -f ${shellWord(o.manifestFile)}`),
    'Wait until the controller has seen the new template (the two numbers equal):',
    '',
    ...codeBlock(`kubectl get ds ${w.ds} -n ${w.ns} -o jsonpath='{.status.observedGeneration}/{.metadata.generation}{"\\n"}'`),
    'Find the new revision: the newest ControllerRevision of this DaemonSet. Its `controller-revision-hash` label is the one new pods carry.',
    '',
    ...codeBlock(
      `HASH=$(${currentHashCommand(o)})`,
      'echo "$HASH"',
    ),
    'Nodes whose driver pod still runs an older revision:',
    '',
    // Inside double quotes `!=` is safe from history expansion (bash leaves `!` before `=` alone).
    ...codeBlock(`kubectl get pods -n ${w.ns} -l "${o.podSelector},controller-revision-hash!=$HASH" -o wide`),
    `Leave out nodes labelled \`${o.skipNodeLabel}\` (\`kubectl get nodes -l ${o.skipSelector}\`). `
      + 'Do one node first and check it before the others.',
    '',
  ];
}

/** Section "Upgrade one node": its `###` steps in order, from cordon to uncordon. */
function upgradeOneNodeSection(o: Resolved, w: MarkdownWords): string[] {
  return [
    'Repeat this section for each outdated node.',
    '',
    ...codeBlock('NODE=<node-name>'),
    ...cordonStep(),
    ...(o.waitForPodSelector ? waitForCompletionStep(o.waitForPodSelector, o.completionTimeout) : []),
    ...evictStep(o),
    ...replaceDriverPodStep(o, w),
    ...validateStep(o, w),
    ...uncordonStep(),
  ];
}

/** Step "Cordon": note whether the node was cordoned already, then cordon it. */
function cordonStep(): string[] {
  return [
    '### Cordon',
    '',
    'No new GPU pods land on the node. The replacement driver pod still does: DaemonSet pods tolerate `node.kubernetes.io/unschedulable`. '
      + 'This runbook owns the cordon: the driver manager in the driver pod never cordons, uncordons or evicts. '
      + 'Note first whether the node is cordoned already (for other work): then it stays cordoned after the upgrade.',
    '',
    // options first, then `--`, then the node: a node name is never read as an option by kubectl
    ...codeBlock(
      'WAS_CORDONED=$(kubectl get node -o jsonpath=\'{.spec.unschedulable}\' -- "$NODE")',
      'kubectl cordon -- "$NODE"',
    ),
  ];
}

/** Step "Wait for pods that must finish" (only with a waitForPodSelector). */
function waitForCompletionStep(waitForPodSelector: string, completionTimeout: number): string[] {
  return [
    '### Wait for pods that must finish',
    '',
    `Pods matching \`${waitForPodSelector}\` are left to complete rather than evicted. Wait until none is left running on the node (up to ${shortDuration(completionTimeout)}):`,
    '',
    ...codeBlock(`kubectl get pods -A -l ${shellWord(waitForPodSelector)} --field-selector "spec.nodeName=$NODE,status.phase!=Succeeded,status.phase!=Failed" -o wide`),
  ];
}

/** Step "Evict the GPU pods": list them, evict each through the Eviction API. */
function evictStep(o: Resolved): string[] {
  return [
    '### Evict the GPU pods',
    '',
    'List the pods on the node that hold a GPU (requests or limits on `nvidia.com/gpu` or `nvidia.com/mig-*`, in any container, or a DRA ResourceClaim):',
    '',
    ...codeBlock(gpuPodsCommand('$NODE')),
    'Evict each one through the Eviction API, which honours PodDisruptionBudgets (`kubectl delete` would not), and wait until it is gone:',
    '',
    ...codeBlock(
      'POD_NS=<namespace> POD=<pod>',
      'kubectl create --raw "/api/v1/namespaces/$POD_NS/pods/$POD/eviction" -f - <<EOF',
      '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"namespace":"$POD_NS","name":"$POD"}}',
      'EOF',
      `kubectl wait --for=delete pod/"$POD" -n "$POD_NS" --timeout=${o.evictionTimeout}s`,
    ),
    'An eviction refused with 429 means a PodDisruptionBudget allows no disruption now: retry later, or move the workload another way. '
      + 'A GPU pod owned by a DaemonSet comes straight back (DaemonSet pods tolerate the cordon): stop it another way before going on.',
    '',
  ];
}

/** Step "Replace the driver pod": delete it, wait for the new one to appear and become Ready. */
function replaceDriverPodStep(o: Resolved, w: MarkdownWords): string[] {
  return [
    '### Replace the driver pod',
    '',
    'The controller creates the new pod from the new template; it replaces the loaded driver, which needs the GPUs free of processes.',
    '',
    ...codeBlock(`kubectl delete pod -n ${w.ns} -l ${w.sel} --field-selector "spec.nodeName=$NODE" --wait=true`),
    'Wait for the new pod to appear, then to become Ready:',
    '',
    ...codeBlock(
      `until kubectl get pods -n ${w.ns} -l ${w.sel} --field-selector "spec.nodeName=$NODE" -o name | grep -q .; do sleep 5; done`,
      `kubectl wait --for=condition=Ready pod -n ${w.ns} -l ${w.sel} --field-selector "spec.nodeName=$NODE" --timeout=${o.readyTimeout}s`,
    ),
  ];
}

/** Step "Validate": the new revision, the driver check (exec or install log), the GPUs advertised again. */
function validateStep(o: Resolved, w: MarkdownWords): string[] {
  const driverPod = `"$(kubectl get pods -n ${w.ns} -l ${w.sel} --field-selector "spec.nodeName=$NODE" -o name)"`;
  const driverCheck = o.validation
    ? [
      `Run the driver check in the \`${o.validation.containerName}\` container:`,
      '',
      ...codeBlock(`kubectl exec -n ${w.ns} ${driverPod} -c ${shellWord(o.validation.containerName)} -- ${o.validation.command.map(shellWord).join(' ')}`),
    ]
    : [
      'Readiness is the driver check for this DaemonSet (its main container has no tools to exec). Read the install log if in doubt:',
      '',
      ...codeBlock(`kubectl logs -n ${w.ns} ${driverPod} --all-containers --prefix --tail=50`),
    ];
  return [
    '### Validate',
    '',
    'The new pod must run the new revision:',
    '',
    ...codeBlock(`kubectl get pods -n ${w.ns} -l ${w.sel} --field-selector "spec.nodeName=$NODE" -o jsonpath='{.items[0].metadata.labels.controller-revision-hash}{"\\n"}'   # must print $HASH`),
    ...driverCheck,
    'Once the device plugin has re-registered, the node advertises its GPUs again (empty output: restart the device plugin pod on this node):',
    '',
    ...codeBlock('kubectl get node -o jsonpath=\'{.status.allocatable.nvidia\\.com/gpu}{"\\n"}\' -- "$NODE"'),
  ];
}

/** Step "Uncordon": only a node this upgrade cordoned. */
function uncordonStep(): string[] {
  return [
    '### Uncordon',
    '',
    'Only a node this upgrade cordoned; one that was cordoned before stays cordoned:',
    '',
    ...codeBlock('[ "$WAS_CORDONED" = "true" ] || kubectl uncordon -- "$NODE"'),
  ];
}

/** Section "After the last node": every pod updated, then (RollingUpdate only) switch back. */
function afterLastNodeSection(o: Resolved, w: MarkdownWords): string[] {
  const switchBack = o.rolling
    ? [
      'Only then switch back to RollingUpdate: with pods still on an old revision, switching back starts replacing them at once, under their GPU workloads.',
      '',
      ...codeBlock(`kubectl patch ds ${w.ds} -n ${w.ns} --type=merge -p ${shellWord(rollingPatch(o.maxUnavailable))}`),
    ]
    : [];
  return [
    'Every scheduled driver pod runs the new revision when the two numbers are equal:',
    '',
    ...codeBlock(`kubectl get ds ${w.ds} -n ${w.ns} -o jsonpath='{.status.updatedNumberScheduled}/{.status.desiredNumberScheduled}{"\\n"}'`),
    ...switchBack,
  ];
}

/** Section "If a step fails": the known failures and what to do about each. */
function ifAStepFailsSection(): string[] {
  return [
    'The node stays cordoned: nothing new lands on it while you look.',
    '',
    '- New driver pod in `Init:CrashLoopBackOff` or `CrashLoopBackOff` with "driver is in use": a process still holds the GPU. '
      + 'Look for GPU pods left on the node (the listing above) and host processes (`nvidia-smi` on the node), then delete the driver pod again. '
      + 'A device plugin, dcgm-exporter or gpu-feature-discovery not run by gpu-operator in this namespace also holds the driver: '
      + 'the driver manager does not pause those, so stop them on the node (e.g. a node label their DaemonSet selects on) until the new driver is Ready.',
    '- Build OOMKilled (`kubectl describe pod`): the build\'s memory grows with the node\'s cores; raise the driver\'s `resources.memoryLimit`.',
    '- Build fails on missing kernel headers: the node\'s kernel changed; install headers for `uname -r` or use a precompiled driver image pinned to that kernel '
      + '(`feature.node.kubernetes.io/kernel-version.full`).',
    '- Module load fails with nouveau loaded: blacklist `nouveau` on the node image and reboot the node.',
    '- Pod not Ready within the timeout: read its logs (`kubectl logs --previous` after a restart); a startupProbe budget shorter than the build restarts it mid-build.',
    '- Roll back: apply the previous manifest, then repeat "Upgrade one node" for the nodes already upgraded.',
    '',
  ];
}

/** Bash script running the runbook for the given nodes (or every outdated one). */
export function renderRunbookScript(options: RunbookInput): string {
  const o = resolve(options);
  return [
    ...scriptHeader(o),
    ...scriptRevisionFunctions(o),
    ...scriptPodFunctions(),
    ...scriptUpgradeNodeFunction(o),
    ...scriptMain(o),
  ].join('\n');
}

/** Shebang, usage, shell options, the variables of this DaemonSet and `log`. */
function scriptHeader(o: Resolved): string[] {
  return [
    '#!/usr/bin/env bash',
    `# Node-by-node upgrade of the GPU driver DaemonSet ${o.namespace}/${o.name}: one node at a time, with OnDelete.`,
    '# Generated by cdk8s-node-agents; regenerate it rather than edit it. The Markdown runbook explains each step.',
    '#',
    '# Usage: apply the new version first (with the strategy at OnDelete), then',
    '#   ./upgrade.sh            every node whose driver pod runs an older revision',
    '#   ./upgrade.sh NODE...    only these nodes',
    '# Needs kubectl and jq. Stops at the first failure and leaves that node cordoned.',
    // -E: the ERR trap that reports the cordoned node must fire inside functions too.
    'set -Eeuo pipefail',
    '',
    `NAMESPACE=${shellWord(o.namespace)}`,
    `DAEMONSET=${shellWord(o.name)}`,
    `POD_SELECTOR=${shellWord(o.podSelector)}`,
    `SKIP_SELECTOR=${shellWord(o.skipSelector)}`,
    `WAIT_FOR_POD_SELECTOR=${shellWord(o.waitForPodSelector ?? '')}`,
    `READY_TIMEOUT=${o.readyTimeout}`,
    `EVICTION_TIMEOUT=${o.evictionTimeout}`,
    `COMPLETION_TIMEOUT=${o.completionTimeout}`,
    '',
    'log() { printf \'%s\\n\' "$*" >&2; }',
    '',
  ];
}

/** Shell functions about revisions: `wait_observed`, `current_hash`, `outdated_nodes`. */
function scriptRevisionFunctions(o: Resolved): string[] {
  return [
    '# The controller writes the ControllerRevision of a new template when it syncs: wait for that first.',
    'wait_observed() {',
    '  local gens observed generation',
    '  for _ in $(seq 60); do',
    '    gens=$(kubectl get ds "$DAEMONSET" -n "$NAMESPACE" -o jsonpath=\'{.status.observedGeneration} {.metadata.generation}\')',
    '    read -r observed generation <<< "$gens"',
    '    if [ "${observed:-0}" -ge "$generation" ]; then return 0; fi',
    '    sleep 2',
    '  done',
    '  log "the DaemonSet controller has not observed generation $generation of $NAMESPACE/$DAEMONSET"; return 1',
    '}',
    '',
    '# The newest ControllerRevision owned by the DaemonSet is the template new pods get.',
    'current_hash() {',
    `  ${currentHashCommand(o, true)}`,
    '}',
    '',
    'outdated_nodes() {',
    '  kubectl get pods -n "$NAMESPACE" -l "$POD_SELECTOR,controller-revision-hash!=$HASH" \\',
    '    -o jsonpath=\'{range .items[*]}{.spec.nodeName}{"\\n"}{end}\' | LC_ALL=C sort -u',
    '}',
    '',
  ];
}

/** Shell functions about the pods on a node: `gpu_pods`, `wait_for_completion`, `evict`. */
function scriptPodFunctions(): string[] {
  return [
    '# Running pods on the node that hold a GPU or a MIG slice, as "namespace name" lines.',
    'gpu_pods() {',
    `  ${gpuPodsCommand('$1')}`,
    '}',
    '',
    'wait_for_completion() {',
    '  [ -n "$WAIT_FOR_POD_SELECTOR" ] || return 0',
    '  local deadline=$((SECONDS + COMPLETION_TIMEOUT)) running',
    '  while :; do',
    '    running=$(kubectl get pods -A -l "$WAIT_FOR_POD_SELECTOR" --field-selector "spec.nodeName=$1,status.phase!=Succeeded,status.phase!=Failed" -o name)',
    '    [ -n "$running" ] || return 0',
    '    if [ "$SECONDS" -ge "$deadline" ]; then log "pods matching $WAIT_FOR_POD_SELECTOR still run on $1 after ${COMPLETION_TIMEOUT}s"; return 1; fi',
    '    sleep 30',
    '  done',
    '}',
    '',
    '# The Eviction API honours PodDisruptionBudgets; a refusal (429) is retried until the timeout.',
    'evict() {',
    '  local ns=$1 pod=$2 deadline=$((SECONDS + EVICTION_TIMEOUT))',
    '  until printf \'{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"namespace":"%s","name":"%s"}}\' "$ns" "$pod" \\',
    '      | kubectl create --raw "/api/v1/namespaces/$ns/pods/$pod/eviction" -f - >/dev/null; do',
    '    kubectl get pod -n "$ns" "$pod" -o name >/dev/null 2>&1 || return 0',
    '    if [ "$SECONDS" -ge "$deadline" ]; then log "eviction of $ns/$pod refused for ${EVICTION_TIMEOUT}s (PodDisruptionBudget?)"; return 1; fi',
    '    sleep 10',
    '  done',
    '  kubectl wait --for=delete pod/"$pod" -n "$ns" --timeout="${EVICTION_TIMEOUT}s"',
    '}',
    '',
  ];
}

/** Shell function `upgrade_node`: the runbook's "Upgrade one node" for one node, stopping at the first failure. */
function scriptUpgradeNodeFunction(o: Resolved): string[] {
  const driverCheck = o.validation
    ? [
      '  kubectl exec -n "$NAMESPACE" "$(kubectl get pods -n "$NAMESPACE" -l "$POD_SELECTOR" --field-selector "spec.nodeName=$node" -o name)" \\',
      `    -c ${shellWord(o.validation.containerName)} -- ${o.validation.command.map(shellWord).join(' ')}`,
    ]
    : [];
  return [
    'upgrade_node() {',
    '  local node=$1 skipped gpu ns pod pod_hash was_cordoned',
    '  # Assignments, not `if $(...)`: a failing kubectl must stop the script, not read as "no".',
    '  skipped=$(kubectl get nodes -l "$SKIP_SELECTOR" --field-selector "metadata.name=$node" -o name)',
    '  if [ -n "$skipped" ]; then log "skip $node: labelled $SKIP_SELECTOR"; return 0; fi',
    '  # This script owns the cordon (the driver manager never cordons); a node cordoned before stays cordoned.',
    '  was_cordoned=$(kubectl get node -o jsonpath=\'{.spec.unschedulable}\' -- "$node")',
    '  log "== $node: cordon"',
    '  kubectl cordon -- "$node"',
    '  log "== $node: wait for pods that must finish"',
    '  wait_for_completion "$node"',
    '  log "== $node: evict GPU pods"',
    '  gpu=$(gpu_pods "$node")',
    '  while read -r ns pod; do',
    '    [ -n "$pod" ] || continue',
    '    evict "$ns" "$pod"',
    '  done <<< "$gpu"',
    '  log "== $node: replace the driver pod"',
    '  kubectl delete pod -n "$NAMESPACE" -l "$POD_SELECTOR" --field-selector "spec.nodeName=$node" --wait=true',
    // Bounded like the Ready wait: a pod the controller never creates (the node no longer matches) must not hang the script.
    '  local deadline=$((SECONDS + READY_TIMEOUT))',
    '  until kubectl get pods -n "$NAMESPACE" -l "$POD_SELECTOR" --field-selector "spec.nodeName=$node" -o name | grep -q .; do',
    '    if [ "$SECONDS" -ge "$deadline" ]; then log "no driver pod was created on $node within ${READY_TIMEOUT}s"; return 1; fi',
    '    sleep 5',
    '  done',
    '  kubectl wait --for=condition=Ready pod -n "$NAMESPACE" -l "$POD_SELECTOR" --field-selector "spec.nodeName=$node" --timeout="${READY_TIMEOUT}s"',
    '  log "== $node: validate"',
    '  pod_hash=$(kubectl get pods -n "$NAMESPACE" -l "$POD_SELECTOR" --field-selector "spec.nodeName=$node" -o jsonpath=\'{.items[0].metadata.labels.controller-revision-hash}\')',
    '  if [ "$pod_hash" != "$HASH" ]; then log "driver pod on $node runs revision $pod_hash, expected $HASH"; return 1; fi',
    ...driverCheck,
    '  log "$node advertises nvidia.com/gpu: $(kubectl get node -o jsonpath=\'{.status.allocatable.nvidia\\.com/gpu}\' -- "$node")"',
    '  if [ "$was_cordoned" = "true" ]; then log "== $node: cordoned before the upgrade, left cordoned"; return 0; fi',
    '  log "== $node: uncordon"',
    '  kubectl uncordon -- "$node"',
    '}',
    '',
  ];
}

/** The script's main part: find the revision and the nodes, upgrade each, report; (RollingUpdate) how to switch back. */
function scriptMain(o: Resolved): string[] {
  const switchBack = o.rolling
    ? [
      '# Declared RollingUpdate: switch back once every pod runs the new revision (see the runbook):',
      `#   kubectl patch ds "$DAEMONSET" -n "$NAMESPACE" --type=merge -p ${shellWord(rollingPatch(o.maxUnavailable))}`,
    ]
    : [];
  return [
    'wait_observed',
    'HASH=$(current_hash)',
    '[ -n "$HASH" ] || { log "no ControllerRevision found for $NAMESPACE/$DAEMONSET"; exit 1; }',
    'log "current revision: $HASH"',
    'if [ "$#" -gt 0 ]; then NODES=("$@"); else OUTDATED=$(outdated_nodes); mapfile -t NODES <<< "$OUTDATED"; fi',
    'for node in "${NODES[@]}"; do',
    '  [ -n "$node" ] || continue',
    '  trap \'log "stopped while upgrading $node: a cordoned node stays cordoned, see the runbook"\' ERR',
    '  upgrade_node "$node"',
    '  trap - ERR',
    'done',
    'kubectl get ds "$DAEMONSET" -n "$NAMESPACE" -o jsonpath=\'updated {.status.updatedNumberScheduled} of {.status.desiredNumberScheduled} scheduled driver pods{"\\n"}\'',
    ...switchBack,
    '',
  ];
}

/** `a=1,b=2` with keys sorted, for `kubectl -l`. */
export function matchLabelsSelector(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels).sort().map((key) => `${key}=${labels[key]}`).join(',');
}

/** The kubectl label-selector form of node-affinity requirements (ANDed, as in one term). */
export function requirementsSelector(requirements: readonly NodeSelectorRequirementJson[]): string {
  return requirements.map((req) => {
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In': return values.length === 1 ? `${req.key}=${values[0]}` : `${req.key} in (${values.join(',')})`;
      case 'NotIn': return values.length === 1 ? `${req.key}!=${values[0]}` : `${req.key} notin (${values.join(',')})`;
      case 'Exists': return req.key;
      case 'DoesNotExist': return `!${req.key}`;
      case 'Gt': return `${req.key}>${values[0]}`;
      case 'Lt': return `${req.key}<${values[0]}`;
      default: throw new Error(`unknown node selector operator ${String(req.operator)}`);
    }
  }).join(',');
}

/**
 * What is wrong with a runbook's input, each problem with its prop and fix; the construct raises them
 * as its own error before it renders (GpuDriverDaemonSet.runbook, runbookScript).
 */
export function runbookInputProblems(options: RunbookInput): string[] {
  const problems = [...dnsLabelProblems('namespace', options.namespace), ...dnsLabelProblems('name', options.name)];
  if (Object.keys(options.podSelector).length === 0) {
    problems.push('runbook podSelector is empty: the runbook would delete every pod in the namespace. Pass the DaemonSet\'s selector labels.');
  }
  // Selector labels go into double-quoted shell words: label syntax keeps them free of `$`, quotes and spaces.
  for (const [key, value] of Object.entries(options.podSelector)) problems.push(...labelProblems('podSelector', `${key}=${value}`));
  if (options.gpuNodeSelectors.length === 0) {
    problems.push('runbook gpuNodeSelectors is empty: pass the label selectors of the GPU nodes, e.g. ["nvidia.com/gpu.present=true"].');
  }
  for (const selector of options.gpuNodeSelectors) {
    problems.push(...lineProblems('gpuNodeSelectors', selector));
    if (selector.trim() === '') {
      problems.push('runbook gpuNodeSelectors has an empty selector: pass the label selector of the GPU nodes, e.g. nvidia.com/gpu.present=true.');
    }
  }
  problems.push(...labelProblems('skipNodeLabel', options.skipNodeLabel ?? DEFAULT_SKIP_NODE_LABEL));
  if (options.waitForPodSelector !== undefined) problems.push(...lineProblems('waitForPodSelector', options.waitForPodSelector));
  if (options.manifestFile !== undefined) problems.push(...lineProblems('manifestFile', options.manifestFile));
  if (options.validation) {
    problems.push(...lineProblems('validation.containerName', options.validation.containerName));
    if (options.validation.command.length === 0) problems.push('runbook validation.command is empty: give the command to run, e.g. ["nvidia-smi"].');
    options.validation.command.forEach((arg) => problems.push(...lineProblems('validation.command', arg)));
  }
  for (const [prop, value] of [['readyTimeoutSeconds', options.readyTimeoutSeconds], ['evictionTimeoutSeconds', options.evictionTimeoutSeconds],
    ['completionTimeoutSeconds', options.completionTimeoutSeconds]] as const) {
    if (value !== undefined && (!Number.isInteger(value) || value < 1)) problems.push(`runbook ${prop} must be a whole number of seconds >= 1, got ${value}`);
  }
  return problems;
}

/** The input resolved; the first problem of an input the construct did not check is thrown as it is. */
function resolve(options: RunbookInput): Resolved {
  const problems = runbookInputProblems(options);
  if (problems.length > 0) throw new Error(problems[0]);
  const skipNodeLabel = options.skipNodeLabel ?? DEFAULT_SKIP_NODE_LABEL;
  const skip = parseLabel(skipNodeLabel)!;
  const timeout = (value: number | undefined, fallback: number) => value ?? fallback;
  return {
    namespace: options.namespace,
    name: options.name,
    podSelector: matchLabelsSelector(options.podSelector),
    gpuNodeSelectors: options.gpuNodeSelectors,
    skipNodeLabel,
    skipSelector: skip.value === undefined ? skip.key : `${skip.key}=${skip.value}`,
    notSkippedSelector: skip.value === undefined ? `!${skip.key}` : `${skip.key}!=${skip.value}`,
    waitForPodSelector: options.waitForPodSelector,
    readyTimeout: timeout(options.readyTimeoutSeconds, DEFAULT_READY_TIMEOUT_SECONDS),
    evictionTimeout: timeout(options.evictionTimeoutSeconds, DEFAULT_EVICTION_TIMEOUT_SECONDS),
    completionTimeout: timeout(options.completionTimeoutSeconds, DEFAULT_COMPLETION_TIMEOUT_SECONDS),
    validation: options.validation,
    rolling: (options.updateStrategy ?? 'OnDelete') === 'RollingUpdate',
    maxUnavailable: options.rollingUpdateMaxUnavailable ?? 1,
    manifestFile: options.manifestFile ?? '<new manifest>',
  };
}

function currentHashCommand(o: Resolved, useVariables = false): string {
  const ns = useVariables ? '"$NAMESPACE"' : shellWord(o.namespace);
  const sel = useVariables ? '"$POD_SELECTOR"' : shellWord(o.podSelector);
  const dsArg = useVariables ? '"$DAEMONSET"' : shellWord(o.name);
  return `kubectl get controllerrevisions -n ${ns} -l ${sel} -o json | jq -r --arg ds ${dsArg} `
    + '\'[.items[] | select(any(.metadata.ownerReferences[]?; .kind == "DaemonSet" and .name == $ds))] '
    + '| max_by(.revision) | .metadata.labels["controller-revision-hash"] // empty\'';
}

/**
 * `nodeVar` is a shell variable reference such as `$NODE`, expanded inside double quotes. GPU pods: a
 * container requesting a GPU or MIG slice, or a pod with DRA ResourceClaims. k8s-driver-manager resolves
 * each claim to its driver (internal/kubernetes/client.go `podHasGPUResourceClaim`); a script reading
 * pods only cannot, so every claim-holding pod counts (some may be evicted that hold no GPU).
 */
function gpuPodsCommand(nodeVar: string): string {
  return `kubectl get pods -A --field-selector "spec.nodeName=${nodeVar},status.phase!=Succeeded,status.phase!=Failed" -o json \\\n`
    + '  | jq -r \'.items[] | select(((.spec.resourceClaims // []) | length > 0) or ([(.spec.initContainers // [])[], .spec.containers[]] '
    + `| any((.resources.limits // {}) + (.resources.requests // {}) | keys | any(test("${GPU_RESOURCE_REGEX}"))))) | "\\(.metadata.namespace) \\(.metadata.name)"'`;
}

function onDeletePatch(): string {
  return '{"spec":{"updateStrategy":{"type":"OnDelete","rollingUpdate":null}}}';
}

function rollingPatch(maxUnavailable: string | number): string {
  return `{"spec":{"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"maxUnavailable":${JSON.stringify(maxUnavailable)},"maxSurge":0}}}}`;
}

function labelKey(label: string): string {
  return label.split('=')[0];
}

/** A label's key and value (`key=value` or `key`), undefined when it is not one. */
function parseLabel(label: string): { key: string; value?: string } | undefined {
  const match = /^([A-Za-z0-9][-A-Za-z0-9_./]*[A-Za-z0-9]|[A-Za-z0-9])(?:=([-A-Za-z0-9_.]*))?$/.exec(label);
  return match ? { key: match[1], value: match[2] } : undefined;
}

function labelProblems(prop: string, label: string): string[] {
  return parseLabel(label) ? [] : [`runbook ${prop} "${label}" is not a label: write key=value or key, e.g. ${DEFAULT_SKIP_NODE_LABEL}.`];
}

function dnsLabelProblems(prop: string, value: string): string[] {
  return /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(value) && value.length <= 63 ? []
    : [`runbook ${prop} "${value}" is not a DNS-1123 label (lower-case letters, digits and '-', at most 63 characters).`];
}

function lineProblems(prop: string, value: string): string[] {
  return /[\r\n]/.test(value) ? [`runbook ${prop} contains a line break: ${JSON.stringify(value)}`] : [];
}
