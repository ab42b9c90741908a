# shellcheck shell=bash
# Sourced by e2e/run.sh: step 9, a rolling restart under load, a proof of "steady under restarts".
#
#   rolling_restart_under_k6   The chart's k6 Job (mixed, 2/3, $RESTART_RATE/s, every GET must
#                              find its key; lib/loadtest-job.sh) runs while `kubectl rollout
#                              restart` replaces the 3 pods one by one: k6 must count 0 failed
#                              requests, and its load must cover the whole restart.

RESTART_RATE=${E2E_RESTART_RATE:-100}              # k6 requests per second during the rolling restart
# The longest k6 may run: it is stopped 10 s after the restart (63-73 s in CI runs, 151 s on the
# slowest day measured), and fails the step if the restart outlasts it.
RESTART_LOAD_SECONDS=${E2E_RESTART_LOAD_SECONDS:-300}

rolling_restart_under_k6() {
  local sts_generation uids_before t_restart restart_took
  uids_before=$(release_pods_uids)
  start_k6_for_fault "$RESTART_RATE" "$RESTART_LOAD_SECONDS" 100 300
  kubectl -n "$NAMESPACE" rollout restart "statefulset/$RELEASE" >/dev/null
  t_restart=$SECONDS
  k rollout status "statefulset/$RELEASE" --timeout="${RESTART_LOAD_SECONDS}s" >/dev/null \
    || fail "the rolling restart did not finish within ${RESTART_LOAD_SECONDS}s"
  restart_took=$((SECONDS - t_restart))
  sts_generation=$(statefulset_generation)
  expect_every_pod_replaced "$uids_before" "the rollout"
  log "kubectl rollout restart: the 3 pods replaced one by one in ${restart_took}s, $((t_restart - K6_STARTED))s after k6 began"
  stop_k6_after_fault "the rolling restart" "$restart_took" E2E_RESTART_LOAD_SECONDS

  expect_k6_failed_nothing "$RESTART_RATE" "a rolling restart of $restart_took s"
  eventually 60 all_pods_see 3 || fail "after the rolling restart not every pod sees the 3 members: $LAST_VIEW"

  # Off again, as in step 13: the Job and ConfigMap go, the StatefulSet is left as it is.
  disable_loadtest_job
  [ "$(statefulset_generation)" = "$sts_generation" ] \
    || fail "disabling the load test after the restart changed the StatefulSet (a second rollout)"
  log "loadtest disabled again: Job, pod and ConfigMap gone; every pod sees the 3 members"
}
