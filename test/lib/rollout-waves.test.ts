import { Chart, Testing } from 'cdk8s';
import fc from 'fast-check';
import {
  AgentRelease, ARGOCD_SYNC_WAVE, GpuDriverDaemonSet, HostPathType, NodeExporterDaemonSet, NodeAgentDaemonSet,
  NodeAgentDaemonSetProps, NodeRequirement, Promotion, RolloutWave, UpdateStrategy,
} from '../../src';
import { nodeSelectorMatches, termsMatch } from '../../src/scheduling/node-affinity';
import { WAVE_INDEX_ANNOTATION } from '../../src/waves/partition';
import { Manifest, synthManifests } from '../util/manifests';

const WAVE_KEY = 'node-agents.cdk8s.io/rollout-wave';
const OLD = { image: 'cr.fluentbit.io/fluent/fluent-bit:3.1.9', configData: { 'fluent-bit.conf': '[SERVICE]\n    Flush 5\n' } };
const NEW = { image: 'cr.fluentbit.io/fluent/fluent-bit:3.2.10', configData: { 'fluent-bit.conf': '[SERVICE]\n    Flush 1\n' } };
const WAVES = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];

function agentProps(settings: typeof OLD, extra: Partial<NodeAgentDaemonSetProps> = {}): NodeAgentDaemonSetProps {
  return {
    name: 'logs',
    namespace: 'observability',
    runAsRoot: true,
    hostPaths: [{ name: 'varlog', hostPath: '/var/log' }, { name: 'state', hostPath: '/var/lib/logs', type: HostPathType.DIRECTORY_OR_CREATE, readOnly: false }],
    ...settings,
    ...extra,
  };
}

function render(props: NodeAgentDaemonSetProps): Manifest[] {
  const chart = new Chart(Testing.app(), 'stage');
  new NodeAgentDaemonSet(chart, 'logs', props);
  return synthManifests(chart);
}

/** kind/name → the object's canonical JSON, to compare stages object by object. */
function byObject(manifests: Manifest[]): Map<string, string> {
  return new Map(manifests.map((m) => [`${m.kind}/${m.metadata.name}`, JSON.stringify(m)]));
}

function changed(before: Map<string, string>, after: Map<string, string>): { changed: string[]; added: string[]; removed: string[] } {
  return {
    changed: [...before.keys()].filter((k) => after.has(k) && after.get(k) !== before.get(k)).sort(),
    added: [...after.keys()].filter((k) => !before.has(k)).sort(),
    removed: [...before.keys()].filter((k) => !after.has(k)).sort(),
  };
}

/** The release of the agent with these settings. */
function release(settings: typeof OLD): AgentRelease {
  return AgentRelease.fromProps(agentProps(settings));
}

/** `previous: null` renders a brand-new agent (no previous version). */
function stage(promoted: Promotion, previous: typeof OLD | null = OLD, extra: Partial<NodeAgentDaemonSetProps> = {}): Manifest[] {
  const rollout = { waves: WAVES, previous: previous ? release(previous) : undefined, promoted, ...extra.rollout };
  return render(agentProps(NEW, { ...extra, rollout }));
}

function requiredTerms(daemonSet: Manifest): Manifest[] {
  return daemonSet.spec.template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
}

function daemonSets(manifests: Manifest[]): Manifest[] {
  return manifests.filter((m) => m.kind === 'DaemonSet');
}

function ds(manifests: Manifest[], name: string): Manifest {
  const found = daemonSets(manifests).find((m) => m.metadata.name === name);
  expect(found).toBeDefined();
  return found!;
}

const STAGES = [Promotion.none(), Promotion.through('canary'), Promotion.through('wave-1'), Promotion.all()];

