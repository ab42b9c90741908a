#!/usr/bin/env bash
# The bulk-load benchmark: KEYS distinct keys of VALUE_BYTES, each written exactly once with replicas
# 2/3, into a fresh three-node ringkv cluster, then the same keys with the same client into a fresh
# three-member etcd (run.sh's: Raft, fsync per write), one after the other on loopback. The client:
# three wrk processes (-t1 -c$CONNECTIONS), one per node, each writing its own third of the keys
# (loadtest/wrk/bulk.lua). Measured: keys/s (KEYS / the load's wall time), p50/p99 (the three wrk
# histograms merged), every answer not 201 (etcd: 200) by status, socket errors, each server's peak
# RSS (VmRSS every second from the load's start to the stop), its data dir (du -sb, WAL apart:
# RocksDB's *.log, etcd's member/wal) after the load and after SETTLE seconds against the logical
# data, KEYS x (VALUE_BYTES + 11 B of key) per server (RF 3 on 3 nodes), and the trouble lines in
# the ringkv logs. Writes loadtest/results/<stamp>-bulk/summary.md (printed at the end), with the
# wrk outputs, logs and rss.tsv beside it.
#
#   loadtest/bulk-load.sh                         the issue's proof: 1,000,000 keys of 1000 B
#   KEYS=30000 SETTLE=5 loadtest/bulk-load.sh      a smoke run (about 3 minutes)
#   JAR=/tmp/ringkv.jar TARGETS=ringkv FAIL_ON=0 loadtest/bulk-load.sh
#
# Settings (environment):
#   KEYS         1000000        distinct keys (k0000000000 ...), each written once
#   VALUE_BYTES  1000           bytes per value, random (a pool of 256 per wrk thread, taken in turn)
#   REPLICAS     2/3            replicas of every ringkv PUT
#   CONNECTIONS  16             connections per wrk process; three processes, one per node
#   TARGETS      "ringkv etcd"  in this order, each started fresh, loaded, measured and stopped
#   SETTLE       60             seconds after the load before the disk is measured again
#   NODE_HEAP    256m           ringkv nodes: bin/node --heap (the chart's JVM flags, direct memory 1/4)
#   PORT_BASE    19080          ringkv on PORT_BASE..+2; etcd clients on +20..+22, peers on +30..+32
#   JAR          unset          run that ringkv jar; otherwise service/target/ringkv.jar, built when
#                               missing or older than the sources
#   KEEP_DATA    0              1: keep the data dirs (<run folder>/data) after the run
#   FAIL_ON      1              exit 1 when ringkv misses the issue's bar: an answer not 201 or a socket
#                               error, a trouble line in a log, a node's peak RSS over 768 MiB (the
#                               chart's memory limit), disk after SETTLE over 1.3 x the logical data;
#                               0: only report
#   TIMEOUT      10s            wrk's --timeout: a slower answer counts as a timeout
#   LOAD_LIMIT   2h             wrk's -d: a load still running then is cut short (its keys are missing)
# wrk and etcd are Debian's packages (wrk, etcd-server), installed with apt-get when missing (as
# root). Only loopback addresses are ever targeted.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
LOG_NAME=bulk-load
. bin/lib/common.sh
. loadtest/lib/targets.sh # start_server, stop_all, rss_sampler, start_etcd, apt_install
. loadtest/lib/jar.sh     # find_jar, random_secret
. loadtest/lib/bulk.sh    # begin_run, start_ringkv_nodes, load, tally, disks, peaks, mib

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

KEYS=${KEYS:-1000000} VALUE_BYTES=${VALUE_BYTES:-1000} REPLICAS=${REPLICAS:-2/3}
CONNECTIONS=${CONNECTIONS:-16} TARGETS=${TARGETS:-"ringkv etcd"} SETTLE=${SETTLE:-60}
NODE_HEAP=${NODE_HEAP:-256m} PORT_BASE=${PORT_BASE:-19080} JAR=${JAR:-} KEEP_DATA=${KEEP_DATA:-0}
FAIL_ON=${FAIL_ON:-1} TIMEOUT=${TIMEOUT:-10s} LOAD_LIMIT=${LOAD_LIMIT:-2h}
readonly MEMORY_LIMIT_MIB=768 MAX_DISK_RATIO=1.3 KEY_BYTES=11
readonly TROUBLE=("hints are dropped" "full repair" "OVERLOADED" "too many requests in progress" "Not Enough Replicas" "ERROR")
for v in KEYS VALUE_BYTES CONNECTIONS SETTLE PORT_BASE; do [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not \"${!v}\""; done
((KEYS >= 1 && KEYS <= 9999999999)) || die "KEYS must be 1..9999999999 (keys are k + 10 digits)"
[ "$CONNECTIONS" -ge 1 ] || die "CONNECTIONS must be at least 1"
for t in $TARGETS; do case $t in ringkv | etcd) ;; *) die "unknown target \"$t\" in TARGETS: ringkv, etcd" ;; esac; done
[ -n "${TARGETS// /}" ] || die "TARGETS is empty"
case " $TARGETS " in *" ringkv "*) with_ringkv=1 ;; *) with_ringkv=0 ;; esac

