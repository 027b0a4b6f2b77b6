#!/usr/bin/env bash
# The README's two clone commands, as a new contributor runs them: a `git clone` of this checkout into an empty
# temporary folder (nothing beside the clone), then each command of the README's "Working from a clone" block, read
# from README.md, in the clone. Fails if a command fails, or if the clone's test run executed fewer tests
# than the main run did (test-reports/junit.xml of this checkout: run after the build).
set -euo pipefail
cd "$(dirname "$0")/.."

# executed tests of a jest-junit report: tests minus skipped
executed() {
  node -e '
    const xml = require("fs").readFileSync(process.argv[1], "utf8");
    const m = /<testsuites[^>]*tests="(\d+)"/.exec(xml);
    if (!m) throw new Error(`${process.argv[1]}: no <testsuites tests=...>`);
    console.log(Number(m[1]) - (xml.match(/<skipped/g) || []).length);
  ' "$1"
}

[ -f test-reports/junit.xml ] || { echo "fresh-clone: test-reports/junit.xml is missing: run the tests first" >&2; exit 1; }
main_tests=$(executed test-reports/junit.xml)

# The first ```bash block under "## Working from a clone"; every line that is not a comment is a command.
commands=$(node -e '
  const readme = require("fs").readFileSync("README.md", "utf8");
  const start = readme.indexOf("\n## Working from a clone");
  if (start < 0) throw new Error("README.md: no \"## Working from a clone\" section");
  const end = readme.indexOf("\n## ", start + 1);
  const block = /```bash\n([\s\S]*?)```/.exec(readme.slice(start, end < 0 ? undefined : end));
  if (!block) throw new Error("README.md: no ```bash block in Working from a clone");
  const lines = block[1].split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
  if (lines.length !== 2) throw new Error(`README.md: Working from a clone has ${lines.length} commands, not 2`);
  console.log(lines.join("\n"));
')

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --quiet --no-hardlinks . "$work/clone"
echo "== a fresh clone of $(git rev-parse --short HEAD) in $work/clone, nothing beside it: $(ls -A "$work")"

n=0
while IFS= read -r command; do
  n=$((n + 1))
  echo "== clone command $n: $command"
  start=$(date +%s)
  (cd "$work/clone" && bash -euo pipefail -c "$command")
  echo "== command $n passed in $(( $(date +%s) - start )) s"
done <<< "$commands"

clone_tests=$(executed "$work/clone/test-reports/junit.xml")
echo "== tests executed: main run $main_tests, fresh clone $clone_tests"
if [ "$clone_tests" -lt "$main_tests" ]; then
  echo "fresh-clone: the clone's test run executed $clone_tests tests, fewer than the main run's $main_tests" >&2
  exit 1
fi
echo "fresh clone passed"
