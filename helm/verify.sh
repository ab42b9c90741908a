#!/usr/bin/env bash
# Checks the ringkv Helm chart (helm/ringkv) with the ecosystem's tools and with
# what they cannot know:
#   - helm lint --strict;
#   - helm-unittest: the suites in helm/ringkv/tests/*_test.yaml (among them the
#     values the schema and the templates refuse, values_test.yaml);
#   - kubeconform: every render, and k8s/, against the Kubernetes schemas;
#   - the application contract of renders for default and non-default values
#     (helm/checks/contract, a Python package with its own unit tests): the ports (http, the
#     node-to-node cluster port, management), the cluster secret (from
#     cluster.existingSecret, cluster.secret, or made by the first node, with no
#     secret in any render and every render identical), the heap against the
#     memory limit (and the image's heap share against jvm.heapPercent), the RBAC
#     of the nodes' Kubernetes API calls, the NetworkPolicy, the k6 loadtest Job
#     and its scripts (byte-identical to loadtest/, also in the packaged chart);
#   - k8s/ is the chart's current render (k8s/generate), builds with kustomize,
#     also under an overlay with its own namespace and secret, and holds no secret;
#   - the helm test script, run with busybox against a mock of the API.
#
# Usage: helm/verify.sh
#   HELM=/path/to/helm   helm binary (default: `helm` from PATH)
#   PYTHON=python3       python with PyYAML (installed with pip when missing)
#   KUBECTL=kubectl      kubectl for `kubectl kustomize` (skipped when absent)
#   kubeconform, helm-unittest and the schemas come from helm/checks/install-tools
#   (needs go; cached in ~/.cache/ringkv/chart-tools).
#
# Prints one line per check and a summary; exits non-zero if any check failed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
CHART="$HERE/ringkv"
K8S_DIR="$ROOT/k8s"

HELM="${HELM:-$(command -v helm || true)}"
if [ -z "$HELM" ] || ! "$HELM" version >/dev/null 2>&1; then
  echo "ERROR: helm not found. Put it on PATH or set HELM=/path/to/helm, e.g.:" >&2
  echo "  GOFLAGS=-mod=mod go install helm.sh/helm/v3/cmd/helm@v3.22.0 && HELM=\$(go env GOPATH)/bin/helm $0" >&2
  exit 2
fi
PYTHON="${PYTHON:-python3}"
# helm/checks/ is source, not a place for bytecode caches.
export PYTHONDONTWRITEBYTECODE=1
command -v "$PYTHON" >/dev/null 2>&1 || { echo "ERROR: $PYTHON not found" >&2; exit 2; }
if ! "$PYTHON" -c 'import yaml' >/dev/null 2>&1; then
  echo "PyYAML missing: installing it with pip"
  "$PYTHON" -m pip install --quiet pyyaml || "$PYTHON" -m pip install --quiet --user pyyaml
  "$PYTHON" -c 'import yaml' || { echo "ERROR: could not install PyYAML" >&2; exit 2; }
fi
KUBECTL="${KUBECTL:-$(command -v kubectl || true)}"

WORK="$(mktemp -d)"
MOCK_PID=""
cleanup() {
  if [ -n "$MOCK_PID" ]; then kill "$MOCK_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PASSED=0
FAILED=0
SKIPPED=0
FAILED_NAMES=()
pass() { PASSED=$((PASSED + 1)); printf '  PASS  %s\n' "$1"; }
fail() {
  FAILED=$((FAILED + 1)); FAILED_NAMES+=("$1"); printf '  FAIL  %s\n' "$1"
  if [ -n "${2:-}" ] && [ -s "$2" ]; then head -n 25 "$2" | sed 's/^/          | /'; fi
}
skip() { SKIPPED=$((SKIPPED + 1)); printf '  SKIP  %s\n' "$1"; }
section() { printf '\n== %s\n' "$*"; }

# The application contract of a render (python3 + PyYAML): what each mode checks is in
# helm/checks/contract/__main__.py. Run from helm/checks, so that python finds that package first.
contract() { (cd "$HERE/checks" && "$PYTHON" -m contract "$@"); }

# Feeds the checker's output into pass/fail.
run_checker() {
  local status name detail
  if ! contract "$@" >"$WORK/checker.out" 2>&1; then
    fail "checker exited with an error" "$WORK/checker.out"
    return
  fi
  while IFS=$'\t' read -r status name detail; do
    case "$status" in
      PASS) pass "$name" ;;
      FAIL) printf '%s\n' "$detail" >"$WORK/detail"; fail "$name" "$WORK/detail" ;;
      *) fail "unexpected checker output: $status $name" ;;
    esac
  done <"$WORK/checker.out"
}

