#!/usr/bin/env bash
# The Python, Java, .NET and Go bindings (jsii targets in package.json, set in .projenrc.ts), from the compiled
# assembly (.jsii and lib/: run after `npx projen compile`). CI reaches the npm and Debian registries only, so
# jsii-pacmak generates each language's code without building it (--code-only: building needs pip's, Maven's,
# NuGet's and Go's registries), then each language's syntax is checked with what the machine has:
#   Python: python3 -m compileall (byte-compiles every module);
#   Java:   .ci/JavaParse.java (the JDK's parser, imports left unresolved);
#   Go:     gofmt -e -l (Go's parser; Debian's golang-go is installed when gofmt is missing);
#   .NET:   generated only (no C# compiler here).
# A binding that jsii-pacmak cannot generate, or whose code does not parse, fails CI. docs/bindings.md says more.
set -euo pipefail
cd "$(dirname "$0")/.."
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION=1

if [ ! -f .jsii ] || [ ! -f lib/index.js ]; then
  echo "bindings: .jsii or lib/ missing (run npx projen compile first)" >&2
  exit 1
fi
if ! command -v gofmt >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends golang-go >/dev/null
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

echo "== jsii-pacmak --code-only: python, java, dotnet, go"
npx jsii-pacmak --code-only --no-fingerprint --force-subdirectory --outdir "$out" \
  --target python --target java --target dotnet --target go

# every target wrote its package under its own folder
python_pkg="$out/python/src/cdk8s_node_agents/__init__.py"
java_dir="$out/java/src/main/java/io/github/maintainers/cdk8s/nodeagents"
dotnet_dir="$out/dotnet/Cdk8sNodeAgents"
go_dir="$out/go/cdk8snodeagents"
for want in "$python_pkg" "$java_dir" "$dotnet_dir" "$go_dir/go.mod"; do
  if [ ! -e "$want" ]; then
    echo "bindings: jsii-pacmak wrote no ${want#"$out"/}" >&2
    exit 1
  fi
done

echo "== python: byte-compile"
python3 --version
python3 -m compileall -q "$out/python/src" >/dev/null
echo "python: $(find "$out/python/src" -name '*.py' | wc -l) modules compiled"

echo "== java: parse"
java -version 2>&1 | sed -n 1p
java .ci/JavaParse.java "$out/java/src"

echo "== go: parse"
go version
# gofmt exits non-zero on a parse error (naming the file and line); the files it would reformat are not judged
# (jsii-pacmak formats Go code only when it builds the module)
gofmt -e -l "$go_dir" >/dev/null
echo "go: $(find "$go_dir" -name '*.go' | wc -l) files parsed"

echo "== dotnet: generated only"
echo "dotnet: $(find "$dotnet_dir" -name '*.cs' | wc -l) files generated (no C# compiler here)"

echo "bindings generated for python, java, dotnet and go"
