#!/usr/bin/env bash
# Installs AWS's durable execution emulator (dex-local-runner, from the Python testing SDK) and
# cargo-lambda (its `watch` serves the Lambda runtime API the emulator invokes) into .tools/dex,
# for the durable backend's end-to-end tests (adapter/tpf-sfn/tests/e2e_durable.rs) and
# `tpf-sfn dev --backend lambda-durable`, which find them there.
#   scripts/dex.sh install
# Fails loudly when they cannot be had; nothing is skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

dir=.tools/dex
spec="aws-durable-execution-sdk-python-testing==1.4.0 cargo-lambda==1.9.2"

install() {
  if [ ! -x "$dir/bin/dex-local-runner" ] || [ ! -x "$dir/bin/cargo-lambda" ] ||
    [ "$(cat "$dir/.spec" 2>/dev/null)" != "$spec" ]; then
    command -v python3 >/dev/null || { echo "python3 is required for the durable emulator" >&2; exit 1; }
    echo "installing the durable execution emulator into $dir" >&2
    rm -rf "$dir"
    # shellcheck disable=SC2086 # the spec is a list of requirements
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --target "$dir" $spec >&2
    echo "$spec" >"$dir/.spec"
  fi
  PYTHONPATH="$dir" python3 "$dir/bin/dex-local-runner" --help >/dev/null
  "$dir/bin/cargo-lambda" lambda --help >/dev/null
}

case "${1:-}" in
  install) install ;;
  *) echo "usage: $0 install" >&2; exit 2 ;;
esac
