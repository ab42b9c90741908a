#!/usr/bin/env bash
# End-to-end test of the Helm chart on a real Kubernetes cluster: the one KUBECONFIG points at.
#
#   e2e/run.sh                      # against the current cluster
#   KUBE_LOCAL=1 e2e/run.sh         # start ../shared/kube-local first, and stop it afterwards
#
# Needs docker (to build the images), kubectl and helm. Images are built locally and loaded into
# the cluster with $LOAD_IMAGE (default: kube-local's load-image.sh when it is beside the checkout;
# for kind: LOAD_IMAGE="kind load docker-image"). Everything it creates lives in a fresh
# namespace, removed at the end whether the test passed or not; with KUBE_LOCAL=1 the cluster
# is stopped at the end too (also when starting it failed).
set -euo pipefail
cd "$(dirname "$0")/.."

KL=../shared/kube-local
NAMESPACE=${E2E_NAMESPACE:-ringkv-e2e-$(date +%s)}
RELEASE=ringkv
TAG=${RINGKV_IMAGE_TAG:-e2e-$(git rev-parse --short HEAD 2>/dev/null || date +%s)}
K6_IMAGE=""
NAMESPACE_CREATED=0
PF_PIDS=()
STEP_STARTED=$SECONDS
STEP=""

log() { printf '[e2e %4ss] %s\n' "$((SECONDS - STEP_STARTED))" "$*"; }
STEP_RESULT=PASS
step() {
  [ -z "$STEP" ] || printf '==> %s %s (%ss)\n' "$STEP_RESULT" "$STEP" "$((SECONDS - STEP_STARTED))"
  STEP_RESULT=PASS
  STEP=$1
  STEP_STARTED=$SECONDS
  printf '\n==> %s\n' "$STEP"
}
fail() { echo "FAIL: $*" >&2; exit 1; }

k() { kubectl -n "$NAMESPACE" "$@"; }

on_exit() {
  local status=$?
  for pid in "${PF_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ $status -ne 0 ] && [ $NAMESPACE_CREATED = 1 ]; then
    echo "==> FAILED in: $STEP; what the cluster says:" >&2
    k get events --sort-by=.lastTimestamp 2>&1 | tail -n 40 >&2 || true
    k describe pods 2>&1 | tail -n 120 >&2 || true
    for pod in $(k get pods -o name 2>/dev/null); do
      echo "--- last log lines of $pod" >&2
      k logs "$pod" --all-containers --tail=30 2>&1 >&2 || true
    done
  fi
  if [ $NAMESPACE_CREATED = 1 ]; then
    echo "==> cleaning up namespace $NAMESPACE"
    helm uninstall "$RELEASE" -n "$NAMESPACE" --wait --timeout 2m >/dev/null 2>&1 || true
    kubectl delete namespace "$NAMESPACE" --wait=true --timeout=2m >/dev/null 2>&1 || true
  fi
  # down.sh is idempotent: it also undoes an up.sh that failed half-way.
  if [ "${KUBE_LOCAL:-}" = 1 ]; then
    echo "==> stopping kube-local"
    "$KL/down.sh" >/dev/null 2>&1 || echo "WARNING: $KL/down.sh failed" >&2
  fi
  [ $status -eq 0 ] && echo "==> e2e PASSED in ${SECONDS}s" || echo "==> e2e FAILED after ${SECONDS}s" >&2
  exit $status
}
trap on_exit EXIT

# The trap is set first, so that a failure from here on still stops kube-local.
if [ "${KUBE_LOCAL:-}" = 1 ]; then
  "$KL/build.sh" >/dev/null
  "$KL/up.sh" >/dev/null
  eval "$("$KL/up.sh" --print-env)"
fi
if [ -z "${LOAD_IMAGE:-}" ] && [ -x "$KL/load-image.sh" ]; then
  LOAD_IMAGE="$KL/load-image.sh"
fi
[ -n "${LOAD_IMAGE:-}" ] || fail "set LOAD_IMAGE to a command that loads a local image into the cluster"
for tool in kubectl helm docker curl; do
  command -v "$tool" >/dev/null || fail "$tool is needed"
done

