import { ClassicEntry } from '../../src/fluent-bit/classic-format';
import { FluentBitOutput, FluentBitOutputKind, LokiLineFormat, StdoutFormat } from '../../src/fluent-bit/outputs';

function kv(entries: readonly ClassicEntry[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of entries) {
    expect(out[e.key]).toBeUndefined(); // no key twice in an output
    out[e.key] = e.value;
  }
  return out;
}

describe('Loki', () => {
  test('defaults: port 3100, no TLS, low-cardinality labels, json lines, unlimited retries, bounded buffer', () => {
    const out = FluentBitOutput.loki({ host: 'loki-gateway.monitoring.svc' });
    expect(out.kind).toBe(FluentBitOutputKind.LOKI);
    expect(out.match).toBe('*');
    const r = out._render('loki');
    expect(kv(r.entries)).toEqual({
      'Name': 'loki',
      'Alias': 'loki',
      'Match': '*',
      'Host': 'loki-gateway.monitoring.svc',
      'Port': '3100',
      'tls': 'Off',
      'Labels': "container=$kubernetes['container_name'], job=fluent-bit, namespace=$kubernetes['namespace_name']",
      'Auto_Kubernetes_Labels': 'Off',
      'Line_Format': 'json',
      'Retry_Limit': 'no_limits',
      'storage.total_limit_size': '1G',
    });
    expect(r.secretEnv).toEqual([]);
  });

  test('every option lands on its key; secrets become env references named after the alias', () => {
    const r = FluentBitOutput.loki({
      host: 'logs-prod.grafana.net',
      port: 443,
      uri: '/loki/api/v1/push',
      tls: true,
      tlsVerify: true,
      tenantId: 'team-a',
      httpUser: '123456',
      httpPassword: { secretName: 'grafana-cloud', key: 'api-key' },
      bearerToken: { secretName: 'grafana-cloud', key: 'token' },
      labels: { job: 'k8s', cluster: 'prod' },
      autoKubernetesLabels: true,
      removeKeys: ["$kubernetes['annotations']", 'stream'],
      lineFormat: LokiLineFormat.KEY_VALUE,
      retryLimit: 8,
      storageTotalLimitSize: '2G',
      match: 'kube.*',
    })._render('grafana-cloud');
    expect(kv(r.entries)).toMatchObject({
      'Alias': 'grafana-cloud',
      'Match': 'kube.*',
      'Port': '443',
      'Uri': '/loki/api/v1/push',
      'tls': 'On',
      'tls.verify': 'On',
      'Tenant_ID': 'team-a',
      'HTTP_User': '123456',
      'HTTP_Passwd': '${FLB_GRAFANA_CLOUD_HTTP_PASSWD}',
      'Bearer_Token': '${FLB_GRAFANA_CLOUD_BEARER_TOKEN}',
      'Labels': 'cluster=prod, job=k8s',
      'Auto_Kubernetes_Labels': 'On',
      'Remove_Keys': "$kubernetes['annotations'], stream",
      'Line_Format': 'key_value',
      'Retry_Limit': '8',
      'storage.total_limit_size': '2G',
    });
    expect(r.secretEnv).toEqual([
      { envName: 'FLB_GRAFANA_CLOUD_HTTP_PASSWD', secretName: 'grafana-cloud', key: 'api-key' },
      { envName: 'FLB_GRAFANA_CLOUD_BEARER_TOKEN', secretName: 'grafana-cloud', key: 'token' },
    ]);
  });

  test.each([
    [{ 'bad-name': 'x' }],
    [{ job: 'a,b' }],
    [{ job: 'a b' }],
    [{ job: '' }],
  ])('rejects labels %p', (labels) => {
    expect(() => FluentBitOutput.loki({ host: 'l', labels })._render('loki')).toThrow(/labels\[".*"\]: the Loki label/);
  });
});

