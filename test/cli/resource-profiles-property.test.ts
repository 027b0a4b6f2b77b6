/**
 * Resource profiles crossed with rollout waves, on random inventories (property, fixed seed):
 * - at every stage of a rollout (nothing promoted, each wave, everything), every eligible node is covered by exactly
 *   one DaemonSet of the agent, the one of the profile that first matches the node (the default profile when none
 *   does) and of the node's wave; ineligible nodes by none;
 * - changing one profile's resources replaces exactly that profile's nodes and changes only its DaemonSets.
 * Coverage is computed by the same code `node-agents coverage` runs, on the synthesized manifests.
 */
import { Chart, Testing } from 'cdk8s';
import fc from 'fast-check';
import { AgentRelease, AgentResourceProfile, NodeAgentDaemonSet, NodeAgentDaemonSetProps, Promotion, ResourceProfileNodes, RolloutWave } from '../../src';
import { analyzeCoverage } from '../../src/cli/coverage/analysis';
import { planChange } from '../../src/cli/plan/plan';
import { DEFAULT_PROFILE } from '../../src/waves/profiles';
import { synthManifests } from '../util/manifests';
import { inventory, TestNode, tree, WAVE_KEY } from '../util/plan';

const CPU = 'karpenter.k8s.aws/instance-cpu';
const POOL = 'karpenter.sh/nodepool';
const TYPE = 'node.kubernetes.io/instance-type';
const WAVES = ['canary', 'wave-1'];

interface Slot {
  readonly name: string;
  readonly nodes: ResourceProfileNodes;
  /** does the profile's label select these node labels (the scheduler's reading, written out independently) */
  readonly matches: (labels: Record<string, string>) => boolean;
}

const int = (labels: Record<string, string>) => (labels[CPU] === undefined ? undefined : Number(labels[CPU]));

/** Candidate profiles, disjoint on each label by construction; a run takes some of them in a random order. */
const slots = fc.record({ small: fc.integer({ min: 1, max: 8 }), big: fc.integer({ min: 1, max: 40 }) }).map(({ small, big }): Slot[] => [
  { name: 'small', nodes: ResourceProfileNodes.instanceCpu({ max: small }), matches: (l) => int(l) !== undefined && int(l)! <= small },
  { name: 'big', nodes: ResourceProfileNodes.instanceCpu({ min: small + big }), matches: (l) => int(l) !== undefined && int(l)! >= small + big },
  { name: 'gpu', nodes: ResourceProfileNodes.nodePools(['gpu']), matches: (l) => l[POOL] === 'gpu' },
  { name: 'batch', nodes: ResourceProfileNodes.nodePools(['batch', 'spot']), matches: (l) => l[POOL] === 'batch' || l[POOL] === 'spot' },
  { name: 'compute', nodes: ResourceProfileNodes.instanceTypes(['c6i.4xlarge']), matches: (l) => l[TYPE] === 'c6i.4xlarge' },
]);
const profiles = slots.chain((all) => fc.shuffledSubarray(all, { minLength: 1, maxLength: 4 }));

const node = fc.record({
  cpu: fc.option(fc.constantFrom('1', '2', '4', '8', '16', '32', '64', '96'), { nil: undefined }),
  pool: fc.option(fc.constantFrom('general', 'gpu', 'batch', 'spot'), { nil: undefined }),
  type: fc.option(fc.constantFrom('m5.large', 'c6i.4xlarge', 'r6i.8xlarge'), { nil: undefined }),
  wave: fc.option(fc.constantFrom(...WAVES), { nil: undefined }),
});
const nodes = fc.array(node, { minLength: 1, maxLength: 14 }).map((list) => list.map((n, i): TestNode => ({
  name: `node-${i}`,
  wave: n.wave,
  labels: {
    ...(n.cpu !== undefined ? { [CPU]: n.cpu } : {}),
    ...(n.pool !== undefined ? { [POOL]: n.pool } : {}),
    ...(n.type !== undefined ? { [TYPE]: n.type } : {}),
    // one in five is a Fargate node: no DaemonSet pod can run there, and the agent excludes it
    ...(i % 5 === 4 ? { 'eks.amazonaws.com/compute-type': 'fargate' } : {}),
  },
})));

