import * as fc from 'fast-check';
import { entryValue, entryValues, findSections, parseClassicConfig, splitRuleTokens } from '../../src/fluent-bit/classic-format';
import {
  CONFIG_DIR, CUSTOM_PARSERS_FILE_NAME, FluentBitConfigOptions, generateFluentBitConfig, STOCK_PARSERS_FILE,
} from '../../src/fluent-bit/config';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { checkRegex } from '../../src/fluent-bit/parser-checks';
import {
  FluentBitDecoder, FluentBitDecoderAction, FluentBitFieldType, FluentBitMultilineParser, FluentBitParser,
} from '../../src/fluent-bit/parsers';

const base: FluentBitConfigOptions = {
  stateDir: '/var/lib/log-collector',
  collectorName: 'log-collector',
  collectorNamespace: 'observability',
  outputs: [FluentBitOutput.stdout()],
};

const appParser = FluentBitParser.regex({
  name: 'app',
  regex: '^(?<time>[^ ]+) (?<level>[A-Z]+) (?<code>[0-9]+) (?<message>.*)$',
  timeKey: 'time',
  timeFormat: '%Y-%m-%dT%H:%M:%S.%L%z',
  timeKeep: true,
  types: { code: FluentBitFieldType.INTEGER },
  decoders: [
    { decoder: FluentBitDecoder.JSON, field: 'message', merge: true, action: FluentBitDecoderAction.TRY_NEXT },
    { decoder: FluentBitDecoder.ESCAPED_UTF8, field: 'message' },
  ],
});

const javaStack = FluentBitMultilineParser.regex({
  name: 'java-stack',
  flushTimeoutMs: 1000,
  keyContent: 'log',
  rules: [
    { state: 'start_state', regex: '/^[0-9]{4}-[0-9]{2}-[0-9]{2} .*/', nextState: 'cont' },
    { state: 'cont', regex: '/^\\s+at .*"quoted".*/', nextState: 'cont' },
  ],
});

describe('parsers file', () => {
  const config = generateFluentBitConfig({
    ...base,
    parsers: [appParser, FluentBitParser.json({ name: 'app-json' }), FluentBitParser.logfmt({ name: 'app-logfmt', noBareKeys: true }), FluentBitParser.ltsv({ name: 'app-ltsv' })],
    multilineParsers: [javaStack],
  });

  test('the main file names the stock parsers first, then the custom ones; it has no parser section', () => {
    const main = parseClassicConfig(config.text, 'main');
    expect(entryValues(findSections(main, 'SERVICE')[0], 'Parsers_File')).toEqual([STOCK_PARSERS_FILE, `${CONFIG_DIR}/${CUSTOM_PARSERS_FILE_NAME}`]);
  });

  test('every custom parser is read back from the parsers file with its typed settings', () => {
    const back = parseClassicConfig(config.parsersText!, 'parsers');
    expect(back.sections.map((s) => ({ name: s.name, entries: s.entries }))).toEqual(config.parserSections);
    const [app, json, logfmt, ltsv] = findSections(back, 'PARSER');
    expect(entryValue(app, 'Format')).toBe('regex');
    expect(entryValue(app, 'Regex')).toBe('^(?<time>[^ ]+) (?<level>[A-Z]+) (?<code>[0-9]+) (?<message>.*)$');
    expect(entryValue(app, 'Time_Key')).toBe('time');
    expect(entryValue(app, 'Time_Format')).toBe('%Y-%m-%dT%H:%M:%S.%L%z');
    expect(entryValue(app, 'Time_Keep')).toBe('On');
    expect(entryValue(app, 'Types')).toBe('code:integer');
    expect(entryValue(app, 'Decode_Field')).toBe('json message try_next');
    expect(entryValue(app, 'Decode_Field_As')).toBe('escaped_utf8 message');
    expect([json, logfmt, ltsv].map((p) => entryValue(p, 'Format'))).toEqual(['json', 'logfmt', 'ltsv']);
    expect(entryValue(logfmt, 'Logfmt_No_Bare_Keys')).toBe('On');
  });

  test('multiline rules read back as fluent-bit tokenizes them (state, regex, next state)', () => {
    const [ml] = findSections(parseClassicConfig(config.parsersText!, 'parsers'), 'MULTILINE_PARSER');
    expect(entryValue(ml, 'name')).toBe('java-stack');
    expect(entryValue(ml, 'type')).toBe('regex');
    expect(entryValue(ml, 'flush_timeout')).toBe('1000');
    expect(entryValue(ml, 'key_content')).toBe('log');
    expect(entryValues(ml, 'rule').map(splitRuleTokens)).toEqual([
      ['start_state', '/^[0-9]{4}-[0-9]{2}-[0-9]{2} .*/', 'cont'],
      ['cont', '/^\\s+at .*"quoted".*/', 'cont'],
    ]);
  });

  test('any rule regex survives the rule quoting', () => {
    const regex = fc.stringMatching(/^[ -~]{1,30}$/).filter((r) => r.trim() === r && !r.endsWith('\\'));
    fc.assert(fc.property(regex, (r) => {
      let parser: FluentBitMultilineParser;
      try {
        parser = FluentBitMultilineParser.regex({ name: 'p', rules: [{ state: 'start_state', regex: r, nextState: 'start_state' }] });
      } catch {
        return; // not a valid regex
      }
      const [section] = parseClassicConfig(generateFluentBitConfig({ ...base, multilineParsers: [parser] }).parsersText!, 'parsers').sections;
      expect(splitRuleTokens(entryValue(section, 'rule')!)).toEqual(['start_state', r, 'start_state']);
    }), { seed: 10, numRuns: 300 });
  });

  test('no custom parser, no parsers file and a single Parsers_File', () => {
    const plain = generateFluentBitConfig(base);
    expect(plain.parsersText).toBeUndefined();
    expect(entryValues(findSections(parseClassicConfig(plain.text), 'SERVICE')[0], 'Parsers_File')).toEqual([STOCK_PARSERS_FILE]);
  });
});

