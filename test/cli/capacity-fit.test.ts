/**
 * The capacity model against kube-scheduler: requests as PodRequests aggregates them
 * (k8s.io/component-helpers/resource/helpers.go PodRequests, formerly pkg/api/v1/resource/helpers.go;
 * used by computePodResourceRequest in pkg/scheduler/framework/plugins/noderesources/fit.go), the Fit filter's
 * fitsRequest (same file; cases ported from fit_test.go TestEnoughRequests), and the victims
 * defaultpreemption's SelectVictimsOnNode picks (pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go).
 */
import { fitsRequest, selectVictims } from '../../src/cli/capacity/fit';
import { PodIndex, podRecord, PodRecord } from '../../src/cli/capacity/pods';
import { podRequests, quantityIn, resourceList, scheduledResource } from '../../src/cli/capacity/resources';
import { pod } from '../util/cluster';

const c = (cpu: string, memory: string, extra: Record<string, unknown> = {}) => ({ name: 'c', resources: { requests: { cpu, memory } }, ...extra });

describe('PodRequests (computePodResourceRequest)', () => {
  test('app containers are summed', () => {
    expect(podRequests({ containers: [c('1', '1Gi'), c('500m', '512Mi')] })).toEqual({ cpu: 1500, memory: 1.5 * 2 ** 30 });
  });
  test('init containers: the max of the sum and the largest init container, not the sum ("init container fits because it\'s the max, not sum")', () => {
    expect(podRequests({ initContainers: [c('3', '1'), c('2', '5')], containers: [c('1', '1')] })).toEqual({ cpu: 3000, memory: 5 });
  });
  test('restartable init containers (sidecars) add to the app containers and run beside later init containers', () => {
    // sidecar 1 cpu, then a regular init container of 2 cpu (runs beside the sidecar: 3), app 1 cpu (+ sidecar: 2)
    const spec = { initContainers: [c('1', '0', { restartPolicy: 'Always' }), c('2', '0')], containers: [c('1', '0')] };
    expect(podRequests(spec).cpu).toBe(3000);
    const later = { initContainers: [c('2', '0'), c('1', '0', { restartPolicy: 'Always' })], containers: [c('2', '0')] };
    expect(podRequests(later).cpu).toBe(3000); // 2 (app) + 1 (sidecar) beats the 2 of the first init container
  });
  test('pod overhead is added on top', () => {
    expect(podRequests({ containers: [c('1', '1Gi')], overhead: { cpu: '250m', memory: '120Mi' } })).toEqual({ cpu: 1250, memory: 2 ** 30 + 120 * 2 ** 20 });
  });
  test('a limit without a request requests the limit (SetDefaults_Pod), templates not being defaulted', () => {
    expect(podRequests({ containers: [{ name: 'c', resources: { limits: { 'cpu': '2', 'nvidia.com/gpu': '1' } } }] })).toEqual({ 'cpu': 2000, 'nvidia.com/gpu': 1 });
  });
  test('cpu in millicores rounded up like Quantity.MilliValue', () => {
    expect(quantityIn('cpu', '0.0001')).toBe(1);
    expect(quantityIn('memory', '1Ki')).toBe(1024);
    expect(resourceList({ cpu: 'lots', memory: '1' })).toEqual({ memory: 1 });
  });
  test('the resources Fit looks at: native compute, hugepages, extended names with a domain', () => {
    expect(['cpu', 'memory', 'ephemeral-storage', 'hugepages-2Mi', 'nvidia.com/gpu', 'example.com/foo'].every(scheduledResource)).toBe(true);
    expect(['pods', 'storage', 'kubernetes.io/something', 'requests.nvidia.com/gpu'].some(scheduledResource)).toBe(false);
  });
});