describe('waves', () => {
  test('one DaemonSet per wave named <name>-<wave>, the fleet keeps <name>', () => {
    expect(daemonSets(stage(Promotion.none())).map((m) => m.metadata.name)).toEqual(['logs-canary', 'logs-wave-1', 'logs']);
  });

  test('each selector carries the wave identity label', () => {
    const manifests = stage(Promotion.none());
    for (const [name, group] of [['logs-canary', 'canary'], ['logs-wave-1', 'wave-1'], ['logs', 'fleet']]) {
      expect(ds(manifests, name).spec.selector.matchLabels).toEqual({
        'app.kubernetes.io/name': 'logs', 'app.kubernetes.io/instance': 'logs', 'node-agents.cdk8s.io/rollout-group': group,
      });
    }
  });

  test('wave k requires wave k and none of the earlier ones; the fleet requires no wave (base requirements in every term)', () => {
    const manifests = stage(Promotion.none());
    const terms = (name: string) => requiredTerms(ds(manifests, name));
    const base = [
      { key: 'eks.amazonaws.com/compute-type', operator: 'NotIn', values: ['fargate'] },
      { key: 'type', operator: 'NotIn', values: ['virtual-kubelet'] },
    ];
    expect(terms('logs-canary')).toEqual([{ matchExpressions: [...base, { key: WAVE_KEY, operator: 'In', values: ['canary'] }] }]);
    expect(terms('logs-wave-1')).toEqual([{
      matchExpressions: [...base, { key: WAVE_KEY, operator: 'In', values: ['wave-1'] }, { key: WAVE_KEY, operator: 'NotIn', values: ['canary'] }],
    }]);
    expect(terms('logs')).toEqual([{
      matchExpressions: [...base, { key: WAVE_KEY, operator: 'NotIn', values: ['canary'] }, { key: WAVE_KEY, operator: 'NotIn', values: ['wave-1'] }],
    }]);
  });

  test('zone, node-pool and hostname waves', () => {
    const manifests = render(agentProps(NEW, {
      rollout: {
        waves: [
          RolloutWave.hostnames('canary', ['node-a', 'node-b']),
          RolloutWave.matching('zone-a', NodeRequirement.in('topology.kubernetes.io/zone', ['eu-west-1a'])),
          RolloutWave.matching('spot', NodeRequirement.exists('karpenter.sh/capacity-type')),
        ],
        promoted: Promotion.all(),
      },
    }));
    const fleet = requiredTerms(ds(manifests, 'logs'));
    expect(fleet).toHaveLength(1);
    expect(fleet[0].matchFields).toEqual([
      { key: 'metadata.name', operator: 'NotIn', values: ['node-a'] },
      { key: 'metadata.name', operator: 'NotIn', values: ['node-b'] },
    ]);
    expect(fleet[0].matchExpressions).toContainEqual({ key: 'topology.kubernetes.io/zone', operator: 'NotIn', values: ['eu-west-1a'] });
    expect(fleet[0].matchExpressions).toContainEqual({ key: 'karpenter.sh/capacity-type', operator: 'DoesNotExist' });
    // matchFields In takes one value: one term per hostname
    expect(requiredTerms(ds(manifests, 'logs-canary'))).toHaveLength(2);
  });

  test('pace: the canary one node at a time, later waves and the fleet the agent pace, all overridable', () => {
    const manifests = stage(Promotion.all(), null, { updateStrategy: UpdateStrategy.fast() });
    expect(ds(manifests, 'logs-canary').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: 1, maxSurge: 0 });
    expect(ds(manifests, 'logs-wave-1').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: '50%', maxSurge: 0 });
    expect(ds(manifests, 'logs').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: '50%', maxSurge: 0 });
    const custom = stage(Promotion.all(), null, {
      rollout: { waves: WAVES, promoted: Promotion.all(), wavePace: { 'wave-1': UpdateStrategy.steady(), 'fleet': UpdateStrategy.oneAtATime() }, canaryPace: UpdateStrategy.fast() },
    });
    expect(ds(custom, 'logs-canary').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: '50%', maxSurge: 0 });
    expect(ds(custom, 'logs-wave-1').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: '25%', maxSurge: 0 });
    expect(ds(custom, 'logs').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: 1, maxSurge: 0 });
  });

  test('an OnDelete agent keeps OnDelete on the canary', () => {
    const manifests = stage(Promotion.all(), null, { updateStrategy: UpdateStrategy.onDelete() });
    expect(ds(manifests, 'logs-canary').spec.updateStrategy).toEqual({ type: 'OnDelete' });
  });

  test('a held wave keeps the previous release\'s pace; a promoted one takes the current pace', () => {
    const manifests = render(agentProps(NEW, {
      updateStrategy: UpdateStrategy.fast(),
      rollout: { waves: WAVES, promoted: Promotion.through('canary'), previous: release(OLD) },
    }));
    expect(ds(manifests, 'logs-wave-1').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: '25%', maxSurge: 0 });
    expect(ds(manifests, 'logs-canary').spec.updateStrategy.rollingUpdate).toEqual({ maxUnavailable: 1, maxSurge: 0 });
  });
});