# must_succeed NAME CMD...
must_succeed() {
  local name=$1; shift
  if "$@" >"$WORK/cmd.out" 2>&1; then pass "$name"; else fail "$name" "$WORK/cmd.out"; fi
}

# must_fail NAME REGEX CMD...: the command must fail and its output match REGEX.
must_fail() {
  local name=$1 regex=$2; shift 2
  if "$@" >"$WORK/cmd.out" 2>&1; then
    fail "$name (command succeeded)"
  elif grep -Eq -- "$regex" "$WORK/cmd.out"; then
    pass "$name"
  else
    fail "$name (failed, but not with /$regex/)" "$WORK/cmd.out"
  fi
}

# render_case NAME RELEASE NAMESPACE EXPECT_JSON [helm args...]
render_case() {
  local name=$1 release=$2 namespace=$3 expect=$4; shift 4
  section "render: $name"
  printf '   helm template %s -n %s %s\n' "$release" "$namespace" "$*"
  if "$HELM" template "$release" "$CHART" --namespace "$namespace" "$@" >"$WORK/$name.yaml" 2>"$WORK/$name.err"; then
    pass "helm template succeeds"
    run_checker render "$WORK/$name.yaml" "$expect"
  else
    fail "helm template succeeds" "$WORK/$name.err"
  fi
}

echo "ringkv chart verification"
echo "  helm:    $HELM ($("$HELM" version --short 2>/dev/null || "$HELM" version))"
echo "  python:  $("$PYTHON" --version 2>&1), PyYAML $("$PYTHON" -c 'import yaml; print(yaml.__version__)')"
echo "  kubectl: ${KUBECTL:-absent}"

# ---------------------------------------------------------------------------
section "lint"
CUSTOM_SET="replicaCount=5,networkPolicy.enabled=true,volumePermissions.enabled=true,resources.limits.memory=2Gi,resources.requests.memory=2Gi,fullnameOverride=kv,clusterDomain=corp.internal,podAntiAffinity.type=hard,persistence.size=10Gi,persistence.storageClass=fast-ssd,networkPolicy.allowSameNamespace=false"
must_succeed "helm lint" "$HELM" lint "$CHART"
must_succeed "helm lint --strict" "$HELM" lint --strict "$CHART"
must_succeed "helm lint --strict (non-default values)" "$HELM" lint --strict "$CHART" --set "$CUSTOM_SET"
must_fail "helm lint rejects replicaCount=-1" "schema" "$HELM" lint --strict "$CHART" --set replicaCount=-1
must_succeed "helm lint --strict (loadtest enabled)" "$HELM" lint --strict "$CHART" --set loadtest.enabled=true,loadtest.fill=init
run_checker schema-coverage "$CHART/values.yaml" "$CHART/values.schema.json"
run_checker image-heap "$ROOT/Dockerfile" "$CHART/values.yaml"

section "the checker's own unit tests (helm/checks)"
must_succeed "python3 -m unittest discover helm/checks" "$PYTHON" -m unittest discover -s "$HERE/checks"

# ---------------------------------------------------------------------------
section "helm-unittest (helm/ringkv/tests/*_test.yaml)"
if "$HERE/checks/install-tools" >"$WORK/tools" 2>"$WORK/tools.err"; then
  KUBECONFORM="$(sed -n 's/^kubeconform=//p' "$WORK/tools")"
  HELM_UNITTEST="$(sed -n 's/^helm-unittest=//p' "$WORK/tools")"
  K8S_SCHEMAS="$(sed -n 's/^k8s-schemas=//p' "$WORK/tools")"
  must_succeed "helm-unittest: every suite passes" "$HELM_UNITTEST" --color=false --strict --file 'tests/*_test.yaml' "$CHART"
  sed -n 's/^Tests: *\(.*\)$/   \1/p' "$WORK/cmd.out"
else
  fail "helm/checks/install-tools (kubeconform, helm-unittest, the Kubernetes schemas)" "$WORK/tools.err"
fi

