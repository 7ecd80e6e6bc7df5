#!/usr/bin/env bash
# Compiles every example contract with the embedded default configuration and with every
# example configuration in examples/aws/ (the gateway binding on either transport, the scheduled
# sweep), and runs AWS's community validator (asl-validator, npm) over each definition as a
# second opinion next to our own validator.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v npm >/dev/null || { echo "npm is required to install asl-validator" >&2; exit 1; }
validator=.tools/npm/node_modules/.bin/asl-validator
if [ ! -x "$validator" ]; then
  npm install --silent --no-audit --no-fund --prefix .tools/npm asl-validator@4.0.0
fi

# TPF_SFN_BIN: the command line the test command built. Otherwise it is built the way the test
# suite builds it (dev-dependency features included), so right after `cargo test` this reuses
# that build instead of compiling the AWS SDK a second time.
if [ -n "${TPF_SFN_BIN:-}" ]; then
  bin="$TPF_SFN_BIN"
else
  cargo test --quiet -p tpf-sfn --no-run
  bin="${CARGO_TARGET_DIR:-target}/debug/tpf-sfn"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

count=0
args=()
for contract in examples/contracts/*.pipeline-contract.json; do
  name=$(basename "$contract" .pipeline-contract.json)
  for config in default examples/aws/*.tpf-sfn.toml; do
    label=$(basename "$config" .tpf-sfn.toml)
    out="$work/$name-$label"
    config_args=()
    [ "$config" = default ] || config_args=(--config "$config")
    if ! "$bin" compile "$contract" "${config_args[@]}" --out "$out" >/dev/null 2>"$work/err"; then
      # Contracts the compiler rejects must say why with a coded error.
      grep -q 'error\[' "$work/err" || { echo "$contract: rejected without a coded error" >&2; cat "$work/err" >&2; exit 1; }
      echo "refused as expected, with a coded error: $name [$label] ($(grep -m1 -o 'error\[[A-Z0-9_]*\]' "$work/err" | tr -d '[]' | sed 's/^error//'))"
      continue
    fi
    for def in "$out"/*.asl.json; do
      args+=(--json-path "$def")
      count=$((count + 1))
    done
  done
done
[ "$count" -gt 0 ] || { echo "no definitions were checked" >&2; exit 1; }
# One node process for every definition: it names each one valid or invalid and exits non-zero
# if any is invalid. Starting node once per file cost about two seconds each.
if ! "$validator" "${args[@]}" >"$work/verdicts" 2>&1; then
  grep -v '^✓' "$work/verdicts" >&2
  echo "asl-validator rejects a definition (above)" >&2
  exit 1
fi
valid=$(grep -c '^✓' "$work/verdicts" || true)
[ "$valid" -eq "$count" ] || { echo "asl-validator judged $valid of $count definitions" >&2; cat "$work/verdicts" >&2; exit 1; }
echo "asl-validator: $count definitions valid"
