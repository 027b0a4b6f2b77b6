/**
 * The docs hold together: every relative link of README.md, CONTRIBUTING.md and docs/*.md resolves (the file
 * exists; an anchor names a heading of the target, slugged as GitHub slugs it), every guide has a Contents list
 * of its sections, and the README stays a landing page that links every guide.
 */
import * as fs from 'fs';
import * as path from 'path';
import { REPO } from '../util/paths';

const ROOT = REPO;
const GUIDES = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`);
const FILES = ['README.md', 'CONTRIBUTING.md', ...GUIDES];

/** The lines of a markdown file outside fenced code blocks, with their line numbers. */
function prose(file: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence = false;
  fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n').forEach((text, i) => {
    if (/^\s*```/.test(text)) fence = !fence;
    else if (!fence) out.push({ text, line: i + 1 });
  });
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens; repeats get -1, -2, … */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/<[^>]+>/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { text } of prose(file)) {
    const h = /^#{1,6} (.*)$/.exec(text);
    for (const a of text.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(a[1]);
    if (!h) continue;
    const base = slug(h[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** Relative links of a file: [text](target), code spans left out. */
function linksOf(file: string): { target: string; line: number }[] {
  const out: { target: string; line: number }[] = [];
  for (const { text, line } of prose(file)) {
    const withoutCode = text.replace(/`[^`]*`/g, '');
    for (const m of withoutCode.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^(https?:|mailto:)/.test(m[1])) continue;
      out.push({ target: m[1], line });
    }
  }
  return out;
}

describe.each(FILES)('%s', (file) => {
  test('every relative link resolves, anchors included', () => {
    const broken: string[] = [];
    for (const { target, line } of linksOf(file)) {
      const [p, anchor] = target.split('#');
      const resolved = p === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), p));
      if (!fs.existsSync(path.join(ROOT, resolved))) {
        broken.push(`${file}:${line}: ${target} (no ${resolved})`);
        continue;
      }
      if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) {
        broken.push(`${file}:${line}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });

  test('a Contents list naming each of its sections, in order', () => {
    const lines = prose(file).map((l) => l.text);
    const sections = lines.filter((l) => /^## /.test(l) && l !== '## Contents').map((l) => l.slice(3));
    const start = lines.indexOf('## Contents');
    expect(start).toBeGreaterThan(-1);
    const listed: string[] = [];
    for (const l of lines.slice(start + 1)) {
      if (l.startsWith('## ')) break;
      const m = /^- \[.*\]\(#([^)]+)\)$/.exec(l);
      if (m) listed.push(m[1]);
    }
    expect(listed).toEqual(sections.map(slug));
  });
});

describe('README.md, the landing page', () => {
  const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

  test('stays short: under 400 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(400);
  });

  test('links every guide of docs/', () => {
    const linked = new Set(linksOf('README.md').map((l) => l.target.split('#')[0]));
    expect(GUIDES.filter((g) => !linked.has(g))).toEqual([]);
  });

  test('the guides\' opening examples come first: each guide has a snippet before its Contents', () => {
    const late = GUIDES.filter((g) => {
      const text = fs.readFileSync(path.join(ROOT, g), 'utf8');
      const contents = text.indexOf('\n## Contents');
      const example = text.search(/\n```(ts|bash|yaml|text)\n/);
      return example < 0 || example > contents;
    });
    expect(late).toEqual([]);
  });
});

test('the doc comments\' links to the guides (API.md, the alerts\' runbook_url) name pages and headings that exist', () => {
  const files = (dir: string): string[] => fs.readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
  const broken: string[] = [];
  let seen = 0;
  for (const file of files(path.join(ROOT, 'src'))) {
    for (const m of fs.readFileSync(file, 'utf8').matchAll(/github\.com\/maintainers\/cdk8s-node-agents\/blob\/main\/((?:docs\/)?[\w-]+\.md)(?:#([\w-]+))?/g)) {
      seen++;
      const where = `${path.relative(ROOT, file)}: ${m[0]}`;
      if (!fs.existsSync(path.join(ROOT, m[1]))) broken.push(`${where} (no ${m[1]})`);
      else if (m[2] !== undefined && !anchorsOf(m[1]).has(m[2])) broken.push(`${where} (no heading #${m[2]})`);
    }
  }
  expect(seen).toBeGreaterThanOrEqual(12);
  expect(broken).toEqual([]);
});

test('every TypeScript snippet is marked for .ci/doc-snippets.sh (app, chart, or skip with a reason)', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { collect } = require('../../.ci/doc-snippets.js');
  const { snippets, problems } = collect();
  expect(problems).toEqual([]);
  expect(snippets.length).toBeGreaterThanOrEqual(15);
});
