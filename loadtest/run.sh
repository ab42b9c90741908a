#!/usr/bin/env bash
# The one-command local benchmark of ringkv: builds the jar if needed, then, one target after the
# other (each started fresh, measured, stopped): a three-node ringkv cluster, the same with an
# fsync per write, one ringkv node alone, a bare Reactor Netty server answering from memory, and
# a three-member etcd cluster, all on loopback; k6 scenarios at each offered rate (open model),
# then one closed-loop wrk run per target. Writes loadtest/results/<timestamp>/ with report.md
# and charts.
#
#   loadtest/run.sh
#   RATES="200" DURATION=5s KEYSPACE=2000 SCENARIOS="get mixed" REPLICAS_LIST="2/3" loadtest/run.sh
#   JAR=/tmp/a.jar TARGETS=cluster loadtest/run.sh; JAR=/tmp/b.jar TARGETS=cluster loadtest/run.sh
#   TARGETS="cluster etcd cluster-secure etcd-secure" SCENARIOS= loadtest/run.sh   # plain and secure, wrk only
#   ... PEAK_FRACTIONS="0.5 0.75" loadtest/run.sh   # then open loop at half and 3/4 of each one's wrk peak
#
# Settings (environment):
#   TARGETS        "cluster cluster-sync single netty webflux etcd"   what to measure, in this order:
#                    cluster       three ringkv nodes (WAL written, not fsynced per write)
#                    cluster-sync  the same with --ringkv.storage.sync-writes=true (fsync per write)
#                    single        one ringkv node alone
#                    netty         loadtest/baseline/NettyBaseline.java: HTTP from memory, no storage
#                    webflux       loadtest/baseline/WebFluxBaseline.java: the same through Spring
#                                  WebFlux's functional endpoints, the framework ringkv's API runs on
#                    etcd          three etcd members (Raft, fsync per write on every member; reads
#                                  linearizable), through etcd's JSON gateway; no range, no replicas
#                    cluster-secure  three ringkv nodes as the chart installs them: TLS on every port,
#                                  mutual between nodes, and bearer tokens required (the load sends
#                                  one of role write); a fresh CA and certificate from openssl
#                    etcd-secure   three etcd members secured alike: HTTPS on the client port, mutual
#                                  TLS between members, auth on with a user whose role may read and
#                                  write the benchmark's keys (its simple token sent by the load)
#                  (BASELINES is gone: name the baselines in TARGETS)
#   SCENARIOS      put get mixed range       scenarios to run (loadtest/kv.js); empty runs none (the
#                                             warm-up, the fill and wrk still run)
#   REPLICAS_LIST  "2/3 3/3"                  replicas for put/get/mixed on the clusters; "default"
#                                             sends none (majority); range never takes replicas
#   RATES          "300 600 1200 2400"        offered rates (requests/s), one k6 run each; on a
#                                             2-core machine the knees of all targets are in it
#   DURATION       20s                        length of each run
#   KEYSPACE       20000                      keys filled and used; VALUE_SIZE 1024 bytes per value
#   WARMUP         120s                       before measuring on each target (and before the fill),
#                                             a mixed run at WARMUP_RATE (default: the first of
#                                             RATES) whose results are kept apart; 0 skips it.
#                                             The JIT needs it: three nodes share two cores, and
#                                             after 30 s at 1000/s the C2 compiler still took 37-39 %
#                                             of each node's CPU (p99 25 ms; after 120 s, 8.4 ms)
#   COLD_RATE      300                        cluster, cluster-sync: as soon as every node answers
#   COLD_DURATION  30s                        /actuator/health/readiness (each node's time to ready
#                                             is recorded), k6 mixed at COLD_RATE with replicas 2/3
#                                             on the empty store, before the warm-up; 0 skips it
#   WRK=1          after each target's k6 runs, one closed-loop wrk run of the mixed load: three
#                  wrk processes (-t1 -c$WRK_CONNECTIONS, default 16), one per node (single,
#                  netty, webflux: all three to the one node), for WRK_DURATION (20s); 0 skips it
#   PEAK_FRACTIONS  unset                     e.g. "0.5 0.75": after each target's wrk run, the same mixed
#                                             load from vegeta (open loop, constant rate; built with go
#                                             install the first time) for DURATION at each of these
#                                             fractions of the rate wrk reached: the tail below
#                                             saturation, every target at the same share of its own peak;
#                                             each run is OPEN_LOOP_SETTLE (15s) longer, its start not counted
#   PROFILE=0      1: cpu, alloc and lock flame graphs (async-profiler 4.5 from Maven Central,
#                  attached with jcmd) of every JVM of the target for every measured run, in
#                  profiles/<run>/; PROFILE_ALLOC (512k) and PROFILE_LOCK (10us) set the sampling
#   JAR=path       run that ringkv jar instead of building service/target/ringkv.jar (implies NO_BUILD)
#   AOT=1          start ringkv nodes with the JVM's ahead-of-time cache, as the image does
#                  (bin/aot-cache: the jar extracted and a training run, kept in the cache dir per
#                  jar); 0 starts them from the fat jar. A jar without the training mode (older
#                  builds) always starts without.
#   NODE_HEAP      256m                       -Xmx of every JVM started (ringkv nodes: bin/node --heap,
#                                             direct memory a quarter of it)
#   PORT_BASE      18080                      clusters on PORT_BASE..+2, single node +10, netty +11, webflux +12,
#                                             etcd clients +20..+22 and peers +30..+32 (the secure
#                                             targets on the same ports as the plain ones)
#   SLOW_NODE_DELAY  unset                    e.g. 50ms: the clusters' third node answers every replica
#                                             call that much late (ringkv.testing.replica-delay, from
#                                             the tests' service/target/ringkv-faults.jar)
#   NO_BUILD=1     never build the jar          KEEP_DATA=1  keep the RocksDB and etcd data after the run
#   KEEP_RAW=1     keep k6's per-request CSVs (the cold run's is always kept) and the profiles' .jfr
#   TIMELINE=0     1: per-second timelines (the over-time charts) of every k6 run, from k6's
#                  per-request CSV output; 0 writes them for the cold runs only. The CSV costs k6
#                  CPU that the servers then lack (a dozen rows per request): with it, bare Netty's
#                  p99 at 3000/s was 51.7 ms, without it 6.3 ms
#   K6=path        the k6 binary to use
#   FAIL_ON_THRESHOLDS=1  exit 1 when a run missed its thresholds (default: report them, exit 0)
# wrk and etcd come from Debian's packages (wrk, etcd-server): installed with apt-get when missing
# (as root); the secure targets need openssl. Everything else (VUS, MAX_VUS, P99_MS, DISTRIBUTION, READ_RATIO, RANGE_SIZE, EXECUTOR,
# ...) is passed through to k6: see loadtest/BENCHMARKS.md. Only loopback addresses are ever targeted.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
LOG_NAME=loadtest
. bin/lib/common.sh
. loadtest/lib/targets.sh     # start_server, stop_all, rss_sampler, start_etcd, apt_install
. loadtest/lib/jar.sh         # find_jar, random_secret
. loadtest/lib/profiler.sh    # fetch_async_profiler, profile_start, profile_stop
. loadtest/lib/environment.sh # find_python, baseline_classpath, describe_run
. loadtest/lib/ringkv.sh      # ringkv_launcher, start_ringkv, wait_ringkv_ready, start_cluster
. loadtest/lib/pki.sh         # make_pki, ringkv_tls_settings
. loadtest/lib/measure.sh     # run_k6, run_wrk, measure

