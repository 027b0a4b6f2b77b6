# Sourced by the CI scripts that install the packed package: `packed_tarball NAME` prints the absolute path of the one
# dist/js/*.tgz (`npx projen package` writes it), or fails naming the script NAME and what it found.
packed_tarball() {
  local found
  found=$(shopt -s nullglob; set -- dist/js/*.tgz; echo "$#")
  if [ "$found" -ne 1 ]; then
    echo "$1: expected one dist/js/*.tgz (run npx projen package first), found $found" >&2
    return 1
  fi
  (shopt -s nullglob; set -- dist/js/*.tgz; printf '%s\n' "$(pwd)/$1")
}
