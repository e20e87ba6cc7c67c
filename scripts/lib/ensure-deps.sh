# Shared set-up for scripts/*: make sure the machine has what the project needs. Sourced, not run.

# redis-server and redis-cli: the test harness and `scripts/dev` start private instances of redis-server; the
# harness's Redis Cluster (test/harness/src/redis-cluster.ts) joins its nodes with `redis-cli --cluster create`.
ensure_redis_server() {
  local cli="${REDIS_CLI_BIN:-redis-cli}"
  if [ -z "${REDIS_CLI_BIN:-}" ] && [ -n "${REDIS_SERVER_BIN:-}" ] && [ -x "$(dirname "$REDIS_SERVER_BIN")/redis-cli" ]; then
    cli="$(dirname "$REDIS_SERVER_BIN")/redis-cli"
  fi
  if command -v "${REDIS_SERVER_BIN:-redis-server}" >/dev/null 2>&1 && command -v "$cli" >/dev/null 2>&1; then
    return 0
  fi
  echo "redis-server or redis-cli not found: installing them with apt-get" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server redis-tools >/dev/null
  # The Debian package may start a system-wide instance; the project never uses it.
  command -v redis-server >/dev/null 2>&1 || { echo "could not install redis-server" >&2; return 1; }
  command -v redis-cli >/dev/null 2>&1 || { echo "could not install redis-cli (redis-tools)" >&2; return 1; }
}

# npm packages, exactly as the lockfile pins them; skipped when node_modules already matches the lockfile.
ensure_node_modules() {
  local stamp=node_modules/.package-lock.json
  if [ -f "$stamp" ] && [ "$stamp" -nt package-lock.json ] && [ -z "${CI:-}" ]; then return 0; fi
  npm ci --no-audit --no-fund
}

# haproxy: the test harness's load balancer (test/harness/src/haproxy.ts) for deployment and chaos runs.
ensure_haproxy() {
  if command -v "${HAPROXY_BIN:-haproxy}" >/dev/null 2>&1; then return 0; fi
  echo "haproxy not found: installing it with apt-get" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy >/dev/null
  # The Debian package may start a system-wide instance; the project never uses it.
  command -v haproxy >/dev/null 2>&1 || { echo "could not install haproxy" >&2; return 1; }
}

# chromium: the headless browser the operator console's end-to-end test drives (test/console/console-browser.test.ts,
# through playwright-core with executablePath; CHROMIUM_BIN names another binary).
ensure_chromium() {
  if command -v "${CHROMIUM_BIN:-chromium}" >/dev/null 2>&1; then return 0; fi
  echo "chromium not found: installing it with apt-get" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null
  command -v chromium >/dev/null 2>&1 || { echo "could not install chromium" >&2; return 1; }
}

# openssl: makes the certificates of the TLS Redis test (test/cli/redis-tls.test.ts).
ensure_openssl() {
  if command -v openssl >/dev/null 2>&1; then return 0; fi
  echo "openssl not found: installing it with apt-get" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq openssl >/dev/null
  command -v openssl >/dev/null 2>&1 || { echo "could not install openssl" >&2; return 1; }
}

# rabbitmq-server (with Erlang and epmd): the test harness (test/harness/src/rabbitmq.ts) starts private nodes of it
# for the bridge's AMQP tests; it runs the scripts under /usr/lib/rabbitmq/bin directly (RABBITMQ_SBIN names others).
ensure_rabbitmq() {
  local sbin="${RABBITMQ_SBIN:-/usr/lib/rabbitmq/bin}"
  if [ -x "$sbin/rabbitmq-server" ] && command -v "${EPMD_BIN:-epmd}" >/dev/null 2>&1; then return 0; fi
  echo "rabbitmq-server not found: installing it with apt-get" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq rabbitmq-server >/dev/null
  # The Debian package may start a system-wide node; the project never uses it.
  [ -x "$sbin/rabbitmq-server" ] || { echo "could not install rabbitmq-server" >&2; return 1; }
}
