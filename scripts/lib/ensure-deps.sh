# Shared set-up for scripts/*: make sure the machine has what the project needs. Sourced, not run.

# redis-server: the test harness and `scripts/dev` start private instances of it.
ensure_redis_server() {
  if command -v "${REDIS_SERVER_BIN:-redis-server}" >/dev/null 2>&1; then return 0; fi
  echo "redis-server not found: installing it with apt-get" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >/dev/null
  # The Debian package may start a system-wide instance; the project never uses it.
  command -v redis-server >/dev/null 2>&1 || { echo "could not install redis-server" >&2; return 1; }
}

# npm packages, exactly as the lockfile pins them; skipped when node_modules already matches the lockfile.
ensure_node_modules() {
  local stamp=node_modules/.package-lock.json
  if [ -f "$stamp" ] && [ "$stamp" -nt package-lock.json ] && [ -z "${CI:-}" ]; then return 0; fi
  npm ci --no-audit --no-fund
}

# haproxy: the load balancer in front of the chart's pods run as processes (test/deploy/chart-processes.test.ts).
ensure_haproxy() {
  if command -v haproxy >/dev/null 2>&1; then return 0; fi
  echo "haproxy not found: installing it with apt-get" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq haproxy >/dev/null
  command -v haproxy >/dev/null 2>&1 || { echo "could not install haproxy" >&2; return 1; }
}