# Forwards a local port to a pod or service and waits until it answers; prints the base URL.
forward() {
  local target=$1 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  k port-forward "$target" "$port:8080" >/dev/null 2>&1 &
  PF_PIDS+=($!)
  for _ in $(seq 1 50); do
    curl -fs -o /dev/null "http://127.0.0.1:$port/v0/status" && { echo "http://127.0.0.1:$port"; return; }
    sleep 0.2
  done
  fail "port-forward to $target did not answer"
}
# Reads one pod's OWN copy of a key over the node-to-node protocol, as a peer does: a port-forward
# to the pod's cluster port (7070), the handshake proving the cluster secret (and checking the
# node's proof back), then one READ. Prints the value; fails on a refusal, NOT_FOUND or a
# tombstone. (A public GET with replicas=1/1 would ask the key's first replica, not this pod.)
peer_read() { # pod key secret
  local target=$1 key=$2 secret=$3 port
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  k port-forward "$target" "$port:7070" >/dev/null 2>&1 &
  PF_PIDS+=($!)
  python3 - "$port" "$key" "$secret" <<'PY'
import hashlib, hmac, os, socket, struct, sys, time

port, key, secret = int(sys.argv[1]), sys.argv[2].encode(), sys.argv[3].encode()
HELLO, AUTH, WELCOME, REFUSED, READ, RECORD, NOT_FOUND = 0x01, 0x02, 0x03, 0x04, 0x10, 0x20, 0x21


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("the node closed the connection")
        data += chunk
    return data


def read_frame(sock):
    (length,) = struct.unpack(">i", recv_exact(sock, 4))
    body = recv_exact(sock, length)
    return body[0], struct.unpack(">i", body[1:5])[0], body[5:]


def send_frame(sock, kind, ident, payload):
    sock.sendall(struct.pack(">iBi", 5 + len(payload), kind, ident) + payload)


# The port-forward takes a moment to listen (and to reach the pod): retry until the greeting comes.
deadline = time.time() + 20
while True:
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        kind, _, hello = read_frame(sock)
        break
    except (OSError, EOFError) as e:
        if time.time() > deadline:
            sys.exit("no greeting on the cluster port: %s" % e)
        time.sleep(0.3)
if kind != HELLO or hello[:4] != b"RKV1":
    sys.exit("not a ringkv greeting: type %d, %r" % (kind, hello[:4]))
server_nonce = hello[6:38]
client_nonce, name = os.urandom(32), b"e2e/run.sh"
proof = hmac.new(secret, b"ringkv client" + server_nonce + client_nonce + name, hashlib.sha256).digest()
send_frame(sock, AUTH, 0, struct.pack(">H", 1) + client_nonce + struct.pack(">H", len(name)) + name + proof)
kind, _, answer = read_frame(sock)
if kind == REFUSED:
    sys.exit("the node refused the handshake: %s" % answer.decode(errors="replace"))
if kind != WELCOME:
    sys.exit("expected WELCOME, got type %d" % kind)
(name_length,) = struct.unpack(">H", answer[34:36])
server_name = answer[36:36 + name_length]
expected = hmac.new(secret, b"ringkv server" + client_nonce + server_nonce + server_name, hashlib.sha256).digest()
if not hmac.compare_digest(expected, answer[2:34]):
    sys.exit("the node's proof of the cluster secret is wrong")
send_frame(sock, READ, 1, struct.pack(">H", len(key)) + key)
kind, ident, record = read_frame(sock)
sock.close()
if kind == NOT_FOUND:
    sys.exit("%s holds no copy of %s" % (server_name.decode(), key.decode()))
if kind != RECORD or ident != 1 or record[0] != 1:
    sys.exit("expected RECORD for request 1, got type %d id %d" % (kind, ident))
if record[1] & 1:
    sys.exit("%s holds a tombstone for %s" % (server_name.decode(), key.decode()))
sys.stdout.write(record[10:].decode(errors="replace"))
PY
}
stop_forwards() {
  for pid in "${PF_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  PF_PIDS=()
}

# Polls a command until it succeeds, for at most $1 seconds.
eventually() {
  local timeout=$1; shift
  local deadline=$((SECONDS + timeout))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 2
  done
}

# The sorted member names of one pod's /v0/cluster.
members_of() {
  local base
  base=$(forward "pod/$1")
  curl -fs "$base/v0/cluster" 2>/dev/null | python3 -c '
import json, sys
try:
    print(" ".join(sorted(m["name"] for m in json.load(sys.stdin)["members"])))
except ValueError:
    print("")' || true
  stop_forwards
}
expected_members() {
  local n=$1 i names=()
  for i in $(seq 0 $((n - 1))); do
    names+=("http://$RELEASE-$i.$RELEASE-headless.$NAMESPACE.svc.cluster.local:8080")
  done
  printf '%s\n' "${names[@]}" | sort | xargs
}
all_pods_see() {
  local n=$1 want pod
  want=$(expected_members "$n")
  for pod in $(k get pods -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/name=ringkv -o jsonpath='{.items[*].metadata.name}'); do
    [ "$(members_of "$pod")" = "$want" ] || return 1
  done
}
expect_status() { # expected method url [data]
  local expected=$1 method=$2 url=$3 got
  got=$(curl -s -o /dev/null -w '%{http_code}' -X "$method" ${4:+--data-binary "$4"} "$url")
  [ "$got" = "$expected" ] || fail "$method $url answered $got, expected $expected"
}