# ---------------------------------------------------------------------------
DEFAULT_KINDS='["ServiceAccount","Role","RoleBinding","Service","Service","StatefulSet","PodDisruptionBudget"]'

render_case default ringkv default "$(cat <<EOF
{"namespace":"default","fullname":"ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":null,"volumePermissions":false,"networkPolicy":false,
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0","departure":"45s","kinds":$DEFAULT_KINDS}
EOF
)"

# The point of the generated secret: no randomness and no lookup in the chart, so that helm template
# and GitOps tools (Argo CD) render the same manifests every time, and a sync never rolls the pods.
section "reproducible renders"
if "$HELM" template ringkv "$CHART" --namespace default >"$WORK/default-again.yaml" 2>"$WORK/default-again.err" \
    && [ -s "$WORK/default.yaml" ] && cmp -s "$WORK/default.yaml" "$WORK/default-again.yaml"; then
  pass "two helm template renders of the default values are byte-identical"
else
  diff "$WORK/default.yaml" "$WORK/default-again.yaml" >"$WORK/detail" 2>&1 || cat "$WORK/default-again.err" >>"$WORK/detail"
  fail "two helm template renders of the default values are byte-identical" "$WORK/detail"
fi
if grep -rnoE '\{\{[^}]*\b(lookup|rand[A-Za-z]*|uuidv4|now|gen[A-Za-z]*(Key|CA|Cert))\b' "$CHART/templates" >"$WORK/random.out"; then
  fail "no template calls lookup, rand*, uuidv4, now or gen* (a render depends on nothing but the values)" "$WORK/random.out"
else
  pass "no template calls lookup, rand*, uuidv4, now or gen* (a render depends on nothing but the values)"
fi

render_case custom rel kvns "$(cat <<EOF
{"namespace":"kvns","fullname":"kv","replicas":5,"imageTag":"0.1.0","clusterDomain":"corp.internal",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"2Gi","heapMiB":675,
 "persistence":true,"size":"10Gi","storageClassName":"fast-ssd","volumePermissions":true,"networkPolicy":true,
 "antiAffinity":"hard","spread":true,"tests":true,"testImage":"busybox:1.37.0","departure":"45s",
 "kinds":["ServiceAccount","Role","RoleBinding","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]}
EOF
)" --set "$CUSTOM_SET" \
   --set 'networkPolicy.managementFrom[0].namespaceSelector.matchLabels.kubernetes\.io/metadata\.name=monitoring' \
   --set-json 'extraEnv=[{"name":"LOGGING_LEVEL_ROOT","value":"INFO"}]'

render_case existing-secret my-db default "$(cat <<EOF
{"namespace":"default","fullname":"my-db-ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":80,"memoryLimit":"1000Mi","heapMiB":750,
 "directMemoryPercent":5,
 "persistence":false,"volumePermissions":false,"networkPolicy":false,"existingSecret":"ringkv-shared",
 "antiAffinity":"none","spread":false,"tests":false,"departure":"45s",
 "kinds":["ServiceAccount","Role","RoleBinding","Service","Service","StatefulSet","PodDisruptionBudget"]}
EOF
)" --set jvm.heapPercent=75,jvm.directMemoryPercent=5,resources.limits.memory=1000Mi,resources.requests.memory=1000Mi \
   --set cluster.existingSecret=ringkv-shared,persistence.enabled=false,podAntiAffinity.type=none \
   --set tests.enabled=false,service.port=80 --set-json 'topologySpreadConstraints=[]'

cat >"$WORK/values-ports.yaml" <<'EOF'
nameOverride: store
image:
  tag: "0.2.0"
containerPorts:
  http: 8081
  cluster: 7071
  management: 9091
cluster:
  secret: 0123456789abcdef0123456789abcdef
volumePermissions:
  enabled: true
  image:
    repository: debian
    tag: bookworm-slim
persistence:
  storageClass: "-"
EOF
render_case ports-and-secret ringkv default "$(cat <<EOF
{"namespace":"default","fullname":"ringkv-store","replicas":3,"imageTag":"0.2.0","clusterDomain":"cluster.local",
 "httpPort":8081,"clusterPort":7071,"managementPort":9091,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":"","volumePermissions":true,
 "volumePermissionsImage":"debian:bookworm-slim","networkPolicy":false,
 "secretValue":"0123456789abcdef0123456789abcdef",
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0","departure":"45s",
 "kinds":["ServiceAccount","Role","RoleBinding","Secret","Service","Service","StatefulSet","PodDisruptionBudget"]}
