# shellcheck shell=bash
# Sourced by e2e/run.sh: what a client needs against the chart's defaults (security and TLS on), read
# from the release's Secrets once it is installed, and curl with it.
#
#   load_credentials   after the install: the admin token (<release>-tokens, admin-token), the nodes'
#                      CA and, for the node-to-node protocol of e2e/checker (census, peer-read), the
#                      nodes' certificate and key (<release>-tls) and the cluster secret (<release>,
#                      cluster-secret); exported for the checker as RINGKV_TOKEN, RINGKV_CA_FILE,
#                      RINGKV_CLIENT_CERT, RINGKV_CLIENT_KEY, RINGKV_CLUSTER_SECRET
#   rcurl              curl as the release's admin: the CA and the Bearer token (an anonymous request
#                      is `command curl`, with --cacert "$RINGKV_CA_FILE")
# The certificate names localhost and 127.0.0.1, so port-forwards are https://127.0.0.1:<port>.

SCHEME=https
CRED_DIR=""   # the CA, certificate and key (removed by on_exit)

load_credentials() {
  CRED_DIR=$(mktemp -d /tmp/ringkv-e2e-credentials.XXXXXX)
  chmod 700 "$CRED_DIR"
  RINGKV_TOKEN=$(k get secret "$RELEASE-tokens" -o jsonpath='{.data.admin-token}' | base64 -d)
  [ -n "$RINGKV_TOKEN" ] || fail "Secret $RELEASE-tokens holds no admin-token"
  local key file
  for key in ca.crt tls.crt tls.key; do
    file="$CRED_DIR/$key"
    k get secret "$RELEASE-tls" -o jsonpath="{.data.${key//./\\.}}" | base64 -d >"$file"
    [ -s "$file" ] || fail "Secret $RELEASE-tls holds no $key"
  done
  RINGKV_CA_FILE=$CRED_DIR/ca.crt RINGKV_CLIENT_CERT=$CRED_DIR/tls.crt RINGKV_CLIENT_KEY=$CRED_DIR/tls.key
  RINGKV_CLUSTER_SECRET=$(k get secret "$RELEASE" -o jsonpath='{.data.cluster-secret}' | base64 -d)
  [ -n "$RINGKV_CLUSTER_SECRET" ] || fail "Secret $RELEASE holds no cluster-secret"
  export RINGKV_TOKEN RINGKV_CA_FILE RINGKV_CLIENT_CERT RINGKV_CLIENT_KEY RINGKV_CLUSTER_SECRET
  # The checker's peer connections speak for pod 0 (a member): names that are no member are refused.
  RINGKV_PEER_NAME="$SCHEME://$RELEASE-0.$RELEASE-headless.$NAMESPACE.svc.cluster.local:8080"
  export RINGKV_PEER_NAME
  log "admin token from Secret $RELEASE-tokens; CA, certificate and key from Secret $RELEASE-tls; cluster secret from Secret $RELEASE"
}

rcurl() {
  command curl --cacert "$RINGKV_CA_FILE" -H "Authorization: Bearer $RINGKV_TOKEN" "$@"
}
