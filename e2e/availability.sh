# shellcheck shell=bash
# Sourced by e2e/run.sh: its two availability steps, the proofs of "steady under load and restarts".
#
#   pending_pod_under_writes   (step 8) On 5 pods under the write checker's load (2/3), the node
#                              cordoned and the highest pod deleted: its replacement stays Pending
#                              for $PENDING_SECONDS. Every running pod's GET /v0/cluster must keep
#                              listing the same 5 members all along (e2e/checker ring); once the
#                              pod is back and Ready, the hints the others kept for it must be
#                              replayed: ringkv_hints_pending (> 0 at the end of the Pending time)
#                              back to 0 on each within $HINTS_DRAIN_SECONDS, at least as many
#                              more in ringkv_hints_replayed_total (summed over the 4 others), none
#                              in ringkv_hints_dropped_total. Nothing acknowledged may be lost
#                              (check and census, as in step 7).
#   rolling_restart_under_k6   (step 10) The chart's k6 Job (mixed, 2/3, $RESTART_RATE/s, every
#                              GET must find its key) runs while `kubectl rollout restart` replaces
#                              the 3 pods one by one: k6 must count 0 failed requests.
#
# Both fail the step, after printing everything they measured, when the property does not hold.
# They use run.sh's helpers and state (k, log, fail, port_forward, forward, stop_forward,
# eventually, expected_members, all_pods_see, start_load, stop_load, check_and_census, RELEASE,
# NAMESPACE, WORK, RECORD, secret, K6_IMAGE), so run.sh sources this file before its steps.

PENDING_SECONDS=${E2E_PENDING_SECONDS:-60}         # how long the replacement pod is kept Pending
HINTS_DRAIN_SECONDS=${E2E_HINTS_DRAIN_SECONDS:-60} # after it is Ready, for the others' hints to reach 0
RESTART_RATE=${E2E_RESTART_RATE:-100}              # k6 requests per second during the rolling restart
RESTART_LOAD_SECONDS=${E2E_RESTART_LOAD_SECONDS:-150} # k6's run; the restart (69 s measured) must end within it

CORDONED_NODE=""  # the node pending_pod_under_writes cordoned and has not yet uncordoned

# Called by run.sh's exit trap as well: the cluster is shared by the later steps (and by whatever
# runs on it next), so a cordoned node must never be left behind.
availability_cleanup() {
  [ -n "$CORDONED_NODE" ] || return 0
  kubectl uncordon "$CORDONED_NODE" >/dev/null 2>&1 || echo "WARNING: kubectl uncordon $CORDONED_NODE failed" >&2
  CORDONED_NODE=""
}

# The sum of a metric's samples over all its label sets in /actuator/prometheus of the pod whose
# management port is forwarded to 127.0.0.1:$1, as an integer; empty if the pod did not answer.
metric_sum() { # local-port metric
  { curl -fs --max-time 5 "http://127.0.0.1:$1/actuator/prometheus" || true; } \
    | awk -v m="$2" '$1 == m || index($1, m "{") == 1 { s += $NF; n++ } END { if (n) printf "%d\n", s }'
}
has_metric() { # local-port metric
  [ -n "$(metric_sum "$1" "$2")" ]
}
# The three hint counters summed over the pods whose management ports are forwarded to the
# given local ports: "stored replayed dropped" (a pod that does not answer counts 0).
hint_counters() { # local-port...
  local port stored=0 replayed=0 dropped=0 value
  for port in "$@"; do
    value=$(metric_sum "$port" ringkv_hints_stored_total); stored=$((stored + ${value:-0}))
    value=$(metric_sum "$port" ringkv_hints_replayed_total); replayed=$((replayed + ${value:-0}))
    value=$(metric_sum "$port" ringkv_hints_dropped_total); dropped=$((dropped + ${value:-0}))
  done
  echo "$stored $replayed $dropped"
}

