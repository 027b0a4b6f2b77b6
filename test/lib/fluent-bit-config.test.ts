import * as fc from 'fast-check';
import { entryValue, entryValues, findSections, parseClassicConfig, ParsedClassicConfig } from '../../src/fluent-bit/classic-format';
import {
  GRACE_MARGIN_SECONDS,
  FluentBitConfigOptions,
  generateFluentBitConfig,
  graceSecondsFor,
  RETRY_PUT_DOWN_LIMIT,
  sizeBytes,
  STOCK_PARSERS_FILE,
} from '../../src/fluent-bit/config';
import { FluentBitInput } from '../../src/fluent-bit/inputs';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { FluentBitMultilineParser, FluentBitParser } from '../../src/fluent-bit/parsers';

const base: FluentBitConfigOptions = {
  stateDir: '/var/lib/log-collector',
  collectorName: 'log-collector',
  collectorNamespace: 'observability',
  outputs: [FluentBitOutput.loki({ host: 'loki.monitoring.svc' })],
};

function parsed(options: Partial<FluentBitConfigOptions> = {}): ParsedClassicConfig {
  return parseClassicConfig(generateFluentBitConfig({ ...base, ...options }).text);
}

function only(config: ParsedClassicConfig, kind: string, plugin?: string) {
  const found = findSections(config, kind, plugin);
  expect(found).toHaveLength(1);
  return found[0];
}

describe('[SERVICE]', () => {
  test('HTTP server with health check, storage in the state dir, Grace below the pod grace period', () => {
    const service = only(parsed(), 'SERVICE');
    expect(entryValue(service, 'HTTP_Server')).toBe('On');
    expect(entryValue(service, 'HTTP_Listen')).toBe('0.0.0.0');
    expect(entryValue(service, 'HTTP_Port')).toBe('2020');
    expect(entryValue(service, 'Health_Check')).toBe('On');
    expect(entryValue(service, 'storage.path')).toBe('/var/lib/log-collector/flb-storage/');
    expect(entryValue(service, 'storage.sync')).toBe('normal');
    expect(entryValue(service, 'storage.backlog.mem_limit')).toBe('5M');
    expect(entryValue(service, 'Flush')).toBe('1');
    expect(entryValue(service, 'Grace')).toBe('55');
    expect(entryValue(service, 'Parsers_File')).toBe(STOCK_PARSERS_FILE);
  });

  test('the HTTP port, flush, backlog limit and grace follow the options', () => {
    const service = only(parsed({ httpPort: 2021, flushSeconds: 5, storageBacklogMemLimit: '16M', terminationGracePeriodSeconds: 90 }), 'SERVICE');
    expect(entryValue(service, 'HTTP_Port')).toBe('2021');
    expect(entryValue(service, 'Flush')).toBe('5');
    expect(entryValue(service, 'storage.backlog.mem_limit')).toBe('16M');
    expect(entryValue(service, 'Grace')).toBe('85');
  });
});

