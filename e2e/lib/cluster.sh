# shellcheck shell=bash
# Sourced by e2e/run.sh: the release as the cluster and the nodes see it: its pods, the members
# each pod sees (GET /v0/cluster), scaling it and waiting for it.

# One pod's GET /v0/cluster: sets MEMBERS (the sorted member names) and DATA_STATES (the members'
# distinct dataStates, sorted: NORMAL, or e.g. "JOINING NORMAL"); both empty if it does not answer.
members_of() { # pod
  local view=""
  MEMBERS="" DATA_STATES=""
  try_forward "pod/$1" || return 0
  view=$(rcurl -fs --max-time 10 "$BASE/v0/cluster" 2>/dev/null | python3 -c '
import json, sys
try:
    members = json.load(sys.stdin)["members"]
    print(" ".join(sorted(m["name"] for m in members)))
    print(" ".join(sorted({str(m.get("dataState")) for m in members})))
except (ValueError, KeyError, TypeError):
    pass') || true
  stop_forward "$FWD_PID"
  MEMBERS=$(sed -n 1p <<<"$view")
  DATA_STATES=$(sed -n 2p <<<"$view")
}
expected_members() {
  local n=$1 i names=()
  for i in $(seq 0 $((n - 1))); do
    names+=("$SCHEME://$RELEASE-$i.$RELEASE-headless.$NAMESPACE.svc.cluster.local:8080")
  done
  printf '%s\n' "${names[@]}" | sort | xargs
}
release_pods_jsonpath() { # template: that of each pod of the release
  k get pods -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/name=ringkv -o jsonpath="$1"
}
release_pods() { release_pods_jsonpath '{.items[*].metadata.name}'; }
release_pods_uids() { release_pods_jsonpath '{.items[*].metadata.uid}'; }
# Whether every pod of the release sees exactly the members 0..n-1; with "normal", also every member
# in dataState NORMAL (none still JOINING or LEAVING). When not, LAST_VIEW says which pod saw what.
LAST_VIEW=""
all_pods_see() { # n [normal]
  local n=$1 want pod
  want=$(expected_members "$n")
  for pod in $(release_pods); do
    members_of "$pod"
    LAST_VIEW="$pod sees ${MEMBERS:-nothing} (data states: ${DATA_STATES:-none})"
    [ "$MEMBERS" = "$want" ] || return 1
    [ "${2:-}" != normal ] || [ "$DATA_STATES" = NORMAL ] || return 1
  done
}
expect_status() { # expected method url [data]
  local expected=$1 method=$2 url=$3 got
  got=$(rcurl -s -o /dev/null -w '%{http_code}' -X "$method" ${4:+--data-binary "$4"} "$url")
  [ "$got" = "$expected" ] || fail "$method $url answered $got, expected $expected"
}

pods_ready() { # n: the release has exactly n pods (terminating ones count), all Ready
  local ready
  ready=$(release_pods_jsonpath '{range .items[*]}{.metadata.name}={.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}')
  [ "$(grep -c . <<<"$ready")" = "$1" ] && ! grep -qv '=True$' <<<"$ready"
}
uids_in_common() { # uids uids: how many of the first list are in the second
  comm -12 <(tr ' ' '\n' <<<"$1" | sort) <(tr ' ' '\n' <<<"$2" | sort) | grep -c . || true
}
pods_replaced_and_ready() { # n uids: exactly n pods, all Ready, none of them one of these (deleted) pods
  pods_ready "$1" && [ "$(uids_in_common "$2" "$(release_pods_uids)")" = 0 ]
}
scale_to() { # n how: helm upgrade --wait, or kubectl scale and wait for exactly n Ready pods
  if [ "$2" = helm ]; then
    helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --set replicaCount="$1" --wait --timeout 5m >/dev/null
  else
    k scale "statefulset/$RELEASE" --replicas="$1" >/dev/null
  fi
  eventually 240 pods_ready "$1" || fail "$2: the release does not have exactly $1 Ready pods: $(release_pods)"
}
expect_every_pod_replaced() { # uids-before what: no pod of the release has a uid it had before
  local after
  after=$(release_pods_uids)
  [ "$(uids_in_common "$1" "$after")" = 0 ] || fail "$2 did not replace every pod (uids before: $1; after: $after)"
}
statefulset_generation() { # changes with every change of the StatefulSet's spec (a rollout)
  k get statefulset "$RELEASE" -o jsonpath='{.metadata.generation}'
}

# kube-scheduler can leave a pod Unschedulable ("pod has unbound immediate PersistentVolumeClaims")
# after its claim has been bound, until it retries such pods 5 minutes later (kubernetes/kubernetes
# #125762; seen here when the 4 claims of a new release were provisioned at once). Such a pod has not
# started: it is deleted, the StatefulSet makes it again, and the scheduler places that one at once.
replace_pods_stuck_on_bound_claims() {
  local pod
  for pod in $(k get pods,pvc -l app.kubernetes.io/instance="$RELEASE" -o json | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
bound = {i["metadata"]["name"] for i in items
         if i["kind"] == "PersistentVolumeClaim" and i.get("status", {}).get("phase") == "Bound"}
for pod in (i for i in items if i["kind"] == "Pod"):
    unscheduled = [c.get("message", "") for c in pod.get("status", {}).get("conditions", [])
                   if c["type"] == "PodScheduled" and c["status"] == "False"]
    claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["spec"].get("volumes", []) if "persistentVolumeClaim" in v]
    if unscheduled and "unbound immediate PersistentVolumeClaims" in unscheduled[0] and claims and all(c in bound for c in claims):
        print(pod["metadata"]["name"])'); do
    log "$pod is Unschedulable for an unbound claim, but its claim is Bound: deleted, so that it is scheduled now"
    k delete pod "$pod" --wait=false >/dev/null
  done
}