# ---- step 8: a pod kept Pending on 5 pods --------------------------------------------------------

pending_pod_under_writes() {
  local victim="$RELEASE-4" others=(0 1 2 3) i t_delete t_pending t_ready node old_uid state
  local ring_pods=() expect=() metric_ports=() forwards=() problems=() ring_pid ring_status=0 member
  local before_stored before_replayed before_dropped after_stored after_replayed after_dropped
  local pending_at_return="" pending_sum=0 drained=() drained_at=() value

  eventually 180 all_pods_see 5 normal || fail "not every pod sees 5 members, all NORMAL: $LAST_VIEW"
  node=$(k get pod "$victim" -o jsonpath='{.spec.nodeName}')
  [ -n "$node" ] || fail "$victim runs on no node"
  [ "$(kubectl get nodes -o name | grep -c .)" = 1 ] \
    || fail "this step needs a single-node cluster (cordoning the node keeps the replacement Pending)"

  # Forwards, kept for the whole step: the writers' (pods 0 and 1), and the public and management
  # ports of the 4 pods that stay.
  # W0 and W1: where run.sh's start_load writes.
  forward "pod/$RELEASE-0"; forwards+=("$FWD_PID")
  # shellcheck disable=SC2034
  W0=$BASE
  forward "pod/$RELEASE-1"; forwards+=("$FWD_PID")
  # shellcheck disable=SC2034
  W1=$BASE
  for i in "${others[@]}"; do
    forward "pod/$RELEASE-$i"; forwards+=("$FWD_PID")
    ring_pods+=(--pod "$RELEASE-$i=$BASE")
    port_forward "pod/$RELEASE-$i" 9090; forwards+=("$FWD_PID")
    metric_ports[i]=$FWD_PORT
  done
  for i in "${others[@]}"; do
    eventually 20 has_metric "${metric_ports[i]}" ringkv_hints_replayed_total \
      || fail "$RELEASE-$i:9090/actuator/prometheus has no ringkv_hints_replayed_total"
  done
  read -r before_stored before_replayed before_dropped < <(hint_counters "${metric_ports[@]}")

  start_load pending
  sleep 5
  # The ring as each of the 4 pods that stay sees it, every 3 s from just before the delete until
  # the pod is back and its hints are replayed: always the same 5 members.
  rm -f "$WORK/ring-stop"
  for member in $(expected_members 5); do expect+=(--expect "$member"); done
  python3 e2e/checker ring "${ring_pods[@]}" "${expect[@]}" --interval 3 --stop-file "$WORK/ring-stop" --duration 900 >"$WORK/ring.log" 2>&1 &
  ring_pid=$!
  BG_PIDS+=("$ring_pid")

  CORDONED_NODE=$node  # first: the exit trap uncordons it whatever happens from here on
  kubectl cordon "$node" >/dev/null
  old_uid=$(k get pod "$victim" -o jsonpath='{.metadata.uid}')
  k delete pod "$victim" --wait=false >/dev/null
  t_delete=$SECONDS
  log "node $node cordoned, $victim deleted; writing at 2/3 through $RELEASE-0 and $RELEASE-1 meanwhile"

  # The StatefulSet creates the replacement once the old pod is gone (its grace period may pass).
  pod_state() { k get pod "$victim" -o jsonpath='{.metadata.uid} {.status.phase} {.spec.nodeName}' 2>/dev/null || true; }
  until state=$(pod_state) && [ "${state%% *}" != "$old_uid" ] && [ "$state" = "${state%% *} Pending " ]; do
    [ $((SECONDS - t_delete)) -lt 150 ] || fail "no Pending replacement of $victim within 150s (state: ${state:-none})"
    sleep 1
  done
  t_pending=$SECONDS
  log "$victim is Pending $((t_pending - t_delete))s after the delete ($(k get pod "$victim" \
    -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')); keeping it so for ${PENDING_SECONDS}s"
  while [ $((SECONDS - t_pending)) -lt "$PENDING_SECONDS" ]; do
    sleep 3
    state=$(pod_state)
    [ "$state" = "${state%% *} Pending " ] || fail "$victim did not stay Pending on the cordoned node: $state"
  done
  for i in "${others[@]}"; do
    value=$(metric_sum "${metric_ports[i]}" ringkv_hints_pending)
    pending_at_return+="$RELEASE-$i ${value:-?} "
    pending_sum=$((pending_sum + ${value:-0}))
  done
  log "after ${PENDING_SECONDS}s Pending, hints waiting on the others (ringkv_hints_pending): $pending_at_return"
  # Under 2/3 writes, the coordinators (pods 0 and 1) keep what ringkv-4 misses as hints.
  [ "$pending_sum" -gt 0 ] \
    || problems+=("no hints were waiting for $victim after ${PENDING_SECONDS}s Pending under writes (ringkv_hints_pending: $pending_at_return)")

  kubectl uncordon "$node" >/dev/null
  CORDONED_NODE=""
  k wait --for=condition=Ready "pod/$victim" --timeout=240s >/dev/null \
    || fail "$victim was not Ready within 240s of the uncordon"
  t_ready=$SECONDS
  log "uncordoned; $victim Ready $((t_ready - t_pending - PENDING_SECONDS))s later ($((t_ready - t_delete))s after the delete)"

  # Each of the others must get its hints for the returning pod replayed: pending back to 0.
  until [ "${#drained[@]}" = "${#others[@]}" ] || [ $((SECONDS - t_ready)) -ge "$HINTS_DRAIN_SECONDS" ]; do
    for i in "${others[@]}"; do
      [ -z "${drained[i]:-}" ] || continue
      [ "$(metric_sum "${metric_ports[i]}" ringkv_hints_pending)" != 0 ] || { drained[i]=1; drained_at[i]=$((SECONDS - t_ready)); }
    done
    [ "${#drained[@]}" = "${#others[@]}" ] || sleep 2
  done
  read -r after_stored after_replayed after_dropped < <(hint_counters "${metric_ports[@]}")
  for i in "${others[@]}"; do
    if [ -n "${drained[i]:-}" ]; then
      log "$RELEASE-$i: no hints waiting ${drained_at[i]}s after $victim was Ready"
    else
      problems+=("$RELEASE-$i still has $(metric_sum "${metric_ports[i]}" ringkv_hints_pending) hints waiting ${HINTS_DRAIN_SECONDS}s after $victim was Ready")
    fi
  done
  log "hints on the 4 others during the step: $((after_stored - before_stored)) stored," \
    "$((after_replayed - before_replayed)) replayed, $((after_dropped - before_dropped)) dropped"
  [ "$after_replayed" -gt "$before_replayed" ] && [ $((after_replayed - before_replayed)) -ge "$pending_sum" ] \
    || problems+=("the hints waiting for $victim were not replayed: ringkv_hints_replayed_total (4 others) went up by $((after_replayed - before_replayed)), $pending_sum were waiting when it returned")
  [ "$after_dropped" = "$before_dropped" ] \
    || problems+=("$((after_dropped - before_dropped)) hints were dropped instead of replayed (ringkv_hints_dropped_total, 4 others)")

  touch "$WORK/ring-stop"
  wait "$ring_pid" || ring_status=$?
  sed 's/^/    /' "$WORK/ring.log"
  log "(ring times are seconds after the watch began, just before the delete)"
  [ "$ring_status" = 0 ] || problems+=("the ring changed while $victim was away: $(grep -E '^ring: (CHANGED|NOT WATCHED)' "$WORK/ring.log" | xargs)")
  if eventually 120 all_pods_see 5 normal; then
    log "every pod, $victim too, sees the 5 members, all NORMAL, $((SECONDS - t_ready))s after it was Ready"
  else
    problems+=("not every pod sees the 5 members, all NORMAL, 120s after $victim was Ready: $LAST_VIEW")
  fi
  stop_load
  for i in "${forwards[@]}"; do stop_forward "$i"; done
  for i in "${!problems[@]}"; do echo "VIOLATION: ${problems[i]}" >&2; done
  # Nothing acknowledged lost, whatever else went wrong: check and census fail the step themselves.
  check_and_census 5
  [ "${#problems[@]}" = 0 ] || fail "a pod Pending for ${PENDING_SECONDS}s on 5 pods: ${#problems[@]} violation(s), listed above"
}

