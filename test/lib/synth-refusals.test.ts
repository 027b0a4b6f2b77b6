/**
 * Issue 52's synth-time items: each mistake is refused at synthesis with a ValidationError naming
 * the construct (its path), the prop, the bad value and the fix; where the value can be right, a
 * warning in those words.
 */
import { Chart, Duration, Testing } from 'cdk8s';
import {
  AgentFleet, ArgoCdResourceTracking, FluentBitInput, FluentBitOutput, GpuDriverDaemonSet, GpuDriverDaemonSetProps, LogCollectorDaemonSet,
  LogCollectorDaemonSetProps, NodeAgentDaemonSet, NodeAgentDaemonSetProps, NodeExporterDaemonSet, Promotion, ResourceProfileNodes,
  RolloutBudget, RolloutWave, UpdateStrategy, NodeRequirement, MaxUpdate, GpuNodeSelection, AgentEnvValue, AgentProbe,
} from '../../src';
import { ValidationError } from '../../src/validation/errors';
import { warningsOf } from '../../src/validation/warnings';
import { synthManifests } from '../util/manifests';

const secret = { secretName: 'search-auth', key: 'password' };
const STDOUT = FluentBitOutput.stdout();

function chart(): Chart {
  return new Chart(Testing.app(), 'test');
}

/** The error `build` throws (failing when it throws none), checked to be a ValidationError. */
function refusal(build: () => unknown): ValidationError {
  try {
    build();
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return e as ValidationError;
  }
  throw new Error('expected a refusal, but it built');
}

function collector(props: Partial<LogCollectorDaemonSetProps>): () => LogCollectorDaemonSet {
  return () => new LogCollectorDaemonSet(chart(), 'logs', { outputs: [STDOUT], ...props });
}

function agent(props: Partial<NodeAgentDaemonSetProps>): () => NodeAgentDaemonSet {
  return () => new NodeAgentDaemonSet(chart(), 'agent', { image: 'registry.example.com/agent:1.2.3', ...props });
}

function driver(props: Partial<GpuDriverDaemonSetProps>): GpuDriverDaemonSet {
  return new GpuDriverDaemonSet(chart(), 'nvidia', { image: 'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04', ...props });
}

describe('1. basic auth: httpUser without httpPassword', () => {
  test.each([
    ['openSearch', () => FluentBitOutput.openSearch({ host: 'os', httpUser: 'fluent-bit' })],
    ['elasticsearch', () => FluentBitOutput.elasticsearch({ host: 'es', httpUser: 'fluent-bit' })],
    ['loki', () => FluentBitOutput.loki({ host: 'loki', httpUser: 'fluent-bit' })],
    ['http', () => FluentBitOutput.http({ host: 'h', httpUser: 'fluent-bit' })],
    ['openTelemetry', () => FluentBitOutput.openTelemetry({ host: 'otel', httpUser: 'fluent-bit' })],
  ])('%s: refused, naming the collector, the output, the prop and the fix', (_name, output) => {
    const e = refusal(collector({ outputs: [output()] }));
    expect(e.message).toMatch(/^LogCollectorDaemonSet test\/logs/);
    expect(e.message).toMatch(/outputs\[0\] \(FluentBitOutput \w+\): httpUser "fluent-bit" is set without httpPassword: .*HTTP_User without a password.*set httpPassword: \{ secretName, key \}/);
  });
  test('with both, it synthesizes', () => {
    expect(synthManifests(collector({ outputs: [FluentBitOutput.openSearch({ host: 'os', httpUser: 'fb', httpPassword: secret })] })().node.scope as Chart).length).toBeGreaterThan(0);
  });
});

describe('2. an HTTP output on port 443 without tls', () => {
  test.each([
    ['openSearch', () => FluentBitOutput.openSearch({ host: 'search.example.com', port: 443 })],
    ['elasticsearch', () => FluentBitOutput.elasticsearch({ host: 'search.example.com', port: 443, tls: false })],
    ['http', () => FluentBitOutput.http({ host: 'logs.example.com', port: 443 })],
    ['loki', () => FluentBitOutput.loki({ host: 'logs.example.com', port: 443 })],
  ])('%s: refused with the fix "set tls"', (_name, output) => {
    const e = refusal(collector({ outputs: [output()] }));
    expect(e.message).toMatch(/outputs\[0\] \(FluentBitOutput \w+\): port 443 without tls: .*plain HTTP to an HTTPS port.*set tls: true/);
  });
  test('with tls on 443, or without tls on 9200, it builds', () => {
    expect(collector({ outputs: [FluentBitOutput.openSearch({ host: 'search.example.com', port: 443, tls: true })] })).not.toThrow();
    expect(collector({ outputs: [FluentBitOutput.openSearch({ host: 'search.example.com' })] })).not.toThrow();
  });
});