EOF
)" -f "$WORK/values-ports.yaml"

# The NetworkPolicy with every source it can open the HTTP port to (the namespace, the test and
# loadtest pods, extraIngressFrom with other namespaces and IP blocks): the cluster port stays
# with the release's own ringkv pods. np-teeth then breaks copies of this render's policy and
# expects the NetworkPolicy checks to fail on each.
cat >"$WORK/values-netpol.yaml" <<'EOF'
networkPolicy:
  enabled: true
  allowSameNamespace: true
  extraIngressFrom:
    - namespaceSelector:
        matchLabels:
          kubernetes.io/metadata.name: clients
    - ipBlock:
        cidr: 10.0.0.0/8
    - namespaceSelector: {}
      podSelector:
        matchLabels:
          app.kubernetes.io/name: ringkv
          app.kubernetes.io/instance: ringkv
loadtest:
  enabled: true
EOF
NETPOL_EXPECT="$(cat <<EOF
{"namespace":"default","fullname":"ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":null,"volumePermissions":false,"networkPolicy":true,
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0","departure":"45s",
 "kinds":["ServiceAccount","Role","RoleBinding","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy","ConfigMap","Job"]}
EOF
)"
render_case network-policy ringkv default "$NETPOL_EXPECT" -f "$WORK/values-netpol.yaml"
if [ -s "$WORK/network-policy.yaml" ]; then
  run_checker np-teeth "$WORK/network-policy.yaml" "$NETPOL_EXPECT"
fi

# The nodes' Kubernetes API calls: with cluster.departure a pod removed by a scale-down reads its own
# StatefulSet (Role with `get` on it alone) and hands its data over for at most the timeout, which
# must stay 10s below the grace period; with the generated secret (neither cluster.secret nor
# existingSecret) a starting node reads Secret <fullname>, or first creates it (`get` on it alone,
# `create` on Secrets). Both need the RoleBinding to the pods' ServiceAccount and the token. The
# default render above has both on; rbac-teeth breaks copies of that render's Role/RoleBinding/token
# and expects the checks to fail.
DEFAULT_EXPECT_BASE='"namespace":"default","fullname":"ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":null,"volumePermissions":false,"networkPolicy":false,
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0"'
if [ -s "$WORK/default.yaml" ]; then
  run_checker rbac-teeth "$WORK/default.yaml" "{$DEFAULT_EXPECT_BASE,\"departure\":\"45s\",\"kinds\":$DEFAULT_KINDS}"
fi
# Departure off, the secret still generated: the Role keeps the Secrets rules, the token stays
# mounted. The timeout is not used and not checked (600s > the 60s grace period).
render_case departure-off ringkv default "{$DEFAULT_EXPECT_BASE,\"departure\":false,\"kinds\":$DEFAULT_KINDS}" \
  --set cluster.departure.enabled=false,cluster.departure.timeout=600s
# Departure off and a secret given: no API call, so no Role, no RoleBinding, and the token as
# serviceAccount.automount says.
NO_RBAC_KINDS='["ServiceAccount","Service","Service","StatefulSet","PodDisruptionBudget"]'
render_case departure-off-secret ringkv default \
  "{$DEFAULT_EXPECT_BASE,\"departure\":false,\"membership\":false,\"secretValue\":\"0123456789abcdef\",\"kinds\":[\"ServiceAccount\",\"Secret\",\"Service\",\"Service\",\"StatefulSet\",\"PodDisruptionBudget\"]}" \
  --set cluster.departure.enabled=false,cluster.membershipFromStatefulSet=false,cluster.secret=0123456789abcdef
render_case departure-off-automount ringkv default \
  "{$DEFAULT_EXPECT_BASE,\"departure\":false,\"membership\":false,\"existingSecret\":\"ringkv-shared\",\"serviceAccountAutomount\":true,\"kinds\":$NO_RBAC_KINDS}" \
  --set cluster.departure.enabled=false,cluster.membershipFromStatefulSet=false,cluster.existingSecret=ringkv-shared,serviceAccount.automount=true
# Membership from the StatefulSet alone (departure off, secret given): the Role grants get on the
# StatefulSet and nothing else.
render_case membership-only ringkv default \
  "{$DEFAULT_EXPECT_BASE,\"departure\":false,\"existingSecret\":\"ringkv-shared\",\"kinds\":$DEFAULT_KINDS}" \
  --set cluster.departure.enabled=false,cluster.existingSecret=ringkv-shared