step "1/9 build the images and load them into the cluster"
bin/with-jdk ./mvnw -B -q -DskipTests package
RINGKV_IMAGE_TAG=$TAG bin/build-image
BUSYBOX_IMAGE=$(bin/build-busybox-image)
K6_IMAGE=$(bin/build-k6-image)
$LOAD_IMAGE "ringkv:$TAG" "$BUSYBOX_IMAGE" "$K6_IMAGE"
log "loaded ringkv:$TAG, $BUSYBOX_IMAGE, $K6_IMAGE"

step "2/9 helm install --wait, 3 replicas"
kubectl create namespace "$NAMESPACE" >/dev/null
NAMESPACE_CREATED=1
helm install "$RELEASE" helm/ringkv -n "$NAMESPACE" --wait --timeout 5m \
  --set fullnameOverride="$RELEASE" \
  --set replicaCount=3 \
  --set image.tag="$TAG" \
  --set volumePermissions.enabled=true \
  --set cluster.discoveryRefreshInterval=2s \
  --set tests.image.repository="${BUSYBOX_IMAGE%:*}" --set-string tests.image.tag="${BUSYBOX_IMAGE##*:}" >/dev/null
k get pods -o wide

step "3/9 every pod sees the same 3 members by their stable names; helm test passes"
eventually 60 all_pods_see 3 || fail "the pods do not agree on $(expected_members 3)"
log "members: $(expected_members 3)"
helm test "$RELEASE" -n "$NAMESPACE" --logs --timeout 3m | tail -n 5

step "4/9 PUT, GET and a range through the client Service"
svc=$(forward "svc/$RELEASE")
for replicas in 2/3 3/3; do
  for i in 1 2 3; do
    expect_status 201 PUT "$svc/v0/entity?id=e2e-$i&replicas=$replicas" "value-$i-$replicas"
    [ "$(curl -fs "$svc/v0/entity?id=e2e-$i&replicas=$replicas")" = "value-$i-$replicas" ] || fail "GET e2e-$i with $replicas"
  done
done
range=$(curl -fs "$svc/v0/entities?start=e2e-&end=e2e-9" | tr '\n' ' ')
[ "$range" = "e2e-1 value-1-3/3e2e-2 value-2-3/3e2e-3 value-3-3/3" ] || fail "the range returned: $range"
stop_forwards
log "2/3 and 3/3 writes and reads, and the range, are right"

step "5/9 a deleted pod: 2/3 keeps working, it comes back under its name with its data"
pod0=$(forward "pod/$RELEASE-0")
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
secret=$(k get secret "$RELEASE" -o jsonpath='{.data.cluster-secret}' | base64 -d)
own=$(peer_read "pod/$RELEASE-2" survivor "$secret") || fail "$RELEASE-2 lost its copy of 'survivor'"
[ "$own" = kept ] || fail "$RELEASE-2's own copy of 'survivor' is '$own', expected 'kept'"
stop_forwards
log "$RELEASE-2 still holds the key written before it was deleted (read over its cluster port with the secret)"

step "6/9 scale to 4: the new pod joins every ring; back to 3: it leaves"
helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --set replicaCount=4 --wait --timeout 5m >/dev/null
eventually 90 all_pods_see 4 || fail "$RELEASE-3 did not join every ring"
log "4 members on every pod"
helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --set replicaCount=3 --wait --timeout 5m >/dev/null
k wait --for=delete "pod/$RELEASE-3" --timeout=3m >/dev/null 2>&1 || true
eventually 90 all_pods_see 3 || fail "$RELEASE-3 did not leave the rings"
log "3 members on every pod after the damping period"

step "7/9 the chart's k6 loadtest Job (fill, then mixed 2/3) completes with its thresholds met"
# The Job's init container fills 1000 keys (fill.js); then mixed at 2/3 runs for 20 s at 50/s,
# and every GET must find its key (200) and fewer than 1 % of the requests may fail. p99 < 500 ms, not the 10 ms target of a quiet benchmark machine
# (loadtest/BENCHMARKS.md): the three JVMs, k6, the API server and etcd share 2 cores here, and
# at 50/s 1 % is 10 requests, so p99 measures the longest CPU stall (a GC, the control plane, a
# neighbour's build), which delays every request in flight. Measured with the machine otherwise
# busy (load average 5-9): median 7-9 ms, p99 244-325 ms, max 470-560 ms. 500 ms still catches
# requests waiting out the 1 s replication timeout.
sts_generation=$(k get statefulset "$RELEASE" -o jsonpath='{.metadata.generation}')
helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --wait --timeout 5m \
  --set loadtest.enabled=true \
  --set loadtest.image.repository="${K6_IMAGE%:*}" --set-string loadtest.image.tag="${K6_IMAGE##*:}" \
  --set loadtest.scenario=mixed --set-string loadtest.replicas=2/3 \
  --set loadtest.rate=50 --set loadtest.duration=20s --set loadtest.keyspace=1000 \
  --set loadtest.p99Ms=500 --set loadtest.maxErrorRate=0.01 --set loadtest.fill=init \
  --set loadtest.activeDeadlineSeconds=180 \
  --set-string loadtest.env.VUS=20 --set-string loadtest.env.FILL_VUS=8 >/dev/null
