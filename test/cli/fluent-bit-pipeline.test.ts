import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Chart, Testing } from 'cdk8s';
import * as fc from 'fast-check';
import {
  KubernetesFilterPosition, LogCollectorDaemonSet, LogCollectorDaemonSetProps, NodeContainerRuntime,
} from '../../src/constructs/log-collector-daemon-set';
import { ClassicEntry, entryValue, entryValues, findSections, parseClassicConfig, renderClassicConfig } from '../../src/fluent-bit/classic-format';
import { CONFIG_DIR, generateFluentBitConfig } from '../../src/fluent-bit/config';
import { FluentBitFilter, GrepLogicalOp } from '../../src/fluent-bit/filters';
import { FILTER_COMMON_KEYS, FILTER_PLUGIN_KEYS, INPUT_COMMON_KEYS, INPUT_PLUGIN_KEYS } from '../../src/fluent-bit/input-filter-keys';
import { FluentBitInput } from '../../src/fluent-bit/inputs';
import { isOutputKey, isOutputKeyAddedSince423, OUTPUT_PLUGIN_NAMES } from '../../src/fluent-bit/output-plugins';
import { DatadogSite, FluentBitOutput, FluentBitOutputKind, HttpOutputFormat, KafkaFormat } from '../../src/fluent-bit/outputs';
import { FluentBitMultilineParser } from '../../src/fluent-bit/parsers';
import { synthManifests, Manifest } from '../util/manifests';
import { REPO } from '../util/paths';

const LOKI = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });

/** Whether the section of `plugin` may carry `key` in fluent-bit 5.1.1 (the keys read from its sources). */
const knownFilterKey = (plugin: string, key: string) => [...FILTER_COMMON_KEYS, ...FILTER_PLUGIN_KEYS[plugin]].includes(key.toLowerCase());
const knownInputKey = (plugin: string, key: string) => [...INPUT_COMMON_KEYS, ...INPUT_PLUGIN_KEYS[plugin]].includes(key.toLowerCase());

function kv(entries: readonly ClassicEntry[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of entries) (out[e.key] ??= []).push(e.value);
  return out;
}

function expectFilterKeys(plugin: string, entries: readonly ClassicEntry[]): void {
  for (const e of entries) {
    expect([plugin, knownFilterKey(plugin, e.key) ? 'known' : e.key]).toEqual([plugin, 'known']);
  }
}

function render(filter: FluentBitFilter, alias = 'f') {
  const r = filter._render(alias, { configDir: CONFIG_DIR });
  expectFilterKeys(filter.pluginName, r.entries);
  // each rendered filter is a valid classic section
  expect(() => parseClassicConfig(renderClassicConfig([{ name: 'FILTER', entries: r.entries }]), 'main')).not.toThrow();
  return r;
}

function synth(props: Partial<LogCollectorDaemonSetProps> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [LOKI], ...props });
  return synthManifests(chart);
}

function build(props: Partial<LogCollectorDaemonSetProps>): () => void {
  return () => new LogCollectorDaemonSet(new Chart(Testing.app(), 'test'), 'logs', { outputs: [LOKI], ...props });
}

const configMap = (m: Manifest[]) => m.find((x) => x.kind === 'ConfigMap')!;
const configOf = (m: Manifest[]) => parseClassicConfig(configMap(m).data['fluent-bit.conf'], 'main');
const podSpec = (m: Manifest[]) => m.find((x) => x.kind === 'DaemonSet')!.spec.template.spec;

