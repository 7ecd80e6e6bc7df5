#!/usr/bin/env bash
# The whole test suite: what CI runs and what the README's test command runs.
# It installs what the tests need (moto, cfn-lint and cargo-zigbuild from PyPI, the durable
# execution emulator and cargo-lambda from PyPI through scripts/dex.sh, asl-validator from npm)
# into .tools/ and fails loudly when a tool cannot be had; nothing is skipped silently.
set -euo pipefail
cd "$(dirname "$0")/.."

# Tests reach nothing but loopback; keep AWS SDK chains away from instance metadata.
export AWS_EC2_METADATA_DISABLED=true
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Each step says when it starts (seconds since the run began), so a slow step shows where it is.
step() { printf '\n==> [%4ss] %s\n' "$SECONDS" "$*"; }

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "AWS emulator (moto) on 127.0.0.1"
export TPF_SFN_MOTO_ENDPOINT
TPF_SFN_MOTO_ENDPOINT=$(scripts/moto.sh start)
trap 'scripts/moto.sh stop' EXIT
# AWS clients in tests get an explicit endpoint, region and static credentials; these keep any
# code path that still consults the default chain on loopback with fake credentials.
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

step "durable execution emulator (dex-local-runner) and cargo-lambda"
scripts/dex.sh install

step "unit, snapshot, golden, property and emulator tests"
# Not --quiet: cargo names each crate's test binary as it starts and each test as it ends.
# --no-fail-fast: one run reports every failing binary, not the first.
INSTA_UPDATE=no cargo test --workspace --no-fail-fast

step "second opinion: asl-validator over every compiled definition"
scripts/asl-second-opinion.sh

step "Lambda functions: built for provided.al2023 (glibc 2.34), symbol versions, runtime API"
lambda_zip=$(scripts/lambda-package.sh)
python3 scripts/lambda-check.py "$lambda_zip"

step "exports: cfn-lint over every stack, deployed on moto's CloudFormation"
scripts/iac-check.sh "$lambda_zip"

echo
echo "all checks passed in ${SECONDS}s"
