#!/usr/bin/env bash
# Renders the chart's monitoring objects (metrics.serviceMonitor, metrics.prometheusRule,
# metrics.dashboard) with their flags off and on, and checks them with monitoring.py: kinds,
# the ServiceMonitor's selector and port against the metrics Service and the pods, the alerts'
# and the dashboard's PromQL against the metric names real nodes export (exported-metrics.txt).
# Needs no helm plugin, so that it runs wherever helm/verify.sh does (which calls it).
#   HELM=/path/to/helm  PYTHON=python3  helm/checks/monitoring.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CHART="$HERE/../ringkv"
HELM="${HELM:-helm}"
PYTHON="${PYTHON:-python3}"
# promql-parser (PyPI, a binding of a Rust PromQL parser) parses the queries and finds their
# metric names, jsonschema checks the objects against the operator's CRDs; installed like
# helm/verify.sh installs PyYAML.
if ! "$PYTHON" -c 'import promql_parser, yaml, jsonschema' >/dev/null 2>&1; then
  "$PYTHON" -m pip install --quiet promql-parser pyyaml jsonschema \
    || "$PYTHON" -m pip install --quiet --user promql-parser pyyaml jsonschema
fi

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
FAILED=0
report() {
  while IFS=$'\t' read -r status name detail; do
    if [ "$status" = PASS ]; then printf '  PASS  %s\n' "$name"; else printf '  FAIL  %s\n          | %s\n' "$name" "$detail"; FAILED=1; fi
  done
}
render() { "$HELM" template "$@" "$CHART" 2>"$WORK/stderr" || { cat "$WORK/stderr" >&2; return 1; }; }
all_on=(--set metrics.serviceMonitor.enabled=true --set metrics.prometheusRule.enabled=true --set metrics.dashboard.enabled=true)

"$PYTHON" "$HERE/monitoring.py" names-test >"$WORK/out" || true
report <"$WORK/out"

render ringkv >"$WORK/off.yaml"
"$PYTHON" "$HERE/monitoring.py" off "$WORK/off.yaml" >"$WORK/out" || true
report <"$WORK/out"

# Defaults, then another release, namespace, size and no volumes (no disk alert).
render rel -n store "${all_on[@]}" >"$WORK/on.yaml"
"$PYTHON" "$HERE/monitoring.py" on "$WORK/on.yaml" store true 3 >"$WORK/out" || true
report <"$WORK/out"
render kv -n db "${all_on[@]}" --set replicaCount=5 --set persistence.enabled=false >"$WORK/on2.yaml"
"$PYTHON" "$HERE/monitoring.py" on "$WORK/on2.yaml" db false 5 >"$WORK/out" || true
report <"$WORK/out"
# With backups on a schedule: RingkvBackupStale too.
render bk -n store "${all_on[@]}" --set backup.target=file:///backups,backup.schedule=@daily >"$WORK/on3.yaml"
"$PYTHON" "$HERE/monitoring.py" on "$WORK/on3.yaml" store true 3 true >"$WORK/out" || true
report <"$WORK/out"

# The objects against the Prometheus Operator's own schemas: its CRDs come from the Go module
# proxy (e2e/monitoring-crds.sh), so this needs go.
if command -v go >/dev/null 2>&1; then
  "$HERE/../../e2e/monitoring-crds.sh" validate "$WORK/on.yaml" "$WORK/on2.yaml" "$WORK/on3.yaml" >"$WORK/out" 2>&1 || FAILED=1
  report <"$WORK/out"
else
  printf '  SKIP  %s\n' "ServiceMonitor and PrometheusRule against the operator's CRDs (needs go)"
fi

