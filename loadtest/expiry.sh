#!/usr/bin/env bash
# Disk space returned by expiry: KEYS distinct keys of VALUE_BYTES, each written once with a ttl of
# TTL at replicas 2/3 into a fresh three-node cluster (loadtest/wrk/bulk.lua, three wrk processes,
# as loadtest/bulk-load.sh), then nothing: the values expire, compaction drops them (RocksDB's
# Cassandra filter, on files older than ringkv.storage.expired-compaction-interval), and the purge
# drops what is left of them once ringkv.storage.tombstone-grace-period has passed after their
# expiry (and a repair since). Measured every POLL seconds: each node's store on disk (du -sb of its
# data directory, RocksDB's own text log LOG* apart: it is the node's log, not its data), against
# the same store empty, before the load; the run ends once every store is within 10 % of its empty
# size (PASS), or after WAIT_LIMIT seconds (FAIL). Writes loadtest/results/<stamp>-expiry/summary.md.
#
#   loadtest/expiry.sh                               the issue's proof: 1,000,000 keys of 1000 B, ttl 1 min
#   KEYS=30000 loadtest/expiry.sh                    a smoke run (about 6 minutes)
#
# Settings (environment):
#   KEYS             1000000   distinct keys, each written once
#   VALUE_BYTES      1000      bytes per value, random (incompressible)
#   TTL              60s       every value's ttl
#   GRACE            1m        ringkv.storage.tombstone-grace-period (the default, 24h, is what keeps a
#                              replica that was away from bringing values back; short here to see
#                              the end within the run); ringkv.repair.interval is half of it
#   COMPACT_AFTER    2m        ringkv.storage.expired-compaction-interval (default 6h)
#   POLL             10        seconds between measures
#   WAIT_LIMIT       1800      seconds after the load before the run gives up
#   CONNECTIONS 16, NODE_HEAP 256m, PORT_BASE 19080, JAR, KEEP_DATA 0, TIMEOUT 10s, LOAD_LIMIT 2h: as bulk-load.sh
# wrk is Debian's package, installed with apt-get when missing (as root). Only loopback is targeted.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
LOG_NAME=expiry
. bin/lib/common.sh
. loadtest/lib/targets.sh # start_server, stop_all, rss_sampler, apt_install
. loadtest/lib/jar.sh     # find_jar, random_secret
. loadtest/lib/bulk.sh    # begin_run, start_ringkv_nodes, load, tally, mib

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

KEYS=${KEYS:-1000000} VALUE_BYTES=${VALUE_BYTES:-1000} TTL=${TTL:-60s} GRACE=${GRACE:-1m} COMPACT_AFTER=${COMPACT_AFTER:-2m}
POLL=${POLL:-10} WAIT_LIMIT=${WAIT_LIMIT:-1800} CONNECTIONS=${CONNECTIONS:-16} NODE_HEAP=${NODE_HEAP:-256m}
PORT_BASE=${PORT_BASE:-19080} JAR=${JAR:-} KEEP_DATA=${KEEP_DATA:-0} TIMEOUT=${TIMEOUT:-10s} LOAD_LIMIT=${LOAD_LIMIT:-2h}
REPLICAS=2/3
readonly MAX_RATIO=1.10 KEY_BYTES=11
for v in KEYS VALUE_BYTES CONNECTIONS POLL WAIT_LIMIT PORT_BASE; do [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not \"${!v}\""; done
[[ $GRACE =~ ^[0-9]+[smh]$ ]] || die "GRACE must be a number with s, m or h, not \"$GRACE\""
export TTL

step() { log "$*"; }
begin_run expiry
find_jar "$data_dir"
apt_install wrk wrk "the load's client"
ports=("$PORT_BASE" "$((PORT_BASE + 1))" "$((PORT_BASE + 2))")
for port in "${ports[@]}"; do port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"; done
secret=$(random_secret)
case ${GRACE: -1} in s) unit=1 ;; m) unit=60 ;; h) unit=3600 ;; esac
grace_seconds=$((${GRACE%?} * unit))
node_args=(--ringkv.storage.tombstone-grace-period="$GRACE" --ringkv.repair.interval="$((grace_seconds / 2))s"
  --ringkv.storage.expired-compaction-interval="$COMPACT_AFTER")

