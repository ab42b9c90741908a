# shellcheck shell=bash
# Sourced by helm/verify.sh: renders the chart for default and non-default values and checks each
# render's application contract (helm/checks/contract). Each case names what it expects where that
# differs from the default render's expectation (contract/expect.py). Needs HELM, CHART, K8S_DIR,
# VERIFY (this directory), WORK and report.sh.

# render_case NAME RELEASE NAMESPACE EXPECT_JSON [helm args...]: renders to $WORK/NAME.yaml and checks it.
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

readonly CUSTOM_SET="replicaCount=5,networkPolicy.enabled=true,volumePermissions.enabled=true,resources.limits.memory=2Gi,resources.requests.memory=2Gi,fullnameOverride=kv,clusterDomain=corp.internal,podAntiAffinity.type=hard,persistence.size=10Gi,persistence.storageClass=fast-ssd,networkPolicy.allowSameNamespace=false"
readonly NO_RBAC_KINDS='["ServiceAccount","Secret","Secret","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]'
readonly NETPOL_EXPECT='{"networkPolicy":true,
 "kinds":["ServiceAccount","Role","RoleBinding","ClusterRole","ClusterRoleBinding","Secret","Secret","Secret","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy","ConfigMap","Job"]}'

check_renders() {
  render_case default ringkv default '{}'
  check_reproducible

  render_case custom rel kvns '{"namespace":"kvns","fullname":"kv","replicas":5,"clusterDomain":"corp.internal",
   "memoryLimit":"2Gi","heapMiB":675,"size":"10Gi","storageClassName":"fast-ssd","volumePermissions":true,
   "networkPolicy":true,"antiAffinity":"hard","security":false,"tls":false,
   "kinds":["ServiceAccount","Role","RoleBinding","ClusterRole","ClusterRoleBinding","Secret","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]}' \
    --set "$CUSTOM_SET" --set security.enabled=false,tls.enabled=false \
    --set 'networkPolicy.managementFrom[0].namespaceSelector.matchLabels.kubernetes\.io/metadata\.name=monitoring' \
    --set-json 'extraEnv=[{"name":"LOGGING_LEVEL_ROOT","value":"INFO"}]'

  render_case existing-secret my-db default '{"fullname":"my-db-ringkv","servicePort":80,"memoryLimit":"1000Mi",
   "heapMiB":750,"directMemoryPercent":5,"storageMemoryPercent":5,"persistence":false,"existingSecret":"ringkv-shared","antiAffinity":"none",
   "spread":false,"tests":false,"tokensSecret":"ringkv-tokens","tlsSecret":"ringkv-tls",
   "kinds":["ServiceAccount","Role","RoleBinding","ClusterRole","ClusterRoleBinding","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]}' \
    --set jvm.heapPercent=75,jvm.directMemoryPercent=5,storage.memoryPercent=5,resources.limits.memory=1000Mi,resources.requests.memory=1000Mi \
    --set cluster.existingSecret=ringkv-shared,persistence.enabled=false,podAntiAffinity.type=none \
    --set security.existingSecret=ringkv-tokens,tls.existingSecret=ringkv-tls \
    --set tests.enabled=false,service.port=80 --set-json 'topologySpreadConstraints=[]'

  render_case ports-and-secret ringkv default '{"fullname":"ringkv-store","imageTag":"0.2.0","httpPort":8081,
   "clusterPort":7071,"managementPort":9091,"storageClassName":"","volumePermissions":true,
   "volumePermissionsImage":"debian:bookworm-slim","secretValue":"0123456789abcdef0123456789abcdef","previousSecret":"fedcba9876543210fedcba9876543210"}' \
    -f "$VERIFY/values-ports.yaml"

  # The NetworkPolicy with every source it can open the HTTP port to: the cluster port stays with the
  # release's own ringkv pods. np-teeth then breaks copies of this render's policy and expects the
  # NetworkPolicy checks to fail on each.
  render_case network-policy ringkv default "$NETPOL_EXPECT" -f "$VERIFY/values-netpol.yaml"
  if [ -s "$WORK/network-policy.yaml" ]; then run_checker np-teeth "$WORK/network-policy.yaml" "$NETPOL_EXPECT"; fi

  # The nodes' Kubernetes API calls: with cluster.departure a pod removed by a scale-down reads its own
  # StatefulSet (Role with `get` on it alone) and hands its data over for at most the timeout, which
  # must stay 10s below the grace period; with the generated secret (neither cluster.secret nor
  # existingSecret) a starting node reads Secret <fullname>, or first creates it (`get` on it alone,
  # `create` on Secrets). Both need the RoleBinding to the pods' ServiceAccount and the token. The
  # default render has both on; rbac-teeth breaks copies of its Role/RoleBinding/token and expects the
  # checks to fail.
  if [ -s "$WORK/default.yaml" ]; then run_checker rbac-teeth "$WORK/default.yaml" '{}'; fi
  # Departure off, the secret still generated: the Role keeps the Secrets rules, the token stays
  # mounted. The timeout is not used and not checked (600s > the 60s grace period).
  render_case departure-off ringkv default '{"departure":false}' \
    --set cluster.departure.enabled=false,cluster.departure.timeout=600s
  # Departure, membership and zones from the Node label off, a secret given: no API call, so no Role,
  # no RoleBinding, no ClusterRole, and the token as serviceAccount.automount says.
  render_case departure-off-secret ringkv default '{"departure":false,"membership":false,"nodeZone":false,
   "secretValue":"0123456789abcdef","kinds":["ServiceAccount","Secret","Secret","Secret","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]}' \
    --set cluster.departure.enabled=false,cluster.membershipFromStatefulSet=false,cluster.secret=0123456789abcdef \
    --set cluster.zones.fromNodeLabel=false
  render_case departure-off-automount ringkv default "{\"departure\":false,\"membership\":false,\"nodeZone\":false,
   \"existingSecret\":\"ringkv-shared\",\"serviceAccountAutomount\":true,\"kinds\":$NO_RBAC_KINDS}" \
    --set cluster.departure.enabled=false,cluster.membershipFromStatefulSet=false,cluster.existingSecret=ringkv-shared,serviceAccount.automount=true \
    --set cluster.zones.fromNodeLabel=false
  # Zones from the Node label alone (departure and membership off): the ClusterRole that may get nodes,
  # its binding and the token, no Role.
  render_case zones-node-only ringkv kvns '{"namespace":"kvns","departure":false,"membership":false,
   "existingSecret":"ringkv-shared","kinds":["ServiceAccount","ClusterRole","ClusterRoleBinding","Secret","Secret",
   "Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]}' \
    --set cluster.departure.enabled=false,cluster.membershipFromStatefulSet=false,cluster.existingSecret=ringkv-shared
  # Zones by hand: given to the nodes, and no Node is read, so no ClusterRole (the Role stays, for the
  # StatefulSet).
  render_case zones-by-ordinal ringkv default '{"nodeZone":false,"zonesByOrdinal":"zone-a,zone-b,zone-c",
   "kinds":["ServiceAccount","Role","RoleBinding","Secret","Secret","Secret","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]}' \
    --set-json 'cluster.zones.byOrdinal=["zone-a","zone-b","zone-c"]'
  # Membership from the StatefulSet alone (departure off, secret given): the Role grants get on the
  # StatefulSet and nothing else.
  render_case membership-only ringkv default '{"departure":false,"existingSecret":"ringkv-shared",
   "kinds":["ServiceAccount","Role","RoleBinding","ClusterRole","ClusterRoleBinding","Secret","Secret","Service","Service","StatefulSet","PodDisruptionBudget","NetworkPolicy"]}' \
    --set cluster.departure.enabled=false,cluster.existingSecret=ringkv-shared
  # On, in another namespace, with a ServiceAccount of another name, the token on for the
  # ServiceAccount too, and the longest timeout the grace period allows with the drain (120s - 10s - 3s).
  render_case departure-custom store kvns '{"namespace":"kvns","fullname":"store-ringkv",
   "terminationGracePeriodSeconds":120,"departure":"107s","drainDelay":"3s","serviceAccountAutomount":true}' \
    -f "$VERIFY/values-departure.yaml"
}

# The chart generates the cluster secret, the tokens and the certificate (kept on upgrade through
# lookup), so that a default install is secure. GitOps tools render with helm template, which cannot
# look them up: with existing Secrets for all three (k8s/generate renders that way), every render is
# identical and a sync never changes a secret. Randomness and lookups stay in the three Secrets'
# templates and the helper that reads the cluster.
check_reproducible() {
  section "reproducible renders"
  local name="with existing Secrets, two helm template renders are byte-identical"
  local existing=(--set cluster.existingSecret=c,security.existingSecret=t,tls.existingSecret=s)
  if "$HELM" template ringkv "$CHART" --namespace default "${existing[@]}" >"$WORK/existing-1.yaml" 2>"$WORK/existing.err" \
      && "$HELM" template ringkv "$CHART" --namespace default "${existing[@]}" >"$WORK/existing-2.out" 2>>"$WORK/existing.err" \
      && cmp -s "$WORK/existing-1.yaml" "$WORK/existing-2.out"; then
    pass "$name"
  else
    diff "$WORK/existing-1.yaml" "$WORK/existing-2.out" >"$WORK/detail" 2>&1 || cat "$WORK/existing.err" >>"$WORK/detail"
    fail "$name" "$WORK/detail"
  fi
  must_find_nothing "lookup, rand*, uuidv4, now and gen* only in the Secrets' templates and ringkv.existingSecretData" \
    randomness_outside_secrets
}

# Prints (and succeeds on) every template line outside secret*.yaml that calls lookup, rand*, uuidv4,
# now or gen*, but the one lookup of ringkv.existingSecretData.
randomness_outside_secrets() {
  grep -rnoE --exclude='secret*.yaml' '\{\{[^}]*\b(lookup|rand[A-Za-z]*|uuidv4|now|gen[A-Za-z]*(Key|CA|Cert))\b' \
    "$CHART/templates" | grep -vE '/_helpers\.tpl:[0-9]+:\{\{- \$secret := lookup$'
}

# Node-to-node traffic moved off the public HTTP port to the cluster port: the HTTP internal endpoints
# (/internal/..., header X-Ringkv-Cluster-Secret) are gone (the public port answers 404 there), and
# neither the chart (templates, NOTES, values, schema, tests) nor k8s/ nor any render (nor the values
# the renders are made with) may still describe or use them.
check_no_internal_endpoints() {
  section "no trace of the removed HTTP internal endpoints"
  local internal_re='/internal(/|[^a-z.]|$)|X-Ringkv-Cluster-Secret'
  must_find_nothing "helm/ringkv and k8s/ do not mention /internal/ or X-Ringkv-Cluster-Secret" \
    grep -rInE --exclude-dir=loadtest -- "$internal_re" "$CHART" "$K8S_DIR"
  must_find_nothing "no render mentions /internal/ or X-Ringkv-Cluster-Secret" \
    grep -iE -- "$internal_re" "$WORK"/*.yaml "$VERIFY"/values-*.yaml
}
