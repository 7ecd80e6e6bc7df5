#!/usr/bin/env bash
# Second opinion on ASL definitions: runs the asl-validator npm package (pinned) on each file.
# Installs it under .tools/npm (gitignored) on first use. Exits non-zero if any file is invalid.
#
# usage: scripts/asl-validator.sh FILE...
set -euo pipefail

VERSION="4.0.0"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.tools/npm"
BIN="$PREFIX/node_modules/.bin/asl-validator"

if [ "$#" -eq 0 ]; then
    echo "usage: $0 FILE..." >&2
    exit 2
fi

installed_version() {
    node -p "require('$PREFIX/node_modules/asl-validator/package.json').version" 2>/dev/null || true
}

if [ ! -x "$BIN" ] || [ "$(installed_version)" != "$VERSION" ]; then
    if ! command -v npm >/dev/null 2>&1; then
        echo "error: npm is not installed; it is needed to install asl-validator@$VERSION" >&2
        exit 2
    fi
    echo "installing asl-validator@$VERSION into $PREFIX" >&2
    npm install --prefix "$PREFIX" --no-audit --no-fund --silent "asl-validator@$VERSION" >&2
fi

status=0
for file in "$@"; do
    if [ ! -f "$file" ]; then
        echo "error: $file: no such file" >&2
        status=1
        continue
    fi
    if "$BIN" --json-path "$file"; then
        echo "ok: $file"
    else
        echo "INVALID: $file" >&2
        status=1
    fi
done
exit "$status"
