/**
 * extraConfig [INPUT] and [FILTER] sections of every plugin, not only of those the collector writes:
 * fluent-bit 5.1.1 refuses an unknown plugin name (src/flb_config.c, flb_input_new / flb_filter_new:
 * "tried to instance a plugin name that doesn't exist") and an unknown key
 * (src/flb_config_map.c, flb_config_map_properties_check: "unknown configuration property") at start,
 * so one typo is a collector that crash-loops on every node. The lists are read from the 5.1.1
 * sources (src/fluent-bit/input-filter-keys.ts says how).
 */
import { Testing } from 'cdk8s';
import { FluentBitConfigOptions, generateFluentBitConfig } from '../../src/fluent-bit/config';
import {
  FILTER_PLUGIN_KEYS, HTTP_SERVER_INPUTS, INPUT_PLUGIN_KEYS, LEFT_OUT_FILTERS, LEFT_OUT_INPUTS, PRIVATE_INPUTS,
} from '../../src/fluent-bit/input-filter-keys';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { LogCollectorDaemonSet } from '../../src/index';

const base: FluentBitConfigOptions = {
  stateDir: '/var/lib/log-collector',
  collectorName: 'log-collector',
  collectorNamespace: 'observability',
  outputs: [FluentBitOutput.stdout()],
};

const generate = (extraConfig: string) => () => generateFluentBitConfig({ ...base, extraConfig });

describe('plugin names (src/flb_config.c: an [INPUT] or [FILTER] whose Name no plugin registers stops fluent-bit at start)', () => {
  test.each([
    ['a filter name one letter off', '\n[FILTER]\n    Name parsr\n    Match *\n    Key_Name log\n    Parser json',
      'extraConfig [FILTER] at line 2: fluent-bit 5.1 has no filter plugin "parsr" (did you mean parser?)'],
    ['an input name one letter off', '[INPUT]\n    Name tial\n    Path /var/log/app.log\n    Tag app',
      'extraConfig [INPUT] at line 1: fluent-bit 5.1 has no input plugin "tial" (did you mean tail?)'],
    ['an input the image does not build (dockerfiles/Dockerfile: -DFLB_IN_EXEC=Off)', '[INPUT]\n    Name exec\n    Command date\n    Tag x',
      'extraConfig [INPUT] at line 1: the fluent-bit 5.1.1 image has no exec input (dockerfiles/Dockerfile builds with -DFLB_IN_EXEC=Off)'],
    ['a filter the image does not build (FLB_FILTER_TENSORFLOW OFF)', '[FILTER]\n    Name tensorflow\n    Match *',
      'extraConfig [FILTER] at line 1: the fluent-bit 5.1.1 image has no tensorflow filter (FLB_FILTER_TENSORFLOW is OFF by default)'],
    ['a private input (src/flb_input.c flb_input_new: FLB_INPUT_PRIVATE with public_only)', '[INPUT]\n    Name emitter\n    Tag x',
      'extraConfig [INPUT] at line 1: emitter is an input fluent-bit creates itself (FLB_INPUT_PRIVATE); a config cannot name it'],
    ['a name that is an Object.prototype member', '[FILTER]\n    Name constructor\n    Match *',
      'extraConfig [FILTER] at line 1: fluent-bit 5.1 has no filter plugin "constructor"'],
    ['a section without a Name', '[FILTER]\n    Match *\n    Regex log x',
      'extraConfig [FILTER] at line 1: the section has no Name'],
  ])('refuses %s', (_what, extra, message) => {
    expect(generate(extra)).toThrow(message);
  });

  test('the message lists the plugins when nothing is near', () => {
    expect(generate('[FILTER]\n    Name zzzzzzzzzz\n    Match *')).toThrow(/Its filter plugins are alter_size, aws, checklist, .*, wasm\./);
  });
});

