/**
 * Issue 38's fluent-bit cases that the types did not reach: a typed parser filter and OpenTelemetry
 * output, credentials in plain custom options, basic auth without a user, an output whose match no
 * tag meets, parser regexes without named groups, extraConfig tail paths outside every mount, and the
 * fuzz classes that reached the renderer's last-resort check. Each is refused at synthesis with the
 * construct or factory, the prop, the value and the fix.
 */
import { Chart, Testing } from 'cdk8s';
import { AgentVolume } from '../../src/agent/options';
import { LogCollectorDaemonSet, LogCollectorDaemonSetProps } from '../../src/constructs/log-collector-daemon-set';
import { ClassicEntry, parseClassicConfig, renderClassicConfig } from '../../src/fluent-bit/classic-format';
import { CONFIG_DIR } from '../../src/fluent-bit/config';
import { FluentBitFilter } from '../../src/fluent-bit/filters';
import { FILTER_COMMON_KEYS, FILTER_PLUGIN_KEYS } from '../../src/fluent-bit/input-filter-keys';
import { FluentBitInput } from '../../src/fluent-bit/inputs';
import { isOutputKey } from '../../src/fluent-bit/output-plugins';
import { FluentBitOutput, OpenTelemetryCompression } from '../../src/fluent-bit/outputs';
import { FluentBitParser } from '../../src/fluent-bit/parsers';
import { patternsOverlap, tagMatches } from '../../src/fluent-bit/tag-routing';
import { ValidationError } from '../../src/validation/errors';
import { synthManifests, Manifest } from '../util/manifests';

const STDOUT = FluentBitOutput.stdout();
const secret = { secretName: 'otel-auth', key: 'password' };

function synth(props: Partial<LogCollectorDaemonSetProps> = {}): Manifest[] {
  const chart = new Chart(Testing.app(), 'test');
  new LogCollectorDaemonSet(chart, 'logs', { outputs: [STDOUT], ...props });
  return synthManifests(chart);
}

function build(props: Partial<LogCollectorDaemonSetProps>): () => void {
  return () => new LogCollectorDaemonSet(new Chart(Testing.app(), 'test'), 'logs', { outputs: [STDOUT], ...props });
}

function kv(entries: readonly ClassicEntry[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const e of entries) (out[e.key] ??= []).push(e.value);
  return out;
}

const configText = (m: Manifest[]) => m.find((x) => x.kind === 'ConfigMap')!.data['fluent-bit.conf'] as string;

/** What `fn` throws, asserting it is a ValidationError. */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error('did not throw');
}

describe('FluentBitFilter.parser (plugins/filter_parser/filter_parser.c config_map)', () => {
  test('renders Key_Name, one Parser line per parser in order, Reserve_Data on by default; every key is one the plugin declares', () => {
    const r = FluentBitFilter.parser({ keyName: 'log', parsers: ['app', 'json'] })._render('p', { configDir: CONFIG_DIR });
    expect(kv(r.entries)).toEqual({
      Name: ['parser'], Alias: ['p'], Match: ['kube.*'], Key_Name: ['log'], Parser: ['app', 'json'], Preserve_Key: ['Off'], Reserve_Data: ['On'],
    });
    for (const e of r.entries) expect([...FILTER_COMMON_KEYS, ...FILTER_PLUGIN_KEYS.parser]).toContain(e.key.toLowerCase());
    expect(r.parsers).toEqual(['app', 'json']);
  });

  test('its parsers are checked against the stock and custom ones at synthesis', () => {
    const app = FluentBitParser.regex({ name: 'app', regex: '^(?<level>[A-Z]+) (?<message>.*)$' });
    expect(() => synth({ parsers: [app], filters: [FluentBitFilter.parser({ keyName: 'log', parsers: ['app', 'json'] })] })).not.toThrow();
    expect(build({ filters: [FluentBitFilter.parser({ keyName: 'log', parsers: ['ap'] })] }))
      .toThrow("LogCollectorDaemonSet test/logs: filters 'parser' parsers: 'ap' is no parser fluent-bit knows");
  });

  test.each([
    [{ keyName: 'log', parsers: [] }, 'FluentBitFilter.parser: parsers is empty'],
    [{ keyName: 'the log', parsers: ['json'] }, 'keyName key "the log" must be a top-level key'],
    [{ keyName: 'log', parsers: [' json'] }, 'FluentBitFilter.parser: parsers[0] " json" is not a parser name'],
  ])('refuses %j', (options, message) => {
    expect(refusal(() => FluentBitFilter.parser(options))).toContain(message);
  });
});

