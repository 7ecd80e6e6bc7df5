#!/usr/bin/env bash
# The whole test suite: what CI runs and what the README's test command runs.
# It installs what the tests need (moto, cfn-lint and cargo-zigbuild from PyPI, the durable
# execution emulator and cargo-lambda from PyPI through scripts/dex.sh, asl-validator from npm)
# into .tools/ and fails loudly when a tool cannot be had; nothing is skipped silently.
# Its last line is always `N passed, N failed`: every cargo test, plus one for each other check.
set -euo pipefail
cd "$(dirname "$0")/.."

# Tests reach nothing but loopback; keep AWS SDK chains away from instance metadata.
export AWS_EC2_METADATA_DISABLED=true
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

work=$(mktemp -d)
passed=0
failed=0
current=""
not_checked=()

# Each step says when it starts (seconds since the run began), so a slow step shows where it is.
# A step that is not a cargo test run counts as one check: passed when the next step starts.
step() {
  [ -z "$current" ] || passed=$((passed + 1))
  current="$*"
  printf '\n==> [%4ss] %s\n' "$SECONDS" "$current"
}

finish() {
  local rc=$?
  # A run that ends early does not leave the background Lambda build behind.
  [ -z "${lambda_pid:-}" ] || kill -- "-$lambda_pid" 2>/dev/null || true
  [ -z "${emulators_pid:-}" ] || kill -- "-$emulators_pid" 2>/dev/null || true
  scripts/moto.sh stop >/dev/null 2>&1 || true
  if [ "$rc" -eq 0 ]; then
    [ -z "$current" ] || passed=$((passed + 1))
  elif [ -n "$current" ]; then
    failed=$((failed + 1))
    echo
    echo "FAILED: $current (exit $rc)"
  fi
  rm -rf "$work"
  for what in "${not_checked[@]}"; do
    echo "NOT CHECKED: $what"
  done
  echo "done in ${SECONDS}s"
  echo "$passed passed, $failed failed"
}
trap finish EXIT

# Counts cargo's per-binary `test result:` lines into the totals.
count_tests() {
  local p f
  # `|| true`: a run that built nothing has no result lines, and grep's exit status must not
  # end the script before the failure is counted (pipefail and -e are on).
  p=$({ grep -o '^test result: [A-Za-z]*\. [0-9]* passed' "$1" || true; } | awk '{s += $4} END {print s + 0}')
  f=$({ grep -o '; [0-9]* failed;' "$1" || true; } | awk '{s += $2} END {print s + 0}')
  passed=$((passed + p))
  failed=$((failed + f))
}

# The executions recorded on AWS come from another project's repository, so they are not in
# this one; CI keeps them in a folder beside the checkout. Without them the replay cannot run,
# and the summary says so.
if [ -z "${TPF_SFN_AWS_RECORDED:-}" ] && [ -d ../shared/aws-recorded ]; then
  TPF_SFN_AWS_RECORDED=$(cd ../shared/aws-recorded && pwd)
fi
if [ -n "${TPF_SFN_AWS_RECORDED:-}" ]; then
  export TPF_SFN_AWS_RECORDED
else
  not_checked+=("the replay of Step Functions executions recorded on AWS (asl-interp's aws_recorded): set TPF_SFN_AWS_RECORDED to the recordings' folder")
fi

step "format"
cargo fmt --all -- --check

step "emulators: moto on 127.0.0.1, the durable execution emulator and cargo-lambda (installed in the background)"
# Installing them is mostly waiting on the package registries, so it runs beside the builds
# below; the tests wait for it. Its own process group, so a run that ends early stops it.
setsid bash -c 'set -e; scripts/moto.sh start >"$1"; scripts/dex.sh install' _ "$work/moto-endpoint" \
  >"$work/emulators.log" 2>&1 &
emulators_pid=$!
# AWS clients in tests get an explicit endpoint, region and static credentials; these keep any
# code path that still consults the default chain on loopback with fake credentials.
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1
export AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