describe('3. storageMaxChunksUp against the memory limit: one rule for the top level and the profiles', () => {
  test('the top level with the default 512Mi limit is refused as a profile is', () => {
    const e = refusal(collector({ storageMaxChunksUp: 1000 }));
    expect(e.message).toMatch(/^LogCollectorDaemonSet test\/logs: storageMaxChunksUp: 1000 chunks .* need about 2005Mi, not below the memory limit 512Mi: .*OOM-killed.*Raise resources.memoryLimit or lower storageMaxChunksUp/);
  });
  test('a raised limit takes it', () => {
    expect(collector({ storageMaxChunksUp: 1000, resources: { memoryLimit: '3Gi' } })).not.toThrow();
  });
  test('a profile that lowers the limit under the inherited chunks is refused too', () => {
    const e = refusal(collector({
      storageMaxChunksUp: 400,
      resources: { memoryLimit: '2Gi' },
      resourceProfiles: [{ name: 'small', nodes: ResourceProfileNodes.nodePools(['small']), resources: { memoryLimit: '256Mi' } }],
    }));
    expect(e.message).toMatch(/resourceProfiles\[0\] \("small"\): 400 chunks .* not below the memory limit 256Mi/);
  });
});

describe('4. an NVIDIA driver tag without its OS suffix', () => {
  test('refused, naming the image and the tags the registry has', () => {
    const e = refusal(() => driver({ image: 'nvcr.io/nvidia/driver:550.90.07' }));
    expect(e.message).toMatch(/^GpuDriverDaemonSet test\/nvidia/);
    expect(e.message).toMatch(/image "nvcr.io\/nvidia\/driver:550.90.07" has no OS suffix.*ImagePullBackOff.*"nvcr.io\/nvidia\/driver:550.90.07-ubuntu22.04"/);
  });
  test.each([
    'nvcr.io/nvidia/driver:550.90.07-ubuntu22.04',
    'nvcr.io/nvidia/driver:550-5.15.0-1065-nvidia-ubuntu22.04',
    'nvcr.io/nvidia/driver:535.183.01-rhel9.4',
    `nvcr.io/nvidia/driver@sha256:${'a'.repeat(64)}`,
    'registry.example.com/gpu/custom-driver:550.90.07',
  ])('%s is taken', (image) => {
    expect(() => driver({ image, resources: { memoryLimit: '4Gi' } })).not.toThrow();
  });
});

describe('5. a memory limit under what a driver build needs', () => {
  test('a built-from-source driver with 512Mi gets a warning naming the prop, the value and the fix', () => {
    const d = driver({ resources: { memoryLimit: '512Mi' } });
    expect(warningsOf(d).join('\n')).toMatch(/GpuDriverDaemonSet test\/nvidia: resources.memoryLimit "512Mi" is below the 4Gi a driver built from source .*OOM-killed.*Raise resources.memoryLimit to "4Gi"/);
  });
  test('a precompiled driver (tag <branch>-<kernel>-<os>, or kernelVersions pinned) is exempt', () => {
    expect(warningsOf(driver({ image: 'nvcr.io/nvidia/driver:550-5.15.0-1065-nvidia-ubuntu22.04', resources: { memoryLimit: '512Mi' } }))).toEqual([]);
    expect(warningsOf(driver({ kernelVersions: ['5.15.0-1065-nvidia'], resources: { memoryLimit: '512Mi' } }))).toEqual([]);
  });
  test('the default takes no warning', () => {
    expect(warningsOf(driver({}))).toEqual([]);
  });
});

describe('6. a rollout budget count above int32', () => {
  test('in updateStrategy', () => {
    const e = refusal(agent({ updateStrategy: UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(2147483648) }) }));
    expect(e.message).toMatch(/maxUnavailable must be at most 2147483647 nodes \(IntOrString is an int32; the API server refuses more\), got 2147483648; give a percentage/);
  });
  test('in canaryPace and wavePace', () => {
    const pace = UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(2 ** 40) });
    const waves = [RolloutWave.labelled('canary'), RolloutWave.labelled('wave-1')];
    expect(refusal(agent({ rollout: { waves, promoted: Promotion.all(), canaryPace: pace } })).message).toMatch(/at most 2147483647/);
    expect(refusal(agent({ rollout: { waves, promoted: Promotion.all(), wavePace: { 'wave-1': pace } } })).message).toMatch(/at most 2147483647/);
  });
  test('2147483647 is taken', () => {
    expect(agent({ updateStrategy: UpdateStrategy.rollingUpdate({ maxUnavailable: RolloutBudget.count(2147483647) }) })).not.toThrow();
  });
});

