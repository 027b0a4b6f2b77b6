/**
 * Each pinned image is named here, so a bump is one deliberate change: the image, the lists checked
 * against its sources, and this file. The lists were extracted from each version's tree
 * (fluent-bit v5.1.1: the config_maps of plugins/out_*, in_tail, in_systemd, in_forward and the
 * filters the collector writes, the keys src/flb_output.c, src/flb_input.c and src/flb_filter.c
 * take for every plugin, conf/parsers.conf and the built-in multiline parsers; node_exporter
 * v1.12.1 collector/*.go registerCollector calls on linux); the same extraction from the previous
 * pins (4.2.3, 1.9.1) gives the previous lists, kept where a user pins an older image.
 */
import { Chart, Testing } from 'cdk8s';
import { LogCollectorDaemonSet, LogCollectorDaemonSetProps } from '../../src/constructs/log-collector-daemon-set';
import { NodeExporterCollector, NodeExporterDaemonSet } from '../../src/constructs/node-exporter-daemon-set';
import { entryValue, parseClassicConfig } from '../../src/fluent-bit/classic-format';
import { FLUENT_BIT_IMAGE } from '../../src/fluent-bit/config';
import { FluentBitFilter } from '../../src/fluent-bit/filters';
import { FILTER_COMMON_KEYS, FILTER_PLUGIN_KEYS, INPUT_COMMON_KEYS, INPUT_PLUGIN_KEYS } from '../../src/fluent-bit/input-filter-keys';
import { FluentBitInput } from '../../src/fluent-bit/inputs';
import { isOutputKey, OUTPUT_PLUGIN_NAMES } from '../../src/fluent-bit/output-plugins';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { FluentBitParser } from '../../src/fluent-bit/parsers';
import { exporterArgs } from '../../src/node-exporter/args';
import { KNOWN_COLLECTORS, NODE_EXPORTER_IMAGE, NODE_EXPORTER_VERSION } from '../../src/node-exporter/collectors';
import { GATE_IMAGE } from '../../src/rollout/hook-shell';
import { synthManifests, Manifest } from '../util/manifests';

const containers = (m: Manifest[]) => m.filter((x) => x.kind === 'DaemonSet').flatMap((d) => d.spec.template.spec.containers);

test('the pinned images are the current upstream stable releases', () => {
  expect(FLUENT_BIT_IMAGE).toBe('cr.fluentbit.io/fluent/fluent-bit:5.1.1');
  expect(NODE_EXPORTER_VERSION).toBe('1.12.1');
  expect(NODE_EXPORTER_IMAGE).toBe('quay.io/prometheus/node-exporter:v1.12.1');
  expect(GATE_IMAGE).toBe('curlimages/curl:8.21.0');
  const chart = Testing.chart();
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()] });
  new NodeExporterDaemonSet(chart, 'ne', { kubeRbacProxy: {} });
  expect(containers(synthManifests(chart)).map((c) => c.image).sort()).toEqual([
    'cr.fluentbit.io/fluent/fluent-bit:5.1.1', 'quay.io/brancz/kube-rbac-proxy:v0.21.0', 'quay.io/prometheus/node-exporter:v1.12.1',
  ]);
});

