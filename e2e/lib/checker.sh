# shellcheck shell=bash
# Sourced by e2e/run.sh: the write checker (e2e/checker) as the steps use it: a write load in the
# background, then check (nothing acknowledged lost) and census (every key on RF pods), and
# peer-read (one pod's own copy of a key).

# Reads one pod's OWN copy of a key over the node-to-node protocol, as a peer does: a port-forward
# to the pod's cluster port (7070), then e2e/checker peer-read: the handshake proving the
# cluster secret (and checking the node's proof back), then one READ. Prints the value; fails on a
# refusal, NOT_FOUND or a tombstone. (A public GET with replicas=1/1 would ask the key's first
# replica, not this pod.) Stops its own port-forward, so it may run in $(...).
peer_read() { # pod key secret
  local status=0
  port_forward "$1" 7070
  RINGKV_CLUSTER_SECRET=$3 python3 e2e/checker peer-read --port "$FWD_PORT" --key "$2" || status=$?
  stop_forward "$FWD_PID"
  return $status
}

# The load's writer threads go through pod 0 (threads 0 and 2) and pod 1 (threads 1 and 3), not
# through svc/$RELEASE: a port-forward to a Service picks one pod and sticks to it (so it would be
# one coordinator, but an unknown one); pods 0 and 1 are two coordinators, and neither leaves.
# Each key belongs to one thread, so one coordinator stamps a key's writes in order. The checks
# read through pod 2, a node that coordinated none of the writes (a fresh port-forward each time).
RECORD=""     # the newest record of the load: every key's last acknowledged write and what came after
LOAD_PID=""
LOAD_NAME=""
W0="" W1=""  # the base URLs the writers go through: the step sets them before start_load
start_load() { # name [max-unacked]: writes in the background, continuing $RECORD if there is one;
  # with max-unacked, stop_load fails if more writes than that went unacknowledged (5xx, timeouts)
  LOAD_NAME=$1
  rm -f "$WORK/stop"
  python3 e2e/checker load --url "$W0" --url "$W1" --record "$WORK/$LOAD_NAME.json" ${RECORD:+--resume "$RECORD"} \
    --threads 4 --keys 1000 --prefix scale- --replicas 2/3 --stop-file "$WORK/stop" --duration 400 --min-acked 200 \
    --max-unacked "${2:--1}" \
    >"$WORK/$LOAD_NAME.log" 2>&1 &
  LOAD_PID=$!
  BG_PIDS+=("$LOAD_PID")
}
stop_load() { # waits for the writers to finish and save their record; shows their counts
  local status=0
  touch "$WORK/stop"
  wait "$LOAD_PID" || status=$?
  sed "s/^/    [$LOAD_NAME] /" "$WORK/$LOAD_NAME.log"
  [ $status = 0 ] || fail "the load $LOAD_NAME failed (exit $status)"
  RECORD=$WORK/$LOAD_NAME.json
}
checker() { # what-failed, then the checker's arguments: shows its output, fails the step if it fails
  local what=$1 out status=0
  shift
  out=$(python3 e2e/checker "$@" 2>&1) || status=$?
  printf '%s\n' "$out" | sed 's/^/    /'
  [ $status = 0 ] || fail "$what"
}
check_and_census() { # n: reads every key at 2/3 (nothing acknowledged lost), then each of the n pods' own copies
  local n=$1 t=$SECONDS i pods=() pids=()
  forward "pod/$RELEASE-2"
  checker "an acknowledged write is lost (or unreadable) with $n pods" check --url "$BASE" --record "$RECORD" --replicas 2/3
  stop_forward "$FWD_PID"
  for i in $(seq 0 $((n - 1))); do
    port_forward "pod/$RELEASE-$i" 7070
    pods+=(--pod "$RELEASE-$i=127.0.0.1:$FWD_PORT")
    pids+=("$FWD_PID")
  done
  checker "keys are on fewer than min(3, $n) of the $n pods" census --record "$RECORD" "${pods[@]}"
  for i in "${pids[@]}"; do stop_forward "$i"; done
  log "check and census on $n pods: $((SECONDS - t))s"
}
