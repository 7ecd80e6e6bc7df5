#!/usr/bin/env bash
# The infrastructure-as-code exports, checked by the ecosystem's own tools:
#   1. cfn-lint over every CloudFormation export (each example contract, with every example
#      config in examples/aws/: the gateway binding with either transport; both stacks, and the
#      Lambda durable functions release stack): zero errors, zero warnings; and a template broken on
#      purpose must fail it, so the lint is seen to bite;
#   2. the stacks deployed on moto's CloudFormation (scripts/iac-moto.py).
#   scripts/iac-check.sh ZIP     (the functions' zip from scripts/lambda-package.sh)
# Needs moto running (TPF_SFN_MOTO_ENDPOINT, as scripts/test.sh sets it) and installs nothing
# itself beyond what scripts/moto.sh installs (moto, boto3, cfn-lint).
set -euo pipefail
cd "$(dirname "$0")/.."

zip="${1:?usage: $0 ZIP}"
endpoint="${TPF_SFN_MOTO_ENDPOINT:?start moto first (scripts/moto.sh start)}"
scripts/moto.sh install
export PYTHONPATH="$PWD/.tools/moto"
# TPF_SFN_BIN: the command line the test command built. Otherwise it is built the way the test
# suite builds it (dev-dependency features included), so right after `cargo test` this reuses
# that build instead of compiling the AWS SDK a second time.
if [ -n "${TPF_SFN_BIN:-}" ]; then
  tpf_sfn="$TPF_SFN_BIN"
else
  cargo test --quiet -p tpf-sfn --no-run
  tpf_sfn="${CARGO_TARGET_DIR:-target}/debug/tpf-sfn"
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

templates=()
for contract in examples/contracts/*.pipeline-contract.json; do
  name=$(basename "$contract" .pipeline-contract.json)
  for config in examples/aws/*.tpf-sfn.toml; do
    dir="$out/$name-$(basename "$config" .tpf-sfn.toml)"
    if ! "$tpf_sfn" compile "$contract" --config "$config" --out "$dir" \
      --emit cloudformation --emit terraform >/dev/null 2>"$out/err"; then
      # Contracts the compiler rejects must say why with a coded error.
      grep -q 'error\[' "$out/err" || { echo "$contract: rejected without a coded error" >&2; cat "$out/err" >&2; exit 1; }
      echo "refused as expected, with a coded error: $name ($(grep -m1 -o 'error\[[A-Z0-9_]*\]' "$out/err" | tr -d '[]' | sed 's/^error//'))"
      continue
    fi
    templates+=("$dir/cloudformation.json" "$dir/wake-path/cloudformation.json")
    # The Lambda durable functions backend's release stack, from the same inputs.
    if ! "$tpf_sfn" compile "$contract" --config "$config" --out "$dir-durable" \
      --backend lambda-durable --emit cloudformation --emit terraform >/dev/null 2>"$out/err"; then
      grep -q 'error\[' "$out/err" || { echo "$contract: durable rejected without a coded error" >&2; cat "$out/err" >&2; exit 1; }
      echo "refused as expected, with a coded error: $name [lambda-durable] ($(grep -m1 -o 'error\[[A-Z0-9_]*\]' "$out/err" | tr -d '[]' | sed 's/^error//'))"
      continue
    fi
    templates+=("$dir-durable/cloudformation.json")
    durable_template="$dir-durable/cloudformation.json"
  done
done
python3 .tools/moto/bin/cfn-lint --format parseable -- "${templates[@]}"
echo "cfn-lint $(python3 .tools/moto/bin/cfn-lint --version | cut -d' ' -f2): ${#templates[@]} templates, no errors, no warnings"

broken="$out/broken.json"
python3 - "${templates[1]}" "$broken" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
del t["Resources"]["Relay"]["Properties"]["Role"]
t["Resources"]["CallbackBindingTable"]["Properties"]["BillingMode"] = "ON_DEMAND"
json.dump(t, open(sys.argv[2], "w"))
PY
if python3 .tools/moto/bin/cfn-lint -- "$broken" >/dev/null; then
  echo "cfn-lint passed a template without the relay's role: the lint cannot fail" >&2
  exit 1
fi
echo "cfn-lint refuses a broken wake-path template"

python3 - "${durable_template:?no durable release stack was compiled}" "$broken" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
# Longer than the service allows an execution to live.
t["Resources"]["Driver"]["Properties"]["DurableConfig"]["ExecutionTimeout"] = 40000000
json.dump(t, open(sys.argv[2], "w"))
PY
if python3 .tools/moto/bin/cfn-lint -- "$broken" >/dev/null; then
  echo "cfn-lint passed a durable function living longer than a year: the lint cannot check DurableConfig" >&2
  exit 1
fi
echo "cfn-lint refuses a broken durable release template"

python3 scripts/iac-moto.py "$endpoint" "$tpf_sfn" "$zip"