describe('extraConfig and parsers', () => {
  // fluent-bit exits at start on [PARSER]/[MULTILINE_PARSER] in the main classic file (flb_config.c).
  test.each([
    ['[PARSER]\n    Name x\n    Format json', /\[PARSER\] section \(line 1\).*Use the parsers prop/],
    ['[FILTER]\n    Name grep\n    Match *\n    Exclude log x\n[MULTILINE_PARSER]\n    name m\n    type regex', /\[MULTILINE_PARSER\] section \(line 5\).*Use the multilineParsers prop/],
  ])('refuses parser sections: %p', (extra, message) => {
    expect(() => generateFluentBitConfig({ ...base, extraConfig: extra })).toThrow(message);
  });

  test('the main file as generated never holds a parser section', () => {
    const config = generateFluentBitConfig({ ...base, parsers: [appParser], multilineParsers: [javaStack], extraConfig: '[FILTER]\n    Name parser\n    Match kube.*\n    Key_Name log\n    Parser app' });
    expect(() => parseClassicConfig(config.text, 'main')).not.toThrow();
    expect(() => parseClassicConfig('[PARSER]\n    Name x\n', 'main')).toThrow(/not valid in the main configuration file/);
    expect(() => parseClassicConfig('[INPUT]\n    Name x\n', 'parsers')).toThrow(/not a parser section/);
  });

  test('filters may name stock, built-in and custom parsers', () => {
    const extra = [
      '[FILTER]', '    Name parser', '    Match kube.*', '    Key_Name log', '    Parser app', '    Parser nginx',
      '[FILTER]', '    Name multiline', '    Match kube.*', '    multiline.key_content log', '    multiline.parser java-stack, Python',
    ].join('\n');
    expect(() => generateFluentBitConfig({ ...base, parsers: [appParser], multilineParsers: [javaStack], extraConfig: extra })).not.toThrow();
  });

  test.each([
    ['[FILTER]\n    Name parser\n    Match *\n    Key_Name log\n    Parser my-app', /Parser 'my-app' is no parser fluent-bit knows .*define it with the parsers prop/],
    ['[FILTER]\n    Name multiline\n    Match *\n    multiline.parser go, java-stak', /multiline.parser 'java-stak' is no multiline parser .*built-in: cri, docker/],
    ['[INPUT]\n    Name tail\n    Path /x\n    Parser_Firstline first', /Parser_Firstline 'first'/],
  ])('refuses a reference to an unknown parser: %p', (extra, message) => {
    expect(() => generateFluentBitConfig({ ...base, multilineParsers: [javaStack], extraConfig: extra })).toThrow(message);
  });
});

