#!/usr/bin/env bash
# The Prometheus Operator's CRDs that the chart's metrics.serviceMonitor and
# metrics.prometheusRule need (ServiceMonitor, PrometheusRule; monitoring.coreos.com/v1), for a
# cluster without the operator, such as kube-local. GitHub cannot be reached from our machines,
# but the Go module proxy can, and the operator's module holds the CRDs
# (example/prometheus-operator-crd/), so `go mod download` fetches them (once; Go's module cache
# keeps them).
#
#   e2e/monitoring-crds.sh apply             install them into the cluster KUBECONFIG points at,
#                                            unless it has them
#   e2e/monitoring-crds.sh validate FILE...  check every ServiceMonitor and PrometheusRule in the
#                                            manifests against the CRDs' schemas, offline
#   e2e/monitoring-crds.sh dir               print the directory holding the two CRD files
#   PROMETHEUS_OPERATOR_VERSION=v0.85.0      the operator release whose CRDs are used
#
# Needs go and, for validate, python3 with PyYAML and jsonschema.
set -euo pipefail

VERSION=${PROMETHEUS_OPERATOR_VERSION:-v0.85.0}
MODULE=github.com/prometheus-operator/prometheus-operator
CRDS=(monitoring.coreos.com_servicemonitors.yaml monitoring.coreos.com_prometheusrules.yaml)

crd_dir() {
  local dir
  # Outside any module, so that a go.mod nearby cannot change what is downloaded.
  dir=$(cd / && GOFLAGS=-mod=mod go mod download -json "$MODULE@$VERSION" \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')
  for crd in "${CRDS[@]}"; do
    [ -f "$dir/example/prometheus-operator-crd/$crd" ] || { echo "no $crd in $MODULE@$VERSION" >&2; exit 1; }
  done
  echo "$dir/example/prometheus-operator-crd"
}

case "${1:-}" in
  dir)
    crd_dir
    ;;
  apply)
    dir=$(crd_dir)
    for crd in "${CRDS[@]}"; do
      name=${crd#monitoring.coreos.com_}
      name=${name%.yaml}.monitoring.coreos.com
      # A cluster that runs the operator keeps the CRDs of its own version.
      if kubectl get crd "$name" >/dev/null 2>&1; then
        echo "$name is installed already: left as it is"
        continue
      fi
      kubectl apply -f "$dir/$crd"
      # Right after the create the CRD may have no status.conditions yet, and kubectl wait then
      # fails at once instead of waiting (".status.conditions accessor error: <nil> is of the
      # type <nil>"; it failed CI on a fresh kube-local): ask again, for up to a minute.
      deadline=$((SECONDS + 60))
      until why=$(kubectl wait --for=condition=Established "crd/$name" --timeout=5s 2>&1); do
        ((SECONDS < deadline)) || { echo "crd/$name was not Established within 60 s: $why" >&2; exit 1; }
        sleep 1
      done
    done
    ;;
  validate)
    shift
    [ $# -gt 0 ] || { echo "usage: $0 validate FILE..." >&2; exit 2; }
    dir=$(crd_dir)
    python3 - "$dir" "$@" <<'PY'
import sys

import jsonschema
import yaml

crd_dir, files = sys.argv[1], sys.argv[2:]
schemas = {}
for name in ("monitoring.coreos.com_servicemonitors.yaml", "monitoring.coreos.com_prometheusrules.yaml"):
    with open(f"{crd_dir}/{name}") as f:
        crd = yaml.safe_load(f)
    for version in crd["spec"]["versions"]:
        schemas[(f'{crd["spec"]["group"]}/{version["name"]}', crd["spec"]["names"]["kind"])] = \
            version["schema"]["openAPIV3Schema"]


def strict(schema):
    """As the API server's field validation: a field the schema does not know is an error
    (kubeconform -strict), unless the schema keeps unknown fields."""
    if isinstance(schema, dict):
        if "properties" in schema and "additionalProperties" not in schema \
                and not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema = dict(schema, additionalProperties=False)
        return {k: strict(v) if k != "enum" else v for k, v in schema.items()}
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    return schema


failed = checked = 0
for path in files:
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for doc in docs:
        schema = schemas.get((doc.get("apiVersion"), doc.get("kind")))
        if schema is None:
            continue
        checked += 1
        # metadata is the API server's ObjectMeta, which the CRD's schema leaves open.
        errors = sorted(jsonschema.Draft7Validator(strict(schema)).iter_errors(doc), key=str)
        name = f'{doc["kind"]}/{doc["metadata"]["name"]} in {path}'
        if errors:
            failed += 1
            print(f"FAIL\t{name}\t" + "; ".join(f'{"/".join(map(str, e.absolute_path))}: {e.message}' for e in errors[:5]))
        else:
            print(f"PASS\t{name} matches the CRD's schema")
if not checked:
    print("FAIL\tno ServiceMonitor or PrometheusRule in " + " ".join(files))
    failed = 1
sys.exit(1 if failed else 0)
PY
    ;;
  *)
    echo "usage: $0 apply | validate FILE... | dir" >&2
    exit 2
    ;;
esac