describe('FluentBitOutput.openTelemetry (plugins/out_opentelemetry/opentelemetry.c config_map)', () => {
  test('OTLP/HTTP on 4318 by default, the logs URI, headers, basic auth from a Secret; every key one the plugin takes', () => {
    const r = FluentBitOutput.openTelemetry({
      host: 'otel-collector.observability.svc',
      headers: { 'X-Scope-OrgID': 'team-a' },
      httpUser: 'fb',
      httpPassword: secret,
      compress: OpenTelemetryCompression.GZIP,
      logsBodyKey: '$log',
    })._render('otel');
    expect(kv(r.entries)).toMatchObject({
      Name: ['opentelemetry'],
      Host: ['otel-collector.observability.svc'],
      Port: ['4318'],
      logs_uri: ['/v1/logs'],
      tls: ['Off'],
      Header: ['X-Scope-OrgID team-a'],
      HTTP_User: ['fb'],
      HTTP_Passwd: ['${FLB_OTEL_HTTP_PASSWD}'],
      compress: ['gzip'],
      logs_body_key: ['$log'],
    });
    for (const e of r.entries) expect([e.key, isOutputKey('opentelemetry', e.key)]).toEqual([e.key, true]);
    expect(r.secretEnv).toEqual([{ envName: 'FLB_OTEL_HTTP_PASSWD', secretName: 'otel-auth', key: 'password' }]);
  });

  test('gRPC: 4317 by default and grpc On (opentelemetry_conf.c turns HTTP/2 on with gRPC)', () => {
    const r = FluentBitOutput.openTelemetry({ host: 'otel', grpc: true, tls: true })._render('otel');
    expect(kv(r.entries)).toMatchObject({ 'Port': ['4317'], 'grpc': ['On'], 'tls': ['On'], 'tls.verify': ['On'] });
    expect(kv(r.entries).logs_uri).toBeUndefined();
  });

  test.each([
    [{ host: 'otel', headers: { Authorization: 'Bearer x' } }, 'the Authorization header is a credential; give it as secretHeader'],
    [{ host: 'otel', logsUri: 'v1/logs' }, 'logsUri "v1/logs" must be a path starting with /'],
    [{ host: 'otel', grpc: true, logsUri: '/v1/logs' }, 'logsUri is the OTLP/HTTP path; with grpc the plugin posts to grpc_logs_uri'],
    [{ host: 'otel', httpPassword: secret }, 'httpPassword is set without httpUser'],
  ])('refuses %j', (options, message) => {
    expect(build({ outputs: [FluentBitOutput.openTelemetry(options)] })).toThrow(message);
  });
});

describe('basic auth without a user sends none (out_es es.c, out_opensearch, out_loki, out_http, out_opentelemetry: auth only when http_user is set)', () => {
  test.each([
    ['elasticsearch', FluentBitOutput.elasticsearch({ host: 'es', httpPassword: secret })],
    ['openSearch', FluentBitOutput.openSearch({ host: 'os', httpPassword: secret })],
    ['loki', FluentBitOutput.loki({ host: 'loki', httpPassword: secret })],
    ['http', FluentBitOutput.http({ host: 'h', httpPassword: secret })],
  ])('%s: httpPassword without httpUser is refused, naming the output and the fix', (_name, output) => {
    expect(build({ outputs: [output] })).toThrow(/outputs\[0\] \(FluentBitOutput \w+\): httpPassword is set without httpUser: .* would send no credentials; set httpUser/);
  });
  test('with a user, accepted', () => {
    expect(build({ outputs: [FluentBitOutput.elasticsearch({ host: 'es', httpUser: 'fb', httpPassword: secret })] })).not.toThrow();
  });
});

describe('credentials in plain custom options (they would land in the ConfigMap)', () => {
  test.each([
    ['http_passwd', 'http', { http_passwd: 'hunter2' }],
    ['the datadog API key', 'datadog', { apikey: 'abc' }],
    ['a librdkafka password', 'kafka', { 'brokers': 'b:9092', 'topics': 't', 'rdkafka.sasl.password': 'p' }],
    ['tls.key_passwd', 'http', { 'tls.key_passwd': 'p' }],
    ['an Authorization header', 'http', { header: 'Authorization Bearer abc' }],
  ])('%s is refused, pointing to secretOptions', (_what, name, options) => {
    const key = Object.keys(options).find((k) => /passw|apikey|header/.test(k))!;
    expect(build({ outputs: [FluentBitOutput.custom({ name, options })] }))
      .toThrow(new RegExp(`outputs\\[0\\] \\(FluentBitOutput custom\\): options key "${key.replace(/\./g, '\\.')}" holds a credential.*secretOptions`));
  });
  test('the same keys from secretOptions are accepted', () => {
    expect(build({ outputs: [FluentBitOutput.custom({ name: 'http', options: { host: 'h' }, secretOptions: { http_passwd: secret }, match: '*' })] })).not.toThrow();
  });
});

