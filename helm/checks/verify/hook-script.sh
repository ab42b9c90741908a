# shellcheck shell=bash
# Sourced by helm/verify.sh: the helm test hook's script itself, run with busybox against a tiny mock
# of the ringkv API (helm/checks/mock_api.py); skipped when busybox is not installed. Needs PYTHON,
# CHECKS, WORK, MOCK_PID (the mock's pid while it runs, for the caller's cleanup) and report.sh.

check_hook_script() {
  section "helm test script (busybox + mock API)"
  local busybox="${BUSYBOX:-$(command -v busybox || true)}" applet name
  if [ -z "$busybox" ]; then
    skip "busybox not found: helm test script not exercised"
    return
  elif [ ! -s "$WORK/default.yaml" ]; then
    fail "default chart render available for the test script"
    return
  fi
  contract hook-script "$WORK/default.yaml" >"$WORK/test-script.sh"
  mkdir -p "$WORK/bb"
  for applet in sh nc wget head tr sleep date printf cat; do ln -sf "$busybox" "$WORK/bb/$applet"; done
  name="test script: PUT 201, GET same value, DELETE 202 against a correct server"
  if run_hook ok && grep -q '^PASS$' "$WORK/hook-ok.out"; then pass "$name"; else fail "$name" "$WORK/hook-ok.out"; fi
  name="test script fails when GET returns a different value"
  if run_hook corrupt; then
    fail "$name" "$WORK/hook-corrupt.out"
  elif grep -q 'FAIL: GET' "$WORK/hook-corrupt.out"; then
    pass "$name"
  else
    fail "$name (wrong reason)" "$WORK/hook-corrupt.out"
  fi
}

# run_hook MODE: runs the hook script against a mock in MODE ("ok" or "corrupt"); returns its exit code.
run_hook() {
  local mode=$1 rc=0
  rm -f "$WORK/mock.port"
  "$PYTHON" "$CHECKS/mock_api.py" "$mode" "$WORK/mock.port" &
  MOCK_PID=$!
  for _ in $(seq 1 50); do [ -s "$WORK/mock.port" ] && break; sleep 0.1; done
  env -i PATH="$WORK/bb" RINGKV_HOST=127.0.0.1 RINGKV_PORT="$(cat "$WORK/mock.port")" \
    "$WORK/bb/sh" -c "$(cat "$WORK/test-script.sh")" >"$WORK/hook-$mode.out" 2>&1 || rc=$?
  kill "$MOCK_PID" 2>/dev/null || true
  wait "$MOCK_PID" 2>/dev/null || true
  MOCK_PID=""
  return "$rc"
}