if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi

[ -z "${BASELINES+x}" ] || die "BASELINES is gone: use TARGETS, e.g. TARGETS=\"cluster single netty\" (default: \"cluster cluster-sync single netty webflux etcd\")"

TARGETS=${TARGETS:-"cluster cluster-sync single netty webflux etcd"}
SCENARIOS=${SCENARIOS-"put get mixed range"}
REPLICAS_LIST=${REPLICAS_LIST:-"2/3 3/3"}
RATES=${RATES:-"300 600 1200 2400"}
DURATION=${DURATION:-20s}
KEYSPACE=${KEYSPACE:-20000}
VALUE_SIZE=${VALUE_SIZE:-1024}
NODE_HEAP=${NODE_HEAP:-256m}
PORT_BASE=${PORT_BASE:-18080}
WARMUP=${WARMUP:-120s}
SLOW_NODE_DELAY=${SLOW_NODE_DELAY:-}
COLD_RATE=${COLD_RATE:-300}
COLD_DURATION=${COLD_DURATION:-30s}
WRK=${WRK:-1}
TIMELINE=${TIMELINE:-0}
WRK_CONNECTIONS=${WRK_CONNECTIONS:-16}
WRK_DURATION=${WRK_DURATION:-20s}
PEAK_FRACTIONS=${PEAK_FRACTIONS:-}
OPEN_LOOP_SETTLE=${OPEN_LOOP_SETTLE:-15s}
PROFILE=${PROFILE:-0}
PROFILE_ALLOC=${PROFILE_ALLOC:-512k}
PROFILE_LOCK=${PROFILE_LOCK:-10us}
JAR=${JAR:-}
read -r first_rate _ <<<"$RATES"
WARMUP_RATE=${WARMUP_RATE:-$first_rate}
export KEYSPACE VALUE_SIZE DURATION
export K6_NO_USAGE_REPORT=true # k6 would otherwise phone home at the end of each run
export K6_CSV_TIME_FORMAT=unix_milli

