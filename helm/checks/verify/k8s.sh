# shellcheck shell=bash
# Sourced by helm/verify.sh: k8s/ is the chart's current render (k8s/generate), builds with kustomize,
# also under an overlay with its own namespace and secret, and holds no secret. Needs HELM, KUBECTL,
# PYTHON, ROOT, K8S_DIR, VERIFY, WORK and report.sh.

check_k8s() {
  section "k8s/: the chart's render for kustomize (k8s/generate)"
  check_k8s_generated
  if [ -z "$KUBECTL" ] || ! command -v "$KUBECTL" >/dev/null 2>&1; then
    skip "kubectl not found: kustomize builds of k8s/ not checked"
  else
    check_kustomize_builds
    check_overlay
  fi
  # The base ships no secret, not even a placeholder: the first node makes it (comments may show how an
  # overlay adds one).
  run_checker k8s-no-secret "$K8S_DIR"
}

check_k8s_generated() {
  local file
  if ! HELM="$HELM" "$K8S_DIR/generate" "$WORK/k8s" >"$WORK/generate.out" 2>&1; then
    fail "k8s/generate renders the chart" "$WORK/generate.out"
    return
  fi
  pass "k8s/generate renders the chart"
  for file in ringkv.yaml loadtest/loadtest.yaml; do
    if diff -u "$K8S_DIR/$file" "$WORK/k8s/$file" >"$WORK/detail" 2>&1; then
      pass "k8s/$file is the chart's current render"
    else
      fail "k8s/$file is the chart's current render (run k8s/generate and commit)" "$WORK/detail"
    fi
  done
}

check_kustomize_builds() {
  local dir name out
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
}

# The base is namespace-less, so the RoleBinding's subject must follow the overlay's namespace; the
# Role must still name the StatefulSet alone; and the overlay's Secrets (hashed names) must be the ones
# the pods read.
check_overlay() {
  local overlay="$WORK/overlay" name="kubectl kustomize of an overlay of k8s/ (namespace kvns, its own Secrets)"
  mkdir -p "$overlay"
  head -c 24 /dev/urandom | base64 >"$overlay/cluster-secret.txt"
  head -c 30 /dev/urandom | base64 >"$overlay/write-token.txt"
  printf '%s write k6\n' "$(cat "$overlay/write-token.txt")" >"$overlay/tokens.txt"
  # kustomize does not parse them: placeholders do for the build.
  printf -- '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n' | tee "$overlay/tls.crt" >"$overlay/ca.crt"
  printf -- '-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n' >"$overlay/tls.key"
  cp "$VERIFY/overlay-kustomization.yaml" "$overlay/kustomization.yaml"
  printf 'resources:\n  - %s\n' \
    "$("$PYTHON" -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$K8S_DIR" "$overlay")" \
    >>"$overlay/kustomization.yaml"
  if "$KUBECTL" kustomize "$overlay" >"$WORK/kustomize-overlay.yaml" 2>"$WORK/kustomize-overlay.err"; then
    pass "$name"
    run_checker rbac-namespace "$WORK/kustomize-overlay.yaml" kvns "$overlay/cluster-secret.txt"
  else
    fail "$name" "$WORK/kustomize-overlay.err"
  fi
}
