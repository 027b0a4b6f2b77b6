/**
 * The CLI the docs show exists: every `node-agents <command> … --flag` in README.md and docs/*.md (code blocks and
 * inline code, continued lines included), and every flag quoted on its own (`--flag`) on a command's page
 * docs/cli-<command>.md, is a flag that command's --help lists. Run from the package's bin, as a user runs it.
 */
import { spawnSync } from 'child_process';
import * as fs from 'fs';
import * as path from 'path';

const ROOT = path.join(__dirname, '..');
const FILES = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const COMMANDS = ['coverage', 'label', 'estimate', 'plan', 'doctor'];
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
      for (const m of text.matchAll(/node-agents (coverage|label|estimate|plan|doctor)\b([^`|]*)/g)) {
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