describe('memory with filesystem buffering', () => {
  // Mem_Buf_Limit never pauses a filesystem-buffered input (flb_input_chunk.c): the chunks kept up
  // in memory, storage.max_chunks_up, are what bound memory there.
  const inputs = (options: Partial<FluentBitConfigOptions> = {}) =>
    findSections(parsed({ systemdUnits: ['kubelet.service'], forwardInputPort: 24224, ...options }), 'INPUT');

  test('every input buffers on the filesystem, says what it does at the chunk limit, and carries no Mem_Buf_Limit', () => {
    const all = inputs();
    expect(all.map((i) => entryValue(i, 'Name'))).toEqual(['tail', 'systemd', 'forward']);
    for (const input of all) {
      expect(entryValue(input, 'storage.type')).toBe('filesystem');
      expect(entryValue(input, 'storage.pause_on_chunks_overlimit')).toBe('Off');
      expect(entryValue(input, 'Mem_Buf_Limit')).toBeUndefined();
      // storage.type first: setting it resets pause_on_chunks_overlimit on a non-filesystem input
      const keys = input.entries.map((e) => e.key);
      expect(keys.indexOf('storage.type')).toBeLessThan(keys.indexOf('storage.pause_on_chunks_overlimit'));
    }
  });

  // fluent-bit 5.1.1 src/flb_task.c, flb_task_retry_create: a retried chunk goes down to the filesystem
  // when its task has one route, else only when its input is over Mem_Buf_Limit
  // (src/flb_input_chunk.c, flb_input_chunk_set_up_down); with two outputs and none, the chunks one
  // output retries stay up and fill storage.max_chunks_up (measured: the other output starved).
  test('with two outputs, the file and journal inputs carry Mem_Buf_Limit 8K (the retry put-down); the forward input does not', () => {
    const two = [FluentBitOutput.loki({ host: 'loki.monitoring.svc' }), FluentBitOutput.http({ host: 'archive.example.com' })];
    const all = inputs({ outputs: two, inputs: [FluentBitInput.tail({ paths: ['/var/log/audit/*.log'], tag: 'audit' })] });
    expect(all.map((i) => [entryValue(i, 'Name'), entryValue(i, 'Mem_Buf_Limit')])).toEqual([
      ['tail', RETRY_PUT_DOWN_LIMIT], ['systemd', RETRY_PUT_DOWN_LIMIT], ['forward', undefined], ['tail', RETRY_PUT_DOWN_LIMIT],
    ]);
    expect(RETRY_PUT_DOWN_LIMIT).toBe('8K');
    // one output: its retried chunks go down anyway (a task with one route)
    expect(inputs({ inputs: [FluentBitInput.tail({ paths: ['/var/log/audit/*.log'], tag: 'audit' })] })
      .map((i) => entryValue(i, 'Mem_Buf_Limit'))).toEqual([undefined, undefined, undefined, undefined]);
    // a memBufLimit given replaces it, on every input as before
    expect(inputs({ outputs: two, memBufLimit: '20MB' }).map((i) => entryValue(i, 'Mem_Buf_Limit'))).toEqual(['20MB', '20MB', '20MB']);
  });

  test('sizeBytes reads fluent-bit sizes in powers of 1000 (src/flb_utils.c, flb_utils_size_to_bytes)', () => {
    expect(['8K', '8k', '8KB', '5M', '50MB', '1G', '100', 'lots'].map(sizeBytes)).toEqual([8000, 8000, 8000, 5e6, 5e7, 1e9, 100, NaN]);
  });

  test('[SERVICE] bounds the chunks in memory (64 by default, below fluent-bit\'s 128) and the backlog', () => {
    const service = only(parsed(), 'SERVICE');
    expect(entryValue(service, 'storage.max_chunks_up')).toBe('64');
    expect(entryValue(service, 'storage.backlog.mem_limit')).toBe('5M');
    expect(entryValue(only(parsed({ storageMaxChunksUp: 16 }), 'SERVICE'), 'storage.max_chunks_up')).toBe('16');
  });

  test('pausing at the chunk limit is an option', () => {
    for (const input of inputs({ storagePauseOnChunksOverlimit: true })) {
      expect(entryValue(input, 'storage.pause_on_chunks_overlimit')).toBe('On');
    }
  });

  test.each([0, -1, 2.5])('storageMaxChunksUp %p is rejected', (n) => {
    expect(() => parsed({ storageMaxChunksUp: n })).toThrow(/storageMaxChunksUp .* must be a whole number >= 1/);
  });
});