# The Lambda functions' zip, built for provided.al2023 (glibc 2.34) in the background while the
# test build below runs: the two builds share no compiled unit (another target, another
# profile, their own locks), and each leaves one core idle for long stretches (a large crate
# compiles on one), so together they take less than one after the other. The tests wait for it:
# the durable end-to-end tests run this very bootstrap instead of building a debug one of
# their own. The profile is `lambda-check`: the shipped zip's code, target and glibc,
# unoptimised; what ships keeps `lambda`.
export LAMBDA_PROFILE=lambda-check
lambda_zip="${CARGO_TARGET_DIR:-target}/lambda/tpf-sfn-lambda.zip"
lambda_log="$work/lambda-build.log"
# Its own process group (setsid), so a run that ends early stops the whole build.
setsid scripts/lambda-package.sh "$lambda_zip" >/dev/null 2>"$lambda_log" &
lambda_pid=$!
export TPF_SFN_LAMBDA_BOOTSTRAP
TPF_SFN_LAMBDA_BOOTSTRAP="$(mkdir -p "${CARGO_TARGET_DIR:-target}" && cd "${CARGO_TARGET_DIR:-target}" && pwd)/x86_64-unknown-linux-gnu/$LAMBDA_PROFILE/tpf-sfn-lambda"

step "snapshot check: a snapshot no test produces is reported"
scripts/unreferenced-snapshots.sh --self-test

# The lint is clippy's lints run while the workspace's crates are compiled for the tests
# (clippy-driver as the workspace's rustc wrapper, what `cargo clippy` itself does for a check),
# so the dependencies are compiled once, for the tests, instead of once more for a check.
# The same lints, -D warnings, over every crate and target (--all-targets: benches and
# examples too). The tests below run with the same wrapper, so nothing is compiled twice.
step "lint: every crate and target compiled for the tests with clippy's lints, then the command line without its aws feature"
clippy_driver="$(dirname "$(rustup which cargo 2>/dev/null || command -v cargo)")/clippy-driver"
[ -x "$clippy_driver" ] || clippy_driver=$(command -v clippy-driver) ||
  { echo "clippy-driver not found: rustup component add clippy" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
# clippy-driver's arguments, as `cargo clippy -- -D warnings` passes them.
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# Not --quiet: the longest build of the run names each crate as it compiles.
cargo test --workspace --all-targets --no-run
# The main job's build (README): the command line without the AWS SDK.
cargo clippy -p tpf-sfn --no-default-features --lib --bins --quiet -- -D warnings

step "emulators ready (started before the builds)"
if ! wait "$emulators_pid"; then
  cat "$work/emulators.log" >&2
  echo "installing or starting the emulators failed; the output is above" >&2
  exit 1
fi
emulators_pid=""
export TPF_SFN_MOTO_ENDPOINT
TPF_SFN_MOTO_ENDPOINT=$(cat "$work/moto-endpoint")
echo "moto at $TPF_SFN_MOTO_ENDPOINT"

step "Lambda functions: built for provided.al2023 (glibc 2.34), profile lambda-check (started before the test build)"
if ! wait "$lambda_pid"; then
  cat "$lambda_log" >&2
  echo "the Lambda build failed; its output is above" >&2
  exit 1
fi
lambda_pid=""
grep -E '^ *Finished' "$lambda_log" || true

# Not a counted step: its tests are counted one by one.
current=""
printf '\n==> [%4ss] %s\n' "$SECONDS" "unit, snapshot, golden, property and emulator tests"
# Not --quiet: cargo names each crate's test binary as it starts and each test as it ends.
# --no-fail-fast: one run reports every failing binary, not the first.
export INSTA_SNAPSHOT_REFERENCES_FILE="$work/snapshot-references"
: >"$INSTA_SNAPSHOT_REFERENCES_FILE"
set +e
INSTA_UPDATE=no cargo test --workspace --no-fail-fast 2>&1 | tee "$work/cargo-test.log"
test_rc=${PIPESTATUS[0]}
set -e
count_tests "$work/cargo-test.log"
unset INSTA_SNAPSHOT_REFERENCES_FILE
if [ "$test_rc" -ne 0 ]; then
  echo
  echo "FAILED: cargo test (exit $test_rc); the failing tests are named above"
  grep -E '^test .* \.\.\. FAILED$|^error(\[E[0-9]+\])?: ' "$work/cargo-test.log" || true
  [ "$failed" -gt 0 ] || failed=1
  exit "$test_rc"
fi

step "snapshots: every stored snapshot is produced by a test"
scripts/unreferenced-snapshots.sh "$work/snapshot-references"

step "second opinion: asl-validator over every compiled definition"
scripts/asl-second-opinion.sh

step "Lambda functions: symbol versions, runtime API"
python3 scripts/lambda-check.py "$lambda_zip"

step "exports: cfn-lint over every stack, deployed on moto's CloudFormation"
scripts/iac-check.sh "$lambda_zip"

echo
echo "all checks passed in ${SECONDS}s"