describe('keys of plugins the collector does not write (each plugin\'s config_map in plugins/in_*/ and plugins/filter_*/)', () => {
  test.each([
    ['a parser filter key one letter off (plugins/filter_parser/filter_parser.c)', '[FILTER]\n    Name parser\n    Match *\n    Key_Nam log\n    Parser json',
      'extraConfig [FILTER] at line 1: the parser filter of fluent-bit 5.1 has no key "Key_Nam" (line 4; did you mean key_name?)'],
    ['a cpu input key (plugins/in_cpu/cpu.c)', '[INPUT]\n    Name cpu\n    Tag cpu\n    Interval_Secs 5',
      'extraConfig [INPUT] at line 1: the cpu input of fluent-bit 5.1 has no key "Interval_Secs" (line 4; did you mean interval_sec?)'],
    ['a key of another filter (plugins/filter_lua/lua.c)', '[FILTER]\n    Name type_converter\n    Match *\n    script a.lua',
      'extraConfig [FILTER] at line 1: the type_converter filter of fluent-bit 5.1 has no key "script" (line 4'],
    // src/flb_input.c flb_input_net_property_check: a network server's net.* keys go to src/flb_downstream.c's map, which has no connect_timeout
    ['an upstream net.* key on a server input', '[INPUT]\n    Name tcp\n    Listen 0.0.0.0\n    Port 5170\n    Tag tcp\n    net.connect_timeout 5',
      'extraConfig [INPUT] at line 1: the tcp input of fluent-bit 5.1 has no key "net.connect_timeout" (line 6'],
    // the HTTP server's map (src/http_server/flb_http_server_config_map.c) has no such key
    ['an unknown http_server.* key', '[INPUT]\n    Name http\n    Port 9880\n    Tag http\n    http_server.workerz 2',
      'extraConfig [INPUT] at line 1: the http input of fluent-bit 5.1 has no key "http_server.workerz" (line 5; did you mean http_server.workers?)'],
  ])('refuses %s', (_what, extra, message) => {
    expect(generate(extra)).toThrow(message);
  });

  test('accepts what fluent-bit 5.1.1 accepts: core properties, the HTTP server\'s keys on an HTTP input, net.* by network role, plugins without a config_map', () => {
    const extra = [
      // flb_config_map_properties_check accepts `active` and `condition` on every plugin with a config_map
      '[INPUT]', '    Name cpu', '    Tag cpu', '    Interval_Sec 5', '    Active true',
      '[INPUT]', '    Name http', '    Port 9880', '    Tag http', '    http_server.workers 2', '    Buffer_Max_Size 8M', '    net.backlog 256',
      '[INPUT]', '    Name prometheus_scrape', '    Host 127.0.0.1', '    Port 9100', '    Tag metrics', '    net.connect_timeout 5',
      // in_fluentbit_logs has no config_map: flb_input_plugin_property_check checks none of its keys
      '[INPUT]', '    Name fluentbit_logs', '    Tag fb', '    Anything x',
      '[FILTER]', '    Name parser', '    Match *', '    Key_Name log', '    Parser json', '    Parser docker', '    Reserve_Data On',
      '[FILTER]', '    Name type_converter', '    Match *', '    int_key a b int', '    Condition x',
      '[OUTPUT]', '    Name stdout', '    Match *',
    ].join('\n');
    expect(generate(extra)).not.toThrow();
  });

  test('an output without a config_map takes any key (src/flb_output.c flb_output_plugin_property_check: no map, no check): pgsql', () => {
    expect(generate('[OUTPUT]\n    Name pgsql\n    Match *\n    Host db.example.com\n    Database logs\n    Table fluentbit')).not.toThrow();
    expect(() => FluentBitOutput.custom({ name: 'pgsql', options: { host: 'db.example.com', database: 'logs' } })._render('pg')).not.toThrow();
    // its net.* keys still go to the upstream's map
    expect(generate('[OUTPUT]\n    Name pgsql\n    Match *\n    net.bogus 1')).toThrow('the pgsql output of fluent-bit 5.1 has no key "net.bogus"');
  });

  test('the lists cover the plugins of the 5.1.1 release image and none it leaves out', () => {
    for (const p of ['tail', 'systemd', 'forward', 'http', 'opentelemetry', 'kubernetes_events', 'node_exporter_metrics', 'fluentbit_logs', 'dummy', 'kmsg']) {
      expect(INPUT_PLUGIN_KEYS).toHaveProperty([p]);
    }
    for (const p of ['parser', 'grep', 'lua', 'kubernetes', 'modify', 'nest', 'rewrite_tag', 'log_to_metrics', 'wasm', 'sysinfo']) {
      expect(FILTER_PLUGIN_KEYS).toHaveProperty([p]);
    }
    for (const p of [...Object.keys(LEFT_OUT_INPUTS), ...PRIVATE_INPUTS]) expect(INPUT_PLUGIN_KEYS).not.toHaveProperty([p]);
    for (const p of Object.keys(LEFT_OUT_FILTERS)) expect(FILTER_PLUGIN_KEYS).not.toHaveProperty([p]);
    expect(HTTP_SERVER_INPUTS.every((p) => INPUT_PLUGIN_KEYS[p] !== undefined)).toBe(true);
    expect(FILTER_PLUGIN_KEYS.parser).toEqual(['key_name', 'parser', 'preserve_key', 'reserve_data', 'unescape_key']);
  });
});

describe('with a 4.x image (the same reading of the 4.2.3 sources)', () => {
  const build = (extraConfig: string) => () => {
    const chart = Testing.chart();
    new LogCollectorDaemonSet(chart, 'logs', { outputs: [FluentBitOutput.stdout()], image: 'cr.fluentbit.io/fluent/fluent-bit:4.2.3', extraConfig });
  };
  test('an input plugin 4.2.3 lacks is refused', () => {
    expect(build('[INPUT]\n    Name fluentbit_logs\n    Tag fb'))
      .toThrow('fluent-bit 4.x has no input plugin fluentbit_logs (extraConfig line 1) (added in 5.x)');
  });
  test('an HTTP server key of an input, which 4.2.3\'s inputs did not hand to an HTTP server, is refused', () => {
    expect(build('[INPUT]\n    Name http\n    Port 9880\n    Tag http\n    http_server.workers 2'))
      .toThrow('the http input\'s key http_server.workers (extraConfig line 1) is not in fluent-bit 4.2.3');
  });
});
