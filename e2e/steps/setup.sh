# shellcheck shell=bash
# Sourced by e2e/run.sh: steps 1-4, the release installed and seen healthy.
#
#   checker_unit_tests      (1) the write checker's tests (e2e/checker/tests), before any cluster work
#   build_and_load_images   (2) ringkv, a busybox (the security probe) and k6 (helm test, loadtest Job), loaded;
#                               sets BUSYBOX_IMAGE and K6_IMAGE
#   install_release         (3) the Prometheus Operator's CRDs, then helm install --wait, 3 replicas,
#                               with the ServiceMonitor, PrometheusRule and dashboard, backups to the
#                               run's object store (steps/backup-restore.sh; no schedule yet), and the
#                               chart's defaults: tokens, TLS, NetworkPolicy; then the admin token and
#                               the CA (lib/credentials.sh)
#   members_and_metrics     (4) every pod sees the 3 members by their stable names; helm test
#                               passes; the metrics Service serves what the dashboard shows

checker_unit_tests() {
  local unit
  unit=$(python3 -m unittest discover -s e2e -p 'test_*.py' 2>&1) \
    || { printf '%s\n' "$unit" >&2; fail "the checker's unit tests failed"; }
  log "$(printf '%s\n' "$unit" | grep -E '^(Ran|OK)' | xargs)"
}

build_and_load_images() {
  bin/with-jdk ./mvnw -B -q -DskipTests package
  RINGKV_IMAGE_TAG=$TAG bin/build-image
  BUSYBOX_IMAGE=$(bin/build-busybox-image)
  K6_IMAGE=$(bin/build-k6-image)
  $LOAD_IMAGE "ringkv:$TAG" "$BUSYBOX_IMAGE" "$K6_IMAGE"
  log "loaded ringkv:$TAG, $BUSYBOX_IMAGE, $K6_IMAGE"
}

install_release() {
  e2e/monitoring-crds.sh apply >/dev/null
  log "the Prometheus Operator's CRDs are established (ServiceMonitor, PrometheusRule)"
  kubectl create namespace "$NAMESPACE" >/dev/null
  NAMESPACES_CREATED+=("$NAMESPACE")
  create_store_secret "$NAMESPACE"
  install_chart 3 --wait --timeout 5m \
    --set metrics.serviceMonitor.enabled=true \
    --set metrics.prometheusRule.enabled=true \
    --set metrics.dashboard.enabled=true
  k get pods -o wide
  load_credentials
}

# helm install $RELEASE into $NAMESPACE (which holds the store's Secret) with what every release of
# the run has: the image under test, kube-local's root-owned volumes made writable, quick discovery,
# the k6 image for helm test and the chart's Jobs, and backups to the run's object store.
install_chart() { # replicas [helm option...]
  local replicas=$1
  shift
  helm install "$RELEASE" helm/ringkv -n "$NAMESPACE" \
    --set fullnameOverride="$RELEASE" \
    --set replicaCount="$replicas" \
    --set image.tag="$TAG" \
    --set volumePermissions.enabled=true \
    --set cluster.discoveryRefreshInterval=2s \
    --set tests.image.repository="${K6_IMAGE%:*}" --set-string tests.image.tag="${K6_IMAGE##*:}" \
    "${BACKUP_VALUES[@]}" "$@" >/dev/null
}

# What Prometheus would scrape: every pod behind the metrics Service, on its port "management".
metrics_endpoints() {
  [ "$(k get endpointslices -l kubernetes.io/service-name="$RELEASE-metrics" \
    -o jsonpath='{range .items[*].endpoints[*]}{.targetRef.name}{"\n"}{end}' | sort -u | grep -c .)" = 3 ]
}

members_and_metrics() {
  local scrape metric
  eventually 60 all_pods_see 3 || fail "the pods do not agree on $(expected_members 3)"
  log "members: $(expected_members 3)"
  helm test "$RELEASE" -n "$NAMESPACE" --logs --timeout 3m | tail -n 5
  k get "servicemonitor/$RELEASE" "prometheusrule/$RELEASE" "configmap/$RELEASE-dashboard" >/dev/null \
    || fail "the ServiceMonitor, the PrometheusRule or the dashboard ConfigMap is missing"
  eventually 30 metrics_endpoints || fail "the metrics Service does not list the 3 pods"
  port_forward "svc/$RELEASE-metrics" 9090
  scrape=""
  for _ in $(seq 1 50); do
    scrape=$(rcurl -fs "$SCHEME://127.0.0.1:$FWD_PORT/actuator/prometheus") && break
    sleep 0.2
  done
  stop_forward "$FWD_PID"
  for metric in ringkv_client_requests_seconds_count ringkv_replica_breaker_state ringkv_storage_sst_live_bytes jvm_memory_used_bytes; do
    grep -q "^$metric{" <<<"$scrape" || fail "/actuator/prometheus through svc/$RELEASE-metrics has no $metric"
  done
  log "ServiceMonitor, PrometheusRule and dashboard installed; svc/$RELEASE-metrics: 3 pods, /actuator/prometheus serves the dashboard's metrics"
}
