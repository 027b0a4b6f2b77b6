/** Helpers for the plan tests: trees from synthesized manifests, small inventories. */
import { Manifest, validateManifests } from './manifests';
import { AgentRelease, AgentRollout, Promotion, RolloutWave } from '../../src';
import { manifestSet, ManifestSet } from '../../src/cli/coverage/manifests';
import { NodeFacts, nodeFacts } from '../../src/cli/coverage/nodes';
import { NodeJson, TaintJson } from '../../src/scheduling/types';

export const WAVE_KEY = 'node-agents.cdk8s.io/rollout-wave';

/** A tree as `plan` loads it, from manifests (synthesized by synthManifests, or hand-written and validated here). */
export function tree(manifests: Manifest[]): ManifestSet {
  validateManifests(manifests);
  return manifestSet(manifests.map((object) => ({ source: 'test', object })));
}

export interface TestNode {
  readonly name: string;
  readonly wave?: string;
  readonly labels?: Record<string, string>;
  readonly taints?: TaintJson[];
  readonly ready?: 'True' | 'False' | 'Unknown';
}

/** Linux nodes with an optional wave label, taints and Ready status. */
export function inventory(nodes: readonly TestNode[]): NodeFacts[] {
  return nodeFacts(nodes.map((n): NodeJson => ({
    metadata: {
      name: n.name,
      labels: { 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': n.name, ...(n.wave ? { [WAVE_KEY]: n.wave } : {}), ...n.labels },
    },
    spec: { taints: n.taints ?? [] },
    status: { conditions: [{ type: 'Ready', status: n.ready ?? 'True' }] },
  })));
}

/** A minimal valid DaemonSet, for scenarios the constructs refuse to write. */
export function daemonSet(name: string, options: {
  namespace?: string;
  agent?: string;
  image?: string;
  group?: string;
  nodeSelector?: Record<string, string>;
  hostPort?: number;
  strategy?: Manifest;
  annotations?: Record<string, string>;
  tolerations?: Manifest[];
  antiAffinity?: Manifest[];
  volumes?: Manifest[];
} = {}): Manifest {
  const agent = options.agent ?? name;
  const labels: Record<string, string> = { 'app.kubernetes.io/name': agent, ...(options.group ? { 'node-agents.cdk8s.io/rollout-group': options.group } : {}) };
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: options.namespace ?? 'agents', labels: { 'app.kubernetes.io/name': agent }, annotations: options.annotations },
    spec: {
      selector: { matchLabels: labels },
      updateStrategy: options.strategy ?? { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels },
        spec: {
          nodeSelector: options.nodeSelector,
          tolerations: options.tolerations,
          affinity: options.antiAffinity ? { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: options.antiAffinity } } : undefined,
          containers: [{
            name: 'main',
            image: options.image ?? 'example.com/agent:1',
            ports: options.hostPort ? [{ name: 'http', containerPort: options.hostPort, hostPort: options.hostPort }] : undefined,
            volumeMounts: (options.volumes ?? []).map((v) => ({ name: v.name, mountPath: `/etc/${v.name}` })),
          }],
          volumes: options.volumes,
        },
      },
    },
  };
}

/**
 * A stage's rollout prop. The one place the plan tests give `previous` (the release the groups not yet promoted
 * keep; undefined: a new agent), so a change in how it is given is made here only.
 */
export function rolloutStage(waves: readonly RolloutWave[], promoted: Promotion, previous: AgentRelease | undefined): AgentRollout {
  return { waves: [...waves], promoted, previous };
}
