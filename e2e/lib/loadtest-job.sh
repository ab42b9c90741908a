# shellcheck shell=bash
# Sourced by e2e/run.sh: the chart's k6 loadtest Job (loadtest.enabled) as steps 9 and 13 run it:
# the mixed scenario at 2/3 over 1000 keys, which its init container fills first.

LOADTEST_JOB=""  # the Job that enable_loadtest_job started

enable_loadtest_job() { # helm option...: what differs (rate, duration, thresholds, VUs); sets LOADTEST_JOB
  helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --wait --timeout 5m \
    --set loadtest.enabled=true \
    --set loadtest.image.repository="${K6_IMAGE%:*}" --set-string loadtest.image.tag="${K6_IMAGE##*:}" \
    --set loadtest.scenario=mixed --set-string loadtest.replicas=2/3 --set loadtest.keyspace=1000 \
    --set loadtest.fill=init --set-string loadtest.env.FILL_VUS=8 "$@" >/dev/null
  LOADTEST_JOB=$(k get jobs -l app.kubernetes.io/instance="$RELEASE",app.kubernetes.io/component=loadtest \
    -o jsonpath='{.items[*].metadata.name}')
  if [ -z "$LOADTEST_JOB" ] || [ "$LOADTEST_JOB" != "${LOADTEST_JOB%% *}" ]; then
    fail "expected one loadtest Job, found: '$LOADTEST_JOB'"
  fi
}

loadtest_job_status() { # TYPE -> True when the Job has that condition
  k get job "$LOADTEST_JOB" -o jsonpath="{.status.conditions[?(@.type==\"$1\")].status}" 2>/dev/null
}

wait_for_loadtest_job() { # seconds: until the Job completed or failed; fails the step after that long
  local deadline=$((SECONDS + $1))
  until k wait --for=condition=complete "job/$LOADTEST_JOB" --timeout=5s >/dev/null 2>&1; do
    [ "$(loadtest_job_status Failed)" != True ] || break
    [ $SECONDS -lt $deadline ] || fail "the loadtest Job neither completed nor failed within $1s"
  done
}

no_loadtest_objects() {
  [ -z "$(k get jobs,configmaps,pods -l app.kubernetes.io/component=loadtest -o name 2>/dev/null)" ]
}

# Off again: helm deletes the Job and the ConfigMap; the later steps see the nodes alone.
disable_loadtest_job() {
  helm upgrade "$RELEASE" helm/ringkv -n "$NAMESPACE" --reuse-values --set loadtest.enabled=false \
    --wait --timeout 5m >/dev/null
  eventually 60 no_loadtest_objects || fail "the loadtest Job, its pod or ConfigMap are still there after disabling it"
}