describe('grace rule', () => {
  test('Grace = terminationGracePeriodSeconds - margin, always below it', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 3600 }), fc.double({ min: 0.1, max: 30, noNaN: true }), (tgps, flush) => {
      let grace: number;
      try {
        grace = graceSecondsFor(tgps, flush);
      } catch (e) {
        // rejected exactly when the grace cannot hold one flush plus the margin
        expect(tgps - GRACE_MARGIN_SECONDS).toBeLessThan(Math.ceil(flush) + GRACE_MARGIN_SECONDS);
        expect((e as Error).message).toMatch(/raise terminationGracePeriodSeconds/);
        return;
      }
      expect(grace).toBe(tgps - GRACE_MARGIN_SECONDS);
      expect(grace).toBeLessThan(tgps);
      expect(grace).toBeGreaterThanOrEqual(flush + GRACE_MARGIN_SECONDS);
    }));
  });

  test('a grace period too short for the flush interval is an error naming the minimum', () => {
    expect(() => generateFluentBitConfig({ ...base, terminationGracePeriodSeconds: 10, flushSeconds: 1 }))
      .toThrow(/LogCollector: fluent-bit Grace would be 5s, below one flush \(1s\) plus a 5s margin; raise terminationGracePeriodSeconds to at least 11 \(now 10\)/);
    expect(() => generateFluentBitConfig({ ...base, terminationGracePeriodSeconds: 30, flushSeconds: 25 }))
      .toThrow(/at least 35/);
    expect(graceSecondsFor(11, 1)).toBe(6);
  });

  test('an explicit grace must leave the margin before SIGKILL', () => {
    expect(() => graceSecondsFor(60, 1, 58)).toThrow(/graceSeconds 58 plus a 5s margin exceeds terminationGracePeriodSeconds 60/);
    expect(graceSecondsFor(60, 1, 30)).toBe(30);
  });

  test('the context prefixes errors', () => {
    expect(() => generateFluentBitConfig({ ...base, by: 'Chart/logs', terminationGracePeriodSeconds: 3 })).toThrow(/^Chart\/logs: /);
  });
});

describe('tail input', () => {
  test('reads container logs with the docker/cri multiline parsers and keeps its DB and buffer on the host', () => {
    const tail = only(parsed(), 'INPUT', 'tail');
    expect(entryValue(tail, 'Path')).toBe('/var/log/containers/*.log');
    expect(entryValue(tail, 'multiline.parser')).toBe('docker, cri');
    expect(entryValue(tail, 'DB')).toBe('/var/lib/log-collector/tail-containers.db');
    expect(entryValue(tail, 'storage.type')).toBe('filesystem');
    expect(entryValue(tail, 'Skip_Long_Lines')).toBe('On');
    expect(entryValue(tail, 'Refresh_Interval')).toBe('10');
    expect(entryValue(tail, 'Tag')).toBe('kube.*');
  });

  test("excludes exactly the collector's own pods", () => {
    const tail = only(parsed({ collectorName: 'logs', collectorNamespace: 'ops' }), 'INPUT', 'tail');
    const pattern = entryValue(tail, 'Exclude_Path')!;
    expect(pattern).toBe('/var/log/containers/logs-*_ops_*.log');
    const glob = new RegExp('^' + pattern.replace(/[.]/g, '\\.').replace(/\*/g, '.*') + '$');
    expect(glob.test('/var/log/containers/logs-x7k2p_ops_fluent-bit-0123abcd.log')).toBe(true);
    expect(glob.test('/var/log/containers/logs-x7k2p_default_app-0123abcd.log')).toBe(false);
    expect(glob.test('/var/log/containers/api-x7k2p_ops_app-0123abcd.log')).toBe(false);
  });

  test('the deprecated memBufLimit is still written when set; refresh interval follows the options; bad values are rejected', () => {
    const tail = only(parsed({ memBufLimit: '20MB', refreshIntervalSeconds: 5, readFromHead: false }), 'INPUT', 'tail');
    expect(entryValue(tail, 'Mem_Buf_Limit')).toBe('20MB');
    expect(entryValue(tail, 'Refresh_Interval')).toBe('5');
    expect(entryValue(tail, 'Read_from_Head')).toBe('Off');
    expect(() => parsed({ memBufLimit: '20 MB' })).toThrow(/memBufLimit "20 MB" must be a fluent-bit size/);
    expect(() => parsed({ refreshIntervalSeconds: 0 })).toThrow(/refreshIntervalSeconds 0/);
  });
});

