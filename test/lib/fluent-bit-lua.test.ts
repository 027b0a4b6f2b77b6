/**
 * Lua scripts are parsed at synthesis, in the dialect fluent-bit's lua filter runs: fluent-bit 5.1.1
 * bundles LuaJIT (lib/luajit-7152e154, FLB_LUAJIT) and loads the script with luaL_loadbuffer /
 * luaL_loadfile (src/flb_luajit.c, flb_luajit_load_buffer / flb_luajit_load_script); a syntax error
 * there makes plugins/filter_lua/lua.c cb_lua_pre_run / cb_lua_init fail, and fluent-bit does not
 * start. It then looks the `call` function up as a global (flb_lua_is_valid_func: "function cb is
 * not found"). Both seen with the built 5.1.1 binary; a function of 2 parameters, by contrast,
 * starts (get_callback_args only picks the 3- or 5-argument form), so no count is refused.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { FluentBitConfigOptions, generateFluentBitConfig } from '../../src/fluent-bit/config';
import { FluentBitFilter } from '../../src/fluent-bit/filters';
import { FluentBitOutput } from '../../src/fluent-bit/outputs';
import { ValidationError } from '../../src/validation/errors';

const good = 'function cb(tag, ts, record)\n  record["env"] = "prod"\n  return 1, ts, record\nend';

describe('luaInline', () => {
  test.each([
    ['a block left open', 'function cb(tag, ts, record)\n  if record.x then\n    return 1, ts, record\nend',
      'FluentBitFilter.luaInline: code is not Lua that fluent-bit\'s LuaJIT loads: line 4, column 4: \'end\' expected near \'<eof>\''],
    ['Lua 5.3 integer division, which LuaJIT has not', 'function cb(tag, ts, record)\n  record.n = record.n // 2\n  return 1, ts, record\nend',
      'FluentBitFilter.luaInline: code is not Lua that fluent-bit\'s LuaJIT loads: line 2, column'],
    ['Lua 5.4 attributes', 'local limit <const> = 5\nfunction cb(tag, ts, record) return 1, ts, record end',
      'FluentBitFilter.luaInline: code is not Lua that fluent-bit\'s LuaJIT loads: line 1, column'],
  ])('refuses %s, naming the factory, the prop and the line', (_what, code, message) => {
    let error: unknown;
    try {
      FluentBitFilter.luaInline({ code, call: 'cb' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toContain(message);
    expect((error as Error).message).toContain('fluent-bit\'s lua filter would fail at start on every node');
  });

  test('accepts LuaJIT\'s own syntax: goto and labels, \\x and \\z escapes, 64-bit integer literals', () => {
    const code = 'function cb(tag, ts, record)\n  local n = 1LL\n  if record.skip then goto done end\n  record.s = "\\x41\\z\n   b"\n  ::done::\n  return 1, ts, record\nend';
    expect(() => FluentBitFilter.luaInline({ code, call: 'cb' })).not.toThrow();
  });

  test.each([
    // flb_lua_is_valid_func reads a global: a local function is not found
    ['a local function', 'local function cb(tag, ts, record) return 1, ts, record end', /defines no global function cb/],
    ['a method of a table', 'M = {}\nfunction M.cb(tag, ts, record) return 1, ts, record end', /defines no global function cb/],
    ['a function defined only inside another', 'function setup()\n  cb = function(tag, ts, record) return 1, ts, record end\nend', /defines no global function cb/],
  ])('refuses %s as the call', (_what, code, message) => {
    expect(() => FluentBitFilter.luaInline({ code, call: 'cb' })).toThrow(message);
  });

  test('accepts the call as a global assignment, a function of 5 parameters, a variadic one', () => {
    expect(() => FluentBitFilter.luaInline({ code: 'function cb(...) return 0 end', call: 'cb' })).not.toThrow();
    expect(() => FluentBitFilter.luaInline({ code: 'cb = function(tag, ts, record) return 1, ts, record end', call: 'cb' })).not.toThrow();
    expect(() => FluentBitFilter.luaInline({ code: 'function cb(tag, ts, group, metadata, record) return 1, ts, metadata, record end', call: 'cb' })).not.toThrow();
    expect(() => FluentBitFilter.luaInline({ code: good, call: 'cb' })).not.toThrow();
  });
});

describe('luaFile', () => {
  test('a syntax error names the file and its line', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lua-'));
    const file = path.join(dir, 'redact.lua');
    fs.writeFileSync(file, 'function redact(tag, ts, record)\n  record.log = string.gsub(record.log, "x", "y"\n  return 1, ts, record\nend\n');
    try {
      expect(() => FluentBitFilter.luaFile({ file, call: 'redact' }))
        .toThrow(`FluentBitFilter.luaFile: file ${JSON.stringify(file)} is not Lua that fluent-bit's LuaJIT loads: line 3, column 3: ')' expected near 'return'`);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });
});

describe('extraConfig lua filters with inline code', () => {
  const base: FluentBitConfigOptions = { stateDir: '/var/lib/lc', collectorName: 'lc', collectorNamespace: 'obs', outputs: [FluentBitOutput.stdout()] };
  test('a syntax error in `code` is refused with the section\'s line', () => {
    const extraConfig = '[FILTER]\n    Name lua\n    Match *\n    call cb\n    code function cb(tag, ts, record) return 1, ts, record';
    expect(() => generateFluentBitConfig({ ...base, extraConfig }))
      .toThrow('extraConfig [FILTER] at line 1: code (line 5) is not Lua that fluent-bit\'s LuaJIT loads: line 1, column');
  });
  test('valid code passes', () => {
    const extraConfig = '[FILTER]\n    Name lua\n    Match *\n    call cb\n    code function cb(tag, ts, record) return 1, ts, record end';
    expect(() => generateFluentBitConfig({ ...base, extraConfig })).not.toThrow();
  });
});