# Each flag alone renders its own objects only.
for flag in serviceMonitor:ServiceMonitor prometheusRule:PrometheusRule dashboard:ConfigMap; do
  render r --set "metrics.${flag%%:*}.enabled=true" >"$WORK/one.yaml"
  others=$(grep -E '^kind: (ServiceMonitor|PrometheusRule)$|^  name: r-ringkv-dashboard$' "$WORK/one.yaml" | sort | tr '\n' ' ')
  case $flag in
    serviceMonitor:*) want='kind: ServiceMonitor ' ;;
    prometheusRule:*) want='kind: PrometheusRule ' ;;
    dashboard:*) want='  name: r-ringkv-dashboard ' ;;
  esac
  if [ "$others" = "$want" ]; then printf '  PASS  %s\n' "metrics.${flag%%:*}.enabled alone renders its object only"
  else printf '  FAIL  %s\n          | %s\n' "metrics.${flag%%:*}.enabled alone renders its object only" "$others"; FAILED=1; fi
done

# Knobs reach the objects.
render r "${all_on[@]}" --set metrics.serviceMonitor.namespace=monitoring --set metrics.serviceMonitor.labels.release=prom \
  --set metrics.serviceMonitor.interval=15s --set metrics.prometheusRule.namespace=monitoring \
  --set metrics.prometheusRule.breakerOpen.for=10m --set metrics.prometheusRule.notEnoughReplicas.perSecond=0.5 \
  --set metrics.dashboard.labels.grafana_dashboard=null --set metrics.dashboard.labels.dashboards=ringkv \
  --set metrics.dashboard.annotations.grafana_folder=Databases >"$WORK/knobs.yaml"
"$PYTHON" - "$WORK/knobs.yaml" >"$WORK/out" <<'PY' || true
import sys, yaml
docs = {d["kind"] + "/" + d["metadata"]["name"]: d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
sm, rule, cm = docs["ServiceMonitor/r-ringkv"], docs["PrometheusRule/r-ringkv"], docs["ConfigMap/r-ringkv-dashboard"]
alerts = {r["alert"]: r for r in rule["spec"]["groups"][0]["rules"]}
checks = {
    "knobs: ServiceMonitor namespace and labels, scraping the release's namespace":
        sm["metadata"]["namespace"] == "monitoring" and sm["metadata"]["labels"]["release"] == "prom"
        and sm["spec"]["namespaceSelector"]["matchNames"] == ["default"],
    "knobs: ServiceMonitor interval": sm["spec"]["endpoints"][0]["interval"] == "15s",
    "knobs: PrometheusRule namespace, for and threshold":
        rule["metadata"]["namespace"] == "monitoring" and alerts["RingkvBreakerOpen"]["for"] == "10m"
        and alerts["RingkvNotEnoughReplicas"]["expr"].endswith("> 0.5"),
    "knobs: dashboard sidecar label replaced, folder annotation":
        "grafana_dashboard" not in cm["metadata"]["labels"] and cm["metadata"]["labels"]["dashboards"] == "ringkv"
        and cm["metadata"]["annotations"] == {"grafana_folder": "Databases"},
}
for name, ok in checks.items():
    print(("PASS\t%s" if ok else "FAIL\t%s\t") % name)
PY
report <"$WORK/out"

# The schema refuses what Prometheus would: a duration that is none, an unknown key.
for bad in metrics.serviceMonitor.interval=30 metrics.prometheusRule.nodeDown.for=soon metrics.dashboard.sidecar=true \
    metrics.prometheusRule.diskNearlyFull.freePercent=0 backup.alertAfter=2days; do
  if render r --set "$bad" >/dev/null 2>&1; then printf '  FAIL  %s\n' "schema rejects $bad"; FAILED=1
  else printf '  PASS  %s\n' "schema rejects $bad"; fi
done

if render r --set metrics.serviceMonitor.enabled=true --set metrics.serviceMonitor.interval=1m \
    --set metrics.serviceMonitor.scrapeTimeout=1m500ms >/dev/null 2>&1; then
  printf '  FAIL  %s\n' "a scrape timeout longer than the interval is refused"; FAILED=1
else
  printf '  PASS  %s\n' "a scrape timeout longer than the interval is refused"
fi

exit "$FAILED"
