#!/usr/bin/env bash
# How fast a cluster is backed up and restored, and what a backup costs the clients meanwhile. The
# steps, on three fresh nodes (replicas 2/3, as loadtest/ycsb.sh starts them) and a SeaweedFS S3
# server (bin/s3-server) on loopback:
#   1. load KEYS records of VALUE_BYTES random bytes (loadtest/wrk/bulk.lua), SETTLE seconds;
#   2. YCSB's workload B paced to half of its saturation rate (as loadtest/rebuild.sh paces it) for
#      DURATION seconds: the quiet p99;
#   3. the same paced B while POST /actuator/backup backs the cluster up, until every node has
#      stored its snapshot: the backup's MB/s (bytes the nodes uploaded, over the time until it was
#      complete) and B's p99 meanwhile;
#   4. the nodes stopped, three fresh ones started, POST /actuator/restore on the first until it is
#      done: the restore's records/s and MB/s of snapshots streamed.
# Prints and writes loadtest/results/<stamp>-backup/report.md.
#
#   loadtest/backup.sh                               1,000,000 records, about 1 GB per node (~15 min)
#   KEYS=100000 DURATION=20 loadtest/backup.sh       a smoke run
#
# Settings (environment): KEYS (1000000), VALUE_BYTES (1000), CONNECTIONS (16 per wrk process,
# three processes), PROBE (30), CALIBRATE (20), DURATION (60), SETTLE (30), NODE_HEAP (256m),
# NODE_ARGS (more settings for every node, e.g. "--ringkv.backup.rate=64MB"), PORT_BASE (19380;
# the S3 server takes PORT_BASE+10..+17), JAR, KEEP_DATA (0), TIMEOUT (10s, wrk's), LOAD_LIMIT (1h),
# BACKUP_LIMIT and RESTORE_LIMIT (1800 seconds each).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
LOG_NAME=backup
. bin/lib/common.sh
. loadtest/lib/targets.sh # start_server, stop_all, rss_sampler, apt_install
. loadtest/lib/jar.sh     # find_jar, random_secret
. loadtest/lib/bulk.sh    # begin_run, load_fresh_cluster, start_ringkv_nodes, merged_percentiles
. loadtest/lib/ycsb.sh    # ycsb_start, ycsb_interrupt, ycsb_collect, ycsb_half_saturation

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

KEYS=${KEYS:-1000000} VALUE_BYTES=${VALUE_BYTES:-1000} CONNECTIONS=${CONNECTIONS:-16} PROBE=${PROBE:-30} CALIBRATE=${CALIBRATE:-20}
DURATION=${DURATION:-60} SETTLE=${SETTLE:-30} NODE_HEAP=${NODE_HEAP:-256m} NODE_ARGS=${NODE_ARGS:-}
PORT_BASE=${PORT_BASE:-19380} JAR=${JAR:-} KEEP_DATA=${KEEP_DATA:-0} TIMEOUT=${TIMEOUT:-10s}
LOAD_LIMIT=${LOAD_LIMIT:-1h} BACKUP_LIMIT=${BACKUP_LIMIT:-1800} RESTORE_LIMIT=${RESTORE_LIMIT:-1800}
REPLICAS=2/3 DISTRIBUTION=zipfian ZIPF_THETA=0.99 SCAN_MAX=100
for v in KEYS VALUE_BYTES CONNECTIONS PROBE CALIBRATE DURATION SETTLE PORT_BASE BACKUP_LIMIT RESTORE_LIMIT; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not \"${!v}\""
done
((KEYS >= 100 && PROBE >= 1 && CALIBRATE >= 1 && DURATION >= 1 && CONNECTIONS >= 1)) ||
  die "KEYS must be at least 100; PROBE, CALIBRATE, DURATION, CONNECTIONS at least 1"

step() { log "$*"; }
begin_run backup
find_jar "$data_dir"
apt_install wrk wrk "the benchmark's client"
ports=("$PORT_BASE" "$((PORT_BASE + 1))" "$((PORT_BASE + 2))")
s3_port=$((PORT_BASE + 10))
for port in "${ports[@]}" "$s3_port"; do port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"; done
secret=$(random_secret)

step "the S3 server (SeaweedFS) on 127.0.0.1:$s3_port"
s3_dir=$data_dir/s3
mkdir -p "$s3_dir"
s3_endpoint=$(bin/s3-server start "$s3_dir" "$s3_port")
stop_s3() { bin/s3-server stop "$s3_dir" >/dev/null 2>&1 || true; }
trap 'rc=$?; stop_s3; (exit $rc); end_run' EXIT
export AWS_ACCESS_KEY_ID=ringkv AWS_SECRET_ACCESS_KEY=ringkv-secret
s3() { curl -fsS --aws-sigv4 "aws:amz:us-east-1:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" "$@"; }
s3 -X PUT "$s3_endpoint/ringkv" -o /dev/null
read -ra node_args <<<"--ringkv.backup.target=s3://ringkv/bench --ringkv.backup.endpoint=$s3_endpoint $NODE_ARGS"
rss_sampler & sampler_pid=$!

load_fresh_cluster "${ports[@]}"

ycsb_half_saturation "$REPLICAS" "${urls[@]}"
step "workload b, paced, for $DURATION s: quiet"
THINK_MS=$think_ms ycsb_start quiet ringkv "$REPLICAS" b "$DURATION" "${urls[@]}"
ycsb_collect
quiet_rate=$(awk -v n="$ops" -v s="$DURATION" 'BEGIN { printf "%.0f", n / s }') quiet_p99=$p99 quiet_p50=$p50 quiet_bad=$not2xx