describe('fitsRequest (fit.go, TestEnoughRequests cases)', () => {
  const alloc = { cpu: 10, memory: 20, pods: 32 };
  test('no resources requested always fits', () => {
    expect(fitsRequest({}, alloc, { cpu: 10, memory: 20 }, 1)).toEqual([]);
  });
  test('too many resources fails', () => {
    expect(fitsRequest({ cpu: 1, memory: 1 }, alloc, { cpu: 10, memory: 20 }, 1).map((r) => r.resource)).toEqual(['cpu', 'memory']);
  });
  test('too many resources fails due to init container cpu', () => {
    const request = podRequests({ initContainers: [c('3m', '1')], containers: [c('1m', '1')] });
    expect(fitsRequest(request, alloc, { cpu: 8, memory: 19 }, 1)).toEqual([{ resource: 'cpu', requested: 3, used: 8, capacity: 10 }]);
  });
  test('init container fits because it\'s the max, not sum, of containers and init containers', () => {
    const request = podRequests({ initContainers: [c('3m', '1'), c('2m', '1')], containers: [c('1m', '1')] });
    expect(fitsRequest(request, alloc, { cpu: 5, memory: 19 }, 1)).toEqual([]);
  });
  test('both resources fit', () => {
    expect(fitsRequest({ cpu: 1, memory: 1 }, alloc, { cpu: 5, memory: 5 }, 1)).toEqual([]);
  });
  test('equal edge case fits', () => {
    expect(fitsRequest({ cpu: 5, memory: 4 }, alloc, { cpu: 5, memory: 16 }, 1)).toEqual([]);
  });
  test('too many pods: len(pods)+1 > allowed, checked first, even for a pod requesting nothing', () => {
    expect(fitsRequest({}, { ...alloc, pods: 1 }, {}, 1)).toEqual([{ resource: 'pods', requested: 1, used: 1, capacity: 1 }]);
  });
  test('extended resource: not offered by the node means allocatable 0', () => {
    expect(fitsRequest({ 'example.com/aaa': 1 }, alloc, {}, 0)).toEqual([{ resource: 'example.com/aaa', requested: 1, used: 0, capacity: 0 }]);
    expect(fitsRequest({ 'example.com/aaa': 1 }, { ...alloc, 'example.com/aaa': 5 }, { 'example.com/aaa': 4 }, 0)).toEqual([]);
  });
  test('ephemeral storage is checked like memory', () => {
    expect(fitsRequest({ 'ephemeral-storage': 10 }, { ...alloc, 'ephemeral-storage': 20 }, { 'ephemeral-storage': 15 }, 0).map((r) => r.resource)).toEqual(['ephemeral-storage']);
  });
});

