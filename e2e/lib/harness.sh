# shellcheck shell=bash
# Sourced by e2e/run.sh: logging, steps, failing, polling, and the cluster the run works on (its
# exit trap, on_exit, is in steps/teardown.sh).

STEP_STARTED=$SECONDS
STEP=""
PF_PIDS=()   # port-forwards (lib/forward.sh)
BG_PIDS=()   # other background jobs: the checker's load, kubectl logs -f
WORK=""      # scratch directory of steps 7 and 8 (the checker's records and logs)
NAMESPACES_CREATED=()  # removed by on_exit: the first release's, and the restored one's (step 12)

log() { printf '[e2e %4ss] %s\n' "$((SECONDS - STEP_STARTED))" "$*"; }
step_passed() { printf '==> PASS %s (%ss)\n' "$STEP" "$((SECONDS - STEP_STARTED))"; }
step() { # title: ends the step before (it passed: a failure exits), begins this one
  [ -z "$STEP" ] || step_passed
  STEP=$1
  STEP_STARTED=$SECONDS
  printf '\n==> %s\n' "$STEP"
}
fail() { echo "FAIL: $*" >&2; exit 1; }

k() { kubectl -n "$NAMESPACE" "$@"; }

# Polls a command until it succeeds, for at most $1 seconds.
eventually() {
  local timeout=$1; shift
  local deadline=$((SECONDS + timeout))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 2
  done
}

# The cluster for the run: with KUBE_LOCAL=1, kube-local started (and stopped by on_exit); images
# go in with $LOAD_IMAGE (kube-local's load-image.sh when it is beside the checkout).
prepare_cluster() {
  if [ "${KUBE_LOCAL:-}" = 1 ]; then
    "$KL/build.sh" >/dev/null
    "$KL/up.sh" >/dev/null
    eval "$("$KL/up.sh" --print-env)"
  fi
  if [ -z "${LOAD_IMAGE:-}" ] && [ -x "$KL/load-image.sh" ]; then
    LOAD_IMAGE="$KL/load-image.sh"
  fi
  [ -n "${LOAD_IMAGE:-}" ] || fail "set LOAD_IMAGE to a command that loads a local image into the cluster"
  local tool
  for tool in kubectl helm docker curl go; do
    command -v "$tool" >/dev/null || fail "$tool is needed"
  done
}
