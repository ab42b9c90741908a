#!/usr/bin/env bash
# Checks the ringkv Helm chart (helm/ringkv) with the ecosystem's tools and with
# what they cannot know:
#   - helm lint --strict;
#   - helm-unittest: the suites in helm/ringkv/tests/*_test.yaml (among them the
#     values the schema and the templates refuse, values_test.yaml);
#   - kubeconform: every render, and k8s/, against the Kubernetes schemas;
#   - the application contract of renders for default and non-default values
#     (helm/checks/contract, a Python package with its own unit tests): the ports
#     (http, the node-to-node cluster port, management), the Secrets (the cluster
#     secret with its rotation key, the tokens file, the TLS files: the chart's own
#     or existing ones; with existing ones every render is identical), the heap against the
#     memory limit (and the image's heap share against jvm.heapPercent), the RBAC
#     of the nodes' Kubernetes API calls, the NetworkPolicy, the k6 loadtest Job
#     and its scripts (byte-identical to loadtest/, also in the packaged chart);
#   - k8s/ is the chart's current render (k8s/generate), builds with kustomize,
#     also under an overlay with its own namespace and Secrets, and holds no secret;
#   - the helm test script, run with k6 against a mock of the API, and the script with which every
#     client pod of the chart waits for the release (files/wait-for-release.js);
#   - backups and restores (backup.*, restore.*): the nodes' settings, the backup CronJob and the restore
#     Job (helm/checks/contract/backup.py, with teeth), the values refused, and their k6 scripts
#     (files/backup.js, files/restore.js, each beside the helpers it imports, files/actuator-client.js)
#     run against a mock of the nodes' Actuator;
#   - the loadtest Job's HTML report: kv.js with the Job's web dashboard settings against that mock,
#     printed by the report container's script and decoded by the documented fetch command;
#   - the monitoring objects (helm/checks/monitoring.sh).
# The sections live in helm/checks/verify/ (renders.sh, loadtest.sh, k8s.sh,
# hook-script.sh, backup.sh; report.sh counts the checks), with the values files they render.
#
# Usage: helm/verify.sh
#   HELM=/path/to/helm   helm binary (default: `helm` from PATH)
#   PYTHON=python3       python with PyYAML (installed with pip when missing)
#   KUBECTL=kubectl      kubectl for `kubectl kustomize` (skipped when absent)
#   K6=k6                k6 for the helm test script and the loadtest report (default: on PATH or
#                        kube-local's; those checks are skipped when absent)
#   kubeconform, helm-unittest and the schemas come from helm/checks/install-tools
#   (needs go; cached in ~/.cache/ringkv/chart-tools).
#
# Prints one line per check and a summary; exits non-zero if any check failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CHART="$HERE/ringkv"
CHECKS="$HERE/checks"
VERIFY="$CHECKS/verify"
K8S_DIR="$ROOT/k8s"
# shellcheck source=SCRIPTDIR/checks/verify/report.sh
source "$VERIFY/report.sh"
# shellcheck source=SCRIPTDIR/checks/verify/renders.sh
source "$VERIFY/renders.sh"
# shellcheck source=SCRIPTDIR/checks/verify/loadtest.sh
source "$VERIFY/loadtest.sh"
# shellcheck source=SCRIPTDIR/checks/verify/k8s.sh
source "$VERIFY/k8s.sh"
# shellcheck source=SCRIPTDIR/checks/verify/hook-script.sh
source "$VERIFY/hook-script.sh"
# shellcheck source=SCRIPTDIR/checks/verify/backup.sh
source "$VERIFY/backup.sh"

# HELM, PYTHON (with PyYAML), KUBECTL and K6_BIN, or exit 2 with what is missing.
find_tools() {
  HELM="${HELM:-$(command -v helm || true)}"
  if [ -z "$HELM" ] || ! "$HELM" version >/dev/null 2>&1; then
    echo "ERROR: helm not found. Put it on PATH or set HELM=/path/to/helm, e.g.:" >&2
    echo "  GOFLAGS=-mod=mod go install helm.sh/helm/v3/cmd/helm@v3.22.0 && HELM=\$(go env GOPATH)/bin/helm $0" >&2
    exit 2
  fi
  PYTHON="${PYTHON:-python3}"
  command -v "$PYTHON" >/dev/null 2>&1 || { echo "ERROR: $PYTHON not found" >&2; exit 2; }
  if ! "$PYTHON" -c 'import yaml' >/dev/null 2>&1; then
    echo "PyYAML missing: installing it with pip"
    "$PYTHON" -m pip install --quiet pyyaml || "$PYTHON" -m pip install --quiet --user pyyaml
    "$PYTHON" -c 'import yaml' || { echo "ERROR: could not install PyYAML" >&2; exit 2; }
  fi
  KUBECTL="${KUBECTL:-$(command -v kubectl || true)}"
  K6_BIN="${K6:-$(command -v k6 || true)}"
  if [ -z "$K6_BIN" ] && [ -x /var/cache/kube-local/v1.33.13/bin/k6 ]; then K6_BIN=/var/cache/kube-local/v1.33.13/bin/k6; fi
  echo "ringkv chart verification"
  echo "  helm:    $HELM ($("$HELM" version --short 2>/dev/null || "$HELM" version))"
  echo "  python:  $("$PYTHON" --version 2>&1), PyYAML $("$PYTHON" -c 'import yaml; print(yaml.__version__)')"
  echo "  kubectl: ${KUBECTL:-absent}"
  echo "  k6:      ${K6_BIN:-absent}"
}

