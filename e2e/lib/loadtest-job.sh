# shellcheck shell=bash
# Sourced by e2e/run.sh: the chart's k6 loadtest Job (loadtest.enabled) as steps 9 and 13 run it:
# the mixed scenario at 2/3 over 1000 keys, which its init container fills first.

LOADTEST_JOB=""  # the Job that enable_loadtest_job started

enable_loadtest_job() { # helm option...: what differs (rate, duration, thresholds, VUs); sets LOADTEST_JOB
  helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --wait --timeout 5m \
    --set loadtest.enabled=true \
    --set loadtest.image.repository="${K6_IMAGE%:*}" --set-string loadtest.image.tag="${K6_IMAGE##*:}" \
    --set loadtest.scenario=mixed --set-string loadtest.replicas=2/3 --set loadtest.keyspace=1000 \
    --set loadtest.fill=init --set-string loadtest.env.FILL_VUS=8 "$@" >/dev/null
  LOADTEST_JOB=$(k get jobs -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/component=loadtest \
    -o jsonpath='{.items[*].metadata.name}')
  if [ -z "$LOADTEST_JOB" ] || [ "$LOADTEST_JOB" != "${LOADTEST_JOB%% *}" ]; then
    fail "expected one loadtest Job, found: '$LOADTEST_JOB'"
  fi
}

loadtest_job_status() { # TYPE -> True when the Job has that condition
  k get job "$LOADTEST_JOB" -o jsonpath="{.status.conditions[?(@.type==\"$1\")].status}" 2>/dev/null
}

wait_for_loadtest_job() { # seconds: until the Job completed or failed; fails the step after that long
  local deadline=$((SECONDS + $1))
  until k wait --for=condition=complete "job/$LOADTEST_JOB" --timeout=5s >/dev/null 2>&1; do
    [ "$(loadtest_job_status Failed)" != True ] || break
    [ $SECONDS -lt $deadline ] || fail "the loadtest Job neither completed nor failed within $1s"
  done
}

k6_running() { # the loadtest Job's k6 container (not its fill) is running
  local job_pod
  job_pod=$(k get pods -l job-name="$LOADTEST_JOB" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null || true)
  [ -n "$job_pod" ] && [ -n "$(k get pod "$job_pod" \
    -o jsonpath='{.status.containerStatuses[?(@.name=="k6")].state.running.startedAt}' 2>/dev/null)" ]
}

K6_STARTED=0  # when start_k6_for_fault saw k6 itself running ($SECONDS)

# The Job for a fault injected under it (steps 9 and 14): mixed at 2/3 at rate/s, and not one
# request may fail (p99 bound loose: a restart stalls requests in flight). k6 runs until
# stop_k6_after_fault stops it, at most max-seconds. Returns once k6 itself (not its fill) has run
# for 10 s, so the fault begins under load.
start_k6_for_fault() { # rate max-seconds vus max-vus
  local rate=$1 seconds=$2
  enable_loadtest_job --set loadtest.rate="$rate" --set loadtest.duration="${seconds}s" \
    --set loadtest.p99Ms=10000 --set loadtest.maxErrorRate=0 \
    --set loadtest.activeDeadlineSeconds=$((seconds + 240)) \
    --set-string loadtest.env.VUS="$3" --set-string loadtest.env.MAX_VUS="$4"
  log "Job $LOADTEST_JOB: fill 1000 keys, then mixed at 2/3, ${rate}/s until the fault is over (at most ${seconds}s); not one request may fail"
  eventually 240 k6_running || fail "k6 did not start within 240s (the fill failed or is stuck): $(k logs "job/$LOADTEST_JOB" -c fill --tail=20 2>&1)"
  K6_STARTED=$SECONDS
  sleep 10
}

K6_RAN=0                # how long k6 ran, as stop_k6_after_fault stopped it (seconds)
readonly K6_STOPPED=103 # k6's exit code when its REST API stopped the run (summary and thresholds as ever)

k6_stopped() { # PATCHes k6's REST API (localhost:6565 in its pod) through the port-forward at $FWD_PORT
  curl -fs -o /dev/null --max-time 5 -X PATCH "http://127.0.0.1:$FWD_PORT/v1/status" -H 'Content-Type: application/json' \
    -d '{"data":{"type":"status","id":"default","attributes":{"stopped":true}}}'
}