job=$(k get jobs -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/component=loadtest \
  -o jsonpath='{.items[*].metadata.name}')
if [ -z "$job" ] || [ "$job" != "${job%% *}" ]; then fail "expected one loadtest Job, found: '$job'"; fi
log "Job $job ($K6_IMAGE): fill 1000 keys, then mixed, replicas 2/3, 50/s for 20s, p99 < 500 ms, errors < 1 %"
job_condition() { # TYPE -> True when the Job has that condition
  k get job "$job" -o jsonpath="{.status.conditions[?(@.type==\"$1\")].status}"
}
deadline=$((SECONDS + 240))
until k wait --for=condition=complete "job/$job" --timeout=5s >/dev/null 2>&1; do
  [ "$(job_condition Failed)" != True ] || break
  [ $SECONDS -lt $deadline ] || fail "the loadtest Job neither completed nor failed within 240s"
done
fill_log=$(k logs "job/$job" -c fill 2>&1 || true)
printf '%s\n' "$fill_log" | grep -E 'fill: 100%|checks|http_reqs\{|level=(error|warning)' | sed 's/^/    fill: /' || true
k6_log=$(k logs "job/$job" -c k6 2>&1 || true)
printf '%s\n' "$k6_log" | sed '/^$/d; s/^/    /'
if [ "$(job_condition Complete)" != True ]; then
  exit_code=$(k get pods -l job-name="$job" \
    -o jsonpath='{.items[*].status.initContainerStatuses[?(@.state.terminated.exitCode!=0)].state.terminated.exitCode} {.items[*].status.containerStatuses[*].state.terminated.exitCode}' | xargs)
  reason=$(k get job "$job" -o jsonpath='{.status.conditions[?(@.type=="Failed")].reason}')
  [ "$exit_code" != 99 ] || fail "the loadtest Job failed: k6 exit code 99, a threshold was missed (see the summary above)"
  fail "the loadtest Job failed: ${reason:-unknown reason}, k6 exit code ${exit_code:-none}"
fi
printf '%s\n' "$k6_log" | grep -q 'ringkv mixed, replicas 2/3, 50/s for 20s' \
  || fail "the Job's log does not hold k6's summary"
log "the Job completed: the fill and k6 exited 0, every threshold met"
[ "$(k get statefulset "$RELEASE" -o jsonpath='{.metadata.generation}')" = "$sts_generation" ] \
  || fail "enabling the load test changed the StatefulSet"
# Off again: helm deletes the Job and the ConfigMap; the later steps see the nodes alone.
helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --set loadtest.enabled=false \
  --wait --timeout 5m >/dev/null
no_loadtest_left() {
  [ -z "$(k get jobs,configmaps,pods -l app.kubernetes.io/component=loadtest -o name 2>/dev/null)" ]
}
eventually 60 no_loadtest_left || fail "the loadtest Job, its pod or ConfigMap are still there after disabling it"
log "loadtest disabled again: Job, pod and ConfigMap gone; the StatefulSet was not touched"

step "8/9 the security context holds; no internal endpoints on the public port; the cluster port wants the secret"
uid=$(k exec "$RELEASE-0" -c ringkv -- id -u)
[ "$uid" = 10001 ] || fail "the node runs as uid $uid"
if k exec "$RELEASE-0" -c ringkv -- sh -c 'touch /should-not-exist' 2>/dev/null; then
  fail "the root filesystem is writable"
fi
log "uid 10001, read-only root filesystem"
# The old HTTP internal endpoints are gone: 404 on the public port, with or without the secret.
pod0=$(forward "pod/$RELEASE-0")
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
[[ $closed_cs =~ ^[0-9]+$ ]] && [ "$closed_cs" -le 1000 ] \
  || fail "$target:7070 did not close the connection within 10 s without the secret (${closed_cs:-?} cs): $probe"
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

step "9/9 helm uninstall"
helm uninstall "$RELEASE" -n "$NAMESPACE" --wait --timeout 2m >/dev/null
[ -z "$(k get statefulset -o name 2>/dev/null)" ] || fail "the StatefulSet is still there"
printf '==> PASS %s (%ss)\n' "$STEP" "$((SECONDS - STEP_STARTED))"
