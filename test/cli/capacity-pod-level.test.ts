/**
 * Pod-level resources (PodSpec.resources, KEP-2837): PodRequests (k8s.io/component-helpers/resource/helpers.go,
 * PodRequests / applyPodLevelResources / IsSupportedPodLevelResource) lets spec.resources.requests replace the
 * containers' aggregate for cpu, memory and hugepages-*, when the PodLevelResources feature is on (beta and on by
 * default since Kubernetes 1.34, alpha and off in 1.32 and 1.33); a pod-level limit without a request defaults the
 * request to the limit (pkg/apis/core/v1/defaults.go defaultPodRequests). The scheduler's Fit filter counts the
 * result (noderesources/fit.go computePodResourceRequest).
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { minorVersion, podLevelResourcesGate } from '../../src/cli/capacity/pod-level';
import { podRecord } from '../../src/cli/capacity/pods';
import { hasPodLevelResources, podLimits, podRequests } from '../../src/cli/capacity/resources';
import { runCli } from '../../src/cli/run';
import { list, node, pod } from '../util/cluster';
import { Manifest, validateManifests } from '../util/manifests';
import { daemonSet } from '../util/plan';

const Mi = 2 ** 20;
const withPodLevel = (containers: Manifest[], resources: Manifest) => ({ containers, resources });
const container = (requests: Manifest, limits?: Manifest) => ({ name: 'c', resources: { requests, ...(limits ? { limits } : {}) } });

describe('PodRequests with pod-level resources (component-helpers resource/helpers.go)', () => {
  // the pod-level rows of the resource helpers' table test (GetResourceRequest: "pod level resources ...")
  test.each([
    ['pod level resources cpu req, container cpu req', withPodLevel([container({ cpu: '8' })], { requests: { cpu: '10' } }), 'cpu', 10000],
    ['pod level resources mem req, container mem req', withPodLevel([container({ memory: '80Mi' })], { requests: { memory: '100Mi' } }), 'memory', 104857600],
    ['pod level resources cpu req, container mem req', withPodLevel([container({ memory: '50Mi' })], { requests: { cpu: '5' } }), 'cpu', 5000],
  ])('%s', (_name, spec, resource, expected) => {
    expect(podRequests(spec)[resource]).toBe(expected);
  });
  test('a resource pod level does not set keeps the containers\' sum; unsupported pod-level names are ignored', () => {
    const spec = withPodLevel([container({ 'cpu': '1', 'memory': '1Gi', 'nvidia.com/gpu': '1' })], { requests: { 'memory': '2Gi', 'nvidia.com/gpu': '4' } });
    expect(podRequests(spec)).toEqual({ 'cpu': 1000, 'memory': 2 * 2 ** 30, 'nvidia.com/gpu': 1 });
  });
  test('a pod-level request with no containers\' requests at all (the issue\'s 7680Mi pod)', () => {
    expect(podRequests(withPodLevel([{ name: 'c' }], { requests: { memory: '7680Mi' } }))).toEqual({ memory: 7680 * Mi });
  });
  test('a pod-level limit without a request requests the limit (defaultPodRequests), even beside container requests', () => {
    expect(podRequests(withPodLevel([container({ memory: '100Mi' })], { limits: { memory: '1Gi', cpu: '2' } }))).toEqual({ memory: 2 ** 30, cpu: 2000 });
  });
  test('overhead is added after the pod-level values; limits take pod-level limits and overhead only where non-zero', () => {
    const spec = { ...withPodLevel([container({ cpu: '1' }, { cpu: '1' })], { requests: { cpu: '2' }, limits: { cpu: '3' } }), overhead: { cpu: '250m', memory: '64Mi' } };
    expect(podRequests(spec)).toEqual({ cpu: 2250, memory: 64 * Mi });
    expect(podLimits(spec)).toEqual({ cpu: 3250 });
  });
  test('with the feature off (Kubernetes 1.33 and before) only the containers count', () => {
    const spec = withPodLevel([container({ memory: '80Mi' })], { requests: { memory: '7680Mi' }, limits: { memory: '8Gi' } });
    expect(podRequests(spec, false)).toEqual({ memory: 80 * Mi });
    expect(podLimits(spec, false)).toEqual({});
    expect(hasPodLevelResources(spec)).toBe(true);
    expect(hasPodLevelResources({ containers: [], resources: { requests: { 'nvidia.com/gpu': '1' } } })).toBe(false);
  });
  test('a pod read from a cluster records its pod-level requests and that it sets them', () => {
    const item = pod('big', { node: 'n1' });
    item.spec.resources = { requests: { memory: '7680Mi' } };
    expect(podRecord(item)).toMatchObject({ requests: { memory: 7680 * Mi }, podLevelResources: true });
    expect(podRecord(item, undefined, undefined, false)!.requests).toEqual({});
  });
});

describe('the PodLevelResources gate: --kubernetes-version, else the newest kubelet (a kubelet is never newer than its control plane)', () => {
  const nodes = (...versions: string[]) => versions.map((v, i) => ({ metadata: { name: `n${i}` }, status: { nodeInfo: { kubeletVersion: v } } }) as any);
  test.each([
    ['v1.34.1', [1, 34]], ['1.33', [1, 33]], ['v1.30.4-eks-a737599', [1, 30]], ['v1.35.0+k3s1', [1, 35]],
    ['latest', undefined], ['1', undefined], ['v1.34.1; rm -rf /', undefined],
  ])('minorVersion(%j)', (text, expected) => {
    expect(minorVersion(text)).toEqual(expected);
  });
  test('the flag decides and is certain: 1.34 on, 1.33 off', () => {
    expect(podLevelResourcesGate(nodes('v1.30.0'), '1.34')).toEqual({ enabled: true, basis: 'Kubernetes 1.34 (--kubernetes-version)', certain: true });
    expect(podLevelResourcesGate(nodes('v1.35.0'), 'v1.33.2')).toMatchObject({ enabled: false, certain: true });
    expect(() => podLevelResourcesGate([], 'soon')).toThrow('--kubernetes-version "soon": not a version; give MAJOR.MINOR, e.g. 1.34');
  });
  test('a 1.34 kubelet means a 1.34 control plane at least: on, certain; older kubelets or none: on, an assumption', () => {
    expect(podLevelResourcesGate(nodes('v1.33.5', 'v1.34.2'))).toEqual({ enabled: true, basis: 'the newest kubelet listed is v1.34.2', certain: true });
    expect(podLevelResourcesGate(nodes('v1.33.5', 'v1.32.0'))).toEqual({ enabled: true, basis: 'the newest kubelet listed is v1.33.5', certain: false });
    expect(podLevelResourcesGate([])).toEqual({ enabled: true, basis: 'no kubelet version in the inventory', certain: false });
  });
});

describe('plan --pods counts pod-level requests: the issue\'s 8Gi node with a 7680Mi pod-level pod', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pod-level-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, value: unknown) => fs.writeFileSync(path.join(dir, name), JSON.stringify(value));
  const run = (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = runCli(argv, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, cwd: dir });
    return { code, stdout, stderr };
  };
  const logs = (memory: string, podLevel = false): Manifest => {
    const ds = daemonSet('logs', { image: `example.com/logs:${memory}` });
    const spec = ds.spec.template.spec;
    if (podLevel) spec.resources = { requests: { cpu: '100m', memory } };
    else spec.containers[0].resources = { requests: { cpu: '100m', memory } };
    validateManifests([ds]);
    return ds;
  };
  const cluster = (kubelet: string, agentPodLevel = false) => {
    const inventory = list([node('n1', { memory: '8Gi' })]);
    for (const n of inventory.items) n.status.nodeInfo = { kubeletVersion: kubelet };
    write('nodes.json', inventory);
    const big = pod('big', { namespace: 'apps', node: 'n1', priority: 0 });
    big.spec.resources = { requests: { memory: '7680Mi' } };
    write('pods.json', list([big, pod('logs-n1', { namespace: 'agents', node: 'n1', memory: '100Mi', owner: 'logs' })]));
    write('before.json', list([logs('100Mi', agentPodLevel)]));
    write('after.json', list([logs('1Gi', agentPodLevel)]));
  };
  const plan = (...extra: string[]) => {
    const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--pods', 'pods.json', '--json', ...extra);
    expect(r.stderr).toBe('');
    return { code: r.code, findings: JSON.parse(r.stdout).steps[0].findings as any[] };
  };

  test('kubelet v1.34: the pod\'s 7680Mi count, the 1Gi agent does not fit (equal priority: stays Pending); no assumption to name', () => {
    cluster('v1.34.1');
    const { code, findings } = plan();
    expect(code).toBe(1);
    const short = findings.find((f) => f.cause === 'insufficient-resources');
    expect(short.message).toContain('n1 (memory: needs 1Gi, 512Mi free of 8Gi allocatable (short 512Mi))');
    expect(findings.find((f) => f.cause === 'pod-level-resources')).toBeUndefined();
  });
  test('the agent\'s own pod-level request is what its new pod needs', () => {
    cluster('v1.34.1', true);
    const short = plan().findings.find((f) => f.cause === 'insufficient-resources');
    expect(short.message).toContain('needs 1Gi');
  });
  test('--kubernetes-version 1.33: the feature is off, the pod counts as its containers (none): fits', () => {
    cluster('v1.33.0');
    const { code, findings } = plan('--kubernetes-version', '1.33');
    expect(findings).toEqual([]);
    expect(code).toBe(0);
  });
  test('kubelets of 1.33 and no flag: counted, and a warning names the assumption and the flag', () => {
    cluster('v1.33.0');
    const { findings } = plan();
    expect(findings.map((f) => f.cause).sort()).toEqual(['insufficient-resources', 'pod-level-resources']);
    const assumption = findings.find((f) => f.cause === 'pod-level-resources');
    expect(assumption.severity).toBe('warning');
    expect(assumption.message).toContain('1 running pod are counted over the containers\' requests, assuming the scheduler\'s PodLevelResources feature is on (the newest kubelet listed is v1.33.0)');
    expect(assumption.fix).toContain('--kubernetes-version');
  });
  test('a bad --kubernetes-version is bad usage (exit 2)', () => {
    cluster('v1.34.1');
    const r = run('plan', '--nodes', 'nodes.json', '--before', 'before.json', '--after', 'after.json', '--pods', 'pods.json', '--kubernetes-version', 'x');
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--kubernetes-version "x": not a version');
  });
});