describe('parser validation', () => {
  test.each([
    ['a stock name', { parsers: [FluentBitParser.json({ name: 'docker' })] }, /'docker' is already a parser of the image's \/fluent-bit\/etc\/parsers.conf/],
    ['a duplicate', { parsers: [FluentBitParser.json({ name: 'a' }), FluentBitParser.ltsv({ name: 'a' })] }, /'a' is defined twice/],
    ['a built-in multiline name', { multilineParsers: [FluentBitMultilineParser.regex({ name: 'Java', rules: [{ state: 'start_state', regex: 'x', nextState: 'start_state' }] })] }, /'Java' is a built-in multiline parser/],
    ['an unknown sub-parser', { multilineParsers: [FluentBitMultilineParser.regex({ name: 'm', parser: 'nope', rules: [{ state: 'start_state', regex: 'x', nextState: 'start_state' }] })] }, /names parser 'nope'/],
  ])('refuses %s', (_what, options, message) => {
    expect(() => generateFluentBitConfig({ ...base, ...options })).toThrow(message);
  });

  test.each([
    ['a bad name', () => FluentBitParser.json({ name: 'has space' }), /parser name "has space" must match/],
    ['timeKey without timeFormat', () => FluentBitParser.json({ name: 'a', timeKey: 'time' }), /timeKey and timeFormat go together/],
    ['a bad offset', () => FluentBitParser.json({ name: 'a', timeOffset: '2h' }), /timeOffset "2h"/],
    ['merge with a non-JSON decoder', () => FluentBitParser.json({ name: 'a', decoders: [{ decoder: FluentBitDecoder.ESCAPED, field: 'log', merge: true }] }), /cannot merge/],
    ['an unbalanced group', () => FluentBitParser.regex({ name: 'a', regex: '^(?<level>[A-Z]+' }), /regex "\^\(\?<level>\[A-Z\]\+" is not a valid regular expression/],
    ['a reversed range', () => FluentBitParser.regex({ name: 'a', regex: '[z-a]' }), /not a valid regular expression/],
    ['nothing to repeat', () => FluentBitParser.regex({ name: 'a', regex: '*x' }), /not a valid regular expression/],
    ['a back reference to no group', () => FluentBitParser.regex({ name: 'a', regex: '(?<x>a)\\k<y>' }), /\\k<y> refers to no named group/],
    ['a trailing backslash', () => FluentBitParser.regex({ name: 'a', regex: 'a\\' }), /not a valid regular expression/],
    ['a reversed interval', () => FluentBitParser.regex({ name: 'a', regex: 'x{3,1}' }), /not a valid regular expression/],
    ['an environment reference', () => FluentBitParser.regex({ name: 'a', regex: 'x${HOME}' }), /environment variable/],
    ['a first rule not in start_state', () => FluentBitMultilineParser.regex({ name: 'm', rules: [{ state: 'cont', regex: 'x', nextState: 'cont' }] }), /requires 'start_state'/],
    ['an unknown next state', () => FluentBitMultilineParser.regex({ name: 'm', rules: [{ state: 'start_state', regex: 'x', nextState: 'cont' }] }), /nextState 'cont' is no rule's state/],
    ['a bad rule regex', () => FluentBitMultilineParser.regex({ name: 'm', rules: [{ state: 'start_state', regex: '/(a/', nextState: 'start_state' }] }), /rules\[0\].regex "\/\(a\/" is not a valid regular expression/],
    ['a rule regex ending in a backslash', () => FluentBitMultilineParser.regex({ name: 'm', rules: [{ state: 'start_state', regex: 'a\\\\', nextState: 'start_state' }] }), /ends with '\\'/],
    ['no rules', () => FluentBitMultilineParser.regex({ name: 'm', rules: [] }), /rules is empty/],
  ])('refuses %s', (_what, build, message) => {
    expect(build).toThrow(message);
  });

  test.each([
    // Onigmo (Ruby) syntax JS lacks, rewritten before the JS compile check
    ['atomic group', '(?>a+)b'],
    ['possessive quantifier', 'a++b'],
    ['inline option', '(?i)error'],
    ['option group', '(?i:warn|error)'],
    ['anchors and \\h', '\\A\\h+\\z'],
    ['POSIX bracket', '[[:alpha:]]+'],
    ['quoted group name', "(?'level'[A-Z]+)"],
    ['a repeated group name', '(?<v>a)|(?<v>b)'],
    ['delimiters and flags', '/^error/i'],
    ['a comment', 'a(?#note)b'],
    ['a nested repeat (Onigmo warns only)', 'a**'],
    ['a back reference by name', '(?<q>["\'])(?<v>.*)\\k<q>'],
    ['escaped colon (common in fluent-bit configs)', '\\d+\\:\\d+'],
    ['stock nginx regex', '^(?<remote>[^ ]*) (?<host>[^ ]*) (?<user>[^ ]*) \\[(?<time>[^\\]]*)\\] "(?<method>\\S+)(?: +(?<path>[^\\"]*?)(?: +\\S*)?)?" (?<code>[^ ]*) (?<size>[^ ]*)(?: "(?<referer>[^\\"]*)" "(?<agent>[^\\"]*)")'],
  ])('accepts Onigmo syntax: %s', (_what, regex) => {
    expect(() => checkRegex('p', undefined, 'regex', regex)).not.toThrow();
  });
});
