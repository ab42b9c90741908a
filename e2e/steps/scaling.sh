# shellcheck shell=bash
# Sourced by e2e/run.sh: steps 7 and 8, scaling under a write load, checked Jepsen style (e2e/checker).
#
#   scale_cycle_then_up       (7) 3 -> 5 -> 3 by helm upgrade, then 3 -> 5 by kubectl scale
#   scale_down                (8, after the Pending pod on 5) 5 -> 3 by kubectl scale
# Writing at 2/3 all along each move: not one write fails (no 5xx, no timeout), after each move
# every pod sees the new members (all NORMAL after a scale-up), nothing acknowledged is lost (check)
# and every key is on min(3, pods) pods (census); the leaving pods' data-movement log lines are
# shown. Creates WORK (steps 7, 8 and 12).

scale_up() { # how: helm or kubectl
  local how=$1 t pid forwards=()
  forward "pod/$RELEASE-0"; W0=$BASE; forwards+=("$FWD_PID")
  forward "pod/$RELEASE-1"; W1=$BASE; forwards+=("$FWD_PID")
  t=$SECONDS
  start_load "$how-up" 0
  scale_to 5 "$how"
  log "$how: 3 -> 5, the 5 pods Ready after $((SECONDS - t))s (writing at 2/3 meanwhile)"
  t=$SECONDS
  eventually 180 all_pods_see 5 normal || fail "$how: not every pod sees 5 members, all NORMAL: $LAST_VIEW"
  log "$how: every pod sees 5 members, all NORMAL, $((SECONDS - t))s later; writing 10s more"
  sleep 10
  # The load stops before the checks: they compare with the record, which must be complete.
  stop_load
  check_and_census 5
  for pid in "${forwards[@]}"; do stop_forward "$pid"; done
}

scale_down() { # how: helm or kubectl
  local how=$1 t i forwards=() followers=()
  forward "pod/$RELEASE-0"; W0=$BASE; forwards+=("$FWD_PID")
  forward "pod/$RELEASE-1"; W1=$BASE; forwards+=("$FWD_PID")
  t=$SECONDS
  start_load "$how-down" 0
  # A deleted pod's log is gone with it (no --previous): follow the leaving ones' logs until they end.
  for i in 3 4; do
    kubectl -n "$NAMESPACE" logs -f "pod/$RELEASE-$i" -c ringkv >"$WORK/$how-leaving-$i.log" 2>&1 &
    followers+=("$!")
    BG_PIDS+=("$!")
  done
  scale_to 3 "$how"
  log "$how: 5 -> 3, $RELEASE-3 and $RELEASE-4 gone after $((SECONDS - t))s (writing at 2/3 meanwhile)"
  t=$SECONDS
  eventually 120 all_pods_see 3 || fail "$how: not every pod sees the 3 members: $LAST_VIEW"
  log "$how: every pod sees 3 members $((SECONDS - t))s later (the last: $LAST_VIEW)"
  stop_load
  check_and_census 3

  for i in "${followers[@]}"; do kill "$i" 2>/dev/null || true; done
  for i in 3 4; do
    log "$how: what $RELEASE-$i said about moving its data (its DataMovement and RepairLedger log lines):"
    if grep -qE 'DataMovement|RepairLedger' "$WORK/$how-leaving-$i.log"; then
      grep -E 'DataMovement|RepairLedger' "$WORK/$how-leaving-$i.log" | tail -n 20 | cut -c1-400 | sed "s/^/    $RELEASE-$i: /"
    else
      echo "    (none of its $(wc -l <"$WORK/$how-leaving-$i.log") captured log lines; the last ones:)"
      tail -n 5 "$WORK/$how-leaving-$i.log" | sed "s/^/    $RELEASE-$i: /"
    fi
  done
  for i in "${forwards[@]}"; do stop_forward "$i"; done
}

# Each move continues the record of the one before (the same 1000 keys scale-0..999), so its checks
# cover the writes of all. The PVCs are retained on scale-down (whenScaled: Retain): by kubectl,
# pods 3 and 4 come back on their old volumes (the node wipes and rejoins).
scale_cycle_then_up() {
  local t
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/ringkv-e2e.XXXXXX")
  t=$SECONDS
  scale_up helm
  scale_down helm
  log "helm: the cycle 3 -> 5 -> 3 took $((SECONDS - t))s"
  t=$SECONDS
  scale_up kubectl
  log "kubectl: 3 -> 5 took $((SECONDS - t))s; step 8 runs on the 5 pods, then scales back to 3"
  [ "$(k get statefulset "$RELEASE" -o jsonpath='{.spec.replicas}')" = 5 ] || fail "the StatefulSet does not want 5 replicas"
}
