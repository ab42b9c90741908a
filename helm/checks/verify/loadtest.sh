# shellcheck shell=bash
# Sourced by helm/verify.sh: the k6 load test (loadtest.*). The scripts reach the chart through the
# symlink files/loadtest -> ../../../loadtest, never as copies; the Job and its ConfigMap are checked by
# helm/checks/contract (loadtest.py); the Job's name follows what an upgrade may change; the packaged
# chart holds the three scripts; the HTML report comes out of the report container's log as NOTES.txt
# says. Needs HELM, CHART, ROOT, VERIFY, WORK, K6_BIN, report.sh and hook-script.sh's mock.

# loadtest_case NAME RELEASE NAMESPACE EXPECT_JSON [helm args...]
loadtest_case() {
  local name=$1 release=$2 namespace=$3 expect=$4; shift 4
  printf '   helm template %s -n %s %s\n' "$release" "$namespace" "$*"
  if "$HELM" template "$release" "$CHART" --namespace "$namespace" "$@" >"$WORK/$name.yaml" 2>"$WORK/$name.err"; then
    pass "helm template succeeds ($name)"
    run_checker loadtest "$WORK/$name.yaml" "$expect" "$ROOT/loadtest"
  else
    fail "helm template succeeds ($name)" "$WORK/$name.err"
  fi
}

check_loadtest() {
  section "loadtest (k6 Job)"
  local name="helm/ringkv/files/loadtest is a symlink to loadtest/ (no copies to drift)"
  if [ -L "$CHART/files/loadtest" ] && [ "$(readlink -f "$CHART/files/loadtest")" = "$(readlink -f "$ROOT/loadtest")" ]; then
    pass "$name"
  else
    fail "$name"
  fi
  if [ -s "$WORK/default.yaml" ]; then
    run_checker loadtest "$WORK/default.yaml" '{"enabled":false}' "$ROOT/loadtest"
  else
    fail "default chart render available (loadtest disabled)"
  fi
  loadtest_case loadtest-default ringkv default '{}' --set loadtest.enabled=true
  loadtest_case loadtest-custom rel kvns '{"namespace":"kvns","fullname":"kv","servicePort":80,"image":"ringkv-k6:1.8.1",
   "scenario":"ycsb-e","rate":"50","duration":"1m30s","replicas":"3/3","keyspace":"1000000","distribution":"zipf",
   "valueSize":"100","p99Ms":"2.5","maxErrorRate":"0.001","fill":"init","env":{"READ_RATIO":"0.9","SCAN_MAX":"10"},
   "reportImage":"ringkv-busybox:1","reportPeriod":"2s","activeDeadlineSeconds":300,"ttl":600,"networkPolicy":true}' \
    -f "$VERIFY/values-loadtest.yaml"
  loadtest_case loadtest-no-report ringkv default '{"fill":"init","report":false}' \
    --set loadtest.enabled=true,loadtest.fill=init,loadtest.report.enabled=false
  # --set passes 12.5 and 0.05 as strings: the schema takes decimal strings for these two.
  loadtest_case loadtest-set ringkv default '{"fill":"done","p99Ms":"12.5","maxErrorRate":"0.05"}' \
    --set loadtest.enabled=true,loadtest.fill=done,loadtest.p99Ms=12.5,loadtest.maxErrorRate=0.05
  check_job_name
  check_package
}

# jobname [helm args...]: the loadtest Job's name in a render with those values.
jobname() {
  "$HELM" template ringkv "$CHART" --set loadtest.enabled=true "$@" 2>/dev/null >"$WORK/jobname.yaml" || true
  contract jobname "$WORK/jobname.yaml"
}