# Each node's store on disk, RocksDB's text log apart: sets sizes (bytes, the nodes' order) and text (MiB).
stores() {
  local dir logs
  sizes=() text=""
  for dir in "${dirs[@]}"; do
    logs=$(find "$dir" -maxdepth 1 -type f -name 'LOG*' -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
    sizes+=($(($(du -sb "$dir" | cut -f1) - logs)))
    text+="${text:+, }$(awk -v b="${sizes[-1]}" 'BEGIN { printf "%.1f", b / 1048576 }')"
  done
}

step "three fresh ringkv nodes on 127.0.0.1:${ports[0]}..${ports[2]}: ${node_args[*]}"
start_ringkv_nodes expiry "${ports[@]}" # sets urls, dirs, logs
sleep 5
stores
empty=("${sizes[@]}") empty_text=$text
log "the stores empty, MiB: $empty_text"

step "loading $KEYS keys of $VALUE_BYTES B with ttl=$TTL (3 wrk x $CONNECTIONS connections)"
load expiry ringkv "${urls[@]}"
tally expiry 201
loaded_at=$(date +%s)
stores
loaded_text=$text
log "loaded in $load_seconds s; not 201: $bad_codes; socket errors: $sock; p50 $p50 ms, p99 $p99 ms; stores, MiB: $loaded_text"

# The timeline: every POLL s, the stores and what the purge counted, until all are back or the limit.
timeline=() back_after="" dropped=0
while :; do
  sleep "$POLL"
  stores
  elapsed=$(($(date +%s) - loaded_at))
  dropped=0
  for url in "${urls[@]}"; do
    n=$(curl -sf "$url/actuator/prometheus" | awk '/^ringkv_expired_dropped_total/ { s += $2 } END { printf "%d", s }')
    dropped=$((dropped + ${n:-0}))
  done
  within=1 ratios=""
  for i in "${!sizes[@]}"; do
    ratio=$(awk -v s="${sizes[$i]}" -v e="${empty[$i]}" 'BEGIN { printf "%.2f", s / e }')
    ratios+="${ratios:+, }$ratio"
    awk -v r="$ratio" -v m="$MAX_RATIO" 'BEGIN { exit !(r <= m) }' || within=0
  done
  timeline+=("| $elapsed | $text | $ratios | $dropped |")
  log "+${elapsed}s after the load: stores MiB $text (÷ empty: $ratios); ringkv_expired_dropped_total (3 nodes): $dropped"
  if [ "$within" = 1 ]; then back_after=$elapsed; break; fi
  [ "$elapsed" -lt "$WAIT_LIMIT" ] || break
done

{
  echo "# Expiry: $KEYS keys of $VALUE_BYTES B, ttl=$TTL, grace $GRACE, expired-compaction-interval $COMPACT_AFTER"
  echo
  echo "- the stores empty (MiB per node, RocksDB's LOG apart): $empty_text"
  echo "- load: $load_seconds s, not 201: $bad_codes, socket errors: $sock, p50 $p50 ms, p99 $p99 ms"
  echo "- the stores right after the load: $loaded_text MiB"
  if [ -n "$back_after" ]; then
    echo "- **PASS**: every store within 10 % of its empty size $back_after s after the load ended"
  else
    echo "- **FAIL**: not every store within 10 % of its empty size $WAIT_LIMIT s after the load"
  fi
  echo
  echo "| seconds after the load | stores MiB | ÷ empty | expired values dropped for good (ringkv_expired_dropped_total, 3 nodes) |"
  echo "|--:|---|---|--:|"
  printf '%s\n' "${timeline[@]}"
  echo
  command=$(printf '%q ' env KEYS="$KEYS" VALUE_BYTES="$VALUE_BYTES" TTL="$TTL" GRACE="$GRACE" COMPACT_AFTER="$COMPACT_AFTER" \
    NODE_HEAP="$NODE_HEAP" ${JAR:+JAR="$JAR"} loadtest/expiry.sh)
  echo "command: \`${command% }\`"
  echo
  echo "machine: $(uname -srm), $(nproc) cores; commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "results: ${run_dir#"$repo"/}"
} >"$run_dir/summary.md"
step "summary: ${run_dir#"$repo"/}/summary.md"
cat "$run_dir/summary.md"
finished=1
[ -n "$back_after" ]