describe('outputs beyond the five built in', () => {
  const helpers: [string, FluentBitOutput][] = [
    ['s3', FluentBitOutput.s3({ bucket: 'my-logs', region: 'eu-west-1', roleArn: 'arn:aws:iam::123456789012:role/logs', endpoint: 'https://minio.example' })],
    ['cloudwatch_logs', FluentBitOutput.cloudWatchLogs({ region: 'eu-west-1', logGroupName: '/k8s/prod', autoCreateGroup: true, logRetentionDays: 30, roleArn: 'arn:aws:iam::1:role/x' })],
    ['kafka', FluentBitOutput.kafka({
      brokers: ['kafka-0.kafka:9092', 'kafka-1.kafka:9092'],
      topic: 'logs',
      format: KafkaFormat.JSON,
      messageKeyField: 'host',
      securityProtocol: 'SASL_SSL',
      saslMechanism: 'SCRAM-SHA-512',
      saslUsername: 'fluent',
      saslPassword: { secretName: 'kafka', key: 'password' },
      rdkafkaOptions: { 'compression.codec': 'zstd' },
    })],
    ['http', FluentBitOutput.http({
      host: 'collector.example',
      tls: true,
      uri: '/ingest',
      format: HttpOutputFormat.JSON,
      headers: { 'X-Env': 'prod' },
      httpUser: 'u',
      httpPassword: { secretName: 'http', key: 'pw' },
      secretHeader: { name: 'Authorization', value: { secretName: 'http', key: 'auth' } },
      gzip: true,
    })],
    ['splunk', FluentBitOutput.splunk({ host: 'hec.example', token: { secretName: 'splunk', key: 'token' }, index: 'k8s', sourceType: 'kube', source: 'fluent-bit' })],
    ['datadog', FluentBitOutput.datadog({ apiKey: { secretName: 'dd', key: 'api-key' }, site: DatadogSite.EU, service: 'web', source: 'kubernetes', tags: ['env:prod'] })],
  ];

  test.each(helpers)('%s: every key it writes is one fluent-bit 5.1.1 declares for the plugin, and 4.2.3 too', (plugin, output) => {
    expect(output.pluginName).toBe(plugin);
    const r = output._render(plugin, { stateDir: '/var/lib/log-collector' });
    for (const e of r.entries) expect([e.key, isOutputKey(plugin, e.key), isOutputKeyAddedSince423(plugin, e.key)]).toEqual([e.key, true, false]);
    expect(r.entries.some((e) => /secret|password|token|apikey/i.test(e.value) && !e.value.startsWith('${'))).toBe(false);
  });

  test('credentials only as env references, taken from Secrets', () => {
    const splunk = kv(FluentBitOutput.splunk({ host: 'hec.example', token: { secretName: 'splunk', key: 'token' } })._render('splunk').entries);
    expect(splunk.Splunk_Token).toEqual(['${FLB_SPLUNK_TOKEN}']);
    expect(splunk.tls).toEqual(['On']);
    const dd = FluentBitOutput.datadog({ apiKey: { secretName: 'dd', key: 'api-key' } })._render('datadog');
    expect(dd.secretEnv).toEqual([{ envName: 'FLB_DATADOG_APIKEY', secretName: 'dd', key: 'api-key' }]);
    expect(kv(dd.entries)).toMatchObject({ Host: [DatadogSite.US1], Port: ['443'], tls: ['On'], compress: ['gzip'] });
    const http = FluentBitOutput.http({ host: 'h.example', secretHeader: { name: 'Authorization', value: { secretName: 'h', key: 'auth' } }, headers: { 'X-B': '2', 'X-A': '1' } })._render('http');
    expect(kv(http.entries).Header).toEqual(['X-A 1', 'X-B 2', 'Authorization ${FLB_HTTP_HEADER}']);
    expect(kv(http.entries).Port).toEqual(['80']);
  });

  test('s3 buffers under the state directory (the root filesystem is read-only) and declares it written', () => {
    const r = FluentBitOutput.s3({ bucket: 'my-logs', region: 'eu-west-1' })._render('s3', { stateDir: '/var/lib/logs' });
    expect(kv(r.entries).store_dir).toEqual(['/var/lib/logs/s3/s3']);
    expect(r.writePaths).toEqual(['/var/lib/logs/s3/s3']);
    expect(kv(r.entries)).toMatchObject({ compression: ['gzip'], total_file_size: ['100M'], upload_timeout: ['10m'], store_dir_limit_size: ['1G'] });
    expect(() => FluentBitOutput.s3({ bucket: 'my-logs', region: 'eu-west-1', storeDirLimitSize: 'a lot' })._render('x')).toThrow(/storeDirLimitSize/);
  });

  test('misuse is refused with the fix', () => {
    expect(() => FluentBitOutput.s3({ bucket: 'My_Bucket', region: 'eu-west-1' })._render('x')).toThrow(/not an S3 bucket name/);
    expect(() => FluentBitOutput.s3({ bucket: 'logs', region: 'europe' })._render('x')).toThrow(/not an AWS region/);
    expect(() => FluentBitOutput.cloudWatchLogs({ region: 'eu-west-1', logGroupName: 'g', logRetentionDays: 7 })._render('x')).toThrow(/autoCreateGroup/);
    expect(() => FluentBitOutput.kafka({ brokers: [], topic: 't' })._render('x')).toThrow(/host:port/);
    expect(() => FluentBitOutput.kafka({ brokers: ['k:9092'], topic: 't', rdkafkaOptions: { 'sasl.password': 'x' } })._render('x')).toThrow(/saslPassword from a Secret/);
    expect(() => FluentBitOutput.http({ host: 'h', headers: { Authorization: 'Bearer x' } })._render('x')).toThrow(/secretHeader/);
    expect(() => FluentBitOutput.datadog({ apiKey: { secretName: 'dd', key: 'k' }, tags: ['a b'] })._render('x')).toThrow(/no spaces/);
  });

  test('the factories never throw: problems are collected and the collector reports them with its path', () => {
    const bad = FluentBitOutput.s3({ bucket: 'My_Bucket', region: 'europe' });
    expect(bad._problems()).toEqual([
      'bucket "My_Bucket" is not an S3 bucket name (3-63 of a-z, 0-9, \'.\', \'-\').',
      'region "europe" is not an AWS region such as \'eu-west-1\'.',
    ]);
    expect(() => new LogCollectorDaemonSet(Testing.chart(), 'logs', { outputs: [LOKI, bad] }))
      .toThrow(/outputs\[1\] \(FluentBitOutput s3\): bucket "My_Bucket" is not an S3 bucket name/);
    expect(FluentBitOutput.custom({ name: 'zig_demo' })._problems()).toHaveLength(1);
  });

  test('the pod gets each Secret-backed env var, and the ConfigMap no credential', () => {
    const m = synth({ outputs: [FluentBitOutput.splunk({ host: 'hec.example', token: { secretName: 'splunk-hec', key: 'token' } })] });
    const env = podSpec(m).containers[0].env;
    expect(env).toContainEqual({ name: 'FLB_SPLUNK_TOKEN', valueFrom: { secretKeyRef: { name: 'splunk-hec', key: 'token' } } });
    expect(entryValue(findSections(configOf(m), 'OUTPUT', 'splunk')[0], 'Splunk_Token')).toBe('${FLB_SPLUNK_TOKEN}');
  });
});