describe('Elasticsearch and OpenSearch', () => {
  test('Elasticsearch defaults: daily logstash indices, no _type, dots replaced, no tracing', () => {
    expect(kv(FluentBitOutput.elasticsearch({ host: 'es-http.elastic.svc' })._render('es').entries)).toEqual({
      'Name': 'es',
      'Alias': 'es',
      'Match': '*',
      'Host': 'es-http.elastic.svc',
      'Port': '9200',
      'tls': 'Off',
      'Logstash_Format': 'On',
      'Logstash_Prefix': 'logstash',
      'Suppress_Type_Name': 'On',
      'Replace_Dots': 'On',
      'Trace_Error': 'Off',
      'Retry_Limit': 'no_limits',
      'storage.total_limit_size': '1G',
    });
  });

  test('fixed index, basic auth and Elastic Cloud credentials', () => {
    const r = FluentBitOutput.elasticsearch({
      host: 'es',
      logstashFormat: false,
      index: 'k8s-logs',
      httpUser: 'fluent',
      httpPassword: { secretName: 'es', key: 'pw' },
      cloudId: 'deployment:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRhYmMxMjMkZGVmNDU2',
      cloudAuth: { secretName: 'es', key: 'cloud' },
      tls: true,
      tlsVerify: false,
      suppressTypeName: false,
      replaceDots: false,
      traceError: false,
    })._render('es');
    expect(kv(r.entries)).toMatchObject({
      'Logstash_Format': 'Off',
      'Index': 'k8s-logs',
      'HTTP_User': 'fluent',
      'HTTP_Passwd': '${FLB_ES_HTTP_PASSWD}',
      'Cloud_ID': 'deployment:dXMtZWFzdC0xLmF3cy5mb3VuZC5pbyRhYmMxMjMkZGVmNDU2',
      'Cloud_Auth': '${FLB_ES_CLOUD_AUTH}',
      'tls': 'On',
      'tls.verify': 'Off',
      'Suppress_Type_Name': 'Off',
      'Replace_Dots': 'Off',
      'Trace_Error': 'Off',
    });
    expect(kv(r.entries).Logstash_Prefix).toBeUndefined();
  });

  test('index together with logstashFormat is an error (it would be ignored)', () => {
    expect(() => FluentBitOutput.elasticsearch({ host: 'es', index: 'x' })._render('es')).toThrow(/index is ignored with logstashFormat/);
  });

  test('OpenSearch uses its own plugin and has no Elastic Cloud options', () => {
    expect(kv(FluentBitOutput.openSearch({ host: 'os', httpUser: 'u', httpPassword: { secretName: 'os', key: 'password' } })._render('os').entries))
      .toMatchObject({ Name: 'opensearch', HTTP_User: 'u' });
    expect(() => FluentBitOutput.openSearch({ host: 'os', cloudId: 'x' })._render('os')).toThrow(/cloudId\/cloudAuth are Elastic Cloud options/);
  });
});

describe('forward and stdout', () => {
  test('forward: port 24224, secure-forward shared key and password from Secrets', () => {
    const r = FluentBitOutput.forward({
      host: 'fluentd.logging.svc',
      sharedKey: { secretName: 'fwd', key: 'shared' },
      selfHostname: 'node',
      username: 'fb',
      password: { secretName: 'fwd', key: 'pw' },
      requireAckResponse: true,
      tls: true,
    })._render('forward');
    expect(kv(r.entries)).toMatchObject({
      'Name': 'forward',
      'Port': '24224',
      'tls': 'On',
      'tls.verify': 'On',
      'Shared_Key': '${FLB_FORWARD_SHARED_KEY}',
      'Self_Hostname': 'node',
      'Username': 'fb',
      'Password': '${FLB_FORWARD_PASSWORD}',
      'Require_ack_response': 'On',
    });
    expect(r.secretEnv.map((e) => e.envName)).toEqual(['FLB_FORWARD_SHARED_KEY', 'FLB_FORWARD_PASSWORD']);
  });

  test('stdout prints JSON lines by default; format is selectable; no TLS keys', () => {
    expect(kv(FluentBitOutput.stdout()._render('stdout').entries)).toEqual({
      'Name': 'stdout',
      'Alias': 'stdout',
      'Match': '*',
      'Format': 'json_lines',
      'Retry_Limit': 'no_limits',
      'storage.total_limit_size': '1G',
    });
    expect(kv(FluentBitOutput.stdout({ format: StdoutFormat.MSGPACK })._render('s').entries).Format).toBe('msgpack');
  });
});

