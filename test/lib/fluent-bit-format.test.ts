import * as fc from 'fast-check';
import {
  entryValue,
  entryValues,
  findSections,
  parseClassicConfig,
  renderClassicConfig,
} from '../../src/fluent-bit/classic-format';

describe('classic-mode writer', () => {
  test('renders headers, aligned keys and a trailing newline', () => {
    const text = renderClassicConfig([
      { name: 'SERVICE', entries: [{ key: 'Flush', value: '1' }, { key: 'HTTP_Server', value: 'On' }] },
      { name: 'OUTPUT', entries: [{ key: 'Name', value: 'stdout' }] },
    ], ['generated']);
    expect(text).toBe([
      '# generated',
      '',
      '[SERVICE]',
      '    Flush       1',
      '    HTTP_Server On',
      '',
      '[OUTPUT]',
      '    Name stdout',
      '',
    ].join('\n'));
  });

  test.each([
    ['line break in a value', { key: 'Path', value: 'a\nb' }, /line break/],
    ['empty value', { key: 'Path', value: ' ' }, /empty value/],
    ['surrounding whitespace', { key: 'Path', value: ' x' }, /whitespace/],
    ['space in a key', { key: 'Bad Key', value: 'x' }, /must match/],
  ])('rejects %s', (_what, entry, message) => {
    expect(() => renderClassicConfig([{ name: 'INPUT', entries: [entry] }])).toThrow(message);
  });

  test('rejects an unknown section name', () => {
    expect(() => renderClassicConfig([{ name: 'INPUTS', entries: [] }])).toThrow(/unknown section \[INPUTS\]/);
  });
});

describe('classic-mode parser', () => {
  test('reads sections, repeated keys, comments and directives', () => {
    const parsed = parseClassicConfig([
      '# comment',
      '@SET a=b',
      '[INPUT]',
      '    Name            systemd',
      '    Systemd_Filter  _SYSTEMD_UNIT=kubelet.service',
      '    # inner comment',
      '    Systemd_Filter  _SYSTEMD_UNIT=containerd.service',
      '',
      '[output]',
      '\tName stdout',
      '\tMatch *',
    ].join('\n'));
    expect(parsed.directives).toEqual(['@SET a=b']);
    expect(parsed.sections.map((s) => [s.name, s.line])).toEqual([['INPUT', 3], ['OUTPUT', 9]]);
    const [input, output] = parsed.sections;
    expect(entryValues(input, 'systemd_filter')).toEqual(['_SYSTEMD_UNIT=kubelet.service', '_SYSTEMD_UNIT=containerd.service']);
    expect(() => entryValue(input, 'Systemd_Filter')).toThrow(/appears 2 times/);
    expect(entryValue(output, 'MATCH')).toBe('*');
    expect(entryValue(output, 'Missing')).toBeUndefined();
    expect(findSections(parsed, 'input', 'SYSTEMD')).toHaveLength(1);
    expect(findSections(parsed, 'OUTPUT')).toHaveLength(1);
  });

  test('keeps everything after the key as the value', () => {
    const [section] = parseClassicConfig('[INPUT]\n    multiline.parser   docker, cri  \n').sections;
    expect(section.entries).toEqual([{ key: 'multiline.parser', value: 'docker, cri' }]);
  });

  test.each([
    ['an entry before any section', '    Name tail\n', /outside any \[SECTION\]/],
    ['an unindented entry', '[INPUT]\nName tail\n', /must be indented/],
    ['a key without value', '[INPUT]\n    Name\n', /has no value/],
    ['an unknown section', '[INPUTS]\n    Name tail\n', /unknown section/],
    ['an indented header', '  [INPUT]\n', /must not be indented/],
    ['an unknown directive', '@IMPORT x\n', /unknown directive/],
  ])('rejects %s', (_what, text, message) => {
    expect(() => parseClassicConfig(text)).toThrow(message);
  });

  test('parse(render(x)) gives x back for any writable sections', () => {
    const key = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_.-]{0,20}$/);
    const value = fc.stringMatching(/^[!-~]([ -~]{0,30}[!-~])?$/).filter((v) => !v.startsWith('#'));
    const section = fc.record({
      name: fc.constantFrom('SERVICE', 'INPUT', 'FILTER', 'OUTPUT'),
      entries: fc.array(fc.record({ key, value }), { maxLength: 8 }),
    });
    fc.assert(fc.property(fc.array(section, { maxLength: 6 }), (sections) => {
      const parsed = parseClassicConfig(renderClassicConfig(sections));
      expect(parsed.sections.map((s) => ({ name: s.name, entries: s.entries }))).toEqual(sections);
    }));
  });
});
