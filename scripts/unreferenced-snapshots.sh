#!/usr/bin/env bash
# Every snapshot file in the tree must be one a test asserted. insta appends the path of each
# snapshot it asserts to the file named by INSTA_SNAPSHOT_REFERENCES_FILE; after a whole
# `cargo test --workspace` run, a `.snap` file missing from that list is stale: no test produces
# it any more, so it pins nothing and would only mislead a reader.
#   scripts/unreferenced-snapshots.sh REFERENCES    names the stale ones, exits 1 if any
#   scripts/unreferenced-snapshots.sh --self-test   the check must catch a stray snapshot
set -euo pipefail
cd "$(dirname "$0")/.."

# Prints the snapshots under ROOT that REFERENCES does not name, relative to ROOT.
unreferenced() {
  local root refs
  root=$(cd "$1" && pwd)
  refs=$2
  comm -23 \
    <(cd "$root" && find . \( -path ./target -o -path ./.tools -o -path ./.git \) -prune -o \
      -name '*.snap' -type f -print | sed 's|^\./||' | LC_ALL=C sort) \
    <(while IFS= read -r path; do
      [ -z "$path" ] || realpath -m --relative-to="$root" "$path"
    done <"$refs" | LC_ALL=C sort -u)
}

self_test() {
  local tmp stray
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp/tree/crate/tests/snapshots" "$tmp/tree/target/debug"
  : >"$tmp/tree/crate/tests/snapshots/kept.snap"
  : >"$tmp/tree/crate/tests/snapshots/stray.snap"
  : >"$tmp/tree/target/debug/built.snap"
  echo "$tmp/tree/crate/tests/snapshots/kept.snap" >"$tmp/refs"
  stray=$(unreferenced "$tmp/tree" "$tmp/refs")
  if [ "$stray" != "crate/tests/snapshots/stray.snap" ]; then
    echo "the unreferenced-snapshot check found '$stray' instead of the one stray snapshot" >&2
    return 1
  fi
  echo "the unreferenced-snapshot check names a stray snapshot and nothing else"
}

case "${1:-}" in
  --self-test) self_test ;;
  "") echo "usage: $0 REFERENCES | --self-test" >&2; exit 2 ;;
  *)
    [ -s "$1" ] || { echo "$1: no snapshot was asserted; was the whole test suite run?" >&2; exit 1; }
    stale=$(unreferenced . "$1")
    if [ -n "$stale" ]; then
      echo "snapshots no test produces (delete them, or restore the test that made them):" >&2
      echo "$stale" | sed 's/^/  /' >&2
      exit 1
    fi
    echo "every stored snapshot ($(sort -u "$1" | wc -l) of them) was produced by a test"
    ;;
esac