# ---- step 10: a rolling restart under the k6 Job ---------------------------------------------------

rolling_restart_under_k6() {
  local job job_pod sts_generation uids_before uids_after t_start t_restart restart_took k6_log failed="" total="" exit_codes
  uids_before=$(release_pods_uids)
  helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --wait --timeout 5m \
    --set loadtest.enabled=true \
    --set loadtest.image.repository="${K6_IMAGE%:*}" --set-string loadtest.image.tag="${K6_IMAGE##*:}" \
    --set loadtest.scenario=mixed --set-string loadtest.replicas=2/3 \
    --set loadtest.rate="$RESTART_RATE" --set loadtest.duration="${RESTART_LOAD_SECONDS}s" --set loadtest.keyspace=1000 \
    --set loadtest.p99Ms=10000 --set loadtest.maxErrorRate=0 --set loadtest.fill=init \
    --set loadtest.activeDeadlineSeconds=$((RESTART_LOAD_SECONDS + 240)) \
    --set-string loadtest.env.VUS=100 --set-string loadtest.env.MAX_VUS=300 --set-string loadtest.env.FILL_VUS=8 >/dev/null
  job=$(k get jobs -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/component=loadtest \
    -o jsonpath='{.items[*].metadata.name}')
  if [ -z "$job" ] || [ "$job" != "${job%% *}" ]; then fail "expected one loadtest Job, found: '$job'"; fi
  log "Job $job: fill 1000 keys, then mixed at 2/3, ${RESTART_RATE}/s for ${RESTART_LOAD_SECONDS}s; not one request may fail"

  # The restart begins once k6 itself runs (the fill is done) and has run for a few seconds.
  k6_running() {
    job_pod=$(k get pods -l job-name="$job" -o jsonpath='{.items[0].metadata.name}' 2>/dev/null || true)
    [ -n "$job_pod" ] && [ -n "$(k get pod "$job_pod" \
      -o jsonpath='{.status.containerStatuses[?(@.name=="k6")].state.running.startedAt}' 2>/dev/null)" ]
  }
  eventually 240 k6_running || fail "k6 did not start within 240s (the fill failed or is stuck): $(k logs "job/$job" -c fill --tail=20 2>&1)"
  t_start=$SECONDS
  sleep 10
  kubectl -n "$NAMESPACE" rollout restart "statefulset/$RELEASE" >/dev/null
  t_restart=$SECONDS
  k rollout status "statefulset/$RELEASE" --timeout="${RESTART_LOAD_SECONDS}s" >/dev/null \
    || fail "the rolling restart did not finish within ${RESTART_LOAD_SECONDS}s"
  restart_took=$((SECONDS - t_restart))
  sts_generation=$(k get statefulset "$RELEASE" -o jsonpath='{.metadata.generation}')
  uids_after=$(release_pods_uids)
  [ "$(comm -12 <(tr ' ' '\n' <<<"$uids_before" | sort) <(tr ' ' '\n' <<<"$uids_after" | sort) | grep -c .)" = 0 ] \
    || fail "the rollout did not replace every pod (uids before: $uids_before; after: $uids_after)"
  # The load must have covered the whole restart: k6 still running now.
  if [ -n "$(job_status "$job" Complete)$(job_status "$job" Failed)" ] || ! k6_running; then
    fail "k6 ended before the rolling restart did (it took ${restart_took}s): raise E2E_RESTART_LOAD_SECONDS"
  fi
  log "kubectl rollout restart: the 3 pods replaced one by one in ${restart_took}s," \
    "$((t_restart - t_start))s after k6 began; k6 runs $((RESTART_LOAD_SECONDS - (SECONDS - t_start)))s more"

  local deadline=$((SECONDS + RESTART_LOAD_SECONDS + 120))
  until k wait --for=condition=complete "job/$job" --timeout=5s >/dev/null 2>&1; do
    [ "$(job_status "$job" Failed)" != True ] || break
    [ $SECONDS -lt $deadline ] || fail "the loadtest Job neither completed nor failed in time"
  done
  k6_log=$(k logs "job/$job" -c k6 2>&1 || true)
  # k6 logs each failed request as a warning: the first few say how they failed.
  printf '%s\n' "$k6_log" | grep -E 'level=(warning|error)' | head -n 10 | cut -c1-300 | sed 's/^/    /' || true
  printf '%s\n' "$k6_log" | grep -E '^ *(http_reqs|http_req_failed|http_req_duration |dropped_iterations|checks|vus_max)|FAILED' | sed 's/^ */    /' || true
  # http_req_failed's line: "<rate>%  <failed> of <requests>".
  read -r failed total < <(printf '%s\n' "$k6_log" | sed -n 's/^ *http_req_failed[ .]*[0-9.]*%  *\([0-9]*\) of \([0-9]*\).*/\1 \2/p') || true
  [ -n "${total:-}" ] || { printf '%s\n' "$k6_log" | sed 's/^/    /'; fail "k6's log has no summary (http_req_failed)"; }
  log "k6: $failed failed requests of $total during a rolling restart of $restart_took s" \
    "($(printf '%s\n' "$k6_log" | sed -n 's/^ *http_reqs \.*[ .]*[0-9]*  *\([0-9.]*\/s\).*/\1/p'))"
  if [ "$(job_status "$job" Complete)" != True ] || [ "$failed" != 0 ]; then
    exit_codes=$(k get pods -l job-name="$job" -o jsonpath='{.items[*].status.containerStatuses[*].state.terminated.exitCode}' | xargs)
    fail "the rolling restart under ${RESTART_RATE}/s failed $failed of $total requests (k6 exit code ${exit_codes:-none}; statuses above)"
  fi
  [ "$total" -ge $((RESTART_RATE * RESTART_LOAD_SECONDS * 9 / 10)) ] \
    || fail "k6 made only $total requests, under 90 % of ${RESTART_RATE}/s for ${RESTART_LOAD_SECONDS}s"
  eventually 60 all_pods_see 3 || fail "after the rolling restart not every pod sees the 3 members: $LAST_VIEW"

  # Off again, as in step 9: the Job and ConfigMap go, the StatefulSet is left as it is.
  helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --set loadtest.enabled=false \
    --wait --timeout 5m >/dev/null
  eventually 60 no_loadtest_objects || fail "the loadtest Job, its pod or ConfigMap are still there after disabling it"
  [ "$(k get statefulset "$RELEASE" -o jsonpath='{.metadata.generation}')" = "$sts_generation" ] \
    || fail "disabling the load test after the restart changed the StatefulSet (a second rollout)"
  log "loadtest disabled again: Job, pod and ConfigMap gone; every pod sees the 3 members"
}

release_pods_uids() {
  k get pods -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/name=ringkv -o jsonpath='{.items[*].metadata.uid}'
}
job_status() { # job TYPE -> True when the Job has that condition
  k get job "$1" -o jsonpath="{.status.conditions[?(@.type==\"$2\")].status}" 2>/dev/null
}
no_loadtest_objects() {
  [ -z "$(k get jobs,configmaps,pods -l app.kubernetes.io/component=loadtest -o name 2>/dev/null)" ]
}
