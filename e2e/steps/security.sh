# shellcheck shell=bash
# Sourced by e2e/run.sh: step 10, what an attacker on the network meets, with the chart's defaults.
#
#   security_holds   the node runs as uid 10001 on a read-only root filesystem; an anonymous request
#                    from another pod gets 401 (and the admin's 200 on the same path); the old HTTP
#                    internal endpoints answer 403 to the admin, 401 to the old secret header; the
#                    cluster port speaks TLS first: a plaintext client gets no RKV1 greeting and is
#                    closed at once, a TLS client without a certificate of the release gets no
#                    greeting either, one with it is greeted; the NetworkPolicy is installed.

security_holds() {
  local uid pod0 path code cluster_port target probe anon greeting closed_cs
  uid=$(k exec "$RELEASE-0" -c ringkv -- id -u)
  [ "$uid" = 10001 ] || fail "the node runs as uid $uid"
  if k exec "$RELEASE-0" -c ringkv -- sh -c 'touch /should-not-exist' 2>/dev/null; then
    fail "the root filesystem is writable"
  fi
  log "uid 10001, read-only root filesystem"
  # From another pod of the namespace (the NetworkPolicy lets it reach the public port), without a
  # token: 401 on a read. k6 reads the script from stdin; it skips the CA check, as an attacker would.
  anon=$(printf '%s\n' \
    "import http from 'k6/http';" \
    "export const options = { insecureSkipTLSVerify: true, vus: 1, iterations: 1 };" \
    "export default function () { console.log('anonymous ' + http.get('$SCHEME://$RELEASE:8080/v0/entity?id=survivor').status); }" \
    | k run "anon-$$" --image="$K6_IMAGE" --restart=Never --rm -i --quiet --env=K6_NO_USAGE_REPORT=true \
        --overrides='{"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":65534}}}' -- run --quiet - 2>&1) \
    || fail "the anonymous client pod failed: $anon"
  grep -q 'anonymous 401' <<<"$anon" || fail "an anonymous GET from another pod did not get 401: $anon"
  log "an anonymous GET /v0/entity from another pod: 401"
  # The old HTTP internal endpoints answer nothing: a path no access rule names is refused, 401
  # without a token and 403 even to the admin (so that no spelling of a path slips past the rules;
  # with security off they answer 404, HostileRequestsTest), also with the old secret header.
  forward "pod/$RELEASE-0"
  pod0=$BASE
  expect_status 200 GET "$pod0/v0/entity?id=survivor"
  code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$RINGKV_CA_FILE" "$pod0/v0/entity?id=survivor")
  [ "$code" = 401 ] || fail "GET /v0/entity without a token answered $code, expected 401"
  for path in "/internal/v0/record?id=survivor" /internal/v0/identity; do
    expect_status 403 GET "$pod0$path"
    code=$(command curl -s -o /dev/null -w '%{http_code}' --cacert "$RINGKV_CA_FILE" -H "X-Ringkv-Cluster-Secret: $RINGKV_CLUSTER_SECRET" "$pod0$path")
    [ "$code" = 401 ] || fail "GET $path with the old secret header and no token answered $code, expected 401"
  done
  cluster_port=$(rcurl -fs "$pod0/v0/cluster" | python3 -c 'import json, sys; print(json.load(sys.stdin).get("clusterPort"))')
  [ "$cluster_port" = 7070 ] || fail "GET /v0/cluster of $RELEASE-0 tells cluster port $cluster_port, expected 7070 (containerPorts.cluster)"
  stop_forwards
  log "/internal/v0/record and /internal/v0/identity: 403 with the admin token, 401 with only the old secret header; /v0/cluster tells clusterPort 7070"
  # The cluster port of a pod, by its DNS name, from a pod that speaks plaintext: no RKV1 greeting
  # (the node waits for a TLS ClientHello), and a plaintext frame is answered by closing the
  # connection at once. nc -e keeps the connection open for writing while od reads, so only the node
  # can end it. Times from /proc/uptime, in hundredths of a second. (Where the CNI enforces the
  # NetworkPolicy, this pod does not even connect: no greeting either.)
  target="$RELEASE-0.$RELEASE-headless.$NAMESPACE.svc.cluster.local"
  # shellcheck disable=SC2016 # the script is for the probe pod's sh: its $ expand there
  probe=$(k run "probe-$$" --image="$BUSYBOX_IMAGE" --restart=Never --rm -i --quiet \
    --overrides='{"spec":{"securityContext":{"runAsNonRoot":true,"runAsUser":10001}}}' \
    --env="TARGET=$target" -- sh -c '
      now() { read -r up _ </proc/uptime; echo "${up%.*}${up#*.}"; }
      t0=$(now)
      hex=$(timeout 30 nc -w 10 "$TARGET" 7070 -e sh -c "printf \"\\000\\000\\000\\005\\001\\000\\000\\000\\000\"; od -A n -t x1 -v | tr -d \" \n\" >&2" 2>&1)
      echo "greeting $hex"
      echo "plaintext-closed-after $(( $(now) - t0 ))"
    ') || fail "the probe pod failed: $probe"
  greeting=$(printf '%s\n' "$probe" | sed -n 's/^greeting //p')
  closed_cs=$(printf '%s\n' "$probe" | sed -n 's/^plaintext-closed-after //p')
  [[ $greeting != *524b5631* ]] || fail "$target:7070 greeted a plaintext client with RKV1: '$greeting'"
  # shellcheck disable=SC2015 # "both hold, or fail": fail exits
  [[ $closed_cs =~ ^[0-9]+$ ]] && [ "$closed_cs" -le 1000 ] \
    || fail "$target:7070 did not close a plaintext connection within 10 s (${closed_cs:-?} cs): $probe"
  log "$target:7070 to a plaintext frame: no RKV1 greeting, closed after $((closed_cs / 100)).$(printf '%02d' $((closed_cs % 100))) s (answer: '${greeting:0:40}')"
  # Over TLS through a port-forward: without a client certificate, no greeting; with the release's
  # certificate, the RKV1 HELLO.
  port_forward "pod/$RELEASE-0" 7070
  sleep 1
  greeting=$(timeout 15 openssl s_client -quiet -connect "127.0.0.1:$FWD_PORT" -CAfile "$RINGKV_CA_FILE" \
      </dev/null 2>/dev/null | od -A n -t x1 -v | tr -d ' \n' || true)
  [[ $greeting != *524b5631* ]] || fail "the cluster port greeted a TLS client without a certificate"
  greeting=$( (sleep 3) | timeout 15 openssl s_client -quiet -connect "127.0.0.1:$FWD_PORT" -CAfile "$RINGKV_CA_FILE" \
      -cert "$RINGKV_CLIENT_CERT" -key "$RINGKV_CLIENT_KEY" 2>/dev/null | od -A n -t x1 -v | tr -d ' \n' || true)
  stop_forward "$FWD_PID"
  [[ $greeting == *524b5631* ]] || fail "the cluster port did not greet a TLS client with the release's certificate: '$greeting'"
  log "the cluster port over TLS: no greeting without a client certificate, RKV1 with the release's"
  k get networkpolicy "$RELEASE" -o jsonpath='{.spec.ingress[*].ports[*].port}' | grep -qw management \
    || fail "the chart's NetworkPolicy is not installed"
  log "the chart's NetworkPolicy (on by default) is installed"
}
