/**
 * The CLI the docs show exists: every `node-agents <command> … --flag` in README.md and docs/*.md (code blocks and
 * inline code, continued lines included), and every flag quoted on its own (`--flag`) on a command's page
 * docs/cli-<command>.md, is a flag that command's --help lists. Run from the package's bin, as a user runs it.
 * And every output the docs quote under `<!-- cli-output -->` is what the command of the ```bash block before it
 * prints now (run in a temporary directory holding examples/ and the docs' `<!-- cli-file: NAME -->` blocks).
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO } from '../util/paths';

const ROOT = REPO;
const FILES = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const COMMANDS = ['coverage', 'label', 'estimate', 'plan', 'doctor', 'size'];
/** Flags of other programs quoted on the command pages, beside node-agents' own. */
const NOT_NODE_AGENTS = new Set(['--raw', '--previous', '--max-old-space-size', '--cascade', '--strategy', '--resource', '--take-ownership', '--register-with-taints', '--startup-taint', '--metric-labels-allowlist', '--yes', '--package']);

const bin = (): string => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  return path.join(ROOT, typeof pkg.bin === 'string' ? pkg.bin : pkg.bin['node-agents']);
};

const helpCache = new Map<string, string>();
function help(command: string): string {
  if (!helpCache.has(command)) {
    const r = spawnSync(process.execPath, [bin(), command, '--help'], { encoding: 'utf8' });
    helpCache.set(command, `${r.stdout}\n${r.stderr}`);
  }
  return helpCache.get(command)!;
}

interface Use { where: string; command: string; flag: string }

/** Each flag given to a node-agents command in the docs. */
function uses(): Use[] {
  const out: Use[] = [];
  for (const file of FILES) {
    const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      // a command line, with its continuation lines (trailing backslash)
      let text = line;
      for (let j = i; lines[j]?.trimEnd().endsWith('\\') && j + 1 < lines.length; j++) text += ` ${lines[j + 1]}`;
      for (const m of text.matchAll(/node-agents (coverage|label|estimate|plan|doctor|size)\b([^`|]*)/g)) {
        const args = m[2].replace(/#.*$/, '');
        for (const f of args.matchAll(/(?<![\w-])(--[a-z][a-z-]*)/g)) out.push({ where: `${file}:${i + 1}`, command: m[1], flag: f[1] });
      }
      // a flag quoted on its own on a command's page
      const page = /^docs\/cli-(\w+)\.md$/.exec(file)?.[1];
      if (page && COMMANDS.includes(page)) {
        for (const f of line.matchAll(/`(--[a-z][a-z-]*)(?: [^`]*)?`/g)) {
          if (!NOT_NODE_AGENTS.has(f[1])) out.push({ where: `${file}:${i + 1}`, command: page, flag: f[1] });
        }
      }
    });
  }
  return out;
}

const found = uses();

test('the docs give the commands flags (the check is not empty)', () => {
  expect(new Set(found.map((u) => u.command))).toEqual(new Set(COMMANDS));
});

test.each(COMMANDS)('node-agents %s: every flag the docs give it is in its --help', (command) => {
  const text = help(command);
  expect(text).toContain(`node-agents ${command}`);
  const missing = found.filter((u) => u.command === command && u.flag !== '--help' && !new RegExp(`(^|[\\s,(])${u.flag}(?![\\w-])`, 'm').test(text));
  expect(missing.map((u) => `${u.where}: node-agents ${u.command} ${u.flag}`)).toEqual([]);
});

interface Fence { lang: string; text: string; line: number; marker: string }

/** The fenced blocks of a markdown file, each with the comment line before it (blank lines skipped). */
function fences(file: string): Fence[] {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const out: Fence[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    let j = i - 1;
    while (j >= 0 && lines[j].trim() === '') j--;
    out.push({ lang: open[1], text: lines.slice(i + 1, end).join('\n'), line: i + 1, marker: j >= 0 ? lines[j].trim() : '' });
    i = end;
  }
  return out;
}

interface Quoted { where: string; args: string[]; output: string; files: Map<string, string> }

function quotedOutputs(): Quoted[] {
  const out: Quoted[] = [];
  for (const file of FILES) {
    const blocks = fences(file);
    const files = new Map<string, string>();
    blocks.forEach((b, i) => {
      const named = /^<!-- cli-file: ([\w.-]+) -->$/.exec(b.marker);
      if (named) files.set(named[1], `${b.text}\n`);
      if (b.marker !== '<!-- cli-output -->') return;
      const command = blocks[i - 1];
      const lines = (command?.lang === 'bash' ? command.text : '').replace(/\\\n/g, ' ').split('\n').map((l) => l.replace(/\s+#.*$/, '').trim());
      const runs = lines.filter((l) => l.startsWith('node-agents '));
      out.push({ where: `${file}:${b.line}`, args: runs.length === 1 ? runs[0].split(/\s+/).slice(1) : [], output: b.text, files: new Map(files) });
    });
  }
  return out;
}

const quoted = quotedOutputs();

test('the docs quote command output (the check is not empty)', () => {
  expect(quoted.length).toBeGreaterThanOrEqual(5);
});

test.each(quoted.map((q) => [q.where, q] as const))('%s: the quoted output is what the command prints now', (_, q) => {
  expect({ where: q.where, oneCommandBefore: q.args.length > 0 }).toEqual({ where: q.where, oneCommandBefore: true });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-cli-'));
  try {
    fs.symlinkSync(path.join(ROOT, 'examples'), path.join(dir, 'examples'));
    for (const [name, text] of q.files) fs.writeFileSync(path.join(dir, name), text);
    const r = spawnSync(process.execPath, [bin(), ...q.args], { cwd: dir, encoding: 'utf8' });
    expect(r.stdout.replace(/\s+$/, '')).toBe(q.output.replace(/\s+$/, ''));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
