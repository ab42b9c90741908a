#!/usr/bin/env bash
# The YCSB-style benchmark: YCSB's core workloads on a data set larger than the caches, the same
# client and the same data against each target, one after the other on loopback, each started fresh:
#   cluster  three ringkv nodes, replicas 2/3 (REPLICAS)      single  one ringkv node alone
#   etcd     three etcd members (Raft, an fsync per write; reads linearizable), its JSON gateway
# For each: the load phase (KEYS distinct keys of VALUE_BYTES random bytes, each written once:
# loadtest/wrk/bulk.lua, as loadtest/bulk-load.sh), SETTLE seconds, a discarded warm-up of workload
# c, then each of WORKLOADS for DURATION seconds (loadtest/wrk/ycsb.lua; YCSB's definitions):
#   a  50 % read / 50 % update       b  95 % read / 5 % update       c  read only
#   e  95 % scans of 1..100 records from the chosen key / 5 % inserts of new keys
# the key chosen by DISTRIBUTION (zipfian, YCSB's constant 0.99, scrambled over the key space as
# YCSB's; or uniform). The client: three wrk processes (-t1 -c$CONNECTIONS, closed loop), one per
# node or member (single: all three to the one node). Measured per workload: operations/s,
# p50/p99/p99.9 of all operations (wrk keeps one histogram), the servers' CPU per operation
# (utime+stime of their processes) and the whole machine's (wrk and the kernel too), each server's
# peak RSS; per target: the load's keys/s and its answers, disk per server after the load, after
# SETTLE and at the end. Writes loadtest/results/<stamp>-ycsb/: report.md (printed at the end)
# with the ratios against etcd, ycsb.png (charts), results.tsv, the wrk outputs and the logs.
#
#   loadtest/ycsb.sh                                   1,000,000 keys, every target (about 35 min)
#   BIG=1 TARGETS="cluster single" loadtest/ycsb.sh    10,000,000 keys (hours; 10 GB per node)
#   KEYS=30000 DURATION=10 WARMUP=5 SETTLE=5 loadtest/ycsb.sh   a smoke run (about 5 minutes)
#   PROFILE=1 TARGETS=cluster WORKLOADS=c loadtest/ycsb.sh      with flame graphs of the nodes
#
# Settings (environment):
#   KEYS          1000000 (BIG=1: 10000000)  records loaded; 10,000,000 is beyond etcd, whose
#                                            backend holds at most 8 GiB: leave etcd out of TARGETS
#   VALUE_BYTES   1000                 bytes per record (YCSB's 10 fields of 100 B), random
#   WORKLOADS     "a b c e"            in this order (e inserts, so it runs last)
#   DISTRIBUTION  zipfian              or uniform; ZIPF_THETA 0.99; SCAN_MAX 100 (workload e)
#   TARGETS       "cluster single etcd"
#   DURATION      60                   seconds per workload; WARMUP 30 (0: none); SETTLE 30
#   CONNECTIONS   16                   per wrk process; three processes
#   REPLICAS      2/3                  replicas of every cluster request (single: none)
#   NODE_HEAP     256m                 ringkv nodes: bin/node --heap (the chart's JVM flags)
#   NODE_ARGS     unset                more settings for every ringkv node, e.g. "--ringkv.storage.memory-size=64MB"
#   PORT_BASE     19180                ringkv on PORT_BASE..+2 (single: +10); etcd clients +20..+22, peers +30..+32
#   PROFILE       0                    1: cpu and alloc flame graphs of every ringkv node in every workload
#   JAR           unset                run that jar; otherwise service/target/ringkv.jar, built when stale
#   KEEP_DATA     0                    1: keep the data dirs; TIMEOUT 10s (wrk's --timeout); LOAD_LIMIT 4h
# wrk and etcd are Debian's packages (wrk, etcd-server), installed with apt-get when missing (as
# root); the charts need matplotlib (installed into a venv in the cache when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
LOG_NAME=ycsb
. bin/lib/common.sh
. loadtest/lib/targets.sh     # start_server, stop_all, rss_sampler, start_etcd, apt_install
. loadtest/lib/jar.sh         # find_jar, random_secret
. loadtest/lib/bulk.sh        # begin_run, start_ringkv_nodes, load, tally, merged_percentiles, disks, peaks
. loadtest/lib/ycsb.sh        # ycsb_start, ycsb_collect: one workload from three wrk processes
. loadtest/lib/profiler.sh    # fetch_async_profiler, profile_start, profile_stop
. loadtest/lib/environment.sh # find_python
. loadtest/lib/cpu.sh         # cpu_ticks, machine_ticks

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

