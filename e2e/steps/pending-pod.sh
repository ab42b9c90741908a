# shellcheck shell=bash
# Sourced by e2e/run.sh: step 8, a pod kept away on 5 pods, a proof of "steady under load".
#
#   pod_pending_on_five       On the 5 pods step 7 left: pending_pod_under_writes, then 5 -> 3 by
#                             kubectl scale under writes (steps/scaling.sh: scale_down).
#   pending_pod_under_writes  On 5 pods under the write checker's load (2/3), the node cordoned
#                             and the highest pod deleted: its replacement stays Pending for
#                             $PENDING_SECONDS. Every running pod's GET /v0/cluster must keep
#                             listing the same 5 members all along (e2e/checker ring); once the
#                             pod is back and Ready, the hints the others kept for it must be
#                             replayed: ringkv_hints_pending (> 0 at the end of the Pending time)
#                             back to 0 on each within $HINTS_DRAIN_SECONDS, at least as many
#                             more in ringkv_hints_replayed_total (summed over the 4 others), none
#                             in ringkv_hints_dropped_total. Nothing acknowledged may be lost
#                             (check and census, as in step 7). It fails the step after printing
#                             everything it measured. The node is uncordoned again, also on failure.

PENDING_SECONDS=${E2E_PENDING_SECONDS:-30}         # how long the replacement pod is kept Pending (3,000 and more hints per node)
HINTS_DRAIN_SECONDS=${E2E_HINTS_DRAIN_SECONDS:-60} # after it is Ready, for the others' hints to reach 0

CORDONED_NODE=""  # the node pending_pod_under_writes cordoned and has not yet uncordoned

# Called by run.sh's exit trap as well: the cluster is shared by the later steps (and by whatever
# runs on it next), so a cordoned node must never be left behind.
uncordon_node_left_cordoned() {
  [ -n "$CORDONED_NODE" ] || return 0
  kubectl uncordon "$CORDONED_NODE" >/dev/null 2>&1 || echo "WARNING: kubectl uncordon $CORDONED_NODE failed" >&2
  CORDONED_NODE=""
}

# The sum of a metric's samples over all its label sets in /actuator/prometheus of the pod whose
# management port is forwarded to 127.0.0.1:$1, as an integer; empty if the pod did not answer.
metric_sum() { # local-port metric
  { rcurl -fs --max-time 5 "$SCHEME://127.0.0.1:$1/actuator/prometheus" || true; } \
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

pod_state() { # pod -> "uid phase node" (node empty while Pending unscheduled); empty when there is none
  k get pod "$1" -o jsonpath='{.metadata.uid} {.status.phase} {.spec.nodeName}' 2>/dev/null || true
}

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
  until state=$(pod_state "$victim") && [ "${state%% *}" != "$old_uid" ] && [ "$state" = "${state%% *} Pending " ]; do
    [ $((SECONDS - t_delete)) -lt 150 ] || fail "no Pending replacement of $victim within 150s (state: ${state:-none})"
    sleep 1
  done
  t_pending=$SECONDS
  log "$victim is Pending $((t_pending - t_delete))s after the delete ($(k get pod "$victim" \
    -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')); keeping it so for ${PENDING_SECONDS}s"
  while [ $((SECONDS - t_pending)) -lt "$PENDING_SECONDS" ]; do
    sleep 3
    state=$(pod_state "$victim")
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

pod_pending_on_five() {
  eventually 60 pods_ready 5 || fail "step 8 needs the 5 Ready pods step 7 left: $(release_pods)"
  pending_pod_under_writes
  scale_down kubectl
}