readonly ALL_TARGETS="cluster cluster-sync single netty webflux etcd cluster-secure etcd-secure"
contains() { case " $1 " in *" $2 "*) return 0 ;; *) return 1 ;; esac; }
for t in $TARGETS; do contains "$ALL_TARGETS" "$t" || die "unknown target \"$t\" in TARGETS: pick from $ALL_TARGETS"; done
[ -n "${TARGETS// /}" ] || die "TARGETS is empty"
case $WRK in 0 | 1) ;; *) die "WRK must be 0 or 1, got \"$WRK\"" ;; esac
case $PROFILE in 0 | 1) ;; *) die "PROFILE must be 0 or 1, got \"$PROFILE\"" ;; esac
for f in $PEAK_FRACTIONS; do
  [[ $f =~ ^[0-9]*\.?[0-9]+$ ]] && awk -v f="$f" 'BEGIN { exit !(f > 0 && f <= 1) }' || die "PEAK_FRACTIONS holds fractions of the peak in (0, 1], e.g. \"0.5 0.75\"; got \"$f\""
done
[ -z "$PEAK_FRACTIONS" ] || [ "$WRK" = 1 ] || die "PEAK_FRACTIONS needs WRK=1: the fractions are of wrk's peak"
seconds_of "$OPEN_LOOP_SETTLE" >/dev/null || die "OPEN_LOOP_SETTLE must be a duration such as 5s or 0, got \"$OPEN_LOOP_SETTLE\""
[ -z "$JAR" ] || [ -f "$JAR" ] || die "JAR=$JAR: no such file"

cache_dir=${LOADTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ringkv-loadtest}
stamp=$(date -u +%Y%m%dT%H%M%SZ)
run_dir=$repo/loadtest/results/$stamp
data_dir=$run_dir/data
mkdir -p "$run_dir/k6" "$run_dir/logs" "$data_dir" "$cache_dir"
: >"$run_dir/procs.tsv"
printf 'target\tscenario\treplicas\trate\tduration\tstart\tend\trc\tsummary\tcsv\n' >"$run_dir/runs.tsv"
printf 'step\tseconds\n' >"$run_dir/timings.tsv"
printf 'target\tprocess\tport\tready_ms\tstatus_ms\n' >"$run_dir/startup.tsv"

step_start=$(date +%s)
step_name=""
step() { # ends the current step (recording its time) and starts the next one
  local now; now=$(date +%s)
  if [ -n "$step_name" ]; then
    printf '%s\t%s\n' "$step_name" "$((now - step_start))" >>"$run_dir/timings.tsv"
    log "$step_name: done in $((now - step_start))s"
  fi
  step_name=$1; step_start=$now
  [ -z "$step_name" ] || log "$step_name"
}

# ---- processes: everything started here is stopped on exit ---------------------------------------
pids=()    # the servers of the target being measured (JVMs, etcd members)
helpers=() # short-lived helpers in the background (readiness pollers, wrk processes)
sampler_pid=""
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_started
  if [ "${KEEP_DATA:-0}" != 1 ]; then rm -rf "$data_dir"; fi
  # Stopped part-way: still report what was measured.
  if [ "$rc" -ne 0 ] && [ -n "${py:-}" ] && [ ! -f "$run_dir/report.md" ] &&
    [ "$(wc -l <"$run_dir/runs.tsv")" -gt 1 ]; then
    "$py" loadtest/report.py "$run_dir" || true
  fi
  [ "$rc" -eq 0 ] || log "stopped (exit $rc); what was measured is in ${run_dir#"$repo"/}"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