BIG=${BIG:-0}
KEYS=${KEYS:-$([ "$BIG" = 1 ] && echo 10000000 || echo 1000000)}
VALUE_BYTES=${VALUE_BYTES:-1000} WORKLOADS=${WORKLOADS:-"a b c e"} DISTRIBUTION=${DISTRIBUTION:-zipfian}
ZIPF_THETA=${ZIPF_THETA:-0.99} SCAN_MAX=${SCAN_MAX:-100} TARGETS=${TARGETS:-"cluster single etcd"}
DURATION=${DURATION:-60} WARMUP=${WARMUP:-30} SETTLE=${SETTLE:-30} CONNECTIONS=${CONNECTIONS:-16}
REPLICAS=${REPLICAS:-2/3} NODE_HEAP=${NODE_HEAP:-256m} NODE_ARGS=${NODE_ARGS:-} PORT_BASE=${PORT_BASE:-19180}
PROFILE=${PROFILE:-0} JAR=${JAR:-} KEEP_DATA=${KEEP_DATA:-0} TIMEOUT=${TIMEOUT:-10s} LOAD_LIMIT=${LOAD_LIMIT:-4h}
PROFILE_ALLOC=${PROFILE_ALLOC:-512k} PROFILE_LOCK=${PROFILE_LOCK:-10us}
readonly KEY_BYTES=11
for v in KEYS VALUE_BYTES DURATION WARMUP SETTLE CONNECTIONS SCAN_MAX PORT_BASE; do
  [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number, not \"${!v}\""
done
((KEYS >= 100 && KEYS < 20000000)) || die "KEYS must be 100..19999999 (the zipfian chooser's range)"
((DURATION >= 1 && CONNECTIONS >= 1 && SCAN_MAX >= 1)) || die "DURATION, CONNECTIONS and SCAN_MAX must be at least 1"
for w in $WORKLOADS; do case $w in a | b | c | e) ;; *) die "unknown workload \"$w\" in WORKLOADS: a, b, c, e" ;; esac; done
for t in $TARGETS; do case $t in cluster | single | etcd) ;; *) die "unknown target \"$t\" in TARGETS: cluster, single, etcd" ;; esac; done
case $DISTRIBUTION in zipfian | uniform) ;; *) die "DISTRIBUTION must be zipfian or uniform, not \"$DISTRIBUTION\"" ;; esac
if [ -z "${WORKLOADS// /}" ] || [ -z "${TARGETS// /}" ]; then die "WORKLOADS and TARGETS must name something"; fi

cache_dir=${XDG_CACHE_HOME:-$HOME/.cache}/ringkv-loadtest
step() { log "$*"; }
begin_run ycsb # stamp, run_dir, data_dir; everything started from here on is stopped on exit

case " $TARGETS " in *" cluster "* | *" single "*) find_jar "$data_dir" ;; esac # sets jar and node_jar
apt_install wrk wrk "the benchmark's client"
case " $TARGETS " in *" etcd "*) apt_install etcd etcd-server "or leave etcd out of TARGETS" ;; esac
[ "$PROFILE" != 1 ] || fetch_async_profiler "$cache_dir"
find_python
cluster_ports=("$PORT_BASE" "$((PORT_BASE + 1))" "$((PORT_BASE + 2))") single_port=$((PORT_BASE + 10))
etcd_ports "$PORT_BASE"
for port in "${cluster_ports[@]}" "$single_port" "${etcd_client_ports[@]}" "${etcd_peer_ports[@]}"; do
  port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"