describe('systemd input', () => {
  test('absent by default', () => {
    expect(findSections(parsed(), 'INPUT', 'systemd')).toHaveLength(0);
  });

  test('kubelet/containerd units, DB in the state dir, read from tail', () => {
    const systemd = only(parsed({ systemdUnits: ['kubelet.service', 'containerd.service'] }), 'INPUT', 'systemd');
    expect(entryValues(systemd, 'Systemd_Filter')).toEqual(['_SYSTEMD_UNIT=containerd.service', '_SYSTEMD_UNIT=kubelet.service']);
    expect(entryValue(systemd, 'DB')).toBe('/var/lib/log-collector/systemd.db');
    expect(entryValue(systemd, 'Read_From_Tail')).toBe('On');
    // No Path: the local journal, persistent or volatile (plugins/in_systemd/systemd_config.c, sd_journal_open).
    expect(entryValue(systemd, 'Path')).toBeUndefined();
    expect(entryValue(systemd, 'storage.type')).toBe('filesystem');
    expect(entryValue(systemd, 'Tag')).toBe('host.*');
  });

  test('rejects a unit name that would break the filter', () => {
    expect(() => parsed({ systemdUnits: ['kubelet service'] })).toThrow(/systemd unit "kubelet service" is not a unit name/);
  });
});

describe('kubernetes filter', () => {
  test('merges JSON logs, drops the raw log, honours pod annotations; API server by default', () => {
    const config = generateFluentBitConfig(base);
    const k8s = only(parseClassicConfig(config.text), 'FILTER', 'kubernetes');
    expect(entryValue(k8s, 'Match')).toBe('kube.*');
    expect(entryValue(k8s, 'Merge_Log')).toBe('On');
    expect(entryValue(k8s, 'Keep_Log')).toBe('Off');
    expect(entryValue(k8s, 'K8S-Logging.Parser')).toBe('On');
    expect(entryValue(k8s, 'K8S-Logging.Exclude')).toBe('On');
    expect(entryValue(k8s, 'Use_Kubelet')).toBeUndefined();
    expect(entryValue(k8s, 'tls.verify')).toBeUndefined();
    expect(config.fieldEnv).toEqual([]);
  });

  test('kubelet mode reads the node-local kubelet through NODE_IP from the downward API', () => {
    const config = generateFluentBitConfig({ ...base, useKubelet: true, kubeletPort: 10255 });
    const k8s = only(parseClassicConfig(config.text), 'FILTER', 'kubernetes');
    expect(entryValue(k8s, 'Use_Kubelet')).toBe('On');
    expect(entryValue(k8s, 'Kubelet_Port')).toBe('10255');
    expect(entryValue(k8s, 'Kubelet_Host')).toBe('${NODE_IP}');
    expect(entryValue(k8s, 'Buffer_Size')).toBe('0');
    expect(config.fieldEnv).toEqual([{ envName: 'NODE_IP', fieldPath: 'status.hostIP' }]);
  });

  test('kubeletPort without kubelet mode is an error; TLS verification can be turned off', () => {
    expect(() => parsed({ kubeletPort: 10250 })).toThrow(/kubeletPort is set but useKubelet is off/);
    expect(entryValue(only(parsed({ kubernetesTlsVerify: false }), 'FILTER', 'kubernetes'), 'tls.verify')).toBe('Off');
  });
});

