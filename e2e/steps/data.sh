# shellcheck shell=bash
# Sourced by e2e/run.sh: steps 5 and 6, data through the API and across a pod's replacement.
#
#   client_api_round_trip   (5) PUT and GET at 2/3 and 3/3, and a range, through the client Service
#   deleted_pod_comes_back  (6) while a deleted pod is replaced, 2/3 writes and reads keep working;
#                               it rejoins under its name and still holds its own copy of a key
#                               written before (read over its cluster port); sets secret, the
#                               cluster secret the checker needs from here on

client_api_round_trip() {
  local svc replicas i range
  forward "svc/$RELEASE"
  svc=$BASE
  for replicas in 2/3 3/3; do
    for i in 1 2 3; do
      expect_status 201 PUT "$svc/v0/entity?id=e2e-$i&replicas=$replicas" "value-$i-$replicas"
      [ "$(rcurl -fs "$svc/v0/entity?id=e2e-$i&replicas=$replicas")" = "value-$i-$replicas" ] || fail "GET e2e-$i with $replicas"
    done
  done
  range=$(rcurl -fs "$svc/v0/entities?start=e2e-&end=e2e-9" | tr '\n' ' ')
  [ "$range" = "e2e-1 value-1-3/3e2e-2 value-2-3/3e2e-3 value-3-3/3" ] || fail "the range returned: $range"
  stop_forwards
  log "2/3 and 3/3 writes and reads, and the range, are right"
}

deleted_pod_comes_back() {
  local pod0 old_ip old_uid rounds deadline new_ip own
  forward "pod/$RELEASE-0"
  pod0=$BASE
  expect_status 201 PUT "$pod0/v0/entity?id=survivor&replicas=3/3" kept
  old_ip=$(k get pod "$RELEASE-2" -o jsonpath='{.status.podIP}')
  old_uid=$(k get pod "$RELEASE-2" -o jsonpath='{.metadata.uid}')
  k delete pod "$RELEASE-2" --wait=false >/dev/null
  # Until the StatefulSet's new pod is ready, every round writes and reads with 2/3.
  rounds=0
  deadline=$((SECONDS + 180))
  until [ "$(k get pod "$RELEASE-2" -o jsonpath='{.metadata.uid}' 2>/dev/null)" != "$old_uid" ] \
      && k wait --for=condition=Ready "pod/$RELEASE-2" --timeout=1s >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "$RELEASE-2 was not recreated"
    rounds=$((rounds + 1))
    expect_status 201 PUT "$pod0/v0/entity?id=while-down-$rounds&replicas=2/3" v
    expect_status 200 GET "$pod0/v0/entity?id=survivor&replicas=2/3"
    sleep 0.5
  done
  stop_forwards
  new_ip=$(k get pod "$RELEASE-2" -o jsonpath='{.status.podIP}')
  log "$rounds rounds of 2/3 writes and reads succeeded while $RELEASE-2 was replaced ($old_ip -> $new_ip)"
  eventually 60 all_pods_see 3 || fail "$RELEASE-2 did not rejoin under its name"
  own=$(peer_read "pod/$RELEASE-2" survivor "$RINGKV_CLUSTER_SECRET") || fail "$RELEASE-2 lost its copy of 'survivor'"
  [ "$own" = kept ] || fail "$RELEASE-2's own copy of 'survivor' is '$own', expected 'kept'"
  stop_forwards
  log "$RELEASE-2 still holds the key written before it was deleted (read over its cluster port with the secret)"
}
