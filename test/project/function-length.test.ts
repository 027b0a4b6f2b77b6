/**
 * A function fits on a screen: no function, method or arrow function in src/ (generated files aside)
 * is longer than MAX_LINES, counted from its first line to its closing brace.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { REPO } from '../util/paths';

const SRC = path.join(REPO, 'src');
const MAX_LINES = 120;

function sourceFiles(dir = SRC): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') && !e.name.endsWith('.generated.ts') ? [full] : [];
  });
}

/** Every function-like node with a body in `text`, as its name, first line and length in lines. */
export function functionLengths(file: string, text: string): Array<{ name: string; line: number; lines: number }> {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: Array<{ name: string; line: number; lines: number }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const named = (node as { name?: ts.Node }).name
        ?? (ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent) ? node.parent.name : undefined);
      const name = named ? named.getText(sf) : ts.isConstructorDeclaration(node) ? 'constructor' : '(anonymous)';
      found.push({ name, line: first + 1, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

test(`no function in src/ is longer than ${MAX_LINES} lines`, () => {
  const long = sourceFiles().flatMap((file) => functionLengths(file, fs.readFileSync(file, 'utf8'))
    .filter((f) => f.lines > MAX_LINES)
    .map((f) => `${path.relative(SRC, file)}:${f.line} ${f.name}: ${f.lines} lines`));
  expect(long).toEqual([]);
});

test('the count sees every kind of function and its whole body', () => {
  const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
  const text = [
    `function a() {\n${body(3)}\n}`,
    `class C {\n  constructor() {\n${body(2)}\n  }\n  m() {\n${body(1)}\n  }\n}`,
    `const f = () => {\n${body(4)}\n};`,
  ].join('\n');
  expect(functionLengths('x.ts', text).map((f) => `${f.name} ${f.lines}`)).toEqual(['a 5', 'constructor 4', 'm 3', 'f 6']);
});
