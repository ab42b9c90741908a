# shellcheck shell=bash
# Sourced by helm/verify.sh: backups and restores (backup.*, restore.*). Renders with them off and on are
# checked by helm/checks/contract (backup.py: the nodes' settings, the CronJob, the restore Job, the
# NetworkPolicy), which must also fail on broken copies (backup-teeth); the chart refuses what cannot work;
# the restore Job's name follows what an upgrade may change; and the scripts themselves (files/backup.js,
# files/restore.js, each beside files/actuator-client.js, which they import, as a render's ConfigMaps hold
# them) run with k6 against a mock of the nodes (helm/checks/mock_actuator.py). Needs HELM, CHART, CHECKS, VERIFY, WORK, PYTHON, K6_BIN, MOCK_PID and
# report.sh.

readonly BACKUP_RESTORE_EXPECT='{"namespace":"store","fullname":"rel-ringkv","target":"s3://ringkv-backups/store",
 "endpoint":"http://10.250.0.1:8333","existingSecret":"ringkv-backup-s3","rate":"16MB","keep":"3","backup":true,
 "schedule":"30 1 * * *","timeoutSeconds":1800,"restore":true,"from":"2026-11-29T16-31-05Z","asOf":"2026-11-29T12:00:00Z"}'

# backup_case NAME RELEASE NAMESPACE EXPECT_JSON [helm args...]: renders to $WORK/NAME.yaml and checks it.
backup_case() {
  local name=$1 release=$2 namespace=$3 expect=$4; shift 4
  printf '   helm template %s -n %s %s\n' "$release" "$namespace" "$*"
  if "$HELM" template "$release" "$CHART" --namespace "$namespace" "$@" >"$WORK/$name.yaml" 2>"$WORK/$name.err"; then
    pass "helm template succeeds ($name)"
    run_checker backup "$WORK/$name.yaml" "$expect"
  else
    fail "helm template succeeds ($name)" "$WORK/$name.err"
  fi
}

check_backup() {
  section "backup and restore (nodes' settings, CronJob, restore Job)"
  if [ -s "$WORK/default.yaml" ]; then
    run_checker backup "$WORK/default.yaml" '{}'
  else
    fail "default chart render available (backups off)"
  fi
  backup_case backup-restore rel store "$BACKUP_RESTORE_EXPECT" -f "$VERIFY/values-backup.yaml"
  if [ -s "$WORK/backup-restore.yaml" ]; then run_checker backup-teeth "$WORK/backup-restore.yaml" "$BACKUP_RESTORE_EXPECT"; fi
  # A file:// target needs no Secret; plain http without tokens; five nodes on other ports, in another domain.
  backup_case backup-file kv db '{"namespace":"db","fullname":"kv","replicas":5,"clusterDomain":"corp.internal",
   "managementPort":9191,"security":false,"tls":false,"target":"file:///backups/kv","backup":true,"schedule":"@daily"}' \
    --set fullnameOverride=kv,replicaCount=5,clusterDomain=corp.internal,containerPorts.management=9191 \
    --set security.enabled=false,tls.enabled=false --set backup.target=file:///backups/kv,backup.schedule=@daily
  # Backups on without a schedule, and a restore of the newest state of a backup, with the chart's
  # Secrets named otherwise and the management port open to all (managementFrom []).
  backup_case restore-existing-secrets ringkv default '{"target":"file:///backups","restore":true,
   "from":"2026-11-29T16-31-05Z","tokensSecret":"my-tokens","tlsSecret":"my-tls"}' \
    --set backup.target=file:///backups,restore.from=2026-11-29T16-31-05Z \
    --set security.existingSecret=my-tokens,tls.existingSecret=my-tls --set-json 'networkPolicy.managementFrom=[]'
  must_fail "an s3 target without backup.existingSecret is refused, naming the Secret's keys" \
    "backup.existingSecret is required, the name of a Secret with keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" \
    "$HELM" template ringkv "$CHART" --set backup.target=s3://ringkv-backups/x
  must_fail "a schedule without a target is refused" "backup.schedule needs backup.target" \
    "$HELM" template ringkv "$CHART" --set backup.schedule=@daily
  must_fail "a restore without a target is refused" "restore.from needs backup.target" \
    "$HELM" template ringkv "$CHART" --set restore.from=2026-11-29T16-31-05Z
  must_fail "schema refuses backup.target=gs://bucket" "/backup/target" \
    "$HELM" template ringkv "$CHART" --set backup.target=gs://bucket
  must_fail "schema refuses restore.from=2026-11-29T16:31:05Z (an instant, not a backup id)" "/restore/from" \
    "$HELM" template ringkv "$CHART" --set backup.target=file:///b,restore.from=2026-11-29T16:31:05Z
  check_restore_job_name
}