# The Job's name follows its pod template (immutable) and the scripts, nothing else.
check_job_name() {
  local base_job long_job name
  base_job=$(jobname)
  name="Job name unchanged by values outside loadtest (an upgrade leaves the finished Job alone)"
  if [ -n "$base_job" ] && [ "$base_job" = "$(jobname --set replicaCount=5,persistence.size=5Gi)" ]; then
    pass "$name"
  else
    fail "$name"
  fi
  name="Job name changes with the loadtest values (an upgrade creates a new Job, no immutable-field error)"
  if [ -n "$base_job" ] && [ "$base_job" != "$(jobname --set loadtest.rate=300)" ] \
      && [ "$base_job" != "$(jobname --set loadtest.image.tag=1.8.2)" ] \
      && [ "$base_job" != "$(jobname --set loadtest.report.enabled=false)" ]; then
    pass "$name"
  else
    fail "$name"
  fi
  long_job=$(jobname --set fullnameOverride=a-very-long-release-name-that-is-exactly-fifty-two-c)
  name="Job name of a 52-char fullname fits 63 chars ($long_job)"
  if [ ${#long_job} -le 63 ] && [[ $long_job == a-very-long-release-name-that-is-exactly-fift-loadtest-* ]]; then
    pass "$name"
  else
    fail "$name"
  fi
}

# helm package follows the symlink and stores the three scripts (and only them) as real files, beside
# the scripts of the helm test, the backup CronJob and the restore Job (and the helpers those two share),
# and the one every client pod first waits for the release with.
check_package() {
  local tgz listed script same=1
  local want="ringkv/files/actuator-client.js ringkv/files/backup.js ringkv/files/helm-test.js ringkv/files/loadtest/fill.js ringkv/files/loadtest/kv.js ringkv/files/loadtest/lib.js ringkv/files/restore.js ringkv/files/wait-for-release.js"
  local name="packaged chart has exactly files/{actuator-client,backup,helm-test,restore,wait-for-release}.js and files/loadtest/{fill,kv,lib}.js (.helmignore keeps the rest of loadtest/ out)"
  mkdir -p "$WORK/pkg"
  if ! "$HELM" package "$CHART" -d "$WORK/pkg" >"$WORK/pkg.out" 2>&1; then
    fail "helm package succeeds" "$WORK/pkg.out"
    return
  fi
  pass "helm package succeeds"
  tgz=$(ls "$WORK"/pkg/*.tgz)
  listed=$(tar tzf "$tgz" | grep '/files/' | sort | xargs)
  if [ "$listed" = "$want" ]; then
    pass "$name"
  else
    printf '%s\n' "$listed" >"$WORK/detail"
    fail "$name" "$WORK/detail"
  fi
  for script in fill.js kv.js lib.js; do
    tar xzf "$tgz" -O "ringkv/files/loadtest/$script" 2>/dev/null | cmp -s - "$ROOT/loadtest/$script" || same=0
  done
  if [ $same = 1 ]; then pass "packaged scripts are byte-identical to loadtest/"; else fail "packaged scripts are byte-identical to loadtest/"; fi
}

# The report as the Job makes it, outside Kubernetes, its directory moved into WORK: kv.js under k6
# with the k6 container's web dashboard settings (from the default render) against the mock API; then
# the report container's script, stopped with TERM as the kubelet stops a sidecar once k6 has exited;
# its output through NOTES.txt's `base64 -d | gunzip` must be k6's HTML report with charts. Before k6
# has written one, the script must print nothing to stdout and say why on stderr.
check_loadtest_report() {
  section "loadtest report (k6's web dashboard export, printed by the report container)"
  local dir="$WORK/report" name rc=0 report_env
  if [ -z "$K6_BIN" ]; then
    skip "k6 not found: the loadtest report not exercised"
    return
  elif [ ! -s "$WORK/loadtest-default.yaml" ]; then
    fail "loadtest render available for the report"
    return
  fi
  mkdir -p "$dir"
  contract report-part "$WORK/loadtest-default.yaml" script "$dir" >"$WORK/report-script.sh"
  mapfile -t report_env < <(contract report-part "$WORK/loadtest-default.yaml" env "$dir")
  name="report container without a report: exits 0, stdout empty, why on stderr"
  if run_report_script missing && [ ! -s "$WORK/report-missing.out" ] && grep -q 'no report' "$WORK/report-missing.err"; then
    pass "$name"
  else
    fail "$name" "$WORK/report-missing.err"
  fi
  start_mock ok
  env -i HOME="$WORK" "${report_env[@]}" BASE_URL="$MOCK_URL" RINGKV_TOKEN=mock-token SCENARIO=put RATE=20 \
    DURATION=3s P99_MS=1000 SUMMARY_JSON=none K6_NO_USAGE_REPORT=true \
    "$K6_BIN" run --quiet --no-color "$ROOT/loadtest/kv.js" >"$WORK/report-k6.out" 2>&1 || rc=$?
  stop_mock
  name="kv.js under k6 with the Job's web dashboard settings writes the report"
  if [ "$rc" = 0 ] && [ -s "$dir/report.html.gz" ]; then pass "$name"; else fail "$name (k6 exit code $rc)" "$WORK/report-k6.out"; fi
  name="report container prints it; base64 -d | gunzip decodes it"
  if run_report_script written && base64 -d <"$WORK/report-written.out" | gunzip >"$WORK/report.html"; then
    pass "$name"
    run_checker report-html "$WORK/report.html"
  else
    fail "$name" "$WORK/report-written.err"
  fi
}

# run_report_script NAME: runs the report container's script, stops it with TERM after a moment;
# report-NAME.out and .err hold what it printed. Returns its exit code.
run_report_script() {
  sh "$WORK/report-script.sh" >"$WORK/report-$1.out" 2>"$WORK/report-$1.err" &
  local pid=$!
  sleep 0.2
  kill -TERM "$pid"
  wait "$pid"
}