describe('FluentBitOutput.custom', () => {
  test('any plugin of 5.1.1 with its own keys; secret keys become env references', () => {
    const out = FluentBitOutput.custom({
      name: 'gelf', match: 'kube.*', options: { Gelf_Short_Message_Key: 'log', Mode: 'tcp', Host: 'graylog.example', Port: '12201' },
    });
    expect(out.kind).toBe(FluentBitOutputKind.CUSTOM);
    const r = out._render('gelf');
    expect(kv(r.entries)).toMatchObject({ Name: ['gelf'], Gelf_Short_Message_Key: ['log'], Mode: ['tcp'], Retry_Limit: ['no_limits'] });
    const azure = FluentBitOutput.custom({ name: 'azure_blob', options: { account_name: 'acct', container_name: 'logs' }, secretOptions: { shared_key: { secretName: 'az', key: 'key' } } })._render('azure');
    expect(kv(azure.entries).shared_key).toEqual(['${FLB_AZURE_SHARED_KEY}']);
    expect(azure.secretEnv).toEqual([{ envName: 'FLB_AZURE_SHARED_KEY', secretName: 'az', key: 'key' }]);
  });

  test('an output name fluent-bit 5.1 does not have is refused, with the list', () => {
    expect(() => FluentBitOutput.custom({ name: 'elasticsearch' })._render('x')).toThrow(/no output plugin "elasticsearch" \(did you mean es\b/);
    expect(() => FluentBitOutput.custom({ name: 'kinesis' })._render('x')).toThrow(/did you mean kinesis_firehose, kinesis_streams/);
    expect(() => FluentBitOutput.custom({ name: 'zig_demo' })._render('x')).toThrow(/no output plugin/);
  });

  test('a key the plugin does not declare, or one the typed options own, is refused', () => {
    expect(() => FluentBitOutput.custom({ name: 'gelf', options: { Gelf_Short_Message: 'log' } })._render('x')).toThrow(/no key "Gelf_Short_Message"/);
    expect(() => FluentBitOutput.custom({ name: 'gelf', options: { Match: 'x' } })._render('x')).toThrow(/typed options/);
    expect(() => FluentBitOutput.custom({ name: 'gelf', options: { mode: 'tcp' }, secretOptions: { Mode: { secretName: 's', key: 'k' } } })._render('x')).toThrow(/given twice/);
    expect(() => FluentBitOutput.custom({ name: 'gelf', options: { mode: 'a\nb' } })._render('x')).toThrow(/line break/);
  });

  test('common keys (tls, net.*) and declared prefixes (kafka rdkafka.*) pass', () => {
    expect(isOutputKey('gelf', 'tls.verify')).toBe(true);
    expect(isOutputKey('gelf', 'net.keepalive')).toBe(true);
    expect(isOutputKey('kafka', 'rdkafka.queue.buffering.max.ms')).toBe(true);
    expect(isOutputKey('gelf', 'rdkafka.x')).toBe(false);
    expect(isOutputKey('kafka', 'rdkafka.')).toBe(false);
  });

  test('the plugin list holds the five built in and the helpers', () => {
    for (const n of ['loki', 'es', 'opensearch', 'forward', 'stdout', 's3', 'cloudwatch_logs', 'kafka', 'http', 'splunk', 'datadog', 'kafka-rest']) {
      expect(OUTPUT_PLUGIN_NAMES).toContain(n);
    }
  });
});

describe('filters', () => {
  test('grep: regex and exclude lines in order; logical_op only when asked', () => {
    const r = render(FluentBitFilter.grep({
      regex: [{ key: "$kubernetes['namespace_name']", regex: '^(prod|staging)$' }],
      exclude: [{ key: 'log', regex: 'GET /healthz' }],
    }));
    expect(kv(r.entries)).toEqual({
      Name: ['grep'],
      Alias: ['f'],
      Match: ['kube.*'],
      Regex: ["$kubernetes['namespace_name'] ^(prod|staging)$"],
      Exclude: ['log GET /healthz'],
    });
    expect(kv(render(FluentBitFilter.grep({ exclude: [{ key: 'log', regex: 'a' }, { key: 'log', regex: 'b' }], logicalOp: GrepLogicalOp.OR })).entries).Logical_Op).toEqual(['OR']);
    expect(() => FluentBitFilter.grep({ regex: [{ key: 'a', regex: 'x' }], exclude: [{ key: 'b', regex: 'y' }], logicalOp: GrepLogicalOp.AND })).toThrow(/not both/);
    expect(() => FluentBitFilter.grep({})).toThrow(/at least one/);
    expect(() => FluentBitFilter.grep({ regex: [{ key: 'my key', regex: 'x' }] })).toThrow(/top-level key/);
  });

  test('modify, nest, lift, record_modifier, throttle render their keys', () => {
    expect(kv(render(FluentBitFilter.modify({ set: { cluster: 'prod eu' }, remove: ['stream'], rename: { log: 'message' } })).entries))
      .toMatchObject({ Set: ['cluster prod eu'], Remove: ['stream'], Rename: ['log message'] });
    expect(kv(render(FluentBitFilter.nest({ wildcards: ['pod_*'], nestUnder: 'pod', removePrefix: 'pod_' })).entries))
      .toMatchObject({ Operation: ['nest'], Wildcard: ['pod_*'], Nest_under: ['pod'], Remove_prefix: ['pod_'] });
    expect(kv(render(FluentBitFilter.lift({ nestedUnder: 'kubernetes', addPrefix: 'k8s_' })).entries))
      .toMatchObject({ Operation: ['lift'], Nested_under: ['kubernetes'], Add_prefix: ['k8s_'] });
    expect(kv(render(FluentBitFilter.recordModifier({ records: { cluster: 'prod' }, removeKeys: ['stream'] })).entries))
      .toMatchObject({ Record: ['cluster prod'], Remove_key: ['stream'] });
    expect(kv(render(FluentBitFilter.throttle({ rate: 1000 })).entries)).toMatchObject({ Rate: ['1000'], Window: ['5'], Interval: ['1s'], Print_Status: ['Off'] });
    expect(() => FluentBitFilter.modify({})).toThrow(/at least one/);
    expect(() => FluentBitFilter.recordModifier({ removeKeys: ['a'], allowlistKeys: ['b'] })).toThrow(/exclude each other/);
    expect(() => FluentBitFilter.throttle({ rate: 0 })).toThrow(/positive/);
  });

  test('rewrite_tag: rules, an emitter buffered on the filesystem; a kube. tag or a spaced regex is refused', () => {
    const r = render(FluentBitFilter.rewriteTag({ rules: [{ key: "$kubernetes['namespace_name']", regex: '^(payments)$', newTag: 'audit.$1', keep: true }] }), 'rt');
    expect(kv(r.entries)).toMatchObject({ 'Rule': ["$kubernetes['namespace_name'] ^(payments)$ audit.$1 true"], 'Emitter_Name': ['rt_emitter'], 'Emitter_Storage.type': ['filesystem'] });
    expect(r.extraAliases).toEqual(['rt_emitter']);
    expect(() => FluentBitFilter.rewriteTag({ rules: [{ key: '$log', regex: 'a b', newTag: 'x' }] })).toThrow(/without spaces/);
    expect(() => FluentBitFilter.rewriteTag({ rules: [{ key: '$log', regex: 'a', newTag: 'kube.x' }] })).toThrow(/kubernetes filter again/);
    expect(() => FluentBitFilter.rewriteTag({ rules: [{ key: 'log', regex: 'a', newTag: 'x' }] })).toThrow(/record accessor/);
  });

  test('lua: inline and file scripts go into the ConfigMap; the named function must exist', () => {
    const code = 'function add_env(tag, ts, record)\n  record["env"] = "prod"\n  return 1, ts, record\nend';
    const r = render(FluentBitFilter.luaInline({ code, call: 'add_env' }), 'lua');
    expect(kv(r.entries)).toMatchObject({ script: [`${CONFIG_DIR}/lua.lua`], call: ['add_env'], time_as_table: ['Off'] });
    expect(r.files).toEqual({ 'lua.lua': code + '\n' });
    expect(() => FluentBitFilter.luaInline({ code, call: 'other' })).toThrow(/defines no global function other/);
    expect(() => FluentBitFilter.luaInline({ code, call: 'a-b' })).toThrow(/Lua function name/);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lua-'));
    const file = path.join(dir, 'enrich.lua');
    fs.writeFileSync(file, 'local M = {}\nenrich = function(tag, ts, record) return 0, ts, record end\n');
    expect(render(FluentBitFilter.luaFile({ file, call: 'enrich' }), 'enrich').files['enrich.lua']).toContain('enrich = function');
    fs.rmSync(dir, { recursive: true });
  });

  test('lua: a missing script file is an error at synthesis', () => {
    expect(() => FluentBitFilter.luaFile({ file: 'no/such/script.lua', call: 'cb' })).toThrow(/cannot read the Lua script "no\/such\/script.lua" \(ENOENT\)/);
  });

  test('multiline: built-in and custom parsers; an unknown one fails at synthesis', () => {
    const r = render(FluentBitFilter.multiline({ parsers: ['java', 'python'] }), 'ml');
    expect(kv(r.entries)).toMatchObject({ 'multiline.key_content': ['log'], 'multiline.parser': ['java, python'], 'Emitter_Name': ['ml_emitter'] });
    expect(build({ filters: [FluentBitFilter.multiline({ parsers: ['java-custom'] })] })).toThrow(/'java-custom' is no multiline parser/);
    const custom = FluentBitMultilineParser.regex({ name: 'java-custom', rules: [{ state: 'start_state', regex: '/^\\d/', nextState: 'cont' }, { state: 'cont', regex: '/^\\s/', nextState: 'cont' }] });
    expect(build({ multilineParsers: [custom], filters: [FluentBitFilter.multiline({ parsers: ['java-custom'] })] })).not.toThrow();
  });
});

describe('pipeline order, exclusion and the kubernetes filter', () => {
  const grep = FluentBitFilter.grep({ exclude: [{ key: 'log', regex: 'healthz' }] });

  test('user filters after the kubernetes filter by default, before it when asked', () => {
    const names = (m: Manifest[]) => findSections(configOf(m), 'FILTER').map((s) => entryValue(s, 'Alias'));
    expect(names(synth({ filters: [grep, FluentBitFilter.throttle({ rate: 100 })] }))).toEqual(['kubernetes_metadata', 'grep', 'throttle']);
    expect(names(synth({ filters: [grep], kubernetesFilter: { position: KubernetesFilterPosition.AFTER_USER_FILTERS } }))).toEqual(['grep', 'kubernetes_metadata']);
    expect(names(synth({ filters: [grep, grep] }))).toEqual(['kubernetes_metadata', 'grep_0', 'grep_1']);
  });

  test('namespaces and pods are excluded by the tail input (before any filter), with the collector itself', () => {
    const m = synth({
      excludeNamespaces: ['kube-system'],
      excludePods: [{ namespace: 'istio-system', podNamePrefix: 'istio-ingressgateway-' }],
      excludeContainerLogPaths: ['/var/log/containers/*_default_sidecar-*.log'],
    });
    const tail = findSections(configOf(m), 'INPUT', 'tail')[0];
    expect(entryValue(tail, 'Exclude_Path')!.split(',')).toEqual([
      '/var/log/containers/log-collector-*_observability_*.log',
      '/var/log/containers/*_kube-system_*.log',
      '/var/log/containers/istio-ingressgateway-*_istio-system_*.log',
      '/var/log/containers/*_default_sidecar-*.log',
    ]);
    expect(build({ excludeNamespaces: ['Kube_System'] })).toThrow(/excludeNamespaces "Kube_System" is not a namespace name/);
    expect(build({ excludeContainerLogPaths: ['/var/log/pods/*'] })).toThrow(/under \/var\/log\/containers\//);
  });

  test('the kubernetes filter options land on their keys', () => {
    const k8s = (m: Manifest[]) => findSections(configOf(m), 'FILTER', 'kubernetes')[0];
    const f = k8s(synth({ kubernetesFilter: { mergeLog: false, keepLog: true, allowParserAnnotation: false, allowExcludeAnnotation: false, bufferSize: '256k', labels: false, annotations: false } }));
    expect(Object.fromEntries(['Merge_Log', 'Keep_Log', 'K8S-Logging.Parser', 'K8S-Logging.Exclude', 'Buffer_Size', 'Labels', 'Annotations'].map((k) => [k, entryValue(f, k)])))
      .toEqual({ 'Merge_Log': 'Off', 'Keep_Log': 'On', 'K8S-Logging.Parser': 'Off', 'K8S-Logging.Exclude': 'Off', 'Buffer_Size': '256k', 'Labels': 'Off', 'Annotations': 'Off' });
    expectFilterKeys('kubernetes', f.entries);
    expect(entryValue(k8s(synth({ useKubelet: true, kubernetesTlsVerify: true })), 'Buffer_Size')).toBe('0');
    expect(entryValue(k8s(synth({ useKubelet: true, kubernetesTlsVerify: true, kubernetesFilter: { bufferSize: '8M' } })), 'Buffer_Size')).toBe('8M');
    expect(entryValue(k8s(synth()), 'Buffer_Size')).toBeUndefined();
    expect(build({ kubernetesFilter: { bufferSize: 'lots' } })).toThrow(/kubernetesFilter.bufferSize/);
  });

  test('without the new props the config is what it was (no new keys)', () => {
    const filters = findSections(configOf(synth()), 'FILTER');
    expect(filters.map((f) => f.entries.map((e) => e.key))).toEqual([[
      'Name', 'Alias', 'Match', 'Kube_URL', 'Kube_CA_File', 'Kube_Token_File', 'Kube_Tag_Prefix', 'DNS_Retries', 'DNS_Wait_Time', 'Merge_Log', 'Keep_Log',
      'K8S-Logging.Parser', 'K8S-Logging.Exclude',
    ]]);
  });

  test('a Lua script is a file of the ConfigMap, named by the filter, and changes the pod checksum', () => {
    const lua = (v: string) => FluentBitFilter.luaInline({ alias: 'add-env', code: `function cb(tag, ts, r) r["env"] = "${v}" return 1, ts, r end`, call: 'cb' });
    const a = synth({ filters: [lua('a')] });
    expect(Object.keys(configMap(a).data).sort()).toEqual(['add-env.lua', 'fluent-bit.conf']);
    expect(entryValue(findSections(configOf(a), 'FILTER', 'lua')[0], 'script')).toBe(`${CONFIG_DIR}/add-env.lua`);
    const checksum = (m: Manifest[]) => m.find((x) => x.kind === 'DaemonSet')!.spec.template.metadata.annotations['checksum/config'];
    expect(checksum(a)).not.toBe(checksum(synth({ filters: [lua('b')] })));
  });

  test('an alias used twice across inputs, filters and outputs is refused', () => {
    expect(build({ filters: [FluentBitFilter.grep({ alias: 'loki', regex: [{ key: 'log', regex: 'x' }] })] })).toThrow(/alias 'loki' is used twice/);
    expect(build({ filters: [FluentBitFilter.rewriteTag({ alias: 'rt', rules: [{ key: '$log', regex: 'x', newTag: 'y' }] }), FluentBitFilter.grep({ alias: 'rt_emitter', regex: [{ key: 'log', regex: 'x' }] })] }))
      .toThrow(/alias 'rt_emitter' is used twice/);
  });
});

describe('extra inputs', () => {
  test('tail: host files under their tag, offsets in the state directory, buffered on the filesystem', () => {
    const m = synth({ inputs: [FluentBitInput.tail({ tag: 'host.audit', paths: ['/var/log/audit/audit.log'], pathKey: 'file' })] });
    const tail = findSections(configOf(m), 'INPUT', 'tail').find((s) => entryValue(s, 'Alias') === 'tail_0')!;
    for (const e of tail.entries) expect([e.key, knownInputKey('tail', e.key)]).toEqual([e.key, true]);
    expect(Object.fromEntries(['Tag', 'Path', 'DB', 'storage.type', 'Path_Key'].map((k) => [k, entryValue(tail, k)]))).toEqual({
      'Tag': 'host.audit', 'Path': '/var/log/audit/audit.log', 'DB': '/var/lib/log-collector/tail_0.db', 'storage.type': 'filesystem', 'Path_Key': 'file',
    });
    // /var/log is mounted already: no extra volume
    expect(podSpec(m).volumes.map((v: Manifest) => v.name)).not.toContainEqual(expect.stringMatching(/^input-/));
  });

  test('tail outside /var/log mounts the directory read-only; the host root is refused', () => {
    const m = synth({ inputs: [FluentBitInput.tail({ tag: 'app.legacy', paths: ['/opt/legacy/logs/*.log'] })] });
    const vol = podSpec(m).volumes.find((v: Manifest) => v.name === 'input-opt-legacy-logs');
    expect(vol.hostPath).toEqual({ path: '/opt/legacy/logs', type: 'Directory' });
    expect(podSpec(m).containers[0].volumeMounts).toContainEqual(expect.objectContaining({ name: 'input-opt-legacy-logs', mountPath: '/opt/legacy/logs', readOnly: true }));
    expect(build({ inputs: [FluentBitInput.tail({ tag: 'x', paths: ['/*.log'] })] })).toThrow(/the host root/);
  });

  test('systemd: more units under their own tag, /etc/machine-id mounted', () => {
    const m = synth({ inputs: [FluentBitInput.systemd({ tag: 'host.ssh', units: ['sshd.service'] })] });
    const sd = findSections(configOf(m), 'INPUT', 'systemd')[0];
    for (const e of sd.entries) expect([e.key, knownInputKey('systemd', e.key)]).toEqual([e.key, true]);
    expect(entryValues(sd, 'Systemd_Filter')).toEqual(['_SYSTEMD_UNIT=sshd.service']);
    expect(podSpec(m).volumes.map((v: Manifest) => v.name)).toContain('machine-id');
  });

  test('misuse: kube. tags, the container logs twice, unknown parsers', () => {
    expect(() => FluentBitInput.tail({ tag: 'kube.extra', paths: ['/var/log/x.log'] })).toThrow(/starts with kube\./);
    expect(() => FluentBitInput.tail({ tag: 'x', paths: ['/var/log/containers/*.log'] })).toThrow(/twice/);
    expect(() => FluentBitInput.tail({ tag: 'x', paths: ['var/log/x.log'] })).toThrow(/absolute/);
    expect(build({ inputs: [FluentBitInput.tail({ tag: 'x', paths: ['/var/log/x.log'], parser: 'nope' })] })).toThrow(/'nope' is no parser/);
    expect(build({ inputs: [FluentBitInput.tail({ tag: 'x', paths: ['/var/log/x.log'], parser: 'json', multilineParsers: ['go'] })] })).not.toThrow();
  });

  test('with docker, /var/lib/docker/containers counts as mounted', () => {
    const m = synth({ containerRuntime: NodeContainerRuntime.DOCKER, inputs: [FluentBitInput.tail({ tag: 'x', paths: ['/var/lib/docker/containers/*/*.log'] })] });
    expect(podSpec(m).volumes.map((v: Manifest) => v.name)).not.toContainEqual(expect.stringMatching(/^input-/));
  });
});

test('generateFluentBitConfig: the S3 store_dir is among the written paths', () => {
  const c = generateFluentBitConfig({
    stateDir: '/var/lib/lc', collectorName: 'lc', collectorNamespace: 'o', outputs: [FluentBitOutput.s3({ bucket: 'b-logs', region: 'us-east-1' })],
  });
  expect(c.writePaths).toContain('/var/lib/lc/s3/s3');
});

describe('the log-collector example uses the pipeline props', () => {
  test('kube-system is excluded at the tail input; health-check lines are dropped after enrichment', () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { buildApp } = require('../../examples/log-collector/main');
    const m = synthManifests(buildApp(fs.mkdtempSync(path.join(os.tmpdir(), 'lc-example-'))));
    const config = configOf(m);
    expect(entryValue(findSections(config, 'INPUT', 'tail')[0], 'Exclude_Path')).toContain('/var/log/containers/*_kube-system_*.log');
    expect(findSections(config, 'FILTER').map((s) => entryValue(s, 'Name'))).toEqual(['kubernetes', 'grep', 'modify']);
  });
});

test('every example imports the package by its name, never the sources', () => {
  const root = path.join(REPO, 'examples');
  const mains = fs.readdirSync(root).filter((d) => fs.existsSync(path.join(root, d, 'main.ts')));
  expect(mains.length).toBeGreaterThanOrEqual(5);
  for (const name of mains) {
    const text = fs.readFileSync(path.join(root, name, 'main.ts'), 'utf8');
    expect([name, /from '\.\.\/\.\.\/src/.test(text)]).toEqual([name, false]);
    expect([name, text.includes("from 'cdk8s-node-agents'")]).toEqual([name, true]);
  }
});

test('any mix of filters in any order: the config parses, aliases are unique, the order is kept around the kubernetes filter (fast-check)', () => {
  const pool: (() => FluentBitFilter)[] = [
    () => FluentBitFilter.grep({ exclude: [{ key: 'log', regex: 'healthz' }] }),
    () => FluentBitFilter.modify({ set: { cluster: 'prod' } }),
    () => FluentBitFilter.lift({ nestedUnder: 'kubernetes', addPrefix: 'k8s_' }),
    () => FluentBitFilter.rewriteTag({ rules: [{ key: '$log', regex: 'audit', newTag: 'audit.log' }] }),
    () => FluentBitFilter.throttle({ rate: 100 }),
    () => FluentBitFilter.luaInline({ code: 'function cb(t, ts, r) return 0, ts, r end', call: 'cb' }),
    () => FluentBitFilter.multiline({ parsers: ['java'] }),
  ];
  fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: 6 }), fc.boolean(), (picks, after) => {
    const filters = picks.map((i) => pool[i]());
    const c = generateFluentBitConfig({
      stateDir: '/var/lib/lc',
      collectorName: 'lc',
      collectorNamespace: 'o',
      outputs: [LOKI],
      filters,
      kubernetesFilterPosition: after ? 'after-user-filters' : 'before-user-filters',
    });
    const parsed = parseClassicConfig(c.text, 'main');
    const aliases = parsed.sections.map((sec) => entryValue(sec, 'Alias')).filter((a) => a !== undefined);
    expect(new Set(aliases).size).toBe(aliases.length);
    const names = findSections(parsed, 'FILTER').map((sec) => entryValue(sec, 'Name'));
    const users = filters.map((f) => f.pluginName);
    expect(names).toEqual(after ? [...users, 'kubernetes'] : ['kubernetes', ...users]);
    // one ConfigMap file per Lua filter
    expect(Object.keys(c.extraFiles)).toHaveLength(users.filter((n) => n === 'lua').length);
  }), { seed: 14, numRuns: 150 });
});