# restore_jobname [helm args...]: the restore Job's name in a render with those values.
restore_jobname() {
  "$HELM" template ringkv "$CHART" --set backup.target=file:///b,restore.from=2026-11-29T16-31-05Z "$@" \
    2>/dev/null >"$WORK/restore-jobname.yaml" || true
  contract restore-jobname "$WORK/restore-jobname.yaml"
}

# The restore Job's name follows its pod template (immutable) and script, nothing else: an upgrade that
# leaves them alone leaves the finished Job alone, and does not restore again.
check_restore_job_name() {
  local base name
  base=$(restore_jobname)
  name="restore Job name unchanged by values outside it (an upgrade does not restore again)"
  if [ -n "$base" ] && [ "$base" = "$(restore_jobname --set persistence.size=5Gi,backup.keep=3,backup.schedule=@daily)" ]; then
    pass "$name"
  else
    fail "$name"
  fi
  name="restore Job name changes with restore.from and asOf (a new Job, no immutable-field error)"
  if [ -n "$base" ] && [ "$base" != "$(restore_jobname --set restore.from=2026-11-30T02-00-00Z)" ] \
      && [ "$base" != "$(restore_jobname --set restore.asOf=2026-11-29T12:00:00Z)" ]; then
    pass "$name"
  else
    fail "$name"
  fi
}

# The two scripts as the backup-restore render holds them, each in a directory as its pod's /scripts (the
# files of its ConfigMap: the script beside actuator-client.js, which it imports), with k6 against the mock:
# each run's mode, k6's exit code and what the script asked of which node decide.
check_backup_scripts() {
  section "backup and restore scripts (k6 + mock of the nodes' Actuator)"
  if [ -z "$K6_BIN" ]; then
    skip "k6 not found: the backup and restore scripts not exercised"
    return
  elif [ ! -s "$WORK/backup-restore.yaml" ]; then
    fail "backup-restore render available for the scripts"
    return
  fi
  local comp name
  for comp in backup restore; do
    name="the $comp pod's /scripts as the render has it: $comp.js beside actuator-client.js"
    if contract backup-scripts "$WORK/backup-restore.yaml" "$comp" "$(scripts_dir "$comp.js")" >"$WORK/scripts-$comp.out" 2>&1 \
        && [ "$(xargs <"$WORK/scripts-$comp.out")" = "actuator-client.js $comp.js" ]; then
      pass "$name"
    else
      fail "$name" "$WORK/scripts-$comp.out"
    fi
  done
  check_backup_script
  check_restore_script
}

# Node 0 refuses connections (nothing listens on port 1), node 1 answers 503, node 2 is the mock.
backup_nodes() { printf 'http://127.0.0.1:1,%s/down1,%s/n2' "$MOCK_URL" "$MOCK_URL"; }

check_backup_script() {
  local name
  name="backup.js: tries pod 0, 1, then 2, which answers 202; polls that node until the backup is complete; exits 0"
  if run_backup_script backup.js backup-ok mock-token NODES=@NODES@ \
      && grep -q 'PASS' "$WORK/backup.js-backup-ok.out" \
      && [ "$(mock_requests backup.js-backup-ok POST /actuator/backup)" = "down1 n2" ] \
      && [ "$(mock_requests backup.js-backup-ok GET /actuator/backup | tr ' ' '\n' | sort -u | xargs)" = "n2" ] \
      && [ "$(mock_requests backup.js-backup-ok GET /actuator/backup | wc -w)" -ge 3 ]; then
    pass "$name"
  else
    fail "$name" "$WORK/backup.js-backup-ok.out"
  fi
  expect_script_failure backup.js backup-refused "stays incomplete" \
    "backup.js: a 202 with a member refused fails at once (the backup stays incomplete)" mock-token NODES=@NODES@
  expect_script_failure backup.js backup-stuck "not complete after 1s" \
    "backup.js: a backup not complete within TIMEOUT_SECONDS fails" mock-token NODES=@NODES@ TIMEOUT_SECONDS=1
  expect_script_failure backup.js backup-own-failed "snapshot of .* failed" \
    "backup.js: the asked node's own snapshot failing fails" mock-token NODES=@NODES@
  expect_script_failure backup.js backup-none "no node began a backup" \
    "backup.js: no node answering 202 (no backup store: 409) fails, after asking every node" mock-token NODES=@NODES@
  expect_script_failure backup.js backup-ok "401" \
    "backup.js: sends the token (without it, 401 everywhere, and it fails)" "" NODES=@NODES@
}

