#!/usr/bin/env node
/*
 * Every ```ts block of README.md and docs/*.md, run against the packed package (dist/js/*.tgz) in a new
 * directory, as a user would: installed from the tarball, type-checked with tsc, run with node.
 *
 * The comment on the last non-blank line before a ```ts block says what the block is:
 *   <!-- snippet: app -->           a complete app: run as it is (README's <!-- quickstart:file main.ts --> too)
 *   <!-- snippet: chart -->         a fragment with `chart` in scope: wrapped in an app that imports every
 *                                   export of the library, App/Chart/ApiObject/JsonPatch/Duration/Size from
 *                                   cdk8s and cdk8s-plus-28 as kplus
 *   <!-- snippet: skip REASON -->   not run, for the reason given (a REASON is required)
 * A ```ts block without one of these fails. Before any fenced block, <!-- snippet-file: PATH --> writes the
 * block to PATH beside the snippet before it (else the next one) in the same file (a Lua script a filter reads).
 * Before a fenced block that follows a run snippet, <!-- snippet-output --> makes each of its lines
 * (blank lines, `# ` comments and `...` aside) a line that must appear (trimmed, blanks collapsed) in that snippet's
 * synthesized YAML (or JSON, or .txt files it writes: dist/, or the directory the app writes).
 *
 * Usage: node .ci/doc-snippets.js TARBALL [WORKDIR]   (WORKDIR kept and its node_modules reused when given;
 * DOC_SNIPPETS_ONLY=README.md,docs/x.md runs only those files' snippets)
 */
'use strict';
const fs = require('fs');
const path = require('path');
const os = require('os');
const { execFileSync } = require('child_process');

const ROOT = path.join(__dirname, '..');

/** The markdown files whose snippets run: README.md and every docs/*.md but the incoming notes. */
function markdownFiles() {
  const docs = fs.readdirSync(path.join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => path.join('docs', f));
  const all = ['README.md', ...docs];
  // DOC_SNIPPETS_ONLY=docs/a.md,README.md: only these files (while editing them)
  const only = (process.env.DOC_SNIPPETS_ONLY || '').split(',').filter((f) => f !== '');
  return only.length > 0 ? all.filter((f) => only.includes(f)) : all;
}

/** Fenced blocks of a markdown file, each with its language, text, line and the marker comment before it. */
function blocksOf(file) {
  const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const blocks = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    let j = i - 1;
    while (j >= 0 && lines[j].trim() === '') j--;
    const marker = j >= 0 && /^<!--.*-->$/.test(lines[j].trim()) ? lines[j].trim() : '';
    blocks.push({ lang: open[1], text: lines.slice(i + 1, end).join('\n') + '\n', line: i + 1, marker });
    i = end;
  }
  return blocks;
}

/** The snippets to run, the files beside them and the outputs they must show. */
function collect() {
  const snippets = [];
  const problems = [];
  let skipped = 0;
  for (const file of markdownFiles()) {
    let pendingFiles = [];
    let last;
    for (const b of blocksOf(file)) {
      const where = `${file}:${b.line}`;
      const fileMarker = /^<!-- snippet-file: ([\w./-]+) -->$/.exec(b.marker);
      if (fileMarker) {
        if (fileMarker[1].split('/').includes('..')) problems.push(`${where}: snippet-file path ${fileMarker[1]} leaves the snippet`);
        // beside the snippet before it, else beside the next one
        (last ? last.files : pendingFiles).push({ name: fileMarker[1], text: b.text });
        continue;
      }
      if (b.marker === '<!-- snippet-output -->') {
        if (!last) problems.push(`${where}: snippet-output without a run snippet before it`);
        else last.outputs.push({ where, text: b.text });
        continue;
      }
      if (b.lang !== 'ts') continue;
      const m = /^<!-- (?:snippet: (app|chart|skip)(?: (.*?))?|quickstart:file (main\.ts)) -->$/.exec(b.marker);
      if (!m) {
        problems.push(`${where}: a \`\`\`ts block needs <!-- snippet: app -->, <!-- snippet: chart --> or <!-- snippet: skip REASON --> on the line before it`);
        continue;
      }
      const kind = m[3] ? 'app' : m[1];
      if (kind === 'skip') {
        if (!m[2] || m[2].trim().length < 5) problems.push(`${where}: snippet: skip needs a reason`);
        skipped++;
        last = undefined;
        continue;
      }
      last = { where, kind, code: b.text, files: pendingFiles, outputs: [], id: `${file.replace(/[^\w]+/g, '_')}_${b.line}` };
      pendingFiles = [];
      snippets.push(last);
    }
    if (pendingFiles.length > 0) problems.push(`${file}: snippet-file ${pendingFiles.map((f) => f.name).join(', ')} before no snippet`);
  }
  return { snippets, problems, skipped };
}

/** The names the library exports at its top level, read from its jsii assembly. */
function libraryExports(work) {
  const assembly = JSON.parse(fs.readFileSync(path.join(work, 'node_modules', 'cdk8s-node-agents', '.jsii'), 'utf8'));
  return Object.keys(assembly.types).map((fqn) => fqn.split('.')).filter((p) => p.length === 2).map((p) => p[1]).sort();
}