describe('an output match that no tag meets (src/flb_router.c router_match: `*` matches any run of characters, the rest literally)', () => {
  // Ported from the router's semantics: flb_router_match("kube.var.log.containers.a.log", "kube.*") etc.
  test.each([
    ['kube.var.log.containers.a.log', 'kube.*', true], ['kube.a', 'kube.a', true], ['kube.a', 'kube', false], ['host.kubelet.service', '*.service', true],
    ['a.b.c', 'a.*.c', true], ['a.c', 'a.*.c', false], ['abc', '*', true], ['abc', 'a*b*c', true], ['ab', 'a*b*c', false],
  ])('tagMatches(%p, %p) is %p', (tag, pattern, expected) => {
    expect(tagMatches(pattern, tag)).toBe(expected);
  });
  test.each([
    ['kube.*', 'kube.*', true], ['kube.*', '*', true], ['kube.*', 'host.*', false], ['app.*', 'app.audit', true], ['*.log', 'kube.*', true],
    ['a*', '*b', true], ['ab', 'a*c', false],
  ])('patternsOverlap(%p, %p) is %p', (a, b, expected) => {
    expect(patternsOverlap(a, b)).toBe(expected);
    expect(patternsOverlap(b, a)).toBe(expected);
  });

  test('a typed output matching no tag is refused with the tags that exist', () => {
    expect(build({ outputs: [FluentBitOutput.stdout({ match: 'app.*' })] }))
      .toThrow('outputs[0] (FluentBitOutput stdout): match "app.*" matches no tag the collector\'s inputs give (kube.*); '
        + 'fluent-bit would route nothing to it. Match one of them');
  });
  test('an extraConfig output matching no tag is refused with its line', () => {
    expect(build({ extraConfig: '[OUTPUT]\n    Name stdout\n    Match applogs' }))
      .toThrow('extraConfig [OUTPUT] at line 1: Match "applogs" matches no tag the collector\'s inputs give (kube.*)');
  });
  test('tags of extra inputs, systemd, rewrite_tag rules and extraConfig inputs count; a forward input can bring any tag', () => {
    expect(build({ systemdInput: true, outputs: [FluentBitOutput.stdout({ match: 'host.*' })] })).not.toThrow();
    expect(build({ inputs: [FluentBitInput.tail({ tag: 'app.audit', paths: ['/var/log/audit.log'] })], outputs: [FluentBitOutput.stdout({ match: 'app.*' })] })).not.toThrow();
    expect(build({
      filters: [FluentBitFilter.rewriteTag({ rules: [{ key: "$kubernetes['namespace_name']", regex: '^(pay.*)$', newTag: 'audit.$1' }] })],
      outputs: [STDOUT, FluentBitOutput.stdout({ match: 'audit.payments' })],
    })).not.toThrow();
    expect(build({ extraConfig: '[INPUT]\n    Name cpu\n    Tag metrics.cpu\n[OUTPUT]\n    Name stdout\n    Match metrics.*' })).not.toThrow();
    expect(build({ forwardInputPort: 24224, outputs: [FluentBitOutput.stdout({ match: 'anything.*' })] })).not.toThrow();
  });
});

describe('parser regexes (src/flb_parser_regex.c flb_parser_regex_do: the fields are the named groups)', () => {
  test('a regex without a named group is refused: it would never parse a line (the 5.1.1 binary passes every record through unparsed)', () => {
    expect(refusal(() => FluentBitParser.regex({ name: 'app', regex: '^([A-Z]+) (.*)$' })))
      .toContain('FluentBitParser.regex: parser "app": regex "^([A-Z]+) (.*)$" has no named group');
  });
  test('a timeKey naming no group is refused, with the groups there are', () => {
    expect(refusal(() => FluentBitParser.regex({ name: 'app', regex: '^(?<ts>[^ ]+) (?<message>.*)$', timeKey: 'time', timeFormat: '%Y' })))
      .toContain('timeKey "time" names no group of the regex (its groups: ts, message)');
  });
  test('named groups in either Onigmo syntax are found', () => {
    expect(() => FluentBitParser.regex({ name: 'app', regex: "^(?'time'[^ ]+) (?<message>.*)$", timeKey: 'time', timeFormat: '%Y' })).not.toThrow();
    expect(() => FluentBitParser.regex({ name: 'app', regex: '/^(?<time>[^ ]+) (?<msg>.*)$/', timeKey: 'time', timeFormat: '%Y' })).not.toThrow();
  });
});

