# shellcheck shell=bash
# Sourced by helm/verify.sh: the helm test hook's k6 script itself, run with k6 against a tiny mock of the
# ringkv API (helm/checks/mock_api.py, which wants the token); skipped when k6 is not installed (K6_BIN
# empty). Needs PYTHON, CHECKS, WORK, K6_BIN, MOCK_PID (the mock's pid while it runs, for the caller's
# cleanup) and report.sh. start_mock and stop_mock serve loadtest.sh's report check too.

check_hook_script() {
  section "helm test script (k6 + mock API)"
  local name
  if [ -z "$K6_BIN" ]; then
    skip "k6 not found: helm test script not exercised"
    return
  elif [ ! -s "$WORK/default.yaml" ]; then
    fail "default chart render available for the test script"
    return
  fi
  contract hook-script "$WORK/default.yaml" >"$WORK/helm-test.js"
  name="test script: PUT 201, GET same value, conditional PUTs 201/412, DELETE 202 against a correct server, with the token"
  if run_hook ok mock-token && grep -q 'PASS' "$WORK/hook-ok.out"; then pass "$name"; else fail "$name" "$WORK/hook-ok.out"; fi
  name="test script fails when GET returns a different value"
  if run_hook corrupt mock-token; then
    fail "$name" "$WORK/hook-corrupt.out"
  elif grep -q 'GET /v0/entity' "$WORK/hook-corrupt.out"; then
    pass "$name"
  else
    fail "$name (wrong reason)" "$WORK/hook-corrupt.out"
  fi
  name="test script fails when the server ignores If-None-Match and If-Match"
  if run_hook unconditional mock-token; then
    fail "$name" "$WORK/hook-unconditional.out"
  elif grep -q 'If-None-Match: \* again -> 201' "$WORK/hook-unconditional.out"; then
    pass "$name"
  else
    fail "$name (wrong reason)" "$WORK/hook-unconditional.out"
  fi
  name="test script fails without the token (401)"
  if run_hook ok ""; then
    fail "$name" "$WORK/hook-ok.out"
  elif grep -q '401' "$WORK/hook-ok.out"; then
    pass "$name"
  else
    fail "$name (wrong reason)" "$WORK/hook-ok.out"
  fi
}

# The init container of every client pod (files/wait-for-release.js): done at once when /v0/status
# answers 200, and failing, with what it waited for, once WAIT_TIMEOUT_SECONDS have passed while
# another server answers.
check_wait_script() {
  section "wait-for-release script (k6 + mock API)"
  local name
  if [ -z "$K6_BIN" ]; then
    skip "k6 not found: wait-for-release script not exercised"
    return
  fi
  name="wait script: ready at once when /v0/status answers 200"
  if run_wait ok && grep -q 'ready: GET .*/v0/status -> 200' "$WORK/wait-ok.out"; then pass "$name"; else fail "$name" "$WORK/wait-ok.out"; fi
  name="wait script: fails after WAIT_TIMEOUT_SECONDS while another server answers 404"
  if run_wait stranger; then
    fail "$name" "$WORK/wait-stranger.out"
  elif grep -q 'did not answer GET .*/v0/status with 200 within 3s' "$WORK/wait-stranger.out"; then
    pass "$name"
  else
    fail "$name (wrong reason)" "$WORK/wait-stranger.out"
  fi
}

# run_wait MODE: the wait script against a mock in MODE, with a 3 s bound; returns k6's exit code.
run_wait() {
  local mode=$1 rc=0
  start_mock "$mode"
  env -i HOME="$WORK" BASE_URL="$MOCK_URL" WAIT_TIMEOUT_SECONDS=3 K6_NO_USAGE_REPORT=true \
    "$K6_BIN" run --quiet --no-color "$CHART/files/wait-for-release.js" >"$WORK/wait-$mode.out" 2>&1 || rc=$?
  stop_mock
  return "$rc"
}

# run_hook MODE TOKEN: runs the hook script against a mock in MODE ("ok", "corrupt", "unconditional") that wants the token
# mock-token; returns k6's exit code.
run_hook() {
  local mode=$1 token=$2 rc=0
  start_mock "$mode"
  env -i HOME="$WORK" BASE_URL="$MOCK_URL" RINGKV_TOKEN="$token" K6_NO_USAGE_REPORT=true \
    "$K6_BIN" run --quiet --no-color "$WORK/helm-test.js" >"$WORK/hook-$mode.out" 2>&1 || rc=$?
  stop_mock
  return "$rc"
}

# start_mock MODE: the mock API in MODE, on a free port; sets MOCK_PID and MOCK_URL.
start_mock() {
  rm -f "$WORK/mock.port"
  "$PYTHON" "$CHECKS/mock_api.py" "$1" "$WORK/mock.port" &
  MOCK_PID=$!
  for _ in $(seq 1 50); do [ -s "$WORK/mock.port" ] && break; sleep 0.1; done
  MOCK_URL="http://127.0.0.1:$(cat "$WORK/mock.port")"
}

stop_mock() {
  kill "$MOCK_PID" 2>/dev/null || true
  wait "$MOCK_PID" 2>/dev/null || true
  MOCK_PID=""
}