describe('7. type refusals that say what to write', () => {
  test('a password given as a string: a Secret reference { key, secretName }', () => {
    const e = refusal(collector({ outputs: [FluentBitOutput.openSearch({ host: 'os', httpUser: 'fb', httpPassword: 's3cr3t' as never })] }));
    expect(e.message).toMatch(/httpPassword must be an object such as \{ key, secretName \} \(SecretKeyRefOptions\), got string "s3cr3t"/);
  });
  test('readinessTaint given as a string: { key }', () => {
    const e = refusal(agent({ readinessTaint: 'example.com/agent-not-ready' as never }));
    expect(e.message).toMatch(/readinessTaint must be an object such as \{ key \} \(AgentReadinessTaint\), got string/);
  });
  test('extraEnv given a string: an AgentEnvValue, e.g. AgentEnvValue.fromValue(...)', () => {
    const e = refusal(collector({ extraEnv: { AWS_REGION: 'eu-west-1' as never } }));
    expect(e.message).toContain('extraEnv["AWS_REGION"] must be an AgentEnvValue, e.g. AgentEnvValue.fromValue(\'eu-west-1\') '
      + '(made with AgentEnvValue.fromConfigMap(), fromField(), fromSecret() or fromValue())');
  });
});

describe('8. alerts.labels with the key "constructor"', () => {
  test('refused like every other label map', () => {
    const e = refusal(agent({ alerts: { labels: { constructor: 'x' } as never } }));
    expect(e.message).toMatch(/alerts.labels: the key "constructor" cannot be rendered/);
  });
});

describe('9. bad values printed through the one formatter, never [object Object]', () => {
  test.each([
    ['RolloutBudget.count', () => RolloutBudget.count({} as never), /^RolloutBudget.count: nodes must be a number, got object \{\}/],
    ['RolloutBudget.percent', () => RolloutBudget.percent({} as never), /^RolloutBudget.percent: percentage must be a number, got object \{\}/],
    ['Promotion.groups', () => Promotion.groups({} as never), /^Promotion.groups: count must be a number, got object \{\}/],
  ])('%s({})', (_name, build, message) => {
    const e = refusal(build);
    expect(e.message).toMatch(message);
    expect(e.message).not.toContain('[object Object]');
  });
  test('Duration.seconds({}) in a probe', () => {
    const probe = AgentProbe.fromTcpSocket({ port: 8080, periodSeconds: Duration.seconds({} as never) });
    const e = refusal(agent({ readiness: probe, ports: [{ name: 'http', containerPort: 8080 }] }));
    expect(e.message).not.toContain('[object Object]');
    expect(e.message).toMatch(/object \{\}/);
  });
});

describe('10. an unset ${X} in an output option is reported by the output and the prop', () => {
  test('host', () => {
    const e = refusal(collector({ outputs: [FluentBitOutput.openSearch({ host: '${SEARCH_HOST}' })] }));
    expect(e.message).toMatch(/outputs\[0\] \(FluentBitOutput opensearch\): host "\$\{SEARCH_HOST\}" names no environment variable of the pod/);
    expect(e.message).not.toMatch(/fluent-bit.conf line/);
  });
  test('set with extraEnv, it builds', () => {
    expect(collector({
      outputs: [FluentBitOutput.openSearch({ host: '${SEARCH_HOST}' })], extraEnv: { SEARCH_HOST: AgentEnvValue.fromValue('search') },
    })).not.toThrow();
  });
});