done
secret=$(random_secret)
logical=$((KEYS * (VALUE_BYTES + KEY_BYTES)))
read -ra node_args <<<"$NODE_ARGS"
if [ "$PROFILE" = 1 ]; then for flag in "${PROFILE_JVM_FLAGS[@]}"; do profile_flags+=(--jvm "$flag"); done; fi
rss_sampler & sampler_pid=$!
hz=$(getconf CLK_TCK)
printf 'target\tworkload\tseconds\toperations\tops_per_s\tp50_ms\tp99_ms\tp999_ms\tnot_2xx\tsocket_errors\tserver_cpu_us\tmachine_cpu_us\tpeak_rss_mib\n' >"$run_dir/results.tsv"
printf 'target\tkeys\tseconds\tkeys_per_s\tnot_ok\tsocket_errors\tp50_ms\tp99_ms\tpeak_rss_mib\tdisk_after_load_mib\tdisk_settled_mib\tdisk_end_mib\tdisk_ratio_end\n' >"$run_dir/loads.tsv"

# One workload on the target: three wrk processes for SECONDS, then one row of results.tsv (none
# for the warm-up, label "warm-up").
workload() { # target store replicas label workload seconds url url url
  local target=$1 store=$2 replicas=$3 label=$4 w=$5 seconds=$6 since cpu0 machine0; shift 6
  since=$(date +%s) cpu0=$(cpu_ticks "${pids[@]}") machine0=$(machine_ticks)
  [ "$label" = warm-up ] || profile_start "$target-$w"
  ycsb_start "$target-$label" "$store" "$replicas" "$w" "$seconds" "$@"
  local ops not2xx sock p50 p99 p999 line
  ycsb_collect
  [ "$label" = warm-up ] && return 0
  local cpu=$(($(cpu_ticks "${pids[@]}") - cpu0)) machine=$(($(machine_ticks) - machine0))
  profile_stop "$target-$w"
  peaks "$since"
  line=$(awk -v t="$target" -v w="$w" -v s="$seconds" -v n="$ops" -v p50="$p50" -v p99="$p99" -v p999="$p999" \
    -v bad="$not2xx" -v sock="$sock" -v cpu="$cpu" -v mach="$machine" -v hz="$hz" -v rss="$rss_text" \
    'BEGIN { d = (n > 0 ? n : 1); printf "%s\t%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%d\t%d\t%.0f\t%.0f\t%s\n", t, w, s, n, n / s,
      p50, p99, p999, bad, sock, cpu / hz * 1e6 / d, mach / hz * 1e6 / d, rss }')
  printf '%s\n' "$line" >>"$run_dir/results.tsv"
  log "$target $w: $(awk -F'\t' '{ printf "%s ops/s, p50 %s ms, p99 %s ms, p99.9 %s ms, not 2xx %s, socket errors %s, servers %s us/op", $5, $6, $7, $8, $9, $10, $11 }' <<<"$line")"
}