describe('SelectVictimsOnNode (default preemption, simplified)', () => {
  const rec = (name: string, memory: string, priority: number, startTime = '2026-01-01T00:00:00Z'): PodRecord =>
    podRecord(pod(name, { node: 'n1', memory, priority, startTime }))!;
  const alloc = { memory: 10 * 2 ** 30, pods: 110 };
  const request = { memory: 4 * 2 ** 30 };
  test('only lower-priority pods are victims; none when evicting all of them does not make room', () => {
    const pods = [rec('high', '8Gi', 100), rec('low', '1Gi', 0)];
    expect(selectVictims(request, [], 50, alloc, pods)).toBeUndefined();
  });
  test('the most important potential victims are reprieved first; the rest are evicted', () => {
    // 3 + 3 + 2 = 8Gi used of 10: 4Gi needs 2Gi more. By importance: mid (5), then old-low, new-low (0)
    const pods = [rec('new-low', '3Gi', 0, '2026-02-01T00:00:00Z'), rec('mid', '3Gi', 5), rec('old-low', '2Gi', 0, '2026-01-01T00:00:00Z')];
    const victims = selectVictims(request, [], 10, alloc, pods)!;
    // mid reprieved (3Gi used), old-low reprieved (5Gi), new-low cannot come back (5+3+4 > 10)
    expect(victims.map((v) => v.name)).toEqual(['new-low']);
  });
  test('equal priority is never a victim', () => {
    expect(selectVictims(request, [], 0, alloc, [rec('same', '9Gi', 0)])).toBeUndefined();
  });
  // default_preemption_test.go TestSelectCandidate... "mixed priority pods are preempted, pick later StartTime one when
  // priorities are equal": node capacity veryLargeRes (500m, 500), small 100, medium 200, large 300; epochTime1 < ... < 5
  test('mixed priority pods are preempted, pick later StartTime one when priorities are equal (upstream row)', () => {
    const at = (n: number) => new Date(n * 1000).toISOString().replace('.000', '');
    const res = { small: ['100m', '100'], medium: ['200m', '200'], large: ['300m', '300'] } as const;
    const p = (name: string, size: keyof typeof res, priority: number, start: number) =>
      podRecord(pod(name, { node: 'node1', cpu: res[size][0], memory: res[size][1], priority, startTime: at(start) }))!;
    const [low, mid, high] = [0, 100, 1000];
    const pods = [p('p1.1', 'small', low, 5), p('p1.2', 'small', low, 4), p('p1.3', 'medium', mid, 3), p('p1.4', 'small', high, 2)];
    const victims = selectVictims({ cpu: 300, memory: 300 }, [], high, { cpu: 500, memory: 500, pods: 32 }, pods)!;
    expect(victims.map((v) => v.name).sort()).toEqual(['p1.1', 'p1.3']);
  });
  test('a bound pod without status.startTime starts "now" (util.GetPodStartTime): it goes before a started pod of its priority, whatever its creationTimestamp', () => {
    const unstarted = pod('unstarted', { node: 'n1', memory: '3584Mi', priority: 0, startTime: '2025-01-01T00:00:00Z', status: { startTime: undefined } });
    const started = pod('started', { node: 'n1', memory: '3584Mi', priority: 0, startTime: '2026-06-01T00:00:00Z' });
    const records = [podRecord(started)!, podRecord(unstarted)!];
    expect(records[1].startTime).toBeUndefined();
    // 7Gi of 10 used; 4Gi more needs one of the two gone: the started one is reprieved first
    expect(selectVictims(request, [], 10, alloc, records)!.map((v) => v.name)).toEqual(['unstarted']);
    expect(selectVictims(request, [], 10, alloc, [...records].reverse())!.map((v) => v.name)).toEqual(['unstarted']);
  });
});

describe('PodIndex interner: records read through an index share equal values and hold what they would alone', () => {
  // node names and namespaces built per pod, as JSON.parse gives each pod its own copy
  const item = (name: string, memory: string) => ({ ...pod(name, { node: ['node', '1'].join('-'), memory, namespace: ['ap', 'ps'].join(''), owner: 'logs' }) });
  test('equal request lists and strings are one object; the record equals the one read alone', () => {
    const index = new PodIndex();
    const a = podRecord(item('a', '1Gi'), undefined, index.interner)!;
    const b = podRecord(item('b', '1Gi'), undefined, index.interner)!;
    const d = podRecord(item('d', '2Gi'), undefined, index.interner)!;
    expect(a.requests).toBe(b.requests);
    expect(d.requests).not.toBe(a.requests);
    expect(d.requests).toEqual({ memory: 2 * 2 ** 30 });
    expect(a).toEqual(podRecord(item('a', '1Gi')));
    expect(b).toEqual(podRecord(item('b', '1Gi')));
    expect(d).toEqual(podRecord(item('d', '2Gi')));
    expect([a.node, a.namespace, a.owner]).toEqual(['node-1', 'apps', 'apps/logs']);
  });
  test('doctor keeps what it reads of a DaemonSet pod: labels, deletionTimestamp, affinity, status', () => {
    const object = { ...pod('x', { node: 'n1', owner: 'logs', labels: { 'controller-revision-hash': 'v2' } }) } as Record<string, any>;
    object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
    object.spec.affinity = { nodeAffinity: {} };
    object.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    const kept = podRecord(object, () => true)!.object!;
    expect(kept).toEqual({
      metadata: { labels: { 'controller-revision-hash': 'v2' }, deletionTimestamp: '2026-01-01T00:00:00Z' },
      spec: { affinity: { nodeAffinity: {} } },
      status: object.status,
    });
  });
});