describe('fluent-bit 5.1.1 lists, 4.2.3 kept for a 4.x image', () => {
  test('plugins and keys 5.1.1 added are known (out_gcs, loki tenant_id_key_error_handling, s3 retry_exhausted_action, http oauth2.*)', () => {
    expect(OUTPUT_PLUGIN_NAMES).toContain('gcs');
    expect(isOutputKey('loki', 'tenant_id_key_error_handling')).toBe(true);
    expect(isOutputKey('s3', 'retry_exhausted_action')).toBe(true);
    expect(isOutputKey('http', 'oauth2.token_url')).toBe(true);
  });

  const withImage = (image: string, output: FluentBitOutput) => () =>
    new LogCollectorDaemonSet(new Chart(Testing.app(), 'c'), 'logs', { image, outputs: [output] });
  const newKey = FluentBitOutput.custom({ name: 'loki', options: { host: 'loki', tenant_id_key_error_handling: 'drop' } });
  test('a 4.x image refuses what 4.2.3 lacks; 5.x accepts it', () => {
    expect(withImage('cr.fluentbit.io/fluent/fluent-bit:4.2.3', newKey))
      .toThrow(/image cr.fluentbit.io\/fluent\/fluent-bit:4.2.3: the loki output's key tenant_id_key_error_handling is not in fluent-bit 4.2.3/);
    expect(withImage('cr.fluentbit.io/fluent/fluent-bit:4.2.3', FluentBitOutput.custom({ name: 'gcs', options: { bucket: 'b' } })))
      .toThrow(/fluent-bit 4.x has no output plugin gcs/);
    expect(withImage('cr.fluentbit.io/fluent/fluent-bit:5.1.1', newKey)).not.toThrow();
    expect(withImage('cr.fluentbit.io/fluent/fluent-bit:4.2.3', FluentBitOutput.loki({ host: 'loki' }))).not.toThrow();
  });
});

describe('fluent-bit 5.1.1 keys every output takes (src/flb_output.c flb_output_set_property), 4.2.3\'s for a 4.x image', () => {
  const build = (image: string, output: FluentBitOutput) => () =>
    new LogCollectorDaemonSet(new Chart(Testing.app(), 'c'), 'logs', { image, outputs: [output] });
  const V4 = 'cr.fluentbit.io/fluent/fluent-bit:4.2.3';

  test.each([
    // tls.proxy.*: prop_key_check names new in 5.x
    ['loki', 'tls.proxy.verify'],
    // oauth2*: set aside and checked against src/flb_oauth2.c oauth2_config_map, for every output
    ['opentelemetry', 'oauth2.token_url'],
    // the HTTP server keys of an FLB_OUTPUT_HTTP_SERVER plugin (src/http_server/flb_http_server_config_map.c)
    ['prometheus_exporter', 'http_server.workers'],
  ])('%s %s: accepted with the pinned 5.1.1 image, refused with a 4.2.3 image', (name, key) => {
    const output = FluentBitOutput.custom({ name, options: { [key]: 'on' } });
    expect(build(FLUENT_BIT_IMAGE, output)).not.toThrow();
    expect(build(V4, output)).toThrow(`image ${V4}: the ${name} output's key ${key} is not in fluent-bit 4.2.3 (added in 5.x)`);
  });

  test('a key in neither version is refused, naming the nearest key', () => {
    expect(() => FluentBitOutput.custom({ name: 'loki', options: { 'tls.proxy.verfy': 'on' } })._render('x'))
      .toThrow('the loki plugin of fluent-bit 5.1 has no key "tls.proxy.verfy"; did you mean tls.proxy.verify?');
    // net.* and oauth2* keys outside their maps are refused by their own checks
    expect(() => FluentBitOutput.custom({ name: 'http', options: { 'oauth2.tokenurl': 'x' } })._render('x')).toThrow(/did you mean oauth2.token_url\?/);
    expect(isOutputKey('gelf', 'net.keepalives')).toBe(false);
    // the HTTP server keys belong to the outputs that serve HTTP only
    expect(isOutputKey('loki', 'http_server.workers')).toBe(false);
  });

  test('the keys include/fluent-bit/flb_aws_credentials.h FLB_AWS_CREDENTIAL_BASE_CONFIG_MAP adds to a config_map are known', () => {
    for (const plugin of ['http', 'opentelemetry', 'prometheus_remote_write']) {
      for (const key of ['aws_region', 'aws_sts_endpoint', 'aws_role_arn', 'aws_external_id', 'aws_profile']) expect([plugin, key, isOutputKey(plugin, key)]).toEqual([plugin, key, true]);
    }
    expect(isOutputKey('loki', 'aws_region')).toBe(false);
  });

  test('what the release image is built without is refused: kafka\'s Avro keys (no FLB_AVRO_ENCODER), out_retry (FLB_OUT_RETRY off)', () => {
    expect(isOutputKey('kafka', 'schema_str')).toBe(false);
    expect(isOutputKey('kafka', 'rdkafka.queue.buffering.max.ms')).toBe(true);
    expect(OUTPUT_PLUGIN_NAMES).not.toContain('retry');
  });
});

describe('fluent-bit 5.1.1 input and filter keys (src/flb_input.c, src/flb_filter.c, plugins/in_*, plugins/filter_*), 4.2.3\'s for a 4.x image', () => {
  const V4 = 'cr.fluentbit.io/fluent/fluent-bit:4.2.3';
  const build = (image: string, props: Partial<LogCollectorDaemonSetProps>) => () =>
    new LogCollectorDaemonSet(new Chart(Testing.app(), 'c'), 'logs', { image, outputs: [FluentBitOutput.stdout()], ...props });

  test.each([
    // flb_input_set_property: rate_window is new in 5.x (and compiled with metrics, as in the image)
    ['INPUT', 'tail', 'Path /var/log/app/*.log\n    Tag app.*\n    rate_window 30', 'rate_window', 'tail input'],
    // plugins/in_forward/fw_config.c: workers is new in 5.x
    ['INPUT', 'forward', 'Listen 127.0.0.1\n    Port 24299\n    Tag fw.*\n    workers 2', 'workers', 'forward input'],
    // plugins/filter_kubernetes/kubernetes.c: kube_namespace_file is new in 5.x
    ['FILTER', 'kubernetes', 'Match app.*\n    kube_namespace_file /var/run/secrets/kubernetes.io/serviceaccount/namespace', 'kube_namespace_file', 'kubernetes filter'],
  ])('extraConfig [%s] %s: a key 5.1.1 added is accepted with the pinned image, refused with a 4.2.3 image', (section, plugin, body, key, what) => {
    const extraConfig = `[${section}]\n    Name ${plugin}\n    ${body}\n`;
    expect(build(FLUENT_BIT_IMAGE, { extraConfig })).not.toThrow();
    expect(build(V4, { extraConfig }))
      .toThrow(`image ${V4}: the ${what}'s key ${key} (extraConfig line 1) is not in fluent-bit 4.2.3 (added in 5.x), which would refuse it at start`);
  });

  test('extraConfig with a 4.x image: an output plugin 4.2.3 lacks is refused too', () => {
    expect(build(V4, { extraConfig: '[OUTPUT]\n    Name gcs\n    Match *\n    bucket b\n' }))
      .toThrow('fluent-bit 4.x has no output plugin gcs (extraConfig line 1) (added in 5.x)');
  });

  const everything: Partial<LogCollectorDaemonSetProps> = {
    systemdInput: true,
    systemdUnits: ['kubelet.service'],
    forwardInputPort: 24224,
    useKubelet: true,
    kubernetesTlsVerify: true,
    kubernetesFilter: { mergeLog: false, keepLog: true, allowParserAnnotation: false, allowExcludeAnnotation: false, bufferSize: '256k', labels: false, annotations: false },
    inputs: [
      FluentBitInput.tail({ tag: 'host.audit', paths: ['/var/log/audit/audit.log'], excludePaths: ['/var/log/audit/x.log'], parser: 'json', multilineParsers: ['java'], pathKey: 'file' }),
      FluentBitInput.systemd({ tag: 'host.ssh', units: ['sshd.service'] }),
    ],
    filters: [
      FluentBitFilter.grep({ regex: [{ key: 'log', regex: 'x' }], exclude: [{ key: 'log', regex: 'y' }] }),
      FluentBitFilter.modify({ set: { cluster: 'prod' }, remove: ['stream'], rename: { log: 'message' } }),
      FluentBitFilter.nest({ wildcards: ['pod_*'], nestUnder: 'pod', removePrefix: 'pod_' }),
      FluentBitFilter.lift({ nestedUnder: 'kubernetes', addPrefix: 'k8s_' }),
      FluentBitFilter.recordModifier({ records: { cluster: 'prod' }, removeKeys: ['stream'] }),
      FluentBitFilter.throttle({ rate: 1000 }),
      FluentBitFilter.rewriteTag({ rules: [{ key: '$log', regex: '^a', newTag: 'audit.x', keep: true }] }),
      FluentBitFilter.luaInline({ code: 'function f(tag, ts, record)\n  return 1, ts, record\nend', call: 'f' }),
      FluentBitFilter.multiline({ parsers: ['java'] }),
    ],
  };

  /**
   * [SERVICE] keys: the names of src/flb_config.c `service_configs` (their strings in
   * include/fluent-bit/flb_config.h) at v5.1.1, and those v4.2.3 lacks.
   */
  const SERVICE_KEYS = [
    'coro_stack_size', 'daemon', 'dns.mode', 'dns.prefer_ipv4', 'dns.prefer_ipv6', 'dns.resolver', 'enable_chunk_trace', 'flush', 'flush.adaptive',
    'flush.adaptive.down_steps', 'flush.adaptive.high_pressure', 'flush.adaptive.low_pressure', 'flush.adaptive.max_interval',
    'flush.adaptive.medium_pressure', 'flush.adaptive.min_interval', 'flush.adaptive.up_steps', 'grace', 'hc_errors_count', 'hc_period',
    'hc_retry_failure_count', 'health_check', 'hot_reload', 'hot_reload.ensure_thread_safety', 'hot_reload.timeout', 'http_listen', 'http_port',
    'http_server', 'json.convert_nan_to_null', 'json.escape_unicode', 'log_file', 'log_level', 'multiline_buffer_limit', 'parsers_file',
    'plugins_file', 'scheduler.base', 'scheduler.cap', 'security.fips_mode', 'sp.convert_from_str_to_num', 'storage.backlog.flush_on_shutdown',
    'storage.backlog.mem_limit', 'storage.checksum', 'storage.delete_irrecoverable_chunks', 'storage.inherit', 'storage.keep.rejected',
    'storage.max_chunks_up', 'storage.metrics', 'storage.path', 'storage.rejected.limit', 'storage.rejected.path', 'storage.sync',
    'storage.trim_files', 'storage.type', 'streams_file', 'windows.maxstdio',
  ];
  const SERVICE_KEYS_ADDED_SINCE_4_2_3 = [
    'flush.adaptive', 'flush.adaptive.down_steps', 'flush.adaptive.high_pressure', 'flush.adaptive.low_pressure', 'flush.adaptive.max_interval',
    'flush.adaptive.medium_pressure', 'flush.adaptive.min_interval', 'flush.adaptive.up_steps', 'security.fips_mode', 'storage.rejected.limit',
  ];

  test('every [SERVICE] key the collector writes is one 5.1.1 reads, and one 4.2.3 reads as well', () => {
    const chart = Testing.chart();
    new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()], ...everything, parsers: [FluentBitParser.json({ name: 'app-json' })] });
    const conf = parseClassicConfig(synthManifests(chart).find((m) => m.kind === 'ConfigMap')!.data['fluent-bit.conf'], 'main');
    const keys = conf.sections.filter((s) => s.name === 'SERVICE').flatMap((s) => s.entries.map((e) => e.key.toLowerCase()));
    expect(keys).toContain('parsers_file');
    expect(keys.filter((k) => !SERVICE_KEYS.includes(k) || SERVICE_KEYS_ADDED_SINCE_4_2_3.includes(k))).toEqual([]);
  });

  test('every input and filter key the collector writes is one 5.1.1 declares, and one 4.2.3 has as well', () => {
    const chart = Testing.chart();
    new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()], ...everything });
    const conf = parseClassicConfig(synthManifests(chart).find((m) => m.kind === 'ConfigMap')!.data['fluent-bit.conf'], 'main');
    const unknown = conf.sections.filter((s) => s.name === 'INPUT' || s.name === 'FILTER').flatMap((s) => {
      const plugin = entryValue(s, 'Name')!;
      const [common, own] = s.name === 'INPUT' ? [INPUT_COMMON_KEYS, INPUT_PLUGIN_KEYS[plugin]] : [FILTER_COMMON_KEYS, FILTER_PLUGIN_KEYS[plugin]];
      return s.entries.filter((e) => ![...common, ...own].includes(e.key.toLowerCase())).map((e) => `${s.name} ${plugin}: ${e.key}`);
    });
    expect(unknown).toEqual([]);
    expect(new Set(conf.sections.map((s) => `${s.name}:${entryValue(s, 'Name') ?? ''}`))).toEqual(new Set([
      'SERVICE:', 'INPUT:tail', 'INPUT:systemd', 'INPUT:forward', 'FILTER:kubernetes', 'FILTER:grep', 'FILTER:modify', 'FILTER:nest',
      'FILTER:record_modifier', 'FILTER:throttle', 'FILTER:rewrite_tag', 'FILTER:lua', 'FILTER:multiline', 'OUTPUT:stdout',
    ]));
    // none of them is one the 4.x check refuses
    expect(build(V4, everything)).not.toThrow();
  });
});

describe('node_exporter 1.12.1 collectors, 1.9.1 kept for an older image', () => {
  test('the collectors 1.10–1.12 added are known', () => {
    for (const c of ['bcachefs', 'dmmultipath', 'kernel_hung', 'nvmesubsystem', 'pcidevice', 'swap']) expect(KNOWN_COLLECTORS).toContain(c);
    expect(exporterArgs({ port: 9100, listen: 'node-ip', enableCollectors: ['swap'] })).toContain('--collector.swap');
  });

  test('an older image refuses them (node_exporter exits on an unknown flag)', () => {
    expect(() => new NodeExporterDaemonSet(Testing.chart(), 'ne', { image: 'quay.io/prometheus/node-exporter:v1.9.1', enableCollectors: [NodeExporterCollector.SWAP] }))
      .toThrow(/collector\(s\) swap came with node_exporter 1.10\+; the image's 1.9.1 would exit on their flags/);
    expect(() => new NodeExporterDaemonSet(Testing.chart(), 'ne', { image: 'quay.io/prometheus/node-exporter:v1.12.1', enableCollectors: [NodeExporterCollector.SWAP] }))
      .not.toThrow();
  });
});
