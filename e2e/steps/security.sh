# shellcheck shell=bash
# Sourced by e2e/run.sh: step 11, what an attacker on the network meets.
#
#   security_holds   the node runs as uid 10001 on a read-only root filesystem; the old HTTP
#                    internal endpoints answer 404 on the public port, also with the secret; the
#                    cluster port greets with RKV1 and closes the connection of a client without
#                    the secret within 10 s, and a 64 KiB frame before the handshake at once; the
#                    API server accepts the chart's NetworkPolicy.

security_holds() {
  local uid pod0 path code cluster_port target probe greeting closed_cs oversized_cs
  uid=$(k exec "$RELEASE-0" -c ringkv -- id -u)
  [ "$uid" = 10001 ] || fail "the node runs as uid $uid"
  if k exec "$RELEASE-0" -c ringkv -- sh -c 'touch /should-not-exist' 2>/dev/null; then
    fail "the root filesystem is writable"
  fi
  log "uid 10001, read-only root filesystem"
  # The old HTTP internal endpoints are gone: 404 on the public port, with or without the secret.
  forward "pod/$RELEASE-0"
  pod0=$BASE
  for path in "/internal/v0/record?id=survivor" /internal/v0/identity; do
    expect_status 404 GET "$pod0$path"
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-Ringkv-Cluster-Secret: $secret" "$pod0$path")
    [ "$code" = 404 ] || fail "GET $path with the old secret header answered $code, expected 404"
  done
  cluster_port=$(curl -fs "$pod0/v0/cluster" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("clusterPort"))')
  [ "$cluster_port" = 7070 ] || fail "GET /v0/cluster of $RELEASE-0 tells cluster port $cluster_port, expected 7070 (containerPorts.cluster)"
  stop_forwards
  log "/internal/v0/record and /internal/v0/identity: 404 on the public port, also with the secret; /v0/cluster tells clusterPort 7070"
  # The cluster port of a pod, by its DNS name, from a pod that does not know the secret: it greets
  # (int32 length 43, type 0x01 HELLO, int32 id 0, "RKV1", version, 32 random bytes) and closes the
  # connection once the handshake timeout (5 x the 1 s replication timeout) has passed; a frame
  # over 4096 bytes before the handshake (here a length of 65536) is cut off at once. nc -e keeps
  # the connection open for writing while od reads, so only the node can end it. Times from
  # /proc/uptime, in hundredths of a second.
  target="$RELEASE-0.$RELEASE-headless.$NAMESPACE.svc.cluster.local"
  # shellcheck disable=SC2016 # the script is for the probe pod's sh: its $ expand there
  probe=$(k run "probe-$$" --image="$BUSYBOX_IMAGE" --restart=Never --rm -i --quiet \
    --overrides='{"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":10001}}}' \
    --env="TARGET=$target" -- sh -c '
      now() { read -r up _ </proc/uptime; echo "${up%.*}${up#*.}"; }
      t0=$(now)
      hex=$(timeout 30 nc -w 10 "$TARGET" 7070 -e sh -c "od -A n -t x1 -v | tr -d \" \n\" >&2" 2>&1)
      echo "greeting $hex"
      echo "greeting-closed-after $(( $(now) - t0 ))"
      t0=$(now)
      timeout 30 nc -w 10 "$TARGET" 7070 -e sh -c "printf \"\\000\\001\\000\\000RKV\"; od -A n -t x1 -v >/dev/null" 2>&1
      echo "oversized-closed-after $(( $(now) - t0 ))"
    ') || fail "the probe pod failed: $probe"
  greeting=$(printf '%s\n' "$probe" | sed -n 's/^greeting //p')
  closed_cs=$(printf '%s\n' "$probe" | sed -n 's/^greeting-closed-after //p')
  oversized_cs=$(printf '%s\n' "$probe" | sed -n 's/^oversized-closed-after //p')
  [ "${greeting:18:8}" = 524b5631 ] || fail "$target:7070 sent no greeting with RKV1 at offset 9: '$greeting' ($probe)"
  [ "${greeting:0:10}" = 0000002b01 ] || fail "$target:7070: the greeting is not a 43-byte HELLO frame: '$greeting'"
  # shellcheck disable=SC2015 # "both hold, or fail": fail exits
  [[ $closed_cs =~ ^[0-9]+$ ]] && [ "$closed_cs" -le 1000 ] \
    || fail "$target:7070 did not close the connection within 10 s without the secret (${closed_cs:-?} cs): $probe"
  # shellcheck disable=SC2015
  [[ $oversized_cs =~ ^[0-9]+$ ]] && [ "$oversized_cs" -le 300 ] \
    || fail "$target:7070 did not cut off a 64 KiB frame before the handshake at once (${oversized_cs:-?} cs): $probe"
  log "$target:7070 greets with RKV1 v$((16#${greeting:26:4})) ($(( ${#greeting} / 2 )) bytes) and closes after $((closed_cs / 100)).$(printf '%02d' $((closed_cs % 100))) s without the secret"
  log "a 64 KiB frame before the handshake: closed after $((oversized_cs / 100)).$(printf '%02d' $((oversized_cs % 100))) s"
  # The NetworkPolicy is off here (the probe above is no ringkv pod); the API server must still
  # accept the chart's policy, whose cluster-port rule names the container port "cluster".
  helm template "$RELEASE" helm/ringkv -n "$NAMESPACE" --set fullnameOverride="$RELEASE" --set networkPolicy.enabled=true \
      --show-only templates/networkpolicy.yaml 2>/dev/null | k apply --dry-run=server -f - >/dev/null \
    || fail "the API server rejects the chart's NetworkPolicy (server-side dry run)"
  log "the chart's NetworkPolicy (networkPolicy.enabled=true) passes a server-side dry run"
}
