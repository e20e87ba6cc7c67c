# Pinned tools for the deployment checks, installed under the ignored folder .tools/ (cached). Sourced, not run.
# Each ensure_* prints nothing on success; the paths are TASKGATE_TOOLS_DIR/bin/helm, TASKGATE_TOOLS_DIR/bin/toxiproxy-server
# and TASKGATE_TOOLS_DIR/venv.

HELM_VERSION=v3.22.0
KUBERNETES_VALIDATE_VERSION=1.35.0
PROMETHEUS_OPERATOR_VERSION=v0.85.0
KEDA_VERSION=v2.18.1
GATEWAY_API_VERSION=v1.3.0
TOXIPROXY_VERSION=v2.12.0
TASKGATE_TOOLS_DIR="${TASKGATE_TOOLS_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.tools}"

# helm, compiled from the Go module proxy (a few minutes once, then cached).
ensure_helm() {
  local bin="$TASKGATE_TOOLS_DIR/bin/helm"
  if [ -x "$bin" ] && [ -f "$bin.$HELM_VERSION" ]; then return 0; fi
  command -v go >/dev/null 2>&1 || { echo "go is needed to install helm $HELM_VERSION" >&2; return 1; }
  echo "installing helm $HELM_VERSION into $TASKGATE_TOOLS_DIR/bin" >&2
  mkdir -p "$TASKGATE_TOOLS_DIR/bin"
  GOBIN="$TASKGATE_TOOLS_DIR/bin" GOFLAGS=-mod=mod go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >&2
  touch "$bin.$HELM_VERSION"
}

# toxiproxy-server (the chaos run's faults between taskgate and Redis), compiled from the Go module proxy and
# renamed from the module's `server` command (cached).
ensure_toxiproxy() {
  local bin="$TASKGATE_TOOLS_DIR/bin/toxiproxy-server"
  if [ -x "$bin" ] && [ -f "$bin.$TOXIPROXY_VERSION" ]; then return 0; fi
  command -v go >/dev/null 2>&1 || { echo "go is needed to install toxiproxy $TOXIPROXY_VERSION" >&2; return 1; }
  echo "installing toxiproxy-server $TOXIPROXY_VERSION into $TASKGATE_TOOLS_DIR/bin" >&2
  local gobin
  gobin="$(mktemp -d)"
  GOBIN="$gobin" GOFLAGS=-mod=mod go install "github.com/Shopify/toxiproxy/v2/cmd/server@$TOXIPROXY_VERSION" >&2
  mkdir -p "$TASKGATE_TOOLS_DIR/bin"
  mv "$gobin/server" "$bin"
  rm -rf "$gobin"
  touch "$bin.$TOXIPROXY_VERSION"
}

# A private virtual environment TASKGATE_TOOLS_DIR/<dir> with pinned PyPI packages, made once and kept while the
# stamp file .<stamp> (naming the versions) is there: ensure_pip_venv DIR STAMP PACKAGE==VERSION...
ensure_pip_venv() {
  local venv="$TASKGATE_TOOLS_DIR/$1" stamp="$TASKGATE_TOOLS_DIR/$1/.$2"
  shift 2
  if [ -f "$stamp" ]; then return 0; fi
  command -v python3 >/dev/null 2>&1 || { echo "python3 is needed to install $*" >&2; return 1; }
  echo "installing $* into $venv" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet "$@" >&2
  touch "$stamp"
}

# kubernetes-validate (PyPI) in a private virtual environment: Kubernetes JSON schemas, offline.
ensure_kubernetes_validate() {
  ensure_pip_venv venv "kubernetes-validate-$KUBERNETES_VALIDATE_VERSION" \
    "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
}

# The CRDs of prometheus-operator, KEDA and the Gateway API, from their Go modules (cached by go mod download):
# one `go mod download -json` object per module (its "Dir" holds the CRD YAML).
crd_modules_json() {
  local module
  for module in "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
    "github.com/kedacore/keda/v2@$KEDA_VERSION" "sigs.k8s.io/gateway-api@$GATEWAY_API_VERSION"; do
    (cd "${TMPDIR:-/tmp}" && GOFLAGS=-mod=mod go mod download -json "$module")
  done
}

# FastMCP with Docket (PyPI, pinned; pydocket comes at the version fastmcp pins) in a private virtual
# environment: the bench's distributed peer. Prints nothing on success; the venv is TASKGATE_TOOLS_DIR/fastmcp-venv.
FASTMCP_VERSION=3.4.7
ensure_fastmcp_venv() {
  ensure_pip_venv fastmcp-venv "fastmcp-$FASTMCP_VERSION" "fastmcp[tasks]==$FASTMCP_VERSION"
}

# FastMCP 4 with the tasks extension (fastmcp-tasks, on Docket; PyPI, pinned: fastmcp-tasks 4.1.4 needs fastmcp
# 4.1.4) in a private virtual environment: the 2026-07-28 bench's peer (bench/revisions.ts). Prints nothing on
# success; the venv is TASKGATE_TOOLS_DIR/fastmcp4-venv.
FASTMCP4_VERSION=4.1.4
FASTMCP_TASKS_VERSION=4.1.4
ensure_fastmcp4_venv() {
  ensure_pip_venv fastmcp4-venv "fastmcp-$FASTMCP4_VERSION-tasks-$FASTMCP_TASKS_VERSION" \
    "fastmcp==$FASTMCP4_VERSION" "fastmcp-tasks==$FASTMCP_TASKS_VERSION"
}

# Celery and the Python BullMQ client (PyPI, pinned, with Celery's Redis and AMQP (py-amqp) transports and the
# Redis client pinned too) and pika (RabbitMQ's Python client) in a private virtual environment: the real Python
# workers and services of the bridge tests (test/bridge/celery/, test/bridge/python/, test/bridge/amqp/).
# Prints nothing on success; the venv is TASKGATE_TOOLS_DIR/celery-venv.
CELERY_VERSION=5.7.0
KOMBU_VERSION=5.7.0
AMQP_PY_VERSION=5.4.2
REDIS_PY_VERSION=8.1.0
PACKAGING_VERSION=26.3
BULLMQ_PY_VERSION=3.4.4
PIKA_VERSION=1.4.4
ensure_celery_venv() {
  ensure_pip_venv celery-venv \
    "celery-$CELERY_VERSION-amqp-$AMQP_PY_VERSION-redis-$REDIS_PY_VERSION-bullmq-$BULLMQ_PY_VERSION-pika-$PIKA_VERSION" \
    "celery[redis]==$CELERY_VERSION" "kombu[redis]==$KOMBU_VERSION" "amqp==$AMQP_PY_VERSION" "redis==$REDIS_PY_VERSION" \
    "packaging==$PACKAGING_VERSION" "bullmq==$BULLMQ_PY_VERSION" "pika==$PIKA_VERSION"
}

# mcp-server-time (PyPI, pinned) in a private virtual environment: the Python MCP server the bridge tests run over
# stdio (test/bridge/upstream-python.test.ts). Prints nothing on success; the server is
# TASKGATE_TOOLS_DIR/mcp-time-venv/bin/mcp-server-time.
MCP_SERVER_TIME_VERSION=2026.10.19
ensure_mcp_server_time() {
  ensure_pip_venv mcp-time-venv "mcp-server-time-$MCP_SERVER_TIME_VERSION" "mcp-server-time==$MCP_SERVER_TIME_VERSION"
}