profile_flags=()
[ "$PROFILE" != 1 ] || profile_flags=("${PROFILE_JVM_FLAGS[@]}")

# ---- tools ---------------------------------------------------------------------------------------
step "checking tools"
find_jar "$data_dir" # sets jar and node_jar
if [ -n "$SLOW_NODE_DELAY" ]; then
  # The slow node's delay is test code, apart from ringkv.jar: the tests' fault injection.
  [ -f service/target/ringkv-faults.jar ] ||
    die "SLOW_NODE_DELAY needs service/target/ringkv-faults.jar: bin/with-jdk ./mvnw -B -DskipTests package builds it"
  cp service/target/ringkv-faults.jar "$data_dir/ringkv-faults.jar"
fi

# wrk and etcd: Debian's packages, installed when missing (CI machines start fresh).
[ "$WRK" != 1 ] || apt_install wrk wrk "or set WRK=0"
if contains "$TARGETS" etcd || contains "$TARGETS" etcd-secure; then
  apt_install etcd etcd-server "or leave etcd out of TARGETS"
  if [ "$(pgrep -x etcd | wc -l)" -gt 0 ]; then log "WARNING: an etcd not started by run.sh is running (pid $(pgrep -x etcd | tr '\n' ' ')): it shares the CPU"; fi
fi

step "finding k6 (bin/k6: the pinned static build, built with go install when missing)"
k6=$(bin/k6) || die "no k6: see the message above"
[ -x "$k6" ] || die "k6 at $k6 is not executable"
log "k6: $k6 ($("$k6" version 2>/dev/null | head -n 1))"

find_python # sets py
[ -z "$PEAK_FRACTIONS" ] || find_vegeta # sets vegeta
classpath=""
if contains "$TARGETS" netty || contains "$TARGETS" webflux; then baseline_classpath; fi
[ "$PROFILE" != 1 ] || fetch_async_profiler "$cache_dir"

cluster_ports=("$PORT_BASE" "$((PORT_BASE + 1))" "$((PORT_BASE + 2))")
single_port=$((PORT_BASE + 10))
netty_port=$((PORT_BASE + 11))
webflux_port=$((PORT_BASE + 12))
etcd_ports "$PORT_BASE"
ports=()
for t in $TARGETS; do
  case $t in
    cluster | cluster-sync | cluster-secure) ports+=("${cluster_ports[@]}") ;;
    single) ports+=("$single_port") ;;
    netty) ports+=("$netty_port") ;;
    webflux) ports+=("$webflux_port") ;;
    etcd | etcd-secure) ports+=("${etcd_client_ports[@]}" "${etcd_peer_ports[@]}") ;;
  esac
done
for port in $(printf '%s\n' "${ports[@]}" | sort -u); do
  port_free "$port" || die "port $port is in use: set PORT_BASE to a free range"
done

secret=$(random_secret)

# The secure targets' certificates (one CA for the run), and ringkv's token of role write, which
# the load sends and the harness's curl too (the metrics want read).
pki_dir=$data_dir/pki
ringkv_scheme=http # https while cluster-secure runs
if contains "$TARGETS" cluster-secure || contains "$TARGETS" etcd-secure; then
  make_pki "$pki_dir"
  ringkv_tls_settings "$pki_dir" # sets ringkv_tls_args
  secure_token=loadtest-$(openssl rand -hex 24)
  printf '%s write loadtest\n' "$secure_token" >"$pki_dir/tokens"
fi
# Every curl of the harness trusts the run's CA, and sends RINGKV_TOKEN while a target wants one.
curl() { command curl ${RINGKV_TOKEN:+-H "Authorization: Bearer $RINGKV_TOKEN"} ${SSL_CERT_FILE:+--cacert "$SSL_CERT_FILE"} "$@"; }
# What a secure target's clients (k6, wrk, curl) need while it runs, in their environment: the CA
# (Go's TLS in k6 reads SSL_CERT_FILE; wrk does not verify) and the token. Unset after it.
secure_client_env() { # ringkv|etcd
  export SSL_CERT_FILE=$pki_dir/ca.crt
  [ "$1" != ringkv ] || export RINGKV_TOKEN=$secure_token
}
plain_client_env() { unset SSL_CERT_FILE RINGKV_TOKEN ETCD_TOKEN; }
jar_sum=$(sha256sum "$node_jar" | cut -c1-16)
ringkv_launcher # sets ringkv_node and aot_used
describe_run >"$run_dir/env.txt"
log "results: ${run_dir#"$repo"/}"
sed 's/^/    /' "$run_dir/env.txt"

