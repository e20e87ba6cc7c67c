# Pinned tools for the deployment checks, installed under the ignored folder .tools/ (cached). Sourced, not run.
# Each ensure_* prints nothing on success; the paths are TASKGATE_TOOLS_DIR/bin/helm and TASKGATE_TOOLS_DIR/venv.

HELM_VERSION=v3.22.0
KUBERNETES_VALIDATE_VERSION=1.35.0
PROMETHEUS_OPERATOR_VERSION=v0.85.0
KEDA_VERSION=v2.18.1
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

# kubernetes-validate (PyPI) in a private virtual environment: Kubernetes JSON schemas, offline.
ensure_kubernetes_validate() {
  local venv="$TASKGATE_TOOLS_DIR/venv"
  if [ -f "$venv/.kubernetes-validate-$KUBERNETES_VALIDATE_VERSION" ]; then return 0; fi
  echo "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION into $venv" >&2
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION" >&2
  touch "$venv/.kubernetes-validate-$KUBERNETES_VALIDATE_VERSION"
}

# The CRD manifests of prometheus-operator and KEDA, from their Go modules (go mod download caches them).
# Prints the two module directories, one a line.
crd_module_dirs() {
  local module
  for module in "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
    "github.com/kedacore/keda/v2@$KEDA_VERSION"; do
    GOFLAGS=-mod=mod go mod download -json "$module" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p'
  done
}
