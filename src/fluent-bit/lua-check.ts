/**
 * Lua scripts of the lua filter, parsed at synthesis in the dialect fluent-bit runs them in.
 *
 * fluent-bit 5.1.1 bundles LuaJIT (lib/luajit-7152e154, built with FLB_LUAJIT) and loads a
 * script with luaL_loadbuffer or luaL_loadfile (src/flb_luajit.c); a syntax error makes
 * plugins/filter_lua/lua.c cb_lua_init fail ("error loading buffer"), and fluent-bit stops at
 * start on every node. The parser is luaparse in its LuaJIT mode: Lua 5.1 plus what LuaJIT adds
 * (goto and labels, `\x`, `\z` and `\u{}` escapes, `LL`/`ULL`/`i` number suffixes), and none of
 * Lua 5.3/5.4's syntax LuaJIT refuses (`//`, bitwise operators, `<const>`).
 *
 * After loading, cb_lua_init looks the `call` function up as a global (flb_lua_is_valid_func) and
 * stops at start without one ("function cb is not found", seen with the built 5.1.1 binary, for a
 * `local function` too). Its parameter count only picks the calling form (get_callback_args: 5
 * arguments with 5 or more named parameters, else 3), so no count is refused.
 *
 * Pure module: no cdk8s imports.
 */
import * as luaparse from 'luaparse';

/** Why fluent-bit's LuaJIT would not load `code`: the 1-based line and column and luaparse's message; undefined when it parses. */
export interface LuaSyntaxProblem {
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** The parsed chunk, or the syntax problem. */
export function parseLua(code: string): { chunk: luaparse.Chunk } | { problem: LuaSyntaxProblem } {
  try {
    return { chunk: luaparse.parse(code, { luaVersion: 'LuaJIT', locations: false, comments: false, scope: false }) };
  } catch (e) {
    const err = e as Error & { line?: number; column?: number };
    if (!(e instanceof SyntaxError) || typeof err.line !== 'number') throw e;
    // luaparse's columns are 0-based; its message starts with "[line:column] ".
    return { problem: { line: err.line, column: (err.column ?? 0) + 1, message: err.message.replace(/^\[\d+:\d+\] /, '') } };
  }
}

/** "is not Lua that ... loads: line L, column C: <message>; ..." for a script named `what`, or undefined when it parses. */
export function luaSyntaxProblem(what: string, code: string): string | undefined {
  const parsed = parseLua(code);
  if (!('problem' in parsed)) return undefined;
  const p = parsed.problem;
  return `${what} is not Lua that fluent-bit's LuaJIT loads: line ${p.line}, column ${p.column}: ${p.message}; `
    + 'fluent-bit\'s lua filter would fail at start on every node ("error loading buffer"). Fix the script.';
}

/**
 * Why `call` is not a function fluent-bit can call in the chunk: no global function of that name
 * defined at the top level (`function cb(…)` or `cb = function(…)`). Undefined when there is one.
 */
export function luaCallProblem(chunk: luaparse.Chunk, call: string, what: string): string | undefined {
  if (definesGlobalFunction(chunk, call)) return undefined;
  return `${what} defines no global function ${call}; fluent-bit looks the call up as a global and would fail at start `
    + `("function ${call} is not found"). Define it (function ${call}(tag, timestamp, record) … end, not local) or fix call.`;
}

/** Whether a top-level statement defines the global function `name`. */
function definesGlobalFunction(chunk: luaparse.Chunk, name: string): boolean {
  return chunk.body.some((statement) => (statement.type === 'FunctionDeclaration' && !statement.isLocal
    && statement.identifier?.type === 'Identifier' && statement.identifier.name === name)
    || (statement.type === 'AssignmentStatement' && statement.variables.some((v, i) => v.type === 'Identifier' && v.name === name
      && statement.init[i]?.type === 'FunctionDeclaration')));
}
