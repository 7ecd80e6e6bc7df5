#!/usr/bin/env bash
# The whole test suite: what CI runs and what the README's test command runs.
# It installs what the tests need (asl-validator from npm) into .tools/ and fails loudly when a
# tool cannot be had; nothing is skipped silently.
set -euo pipefail
cd "$(dirname "$0")/.."

# Tests reach nothing but loopback; keep AWS SDK chains away from instance metadata.
export AWS_EC2_METADATA_DISABLED=true
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

step() { printf '\n==> %s\n' "$*"; }

step "format"
cargo fmt --all -- --check

step "lint"
cargo clippy --workspace --all-targets --quiet -- -D warnings

step "unit, snapshot, golden and property tests"
INSTA_UPDATE=no cargo test --workspace --quiet

step "second opinion: asl-validator over every compiled definition"
scripts/asl-second-opinion.sh

echo
echo "all checks passed"
