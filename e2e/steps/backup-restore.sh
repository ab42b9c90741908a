# shellcheck shell=bash
# Sourced by e2e/run.sh: steps 11 and 12, a backup on the chart's schedule, the release and its
# volumes destroyed, and the backup restored into a release of another size in another namespace.
#
#   start_object_store         (before step 1) SeaweedFS's S3 gateway (bin/s3-server) on an address
#                              of this machine that pods reach (E2E_S3_IP, default kube-local's node
#                              address) and port E2E_S3_PORT (and the seven after it),
#                              with the bucket the releases back up to; stopped by on_exit
#   scheduled_backup_then_gone (11) backup.schedule set by helm upgrade to the next minute (the
#                              StatefulSet untouched): the CronJob's Job completes and names the
#                              backup; then helm uninstall and every PVC of the release deleted
#   restore_elsewhere          (12) a release named $RESTORED_RELEASE in a new namespace, with
#                              $RESTORED_REPLICAS replicas (not 3) in zones by ordinal (step 14's
#                              $ZONES_VALUE) and restore.from: installed
#                              with --wait-for-jobs (the restore Job succeeds); every key the write
#                              checker acknowledged in steps 7 and 8 reads back its newest version
#                              at 2/3 (a deleted one 404), each is on 3 of the new pods (census),
#                              step 5's keys and range are there, and /v0/cluster says the
#                              restore is done. The later steps run on this release.
#
# Every release backs up to the same place, s3://$S3_BUCKET/backups, with the store's credentials in
# the Secret $S3_SECRET of its namespace, as an operator would give them (backup.existingSecret).

S3_PORT=${E2E_S3_PORT:-18333}                # its S3 port; it also takes the seven after it
S3_BUCKET=ringkv-e2e
S3_SECRET=ringkv-e2e-s3
S3_ACCESS_KEY=ringkv S3_SECRET_KEY=ringkv-secret  # the identity bin/s3-server gives its server
S3_DIR=""       # SeaweedFS's data and log (removed by on_exit)
S3_ENDPOINT=""
BACKUP_VALUES=()  # the chart's settings for the store (helm options); the namespace must hold $S3_SECRET
RESTORED_RELEASE=ringkv-restored
RESTORED_REPLICAS=${E2E_RESTORED_REPLICAS:-6}
BACKUP_ID=""

start_object_store() {
  # Where SeaweedFS listens: pods must reach it (prepare_cluster has set kube-local's environment).
  local ip=${E2E_S3_IP:-${KUBE_LOCAL_NODE_IP:-}}
  [ -n "$ip" ] || fail "set E2E_S3_IP to an address of this machine that the cluster's pods reach (for the backup steps)"
  S3_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ringkv-e2e-s3.XXXXXX")
  S3_ENDPOINT=$(bin/s3-server start "$S3_DIR" "$S3_PORT" "$ip")
  # A bucket is made by a signed PUT, as on AWS (the store makes none on a first upload).
  curl -fsS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$S3_ACCESS_KEY:$S3_SECRET_KEY" -X PUT "$S3_ENDPOINT/$S3_BUCKET" >/dev/null \
    || fail "could not create bucket $S3_BUCKET on $S3_ENDPOINT"
  BACKUP_VALUES=(--set "backup.target=s3://$S3_BUCKET/backups" --set "backup.endpoint=$S3_ENDPOINT"
    --set "backup.existingSecret=$S3_SECRET")
  log "S3 (SeaweedFS) at $S3_ENDPOINT, bucket $S3_BUCKET"
}

stop_object_store() {
  [ -n "$S3_DIR" ] || return 0
  bin/s3-server stop "$S3_DIR" || echo "WARNING: bin/s3-server stop $S3_DIR failed" >&2
  rm -rf "$S3_DIR"
}

create_store_secret() { # namespace
  kubectl -n "$1" create secret generic "$S3_SECRET" \
    --from-literal=AWS_ACCESS_KEY_ID="$S3_ACCESS_KEY" --from-literal=AWS_SECRET_ACCESS_KEY="$S3_SECRET_KEY" >/dev/null
}

backup_job_done() { # sets BACKUP_JOB to the CronJob's Job once there is one; true once it ended
  BACKUP_JOB=$(k get jobs -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/component=backup \
    -o jsonpath='{.items[0].metadata.name}' 2>/dev/null || true)
  [ -n "$BACKUP_JOB" ] || return 1
  [ -n "$(k get job "$BACKUP_JOB" -o jsonpath='{.status.conditions[?(@.status=="True")].type}')" ]
}