describe('validation', () => {
  test.each([
    ['a URL as host', () => FluentBitOutput.loki({ host: 'https://loki' })._render('l'), /host "https:\/\/loki" must be a bare host name/],
    ['a host with port', () => FluentBitOutput.forward({ host: 'agg:24224' })._render('l'), /must be a bare host name/],
    ['port 0', () => FluentBitOutput.elasticsearch({ host: 'e', port: 0 })._render('l'), /port 0 must be an integer from 1 to 65535/],
    ['tlsVerify without tls', () => FluentBitOutput.loki({ host: 'l', tlsVerify: false })._render('l'), /tlsVerify is set but tls is off/],
    ['retryLimit 0', () => FluentBitOutput.stdout({ retryLimit: 0 })._render('l'), /retryLimit 0 must be a whole number >= 1/],
    ['a bad buffer size', () => FluentBitOutput.stdout({ storageTotalLimitSize: 'lots' })._render('l'), /storageTotalLimitSize "lots"/],
    ['a bad alias', () => FluentBitOutput.stdout({ alias: 'has space' })._render('l'), /alias "has space" must match/],
    ['a match with spaces', () => FluentBitOutput.stdout({ match: 'a b' })._render('l'), /match "a b" must be a non-empty tag pattern/],
    ['a bad Secret name', () => FluentBitOutput.loki({ host: 'l', httpUser: 'u', httpPassword: { secretName: 'Bad_Name', key: 'k' } })._render('l'), /secretName "Bad_Name" is not a valid Secret name/],
    ['a bad Secret key', () => FluentBitOutput.loki({ host: 'l', httpUser: 'u', httpPassword: { secretName: 's', key: 'a/b' } })._render('l'), /Secret key "a\/b"/],
  ])('rejects %s', (_what, build, message) => {
    expect(build).toThrow(message);
  });

  test('a bare IPv6 literal is a valid host, a bracketed one is not (getaddrinfo takes no brackets)', () => {
    expect(kv(FluentBitOutput.loki({ host: 'fd00::1' })._render('l').entries).Host).toBe('fd00::1');
    expect(() => FluentBitOutput.loki({ host: '[fd00::1]' })._render('l')).toThrow(/must be a bare host name/);
  });
});

describe('Loki record-accessor keys', () => {
  const loki = (removeKeys: string[], labels?: { [k: string]: string }) => () => FluentBitOutput.loki({ host: 'l', removeKeys, labels })._render('l');

  test.each([
    ["$kubernetes['annotations']"],
    ["$kubernetes['labels']['app.kubernetes.io/name']"],
    ['$log[0]'],
    ['stream'],
    ["$kubernetes['it''s']"],
  ])('accepts %p', (key) => {
    expect(kv(loki([key])().entries).Remove_Keys).toBe(key);
  });

  test.each([
    // the defect of the example: the annotations are nested under `kubernetes`, not a top-level key
    ['kubernetes_annotations', /kubernetes filter nests 'annotations' under 'kubernetes'. Use the record accessor \$kubernetes\['annotations'\]/],
    ['kubernetes.labels', /Use the record accessor \$kubernetes\['labels'\]/],
    ['$kubernetes_annotations', /Use the record accessor \$kubernetes\['annotations'\]/],
    ['$kubernetes[annotations]', /is not a record accessor .*\$kubernetes\['annotations'\]/],
    ['$kubernetes["annotations"]', /is not a record accessor/],
    ["$kubernetes['a,b']", /no commas/],
    ["$kubernetes['annotations'", /is not a record accessor/],
    ['two words', /must be a top-level key or a record accessor/],
  ])('rejects removeKeys %p', (key, message) => {
    expect(loki([key])).toThrow(message);
  });

  test('label values that are record accessors are checked too', () => {
    expect(loki([], { ns: '$kubernetes[namespace_name]' })).toThrow(/labels.ns "\$kubernetes\[namespace_name\]" is not a record accessor/);
    expect(kv(loki([], { ns: "$kubernetes['namespace_name']" })().entries).Labels).toBe("ns=$kubernetes['namespace_name']");
  });
});

describe('problems are collected, not thrown, so the collector can name its path', () => {
  test('a factory never throws, whatever it is given', () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const untyped = FluentBitOutput as any;
    for (const options of [null, 5, 'loki', [], { host: 1 }, { host: 'l', port: '80' }, { host: 'l', labels: null }]) {
      expect(() => untyped.loki(options)).not.toThrow();
      expect(untyped.loki(options)._problems().length).toBeGreaterThan(0);
    }
  });

  test.each<[string, () => FluentBitOutput, string]>([
    ['a string port', () => FluentBitOutput.loki({ host: 'l', port: '80' as unknown as number }), 'port must be a number, got string "80"'],
    ['an empty username', () => FluentBitOutput.forward({ host: 'f', username: '' }), 'username is empty; give a value or leave it unset.'],
    ['a padded tenant', () => FluentBitOutput.loki({ host: 'l', tenantId: ' a' }), 'tenantId " a" has leading or trailing spaces'],
    ['a multi-line uri', () => FluentBitOutput.loki({ host: 'l', uri: '/a\n/b' }), 'uri "/a\\n/b" contains a line break'],
    ['a bad secret', () => FluentBitOutput.loki({ host: 'l', httpUser: 'u', httpPassword: { secretName: 's', key: '..k' } }), 'Secret key "..k" must match'],
    ['null options', () => FluentBitOutput.stdout(null as unknown as {}), 'the options must be an object, got null'],
  ])('%s names the option', (_what, build, message) => {
    const problems = build()._problems();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(message);
  });
});