check_lint() {
  section "lint"
  must_succeed "helm lint" "$HELM" lint "$CHART"
  must_succeed "helm lint --strict" "$HELM" lint --strict "$CHART"
  must_succeed "helm lint --strict (non-default values)" "$HELM" lint --strict "$CHART" --set "$CUSTOM_SET"
  must_fail "helm lint rejects replicaCount=-1" "schema" "$HELM" lint --strict "$CHART" --set replicaCount=-1
  must_succeed "helm lint --strict (loadtest enabled)" "$HELM" lint --strict "$CHART" --set loadtest.enabled=true,loadtest.fill=init
  must_succeed "helm lint --strict (backups on a schedule, a restore)" "$HELM" lint --strict "$CHART" -f "$VERIFY/values-backup.yaml"
  run_checker schema-coverage "$CHART/values.yaml" "$CHART/values.schema.json"
  run_checker image-heap "$ROOT/Dockerfile" "$CHART/values.yaml"
}

check_unit_tests() {
  section "the checker's own unit tests (helm/checks)"
  must_succeed "python3 -m unittest discover helm/checks" "$PYTHON" -m unittest discover -s "$CHECKS"
}

# kubeconform, helm-unittest and the Kubernetes schemas (KUBECONFORM, K8S_SCHEMAS), then the suites.
check_helm_unittest() {
  section "helm-unittest (helm/ringkv/tests/*_test.yaml)"
  if ! "$CHECKS/install-tools" >"$WORK/tools" 2>"$WORK/tools.err"; then
    fail "helm/checks/install-tools (kubeconform, helm-unittest, the Kubernetes schemas)" "$WORK/tools.err"
    return
  fi
  KUBECONFORM="$(sed -n 's/^kubeconform=//p' "$WORK/tools")"
  K8S_SCHEMAS="$(sed -n 's/^k8s-schemas=//p' "$WORK/tools")"
  must_succeed "helm-unittest: every suite passes" "$(sed -n 's/^helm-unittest=//p' "$WORK/tools")" \
    --color=false --strict --file 'tests/*_test.yaml' "$CHART"
  sed -n 's/^Tests: *\(.*\)$/   \1/p' "$WORK/cmd.out"
}

# Every manifest rendered above, one with every monitoring object, and k8s/ as kustomize builds it,
# against the schemas of the Kubernetes version kube-local runs and of the Prometheus Operator's CRDs
# that e2e installs: a misspelt field or a wrong type fails here, not at apply.
check_kubeconform() {
  section "kubeconform (Kubernetes schemas)"
  local manifest name
  if [ -z "${KUBECONFORM:-}" ]; then
    fail "kubeconform available (helm/checks/install-tools)"
    return
  fi
  if ! "$HELM" template ringkv "$CHART" --set metrics.serviceMonitor.enabled=true \
      --set metrics.prometheusRule.enabled=true,metrics.dashboard.enabled=true \
      >"$WORK/monitoring.yaml" 2>"$WORK/monitoring.err"; then
    fail "helm template with every monitoring object" "$WORK/monitoring.err"
  fi
  for manifest in "$WORK"/*.yaml "$K8S_DIR/ringkv.yaml" "$K8S_DIR/loadtest/loadtest.yaml"; do
    name=${manifest#"$WORK/"}
    must_succeed "kubeconform -strict ${name#"$ROOT/"}" "$KUBECONFORM" -strict -summary \
      -schema-location "$K8S_SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$manifest"
  done
}

check_monitoring() {
  section "monitoring objects"
  if HELM="$HELM" PYTHON="$PYTHON" "$CHECKS/monitoring.sh"; then pass "helm/checks/monitoring.sh"; else fail "helm/checks/monitoring.sh"; fi
}

main() {
  # helm/checks/ is source, not a place for bytecode caches.
  export PYTHONDONTWRITEBYTECODE=1
  find_tools
  WORK="$(mktemp -d)"
  MOCK_PID=""
  trap 'if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null || true; fi; rm -rf "$WORK"' EXIT
  check_lint
  check_unit_tests
  check_helm_unittest
  check_renders
  check_no_internal_endpoints
  check_loadtest
  check_backup
  check_k8s
  check_hook_script
  check_wait_script
  check_backup_scripts
  check_loadtest_report
  check_kubeconform
  check_monitoring
  summary
}

main "$@"