# One target, started: the load, SETTLE, the warm-up, the workloads; a row of loads.tsv.
measure_target() { # target store ok-status replicas -- dir... -- url url url
  local target=$1 store=$2 ok=$3 replicas=$4 dirs=() since after_load settled w; shift 5
  while [ "$1" != -- ]; do dirs+=("$1"); shift; done; shift
  since=$(date +%s)
  step "$target: loading $KEYS keys of $VALUE_BYTES B (3 wrk x $CONNECTIONS connections)"
  REPLICAS=$replicas load "$target" "$store" "$@"
  tally "$target" "$ok"
  log "$target: $KEYS keys in $load_seconds s; not $ok: $bad_codes; socket errors: $sock; p50 $p50 ms, p99 $p99 ms"
  disks "$store" "${dirs[@]}"; after_load=$disk_text
  step "$target: settling for $SETTLE s"
  sleep "$SETTLE"
  disks "$store" "${dirs[@]}"; settled=$disk_text
  peaks "$since"
  local load_row
  load_row="$target	$KEYS	$load_seconds	$(awk -v k="$KEYS" -v s="$load_seconds" 'BEGIN { printf "%.0f", k / s }')	$bad_codes	$sock	$p50	$p99	$rss_text	$after_load	$settled"
  if [ "$WARMUP" -gt 0 ]; then
    step "$target: warm-up, workload c for $WARMUP s (not reported)"
    workload "$target" "$store" "$replicas" warm-up c "$WARMUP" "$@"
  fi
  for w in $WORKLOADS; do
    step "$target: workload $w for $DURATION s"
    workload "$target" "$store" "$replicas" "$w" "$w" "$DURATION" "$@"
  done
  disks "$store" "${dirs[@]}"
  printf '%s\t%s\t%s\n' "$load_row" "$disk_text" "$max_ratio" >>"$run_dir/loads.tsv"
}

for target in $TARGETS; do
  case $target in
    cluster)
      step "cluster: three fresh ringkv nodes on 127.0.0.1:${cluster_ports[0]}..${cluster_ports[2]}"
      start_ringkv_nodes cluster "${cluster_ports[@]}"
      measure_target cluster ringkv 201 "$REPLICAS" -- "${dirs[@]}" -- "${urls[@]}" ;;
    single)
      step "single: one fresh ringkv node on 127.0.0.1:$single_port"
      start_ringkv_nodes single "$single_port"
      measure_target single ringkv 201 "" -- "${dirs[@]}" -- "${urls[0]}" "${urls[0]}" "${urls[0]}" ;;
    etcd)
      step "etcd: three fresh members (Raft, fsync per write) on 127.0.0.1:${etcd_client_ports[0]}..${etcd_client_ports[2]}"
      start_etcd
      IFS=, read -ra urls <<<"$etcd_urls"
      measure_target etcd etcd 200 "" -- "$data_dir/etcd/etcd-0" "$data_dir/etcd/etcd-1" "$data_dir/etcd/etcd-2" -- "${urls[@]}" ;;
  esac
  step "$target: stopping (SIGTERM)"
  stop_all
done

{
  echo "command: $(printf '%q ' env KEYS="$KEYS" VALUE_BYTES="$VALUE_BYTES" WORKLOADS="$WORKLOADS" DISTRIBUTION="$DISTRIBUTION" \
    TARGETS="$TARGETS" DURATION="$DURATION" WARMUP="$WARMUP" CONNECTIONS="$CONNECTIONS" REPLICAS="$REPLICAS" \
    NODE_HEAP="$NODE_HEAP" ${NODE_ARGS:+NODE_ARGS="$NODE_ARGS"} ${JAR:+JAR="$(shown_path "$JAR")"} loadtest/ycsb.sh)"
  echo "machine: $(uname -srm), $(nproc) cores, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); load average before the run: $load_before"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- service 2>/dev/null || echo ' (service/ has uncommitted changes)')"
  [ -z "${node_jar:-}" ] || echo "jar: $(shown_path "$jar"), sha256 $(sha256sum "$node_jar" | cut -c1-16)…; java: $(bin/with-jdk java -version 2>&1 | head -n 1); heap -Xmx$NODE_HEAP"
  echo "wrk: $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2)$(command -v etcd >/dev/null && echo "; etcd: $(etcd --version 2>/dev/null | head -n 1 | sed 's/^etcd Version: //')")"
} >>"$run_dir/env.txt"
"$py" loadtest/report.py --ycsb "$run_dir" "$logical" || die "the report failed"
finished=1
step "report: ${run_dir#"$repo"/}/report.md"
cat "$run_dir/report.md"
