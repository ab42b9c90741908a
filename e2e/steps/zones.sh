# shellcheck shell=bash
# Sourced by e2e/run.sh: step 14, failure domains on Kubernetes, on the release step 12 restored
# (6 pods, zones by value: kube-local's one Node has no topology.kubernetes.io/zone label).
#
#   zones_told               every pod's GET /v0/cluster gives each member the zone of its
#                            ordinal (cluster.zones.byOrdinal) and counts every member of a zone up
#   zone_restart_under_k6    the chart's k6 Job (mixed, 2/3, every GET must find its key) runs while
#                            the release is restarted a zone at a time, as docs/operations.md says:
#                            both pods of a zone deleted at once, Ready, minReadySeconds, the next
#                            zone. k6 must count 0 failed requests, in 3 steps where pod by pod
#                            takes 6. Each step is a whole zone lost for a while.

ZONES=(zone-a zone-b zone-c)
ZONES_VALUE="{$(IFS=,; echo "${ZONES[*]}")}"   # helm --set list syntax
ZONE_RESTART_RATE=${E2E_ZONE_RESTART_RATE:-50}
# The longest k6 may run: it is stopped 10 s after the third zone is back (each step, 2 pods
# stopping (drained) and starting on 2 shared cores, plus minReadySeconds: 126-181 s for the 3),
# and fails the step if the restart outlasts it.
ZONE_RESTART_LOAD_SECONDS=${E2E_ZONE_RESTART_LOAD_SECONDS:-420}

zone_of_pod() { # pod name -> its zone by ordinal
  echo "${ZONES[$(( ${1##*-} % ${#ZONES[@]} ))]}"
}

# One pod's GET /v0/cluster, as "zone member" lines and "zones <zone>=<members>/<up> ..." on the last.
zones_seen_by() { # pod
  try_forward "pod/$1" || return 0
  rcurl -fs --max-time 10 "$BASE/v0/cluster" 2>/dev/null | python3 -c '
import json, sys
view = json.load(sys.stdin)
for m in sorted(view["members"], key=lambda m: m["name"]):
    print(m.get("zone"), m["name"].split("//")[1].split(".")[0])
print("zones " + " ".join("%s=%d/%d" % (z["zone"], z["members"], z["up"]) for z in view["zones"]))' || true
  stop_forward "$FWD_PID"
}

zones_told() {
  local pod seen want
  want=$(for pod in $(release_pods); do echo "$(zone_of_pod "$pod") $pod"; done | LC_ALL=C sort -k2)
  want+=$'\n'"zones $(for zone in "${ZONES[@]}"; do
    pod=$(for pod in $(release_pods); do echo "$(zone_of_pod "$pod")"; done | grep -cx "$zone")
    printf '%s=%d/%d ' "$zone" "$pod" "$pod"
  done | sed 's/ $//')"
  for pod in $(release_pods); do
    seen=$(zones_seen_by "$pod")
    LAST_VIEW="$pod sees: $(tr '\n' ';' <<<"$seen")"
    [ "$seen" = "$want" ] || return 1
  done
}

zone_restart_under_k6() {
  local zone pod pods zone_uids t_zone took steps=0 uids_before
  eventually 60 zones_told || fail "the pods do not tell the zones by ordinal, every member up: $LAST_VIEW"
  log "every pod: each member in the zone of its ordinal ($ZONES_VALUE), every member of each zone up"

  uids_before=$(release_pods_uids)
  start_k6_for_fault "$ZONE_RESTART_RATE" "$ZONE_RESTART_LOAD_SECONDS" 50 200
  for zone in "${ZONES[@]}"; do
    pods=()
    for pod in $(release_pods); do [ "$(zone_of_pod "$pod")" != "$zone" ] || pods+=("$pod"); done
    t_zone=$SECONDS
    zone_uids=$(k get pod "${pods[@]}" -o jsonpath='{.items[*].metadata.uid}')
    # Not kubectl's own wait for the deletion: once it never returned (CI, 2026-12-04), with the
    # zone's new pods long Ready. The pods are gone when none of the release has their uids.
    k delete pod "${pods[@]}" --wait=false >/dev/null
    eventually 300 pods_replaced_and_ready "$RESTORED_REPLICAS" "$zone_uids" ||
      fail "$zone's pods (${pods[*]}) were not replaced and Ready again within 300s: $(release_pods)"
    sleep "$(k get statefulset "$RELEASE" -o jsonpath='{.spec.minReadySeconds}')"
    steps=$((steps + 1))
    log "$zone: ${pods[*]} deleted together, back and Ready in $((SECONDS - t_zone))s"
  done
  took=$((SECONDS - K6_STARTED - 10))
  expect_every_pod_replaced "$uids_before" "the zone restart"
  log "restarted a zone at a time: $RESTORED_REPLICAS pods in $steps steps (pod by pod: $RESTORED_REPLICAS) in ${took}s"
  stop_k6_after_fault "the zone restart" "$took" E2E_ZONE_RESTART_LOAD_SECONDS

  expect_k6_failed_nothing "$ZONE_RESTART_RATE" "a zone-at-a-time restart of $took s"
  eventually 60 zones_told || fail "after the zone restart the pods do not tell the zones, every member up: $LAST_VIEW"
  disable_loadtest_job
}