step() { log "$*"; }
begin_run bulk # stamp, run_dir, data_dir; everything started from here on is stopped on exit

# ---- tools, ports -------------------------------------------------------------------------------------
[ "$with_ringkv" = 0 ] || find_jar "$data_dir" # sets jar and node_jar
apt_install wrk wrk "the load's client"
case " $TARGETS " in *" etcd "*) apt_install etcd etcd-server "or leave etcd out of TARGETS" ;; esac

ringkv_ports=("$PORT_BASE" "$((PORT_BASE + 1))" "$((PORT_BASE + 2))")
etcd_ports "$PORT_BASE"
for port in "${ringkv_ports[@]}" "${etcd_client_ports[@]}" "${etcd_peer_ports[@]}"; do
  port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"
done
secret=$(random_secret)
logical=$((KEYS * (VALUE_BYTES + KEY_BYTES)))

rss_sampler & sampler_pid=$!

# One target, already started: the load, the disk, SETTLE, the disk again, peaks; one table row.
measure() { # target kind ok-status label data-dir... -- url url url
  local target=$1 kind=$2 ok=$3 label=$4 since dirs=() after_load load_ratio; shift 4
  while [ "$1" != -- ]; do dirs+=("$1"); shift; done; shift
  since=$(date +%s)
  step "$target: loading $KEYS keys of $VALUE_BYTES B (3 wrk x $CONNECTIONS connections)"
  load "$kind" "$kind" "$@"
  tally "$kind" "$ok"
  keys_per_s=$(awk -v k="$KEYS" -v s="$load_seconds" 'BEGIN { printf "%.0f", k / s }')
  log "$target: $KEYS keys ($answered answered) in $load_seconds s = $keys_per_s keys/s; not $ok: $bad_codes; socket errors: $sock; p50 $p50 ms, p99 $p99 ms"
  disks "$kind" "${dirs[@]}"
  after_load=$disk_text load_ratio=$max_ratio
  log "$target: disk MiB per server, total (WAL), right after the load: $after_load"
  step "$target: settling for $SETTLE s"
  sleep "$SETTLE"
  disks "$kind" "${dirs[@]}"
  peaks "$since"
  log "$target: disk after $SETTLE s: $disk_text; peak RSS MiB: $rss_text"
  row="| $label | $KEYS | $load_seconds | **$keys_per_s** | $bad_codes | $sock | $p50 / $p99 | $rss_text | $after_load | $disk_text | $load_ratio / $max_ratio"
}

