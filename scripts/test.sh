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
  [ -z "${emulators_pid:-}" ] || kill -- "-$emulators_pid" 2>/dev/null || true
  [ -z "${side_a:-}" ] || kill -- "-$side_a" 2>/dev/null || true
  [ -z "${side_b:-}" ] || kill -- "-$side_b" 2>/dev/null || true
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

# The test build is linked as the Lambda functions ship: cargo-zigbuild, for
# x86_64-unknown-linux-gnu with glibc 2.34 (Amazon Linux 2023's, Lambda's `provided.al2023`),
# whatever this machine runs. So the `tpf-sfn-lambda` bootstrap it builds is the one the durable
# end-to-end tests run and the one the zip checks below take: the Lambda target's dependencies
# are compiled once, for the tests, instead of once more in a Lambda build of its own (that
# build was a first run's second-largest step). What ships is still built by
# scripts/lambda-package.sh in its optimised `lambda` profile; every check here holds at any
# optimisation level.
triple=x86_64-unknown-linux-gnu
zig_target="$triple.2.34"
build_dir="$(mkdir -p "${CARGO_TARGET_DIR:-target}" && cd "${CARGO_TARGET_DIR:-target}" && pwd)/$triple/debug"
export TPF_SFN_LAMBDA_BOOTSTRAP="$build_dir/tpf-sfn-lambda"
export TPF_SFN_BIN="$build_dir/tpf-sfn"
lambda_zip="${CARGO_TARGET_DIR:-target}/lambda/tpf-sfn-lambda.zip"

step "snapshot check: a snapshot no test produces is reported"
scripts/unreferenced-snapshots.sh --self-test

# The lint is clippy's lints run while the workspace's crates are compiled for the tests
# (clippy-driver as the workspace's rustc wrapper, what `cargo clippy` itself does for a check),
# so the dependencies are compiled once, for the tests, instead of once more for a check.
# The same lints, -D warnings, over every crate and target (--all-targets: benches and
# examples too). The tests below run with the same wrapper, so nothing is compiled twice.
step "lint and build: every crate and target compiled for the tests with clippy's lints"
clippy_driver="$(dirname "$(rustup which cargo 2>/dev/null || command -v cargo)")/clippy-driver"
[ -x "$clippy_driver" ] || clippy_driver=$(command -v clippy-driver) ||
  { echo "clippy-driver not found: rustup component add clippy" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER="$clippy_driver"
# clippy-driver's arguments, as `cargo clippy -- -D warnings` passes them.
export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
# Not --quiet: the longest build of the run names each crate as it compiles.
scripts/zigbuild.sh test --workspace --all-targets --no-run --locked --target "$zig_target"

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

step "Lambda functions: the test build's bootstrap zipped as Lambda takes it"
LAMBDA_BOOTSTRAP="$TPF_SFN_LAMBDA_BOOTSTRAP" scripts/lambda-package.sh "$lambda_zip" >/dev/null

# The checks that need only the build and moto run beside the tests, in two chains in the
# background: the tests spend most of their time waiting on the emulators' clocks (an
# execution's Wait states run in real time), and these use the cores the tests leave idle. Each
# chain records `status name` per check in its own file, keeps each check's output in a log,
# and marks its end.
# The lint of the command line without its aws feature (the main job's build) shares the
# target directory, so it starts once the tests' cargo has released that directory's lock,
# which it does when its build ends and the first test binary runs.
side_check() { # results-file log-name name command...
  local results=$1 log=$2 name=$3 rc=0
  shift 3
  "$@" >"$work/$log.log" 2>&1 || rc=$?
  echo "$rc $log $name" >>"$results"
  return 0
}
export work
export -f side_check
: >"$work/side-a"
: >"$work/side-b"
setsid bash -c '
  until grep -q "^ *Running " "$1/cargo-test.log" 2>/dev/null || [ -e "$1/tests-done" ]; do sleep 1; done
  side_check "$1/side-a" no-aws-lint "lint: the command line without its aws feature (the main job'"'"'s build)" \
    cargo clippy -p tpf-sfn --no-default-features --lib --bins --quiet -- -D warnings
  : >"$1/side-a.end"
' _ "$work" &
side_a=$!
setsid bash -c '
  side_check "$1/side-b" asl "second opinion: asl-validator over every compiled definition" scripts/asl-second-opinion.sh
  side_check "$1/side-b" lambda "Lambda functions: symbol versions, runtime API" python3 scripts/lambda-check.py "$2"
  side_check "$1/side-b" iac "exports: cfn-lint over every stack, deployed on moto'"'"'s CloudFormation" scripts/iac-check.sh "$2"
  : >"$1/side-b.end"
' _ "$work" "$lambda_zip" &
side_b=$!

# Not a counted step: its tests are counted one by one.
current=""
printf '\n==> [%4ss] %s\n' "$SECONDS" "unit, snapshot, golden, property and emulator tests (and, beside them, the checks below)"
# Not --quiet: cargo names each crate's test binary as it starts and each test as it ends.
# --no-fail-fast: one run reports every failing binary, not the first. Six test threads: most
# end-to-end tests wait on an emulator's clock, so more of them at once than there are cores
# shortens the run (docs/benchmarks.md, "The test command").
export INSTA_SNAPSHOT_REFERENCES_FILE="$work/snapshot-references"
: >"$INSTA_SNAPSHOT_REFERENCES_FILE"
set +e
INSTA_UPDATE=no RUST_TEST_THREADS="${RUST_TEST_THREADS:-6}" \
  scripts/zigbuild.sh test --workspace --no-fail-fast --locked --target "$zig_target" 2>&1 | tee "$work/cargo-test.log"
test_rc=${PIPESTATUS[0]}
set -e
: >"$work/tests-done"
count_tests "$work/cargo-test.log"
unset INSTA_SNAPSHOT_REFERENCES_FILE

printf '\n==> [%4ss] %s\n' "$SECONDS" "the checks run beside the tests"
side_rc=0
wait "$side_a" || side_rc=1
wait "$side_b" || side_rc=1
side_a="" side_b=""
while read -r rc log name; do
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "ok: $name"
  else
    failed=$((failed + 1))
    side_rc=1
    cat "$work/$log.log"
    echo "FAILED: $name (exit $rc); its output is above"
  fi
done < <(cat "$work/side-a" "$work/side-b")
# A chain that ended before its last check (killed: side_check itself never fails) is a
# failure too.
for chain in side-a side-b; do
  [ -e "$work/$chain.end" ] || { echo "FAILED: background chain $chain ended early" >&2; failed=$((failed + 1)); side_rc=1; }
done

if [ "$test_rc" -ne 0 ]; then
  echo
  echo "FAILED: cargo test (exit $test_rc); the failing tests are named above"
  grep -E '^test .* \.\.\. FAILED$|^error(\[E[0-9]+\])?: ' "$work/cargo-test.log" || true
  [ "$failed" -gt 0 ] || failed=1
  exit "$test_rc"
fi
[ "$side_rc" -eq 0 ] || exit 1

step "snapshots: every stored snapshot is produced by a test"
scripts/unreferenced-snapshots.sh "$work/snapshot-references"

echo
echo "all checks passed in ${SECONDS}s"