rss_sampler &
sampler_pid=$!

store=ringkv # what the current target speaks: ringkv (also netty and webflux) or etcd
threshold_misses=0
needs_fill=$WRK # wrk's mixed load reads keys too
for s in get mixed range; do contains "$SCENARIOS" "$s" && needs_fill=1; done

start_baseline() { # netty|webflux port: a server answering ringkv's API from memory
  local name=$1 port=$2 source=loadtest/baseline/NettyBaseline.java
  [ "$name" = netty ] || source=loadtest/baseline/WebFluxBaseline.java
  start_server "$name-$port" "$run_dir/logs/$name-$port.log" bin/with-jdk java -Xmx"$NODE_HEAP" \
    -XX:+ExitOnOutOfMemoryError --enable-native-access=ALL-UNNAMED "${profile_flags[@]}" -cp "$classpath" "$source" "$port" "$VALUE_SIZE"
  await_node "http://127.0.0.1:$port" "${pids[0]}" "$run_dir/logs/$name-$port.log"
}

# ---- the targets, one after the other ----------------------------------------------------------------
current_target=""
plain_client_env # a plain target's clients get no CA and no token, whatever the caller's environment had
for current_target in $TARGETS; do
  store=ringkv
  case $current_target in
    cluster)
      step "starting a three-node cluster"
      start_cluster cluster node-
      measure cluster "$cluster_urls" node- "$REPLICAS_LIST" 1
      ;;
    cluster-sync)
      step "starting a three-node cluster with an fsync per write (--ringkv.storage.sync-writes=true)"
      start_cluster cluster-sync sync- --ringkv.storage.sync-writes=true
      measure cluster-sync "$cluster_urls" sync- "$REPLICAS_LIST" 1
      ;;
    single)
      step "baseline: one ringkv node alone"
      start_ringkv single "single-$single_port" "$single_port" ""
      wait_ringkv_ready single
      measure single "http://127.0.0.1:$single_port" single- - 1
      ;;
    netty)
      step "baseline: bare Reactor Netty answering from memory"
      start_baseline netty "$netty_port"
      measure netty "http://127.0.0.1:$netty_port" netty- - 0 # from memory: nothing to fill
      ;;
    webflux)
      step "baseline: Spring WebFlux's functional endpoints on Reactor Netty, answering from memory"
      start_baseline webflux "$webflux_port"
      measure webflux "http://127.0.0.1:$webflux_port" webflux- - 0
      ;;
    etcd)
      step "starting a three-member etcd cluster (Raft, fsync per write)"
      store=etcd
      start_etcd # sets etcd_urls
      measure etcd "$etcd_urls" etcd- - 1
      ;;
    cluster-secure)
      step "starting a three-node cluster as the chart installs it: TLS on every port (mutual between nodes), tokens"
      ringkv_scheme=https
      secure_client_env ringkv
      start_cluster cluster-secure secure-node- "${ringkv_tls_args[@]}" \
        --ringkv.security.enabled=true --ringkv.security.tokens-file="$pki_dir/tokens"
      measure cluster-secure "$cluster_urls" secure-node- "$REPLICAS_LIST" 1
      ringkv_scheme=http
      plain_client_env
      ;;
    etcd-secure)
      step "starting a three-member etcd cluster secured alike: HTTPS, mutual TLS between members, auth"
      store=etcd
      secure_client_env etcd
      start_etcd secure # sets etcd_urls, exports ETCD_TOKEN
      measure etcd-secure "$etcd_urls" secure-etcd- - 1
      plain_client_env
      ;;
  esac
done
current_target=""
store=ringkv

# ---- report ----------------------------------------------------------------------------------------
step "writing the report"
"$py" loadtest/report.py "$run_dir"
step ""
log "report: ${run_dir#"$repo"/}/report.md"
for png in "$run_dir"/charts/*.png; do [ ! -f "$png" ] || echo "    ${png#"$repo"/}"; done
if [ "$threshold_misses" -gt 0 ]; then
  log "$threshold_misses run(s) missed their thresholds (marked in the report)"
  [ "${FAIL_ON_THRESHOLDS:-0}" != 1 ] || exit 1
fi
