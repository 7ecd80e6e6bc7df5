#!/usr/bin/env bash
# Installs and runs moto (the AWS emulator) on 127.0.0.1 for the tests that need real AWS APIs.
#   scripts/moto.sh start   # installs into .tools/moto if needed, starts, enables SFN execution
#   scripts/moto.sh stop
#   scripts/moto.sh url     # prints the endpoint
#   scripts/moto.sh install # installs only (moto, boto3 and cfn-lint for scripts/iac-check.sh)
# The port comes from MOTO_PORT (default 5599). Nothing here reaches beyond loopback.
set -euo pipefail
cd "$(dirname "$0")/.."

port="${MOTO_PORT:-5599}"
dir=.tools/moto
pidfile=.tools/moto.pid
urlfile=.tools/moto.url
url="http://127.0.0.1:$port"

# CloudFormation and the services the exported stacks hold, for deploying them on moto
# (scripts/iac-check.sh); cfn-lint, which moto's CloudFormation pulls in, pinned for the lint.
spec="moto[stepfunctions,dynamodb,dynamodbstreams,sqs,cloudformation,awslambda,iam,logs,cloudwatch,s3,scheduler,events]==5.2.5 cfn-lint==1.58.0 flask flask-cors"

install() {
  if [ ! -x "$dir/bin/moto_server" ] || [ "$(cat "$dir/.spec" 2>/dev/null)" != "$spec" ]; then
    command -v python3 >/dev/null || { echo "python3 is required to run moto" >&2; exit 1; }
    echo "installing moto into $dir" >&2
    # shellcheck disable=SC2086 # the spec is a list of requirements
    PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-warn-conflicts --upgrade --target "$dir" $spec >&2
    echo "$spec" >"$dir/.spec"
  fi
}

start() {
  install
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    # Already running: report where it listens, which may not be this call's MOTO_PORT.
    cat "$urlfile" 2>/dev/null || echo "$url"
    return
  fi
  mkdir -p .tools
  MOTO_PORT="$port" PYTHONPATH="$dir" nohup python3 "$dir/bin/moto_server" -H 127.0.0.1 -p "$port" \
    >.tools/moto.log 2>&1 &
  echo $! >"$pidfile"
  for _ in $(seq 100); do
    if curl -sf "$url/moto-api/" >/dev/null 2>&1; then
      # Without this flag moto only pretends to run state machines.
      curl -sf -X POST -H 'content-type: application/json' \
        -d '{"stepfunctions":{"execute_state_machine":true}}' "$url/moto-api/config" >/dev/null
      echo "$url" >"$urlfile"
      echo "$url"
      return
    fi
    sleep 0.2
  done
  echo "moto did not start; see .tools/moto.log" >&2
  cat .tools/moto.log >&2 || true
  exit 1
}

stop() {
  if [ -f "$pidfile" ]; then
    kill "$(cat "$pidfile")" 2>/dev/null || true
    rm -f "$pidfile" "$urlfile"
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  url) cat "$urlfile" 2>/dev/null || echo "$url" ;;
  install) install ;;
  *) echo "usage: $0 start|stop|url|install" >&2; exit 2 ;;
esac
