#!/usr/bin/env bash
# `bash scripts/image --test` (run by scripts/image after the build; IMAGE, VERSION, BASE and CONTAINERS_CONF set):
# the image run as the chart runs it. A private redis-server; a gateway, a worker with the example tools and a
# bridge as containers with the chart's environment (helm template), a read-only root, a tmpfs on /tmp, user
# 10001 and the host network on loopback ports. Then an SDK client's task through the gateway, `taskgate
# --version`, the chart's `helm test` command, SIGTERM (exit 0 within the drain timeout) and `podman diff` (nothing
# written outside /tmp); then the compose stack of deploy/compose with podman-compose and the same task.
# Every container and process it starts is removed on exit, failed or not.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/lib/ensure-deps.sh
source scripts/lib/tools.sh
ensure_redis_server
ensure_helm
HELM="$TASKGATE_TOOLS_DIR/bin/helm"

work="$(mktemp -d)"
run_id="tg-image-$$"
containers=()
redis_pid=""
cleanup() {
  local code=$?
  if [ "${#containers[@]}" -gt 0 ]; then podman rm --force --time 0 "${containers[@]}" >/dev/null 2>&1 || true; fi
  if [ -n "$redis_pid" ]; then kill "$redis_pid" 2>/dev/null || true; fi
  rm -rf "$work"
  if [ "$code" -ne 0 ]; then echo "image test FAILED" >&2; fi
  exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

fail() {
  echo "image test: $*" >&2
  exit 1
}
pass() { echo "ok - $*"; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
client() { node --import tsx scripts/lib/image-client.ts "$@"; }
# Waits until <url> answers 200 (or the container <name> stops).
wait_ready() {
  local url="$1" name="$2" i
  for i in $(seq 1 300); do
    if curl -fsS -o /dev/null "$url" 2>/dev/null; then return 0; fi
    if [ "$(podman inspect --format '{{.State.Running}}' "$name")" != true ]; then
      podman logs "$name" >&2 || true
      fail "$name stopped before it was ready"
    fi
    sleep 0.2
  done
  podman logs "$name" >&2 || true
  fail "$name not ready at $url after 60 s"
}

redis_port="$(free_port)"
gateway_port="$(free_port)"
worker_port="$(free_port)"
bridge_port="$(free_port)"
redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --maxmemory-policy noeviction \
  --dir "$work" >"$work/redis.log" 2>&1 &
redis_pid=$!
until redis-cli -p "$redis_port" ping >/dev/null 2>&1; do sleep 0.1; done

# The chart's environment for each container, rendered for this machine's loopback ports.
token="image-token-$RANDOM$RANDOM"
cat >"$work/values.yaml" <<EOF
redis: { url: "redis://127.0.0.1:$redis_port" }
secrets: { cursorSecret: "image-cursor-secret-0123456789", tokens: "$token=image-tester" }
gateway: { settings: { host: 127.0.0.1, port: $gateway_port }, service: { port: $gateway_port } }
worker: { settings: { metricsHost: 127.0.0.1, metricsPort: $worker_port } }
bridge:
  enabled: true
  config:
    connections: { legacy: { url: "redis://127.0.0.1:$redis_port/1" } }
    tools:
      - name: render_report
        description: Renders a report.
        inputSchema: { type: object, properties: { "n": { type: integer } }, required: ["n"] }
        queue: { name: reports, prefix: bull, connection: legacy }
        job: { name: render }
EOF
"$HELM" template tg helm/taskgate -f "$work/values.yaml" >"$work/chart.yaml"
node --import tsx scripts/lib/chart-env.ts "$work/chart.yaml" "$work"
chmod -R a+rX "$work"

# The chart's container securityContext and volumes: read-only root, /tmp an emptyDir, uid 10001, no capabilities.
secure=(--network host --read-only --read-only-tmpfs=false --tmpfs /tmp:rw,mode=1777 --user 10001:10001
  --cap-drop ALL --security-opt no-new-privileges)
# Starts the chart's <component> container: its command, args, env and ConfigMap volumes are the chart's.
start() {
  local component="$1" name="$run_id-$1"
  shift
  local cmd volumes
  mapfile -d '' cmd <"$work/$component.cmd"
  mapfile -t volumes < <(sed 's/^/--volume=/' "$work/$component.mounts")
  containers+=("$name")
  podman run --detach --name "$name" "${secure[@]}" --env-file "$work/$component.env" ${volumes[@]+"${volumes[@]}"} "$@" \
    --entrypoint "${cmd[0]}" "$IMAGE" "${cmd[@]:1}" >/dev/null
}

start gateway
start worker
# The bridge reads the worker's ConfigMap (its own pod in Kubernetes): a port of its own on the shared host network.
start bridge --env "TASKGATE_METRICS_PORT=$bridge_port"
wait_ready "http://127.0.0.1:$gateway_port/readyz" "$run_id-gateway"
wait_ready "http://127.0.0.1:$worker_port/readyz" "$run_id-worker"
wait_ready "http://127.0.0.1:$bridge_port/readyz" "$run_id-bridge"
pass "gateway, worker and bridge containers ready (read-only root, tmpfs /tmp, uid 10001, the chart's env)"

client "http://127.0.0.1:$gateway_port" "$token" render_report || fail "the SDK client's task through the gateway"
pass "SDK client: a task created and its result read through the gateway container (bridged tool listed)"

got="$(podman run --rm "${secure[@]}" "$IMAGE" --version 2>&1 | tail -n 1)" || fail "taskgate --version: $got"
[ "$got" = "$VERSION" ] || [ "$got" = "taskgate $VERSION" ] || fail "taskgate --version printed '$got', not $VERSION"
pass "taskgate --version in the image: $got"

# `helm test`: the chart's test Pod command, in the image, against the gateway (its Service name on loopback).
mapfile -d '' test_cmd <"$work/test.cmd"
out="$(podman run --rm "${secure[@]}" --add-host "tg-taskgate-gateway:127.0.0.1" --env-file "$work/test.env" \
  --entrypoint "${test_cmd[0]}" "$IMAGE" "${test_cmd[@]:1}" 2>&1)" || fail "helm test command failed: $out"
grep -q 'hello from helm test' <<<"$out" || fail "helm test command printed: $out"
pass "the chart's helm test command passes in the image"

# What the runtime itself changes in <component>'s container (the mount points it makes under /etc): the same
# container running `true` (named <name>-baseline; run in a subshell: its caller lists it in containers).
baseline() {
  local name="$run_id-$1-baseline" volumes
  mapfile -t volumes < <(sed 's/^/--volume=/' "$work/$1.mounts")
  podman run --name "$name" "${secure[@]}" ${volumes[@]+"${volumes[@]}"} --entrypoint true "$IMAGE"
  podman diff "$name"
}

drain_s="$(($(sed -n 's/^TASKGATE_DRAIN_TIMEOUT_MS=//p' "$work/gateway.env") / 1000))"
for component in gateway worker bridge; do
  name="$run_id-$component"
  began=$SECONDS
  podman kill --signal TERM "$name" >/dev/null
  code="$(timeout "$((drain_s + 5))" podman wait "$name")" || fail "$component still running $((drain_s + 5)) s after SIGTERM"
  [ "$code" = 0 ] || {
    podman logs "$name" >&2
    fail "$component exited $code on SIGTERM"
  }
  containers+=("$name-baseline")
  runtime="$(baseline "$component")"
  written="$(podman diff "$name" | grep -vxF -f <(printf '%s\n' "$runtime") || true)"
  [ -z "$written" ] || fail "$component wrote outside /tmp: $written"
  pass "$component: SIGTERM -> exit 0 in $((SECONDS - began)) s (drain timeout ${drain_s} s); podman diff: only the runtime's ($(echo $runtime))"
done

bash scripts/lib/image-compose-test.sh
