#!/usr/bin/env bash
# Builds the Lambda functions (the gateway host, the relay, the durable driver: one binary) for Lambda's
# `provided.al2023` runtime and zips it as Lambda takes it: a `bootstrap` at the zip's root.
#
#   scripts/lambda-package.sh [OUT.zip]     default: target/lambda/tpf-sfn-lambda.zip
#
# LAMBDA_BOOTSTRAP names a binary already built for that target (the test command's, which its
# own build links through scripts/zigbuild.sh as this script does); it is zipped as it is.
# Without it the `lambda` profile (optimised, symbols stripped: what ships) is built.
#
# The binary is linked against glibc 2.34, Amazon Linux 2023's, whatever the build machine
# runs: cargo-zigbuild with zig as the linker (scripts/zigbuild.sh installs both from PyPI).
# scripts/lambda-check.py then proves it needs no newer glibc symbol and answers Lambda's
# runtime API. Upload the zip to the S3 bucket the wake-path stack's CodeS3Bucket names.
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-target/lambda/tpf-sfn-lambda.zip}"
target=x86_64-unknown-linux-gnu
if [ -n "${LAMBDA_BOOTSTRAP:-}" ]; then
  binary="$LAMBDA_BOOTSTRAP"
  [ -f "$binary" ] || { echo "LAMBDA_BOOTSTRAP names no file: $binary" >&2; exit 1; }
else
  scripts/zigbuild.sh zigbuild --profile lambda --locked -p tpf-sfn-lambda --target "$target.2.34" >&2
  binary="${CARGO_TARGET_DIR:-target}/$target/lambda/tpf-sfn-lambda"
fi
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
