#!/usr/bin/env bash
# Runs cargo-zigbuild (cargo with zig as the C compiler and linker), installing it and zig from
# PyPI into .tools/zig on first use:
#
#   scripts/zigbuild.sh zigbuild|test ... --target x86_64-unknown-linux-gnu.2.34
#
# A target written with a glibc version (`.2.34`) links against that glibc whatever the build
# machine runs: Amazon Linux 2023's, which Lambda's `provided.al2023` runtime has. Both the
# shipped zip (scripts/lambda-package.sh) and the test command's build (scripts/test.sh) go
# through here, so the functions the tests run are linked as the ones that ship.
set -euo pipefail
cd "$(dirname "$0")/.."

tools="$PWD/.tools/zig"
if [ ! -x "$tools/bin/cargo-zigbuild" ]; then
  command -v python3 >/dev/null || { echo "python3 is required to install cargo-zigbuild" >&2; exit 1; }
  echo "installing cargo-zigbuild and zig into $tools" >&2
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --target "$tools" \
    'cargo-zigbuild==0.24.0' 'ziglang==0.15.2' >&2
fi
rustup target list --installed 2>/dev/null | grep -qx x86_64-unknown-linux-gnu ||
  rustup target add x86_64-unknown-linux-gnu >&2

# cargo-zigbuild finds zig through the ziglang module on PYTHONPATH.
PYTHONPATH="$tools${PYTHONPATH:+:$PYTHONPATH}" exec "$tools/bin/cargo-zigbuild" "$@"