describe('stages', () => {
  test('promoted groups render the current settings, the others the previous ones', () => {
    const manifests = stage(Promotion.through('canary'));
    const image = (name: string) => ds(manifests, name).spec.template.spec.containers[0].image;
    expect(image('logs-canary')).toBe(NEW.image);
    expect(image('logs-wave-1')).toBe(OLD.image);
    expect(image('logs')).toBe(OLD.image);
  });

  test('1. promoting stage s to s+1 changes only the DaemonSet of the promoted wave', () => {
    const rendered = STAGES.map((p) => byObject(stage(p)));
    expect(changed(rendered[0], rendered[1])).toEqual({ changed: ['DaemonSet/logs-canary'], added: [], removed: [] });
    expect(changed(rendered[1], rendered[2])).toEqual({ changed: ['DaemonSet/logs-wave-1'], added: [], removed: [] });
    // the last promotion also drops the previous version's ConfigMap, which no pod uses any more
    const last = changed(rendered[2], rendered[3]);
    expect(last.changed).toEqual(['DaemonSet/logs']);
    expect(last.added).toEqual([]);
    expect(last.removed).toHaveLength(1);
    expect(last.removed[0]).toMatch(/^ConfigMap\/logs-config-/);
  });

  test('2. a held group is byte-identical to what the previous release produced (a ConfigMap per version)', () => {
    const previousRelease = byObject(render(agentProps(OLD, { rollout: { waves: WAVES, promoted: Promotion.all() } })));
    for (const promoted of STAGES.slice(0, 3)) {
      const current = byObject(stage(promoted));
      const held = [...current.keys()].filter((k) => k.startsWith('DaemonSet/') && current.get(k)!.includes(OLD.image));
      expect(held.length).toBeGreaterThan(0);
      for (const key of held) expect(current.get(key)).toBe(previousRelease.get(key));
      // the previous release's ConfigMap is still there, unchanged
      const oldConfig = [...previousRelease.keys()].find((k) => k.startsWith('ConfigMap/'))!;
      expect(current.get(oldConfig)).toBe(previousRelease.get(oldConfig));
    }
  });

  test('3. once everything is promoted, removing the previous settings changes no manifest', () => {
    expect(JSON.stringify(stage(Promotion.all()))).toBe(JSON.stringify(stage(Promotion.all(), null)));
  });

  test('4. a brand-new agent renders DaemonSets only for the promoted waves', () => {
    expect(daemonSets(stage(Promotion.through('canary'), null)).map((m) => m.metadata.name)).toEqual(['logs-canary']);
    expect(daemonSets(stage(Promotion.through('wave-1'), null)).map((m) => m.metadata.name)).toEqual(['logs-canary', 'logs-wave-1']);
    expect(daemonSets(stage(Promotion.all(), null)).map((m) => m.metadata.name)).toEqual(['logs-canary', 'logs-wave-1', 'logs']);
    expect(() => stage(Promotion.none(), null)).toThrow('promote at least the first wave');
  });

  test('rolling back is reverting one stage: the reverted stage reproduces the earlier YAML exactly', () => {
    const before = JSON.stringify(stage(Promotion.through('canary')));
    stage(Promotion.through('wave-1'));
    expect(JSON.stringify(stage(Promotion.through('canary')))).toBe(before);
  });

  test('promotion by count matches promotion by name', () => {
    expect(JSON.stringify(stage(Promotion.groups(2)))).toBe(JSON.stringify(stage(Promotion.through('wave-1'))));
    expect(JSON.stringify(stage(Promotion.groups(3)))).toBe(JSON.stringify(stage(Promotion.all())));
  });

  test('enabling waves keeps the fleet DaemonSet object: only its affinity gains the exclusions', () => {
    const plain = render(agentProps(NEW)).find((m) => m.kind === 'DaemonSet');
    const waved = ds(stage(Promotion.all(), null), 'logs');
    // metadata gains only the group's place in the wave order (no pod restarts for metadata)
    expect(waved.metadata).toEqual({ ...plain.metadata, annotations: { [WAVE_INDEX_ANNOTATION]: '2' } });
    expect(waved.spec.selector).toEqual(plain.spec.selector);
    const strip = (m: Manifest) => JSON.stringify({ ...m.spec.template.spec, affinity: undefined });
    expect(strip(waved)).toBe(strip(plain));
  });
});

