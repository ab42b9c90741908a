# shellcheck shell=bash
# Sourced by e2e/run.sh: the end of a run. The last step uninstalls the (restored) release; on_exit,
# the exit trap, cleans up whatever the run started (background jobs, the scratch directory, a
# cordoned node, the namespaces, the object store, kube-local), also when it failed half-way, after
# showing what the cluster says.

uninstall_release() {
  helm uninstall "$RELEASE" -n "$NAMESPACE" --wait --timeout 2m >/dev/null
  [ -z "$(k get statefulset -o name 2>/dev/null)" ] || fail "the StatefulSet is still there"
}

# What the cluster says about a failed step: its events, pods and their last log lines.
show_what_failed() {
  local pod
  echo "==> FAILED in: $STEP; what the cluster says:" >&2
  k get events --sort-by=.lastTimestamp 2>&1 | tail -n 40 >&2 || true
  k describe pods 2>&1 | tail -n 120 >&2 || true
  for pod in $(k get pods -o name 2>/dev/null); do
    echo "--- last log lines of $pod" >&2
    k logs "$pod" --all-containers --tail=30 2>&1 >&2 || true
  done
}

on_exit() {
  local status=$? pid namespace release
  for pid in "${BG_PIDS[@]}" "${PF_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  [ -z "$WORK" ] || rm -rf "$WORK"
  [ -z "$CRED_DIR" ] || rm -rf "$CRED_DIR"
  uncordon_node_left_cordoned  # step 8 may have left the node cordoned
  if [ $status -ne 0 ] && [ ${#NAMESPACES_CREATED[@]} -gt 0 ]; then
    show_what_failed
  fi
  for namespace in "${NAMESPACES_CREATED[@]}"; do
    echo "==> cleaning up namespace $namespace"
    for release in $(helm list -n "$namespace" -q 2>/dev/null); do
      helm uninstall "$release" -n "$namespace" --wait --timeout 2m >/dev/null 2>&1 || true
    done
    kubectl delete namespace "$namespace" --wait=true --timeout=2m >/dev/null 2>&1 || true
  done
  stop_object_store
  # down.sh is idempotent: it also undoes an up.sh that failed half-way.
  if [ "${KUBE_LOCAL:-}" = 1 ]; then
    echo "==> stopping kube-local"
    "$KL/down.sh" >/dev/null 2>&1 || echo "WARNING: $KL/down.sh failed" >&2
  fi
  [ $status -eq 0 ] && echo "==> e2e PASSED in ${SECONDS}s" || echo "==> e2e FAILED after ${SECONDS}s" >&2
  exit $status
}
