#!/usr/bin/env bash
# Builds the Lambda functions (the gateway host, the relay, the durable driver: one binary) for Lambda's
# `provided.al2023` runtime and zips it as Lambda takes it: a `bootstrap` at the zip's root.
#
#   scripts/lambda-package.sh [OUT.zip]     default: target/lambda/tpf-sfn-lambda.zip
#
# LAMBDA_PROFILE picks the cargo profile: `lambda` (the default: optimised, what ships) or
# `lambda-check` (the test command's: the same code optimised less, for a shorter first build).
#
# The binary is linked against glibc 2.34, Amazon Linux 2023's, whatever the build machine
# runs: cargo-zigbuild with zig as the linker (both from PyPI, installed into .tools/zig).
# scripts/lambda-check.py then proves it needs no newer glibc symbol and answers Lambda's
# runtime API. Upload the zip to the S3 bucket the wake-path stack's CodeS3Bucket names.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-target/lambda/tpf-sfn-lambda.zip}"
tools="$PWD/.tools/zig"
target=x86_64-unknown-linux-gnu
glibc=2.34
profile="${LAMBDA_PROFILE:-lambda}"
case "$profile" in
  lambda | lambda-check) ;;
  *) echo "LAMBDA_PROFILE is \`$profile\`: lambda or lambda-check" >&2; exit 2 ;;
esac
target_dir="${CARGO_TARGET_DIR:-target}"

if [ ! -x "$tools/bin/cargo-zigbuild" ]; then
  command -v python3 >/dev/null || { echo "python3 is required to install cargo-zigbuild" >&2; exit 1; }
  echo "installing cargo-zigbuild and zig into $tools" >&2
  PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --target "$tools" \
    'cargo-zigbuild==0.24.0' 'ziglang==0.15.2' >&2
fi
rustup target list --installed 2>/dev/null | grep -qx "$target" || rustup target add "$target" >&2

# cargo-zigbuild finds zig through the ziglang module on PYTHONPATH.
PYTHONPATH="$tools${PYTHONPATH:+:$PYTHONPATH}" "$tools/bin/cargo-zigbuild" zigbuild \
  --profile "$profile" --locked -p tpf-sfn-lambda --target "$target.$glibc" >&2

binary="$target_dir/$target/$profile/tpf-sfn-lambda"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp "$binary" "$stage/bootstrap"
chmod 755 "$stage/bootstrap"
mkdir -p "$(dirname "$out")"
rm -f "$out"
# Absolute, so the zip lands where asked whether OUT was given relative or absolute.
out_abs="$(cd "$(dirname "$out")" && pwd)/$(basename "$out")"
# Python's zipfile keeps the executable bit Lambda needs; no zip tool required.
(cd "$stage" && python3 - "$out_abs" <<'PY'
import os, sys, zipfile
info = zipfile.ZipInfo("bootstrap", date_time=(1980, 1, 1, 0, 0, 0))
info.external_attr = (0o100755 & 0xFFFF) << 16
info.compress_type = zipfile.ZIP_DEFLATED
with open("bootstrap", "rb") as f, zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr(info, f.read())
PY
)
echo "$out"