describe('Argo CD gating', () => {
  test('sync waves order the DaemonSets after the shared objects', () => {
    const manifests = stage(Promotion.all(), null, { rollout: { waves: WAVES, promoted: Promotion.all(), argoCdSyncWaves: true } });
    expect(ds(manifests, 'logs-canary').metadata.annotations).toEqual({ [ARGOCD_SYNC_WAVE]: '1', [WAVE_INDEX_ANNOTATION]: '0' });
    // Two apart: a gate after a wave goes in between (see test/lib/wave-gates.test.ts).
    expect(ds(manifests, 'logs-wave-1').metadata.annotations).toEqual({ [ARGOCD_SYNC_WAVE]: '3', [WAVE_INDEX_ANNOTATION]: '1' });
    expect(ds(manifests, 'logs').metadata.annotations).toEqual({ [ARGOCD_SYNC_WAVE]: '5', [WAVE_INDEX_ANNOTATION]: '2' });
    for (const m of manifests.filter((x) => x.kind !== 'DaemonSet')) {
      expect(Number(m.metadata.annotations?.[ARGOCD_SYNC_WAVE] ?? 0)).toBeLessThan(1);
    }
  });

  test('gating with OnDelete is an error', () => {
    expect(() => stage(Promotion.all(), null, {
      updateStrategy: UpdateStrategy.onDelete(),
      rollout: { waves: WAVES, promoted: Promotion.all(), argoCdSyncWaves: true },
    })).toThrow('Argo CD counts an OnDelete DaemonSet Healthy at once');
  });
});

describe('rollout errors', () => {
  test.each([
    ['duplicate wave names', { waves: [RolloutWave.labelled('canary'), RolloutWave.labelled('canary')], promoted: Promotion.all() }, 'duplicate wave name "canary"'],
    ['duplicate wave values', {
      waves: [RolloutWave.matching('a', NodeRequirement.in('zone', ['z1'])), RolloutWave.matching('b', NodeRequirement.in('zone', ['z1']))], promoted: Promotion.all(),
    }, 'duplicates wave "a"'],
    ['a requirement that cannot be negated', { waves: [RolloutWave.matching('big', NodeRequirement.gt('cores', 32))], promoted: Promotion.all() }, 'cannot negate'],
    ['promoting a wave that does not exist', { waves: WAVES, promoted: Promotion.through('wave-9') }, '"wave-9" is not a wave'],
    ['a wave named fleet', { waves: [RolloutWave.labelled('fleet')], promoted: Promotion.all() }, '"fleet" is reserved'],
    ['no waves', { waves: [], promoted: Promotion.all() }, 'at least one wave is required'],
    ['pace for an unknown wave', { waves: WAVES, promoted: Promotion.all(), wavePace: { nope: UpdateStrategy.fast() } }, 'wavePace names "nope"'],
  ])('%s', (_name, rollout, message) => {
    expect(() => render(agentProps(NEW, { rollout }))).toThrow(message);
  });

  test('a previous version identical to the current one while waves are held', () => {
    expect(() => stage(Promotion.through('canary'), NEW)).toThrow('nothing to roll out');
  });

  test('surge on a wave of an agent with a writable hostPath', () => {
    expect(() => stage(Promotion.none(), OLD, { rollout: { waves: WAVES, promoted: Promotion.none(), canaryPace: UpdateStrategy.conservative() } }))
      .toThrow('rollout pace of "canary": maxSurge 1 with writable hostPath(s)');
  });
});

