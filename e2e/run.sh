#!/usr/bin/env bash
# End-to-end test of the Helm chart on a real Kubernetes cluster: the one KUBECONFIG points at.
#
#   e2e/run.sh                      # against the current cluster
#   KUBE_LOCAL=1 e2e/run.sh         # start ../shared/kube-local first, and stop it afterwards
#
# Needs docker (to build the images), kubectl, helm, go (for the CRDs, below, and SeaweedFS),
# curl and python3 (3.11, standard library only, for the write checker). Images are built locally and loaded into the
# cluster with $LOAD_IMAGE (default: kube-local's load-image.sh when it is beside the checkout;
# for kind: LOAD_IMAGE="kind load docker-image"). Everything it creates lives in two fresh
# namespaces (the release's, and the one step 12 restores its backup into), removed at the end
# whether the test passed or not; with KUBE_LOCAL=1 the cluster is stopped at the end too (also
# when starting it failed). Backups go to SeaweedFS's S3 gateway (bin/s3-server, built from the Go
# module proxy the first time), started on this machine at an address the pods reach.
#
# The chart is installed with its monitoring objects (ServiceMonitor, PrometheusRule, Grafana
# dashboard); the Prometheus Operator's CRDs they need are installed first
# (e2e/monitoring-crds.sh, from the Go module proxy: needs go) and left in the cluster, as CRDs
# belong to no namespace. No Prometheus runs: step 4 scrapes the nodes through the ServiceMonitor's
# Service itself.
#
# This file is the list of steps; each is a function in e2e/steps/ (one file a concern, with what
# it proves at its top), built on e2e/lib/ (harness, port-forwards, the release's pods and
# members, the write checker, the k6 Job). The write checker, e2e/checker/ (load, check, census,
# ring, peer-read), proves Jepsen style that no acknowledged write is lost; its tests run in
# step 1. Settings: E2E_NAMESPACE, RINGKV_IMAGE_TAG, E2E_PENDING_SECONDS,
# E2E_HINTS_DRAIN_SECONDS (step 8), E2E_RESTART_RATE, E2E_RESTART_LOAD_SECONDS (step 9),
# E2E_S3_IP (default: kube-local's node address), E2E_S3_PORT, E2E_RESTORED_REPLICAS (step 12),
# E2E_ZONE_RESTART_RATE, E2E_ZONE_RESTART_LOAD_SECONDS (step 14). The k6 load of steps 9 and 14
# is stopped through k6's REST API 10 s after the restart; the *_LOAD_SECONDS are the longest it
# may run.
set -euo pipefail
cd "$(dirname "$0")/.."

KL=../shared/kube-local
NAMESPACE=${E2E_NAMESPACE:-ringkv-e2e-$(date +%s)}
RELEASE=ringkv
TAG=${RINGKV_IMAGE_TAG:-e2e-$(git rev-parse --short HEAD 2>/dev/null || date +%s)}

# shellcheck source-path=SCRIPTDIR/..
{
  . e2e/lib/harness.sh
  . e2e/lib/forward.sh
  . e2e/lib/credentials.sh
  . e2e/lib/cluster.sh
  . e2e/lib/checker.sh
  . e2e/lib/loadtest-job.sh
  . e2e/steps/setup.sh
  . e2e/steps/data.sh
  . e2e/steps/scaling.sh
  . e2e/steps/pending-pod.sh
  . e2e/steps/k6-job.sh
  . e2e/steps/rolling-restart.sh
  . e2e/steps/security.sh
  . e2e/steps/backup-restore.sh
  . e2e/steps/zones.sh
  . e2e/steps/teardown.sh
}
trap on_exit EXIT
# The trap is set first, so that a failure from here on still stops kube-local.
prepare_cluster
start_object_store

step "1/15 the unit tests of the write checker (e2e/checker) used in steps 7, 8 and 12"
checker_unit_tests
step "2/15 build the images and load them into the cluster"
build_and_load_images
step "3/15 helm install --wait, 3 replicas, with the monitoring objects and a backup target"
install_release
step "4/15 every pod sees the same 3 members by their stable names; helm test passes; the metrics Service serves Prometheus"
members_and_metrics
step "5/15 PUT, GET and a range through the client Service"
client_api_round_trip
step "6/15 a deleted pod: 2/3 keeps working, it comes back under its name with its data"
deleted_pod_comes_back
step "7/15 scale 3 -> 5 -> 3 by helm upgrade, then 3 -> 5 by kubectl scale, under 2/3 writes: not one write fails, nothing acknowledged is lost"
scale_cycle_then_up
step "8/15 a pod of 5 kept Pending for ${PENDING_SECONDS}s under 2/3 writes: the ring unchanged, its hints replayed, nothing acknowledged lost; then 5 -> 3 by kubectl scale"
pod_pending_on_five
step "9/15 kubectl rollout restart under the k6 Job (mixed, 2/3, ${RESTART_RATE}/s through the Service): not one request fails"
rolling_restart_under_k6
step "10/15 the security context holds; no internal endpoints on the public port; the cluster port wants the secret"
security_holds
step "11/15 a backup on backup.schedule (the CronJob's Job completes), then helm uninstall and the PVCs deleted"
scheduled_backup_then_gone
step "12/15 restored into another namespace with ${RESTORED_REPLICAS} replicas: nothing acknowledged lost, every key on 3 pods"
restore_elsewhere
step "13/15 the chart's k6 loadtest Job (fill, then mixed 2/3) completes with its thresholds met on the restored release"
k6_job_meets_thresholds
step "14/15 zones by value, 6 pods in 3 zones: restarted a zone at a time (3 steps, not 6) under the k6 Job: not one request fails"
zone_restart_under_k6
step "15/15 helm uninstall"
uninstall_release
step_passed
