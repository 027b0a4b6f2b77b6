/**
 * What a real fluent-bit run on real nodes found, each refused or fixed at synthesis: the s3
 * buffer limit, Elastic Cloud ids, `${VAR}` references no env var backs, the journal location, the
 * kubelet's certificate in kubelet mode, and grep / rewrite_tag regexes.
 */
import { Chart, Testing } from 'cdk8s';
import { AgentEnvValue } from '../../src/agent/container-inputs';
import { AgentEnvSource } from '../../src/agent/pod-options';
import { LogCollectorDaemonSet, LogCollectorDaemonSetProps } from '../../src/constructs/log-collector-daemon-set';
import { entryValue, entryValues, findSections, parseClassicConfig, ParsedClassicConfig } from '../../src/fluent-bit/classic-format';
import { envReferences } from '../../src/fluent-bit/config';
import { FluentBitFilter } from '../../src/fluent-bit/filters';
import { FluentBitInput } from '../../src/fluent-bit/inputs';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { synthManifests, Manifest } from '../util/manifests';

const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });

function synth(props: Partial<LogCollectorDaemonSetProps> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], ...props });
  return synthManifests(chart);
}

function build(props: Partial<LogCollectorDaemonSetProps>): () => void {
  return () => new LogCollectorDaemonSet(new Chart(Testing.app(), 'test'), 'logs', { outputs: [LOKI], ...props });
}

const configOf = (m: Manifest[]): ParsedClassicConfig => parseClassicConfig(m.find((x) => x.kind === 'ConfigMap')!.data['fluent-bit.conf']);
const podOf = (m: Manifest[]) => m.find((x) => x.kind === 'DaemonSet')!.spec.template.spec;

describe('s3 buffers in its own store_dir', () => {
  // plugins/out_s3/s3.c (cb_s3_init) warns "Please use 'store_dir_limit_size' with s3 output instead of
  // 'storage.total_limit_size'" whenever the latter is set.
  test('the s3 output gets store_dir_limit_size and no storage.total_limit_size; the others keep it', () => {
    const config = configOf(synth({ outputs: [LOKI, FluentBitOutput.s3({ bucket: 'logs-archive', region: 'eu-west-1' })] }));
    const s3 = findSections(config, 'OUTPUT', 's3')[0];
    expect(entryValue(s3, 'store_dir_limit_size')).toBe('1G');
    expect(entryValue(s3, 'storage.total_limit_size')).toBeUndefined();
    expect(entryValue(findSections(config, 'OUTPUT', 'loki')[0], 'storage.total_limit_size')).toBe('1G');
  });

  test('storageTotalLimitSize on s3 is refused, pointing at storeDirLimitSize', () => {
    expect(build({ outputs: [FluentBitOutput.s3({ bucket: 'logs-archive', region: 'eu-west-1', storageTotalLimitSize: '2G' })] }))
      .toThrow(/outputs\[0\] \(FluentBitOutput s3\): storageTotalLimitSize does not bound the s3 output.*use storeDirLimitSize/);
  });
});