describe('outputs', () => {
  test('an empty output list is an error', () => {
    expect(() => generateFluentBitConfig({ ...base, outputs: [] })).toThrow(/LogCollector: outputs is empty/);
  });

  test('several outputs at once, each with Retry_Limit and a distinct alias', () => {
    const config = parsed({
      outputs: [
        FluentBitOutput.loki({ host: 'loki-a' }),
        FluentBitOutput.loki({ host: 'loki-b', retryLimit: 20 }),
        FluentBitOutput.elasticsearch({ host: 'es' }),
        FluentBitOutput.openSearch({ host: 'os' }),
        FluentBitOutput.forward({ host: 'agg' }),
        FluentBitOutput.stdout(),
      ],
    });
    const outputs = findSections(config, 'OUTPUT');
    expect(outputs.map((o) => [entryValue(o, 'Name'), entryValue(o, 'Alias'), entryValue(o, 'Retry_Limit')])).toEqual([
      ['loki', 'loki_0', 'no_limits'],
      ['loki', 'loki_1', '20'],
      ['es', 'es', 'no_limits'],
      ['opensearch', 'opensearch', 'no_limits'],
      ['forward', 'forward', 'no_limits'],
      ['stdout', 'stdout', 'no_limits'],
    ]);
  });

  test('duplicate aliases are an error', () => {
    expect(() => parsed({ outputs: [FluentBitOutput.stdout({ alias: 'x' }), FluentBitOutput.loki({ host: 'l', alias: 'x' })] }))
      .toThrow(/alias 'x' is used twice/);
    expect(() => parsed({ outputs: [FluentBitOutput.stdout({ alias: 'tail_containers' })] })).toThrow(/alias 'tail_containers' is used twice/);
    expect(() => parsed({
      outputs: [
        FluentBitOutput.loki({ host: 'l', alias: 'a-b', httpUser: 'u', httpPassword: { secretName: 's', key: 'k' } }),
        FluentBitOutput.loki({ host: 'l', alias: 'a_b', httpUser: 'u', httpPassword: { secretName: 's', key: 'k' } }),
      ],
    })).toThrow(/same environment variable FLB_A_B_HTTP_PASSWD/);
  });

  test('credentials are ${ENV} references backed by Secrets, never values', () => {
    const config = generateFluentBitConfig({
      ...base,
      outputs: [
        FluentBitOutput.loki({ host: 'l', httpUser: '12345', httpPassword: { secretName: 'loki-creds', key: 'password' } }),
        FluentBitOutput.elasticsearch({ host: 'e', alias: 'es-eu', cloudAuth: { secretName: 'es', key: 'auth' } }),
        FluentBitOutput.forward({ host: 'f', sharedKey: { secretName: 'fw', key: 'shared' } }),
      ],
    });
    expect(config.secretEnv).toEqual([
      { envName: 'FLB_LOKI_HTTP_PASSWD', secretName: 'loki-creds', key: 'password' },
      { envName: 'FLB_ES_EU_CLOUD_AUTH', secretName: 'es', key: 'auth' },
      { envName: 'FLB_FORWARD_SHARED_KEY', secretName: 'fw', key: 'shared' },
    ]);
    const outputs = findSections(parseClassicConfig(config.text), 'OUTPUT');
    expect(entryValue(outputs[0], 'HTTP_Passwd')).toBe('${FLB_LOKI_HTTP_PASSWD}');
    expect(entryValue(outputs[1], 'Cloud_Auth')).toBe('${FLB_ES_EU_CLOUD_AUTH}');
    expect(entryValue(outputs[2], 'Shared_Key')).toBe('${FLB_FORWARD_SHARED_KEY}');
    for (const name of ['loki-creds', 'password', 'shared', 'auth']) {
      expect(config.text).not.toContain(name);
    }
  });
});

