#!/usr/bin/env bash
# Follows the README's "Use it in your cdk8s app" literally, in a new temporary directory, against the packed
# package (dist/js/*.tgz) instead of the registry's: every block marked `<!-- quickstart:run -->` is run line by
# line (the one change: `cdk8s-node-agents` in an `npm install` line becomes the tarball), every block marked
# `<!-- quickstart:file NAME -->` is written to NAME. Then dist/ must hold the example's DaemonSets, and
# main.ts must run under `ts-node --transpile-only` as well (the tsconfig is read there too).
# Only the npm registry is needed. A README edit that breaks the steps fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/packed-tarball.sh
tarball="$(packed_tarball readme-quickstart)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The steps, as a script: files first in README order, commands in README order.
node - "$tarball" "$work" > "$work/.steps.sh" <<'NODE'
const fs = require('fs');
const [tarball, work] = process.argv.slice(2);
const readme = fs.readFileSync('README.md', 'utf8');
const start = readme.indexOf('## Use it in your cdk8s app');
const end = readme.indexOf('\n## ', start + 1);
if (start < 0 || end < 0) throw new Error('README: section "## Use it in your cdk8s app" not found');
const section = readme.slice(start, end);
const marker = /<!-- quickstart:(run|file ([^\s>]+)) -->\s*\n```[a-z]*\n([\s\S]*?)```/g;
const quote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;
const out = ['set -euxo pipefail', `cd ${quote(work)}`];
let m;
let steps = 0;
while ((m = marker.exec(section)) !== null) {
  steps++;
  if (m[1] === 'run') {
    for (const line of m[3].split('\n')) {
      const command = line.replace(/\s+#.*$/, '').trim();
      if (command === '') continue;
      out.push(/^npm (install|i)\b/.test(command) ? command.replace(/(^|\s)cdk8s-node-agents(?=\s|$)/, `$1${quote(tarball)}`) : command);
    }
  } else {
    const name = m[2];
    if (!/^[A-Za-z0-9._-]+$/.test(name)) throw new Error(`README: bad quickstart file name ${name}`);
    out.push(`cat > ${quote(name)} <<'QUICKSTART_EOF'\n${m[3]}QUICKSTART_EOF`);
  }
}
if (steps < 4) throw new Error(`README: only ${steps} quickstart blocks found in "Use it in your cdk8s app"`);
console.log(out.join('\n'));
NODE

echo "== the README's consumer steps, in $work"
bash "$work/.steps.sh"
echo "== the same app under ts-node --transpile-only (no type-check: TypeScript 6's config errors still stop it)"
(cd "$work" && rm -rf dist && npx ts-node --transpile-only main.ts)
echo "== the synthesized example"
ls "$work/dist"
for name in log-collector node-exporter; do
  if ! grep -q "^  name: $name\$" "$work"/dist/*.yaml; then
    echo "readme-quickstart: DaemonSet $name missing from the README example's output" >&2
    exit 1
  fi
done
echo "README quick start passed"