# On, in another namespace, with a ServiceAccount of another name, the token on for the
# ServiceAccount too, and the longest timeout the grace period allows with the drain (120s - 10s - 3s).
cat >"$WORK/values-departure.yaml" <<'EOF'
terminationGracePeriodSeconds: 120
shutdown:
  drainDelay: 3s
cluster:
  departure:
    enabled: true
    timeout: 107s
serviceAccount:
  name: ringkv-nodes
  automount: true
EOF
render_case departure-custom store kvns "$(cat <<EOF
{"namespace":"kvns","fullname":"store-ringkv","replicas":3,"imageTag":"0.1.0","clusterDomain":"cluster.local",
 "httpPort":8080,"clusterPort":7070,"managementPort":9090,"servicePort":8080,"memoryLimit":"768Mi","heapMiB":253,
 "persistence":true,"size":"1Gi","storageClassName":null,"volumePermissions":false,"networkPolicy":false,
 "antiAffinity":"soft","spread":true,"tests":true,"testImage":"busybox:1.37.0",
 "terminationGracePeriodSeconds":120,"departure":"107s","drainDelay":"3s","serviceAccountAutomount":true,"kinds":$DEFAULT_KINDS}
EOF
)" -f "$WORK/values-departure.yaml"

# ---------------------------------------------------------------------------
# Node-to-node traffic moved off the public HTTP port to the cluster port: the HTTP internal
# endpoints (/internal/..., header X-Ringkv-Cluster-Secret) are gone (the public port answers 404
# there), and neither the chart (templates, NOTES, values, schema, tests) nor k8s/ nor any render
# may still describe or use them.
section "no trace of the removed HTTP internal endpoints"
INTERNAL_RE='/internal(/|[^a-z.]|$)|X-Ringkv-Cluster-Secret'
if grep -rInE --exclude-dir=loadtest -- "$INTERNAL_RE" "$CHART" "$K8S_DIR" >"$WORK/internal.out" 2>&1; then
  fail "helm/ringkv and k8s/ do not mention /internal/ or X-Ringkv-Cluster-Secret" "$WORK/internal.out"
else
  pass "helm/ringkv and k8s/ do not mention /internal/ or X-Ringkv-Cluster-Secret"