function props(chosen: readonly Slot[], image: string, memory: (name: string) => string): NodeAgentDaemonSetProps {
  return {
    name: 'agent',
    namespace: 'agents',
    image,
    resourceProfiles: chosen.map((s): AgentResourceProfile => ({ name: s.name, nodes: s.nodes, resources: { memoryRequest: memory(s.name), memoryLimit: '1Gi' } })),
  };
}

function synth(p: NodeAgentDaemonSetProps) {
  const chart = new Chart(Testing.app(), 'c');
  new NodeAgentDaemonSet(chart, 'agent', p);
  return tree(synthManifests(chart));
}

/** The profile that owns a node: the first matching one, else the default. */
function expectedProfile(chosen: readonly Slot[], labels: Record<string, string>): string {
  return chosen.find((s) => s.matches(labels))?.name ?? DEFAULT_PROFILE;
}

const PARAMS = { seed: 41, numRuns: 25 };

test('every eligible node is covered by exactly one (profile × wave) DaemonSet, at every promotion stage', () => {
  fc.assert(fc.property(profiles, nodes, (chosen, list) => {
    const facts = inventory(list);
    const previous = AgentRelease.fromProps(props(chosen, 'ghcr.io/acme/agent:1.0.0', () => '200Mi'));
    for (let promoted = 0; promoted <= WAVES.length + 1; promoted++) {
      const set = synth({
        ...props(chosen, 'ghcr.io/acme/agent:1.1.0', () => '300Mi'),
        rollout: { waves: WAVES.map((w) => RolloutWave.labelled(w)), previous, promoted: Promotion.groups(promoted) },
      });
      const report = analyzeCoverage(set.daemonSets, facts);
      const byId = new Map(set.daemonSets.map((d) => [d.id, d]));
      const coverage = report.agents.find((a) => a.agent === 'agent')!;
      coverage.nodes.forEach((entry, i) => {
        const n = report.nodes[i];
        const source = list.find((x) => x.name === n.name)!;
        if (source.labels!['eks.amazonaws.com/compute-type'] === 'fargate') {
          expect(entry.owners).toEqual([]);
          return;
        }
        expect({ node: n.name, owners: entry.owners.length }).toEqual({ node: n.name, owners: 1 });
        const owner = byId.get(entry.owners[0])!;
        const [wave, profile] = (owner.rolloutGroup ?? '').split('.');
        expect({ node: n.name, wave, profile: profile ?? DEFAULT_PROFILE })
          .toEqual({ node: n.name, wave: source.wave ?? 'fleet', profile: expectedProfile(chosen, n.labels) });
      });
    }
  }), PARAMS);
});

test('a change of one profile\'s resources replaces exactly that profile\'s nodes', () => {
  fc.assert(fc.property(profiles, nodes, fc.nat(), (chosen, list, pick) => {
    const changed = chosen[pick % chosen.length].name;
    const facts = inventory(list);
    const rollout = { waves: WAVES.map((w) => RolloutWave.labelled(w)), promoted: Promotion.all() };
    const before = synth({ ...props(chosen, 'ghcr.io/acme/agent:1.1.0', () => '300Mi'), rollout });
    const after = synth({ ...props(chosen, 'ghcr.io/acme/agent:1.1.0', (name) => (name === changed ? '400Mi' : '300Mi')), rollout });
    const plan = planChange(before, after, facts).agents.find((a) => a.agent === 'agent')!;
    const own = facts.filter((n) => n.labels['eks.amazonaws.com/compute-type'] !== 'fargate' && expectedProfile(chosen, n.labels) === changed)
      .map((n) => n.name).sort();
    expect(plan.replaced).toEqual(own);
    expect(plan.moved.length + plan.gained.length + plan.lost.length).toBe(0);
    for (const d of plan.daemonSets) {
      const profile = (d.rolloutGroup ?? '').split('.')[1] ?? DEFAULT_PROFILE;
      expect({ id: d.id, changed: d.change !== 'unchanged' }).toEqual({ id: d.id, changed: profile === changed });
    }
  }), PARAMS);
});

test('the wave label reaches the nodes the test inventory labels', () => {
  expect(inventory([{ name: 'x', wave: 'canary' }])[0].labels[WAVE_KEY]).toBe('canary');
});
