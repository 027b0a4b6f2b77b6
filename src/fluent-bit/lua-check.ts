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
 * refuses one whose parameter count is neither 3 nor 5 (get_callback_args, debug.getinfo's nparams).
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
 * defined at the top level, or one of other than 3 or 5 parameters. Undefined when it is fine.
 */
export function luaCallProblem(chunk: luaparse.Chunk, call: string, what: string): string | undefined {
  const params = globalFunctionParams(chunk, call);
  if (params === undefined) {
    return `${what} defines no global function ${call}; fluent-bit looks the call up as a global and would fail at start `
      + `("function ${call} is not found"). Define it (function ${call}(tag, timestamp, record) … end, not local) or fix call.`;
  }
  if (params !== 3 && params !== 5) {
    return `function ${call} takes ${params} parameters; fluent-bit calls it with 3 (tag, timestamp, record) or 5 `
      + '(tag, timestamp, group, metadata, record) and refuses any other count at start ("invalid number of arguments").';
  }
  return undefined;
}

/** The parameter count of the last top-level global definition of `name` (`function name(...)` or `name = function(...)`). */
function globalFunctionParams(chunk: luaparse.Chunk, name: string): number | undefined {
  let params: number | undefined;
  for (const statement of chunk.body) {
    if (statement.type === 'FunctionDeclaration' && !statement.isLocal
      && statement.identifier?.type === 'Identifier' && statement.identifier.name === name) {
      params = namedParams(statement.parameters);
    } else if (statement.type === 'AssignmentStatement') {
      statement.variables.forEach((v, i) => {
        const init = statement.init[i];
        if (v.type === 'Identifier' && v.name === name && init?.type === 'FunctionDeclaration') params = namedParams(init.parameters);
      });
    }
  }
  return params;
}

/** debug.getinfo's nparams: the named parameters (`...` is not one). */
function namedParams(parameters: readonly (luaparse.Identifier | luaparse.VarargLiteral)[]): number {
  return parameters.filter((p) => p.type === 'Identifier').length;
}
