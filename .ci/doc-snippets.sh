#!/usr/bin/env bash
# Every TypeScript snippet of README.md and docs/*.md, run against the packed package (dist/js/*.tgz) in a new
# temporary directory: installed from the tarball, type-checked, run; quoted output compared with what it writes.
# How a snippet is marked (app, chart fragment, or skipped with a reason): see .ci/doc-snippets.js.
# Only the npm registry is needed. A docs edit that breaks a snippet, or a code change that breaks one, fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/packed-tarball.sh
tarball="$(packed_tarball doc-snippets)"
node .ci/doc-snippets.js "$tarball" "$@"
