#!/usr/bin/env bash
# The compose stack of deploy/compose (run by scripts/lib/image-test.sh; IMAGE, BASE and CONTAINERS_CONF set):
# brought up with podman-compose from the image just built, with a Redis image built on the same base (no registry
# here; the compose file's default is redis:7), then an SDK client's task through its gateway; torn down on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

project="tg-image-compose-$$"
log="$(mktemp)"
compose() { podman-compose --no-ansi -f deploy/compose/compose.yaml -p "$project" "$@"; }
cleanup() {
  local code=$?
  compose down --volumes --timeout 0 >/dev/null 2>&1 || true
  # podman-compose 1.0 leaves the project's network behind.
  podman network rm --force "${project}_default" >/dev/null 2>&1 || true
  rm -f "$log"
  if [ "$code" -ne 0 ]; then echo "compose test FAILED" >&2; fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() {
  echo "compose test: $*" >&2
  compose logs >&2 || true
  exit 1
}

# Debian's redis-server on the base, built once per base.
redis_image="localhost/taskgate-redis:${BASE##*:}"
if ! podman image exists "$redis_image"; then
  podman build --network host --build-arg "BASE=$BASE" -f scripts/lib/redis.Containerfile -t "$redis_image" \
    scripts/lib >"$log" 2>&1 || {
    cat "$log" >&2
    fail "building $redis_image"
  }
fi

port="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
export TASKGATE_IMAGE="$IMAGE" TASKGATE_REDIS_IMAGE="$redis_image" TASKGATE_PORT="$port"
export TASKGATE_TOKEN="compose-token-$RANDOM$RANDOM"
# podman-compose 1.0 has no --profile: the optional bridge is started by naming it.
compose up --detach redis gateway worker bridge >"$log" 2>&1 || {
  cat "$log" >&2
  fail "podman-compose up"
}
for _ in $(seq 1 300); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null; then break; fi
  sleep 0.2
done
curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" || fail "the compose gateway not ready on 127.0.0.1:$port"
node --import tsx scripts/lib/image-client.ts "http://127.0.0.1:$port" "$TASKGATE_TOKEN" render_report ||
  fail "the SDK client's task through the compose gateway"
echo "ok - compose stack (podman-compose): redis, gateway, worker and bridge up; a task created and its result read"