function wrapChart(code, names) {
  return [
    "import { ApiObject, App, Chart, Duration, JsonPatch, Size } from 'cdk8s';",
    "import * as kplus from 'cdk8s-plus-28';",
    `import { ${names.join(', ')} } from 'cdk8s-node-agents';`,
    '',
    'const app = new App();',
    "const chart = new Chart(app, 'snippet');",
    '// ---- the snippet',
    code,
    '// ---- end of the snippet',
    'app.synth();',
    // keep every import referenced so tsc's unused checks (if any) stay quiet
    'void [ApiObject, Duration, JsonPatch, Size, kplus];',
    '',
  ].join('\n');
}

function run(command, args, cwd) {
  execFileSync(command, args, { cwd, stdio: 'inherit', env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } });
}

/** A line as compared: trimmed, runs of blanks as one space (fluent-bit's config aligns its values). */
const norm = (line) => line.trim().replace(/\s+/g, ' ');

function yamlLines(dir) {
  const out = new Set();
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, e.name);
      if (e.isDirectory()) { if (e.name !== 'node_modules') walk(full); } else if (/\.(ya?ml|json|txt)$/.test(e.name)) {
        for (const l of fs.readFileSync(full, 'utf8').split('\n')) { out.add(norm(l)); out.add(norm(l).replace(/^- /, '')); }
      }
    }
  };
  walk(dir);
  return out;
}

function main() {
  const [tarball, keep] = process.argv.slice(2);
  if (!tarball) throw new Error('usage: node .ci/doc-snippets.js TARBALL [WORKDIR]');
  const { snippets, problems, skipped } = collect();
  if (problems.length > 0) {
    for (const p of problems) console.error(`doc-snippets: ${p}`);
    process.exit(1);
  }
  const work = keep ? path.resolve(keep) : fs.mkdtempSync(path.join(os.tmpdir(), 'doc-snippets-'));
  fs.mkdirSync(work, { recursive: true });
  try {
    if (!fs.existsSync(path.join(work, 'node_modules', 'cdk8s-node-agents'))) {
      fs.writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'doc-snippets', version: '0.0.0', private: true }, null, 2));
      run('npm', ['install', '--no-audit', '--no-fund', path.resolve(tarball), 'cdk8s-plus-28', 'cdk8s', 'constructs'], work);
      run('npm', ['install', '--no-audit', '--no-fund', '--save-dev', 'typescript@~6.0', '@types/node'], work);
    }
    // the README's tsconfig, with an outDir: tsc type-checks every snippet at once and emits what node runs
    fs.writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'node16', moduleResolution: 'node16', rootDir: '.', outDir: 'out', strict: true, esModuleInterop: true, skipLibCheck: true, types: ['node'] },
      include: ['snippets/**/*.ts'],
    }, null, 2));
    fs.rmSync(path.join(work, 'snippets'), { recursive: true, force: true });
    fs.rmSync(path.join(work, 'out'), { recursive: true, force: true });
    const names = libraryExports(work);
    for (const s of snippets) {
      const dir = path.join(work, 'snippets', s.id);
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'main.ts'), s.kind === 'chart' ? wrapChart(s.code, names) : s.code);
      for (const f of s.files) {
        fs.mkdirSync(path.dirname(path.join(dir, f.name)), { recursive: true });
        fs.writeFileSync(path.join(dir, f.name), f.text);
      }
    }
    console.log(`== type-checking ${snippets.length} snippets (${skipped} marked skip)`);
    try {
      run(path.join(work, 'node_modules', '.bin', 'tsc'), ['-p', work], work);
    } catch {
      console.error('doc-snippets: tsc failed on the snippets above (snippets/<file>_<line>/main.ts: the markdown file and the line of its ```ts)');
      process.exit(1);
    }
    const failed = [];
    for (const s of snippets) {
      const dir = path.join(work, 'snippets', s.id);
      const js = path.join(work, 'out', 'snippets', s.id, 'main.js');
      process.stdout.write(`== ${s.where} (${s.kind}) `);
      try {
        execFileSync(process.execPath, [js], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
      } catch (e) {
        console.log('FAILED');
        console.error(String(e.stderr || e.message).split('\n').slice(0, 20).join('\n'));
        failed.push(s.where);
        continue;
      }
      const written = yamlLines(dir);
      if (written.size <= 2) { console.log('FAILED: wrote no YAML'); failed.push(s.where); continue; }
      const missing = [];
      for (const o of s.outputs) {
        for (const line of o.text.split('\n').map(norm)) {
          if (line === '' || line === '...' || line.startsWith('# ')) continue;
          if (!written.has(line) && !written.has(line.replace(/^- /, ''))) missing.push(`${o.where}: ${line}`);
        }
      }
      if (missing.length > 0) {
        console.log('FAILED: its quoted output differs from what it writes now');
        for (const m of missing) console.error(`  not in the output: ${m}`);
        failed.push(s.where);
        continue;
      }
      console.log(`ok${s.outputs.length ? ', quoted output current' : ''}`);
    }
    if (failed.length > 0) {
      console.error(`doc-snippets: ${failed.length} of ${snippets.length} snippets failed: ${failed.join(', ')}`);
      process.exit(1);
    }
    console.log(`doc-snippets: ${snippets.length} snippets ran, ${skipped} skipped with a reason`);
  } finally {
    if (!keep) fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) main();
module.exports = { collect, blocksOf, markdownFiles };