rows=() failures=() trouble_detail=""
for target in $TARGETS; do
  if [ "$target" = ringkv ]; then
    step "ringkv: three fresh nodes on 127.0.0.1:${ringkv_ports[0]}..${ringkv_ports[2]}"
    start_ringkv_nodes ringkv "${ringkv_ports[@]}" # sets urls, dirs, logs
    measure ringkv ringkv 201 "ringkv, 3 nodes, $REPLICAS" "${dirs[@]}" -- "${urls[@]}"
    trouble="" trouble_n=0
    for pattern in "${TROUBLE[@]}"; do
      n=$(cat "${logs[@]}" | grep -cF -- "$pattern" || true)
      trouble+="${trouble:+, }\"$pattern\" $n" trouble_n=$((trouble_n + n))
      [ "$n" = 0 ] || trouble_detail+=$(grep -hF -m 3 -- "$pattern" "${logs[@]}" | cut -c1-300 | sed 's/^/    /')$'\n'
    done
    rows+=("$row | $trouble |")
    [ "$bad" = 0 ] || failures+=("answers not 201: $bad_codes")
    [ "$sock_n" = 0 ] || failures+=("socket errors: $sock")
    [ "$trouble_n" = 0 ] || failures+=("trouble in the logs: $trouble")
    [ "$max_rss" -le "$MEMORY_LIMIT_MIB" ] || failures+=("peak RSS $max_rss MiB > $MEMORY_LIMIT_MIB MiB")
    awk -v r="$max_ratio" -v m="$MAX_DISK_RATIO" 'BEGIN { exit !(r <= m) }' || failures+=("disk $max_ratio x the logical data > $MAX_DISK_RATIO")
  else
    step "etcd: three fresh members (Raft, fsync per write) on 127.0.0.1:${etcd_client_ports[0]}..${etcd_client_ports[2]}"
    start_etcd
    dirs=("$data_dir/etcd/etcd-0" "$data_dir/etcd/etcd-1" "$data_dir/etcd/etcd-2")
    IFS=, read -ra urls <<<"$etcd_urls"
    measure etcd etcd 200 "etcd, 3 members" "${dirs[@]}" -- "${urls[@]}"
    rows+=("$row | not counted |")
  fi
  step "$target: stopping (SIGTERM)"
  stop_all
done

[ ${#failures[@]} -eq 0 ] || { failed=$(printf '%s; ' "${failures[@]}") && failed=${failed%; }; }
# ---- summary ----------------------------------------------------------------------------------------------
{
  echo "# Bulk load: $KEYS keys of $VALUE_BYTES B, 3 wrk x $CONNECTIONS connections"
  echo
  echo "| target | keys | seconds | keys/s | answers not 201 (etcd: 200) | socket errors | p50 / p99 ms | peak RSS MiB per server | disk MiB per server, total (WAL), after the load | the same after $SETTLE s | disk ÷ logical, after the load / after $SETTLE s (largest server) | log trouble (all nodes) |"
  echo "|---|--:|--:|--:|---|---|--:|---|---|---|--:|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "- logical data per server: $KEYS x ($VALUE_BYTES + $KEY_BYTES) B = $(mib "$logical") MiB (every server holds every key)"
  echo "- peak RSS: VmRSS sampled every second from the load's start until the stop; the chart's memory limit is $MEMORY_LIMIT_MIB MiB"
  echo "- keys/s: $KEYS / the load's wall time (the first wrk started to the last share answered); p50/p99: wrk's latency of the three processes merged"
  [ -z "$trouble_detail" ] || { echo "- first trouble lines:"; echo; echo '```'; printf '%s' "$trouble_detail"; echo '```'; }
  if [ "$with_ringkv" = 1 ]; then
    if [ ${#failures[@]} -eq 0 ]; then echo "- ringkv: PASS (no answer but 201, no socket error, no trouble line, RSS ≤ $MEMORY_LIMIT_MIB MiB, disk ≤ $MAX_DISK_RATIO x logical)"
    else echo "- ringkv: FAIL: $failed"; fi
  fi
  echo
  command=$(printf '%q ' env KEYS="$KEYS" VALUE_BYTES="$VALUE_BYTES" REPLICAS="$REPLICAS" CONNECTIONS="$CONNECTIONS" \
    TARGETS="$TARGETS" SETTLE="$SETTLE" NODE_HEAP="$NODE_HEAP" ${JAR:+JAR="$JAR"} loadtest/bulk-load.sh)
  echo "command: \`${command% }\`"
  echo
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); load average before the run: $load_before"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- service 2>/dev/null || echo ' (service/ has uncommitted changes)')"
  [ "$with_ringkv" = 0 ] || echo "jar: $jar, sha256 $(sha256sum "$node_jar" | cut -c1-16)…; java: $(bin/with-jdk java -version 2>&1 | head -n 1); heap -Xmx$NODE_HEAP"
  echo "wrk: $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)$(command -v etcd >/dev/null && echo "; etcd: $(etcd --version 2>/dev/null | head -n 1 | sed 's/^etcd Version: //')")"
  echo "results: ${run_dir#"$repo"/}"
} >"$run_dir/summary.md"
step "summary: ${run_dir#"$repo"/}/summary.md"
cat "$run_dir/summary.md"
finished=1
if [ ${#failures[@]} -gt 0 ] && [ "$FAIL_ON" != 0 ]; then
  log "ringkv missed the bar (FAIL_ON=0 only reports): $failed"
  exit 1
fi