describe('extraConfig tail paths outside every mount (the container sees only its mounts: fluent-bit would find no file)', () => {
  test('a Path under no mount is refused with its line and the fix', () => {
    expect(build({ extraConfig: '[INPUT]\n    Name tail\n    Tag app\n    Path /opt/app/logs/*.log\n[OUTPUT]\n    Name stdout\n    Match app' }))
      .toThrow('extraConfig [INPUT] at line 1: tail Path "/opt/app/logs/*.log" (line 4) lies under no mount of the collector');
  });
  test('paths under /var/log, a typed input\'s directory or a mount of `mounts` are accepted', () => {
    const out = '\n[OUTPUT]\n    Name stdout\n    Match app';
    expect(build({ extraConfig: '[INPUT]\n    Name tail\n    Tag app\n    Path /var/log/app/*.log' + out })).not.toThrow();
    expect(build({
      inputs: [FluentBitInput.tail({ tag: 'host.app', paths: ['/opt/app/logs/a.log'] })],
      extraConfig: '[INPUT]\n    Name tail\n    Tag app\n    Path /opt/app/logs/b.log' + out,
    })).not.toThrow();
    expect(build({
      volumes: [AgentVolume.emptyDir('applogs')],
      mounts: [{ volume: 'applogs', mountPath: '/app-logs' }],
      extraConfig: '[INPUT]\n    Name tail\n    Tag app\n    Path /app-logs/*.log,/var/log/x.log' + out,
    })).not.toThrow();
  });
});

describe('fuzz classes refused at the factory, naming it and the prop (not by the renderer\'s last-resort check)', () => {
  test('a custom output plugin named constructor is refused as an unknown plugin, not a TypeError', () => {
    expect(build({ outputs: [FluentBitOutput.custom({ name: 'constructor' })] })).toThrow(/outputs\[0\] \(FluentBitOutput custom\): fluent-bit 5.1 has no output plugin "constructor"/);
    expect(build({ outputs: [FluentBitOutput.custom({ name: '__proto__' })] })).toThrow(/no output plugin "__proto__"/);
  });
  test.each([
    [' value', 'leading'], ['value ', 'trailing'], ['', 'empty'], ['a\nb', 'line break'],
  ])('an HTTP header value %p (%s) is refused naming the header', (value) => {
    expect(build({ outputs: [FluentBitOutput.http({ host: 'h', headers: { 'X-Team': value } })] }))
      .toThrow(/outputs\[0\] \(FluentBitOutput http\): headers\["X-Team"\] value .* must be one non-empty line without leading or trailing whitespace/);
  });
  test.each([
    [{ parser: '' }, 'FluentBitInput.tail: parser "" is not a parser name'],
    [{ parser: 'a b' }, 'FluentBitInput.tail: parser "a b" is not a parser name'],
    [{ pathKey: '' }, 'FluentBitInput.tail: pathKey "" must be a record key'],
    [{ pathKey: 'file name' }, 'FluentBitInput.tail: pathKey "file name" must be a record key'],
  ])('tail %j is refused at the factory', (options, message) => {
    expect(refusal(() => FluentBitInput.tail({ tag: 'host.app', paths: ['/var/log/app.log'], ...options }))).toContain(message);
  });
  test.each([
    ['modify Set with a line break', () => FluentBitFilter.modify({ set: { a: 'a\nb' } }), 'FluentBitFilter.modify: Set a value "a\\nb" must be one non-empty line'],
    ['recordModifier with a line break', () => FluentBitFilter.recordModifier({ records: { a: 'a\nb' } }), 'records.a value "a\\nb" must be one non-empty line'],
    ['nest removePrefix with a trailing space', () => FluentBitFilter.nest({ wildcards: ['a'], nestUnder: 'b', removePrefix: 'a ' }), 'removePrefix key "a " must be a top-level key'],
    ['lift addPrefix with a space', () => FluentBitFilter.lift({ nestedUnder: 'k', addPrefix: 'k _' }), 'addPrefix key "k _" must be a top-level key'],
  ])('found by the fuzz: %s is refused at the factory', (_what, make, message) => {
    expect(refusal(make)).toContain(message);
  });

  test('the rendered config of every case above stays parseable', () => {
    expect(() => parseClassicConfig(renderClassicConfig([]))).not.toThrow();
    expect(configText(synth())).toContain('[OUTPUT]');
  });
});