describe('exactly one DaemonSet per eligible node, at every stage (property)', () => {
  const labelValue = fc.constantFrom('canary', 'wave-1', 'wave-2', 'a', 'b');
  // mostly eligible nodes (linux, not virtual), some not, and random wave-relevant labels
  const nodeArb = fc.record({
    name: fc.constantFrom('n1', 'n2', 'n3', 'n4', 'n5'),
    labels: fc.dictionary(fc.constantFrom(WAVE_KEY, 'zone', 'pool'), labelValue, { maxKeys: 3 }),
    os: fc.constantFrom<string | undefined>('linux', 'linux', 'linux', 'windows', undefined),
    virtual: fc.constantFrom<[string, string] | undefined>(undefined, undefined, undefined, ['type', 'virtual-kubelet'], ['eks.amazonaws.com/compute-type', 'fargate']),
  }).map(({ name, labels, os, virtual }) => ({
    name,
    labels: { ...labels, ...(os ? { 'kubernetes.io/os': os } : {}), ...(virtual ? { [virtual[0]]: virtual[1] } : {}) } as Record<string, string>,
  }));
  const waveArb = fc.oneof(
    fc.constantFrom('canary', 'wave-1', 'wave-2').map((v) => RolloutWave.labelled(v)),
    fc.constantFrom('a', 'b').map((v) => RolloutWave.matching(`zone-${v}`, NodeRequirement.in('zone', [v]))),
    fc.constant(RolloutWave.matching('pooled', NodeRequirement.exists('pool'))),
    fc.constantFrom(['n1'], ['n2', 'n3']).map((hosts) => RolloutWave.hostnames(`hosts-${hosts.join('-')}`, [...hosts])),
  );
  const wavesArb = fc.uniqueArray(waveArb, { minLength: 1, maxLength: 4, selector: (w) => w.name });

  test('every node the agent may run on is owned by exactly one of its DaemonSets; no other node by any', () => {
    let eligibleSeen = 0;
    fc.assert(fc.property(wavesArb, fc.array(nodeArb, { minLength: 1, maxLength: 8 }), fc.nat(5), (waves, nodes, promotedRaw) => {
      const promoted = Promotion.groups(promotedRaw % (waves.length + 2));
      let manifests: Manifest[];
      try {
        manifests = render(agentProps(NEW, { rollout: { waves, previous: release(OLD), promoted } }));
      } catch (e) {
        // only wave sets the library refuses (a wave shadowed by an earlier one) may fail
        expect((e as Error).message).toMatch(/would never own a node/);
        return;
      }
      const sets = daemonSets(manifests);
      expect(sets).toHaveLength(waves.length + 1);
      for (const node of nodes) {
        const identity = { name: node.name, labels: node.labels };
        const eligible = node.labels['kubernetes.io/os'] === 'linux'
          && node.labels.type !== 'virtual-kubelet' && node.labels['eks.amazonaws.com/compute-type'] !== 'fargate';
        const owners = sets.filter((m) => {
          const spec = m.spec.template.spec;
          return nodeSelectorMatches(spec.nodeSelector, node.labels)
            && termsMatch(requiredTerms(m), identity);
        });
        expect(owners).toHaveLength(eligible ? 1 : 0);
        if (eligible) eligibleSeen++;
      }
    }), { numRuns: 60 });
    // the generated inventories must exercise eligible nodes, or the property says nothing
    expect(eligibleSeen).toBeGreaterThan(20);
  });

  test('synthesis is deterministic: the same props give byte-identical YAML', () => {
    fc.assert(fc.property(wavesArb, fc.nat(5), (waves, promotedRaw) => {
      const promoted = Promotion.groups(promotedRaw % (waves.length + 2));
      const once = () => {
        try {
          return JSON.stringify(render(agentProps(NEW, { rollout: { waves, previous: release(OLD), promoted } })));
        } catch (e) {
          return (e as Error).message;
        }
      };
      expect(once()).toBe(once());
    }), { numRuns: 30 });
  });
});

describe('every agent takes waves', () => {
  function waved(build: (chart: Chart) => void): Manifest[] {
    const chart = new Chart(Testing.app(), 'agents');
    build(chart);
    return synthManifests(chart);
  }
  const rollout = { waves: [RolloutWave.labelled('canary')], promoted: Promotion.through('canary') };

  test('node exporter: the canary gets the new version, the fleet keeps the old, both bind the host port on disjoint nodes', () => {
    const manifests = waved((chart) => new NodeExporterDaemonSet(chart, 'metrics', { rollout: { ...rollout, previous: NodeExporterDaemonSet.release({ image: 'example.com/old:1.0.0' }) } }));
    expect(daemonSets(manifests).map((m) => [m.metadata.name, m.spec.template.spec.containers[0].image])).toEqual([
      ['node-exporter-canary', expect.stringMatching(/node-exporter:v/)],
      ['node-exporter', 'example.com/old:1.0.0'],
    ]);
  });

  test('GPU driver: every wave keeps OnDelete and the GPU-node selection', () => {
    const manifests = waved((chart) => new GpuDriverDaemonSet(chart, 'nvidia', {
      image: 'nvcr.io/nvidia/driver:550.127.08-ubuntu22.04',
      rollout: { ...rollout, previous: GpuDriverDaemonSet.release({ image: 'nvcr.io/nvidia/driver:535.183.01-ubuntu22.04' }) },
    }));
    const sets = daemonSets(manifests);
    expect(sets.map((m) => m.metadata.name)).toEqual(['gpu-driver-canary', 'gpu-driver']);
    for (const set of sets) {
      expect(set.spec.updateStrategy).toEqual({ type: 'OnDelete' });
      // every term keeps one GPU label (NFD's or gpu-operator's), gpu-operator's among them
      const gpu = (e: { key: string; operator: string }) => e.operator === 'In' && /pci-(03\d\d_)?10de\.present$|^nvidia\.com\/gpu\.present$/.test(e.key);
      type Term = { matchExpressions: { key: string; operator: string }[] };
      expect(requiredTerms(set).every((term: Term) => term.matchExpressions.some(gpu))).toBe(true);
      expect(requiredTerms(set).flatMap((term: { matchExpressions: unknown[] }) => term.matchExpressions))
        .toContainEqual({ key: 'nvidia.com/gpu.present', operator: 'In', values: ['true'] });
    }
  });
});