describe('forward input and ports', () => {
  test('optional forward input listens on its own port', () => {
    const config = generateFluentBitConfig({ ...base, forwardInputPort: 24224 });
    const forward = only(parseClassicConfig(config.text), 'INPUT', 'forward');
    expect(entryValue(forward, 'Port')).toBe('24224');
    expect(entryValue(forward, 'storage.type')).toBe('filesystem');
    expect(config.containerPorts).toEqual([{ name: 'http', port: 2020 }, { name: 'forward', port: 24224 }]);
  });

  test('a clash between the HTTP server and the forward input is an error', () => {
    expect(() => parsed({ httpPort: 24224, forwardInputPort: 24224 }))
      .toThrow(/forwardInputPort 24224 clashes with the HTTP server port 24224/);
  });

  test.each([0, 70000, 20.5])('port %p is rejected', (p) => {
    expect(() => parsed({ httpPort: p })).toThrow(/httpPort .* must be an integer from 1 to 65535/);
  });
});

describe('state directory', () => {
  test('every write path (DBs, buffer) is inside the state dir', () => {
    const config = generateFluentBitConfig({ ...base, stateDir: '/var/lib/logs/', systemdUnits: ['kubelet.service'] });
    expect(config.writePaths).toEqual(['/var/lib/logs/flb-storage/', '/var/lib/logs/tail-containers.db', '/var/lib/logs/systemd.db']);
    const sections = parseClassicConfig(config.text).sections;
    const pathLike = sections.flatMap((s) => s.entries)
      .filter((e) => ['db', 'storage.path'].includes(e.key.toLowerCase()))
      .map((e) => e.value);
    expect(pathLike.sort()).toEqual([...config.writePaths].sort());
  });

  test.each(['relative/dir', '/', '/var/../etc', '/var/lib/a b'])('rejects stateDir %p', (dir) => {
    expect(() => parsed({ stateDir: dir })).toThrow(/stateDir .* must be an absolute path/);
  });
});

describe('extraConfig escape hatch', () => {
  test('is appended verbatim after the generated sections', () => {
    const extra = '[FILTER]\n    Name grep\n    Match kube.*\n    Exclude log ^DEBUG';
    const config = parsed({ extraConfig: extra });
    const grep = only(config, 'FILTER', 'grep');
    expect(entryValue(grep, 'Exclude')).toBe('log ^DEBUG');
    expect(config.sections[config.sections.length - 1]).toBe(grep);
  });

  test.each([
    ['invalid text', 'Name grep', /extraConfig is not valid classic-mode fluent-bit config: .*outside any/],
    ['a second [SERVICE]', '[SERVICE]\n    Flush 5', /must not contain a \[SERVICE\] section/],
    ['an @INCLUDE', '@INCLUDE other.conf', /must not contain directives/],
    // fluent-bit 5.1.1 stops at start on a key its plugin and flb_*_set_property do not know ("unknown configuration property")
    ['an unknown key of a filter the library lists', '[FILTER]\n    Name grep\n    Match *\n    Exclud log ^DEBUG',
      'extraConfig [FILTER] at line 1: the grep filter of fluent-bit 5.1 has no key "Exclud" (line 4; did you mean exclude?)'],
    ['an unknown key of an input the library lists', '[INPUT]\n    Name tail\n    Path /x/*.log\n    Read_From_Heads On',
      'extraConfig [INPUT] at line 1: the tail input of fluent-bit 5.1 has no key "Read_From_Heads" (line 4; did you mean read_from_head?)'],
    ['an unknown output key', '[OUTPUT]\n    Name stdout\n    Match *\n    Formatt json',
      'extraConfig [OUTPUT] at line 1: the stdout output of fluent-bit 5.1 has no key "Formatt" (line 4; did you mean format?)'],
    ['an unknown output plugin', '[OUTPUT]\n    Name stdoutt\n    Match *', 'extraConfig [OUTPUT] at line 1: fluent-bit 5.1 has no output plugin "stdoutt"'],
    // the built 5.1.1 binary stops with SIGSEGV on this (flb_input_net_property_check: tail has no net config map)
    ['a net.* key on an input that reads no network', '[INPUT]\n    Name tail\n    Path /x/*.log\n    net.keepalive on',
      'extraConfig [INPUT] at line 1: the tail input reads no network, so it takes no "net.keepalive"'],
  ])('rejects %s', (_what, extra, message) => {
    expect(() => parsed({ extraConfig: extra })).toThrow(message);
  });

  test('accepts what fluent-bit accepts: keys in any case, suffixed keys (Parser_1), net.* of a network input, other plugins\' own keys', () => {
    const extra = [
      '[INPUT]', '    Name tail', '    Path /var/log/app/*.log', '    READ_FROM_HEAD on', '    Parser_Firstline json', '    Parser_1 docker',
      '    Mem_Buf_Limit 5MB', '    Tag app.*',
      '[INPUT]', '    Name forward', '    Listen 127.0.0.1', '    Port 24224', '    net.io_timeout 30s', '    Tag fwd.*',
      '[INPUT]', '    Name cpu', '    Interval_Sec 5', '    Tag cpu',
      '[FILTER]', '    Name modify', '    Match app.*', '    Add cluster prod', '    Add region eu', '    Alias add-cluster',
      '[FILTER]', '    Name sysinfo', '    Match *', '    Fluentbit_Version_Key fb_version',
      '[OUTPUT]', '    Name stdout', '    Match cpu', '    Format json_lines', '    Retry_Limit 3', '    net.keepalive on',
    ].join('\n');
    expect(() => parsed({ extraConfig: extra })).not.toThrow();
  });
});

