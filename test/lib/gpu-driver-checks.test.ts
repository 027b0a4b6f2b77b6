import {
  gpuRequestProblem,
  gpuResourceRequests,
  gpuSelectionProblem,
  isGpuResource,
  visibleDevicesProblems,
} from '../../src/gpu/driver-checks';

describe('isGpuResource', () => {
  test.each([
    ['nvidia.com/gpu', true],
    ['nvidia.com/mig-1g.5gb', true],
    ['nvidia.com/gpu.shared', false],
    ['nvidia.com/gpux', false],
    ['example.com/nvidia.com/gpu', false],
    ['memory', false],
  ])('%s -> %s', (name, expected) => {
    expect(isGpuResource(name)).toBe(expected);
  });
});

test('gpuRequestProblem explains the deadlock and the fix', () => {
  const message = gpuRequestProblem('GpuDriverDaemonSet chart/nvidia: resources', 'nvidia.com/gpu');
  expect(message).toContain('GpuDriverDaemonSet chart/nvidia: resources requests "nvidia.com/gpu"');
  expect(message).toContain('the device plugin that advertises nvidia.com/gpu needs the driver first');
  expect(message).toContain('deadlock');
  expect(message).toContain('Remove it.');
});

describe('gpuResourceRequests', () => {
  test('finds GPU requests and limits in init and main containers, sorted', () => {
    expect(gpuResourceRequests({
      initContainers: [{ name: 'install', resources: { limits: { 'nvidia.com/mig-1g.5gb': 1 } } }],
      containers: [
        { name: 'pause', resources: { requests: { 'cpu': '10m', 'nvidia.com/gpu': 1 }, limits: { 'nvidia.com/gpu': 1 } } },
        { name: 'other', resources: { limits: { memory: '1Gi' } } },
      ],
    })).toEqual([
      { container: 'install', resource: 'nvidia.com/mig-1g.5gb' },
      { container: 'pause', resource: 'nvidia.com/gpu' },
    ]);
  });

  test('empty for a spec without GPU resources', () => {
    expect(gpuResourceRequests({ containers: [{ name: 'a' }] })).toEqual([]);
  });
});

describe('visibleDevicesProblems', () => {
  test('accepts void, flags any other value', () => {
    expect(visibleDevicesProblems({ containers: [{ name: 'a', env: [{ name: 'NVIDIA_VISIBLE_DEVICES', value: 'void' }] }] })).toEqual([]);
    const problems = visibleDevicesProblems({ containers: [{ name: 'a', env: [{ name: 'NVIDIA_VISIBLE_DEVICES', value: 'all' }] }] });
    expect(problems[0]).toContain('container "a" sets NVIDIA_VISIBLE_DEVICES to "all"');
  });
});

describe('gpuSelectionProblem', () => {
  test('no selection at all lands everywhere', () => {
    expect(gpuSelectionProblem({}, [])).toContain('not restricted to GPU nodes');
    expect(gpuSelectionProblem({ 'kubernetes.io/os': 'linux' }, [])).toContain('not restricted to GPU nodes');
  });

  test('opt-out requirements alone select every node', () => {
    expect(gpuSelectionProblem({ 'kubernetes.io/os': 'linux' }, [{
      matchExpressions: [
        { key: 'cloud.google.com/gke-gpu-driver-version', operator: 'DoesNotExist' },
        { key: 'nvidia.com/gpu.deploy.driver', operator: 'NotIn', values: ['false'] },
      ],
    }])).toBeDefined();
  });

  test('a positive requirement in the affinity or the nodeSelector restricts it', () => {
    expect(gpuSelectionProblem({}, [{ matchExpressions: [{ key: 'nvidia.com/gpu.present', operator: 'In', values: ['true'] }] }])).toBeUndefined();
    expect(gpuSelectionProblem({}, [{ matchExpressions: [{ key: 'node-role.kubernetes.io/gpu', operator: 'Exists' }] }])).toBeUndefined();
    expect(gpuSelectionProblem({ 'gpu-type': 'nvidia-a100' }, [])).toBeUndefined();
  });

  test('one unrestricted OR-ed term is enough to land everywhere', () => {
    expect(gpuSelectionProblem({}, [
      { matchExpressions: [{ key: 'nvidia.com/gpu.present', operator: 'In', values: ['true'] }] },
      { matchExpressions: [{ key: 'nvidia.com/gpu.deploy.driver', operator: 'NotIn', values: ['false'] }] },
    ])).toBeDefined();
  });
});