scheduled_backup_then_gone() {
  local sts_generation at minute hour job_log pvcs
  sts_generation=$(statefulset_generation)
  # The next minute at least 10 s away (the upgrade takes 1-2), once (minute and hour, in UTC): one
  # backup, not one a minute.
  at=$(( ($(date +%s) + 10 + 59) / 60 * 60 ))
  minute=$(date -u -d "@$at" +%-M) hour=$(date -u -d "@$at" +%-H)
  helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --wait --timeout 2m \
    --set-string backup.schedule="$minute $hour * * *" --set backup.timeZone=Etc/UTC >/dev/null
  [ "$(statefulset_generation)" = "$sts_generation" ] || fail "setting backup.schedule changed the StatefulSet"
  log "backup.schedule \"$minute $hour * * *\" (UTC): the CronJob is due in $((at - $(date +%s)))s; the StatefulSet was not touched"

  BACKUP_JOB=""
  eventually $((at - $(date +%s) + 120)) backup_job_done \
    || fail "the CronJob's Job ${BACKUP_JOB:-(none started)} did not end within 2 minutes of its schedule"
  job_log=$(k logs "job/$BACKUP_JOB" 2>&1 || true)
  printf '%s\n' "$job_log" | grep -E 'POST|is complete|FAIL|level=error' | cut -c1-300 | sed 's/^/    /' || true
  [ "$(k get job "$BACKUP_JOB" -o jsonpath='{.status.conditions[?(@.type=="Complete")].status}')" = True ] \
    || fail "the backup Job $BACKUP_JOB failed"
  BACKUP_ID=$(printf '%s\n' "$job_log" | sed -n 's/.*backup \([0-9T:Z-]*\) is complete.*/\1/p' | head -n 1)
  [ -n "$BACKUP_ID" ] || fail "the backup Job's log names no complete backup"
  log "the CronJob's Job $BACKUP_JOB completed: backup $BACKUP_ID is complete in s3://$S3_BUCKET/backups"

  # Gone: the release, then its volumes (the 3 pods' and the 2 that steps 7 and 8 kept on scale-down).
  pvcs=$(k get pvc -l app.kubernetes.io/instance="$RELEASE" -o name)
  [ "$(grep -c . <<<"$pvcs")" -ge 3 ] || fail "the release has fewer than 3 PVCs: $pvcs"
  helm uninstall "$RELEASE" -n "$NAMESPACE" --wait --timeout 2m >/dev/null
  # shellcheck disable=SC2086 # one name a word
  k delete --wait=true --timeout=2m $pvcs >/dev/null || fail "the PVCs were not deleted: $pvcs"
  # The nodes stop gracefully, and the garbage collector removes the backup Job's pod after its
  # CronJob: both take a few seconds after helm has returned.
  eventually 120 release_gone \
    || fail "pods or PVCs of the release are left: $(left_of_release | xargs)"
  log "helm uninstall; its $(grep -c . <<<"$pvcs") PVCs deleted, its pods gone"
}

left_of_release() { # the release's pods and PVCs
  # But the pod of step 4's helm test: a hook, which Helm leaves on uninstall by design (the chart
  # keeps it until the next test, for `helm test --logs`); it holds no data.
  k get pods,pvc -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/component!=test -o name
}

release_gone() { # no pod and no PVC of the release is left
  [ -z "$(left_of_release)" ]
}

restore_elsewhere() {
  local installing view range
  NAMESPACE=$NAMESPACE-restored
  RELEASE=$RESTORED_RELEASE
  kubectl create namespace "$NAMESPACE" >/dev/null
  NAMESPACES_CREATED+=("$NAMESPACE")
  create_store_secret "$NAMESPACE"
  # helm waits for the pods to be Ready and the restore Job to succeed; meanwhile a pod the scheduler
  # forgot (lib/cluster.sh) is replaced.
  install_chart "$RESTORED_REPLICAS" --wait --wait-for-jobs --timeout 5m --set restore.from="$BACKUP_ID" \
    --set "cluster.zones.byOrdinal=$ZONES_VALUE" &
  installing=$!
  BG_PIDS+=("$installing")
  while kill -0 "$installing" 2>/dev/null; do
    sleep 5
    replace_pods_stuck_on_bound_claims
  done
  wait "$installing" || fail "helm install with restore.from=$BACKUP_ID did not end with the pods Ready and the restore Job succeeded"
  k logs -l app.kubernetes.io/component=restore --tail=-1 2>/dev/null | sed -n 's/.*msg="\(\(all\|attempt\|restore of\) .*\)" source=console$/\1/p' \
    | cut -c1-300 | sed 's/^/    restore Job: /' || true
  log "release $RELEASE in namespace $NAMESPACE, $RESTORED_REPLICAS pods, restore.from=$BACKUP_ID: the restore Job succeeded"
  load_credentials
  eventually 60 all_pods_see "$RESTORED_REPLICAS" normal || fail "the restored pods do not agree: $LAST_VIEW"

  forward "pod/$RELEASE-0"
  view=$(rcurl -fs "$BASE/v0/cluster" | python3 -c 'import json, sys; r = json.load(sys.stdin)["restore"] or {}; print(r.get("job"), r.get("phase"), r.get("records"))')
  [ "${view% *}" = "$BACKUP_ID done" ] || fail "GET /v0/cluster on $RELEASE-0 says of the restore: $view"
  range=$(rcurl -fs "$BASE/v0/entities?start=e2e-&end=e2e-9" | tr '\n' ' ')
  [ "$range" = "e2e-1 value-1-3/3e2e-2 value-2-3/3e2e-3 value-3-3/3" ] || fail "step 5's range, restored: $range"
  stop_forwards
  log "/v0/cluster on $RELEASE-0: restore of $BACKUP_ID done, ${view##* } records streamed; step 5's range is back"
  check_and_census "$RESTORED_REPLICAS"
}