describe('the whole file', () => {
  const full: FluentBitConfigOptions = {
    ...base,
    systemdUnits: ['kubelet.service', 'containerd.service'],
    useKubelet: true,
    forwardInputPort: 24224,
    parsers: [FluentBitParser.regex({ name: 'app', regex: '^(?<level>[A-Z]+) (?<message>.*)$' })],
    multilineParsers: [FluentBitMultilineParser.regex({ name: 'stack', rules: [{ state: 'start_state', regex: '/^\\S/', nextState: 'cont' }, { state: 'cont', regex: '/^\\s/', nextState: 'cont' }] })],
    outputs: [
      FluentBitOutput.loki({ host: 'l', tls: true, httpUser: 'u', httpPassword: { secretName: 's', key: 'p' }, labels: { job: 'x' } }),
      FluentBitOutput.elasticsearch({ host: 'e', logstashFormat: false, index: 'k8s' }),
      FluentBitOutput.forward({ host: 'f', tls: true, tlsVerify: false }),
      FluentBitOutput.stdout(),
    ],
  };

  test('the parser reads every generated section and key back', () => {
    const config = generateFluentBitConfig(full);
    const back = parseClassicConfig(config.text, 'main');
    expect(back.directives).toEqual([]);
    expect(back.sections.map((s) => ({ name: s.name, entries: s.entries }))).toEqual(config.sections);
    const parsers = parseClassicConfig(config.parsersText!, 'parsers');
    expect(parsers.sections.map((s) => ({ name: s.name, entries: s.entries }))).toEqual(config.parserSections);
    expect(parsers.sections.map((s) => `${s.name}:${entryValue(s, 'Name')}`)).toEqual(['PARSER:app', 'MULTILINE_PARSER:stack']);
    expect(back.sections.map((s) => `${s.name}:${entryValue(s, 'Name') ?? ''}`)).toEqual([
      'SERVICE:', 'INPUT:tail', 'INPUT:systemd', 'INPUT:forward', 'FILTER:kubernetes',
      'OUTPUT:loki', 'OUTPUT:es', 'OUTPUT:forward', 'OUTPUT:stdout',
    ]);
  });

  test('is deterministic', () => {
    expect(generateFluentBitConfig(full).text).toBe(generateFluentBitConfig({ ...full }).text);
  });

  test('snapshot', () => {
    expect(generateFluentBitConfig(full).text).toMatchSnapshot();
    expect(generateFluentBitConfig(full).parsersText).toMatchSnapshot();
  });
});