fi
if grep -iE -- "$INTERNAL_RE" "$WORK"/*.yaml >"$WORK/internal.out" 2>/dev/null; then
  fail "no render mentions /internal/ or X-Ringkv-Cluster-Secret" "$WORK/internal.out"
else
  pass "no render mentions /internal/ or X-Ringkv-Cluster-Secret"
fi

# ---------------------------------------------------------------------------
# The k6 load test (loadtest.*): the scripts reach the chart through the symlink
# files/loadtest -> ../../../loadtest, never as copies.
section "loadtest (k6 Job)"
LOADTEST_DIR="$ROOT/loadtest"
if [ -L "$CHART/files/loadtest" ] && [ "$(readlink -f "$CHART/files/loadtest")" = "$(readlink -f "$LOADTEST_DIR")" ]; then
  pass "helm/ringkv/files/loadtest is a symlink to loadtest/ (no copies to drift)"
else
  fail "helm/ringkv/files/loadtest is a symlink to loadtest/ (no copies to drift)"
fi

# loadtest_case NAME RELEASE NAMESPACE EXPECT_JSON [helm args...]
loadtest_case() {
  local name=$1 release=$2 namespace=$3 expect=$4; shift 4
  printf '   helm template %s -n %s %s\n' "$release" "$namespace" "$*"
  if "$HELM" template "$release" "$CHART" --namespace "$namespace" "$@" >"$WORK/$name.yaml" 2>"$WORK/$name.err"; then
    pass "helm template succeeds ($name)"
    run_checker loadtest "$WORK/$name.yaml" "$expect" "$LOADTEST_DIR"
  else
    fail "helm template succeeds ($name)" "$WORK/$name.err"
  fi
}

LT_DEFAULT='"enabled":true,"namespace":"default","fullname":"ringkv","servicePort":8080,"image":"grafana/k6:1.8.1",
 "scenario":"mixed","rate":"200","duration":"30s","replicas":"2/3","keyspace":"100000","valueSize":"1024",
 "p99Ms":"10","maxErrorRate":"0.01","fill":"none","activeDeadlineSeconds":900,"ttl":null'
if [ -s "$WORK/default.yaml" ]; then
  run_checker loadtest "$WORK/default.yaml" '{"enabled":false}' "$LOADTEST_DIR"
else
  fail "default chart render available (loadtest disabled)"
fi
loadtest_case loadtest-default ringkv default "{$LT_DEFAULT}" --set loadtest.enabled=true

cat >"$WORK/values-loadtest.yaml" <<'EOF'
fullnameOverride: kv
service:
  port: 80
networkPolicy:
  enabled: true
  allowSameNamespace: false
loadtest:
  enabled: true
  image:
    repository: ringkv-k6
    tag: "1.8.1"
  scenario: get
  rate: 50
  duration: 1m30s
  replicas: "3/3"
  keyspace: 1000000
  valueSize: 100
  p99Ms: 2.5
  maxErrorRate: 0.001
  fill: init
  env:
    READ_RATIO: "0.9"
    DISTRIBUTION: zipf
  activeDeadlineSeconds: 300
  ttlSecondsAfterFinished: 600
EOF
loadtest_case loadtest-custom rel kvns "$(cat <<EOF
{"enabled":true,"namespace":"kvns","fullname":"kv","servicePort":80,"image":"ringkv-k6:1.8.1",
 "scenario":"get","rate":"50","duration":"1m30s","replicas":"3/3","keyspace":"1000000","valueSize":"100",
 "p99Ms":"2.5","maxErrorRate":"0.001","fill":"init","env":{"READ_RATIO":"0.9","DISTRIBUTION":"zipf"},
 "activeDeadlineSeconds":300,"ttl":600,"networkPolicy":true}
EOF
)" -f "$WORK/values-loadtest.yaml"
# --set passes 12.5 and 0.05 as strings: the schema takes decimal strings for these two.
LT_SET=${LT_DEFAULT/\"fill\":\"none\"/\"fill\":\"done\"}
LT_SET=${LT_SET/\"p99Ms\":\"10\"/\"p99Ms\":\"12.5\"}
LT_SET=${LT_SET/\"maxErrorRate\":\"0.01\"/\"maxErrorRate\":\"0.05\"}
loadtest_case loadtest-set ringkv default "{$LT_SET}" \
  --set loadtest.enabled=true,loadtest.fill=done,loadtest.p99Ms=12.5,loadtest.maxErrorRate=0.05

# The Job's name follows its pod template (immutable) and the scripts, nothing else.
jobname() {
  "$HELM" template ringkv "$CHART" --set loadtest.enabled=true "$@" 2>/dev/null >"$WORK/jobname.yaml" || true
  contract jobname "$WORK/jobname.yaml"
}
base_job=$(jobname)
if [ -n "$base_job" ] && [ "$base_job" = "$(jobname --set replicaCount=5,persistence.size=5Gi)" ]; then
  pass "Job name unchanged by values outside loadtest (an upgrade leaves the finished Job alone)"
else
  fail "Job name unchanged by values outside loadtest (an upgrade leaves the finished Job alone)"
fi
if [ -n "$base_job" ] && [ "$base_job" != "$(jobname --set loadtest.rate=300)" ] \
    && [ "$base_job" != "$(jobname --set loadtest.image.tag=1.8.2)" ]; then
  pass "Job name changes with the loadtest values (an upgrade creates a new Job, no immutable-field error)"
else
  fail "Job name changes with the loadtest values (an upgrade creates a new Job, no immutable-field error)"
fi
long_job=$(jobname --set fullnameOverride=a-very-long-release-name-that-is-exactly-fifty-two-c)
if [ ${#long_job} -le 63 ] && [[ $long_job == a-very-long-release-name-that-is-exactly-fift-loadtest-* ]]; then
  pass "Job name of a 52-char fullname fits 63 chars ($long_job)"
else
  fail "Job name of a 52-char fullname fits 63 chars ($long_job)"
fi

# helm package follows the symlink and stores the three scripts (and only them) as real files.
mkdir -p "$WORK/pkg"
if "$HELM" package "$CHART" -d "$WORK/pkg" >"$WORK/pkg.out" 2>&1; then
  pass "helm package succeeds"
  tgz=$(ls "$WORK"/pkg/*.tgz)
  listed=$(tar tzf "$tgz" | grep '/files/' | sort | xargs)
  want="ringkv/files/loadtest/fill.js ringkv/files/loadtest/kv.js ringkv/files/loadtest/lib.js"
  if [ "$listed" = "$want" ]; then
    pass "packaged chart has exactly files/loadtest/{fill,kv,lib}.js (.helmignore keeps the rest of loadtest/ out)"
  else
    printf '%s\n' "$listed" >"$WORK/detail"
    fail "packaged chart has exactly files/loadtest/{fill,kv,lib}.js (.helmignore keeps the rest of loadtest/ out)" "$WORK/detail"
  fi
  same=1
  for script in fill.js kv.js lib.js; do
    tar xzf "$tgz" -O "ringkv/files/loadtest/$script" 2>/dev/null | cmp -s - "$LOADTEST_DIR/$script" || same=0
  done
  if [ $same = 1 ]; then pass "packaged scripts are byte-identical to loadtest/"; else fail "packaged scripts are byte-identical to loadtest/"; fi
else
  fail "helm package succeeds" "$WORK/pkg.out"
fi

# ---------------------------------------------------------------------------
section "k8s/: the chart's render for kustomize (k8s/generate)"
if HELM="$HELM" "$K8S_DIR/generate" "$WORK/k8s" >"$WORK/generate.out" 2>&1; then
  pass "k8s/generate renders the chart"
  for file in ringkv.yaml loadtest/loadtest.yaml; do
    if diff -u "$K8S_DIR/$file" "$WORK/k8s/$file" >"$WORK/detail" 2>&1; then
      pass "k8s/$file is the chart's current render"
    else
      fail "k8s/$file is the chart's current render (run k8s/generate and commit)" "$WORK/detail"
    fi
  done
else
  fail "k8s/generate renders the chart" "$WORK/generate.out"
fi
if [ -z "$KUBECTL" ] || ! command -v "$KUBECTL" >/dev/null 2>&1; then
  skip "kubectl not found: kustomize builds of k8s/ not checked"
else
  for dir in "$K8S_DIR" "$K8S_DIR/loadtest"; do
    name="kubectl kustomize ${dir#"$ROOT/"}"
    out="$WORK/kustomize-$(basename "$dir").yaml"
    if "$KUBECTL" kustomize "$dir" >"$out" 2>"$WORK/kustomize.err"; then pass "$name"; else fail "$name" "$WORK/kustomize.err"; fi
  done
  if grep -q '^kind: Job$' "$WORK/kustomize-k8s.yaml"; then
    fail "the base has no Job: applying it starts no load test"
  else
    pass "the base has no Job: applying it starts no load test"
  fi
  # An overlay as kustomization.yaml suggests: its own namespace, its own secret. The base is
  # namespace-less, so the RoleBinding's subject must follow that namespace; and the Role must still
  # name the StatefulSet and the generated Secret (kustomize writes a generated Secret's hashed name
  # into every Role's resourceNames that match the Secret's, which is why the overlay's Secret has
  # another name).
  mkdir -p "$WORK/overlay"
  head -c 24 /dev/urandom | base64 >"$WORK/overlay/cluster-secret.txt"
  cat >"$WORK/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: kvns
resources:
  - $("$PYTHON" -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$K8S_DIR" "$WORK/overlay")
secretGenerator:
  - name: ringkv-cluster-secret
    files:
      - cluster-secret=cluster-secret.txt
patches:
  - target:
      kind: StatefulSet
      name: ringkv
    patch: |-
      - op: add
        path: /spec/template/spec/containers/0/env/-
        value:
          name: RINGKV_CLUSTER_SECRET
          valueFrom:
            secretKeyRef:
              name: ringkv-cluster-secret
              key: cluster-secret
EOF
  if "$KUBECTL" kustomize "$WORK/overlay" >"$WORK/kustomize-overlay.yaml" 2>"$WORK/kustomize-overlay.err"; then
    pass "kubectl kustomize of an overlay of k8s/ (namespace kvns, its own secret)"
    run_checker rbac-namespace "$WORK/kustomize-overlay.yaml" kvns "$WORK/overlay/cluster-secret.txt"
  else
    fail "kubectl kustomize of an overlay of k8s/ (namespace kvns, its own secret)" "$WORK/kustomize-overlay.err"
  fi
fi
# The base ships no secret, not even a placeholder: the first node makes it (comments may show how an
# overlay adds one).
run_checker k8s-no-secret "$K8S_DIR"

# ---------------------------------------------------------------------------
# The helm test script itself, run with busybox against a tiny mock of the
# ringkv API (skipped when busybox is not installed).
section "helm test script (busybox + mock API)"
BUSYBOX="${BUSYBOX:-$(command -v busybox || true)}"
if [ -z "$BUSYBOX" ]; then
  skip "busybox not found: helm test script not exercised"
elif [ ! -s "$WORK/default.yaml" ]; then
  fail "default chart render available for the test script"
else
  contract hook-script "$WORK/default.yaml" >"$WORK/test-script.sh"
  mkdir -p "$WORK/bb"
  for applet in sh nc wget head tr sleep date printf cat; do ln -sf "$BUSYBOX" "$WORK/bb/$applet"; done
  # run_hook MODE: runs the hook script against a mock in MODE; returns its exit code.
  run_hook() {
    local mode=$1 rc=0
    rm -f "$WORK/mock.port"
    "$PYTHON" "$HERE/checks/mock_api.py" "$mode" "$WORK/mock.port" &
    MOCK_PID=$!
    for _ in $(seq 1 50); do [ -s "$WORK/mock.port" ] && break; sleep 0.1; done
    env -i PATH="$WORK/bb" RINGKV_HOST=127.0.0.1 RINGKV_PORT="$(cat "$WORK/mock.port")" \
      "$WORK/bb/sh" -c "$(cat "$WORK/test-script.sh")" >"$WORK/hook-$mode.out" 2>&1 || rc=$?
    kill "$MOCK_PID" 2>/dev/null || true
    wait "$MOCK_PID" 2>/dev/null || true
    MOCK_PID=""
    return "$rc"
  }
  if run_hook ok && grep -q '^PASS$' "$WORK/hook-ok.out"; then
    pass "test script: PUT 201, GET same value, DELETE 202 against a correct server"
  else
    fail "test script: PUT 201, GET same value, DELETE 202 against a correct server" "$WORK/hook-ok.out"
  fi
  if run_hook corrupt; then
    fail "test script fails when GET returns a different value" "$WORK/hook-corrupt.out"
  elif grep -q 'FAIL: GET' "$WORK/hook-corrupt.out"; then
    pass "test script fails when GET returns a different value"
  else
    fail "test script fails when GET returns a different value (wrong reason)" "$WORK/hook-corrupt.out"
  fi
fi

# ---------------------------------------------------------------------------
# Every manifest rendered above, one with every monitoring object, and k8s/ as kustomize builds it,
# against the schemas of the Kubernetes version kube-local runs and of the Prometheus Operator's CRDs
# that e2e installs: a misspelt field or a wrong type fails here, not at apply.
section "kubeconform (Kubernetes schemas)"
if [ -n "${KUBECONFORM:-}" ]; then
  if ! "$HELM" template ringkv "$CHART" --set metrics.serviceMonitor.enabled=true \
      --set metrics.prometheusRule.enabled=true,metrics.dashboard.enabled=true \
      >"$WORK/monitoring.yaml" 2>"$WORK/monitoring.err"; then
    fail "helm template with every monitoring object" "$WORK/monitoring.err"
  fi
  for manifest in "$WORK"/*.yaml "$K8S_DIR/ringkv.yaml" "$K8S_DIR/loadtest/loadtest.yaml"; do
    case "$(basename "$manifest")" in values-*) continue ;; esac
    name=${manifest#"$WORK/"}
    must_succeed "kubeconform -strict ${name#"$ROOT/"}" "$KUBECONFORM" -strict -summary \
      -schema-location "$K8S_SCHEMAS/{{ .ResourceKind }}{{ .KindSuffix }}.json" "$manifest"
  done
else
  fail "kubeconform available (helm/checks/install-tools)"
fi

section "monitoring objects"; if HELM="$HELM" PYTHON="$PYTHON" "$HERE/checks/monitoring.sh"; then pass "helm/checks/monitoring.sh"; else fail "helm/checks/monitoring.sh"; fi

# ---------------------------------------------------------------------------
section "summary"
echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
if [ "$FAILED" -gt 0 ]; then
  printf 'failed checks:\n'
  printf '  - %s\n' "${FAILED_NAMES[@]}"
  exit 1
fi
echo "all checks passed"