describe('11. one error class: every refusal is a ValidationError naming the construct or the factory', () => {
  test.each([
    ['tail: no paths', () => FluentBitInput.tail({ tag: 'app', paths: [] }), /^FluentBitInput.tail: paths is empty/],
    ['tail: a relative path', () => FluentBitInput.tail({ tag: 'app', paths: ['var/log/app.log'] }), /^FluentBitInput.tail: path "var\/log\/app.log" must be absolute/],
    ['tail: the container logs', () => FluentBitInput.tail({ tag: 'app', paths: ['/var/log/containers/*.log'] }), /^FluentBitInput.tail: .* read by the collector's own container-log input/],
    ['tail: a bad tag', () => FluentBitInput.tail({ tag: 'a b', paths: ['/var/log/app.log'] }), /^FluentBitInput.tail: tag "a b" must be/],
    ['tail: a kube. tag', () => FluentBitInput.tail({ tag: 'kube.app', paths: ['/var/log/app.log'] }), /^FluentBitInput.tail: tag "kube.app" starts with kube./],
    ['tail: a bad alias', () => FluentBitInput.tail({ tag: 'app', paths: ['/var/log/app.log'], alias: 'a b' }), /^FluentBitInput.tail: alias "a b"/],
    ['systemd: no units', () => FluentBitInput.systemd({ tag: 'host', units: [] }), /^FluentBitInput.systemd: units is empty/],
    ['systemd: a bad unit', () => FluentBitInput.systemd({ tag: 'host', units: ['a b'] }), /^FluentBitInput.systemd: "a b" is not a unit name/],
  ])('FluentBitInput %s', (_name, build, message) => {
    expect(refusal(build).message).toMatch(message);
  });

  test('a node_exporter flag', () => {
    const e = refusal(() => new NodeExporterDaemonSet(chart(), 'ne', { extraArgs: ['--version'] }));
    expect(e.message).toMatch(/^NodeExporterDaemonSet test\/ne: extraArgs\[0\] "--version": --version makes node_exporter print and exit/);
  });

  test('an AgentFleet check', () => {
    const fleet = new AgentFleet({
      repoUrl: 'https://git.example.com/fleet.git',
      resourceTracking: ArgoCdResourceTracking.LABEL,
      agents: { addAgents: () => undefined },
      clusters: [{ name: 'dev-eu-1', environment: 'dev', region: 'eu-west-1' }],
    });
    expect(refusal(() => fleet.synthFiles()).message).toMatch(/^AgentFleet: validation failed .*resourceTracking "label"/s);
  });

  test('configData over the 1 MiB ConfigMap limit is refused when the agent is built, naming the prop', () => {
    const e = refusal(agent({ configData: { 'big.conf': 'x'.repeat(1024 * 1024) } }));
    expect(e.message).toMatch(/^NodeAgentDaemonSet test\/agent: .*configData holds 1048584 bytes .*\(1 MiB\); make the files smaller/s);
  });

  test('the GPU driver runbook\'s own checks', () => {
    const d = driver({});
    expect(refusal(() => d.runbook({ readyTimeoutSeconds: 0 })).message).toMatch(/^GpuDriverDaemonSet test\/nvidia: runbook: runbook readyTimeoutSeconds must be a whole number of seconds >= 1, got 0/);
  });

  test('an output rendered with problems', () => {
    expect(refusal(() => FluentBitOutput.openSearch({ host: 'os', port: 443 })._render('os')).message).toMatch(/^FluentBitOutput opensearch: port 443 without tls/);
  });
});

describe('9. a NodeRequirement reports a bad value where it is used (its checks are deferred to the construct, which names the prop)', () => {
  test('Gt with an object', () => {
    const e = refusal(agent({ nodeRequirements: [NodeRequirement.gt('example.com/cores', {} as never)] }));
    expect(e.message).toMatch(/Gt on "example.com\/cores" needs exactly one integer value .*got object \{\}/);
    expect(e.message).not.toContain('[object Object]');
  });
});

describe('9. the other factories check their arguments too', () => {
  test.each([
    ['MaxUpdate.percent', () => MaxUpdate.percent({} as never), /^MaxUpdate.percent: percent must be a number, got object \{\}/],
    ['GpuNodeSelection.labelIn', () => GpuNodeSelection.labelIn('example.com/gpu', 'a100' as never), /^GpuNodeSelection.labelIn: values must be an array, got string "a100"/],
  ])('%s', (_name, build, message) => {
    const e = refusal(build);
    expect(e.message).toMatch(message);
    expect(e.message).not.toContain('[object Object]');
  });
});

describe('10. an unset ${X} in a map of an output is named by the map and its key', () => {
  test('an HTTP header', () => {
    const e = refusal(collector({ outputs: [FluentBitOutput.http({ host: 'logs.example.com', headers: { 'X-Cluster': '${CLUSTER}' } })] }));
    expect(e.message).toMatch(/outputs\[0\] \(FluentBitOutput http\): headers\["X-Cluster"\] "\$\{CLUSTER\}" names no environment variable of the pod/);
  });
});