describe('Elastic Cloud ids, as plugins/out_es/es_conf.c (extract_cloud_host) reads them', () => {
  const es = (cloudId: string) => build({ outputs: [FluentBitOutput.elasticsearch({ host: 'unused.example.com', cloudId })] });

  test.each([
    // Elastic's documented form: <name>:base64(<region>$<es id>$<kibana id>).
    'staging:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRjZWM2ZjI2MWE3NGJmMjRjZTMzYmI4ODExYjg0Mjk0ZiRjNmMyY2E2ZDA0MjI0OWFmMGNjN2Q3YTllOTYyNTc0Mw==',
    // With ports (libbeat/cloudid's test form): <region>:<port>$<es id>:<port>$<kibana id>:<port>.
    'custom-port:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbzo5MjQzJGFjMzFlYmI5MDI0MTc3MzE1NzA0M2MzNGZkMjZmZDQ2OjkyNDMkYTRjMDYyMzBlNDhjOGZjZTdiZTg4YTA3NGEzYmIzZTA6OTI0NA==',
  ])('a well-formed id is accepted and written as Cloud_ID: %s', (id) => {
    const m = synth({ outputs: [FluentBitOutput.elasticsearch({ host: 'unused.example.com', cloudId: id })] });
    expect(entryValue(findSections(configOf(m), 'OUTPUT', 'es')[0], 'Cloud_ID')).toBe(id);
  });

  test.each([
    ['no colon', 'dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRhYmMxMjMkZGVmNDU2', /no ':' after the deployment name/],
    ['not base64', 'prod:not base64!', /is not base64/],
    ['a truncated id', 'prod:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRhYmMxMjMkZGVmNDU', /is not base64/],
    ['no host part', `prod:${Buffer.from('us-east-1.aws.found.io').toString('base64')}`, /no <region>\$<host> pair/],
    ['only empty parts', `prod:${Buffer.from('$$').toString('base64')}`, /no <region>\$<host> pair/],
    ['a non-numeric port', `prod:${Buffer.from('eu.example.com$abc:https$def').toString('base64')}`, /port "https"/],
    ['too long', `prod:${Buffer.from(`r$${'h'.repeat(300)}$k`).toString('base64')}`, /more than 255 bytes/],
  ])('%s is refused at synthesis', (_, id, message) => {
    expect(es(id)).toThrow(/outputs\[0\] \(FluentBitOutput es\): cloudId .* is not an Elastic Cloud id/);
    expect(es(id)).toThrow(message);
  });
});

describe('${VAR} in the config: fluent-bit expands an unset one to an empty string', () => {
  test('envReferences reads references as src/flb_env.c (flb_env_var_translate) does, with :- defaults', () => {
    expect(envReferences('a ${A} b\n# ${COMMENTED}\nc ${B:-x} ${}\n')).toEqual([
      { name: 'A', hasDefault: false, line: 1, text: 'a ${A} b' },
      { name: 'B', hasDefault: true, line: 3, text: 'c ${B:-x} ${}' },
      { name: '', hasDefault: false, line: 3, text: 'c ${B:-x} ${}' },
    ]);
  });

  test('a record value naming no env var of the pod is refused, with the line and the fix', () => {
    expect(build({ filters: [FluentBitFilter.recordModifier({ records: { cluster: '${CLUSTER_NAME}' } })] }))
      .toThrow(/LogCollectorDaemonSet test\/logs: \$\{CLUSTER_NAME\} in fluent-bit.conf line \d+ \("Record +cluster \$\{CLUSTER_NAME\}"\) names no environment variable of the pod.*extraEnv/);
    expect(build({ extraConfig: '[FILTER]\n    Name modify\n    Match *\n    Add region ${REGION}\n' })).toThrow(/\$\{REGION\} in fluent-bit.conf/);
  });

  test('backed references pass: extraEnv, envFrom, the runtime\'s HOSTNAME, a :- default, the Secret and downward-API variables', () => {
    const m = synth({
      filters: [FluentBitFilter.recordModifier({
        records: { cluster: '${CLUSTER_NAME}', node: '${HOSTNAME}', zone: '${ZONE:-unknown}', region: '${INFO_REGION}' },
      })],
      extraEnv: { CLUSTER_NAME: AgentEnvValue.fromValue('prod-eu-1') },
      envFrom: [AgentEnvSource.configMap('cluster-info', { prefix: 'INFO_' })],
      useKubelet: true,
      kubernetesTlsVerify: false,
      outputs: [FluentBitOutput.loki({ host: 'loki', httpUser: 'fluent-bit', httpPassword: { secretName: 'loki', key: 'password' } })],
    });
    const text = m.find((x) => x.kind === 'ConfigMap')!.data['fluent-bit.conf'];
    expect(text).toContain('${FLB_LOKI_HTTP_PASSWD}');
    expect(text).toContain('${NODE_IP}');
  });
});