# A field of a node's JSON answer (python3: the answers are nested).
json_field() { # url path expression
  curl -fsS --max-time 30 "$1$2" | python3 -c "import json, sys; d = json.load(sys.stdin); print($3)"
}

step "the cluster backed up under workload b, paced"
THINK_MS=$think_ms ycsb_start during ringkv "$REPLICAS" b "$BACKUP_LIMIT" "${urls[@]}"
started=$(date +%s%N)
backup_id=$(curl -fsS -X POST --max-time 120 "${urls[0]}/actuator/backup" | python3 -c 'import json, sys; d = json.load(sys.stdin); assert not d["refused"], d; print(d["id"])')
until [ "$(json_field "${urls[0]}" /actuator/backup "any(b['id'] == '$backup_id' and b['complete'] for b in d['backups'])")" = True ]; do
  (($(date +%s%N) - started < BACKUP_LIMIT * 1000000000)) || { ycsb_interrupt; die "backup $backup_id not complete within $BACKUP_LIMIT s"; }
  sleep 0.5
done
backup_s=$(awk -v ns=$(($(date +%s%N) - started)) 'BEGIN { printf "%.1f", ns / 1e9 }')
ycsb_interrupt
ycsb_collect
during_rate=$(awk -v n="$ops" -v s="$backup_s" 'BEGIN { printf "%.0f", n / s }')
ratio=$(awk -v d="$p99" -v q="$quiet_p99" 'BEGIN { printf "%.2f", (q > 0 ? d / q : 0) }')
uploaded=0
for url in "${urls[@]}"; do
  uploaded=$((uploaded + $(json_field "$url" /actuator/backup "d['thisNode']['bytesDone']")))
done
backup_mb_s=$(awk -v b="$uploaded" -v s="$backup_s" 'BEGIN { printf "%.1f", b / 1e6 / s }')
log "backup $backup_id complete in $backup_s s: $(mib "$uploaded") MiB uploaded, $backup_mb_s MB/s; B's p99 $p99 ms (quiet $quiet_p99)"

step "the cluster stopped; three fresh nodes restore backup $backup_id"
stop_all
ports=("$((PORT_BASE + 3))" "$((PORT_BASE + 4))" "$((PORT_BASE + 5))")
start_ringkv_nodes restored "${ports[@]}"
started=$(date +%s%N)
curl -fsS -X POST --max-time 120 -H 'Content-Type: application/json' -d "{\"from\":\"$backup_id\"}" "${urls[0]}/actuator/restore" >/dev/null
until [ "$(json_field "${urls[0]}" /actuator/restore "d['phase']")" = done ]; do
  phase=$(json_field "${urls[0]}" /actuator/restore "d['phase'] + ' ' + str(d['error'])")
  [ "${phase%% *}" != failed ] || die "the restore failed: $phase"
  (($(date +%s%N) - started < RESTORE_LIMIT * 1000000000)) || die "the restore was not done within $RESTORE_LIMIT s"
  sleep 1
done
restore_s=$(awk -v ns=$(($(date +%s%N) - started)) 'BEGIN { printf "%.1f", ns / 1e9 }')
read -r restored_records restored_bytes < <(json_field "${urls[0]}" /actuator/restore "str(d['records']) + ' ' + str(d['bytesTotal'])")
restore_mb_s=$(awk -v b="$restored_bytes" -v s="$restore_s" 'BEGIN { printf "%.1f", b / 1e6 / s }')
restore_rate=$(awk -v n="$restored_records" -v s="$restore_s" 'BEGIN { printf "%.0f", n / s }')
finished=1

{
  echo "# Backup and restore ($KEYS records of $VALUE_BYTES B, replicas $REPLICAS, three nodes)"
  echo
  echo "| | measured |"
  echo "| --- | --- |"
  echo "| backup under B: every node's snapshot stored | $(mib "$uploaded") MiB uploaded in $backup_s s: **$backup_mb_s MB/s** (the three nodes together) |"
  echo "| B saturated (closed loop) | $saturated ops/s |"
  echo "| B paced, quiet: ops/s, p50 / p99 ms, not 2xx | $quiet_rate, $quiet_p50 / $quiet_p99, $quiet_bad ($think_ms ms between requests) |"
  echo "| B paced, during the backup: ops/s, p50 / p99 ms, not 2xx | $during_rate, $p50 / $p99, $not2xx |"
  echo "| p99 during ÷ quiet | **$ratio×** |"
  echo "| restore into three fresh nodes, by one of them | $restored_records records, $(mib "$restored_bytes") MiB of snapshots in $restore_s s: **$restore_mb_s MB/s**, $restore_rate records/s |"
  echo
  echo "command: $(printf '%q ' env KEYS="$KEYS" VALUE_BYTES="$VALUE_BYTES" CONNECTIONS="$CONNECTIONS" PROBE="$PROBE" \
    DURATION="$DURATION" NODE_HEAP="$NODE_HEAP" ${NODE_ARGS:+NODE_ARGS="$NODE_ARGS"} loadtest/backup.sh); commit: $(git rev-parse --short HEAD)"
} >"$run_dir/report.md"
cat "$run_dir/report.md"