check_restore_script() {
  local name body urls='STATUS_URLS=@URL@/n0,@URL@/n1' mgmt='MANAGEMENT_URL=@URL@/n0' from=FROM=2026-11-29T16-31-05Z
  name="restore.js: waits for GET /v0/status 200 from every node, POSTs {from, asOf} to node 0, follows it there, logs the records, done: exits 0"
  if run_backup_script restore.js restore-ok mock-token "$urls" "$mgmt" "$from" AS_OF=2026-11-29T12:00:00Z \
      && grep -q 'PASS' "$WORK/restore.js-restore-ok.out" \
      && [ "$(mock_requests restore.js-restore-ok GET /v0/status | tr ' ' '\n' | sort | uniq -c | awk '$1 >= 3 {print $2}' | xargs)" = "n0 n1" ] \
      && [ "$(mock_requests restore.js-restore-ok POST /actuator/restore)" = "n0" ] \
      && [ "$(mock_requests restore.js-restore-ok GET /actuator/restore | tr ' ' '\n' | sort -u | xargs)" = "n0" ] \
      && grep -q 'stream, 1000 records' "$WORK/restore.js-restore-ok.out" \
      && grep -q 'done, 2000 records' "$WORK/restore.js-restore-ok.out"; then
    pass "$name"
  else
    fail "$name" "$WORK/restore.js-restore-ok.out"
  fi
  body=$(mock_bodies restore.js-restore-ok POST /actuator/restore)
  name="restore.js: the POST body is {\"from\": FROM, \"asOf\": AS_OF}"
  if [ "$body" = '{"from": "2026-11-29T16-31-05Z", "asOf": "2026-11-29T12:00:00Z"}' ]; then pass "$name"; else fail "$name ($body)"; fi
  run_backup_script restore.js restore-ok mock-token "$urls" "$mgmt" "$from" AS_OF= || true
  body=$(mock_bodies restore.js-restore-ok POST /actuator/restore)
  name="restore.js: without AS_OF the POST body is {\"from\": FROM} alone"
  if [ "$body" = '{"from": "2026-11-29T16-31-05Z"}' ]; then pass "$name"; else fail "$name ($body)"; fi
  expect_script_success restore-under-way 1 "restore.js: a 409 'under way' is followed, not an error; done: exits 0" \
    "$urls" "$mgmt" "$from"
  expect_script_success restore-retry 2 "restore.js: a restore that ends failed is asked for again; done: exits 0" \
    "$urls" "$mgmt" "$from"
  expect_script_success restore-lost 2 "restore.js: a restore node 0 lost (it restarted) is asked for again; done: exits 0" \
    "$urls" "$mgmt" "$from"
  expect_script_failure restore.js restore-failing "failed 2 times" \
    "restore.js: failed, asked again, failed again: exits non-zero after ATTEMPTS=2" mock-token "$urls" "$mgmt" "$from" ATTEMPTS=2
  name="restore.js: ... having POSTed exactly twice"
  if [ "$(mock_requests restore.js-restore-failing POST /actuator/restore)" = "n0 n0" ]; then pass "$name"; else fail "$name"; fi
  expect_script_failure restore.js restore-refused "refused: 400" \
    "restore.js: a backup refused (400: incomplete) fails at once, unasked again" mock-token "$urls" "$mgmt" "$from"
  expect_script_failure restore.js restore-ok "still not there after 1s" \
    "restore.js: a node that never answers GET /v0/status 200 fails it at DEADLINE_SECONDS" mock-token \
    'STATUS_URLS=@URL@/n0,@URL@/down1' "$mgmt" "$from" DEADLINE_SECONDS=1
}