describe('the journal, persistent or volatile', () => {
  // plugins/in_systemd/systemd_config.c: with Path, sd_journal_open_directory(path) fails where the
  // directory is missing ("could not open the Journal"), and the failed input stops the engine;
  // without it, sd_journal_open(SD_JOURNAL_LOCAL_ONLY) reads /run/log/journal and /var/log/journal.
  test('no systemd input names a Path; /run/log/journal is mounted read-only beside /var/log', () => {
    const m = synth({ systemdInput: true, inputs: [FluentBitInput.systemd({ tag: 'host.sshd', units: ['sshd.service'] })] });
    const inputs = findSections(configOf(m), 'INPUT', 'systemd');
    expect(inputs).toHaveLength(2);
    for (const input of inputs) expect(entryValues(input, 'Path')).toEqual([]);
    const pod = podOf(m);
    const volume = pod.volumes.find((v: Manifest) => v.hostPath?.path === '/run/log/journal');
    expect(volume.hostPath.type).toBe('DirectoryOrCreate');
    const mount = pod.containers[0].volumeMounts.find((v: Manifest) => v.name === volume.name);
    expect(mount).toMatchObject({ mountPath: '/run/log/journal', readOnly: true });
  });

  test('without a systemd input nothing of the journal is mounted', () => {
    expect(podOf(synth()).volumes.map((v: Manifest) => v.hostPath?.path)).not.toContain('/run/log/journal');
  });
});

describe('kubelet mode and the kubelet\'s serving certificate', () => {
  // plugins/filter_kubernetes/kube_meta.c (flb_kube_network_init): the kubelet's TLS context uses the
  // filter's one tls.verify and the cluster CA file.
  test('useKubelet without an explicit kubernetesTlsVerify is refused, naming both choices', () => {
    expect(build({ useKubelet: true }))
      .toThrow(/LogCollectorDaemonSet test\/logs: useKubelet is on but kubernetesTlsVerify is not set.*self-signed certificate \(kubeadm's default.*Set kubernetesTlsVerify: true where/);
  });

  test('false turns verification off (tls.verify Off); true keeps fluent-bit\'s default', () => {
    const k8s = (m: Manifest[]) => findSections(configOf(m), 'FILTER', 'kubernetes')[0];
    expect(entryValue(k8s(synth({ useKubelet: true, kubernetesTlsVerify: false })), 'tls.verify')).toBe('Off');
    expect(entryValue(k8s(synth({ useKubelet: true, kubernetesTlsVerify: true })), 'tls.verify')).toBeUndefined();
  });
});

describe('grep and rewrite_tag regexes are checked like parser regexes (Onigmo compiles them at start)', () => {
  test.each([
    ['grep regex', () => FluentBitFilter.grep({ regex: [{ key: 'log', regex: '([' }] }), /FluentBitFilter.grep: regex rule for key log: regex "\(\[" is not a valid regular expression/],
    ['grep exclude', () => FluentBitFilter.grep({ exclude: [{ key: 'log', regex: 'a{2,1}' }] }), /FluentBitFilter.grep: exclude rule for key log: regex "a\{2,1\}" is not a valid/],
    ['rewrite_tag', () => FluentBitFilter.rewriteTag({ rules: [{ key: '$log', regex: '(?<x', newTag: 'app.x' }] }), /FluentBitFilter.rewriteTag: rules\[0\].regex "\(\?<x" is not a valid/],
  ])('a bad %s fails synthesis', (_, make, message) => {
    expect(make).toThrow(message);
  });

  test('valid Onigmo regexes pass', () => {
    expect(() => FluentBitFilter.grep({ exclude: [{ key: 'log', regex: '"GET /healthz' }, { key: 'log', regex: '(?i)^debug\\b' }] })).not.toThrow();
    expect(() => FluentBitFilter.rewriteTag({ rules: [{ key: "$kubernetes['namespace_name']", regex: '^(kube-system)$', newTag: 'system.$1' }] })).not.toThrow();
  });
});