# The fault is over: k6 must still run (its load covered the whole fault); 10 s more of load, then
# k6 is stopped through its REST API, and ends as at the end of its duration (summary, thresholds)
# but with exit code 103. A fixed duration had to cover the slowest restart seen, and every
# second of it beyond the fault was CI time.
stop_k6_after_fault() { # what took-seconds setting
  local job_pod
  if [ -n "$(loadtest_job_status Complete)$(loadtest_job_status Failed)" ] || ! k6_running; then
    fail "k6 ended before $1 did (it took ${2}s): raise $3"
  fi
  sleep 10
  job_pod=$(k get pods -l job-name="$LOADTEST_JOB" -o jsonpath='{.items[0].metadata.name}')
  port_forward "pod/$job_pod" 6565
  eventually 20 k6_stopped || fail "k6's REST API (pod/$job_pod, port 6565) did not stop the run"
  stop_forward "$FWD_PID"
  K6_RAN=$((SECONDS - K6_STARTED))
  log "k6 stopped through its REST API after ${K6_RAN}s of load, 10s after $1"
}

# After a fault under the Job (steps 9 and 14), stopped by stop_k6_after_fault: k6 ended as stopped,
# with every threshold met, counted 0 failed requests, and made at least 90 % of the requests its
# rate asks for over the time it ran (it was not starved).
expect_k6_failed_nothing() { # rate what
  local rate=$1 what=$2 k6_log failed="" total="" exit_code
  wait_for_loadtest_job 120
  k6_log=$(k logs "job/$LOADTEST_JOB" -c k6 2>&1 || true)
  # k6 logs each failed request as a warning: the first few say how they failed.
  printf '%s\n' "$k6_log" | grep -E 'level=(warning|error)' | grep -v 'stopped from REST API' | head -n 10 | cut -c1-300 | sed 's/^/    /' || true
  printf '%s\n' "$k6_log" | grep -E '^ *(http_reqs|http_req_failed|http_req_duration |dropped_iterations|checks|vus_max)|FAILED|✗' | sed 's/^ */    /' || true
  # http_req_failed's line: "<rate>%  <failed> of <requests>".
  read -r failed total < <(printf '%s\n' "$k6_log" | sed -n 's/^ *http_req_failed[ .]*[0-9.]*%  *\([0-9]*\) of \([0-9]*\).*/\1 \2/p') || true
  [ -n "${total:-}" ] || { printf '%s\n' "$k6_log" | sed 's/^/    /'; fail "k6's log has no summary (http_req_failed)"; }
  log "k6: $failed failed requests of $total during $what" \
    "($(printf '%s\n' "$k6_log" | sed -n 's/^ *http_reqs \.*[ .]*[0-9]*  *\([0-9.]*\/s\).*/\1/p'))"
  exit_code=$(k get pods -l job-name="$LOADTEST_JOB" \
    -o jsonpath='{.items[0].status.containerStatuses[?(@.name=="k6")].state.terminated.exitCode}')
  if [ "$exit_code" != "$K6_STOPPED" ] || [ "$failed" != 0 ] || grep -qE 'FAILED|✗' <<<"$k6_log"; then
    fail "$what under ${rate}/s failed $failed of $total requests (k6 exit code ${exit_code:-none}, $K6_STOPPED when stopped with every threshold met; statuses above)"
  fi
  [ "$total" -ge $((rate * (K6_RAN - 1) * 9 / 10)) ] \
    || fail "k6 made only $total requests, under 90 % of ${rate}/s for the ${K6_RAN}s it ran"
}

no_loadtest_objects() {
  [ -z "$(k get jobs,configmaps,pods -l app.kubernetes.io/component=loadtest -o name 2>/dev/null)" ]
}

# Off again: helm deletes the Job and the ConfigMap; the later steps see the nodes alone.
disable_loadtest_job() {
  helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --set loadtest.enabled=false \
    --wait --timeout 5m >/dev/null
  eventually 60 no_loadtest_objects || fail "the loadtest Job, its pod or ConfigMap are still there after disabling it"
}