# expect_script_success MODE POSTS NAME ENV...: restore.js against the mock in MODE exits 0 after POSTS POSTs.
expect_script_success() {
  local mode=$1 posts=$2 name=$3; shift 3
  if run_backup_script restore.js "$mode" mock-token "$@" && grep -q 'PASS' "$WORK/restore.js-$mode.out" \
      && [ "$(mock_requests "restore.js-$mode" POST /actuator/restore | wc -w)" = "$posts" ]; then
    pass "$name"
  else
    fail "$name" "$WORK/restore.js-$mode.out"
  fi
}

# expect_script_failure SCRIPT MODE REGEX NAME TOKEN ENV...: the script exits non-zero, saying REGEX.
expect_script_failure() {
  local script=$1 mode=$2 regex=$3 name=$4; shift 4
  if run_backup_script "$script" "$mode" "$@"; then
    fail "$name (exit code 0)" "$WORK/$script-$mode.out"
  elif grep -Eq -- "$regex" "$WORK/$script-$mode.out"; then
    pass "$name"
  else
    fail "$name (failed, but not with /$regex/)" "$WORK/$script-$mode.out"
  fi
}

# scripts_dir SCRIPT: where check_backup_scripts put SCRIPT's pod's /scripts.
scripts_dir() { printf '%s/scripts-%s' "$WORK" "${1%.js}"; }

# run_backup_script SCRIPT MODE TOKEN ENV...: runs SCRIPT in scripts_dir with k6 against the mock in MODE, polling every
# 0.1s; in ENV, @URL@ is the mock's URL and @NODES@ backup_nodes. $WORK/SCRIPT-MODE.out holds k6's output,
# $WORK/SCRIPT-MODE.log the mock's requests. Returns k6's exit code.
run_backup_script() {
  local script=$1 mode=$2 token=$3 rc=0 arg env=(); shift 3
  start_actuator_mock "$mode" "$WORK/$script-$mode.log"
  for arg in "$@"; do arg=${arg//@NODES@/$(backup_nodes)}; env+=("${arg//@URL@/$MOCK_URL}"); done
  env -i HOME="$WORK" RINGKV_TOKEN="$token" K6_NO_USAGE_REPORT=true POLL_SECONDS=0.1 "${env[@]}" \
    "$K6_BIN" run --quiet --no-color "$(scripts_dir "$script")/$script" >"$WORK/$script-$mode.out" 2>&1 || rc=$?
  stop_mock
  return "$rc"
}

# start_actuator_mock MODE LOG: the mock of the nodes in MODE, on a free port, logging to LOG (emptied);
# sets MOCK_PID and MOCK_URL (stop it with hook-script.sh's stop_mock).
start_actuator_mock() {
  rm -f "$WORK/mock.port" "$2"
  "$PYTHON" "$CHECKS/mock_actuator.py" "$1" "$WORK/mock.port" "$2" &
  MOCK_PID=$!
  for _ in $(seq 1 50); do [ -s "$WORK/mock.port" ] && break; sleep 0.1; done
  MOCK_URL="http://127.0.0.1:$(cat "$WORK/mock.port")"
}

# mock_requests NAME METHOD PATH: the nodes asked METHOD PATH in run NAME, in order, space-separated.
mock_requests() {
  "$PYTHON" -c 'import json, sys
print(" ".join(r["node"] for r in map(json.loads, open(sys.argv[1])) if (r["method"], r["path"]) == (sys.argv[2], sys.argv[3])))' \
    "$WORK/$1.log" "$2" "$3" 2>/dev/null
}

# mock_bodies NAME METHOD PATH: the JSON bodies of those requests, normalised, one a line.
mock_bodies() {
  "$PYTHON" -c 'import json, sys
for r in map(json.loads, open(sys.argv[1])):
    if (r["method"], r["path"]) == (sys.argv[2], sys.argv[3]):
        print(json.dumps(json.loads(r["body"])))' "$WORK/$1.log" "$2" "$3" 2>/dev/null
}
